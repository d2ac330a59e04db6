"""The interviewer's companion view: the notes, the candidate's live session followed from its
events, marks given at the view's own prompt, and a candidate process that is gone noticed."""

from __future__ import annotations

import contextlib
import json
import select
import sys
import time
from pathlib import Path
from typing import Any

from graders import catalog
from graders.interview.marks import interviewer_items, join_as_interviewer, mark_at_prompt
from graders.interview.record import (ALIVE_CHECK_S, COMPANION_COMMANDS, EVENTS_FILE, MarkError,
                                      NOT_GRADED, POLL_S, SESSION_FILE, clock, is_running,
                                      minutes_text, pid_alive, points_text, read_json, read_marks,
                                      read_marks_file, session_info)
from graders.interview.report import mark_by, total_line
from graders.interview.session import interviewer_notes, run_summary


def live_sessions(out: Path, kata: str, skip: set[Path] | None = None) -> list[Path]:
    """This kata's sessions under ``out`` still running, newest first."""
    found = []
    for folder in out.glob(f"{kata}-*"):
        try:
            info = read_json(folder / SESSION_FILE)
        except (OSError, ValueError):
            continue
        if info.get("kata") == kata and folder not in (skip or set()) \
                and is_running(folder, info):
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


def score_rows(rubric: list[dict[str, Any]], graded: dict[str, Any] | None,
               marks: dict[str, dict[str, Any]]) -> str:
    """The interviewer's table: each item's points, status, test counts and first failure
    (hidden ones included), and the interviewer's items with their current marks."""
    items = {r["id"]: r for r in graded["items"]} if graded else {}
    lines = [f"  {'rubric item':<26}{'points':>8}  {'status':<10}{'tests':>7}  first failure"]
    for i in rubric:
        if i["graded_by"] == "tests":
            r = items.get(i["id"])
            if r is None:
                lines.append(f"  {i['id']:<26}{'-':>4}/{i['points']:<3}  {NOT_GRADED}")
                continue
            first = r["public"]["first_failure"] or (
                f"hidden {r['hidden']['first_failure']}" if r["hidden"]["first_failure"]
                else "")
            lines.append(f"  {i['id']:<26}{r['score']:>4}/{i['points']:<3}  "
                         f"{r['status'].upper():<10}{r['passed']:>3}/{r['tests']:<3}  {first}")
        else:
            m = marks.get(i["id"])
            lines.append(f"  {i['id']:<26}"
                         + (f"{points_text(m['points']):>4}/{i['points']:<3}  {'MARKED':<10}"
                            f"{'':>7}  by {mark_by(m)}" + (f": {m['note']}" if m["note"]
                                                           else "")
                            if m else f"{'-':>4}/{i['points']:<3}  {'--':<10}{'':>7}  "
                            "yours to mark: mark ITEM POINTS [NOTE]"))
    return "\n".join(lines)


def describe_event(e: dict[str, Any], minutes: float, folder: Path | None = None) -> str | None:
    """One event of the candidate's session as the interviewer reads it (None: not shown)."""
    at = f"[{clock(e.get('at', 0))} used, {clock(max(0.0, minutes * 60 - e.get('at', 0)))} left]"
    kind = e.get("event")
    if kind == "start":
        return (f"{at} {e.get('candidate', 'the candidate')}'s session started "
                f"({minutes_text(minutes)})")
    if kind == "run":
        return f"{at} {run_summary(e['why'], e['status'], e.get('failing'), e.get('load_error'))}"
    if kind == "hint":
        return f"{at} hint {e['n']} taken: {e['hint']}"
    if kind == "grading":
        return (f"{at} the candidate's session ended at {clock(e.get('time_used', 0))}; "
                "grading with the public and hidden tests...")
    if kind == "graded":
        if "error" in e:
            return f"grading failed: {e['error']}"
        rubric = session_info(folder)["rubric"] if folder else []
        marks = read_marks(folder) if folder else {}
        return (f"graded by the tests{' afterwards' if e.get('afterwards') else ''}: "
                f"{e['score']}/{e['max_score']}\n"
                + score_rows(rubric, e.get("summary"), marks))
    if kind == "end":
        return (f"the session ended, by: {e['ended']}; report: {e['report']}\n"
                "marks given from now on amend the report")
    return None


