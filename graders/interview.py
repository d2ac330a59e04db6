"""Mock interview mode: a timed kata with watch-and-test, hints on request, and a report.

    nox -s interview -- NAME [--minutes M] [--no-hints] [--interviewer] [--impl DIR]

Candidate view: the prompt, a countdown, the public tests re-run on every save of the
kata's files with a one-line summary, and commands at the prompt:
    hint     the next hint (logged with its time)
    test     run the public tests now
    submit   grade with the hidden tests and write the report
    quit     leave without grading (the report is still written)
At time-out it submits by itself.

Interviewer view (--interviewer): the rubric with what each item looks for, the hints,
follow-up questions per item and what a good answer to each interviewer-graded item
contains. The candidate view never shows these.

The report goes to interviews/NAME-YYYYmmdd-HHMMSS/ as report.md and report.html: the
score per rubric item, when each item first passed in the watch runs, the hints taken and
when, the interviewer-graded items as a checklist, the final code as a diff against the
stub, and the total time.
"""

from __future__ import annotations

import argparse
import difflib
import html
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graders import catalog

POLL_S = 0.5


@dataclass
class Session:
    kata: catalog.Kata
    impl: str
    folder: Path
    minutes: float
    hints_allowed: bool
    started: float = field(default_factory=time.monotonic)
    started_wall: float = field(default_factory=time.time)
    hints_taken: list[tuple[float, str]] = field(default_factory=list)
    runs: list[tuple[float, str, dict[str, str]]] = field(default_factory=list)
    first_pass: dict[str, float] = field(default_factory=dict)
    stub_source: str = ""
    profile: str = "grade"

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def left(self) -> float:
        return max(0.0, self.minutes * 60 - self.elapsed())


def clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def snapshot(folder: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in sorted(folder.rglob("*.py"))
            if "__pycache__" not in p.parts}


def run_public(s: Session, why: str) -> dict[str, str]:
    """Run the public tests; returns rubric item -> passed/failed, records first passes."""
    with tempfile.TemporaryDirectory() as tmp:
        progress = Path(tmp) / "progress.jsonl"
        env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(
            [sys.executable, "-m", "pytest", str(s.kata.public_tests), "--impl", s.impl,
             "--progress", str(progress), "-q", "--no-header", "--no-rubric-summary",
             "-p", "_hypothesis_pytestplugin", "-p", "pytest_timeout",
             "--hypothesis-profile", "kata", "--timeout", "20",
             "-c", str(catalog.ROOT / "pyproject.toml")],
            cwd=catalog.ROOT, env=env, capture_output=True, timeout=300)
        events = [json.loads(line) for line in progress.read_text().splitlines() if line]
    rubric_of = {t["nodeid"]: t["rubric"] for e in events if e["event"] == "collected"
                 for t in e["tests"]}
    status: dict[str, str] = {}
    for e in events:
        if e["event"] == "result":
            item = rubric_of.get(e["nodeid"])
            if item is None:
                continue
            ok = e["outcome"] in ("passed", "skipped")
            status[item] = "passed" if ok and status.get(item, "passed") == "passed" else "failed"
    now = s.elapsed()
    for item, st in status.items():
        if st == "passed":
            s.first_pass.setdefault(item, now)
    s.runs.append((now, why, status))
    passing = [i for i, st in status.items() if st == "passed"]
    print(f"\n[{clock(s.left())} left] {why}: {len(passing)}/{len(status)} rubric items pass "
          f"the public tests" + (f" ({', '.join(passing)})" if passing else ""), flush=True)
    return status


def show_interviewer(kata: catalog.Kata) -> None:
    print(f"# Interviewer notes: {kata.title} ({kata.name}, {kata.minutes} min)\n")
    notes = kata.raw.get("interviewer", {})
    if notes.get("overview"):
        print(notes["overview"] + "\n")
    for item in kata.rubric:
        print(f"## {item.id} ({item.points} points, graded by {item.graded_by})")
        print(f"   looks for: {item.description}")
        for q in item.extra.get("follow_ups", []):
            print(f"   follow-up: {q}")
        if item.extra.get("good_answer"):
            print(f"   a good answer: {item.extra['good_answer']}")
        print()
    print("## Hints, in order")
    for n, h in enumerate(kata.hints, 1):
        print(f"   {n}. {h}")


