"""The candidate's session: the prompt, the countdown, the public tests on every save, hints,
submit, and an end that always leaves a report (quit, time-out, Ctrl-C, end of input)."""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from graders import catalog, launch
from graders.interview.record import (CANDIDATE_COMMANDS, CANDIDATE_FILES, POLL_S, Session,
                                      Stopped, WorkspaceError, check_name, clock, minutes_text,
                                      open_record, write_session_info)
from graders.interview.report import clip, first_line, grade_summary, grade_workspace, write_report
from graders.interview.workspace import (candidate_prompt, code_files, load_problem,
                                         prepare_workspace, pristine_stub)


def run_public(s: Session, why: str) -> dict[str, str]:
    """Run the public tests on the workspace; print which items fail and each one's first
    public failure line (or that the code does not load); returns item -> passed/failed."""
    assert s.work is not None
    problem = load_problem(s.work)
    status: dict[str, str] = {}
    failing: dict[str, str] = {}
    if problem is None:
        status, failing, problem = _public_results(s)
    now = s.elapsed()
    for item, st in status.items():
        if st == "passed":
            s.first_pass.setdefault(item, now)
    s.event("run", why=why, status=status, failing=failing, load_error=problem,
            left=round(s.left(), 2))
    print(f"\n[{clock(s.left())} left] {run_summary(why, status, failing, problem)}",
          flush=True)
    return status


# graders.impl's words for a submission that does not load (a "File ..., line N" line may
# stand before the exception's own)
IMPORT_FAILURE = re.compile(r"failed to import: (?:File \"[^\"\n]*\", line \d+\n)?([^\n]*)"
                            r"|(called exit\(.*?\) while being imported)")