VIEW_PROMPT = "interviewer> "


def companion(kata: catalog.Kata, out: Path, session: Path | None, by: str) -> int:
    """The interviewer's view: the notes, then the candidate's live session."""
    try:
        return _companion(kata, out, session, by)
    except KeyboardInterrupt:
        print("\nleft the interviewer's view", flush=True)
        return 0


def _companion(kata: catalog.Kata, out: Path, session: Path | None, by: str) -> int:
    folder = session
    if folder is None:
        live = live_sessions(out, kata.name)
        folder = live[0] if live else None
    header_minutes = None
    if folder is not None:
        with contextlib.suppress(MarkError):
            header_minutes = float(session_info(folder).get("minutes", kata.minutes))
    print(interviewer_notes(kata, header_minutes))
    print(f"\n=== {by}'s view of {kata.name}; commands: {COMPANION_COMMANDS}", flush=True)
    if folder is None:
        print(f"waiting for the candidate's session to start (nox -s interview -- "
              f"{kata.name} --candidate NAME, writing to {out})", flush=True)
    follower: Follower | None = None
    followed: set[Path] = set()
    info: dict[str, Any] = {}
    minutes = float(kata.minutes)
    ended = gone = False
    next_check = 0.0
    prompt_shown = False

    def show(text: str) -> None:
        nonlocal prompt_shown
        print(("\n" if prompt_shown else "") + text, flush=True)
        prompt_shown = False

    while True:
        if folder is None:
            live = live_sessions(out, kata.name, followed)
            folder = live[0] if live else None
        if folder is not None and follower is None:
            try:
                info = session_info(folder)
                join_as_interviewer(folder, by)
            except (MarkError, OSError) as exc:
                print(f"interview: {exc}", file=sys.stderr)
                return 2
            minutes = float(info.get("minutes", kata.minutes))
            show(f"=== following {info.get('candidate', 'the candidate')}'s session: "
                 f"{minutes_text(minutes)}, started {info.get('started', '?')}, in {folder}")
            follower = Follower(folder)
            followed.add(folder)
            ended = gone = False
        if follower is not None:
            for e in follower.new_events():
                text = describe_event(e, minutes, follower.folder)
                if text is not None:
                    show(text)
                if e.get("event") == "end":
                    ended = True
                    show(total_line(follower.folder))
            if not ended and not gone and time.monotonic() >= next_check:
                next_check = time.monotonic() + ALIVE_CHECK_S
                if not (follower.folder / "report.json").exists() \
                        and not pid_alive(info.get("pid")):
                    gone = True
                    show(f"the candidate's session (process {info.get('pid')}) is gone "
                         "without a report: nox -s interview -- grade "
                         f"{follower.folder} grades what it left; marks still go to it; "
                         "'next' follows the next session")
        if not prompt_shown:
            print(VIEW_PROMPT, end="", flush=True)
            prompt_shown = True
        ready, _, _ = select.select([sys.stdin], [], [], POLL_S)
        if not ready:
            continue
        line = sys.stdin.readline()
        prompt_shown = False
        if not line:
            print()
            return 0
        cmd = line.strip().split(" ")[0].lower()
        if cmd == "mark":
            mark_at_prompt(folder, line.strip(), by, "interviewer's view")
        elif cmd == "marks":
            history = read_marks_file(folder)["history"] if folder is not None else []
            for m in history:
                print(f"  {m['when']} {m['item']}: {points_text(m['points'])}/{m['max']} "
                      f"by {mark_by(m)}" + (f": {m['note']}" if m["note"] else ""))
            if not history:
                print("  no marks yet")
            elif folder is not None:
                print(f"  {interviewer_items(folder)}")
        elif cmd == "notes":
            print(interviewer_notes(kata, minutes))
        elif cmd == "next":
            folder, follower = None, None
            print(f"waiting for the next session of {kata.name} in {out}", flush=True)
        elif cmd in ("quit", "exit"):
            return 0
        elif cmd:
            print(f"commands: {COMPANION_COMMANDS}")