def diff_against_stub(s: Session) -> str:
    target = s.folder / "__init__.py" if s.folder.is_dir() else s.folder
    try:
        now = target.read_text(encoding="utf-8")
    except OSError:
        return "(the kata file could not be read)"
    lines = difflib.unified_diff(s.stub_source.splitlines(keepends=True),
                                 now.splitlines(keepends=True),
                                 fromfile=f"stub katas/{s.kata.name}/__init__.py",
                                 tofile="final code")
    return "".join(lines) or "(no change from the stub)"


def write_report(s: Session, grade_result: Any, ended: str, out_root: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(s.started_wall))
    out = out_root / f"{s.kata.name}-{stamp}"
    out.mkdir(parents=True, exist_ok=True)
    md: list[str] = [f"# Interview report: {s.kata.title} ({s.kata.name})", "",
                     f"- started: {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(s.started_wall))}",
                     f"- time allowed: {s.minutes:g} min; time used: {clock(s.elapsed())}",
                     f"- ended by: {ended}",
                     f"- hints: {'allowed' if s.hints_allowed else 'off'}; taken: {len(s.hints_taken)}",
                     f"- watch runs of the public tests: {len(s.runs)}", ""]
    if grade_result is not None:
        md += [f"## Score: {grade_result.score}/{grade_result.max_score} (public + hidden tests)",
               "", "| rubric item | points | status | first passed (public tests) |",
               "|---|---|---|---|"]
        for r in grade_result.items:
            first = s.first_pass.get(r.item.id)
            md.append(f"| {r.item.id} | {r.score}/{r.item.points} | {r.status} | "
                      f"{clock(first) if first is not None else '-'} |")
    else:
        md += ["## Score: not graded (the candidate quit before submitting)"]
    md += ["", "## Hints taken", ""]
    md += [f"- {clock(t)}: {h}" for t, h in s.hints_taken] or ["- none"]
    md += ["", "## Interviewer-graded items (checklist)", ""]
    interviewer_items = [i for i in s.kata.rubric if i.graded_by == "interviewer"]
    md += [f"- [ ] {i.id} ({i.points} points): {i.description}" for i in interviewer_items] \
        or ["- none for this kata"]
    md += ["", "## Timeline of watch runs", ""]
    md += [f"- {clock(t)} {why}: " + (", ".join(f"{k} {v}" for k, v in st.items()) or "no tests")
           for t, why, st in s.runs] or ["- none"]
    md += ["", "## Final code (diff against the stub)", "", "```diff", diff_against_stub(s),
           "```", ""]
    text = "\n".join(md)
    (out / "report.md").write_text(text, encoding="utf-8")
    (out / "report.html").write_text(markdown_to_html(text, s.kata.title), encoding="utf-8")
    return out


def markdown_to_html(text: str, title: str) -> str:
    """A small Markdown subset to HTML: headings, lists, tables, code blocks."""
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
           "</title><style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
           "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.2em .6em}"
           "pre{background:#f4f4f4;padding:1em;overflow:auto}</style></head><body>"]
    in_code = in_list = in_table = False
    for line in text.splitlines():
        if line.startswith("```"):
            out.append("</pre>" if in_code else "<pre>")
            in_code = not in_code
            continue
        if in_code:
            out.append(html.escape(line))
            continue
        if in_list and not line.startswith("- "):
            out.append("</ul>")
            in_list = False
        if in_table and not line.startswith("|"):
            out.append("</table>")
            in_table = False
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{html.escape(line[level:].strip())}</h{level}>")
        elif line.startswith("- "):
            if not in_list:
                out.append("<ul>")
                in_list = True
            item = line[2:]
            if item.startswith("[ ] "):
                item = "<input type='checkbox' disabled> " + html.escape(item[4:])
            else:
                item = html.escape(item)
            out.append(f"<li>{item}</li>")
        elif line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if all(set(c) <= {"-"} for c in cells):
                continue
            tag = "th" if not in_table else "td"
            if not in_table:
                out.append("<table>")
                in_table = True
            out.append("<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells)
                       + "</tr>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    if in_list:
        out.append("</ul>")
    if in_table:
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out)


