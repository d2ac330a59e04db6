"""Mock interview mode: a timed kata with watch-and-test, hints on request, the
interviewer's marks, and a report.

    nox -s interview -- NAME [--minutes M] [--no-hints] [--impl DIR] [--profile P]
    nox -s interview -- NAME --interviewer [--session DIR]
    nox -s interview -- mark DIR ITEM POINTS [--note TEXT]

Candidate view: the prompt, a countdown, the public tests re-run on every save of the
kata's files with a one-line summary, and commands at the prompt:
    hint     the next hint (logged with its time)
    test     run the public tests now
    mark ITEM POINTS [NOTE]   the interviewer's mark for an interviewer-graded item
    submit   grade with the hidden tests and write the report
    quit     leave without grading (the report is still written)
At time-out it submits by itself.

Interviewer view (--interviewer), for a second terminal the candidate does not see: the
rubric with what each item looks for, the hints, follow-up questions per item and what a
good answer to each interviewer-graded item contains; then it follows the candidate's
live session in the same --out folder (the newest one of this kata still running, or the
one --session names, or the next one to start): each watch run, hint, submission and the
grade as they happen. Its commands: mark ITEM POINTS [NOTE], marks, notes, quit. A mark
given after the report is written amends it. The candidate's settings (--minutes,
--no-hints, --impl, --profile) belong on the candidate's command; given with
--interviewer they are an error.

Each session writes to interviews/NAME-YYYYmmdd-HHMMSS/: session.json (the kata and its
rubric), events.jsonl (the live log the interviewer view follows) and marks.json while it
runs; report.md, report.html and report.json when it ends: the score per rubric item
(graded by the tests or by the interviewer, with the interviewer's note), the combined
total, when each item first passed in the watch runs, the hints taken and when, the final
code as a diff against the stub, the time used (grading not counted) and the grading time.

``mark DIR ITEM POINTS`` records (or replaces) a mark afterwards and rewrites the three
report files. A mark for an unknown item, an item the tests grade, a value that is not a
number or lies outside 0..points is refused with a message and changes no file.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import fcntl
import html
import json
import math
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graders import catalog, launch

POLL_S = 0.5
SESSION_FILE = "session.json"
EVENTS_FILE = "events.jsonl"
MARKS_FILE = "marks.json"
REPORT_FILES = ("report.md", "report.html", "report.json")
LOCK_FILE = ".lock"
CANDIDATE_COMMANDS = "hint, test, mark ITEM POINTS [NOTE], submit, quit"
COMPANION_COMMANDS = "mark ITEM POINTS [NOTE], marks, notes, quit"


class MarkError(ValueError):
    """A mark that cannot be recorded; nothing was changed."""


@dataclass
class Session:
    kata: catalog.Kata
    impl: str
    folder: Path
    minutes: float
    hints_allowed: bool
    out: Path = Path("interviews")
    started: float = field(default_factory=time.monotonic)
    started_wall: float = field(default_factory=time.time)
    hints_taken: list[tuple[float, str]] = field(default_factory=list)
    runs: list[tuple[float, str, dict[str, str]]] = field(default_factory=list)
    first_pass: dict[str, float] = field(default_factory=dict)
    stub_source: str = ""
    profile: str = "grade"
    ended_at: float | None = None      # candidate's time when the session ended
    grading_s: float = 0.0             # the final grade's own time, not the candidate's
    record: Path | None = None         # the session's folder under ``out``

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def left(self) -> float:
        return max(0.0, self.minutes * 60 - self.elapsed())

    def used(self) -> float:
        """The candidate's time: to the end of the session, never the grading after it."""
        used = self.elapsed() if self.ended_at is None else self.ended_at
        return min(used, self.minutes * 60)

    def end(self) -> None:
        if self.ended_at is None:
            self.ended_at = self.elapsed()

    def event(self, kind: str, **data: Any) -> None:
        """One line of the live log the interviewer view follows."""
        if self.record is None:
            return
        line = json.dumps({"event": kind, "at": round(self.elapsed(), 2), **data})
        with open(self.record / EVENTS_FILE, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def minutes_text(minutes: float) -> str:
    """'1 minute', '30 minutes', '0.5 minutes'."""
    return f"{minutes:g} minute" + ("" if minutes == 1 else "s")


def seconds_text(seconds: float) -> str:
    return f"{seconds:.0f} second" + ("" if round(seconds) == 1 else "s")


def points_text(value: float) -> str:
    return f"{value:g}"


def snapshot(folder: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in sorted(folder.rglob("*.py"))
            if "__pycache__" not in p.parts}


def run_public(s: Session, why: str) -> dict[str, str]:
    """Run the public tests; returns rubric item -> passed/failed, records first passes."""
    with tempfile.TemporaryDirectory() as tmp:
        progress = Path(tmp) / "progress.jsonl"
        subprocess.run(
            [sys.executable, "-m", "pytest", *launch.pytest_args(
                [str(s.kata.public_tests)], profile="kata", impl=s.impl, timeout=20,
                extra=["--progress", str(progress)])],
            cwd=catalog.ROOT, env=launch.test_env(), capture_output=True, timeout=300)
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
    s.event("run", why=why, status=status, left=round(s.left(), 2))
    print(f"\n[{clock(s.left())} left] {run_summary(why, status)}", flush=True)
    return status


def run_summary(why: str, status: dict[str, str]) -> str:
    passing = [i for i, st in status.items() if st == "passed"]
    return (f"{why}: {len(passing)}/{len(status)} rubric items pass the public tests"
            + (f" ({', '.join(passing)})" if passing else ""))


def interviewer_notes(kata: catalog.Kata) -> str:
    lines = [f"# Interviewer notes: {kata.title} ({kata.name}, {minutes_text(kata.minutes)})",
             ""]
    notes = kata.raw.get("interviewer", {})
    if notes.get("overview"):
        lines += [notes["overview"], ""]
    for item in kata.rubric:
        lines.append(f"## {item.id} ({item.points} points, graded by {item.graded_by})")
        lines.append(f"   looks for: {item.description}")
        lines += [f"   follow-up: {q}" for q in item.extra.get("follow_ups", [])]
        if item.extra.get("good_answer"):
            lines.append(f"   a good answer: {item.extra['good_answer']}")
        lines.append("")
    lines.append("## Hints, in order")
    lines += [f"   {n}. {h}" for n, h in enumerate(kata.hints, 1)]
    return "\n".join(lines)


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


# -- the session's folder, its marks and its report ---------------------------------------

def open_record(s: Session) -> Path:
    """Create the session's folder (``out``/NAME-STAMP) and its session.json."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(s.started_wall))
    s.out.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        folder = s.out / (f"{s.kata.name}-{stamp}" + (f"-{n}" if n > 1 else ""))
        try:
            folder.mkdir()
            break
        except FileExistsError:
            n += 1
    (folder / LOCK_FILE).touch()
    info = {"kata": s.kata.name, "title": s.kata.title, "started_wall": s.started_wall,
            "minutes": s.minutes, "hints_allowed": s.hints_allowed, "pid": os.getpid(),
            "rubric": [{"id": i.id, "points": i.points, "graded_by": i.graded_by,
                        "description": i.description} for i in s.kata.rubric]}
    _write_atomic(folder / SESSION_FILE, json.dumps(info, indent=2) + "\n")
    s.record = folder
    return folder


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One writer at a time on a session's folder: the candidate's session writing its
    report, and marks from the candidate's prompt, the interviewer view or ``mark``."""
    with open(folder / LOCK_FILE, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def session_info(folder: Path) -> dict[str, Any]:
    path = folder / SESSION_FILE
    if not path.is_file():
        raise MarkError(f"{folder} is not an interview's folder (it has no {SESSION_FILE}; "
                        "reports of this version are in interviews/NAME-YYYYmmdd-HHMMSS/)")
    try:
        info = _read_json(path)
    except (OSError, ValueError) as exc:
        raise MarkError(f"{path} cannot be read: {exc}") from None
    if not isinstance(info, dict) or not isinstance(info.get("rubric"), list):
        raise MarkError(f"{path} holds no rubric")
    return info


def read_marks(folder: Path) -> dict[str, dict[str, Any]]:
    path = folder / MARKS_FILE
    if not path.is_file():
        return {}
    marks = _read_json(path)
    return marks if isinstance(marks, dict) else {}


def check_mark(rubric: list[dict[str, Any]], item_id: str, value: str) -> tuple[dict[str, Any],
                                                                                float]:
    """The rubric item and the points of one mark; MarkError says what is wrong."""
    marked = [i for i in rubric if i["graded_by"] != "tests"]
    choices = ", ".join(f"{i['id']} (0 to {i['points']})" for i in marked) or \
        "none: every item of this kata is graded by the tests"
    item = next((i for i in rubric if i["id"] == item_id), None)
    if item is None:
        raise MarkError(f"no rubric item {item_id!r}; the interviewer marks: {choices}")
    if item["graded_by"] == "tests":
        raise MarkError(f"{item_id!r} is graded by the tests (its points come from the "
                        f"grade), not by the interviewer; the interviewer marks: {choices}")
    try:
        points = float(value)
    except ValueError:
        raise MarkError(f"{value!r} is not a number: give {item_id}'s points as a number "
                        f"from 0 to {item['points']}") from None
    if not math.isfinite(points) or not 0 <= points <= item["points"]:
        raise MarkError(f"{value} is outside {item_id}'s range: give a number from 0 to "
                        f"{item['points']}")
    return item, points


def record_mark(folder: Path, item_id: str, value: str, note: str, by: str) -> dict[str, Any]:
    """Record (or replace) one interviewer mark in a session's folder; if the report is
    written already, rewrite it with the mark. Validated before anything is written: a
    refused mark (MarkError) changes no file."""
    info = session_info(folder)
    item, points = check_mark(info["rubric"], item_id, value)
    mark = {"points": points, "max": item["points"], "note": note.strip(), "by": by,
            "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    with _locked(folder):
        report = folder / "report.json"
        try:
            data = _read_json(report) if report.is_file() else None
            marks = read_marks(folder)
        except (OSError, ValueError) as exc:
            raise MarkError(f"{folder}'s report or marks cannot be read: {exc}") from None
        marks[item_id] = mark
        texts = {MARKS_FILE: json.dumps(marks, indent=2) + "\n"}
        if data is not None:
            data["marks"] = marks
            texts.update(render_all(data))
        for name, text in texts.items():
            _write_atomic(folder / name, text)
    return mark


def report_data(s: Session, grade_result: Any, ended: str) -> dict[str, Any]:
    """Everything the report shows, as plain data (report.json holds it; ``mark``
    re-renders the report from it)."""
    graded = None
    if grade_result is not None:
        graded = {"score": grade_result.score, "max_score": grade_result.max_score,
                  "items": [{"id": r.item.id, "points": r.item.points, "score": r.score,
                             "status": r.status} for r in grade_result.items]}
    return {
        "kata": s.kata.name, "title": s.kata.title,
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s.started_wall)),
        "minutes_allowed": s.minutes, "time_used_s": round(s.used(), 2),
        "grading_s": round(s.grading_s, 2), "ended": ended,
        "hints_allowed": s.hints_allowed,
        "hints_taken": [{"at": round(t, 2), "hint": h} for t, h in s.hints_taken],
        "runs": [{"at": round(t, 2), "why": why, "status": st} for t, why, st in s.runs],
        "first_pass": {k: round(v, 2) for k, v in s.first_pass.items()},
        "rubric": [{"id": i.id, "points": i.points, "graded_by": i.graded_by,
                    "description": i.description} for i in s.kata.rubric],
        "grade": graded, "diff": diff_against_stub(s), "marks": {},
    }


def totals(data: dict[str, Any]) -> dict[str, Any]:
    """The combined score: the tests' grade plus the interviewer's marks."""
    marks = data.get("marks", {})
    by_interviewer = [i for i in data["rubric"] if i["graded_by"] != "tests"]
    graded = data.get("grade")
    t_score = graded["score"] if graded else 0
    t_max = graded["max_score"] if graded else sum(i["points"] for i in data["rubric"]
                                                   if i["graded_by"] == "tests")
    i_score = sum(marks[i["id"]]["points"] for i in by_interviewer if i["id"] in marks)
    i_max = sum(i["points"] for i in by_interviewer)
    return {"tests_score": t_score, "tests_max": t_max, "tests_graded": graded is not None,
            "interviewer_score": i_score, "interviewer_max": i_max,
            "unmarked": [i["id"] for i in by_interviewer if i["id"] not in marks],
            "score": t_score + i_score, "max_score": t_max + i_max}


def render_markdown(data: dict[str, Any]) -> str:
    tot = totals(data)
    marks = data.get("marks", {})
    md: list[str] = [
        f"# Interview report: {data['title']} ({data['kata']})", "",
        f"- started: {data['started']}",
        f"- time allowed: {minutes_text(data['minutes_allowed'])}; time used: "
        f"{clock(data['time_used_s'])}"
        + (f" (the final grading's {seconds_text(data['grading_s'])} not counted)"
           if data["grade"] is not None else ""),
        f"- ended by: {data['ended']}",
        f"- hints: {'allowed' if data['hints_allowed'] else 'off'}; taken: "
        f"{len(data['hints_taken'])}",
        f"- watch runs of the public tests: {len(data['runs'])}", ""]
    interviewer = (f"interviewer {points_text(tot['interviewer_score'])}/"
                   f"{tot['interviewer_max']}"
                   + (f", not marked yet: {', '.join(tot['unmarked'])}" if tot["unmarked"]
                      else ""))
    if tot["tests_graded"]:
        tests = f"tests {tot['tests_score']}/{tot['tests_max']}"
        if tot["interviewer_max"]:
            md.append(f"## Score: {points_text(tot['score'])}/{tot['max_score']} "
                      f"({tests} + {interviewer})")
        else:
            md.append(f"## Score: {tot['score']}/{tot['max_score']} ({tests}: public + "
                      "hidden)")
    else:
        md.append("## Score: not graded by the tests (the candidate quit before submitting)"
                  + (f"; {interviewer}" if tot["interviewer_max"] else ""))
    md += ["", "| rubric item | graded by | points | status | first passed (public tests) "
           "| interviewer's note |", "|---|---|---|---|---|---|"]
    graded = {r["id"]: r for r in data["grade"]["items"]} if data["grade"] else {}
    for item in data["rubric"]:
        if item["graded_by"] == "tests":
            r = graded.get(item["id"])
            first = data["first_pass"].get(item["id"])
            score = f"{r['score']}/{item['points']}" if r else f"-/{item['points']}"
            md.append(f"| {item['id']} | tests | {score} | {r['status'] if r else 'not graded'}"
                      f" | {clock(first) if first is not None else '-'} | |")
        else:
            m = marks.get(item["id"])
            score = f"{points_text(m['points'])}/{item['points']}" if m else \
                f"-/{item['points']}"
            status = f"marked ({m['by']})" if m else "not marked yet"
            note = (m["note"] if m else "").replace("|", "/").replace("\n", " ")
            md.append(f"| {item['id']} | interviewer | {score} | {status} | - | {note} |")
    md += ["", "## Hints taken", ""]
    md += [f"- {clock(h['at'])}: {h['hint']}" for h in data["hints_taken"]] or ["- none"]
    md += ["", "## Interviewer-graded items (checklist)", ""]
    by_interviewer = [i for i in data["rubric"] if i["graded_by"] != "tests"]
    for i in by_interviewer:
        m = marks.get(i["id"])
        if m:
            md.append(f"- [x] {i['id']} ({points_text(m['points'])}/{i['points']} points, "
                      f"{m['by']}, {m['when']}): {i['description']}"
                      + (f" Note: {m['note']}" if m["note"] else ""))
        else:
            md.append(f"- [ ] {i['id']} ({i['points']} points): {i['description']}")
    if not by_interviewer:
        md.append("- none for this kata")
    md += ["", "## Timeline of watch runs", ""]
    md += [f"- {clock(r['at'])} {r['why']}: "
           + (", ".join(f"{k} {v}" for k, v in r["status"].items()) or "no tests")
           for r in data["runs"]] or ["- none"]
    md += ["", "## Final code (diff against the stub)", "", "```diff", data["diff"].rstrip("\n"),
           "```", ""]
    return "\n".join(md)


def render_all(data: dict[str, Any]) -> dict[str, str]:
    """report.md, report.html and report.json for ``data`` (its marks and totals)."""
    data = dict(data, totals=totals(data))
    text = render_markdown(data)
    return {"report.md": text, "report.html": markdown_to_html(text, data["title"]),
            "report.json": json.dumps(data, indent=2) + "\n"}


def write_report(s: Session, grade_result: Any, ended: str, out_root: Path) -> Path:
    """Write the report into the session's folder (opened now if it was not), with the
    marks given so far."""
    s.end()
    if s.record is None:
        s.out = out_root
        open_record(s)
    assert s.record is not None
    with _locked(s.record):
        data = report_data(s, grade_result, ended)
        data["marks"] = read_marks(s.record)
        for name, text in render_all(data).items():
            _write_atomic(s.record / name, text)
    return s.record


HTML_STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}"
              "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.2em .6em}"
              "pre{background:#f6f8fa;padding:1em;overflow:auto}"
              "pre.diff span{display:block}"
              ".add{background:#e6ffec;color:#116329}.del{background:#ffebe9;color:#82071e}"
              ".hunk{color:#0550ae;background:#ddf4ff}.file{color:#57606a;font-weight:bold}")