def _public_results(s: Session) -> tuple[dict[str, str], dict[str, str], str | None]:
    """One pytest run of the public tests on the workspace, in-process (the candidate's
    own code, on the candidate's machine, as ``nox -s kata`` runs it): each item's status,
    each failing item's first failure line, and why the code does not load when every
    failure is its import's."""
    with tempfile.TemporaryDirectory() as tmp:
        progress = Path(tmp) / "progress.jsonl"
        subprocess.run(
            [sys.executable, "-m", "pytest", *launch.pytest_args(
                [str(s.kata.public_tests)], profile="kata", impl=str(s.work), timeout=20,
                extra=["--progress", str(progress)])],
            cwd=catalog.ROOT, env=launch.test_env(), capture_output=True, timeout=300,
            stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            lines = progress.read_text().splitlines()
        except OSError:
            lines = []
    events = [json.loads(line) for line in lines if line]
    rubric_of = {t["nodeid"]: t["rubric"] for e in events if e["event"] == "collected"
                 for t in e["tests"]}
    status: dict[str, str] = {}
    failing: dict[str, str] = {}
    imports: list[str | None] = []
    for e in events:
        if e["event"] != "result" or rubric_of.get(e["nodeid"]) is None:
            continue
        item = rubric_of[e["nodeid"]]
        if e["outcome"] in ("passed", "skipped"):
            status.setdefault(item, "passed")
            imports.append(None)
        else:
            status[item] = "failed"
            message = e.get("message", "")
            failing.setdefault(item, clip(f"{e['nodeid'].split('::')[-1]}: "
                                           f"{first_line(message) or 'failed'}"))
            said = "\n".join(x[1:].strip() for x in message.splitlines() if x.startswith("E "))
            found = IMPORT_FAILURE.search(said)   # what it says, not the source it quotes
            imports.append(clip((found.group(1) or found.group(2)).strip()) if found else None)
    problem = imports[0] if imports and all(imports) else None
    return status, failing, problem


def run_summary(why: str, status: dict[str, str], failing: dict[str, str] | None = None,
                problem: str | None = None) -> str:
    if problem:
        return f"{why}: does not load: {problem}"
    passing = [i for i, st in status.items() if st == "passed"]
    text = (f"{why}: {len(passing)}/{len(status)} rubric items pass the public tests"
            + (f" ({', '.join(passing)})" if passing else ""))
    for item, line in (failing or {}).items():
        text += f"\n  failing {item}: {line}"
    return text


def interviewer_notes(kata: catalog.Kata, minutes: float | None = None) -> str:
    shown = minutes if minutes is not None else kata.minutes
    lines = [f"# Interviewer notes: {kata.title} ({kata.name}, {minutes_text(shown)}"
             + (f"; the kata's usual {minutes_text(kata.minutes)}"
                if shown != kata.minutes else "") + ")", ""]
    if not has_notes(kata):
        lines += ["NO INTERVIEWER NOTES HERE: this copy of the katas (a candidate bundle) "
                  "ships none: no overview, follow-up questions or good answers. Keep them "
                  "apart: open the full repository's view (nox -s interview -- "
                  f"{kata.name} --interviewer --session DIR) or its "
                  "docs/INTERVIEW.md; this view still follows the session and takes marks.",
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


def has_notes(kata: catalog.Kata) -> bool:
    return bool(kata.raw.get("interviewer")) or any(
        i.extra.get("follow_ups") or i.extra.get("good_answer") for i in kata.rubric)


def submit(s: Session, opening: str = "") -> dict[str, Any] | None:
    """The session's end by submission: grade the workspace with the public and hidden
    tests. From here on a Ctrl-C (or SIGTERM, SIGHUP) no longer stops anything: it would
    only leave the grade's processes behind (run_session restores the handlers)."""
    from graders import grade

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _grading_goes_on)
    s.end()   # the candidate's time stops here; the grading is timed on its own
    assert s.work is not None
    if opening:
        _say(opening)
    hidden = s.kata.hidden_tests.is_dir()
    s.event("grading", time_used=round(s.used(), 2))
    _say(f"\nGrading with the {'public and hidden' if hidden else 'public'} tests...")
    start = time.monotonic()
    try:
        result, s.grading_s = grade_workspace(s.kata.name, s.work, s.profile)
    except grade.GradeError as exc:
        s.grading_s = time.monotonic() - start
        _say(f"grading failed: {exc}")
        s.event("graded", error=str(exc))
        return None
    # the candidate's terminal: the candidate's table (no hidden test named or quoted)
    _say(grade.table(result, candidate=True))
    summary = grade_summary(result)
    s.event("graded", summary=summary, score=result.score, max_score=result.max_score)
    return summary


def _grading_goes_on(signum: int, frame: Any) -> None:
    _say("\n(the grading goes on: the session has ended and its report follows)")


def _raise_stopped(signum: int, frame: Any) -> None:
    why = {int(signal.SIGINT): "interrupted (Ctrl-C)", int(signal.SIGTERM): "stopped (SIGTERM)",
           int(signal.SIGHUP): "the terminal closed"}
    raise Stopped(why.get(signum, f"signal {signum}"))


def _say(text: str, end: str = "\n") -> None:
    """Print to the candidate, who may be gone (a closed terminal)."""
    with contextlib.suppress(OSError, ValueError):
        print(text, end=end, flush=True)


def run_session(kata: catalog.Kata, args: argparse.Namespace) -> int:
    try:
        candidate = check_name(args.candidate, "--candidate")
        stub, origin = pristine_stub(kata)
    except (ValueError, OSError) as exc:
        print(f"interview: {exc}", file=sys.stderr)
        return 2
    s = Session(kata, args.minutes if args.minutes is not None else kata.minutes,
                not args.no_hints, candidate=candidate, out=args.out,
                profile=args.profile or "grade", stub=stub)
    record = open_record(s)
    try:
        s.work = prepare_workspace(kata, args.impl, record, stub)
    except (WorkspaceError, OSError) as exc:
        print(f"interview: {exc}", file=sys.stderr)
        with contextlib.suppress(OSError):
            for p in sorted(record.rglob("*"), reverse=True):
                p.rmdir() if p.is_dir() else p.unlink()
            record.rmdir()
        return 2
    write_session_info(s, origin)
    s.event("start", kata=kata.name, candidate=candidate, minutes=s.minutes,
            hints_allowed=s.hints_allowed)
    previous = {sig: signal.signal(sig, _raise_stopped)
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    summary: dict[str, Any] | None = None
    ended = "time-out"
    try:
        try:
            summary, ended = _session_loop(s)
        except Stopped as exc:
            ended = str(exc)
        finally:   # the report is written whatever happened; no second Ctrl-C stops it
            for sig in previous:
                signal.signal(sig, signal.SIG_IGN)
            s.end()
        write_report(record, ended, s.used(), summary, s.grading_s)
        s.event("end", ended=ended, report=str(record / "report.md"))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    _say(f"\nsession ended: {ended}")
    _say(f"report: {record / 'report.md'} and {record / 'report.html'} (the candidate's "
         f"copy: {record / CANDIDATE_FILES[0]})")
    if summary is None:
        _say(f"not graded: nox -s interview -- grade {record} grades the workspace")
    return 0


def _session_loop(s: Session) -> tuple[dict[str, Any] | None, str]:
    """The candidate's prompt until the session ends: (the grade summary or None, why)."""
    kata = s.kata
    assert s.work is not None
    _say(candidate_prompt(kata))
    _say(f"\n=== {s.candidate}: {kata.title}: {minutes_text(s.minutes)}. Edit {s.work}; the "
         f"public tests run on every save.\n=== commands: {CANDIDATE_COMMANDS}")
    seen = snapshot(s.work)
    next_tick = 60.0
    prompt_shown = False
    confirming = False
    while True:
        if s.left() <= 0:
            return submit(s, "\nTime is up: submitting."), "time-out (submitted automatically)"
        if not prompt_shown:
            _say("quit without submitting? the session ends, not graded [y/N] " if confirming
                 else f"[{clock(s.left())} left] > ", end="")
            prompt_shown = True
        ready, _, _ = select.select([sys.stdin], [], [], POLL_S)
        current = snapshot(s.work)
        if current != seen:
            seen = current
            run_public(s, "saved")
            prompt_shown = False
        if s.elapsed() >= next_tick:
            next_tick += 60
            s.event("tick", left=round(s.left(), 2))
            _say(f"\n[{clock(s.left())} left]")
            prompt_shown = False
        if not ready:
            continue
        line = sys.stdin.readline()
        prompt_shown = False
        if not line:
            s.end()
            return None, "end of input"
        cmd = line.strip().split(" ")[0].lower()
        if confirming:
            confirming = False
            if cmd in ("y", "yes"):
                s.end()
                return None, "quit"
            _say("the session goes on")
        elif cmd == "hint":
            if not s.hints_allowed:
                _say("hints are off for this interview")
            elif len(s.hints_taken) >= len(kata.hints):
                _say("no more hints")
            else:
                h = kata.hints[len(s.hints_taken)]
                s.hints_taken.append((s.elapsed(), h))
                s.event("hint", n=len(s.hints_taken), hint=h)
                _say(f"hint {len(s.hints_taken)}/{len(kata.hints)}: {h}")
        elif cmd == "test":
            run_public(s, "test")
        elif cmd == "submit":
            return submit(s), "submitted"
        elif cmd in ("quit", "exit"):
            confirming = True
        elif cmd:
            _say(f"{cmd!r} is not a command; commands: {CANDIDATE_COMMANDS}")


def snapshot(folder: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in code_files(folder)}