def submit(s: Session) -> Any:
    from graders import grade

    hidden = s.kata.hidden_tests.is_dir()
    print(f"\nGrading with the {'public and hidden' if hidden else 'public'} tests...",
          flush=True)
    try:
        result = grade.run(s.kata.name, s.impl, profile=s.profile)
    except grade.GradeError as exc:
        print(f"grading failed: {exc}")
        return None
    print(grade.table(result), flush=True)
    return result


def pristine_stub(kata: catalog.Kata) -> str:
    try:
        return subprocess.run(["git", "show", f"HEAD:katas/{kata.name}/__init__.py"],
                              cwd=catalog.ROOT, capture_output=True, text=True, check=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return (kata.folder / "__init__.py").read_text(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nox -s interview --")
    parser.add_argument("kata")
    parser.add_argument("--minutes", type=float, default=None)
    parser.add_argument("--no-hints", action="store_true")
    parser.add_argument("--interviewer", action="store_true",
                        help="show the interviewer's notes (never show this to the candidate)")
    parser.add_argument("--impl", default="katas",
                        help="the folder the candidate edits (default katas/NAME)")
    parser.add_argument("--out", type=Path, default=catalog.ROOT / "interviews")
    parser.add_argument("--profile", default="grade", choices=("grade", "selftest", "kata"),
                        help="Hypothesis profile of the final grade: grade (150 examples, "
                             "as hiring teams grade; the default), selftest (60) or kata (25)")
    args = parser.parse_args(argv)
    try:
        kata = catalog.load(args.kata)
    except catalog.CatalogError as exc:
        print(f"interview: {exc}", file=sys.stderr)
        return 2
    if args.interviewer:
        show_interviewer(kata)
        return 0
    folder = kata.folder if args.impl == "katas" else Path(args.impl).resolve()
    s = Session(kata, args.impl if args.impl == "katas" else str(folder), folder,
                args.minutes if args.minutes is not None else kata.minutes, not args.no_hints)
    s.stub_source = pristine_stub(kata)
    s.profile = args.profile
    print(kata.prompt_path.read_text(encoding="utf-8").split("<details>")[0].rstrip())
    print(f"\n=== {kata.title}: {s.minutes:g} minutes. Edit {folder}; the public tests run on "
          "every save.\n=== commands: hint, test, submit, quit", flush=True)
    seen = snapshot(folder)
    result, ended = None, "time-out"
    next_tick = 60.0
    prompt_shown = False
    while True:
        if s.left() <= 0:
            print("\nTime is up: submitting.", flush=True)
            result, ended = submit(s), "time-out (submitted automatically)"
            break
        if not prompt_shown:
            print(f"[{clock(s.left())} left] > ", end="", flush=True)
            prompt_shown = True
        ready, _, _ = select.select([sys.stdin], [], [], POLL_S)
        current = snapshot(folder)
        if current != seen:
            seen = current
            run_public(s, "saved")
            prompt_shown = False
        if s.elapsed() >= next_tick:
            next_tick += 60
            print(f"\n[{clock(s.left())} left]", flush=True)
            prompt_shown = False
        if not ready:
            continue
        line = sys.stdin.readline()
        prompt_shown = False
        if not line:
            result, ended = None, "end of input"
            break
        cmd = line.strip().lower()
        if cmd == "hint":
            if not s.hints_allowed:
                print("hints are off for this interview")
            elif len(s.hints_taken) >= len(kata.hints):
                print("no more hints")
            else:
                h = kata.hints[len(s.hints_taken)]
                s.hints_taken.append((s.elapsed(), h))
                print(f"hint {len(s.hints_taken)}/{len(kata.hints)}: {h}")
        elif cmd == "test":
            run_public(s, "test")
        elif cmd == "submit":
            result, ended = submit(s), "submitted"
            break
        elif cmd in ("quit", "exit"):
            ended = "quit"
            break
        elif cmd:
            print("commands: hint, test, submit, quit")
    out = write_report(s, result, ended, args.out)
    print(f"\nreport: {out / 'report.md'} and {out / 'report.html'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