def _diff_line(line: str) -> str:
    """One line of a unified diff, classed for colour: added, removed, hunk, file."""
    kind = ("file" if line.startswith(("+++", "---")) else "add" if line.startswith("+")
            else "del" if line.startswith("-") else "hunk" if line.startswith("@@") else "")
    body = html.escape(line) or " "
    return f"<span class='{kind}'>{body}</span>" if kind else f"<span>{body}</span>"


def markdown_to_html(text: str, title: str) -> str:
    """A small Markdown subset to HTML: headings, lists, tables, code blocks (a ```diff
    block coloured line by line)."""
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
           f"</title><style>{HTML_STYLE}</style></head><body>"]
    code: str | None = None         # the open code block's language ("" for none)
    block: list[str] = []
    in_list = in_table = False

    def close_code() -> None:
        if code == "diff":   # one block-level span per line: no newlines between them
            out.append("<pre class='diff'>" + "".join(_diff_line(x) for x in block) + "</pre>")
        else:
            out.append("<pre>" + "\n".join(html.escape(x) for x in block) + "</pre>")
        block.clear()

    for line in text.splitlines():
        if line.startswith("```"):
            if code is None:
                code = line[3:].strip()
            else:
                close_code()
                code = None
            continue
        if code is not None:
            block.append(line)
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
            elif item.startswith("[x] "):
                item = "<input type='checkbox' checked disabled> " + html.escape(item[4:])
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
    if code is not None:
        close_code()
    if in_list:
        out.append("</ul>")
    if in_table:
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out)


# -- the candidate's session ----------------------------------------------------------------

def submit(s: Session) -> Any:
    from graders import grade

    s.end()   # the candidate's time stops here; the grading is timed on its own
    hidden = s.kata.hidden_tests.is_dir()
    s.event("grading", time_used=round(s.used(), 2))
    print(f"\nGrading with the {'public and hidden' if hidden else 'public'} tests...",
          flush=True)
    start = time.monotonic()
    try:
        result = grade.run(s.kata.name, s.impl, profile=s.profile)
    except grade.GradeError as exc:
        s.grading_s = time.monotonic() - start
        print(f"grading failed: {exc}")
        s.event("graded", error=str(exc))
        return None
    s.grading_s = time.monotonic() - start
    # the candidate's terminal: the candidate's table (no hidden test named or quoted)
    print(grade.table(result, candidate=True), flush=True)
    s.event("graded", score=result.score, max_score=result.max_score,
            items={r.item.id: [r.score, r.item.points, r.status] for r in result.items},
            table=grade.table(result))
    return result


def pristine_stub(kata: catalog.Kata) -> str:
    try:
        return subprocess.run(["git", "show", f"HEAD:katas/{kata.name}/__init__.py"],
                              cwd=catalog.ROOT, capture_output=True, text=True, check=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return (kata.folder / "__init__.py").read_text(encoding="utf-8")


def parse_mark_command(line: str) -> tuple[str, str, str]:
    """``mark ITEM POINTS [NOTE...]`` -> (item, points, note). The note is the rest of the
    line as typed (an apostrophe is fine); quotes around the whole of it are dropped."""
    words = line.split(None, 3)
    if len(words) < 3:
        raise MarkError("usage: mark ITEM POINTS [NOTE], e.g. mark why_differ 7 good on X")
    note = words[3].strip() if len(words) > 3 else ""
    if len(note) >= 2 and note[0] == note[-1] and note[0] in "\"'":
        note = note[1:-1]
    return words[1], words[2], note


def mark_at_prompt(folder: Path | None, line: str, by: str) -> None:
    if folder is None:
        print("no session to mark yet")
        return
    try:
        item, value, note = parse_mark_command(line)
        mark = record_mark(folder, item, value, note, by)
    except MarkError as exc:
        print(f"mark refused: {exc}", flush=True)
        return
    print(f"marked {item}: {points_text(mark['points'])}/{mark['max']}"
          + (f" ({mark['note']})" if mark["note"] else ""), flush=True)
    if (folder / "report.json").is_file():
        print(f"report rewritten; {total_line(folder)}", flush=True)


def run_session(kata: catalog.Kata, args: argparse.Namespace) -> int:
    impl = args.impl or "katas"
    folder = kata.folder if impl == "katas" else Path(impl).resolve()
    s = Session(kata, impl if impl == "katas" else str(folder), folder,
                args.minutes if args.minutes is not None else kata.minutes, not args.no_hints,
                out=args.out)
    s.stub_source = pristine_stub(kata)
    s.profile = args.profile or "grade"
    record = open_record(s)
    s.event("start", kata=kata.name, minutes=s.minutes, hints_allowed=s.hints_allowed)
    print(kata.prompt_path.read_text(encoding="utf-8").split("<details>")[0].rstrip())
    print(f"\n=== {kata.title}: {minutes_text(s.minutes)}. Edit {folder}; the public tests "
          f"run on every save.\n=== commands: {CANDIDATE_COMMANDS}", flush=True)
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
            s.end()
            result, ended = None, "end of input"
            break
        cmd = line.strip().split(" ")[0].lower()
        if cmd == "hint":
            if not s.hints_allowed:
                print("hints are off for this interview")
            elif len(s.hints_taken) >= len(kata.hints):
                print("no more hints")
            else:
                h = kata.hints[len(s.hints_taken)]
                s.hints_taken.append((s.elapsed(), h))
                s.event("hint", n=len(s.hints_taken), hint=h)
                print(f"hint {len(s.hints_taken)}/{len(kata.hints)}: {h}")
        elif cmd == "test":
            run_public(s, "test")
        elif cmd == "mark":
            mark_at_prompt(record, line.strip(), "during the session")
        elif cmd == "submit":
            result, ended = submit(s), "submitted"
            break
        elif cmd in ("quit", "exit"):
            s.end()
            ended = "quit"
            break
        elif cmd:
            print(f"commands: {CANDIDATE_COMMANDS}")
    out = write_report(s, result, ended, args.out)
    s.event("end", ended=ended, report=str(out / "report.md"))
    tot = totals(_read_json(out / "report.json"))
    print(f"\nreport: {out / 'report.md'} and {out / 'report.html'}", flush=True)
    if tot["unmarked"]:
        print(f"not marked yet by the interviewer: {', '.join(tot['unmarked'])}; mark with: "
              f"nox -s interview -- mark {out} ITEM POINTS --note TEXT", flush=True)
    return 0


# -- the interviewer's companion view --------------------------------------------------------

def _pid_alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def live_sessions(out: Path, kata: str) -> list[Path]:
    """This kata's sessions under ``out`` still running (no report yet, process alive),
    newest first."""
    found = []
    for folder in out.glob(f"{kata}-*"):
        try:
            info = _read_json(folder / SESSION_FILE)
        except (OSError, ValueError):
            continue
        if not (folder / "report.json").exists() and _pid_alive(info.get("pid")):
            found.append((info.get("started_wall", 0.0), folder))
    return [f for _, f in sorted(found, key=lambda x: x[0], reverse=True)]


class Follower:
    """Reads a session's events.jsonl as it grows; complete lines only."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.offset = 0
        self.buffer = ""

    def new_events(self) -> list[dict[str, Any]]:
        path = self.folder / EVENTS_FILE
        try:
            with open(path, encoding="utf-8") as f:
                f.seek(self.offset)
                chunk = f.read()
                self.offset = f.tell()
        except OSError:
            return []
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split("\n")
        events = []
        for line in lines:
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        return events


def describe_event(e: dict[str, Any], minutes: float) -> str:
    at = f"[{clock(e.get('at', 0))} used, {clock(max(0.0, minutes * 60 - e.get('at', 0)))} left]"
    kind = e.get("event")
    if kind == "start":
        return f"{at} the candidate's session started ({minutes_text(minutes)})"
    if kind == "run":
        return f"{at} {run_summary(e['why'], e['status'])}"
    if kind == "hint":
        return f"{at} hint {e['n']} taken: {e['hint']}"
    if kind == "grading":
        return (f"{at} the candidate's session ended at {clock(e.get('time_used', 0))}; "
                "grading with the public and hidden tests...")
    if kind == "graded":
        if "error" in e:
            return f"grading failed: {e['error']}"
        return f"graded by the tests: {e['score']}/{e['max_score']}\n{e.get('table', '')}"
    if kind == "end":
        return (f"the session ended, by: {e['ended']}; report: {e['report']}\n"
                "marks given from now on amend the report")
    return f"{at} {kind}"


def total_line(folder: Path) -> str:
    """The report's combined total, in one line."""
    try:
        tot = totals(_read_json(folder / "report.json"))
    except (OSError, ValueError, KeyError) as exc:
        return f"(the report's total cannot be read: {exc})"
    return (f"total: {points_text(tot['score'])}/{tot['max_score']} (tests "
            f"{tot['tests_score']}/{tot['tests_max']}"
            + ("" if tot["tests_graded"] else ", not graded")
            + f" + interviewer {points_text(tot['interviewer_score'])}/{tot['interviewer_max']}"
            + (f"; not marked yet: {', '.join(tot['unmarked'])}" if tot["unmarked"] else "")
            + ")")


def companion(kata: catalog.Kata, out: Path, session: Path | None) -> int:
    """The interviewer's view: the notes, then the candidate's live session."""
    print(interviewer_notes(kata))
    print(f"\n=== interviewer's view of {kata.name}; commands: {COMPANION_COMMANDS}",
          flush=True)
    folder = session
    if folder is None:
        live = live_sessions(out, kata.name)
        folder = live[0] if live else None
    follower = None
    minutes = float(kata.minutes)
    if folder is None:
        print(f"waiting for the candidate's session to start (nox -s interview -- "
              f"{kata.name}, writing to {out})", flush=True)
    while True:
        if folder is None:
            live = live_sessions(out, kata.name)
            folder = live[0] if live else None
        if folder is not None and follower is None:
            try:
                minutes = float(session_info(folder).get("minutes", kata.minutes))
            except MarkError as exc:
                print(f"interview: {exc}", file=sys.stderr)
                return 2
            print(f"following {folder}", flush=True)
            follower = Follower(folder)
        if follower is not None:
            for e in follower.new_events():
                print(describe_event(e, minutes), flush=True)
                if e.get("event") == "end":
                    print(total_line(follower.folder), flush=True)
        ready, _, _ = select.select([sys.stdin], [], [], POLL_S)
        if not ready:
            continue
        line = sys.stdin.readline()
        if not line:
            return 0
        cmd = line.strip().split(" ")[0].lower()
        if cmd == "mark":
            mark_at_prompt(folder, line.strip(), "interviewer's view")
        elif cmd == "marks":
            marks = read_marks(folder) if folder is not None else {}
            for item, m in marks.items():
                print(f"  {item}: {points_text(m['points'])}/{m['max']} ({m['by']}) {m['note']}")
            if not marks:
                print("  no marks yet")
        elif cmd == "notes":
            print(interviewer_notes(kata))
        elif cmd in ("quit", "exit"):
            return 0
        elif cmd:
            print(f"commands: {COMPANION_COMMANDS}")


# -- command line -----------------------------------------------------------------------------

def mark_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="nox -s interview -- mark",
        description="Record (or replace) the interviewer's mark for an interviewer-graded "
                    "item of a finished (or running) interview, and rewrite its report.")
    parser.add_argument("folder", type=Path, help="the interview's folder, interviews/NAME-...")
    parser.add_argument("item", help="the rubric item (graded_by = \"interviewer\")")
    parser.add_argument("points", help="from 0 to the item's points")
    parser.add_argument("--note", default="", help="what the candidate said, in a sentence")
    args = parser.parse_args(argv)
    try:
        mark = record_mark(args.folder, args.item, args.points, args.note,
                           "after the session")
        data = _read_json(args.folder / "report.json") \
            if (args.folder / "report.json").is_file() else None
    except MarkError as exc:
        print(f"interview mark: {exc}", file=sys.stderr)
        return 2
    print(f"marked {args.item}: {points_text(mark['points'])}/{mark['max']}")
    if data is None:
        print("no report yet (the session has not ended): its report will include the mark")
    else:
        tot = data["totals"]
        print(f"report rewritten: {args.folder / 'report.md'}; total "
              f"{points_text(tot['score'])}/{tot['max_score']}"
              + (f" (not marked yet: {', '.join(tot['unmarked'])})" if tot["unmarked"] else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "mark":
        return mark_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="nox -s interview --",
        epilog="afterwards: nox -s interview -- mark DIR ITEM POINTS [--note TEXT] records the "
               "interviewer's mark for an interviewer-graded item and rewrites the report")
    parser.add_argument("kata")
    parser.add_argument("--minutes", type=float, default=None)
    parser.add_argument("--no-hints", action="store_true")
    parser.add_argument("--interviewer", action="store_true",
                        help="the interviewer's view (never show it to the candidate): the "
                             "notes, then the candidate's live session, and marks")
    parser.add_argument("--session", type=Path, default=None,
                        help="with --interviewer: the session folder to follow (default: "
                             "the newest running one of this kata under --out, or the next)")
    parser.add_argument("--impl", default=None,
                        help="the folder the candidate edits (default katas/NAME)")
    parser.add_argument("--out", type=Path, default=catalog.ROOT / "interviews")
    parser.add_argument("--profile", default=None, choices=("grade", "selftest", "kata"),
                        help="Hypothesis profile of the final grade: grade (150 examples, "
                             "as hiring teams grade; the default), selftest (60) or kata (25)")
    args = parser.parse_args(argv)
    try:
        kata = catalog.load(args.kata)
    except catalog.CatalogError as exc:
        print(f"interview: {exc}", file=sys.stderr)
        return 2
    if args.minutes is not None and not (math.isfinite(args.minutes) and args.minutes > 0):
        print("interview: --minutes must be a positive number", file=sys.stderr)
        return 2
    if args.interviewer:
        misplaced = [flag for flag, given in (
            ("--minutes", args.minutes is not None), ("--no-hints", args.no_hints),
            ("--impl", args.impl is not None), ("--profile", args.profile is not None))
            if given]
        if misplaced:
            print(f"interview: {', '.join(misplaced)} set the candidate's session: give them "
                  f"on the candidate's command (nox -s interview -- {kata.name} "
                  f"{' '.join(misplaced)} ...); --interviewer follows that session as it is",
                  file=sys.stderr)
            return 2
        if args.session is not None:
            try:
                followed = session_info(args.session).get("kata")
            except MarkError as exc:
                print(f"interview: {exc}", file=sys.stderr)
                return 2
            if followed != kata.name:
                print(f"interview: {args.session} is a session of {followed!r}, not of "
                      f"{kata.name!r}", file=sys.stderr)
                return 2
        return companion(kata, args.out, args.session)
    if args.session is not None:
        print("interview: --session goes with --interviewer", file=sys.stderr)
        return 2
    return run_session(kata, args)


if __name__ == "__main__":
    sys.exit(main())
