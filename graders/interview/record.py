"""A session's folder: session.json, the events log, marks.json as read, the lock, the small
texts every view prints, and the errors the interview raises."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import subprocess
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graders import catalog


POLL_S = 0.5


ALIVE_CHECK_S = 2.0


SESSION_FILE = "session.json"


EVENTS_FILE = "events.jsonl"


MARKS_FILE = "marks.json"


REPORT_FILES = ("report.md", "report.html", "report.json")


CANDIDATE_FILES = ("candidate-report.md", "candidate-report.html")


SUMMARY_FILE = "summary.csv"


LOCK_FILE = ".lock"


WORK_DIR = "work"


STUBS_DIR = catalog.STUBS_DIR   # a candidate bundle's copies of the stubs


CANDIDATE_COMMANDS = "hint, test, submit, quit"


COMPANION_COMMANDS = "mark ITEM POINTS [NOTE], marks, notes, next, quit"


NOT_GRADED = "not graded"


ASKED = "asked by the interviewer during the session"


class MarkError(ValueError):
    """A mark (or another command on a session's folder) that cannot be carried out;
    nothing was changed."""


class WorkspaceError(ValueError):
    """The session cannot start from the stub; the message names the files and what to do."""


class Stopped(Exception):
    """The session was stopped from outside (Ctrl-C, a closed terminal, SIGTERM)."""


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


def check_name(name: str, what: str) -> str:
    """A person's name as given, stripped; ValueError for one a report or a CSV would
    garble (empty, control characters, a leading spreadsheet-formula character)."""
    name = name.strip()
    if not name:
        raise ValueError(f"{what} is empty")
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise ValueError(f"{what} {ascii(name)} holds control or invisible characters")
    if name[0] in "=+-@":
        raise ValueError(f"{what} {name!r} starts with {name[0]!r}, which spreadsheets read "
                         "as a formula")
    return name


def slug(name: str) -> str:
    """A name as a folder-name part: letters, digits, '.', '_' and '-' kept, runs of
    anything else one '-'."""
    return re.sub(r"[^\w.-]+", "-", name, flags=re.UNICODE).strip("-.") or "candidate"


def commit_text() -> str:
    """The harness's commit (and whether the grading side has uncommitted changes)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=catalog.ROOT,
                              capture_output=True, text=True, timeout=30)
        if head.returncode != 0:
            return "unknown (no git history)"
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "graders", "tests"],
                               cwd=catalog.ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git)"
    return head.stdout.strip() + (" with uncommitted changes to graders/ or tests/"
                                  if dirty.stdout.strip() else "")


@dataclass
class Session:
    kata: catalog.Kata
    minutes: float
    hints_allowed: bool
    candidate: str = "candidate"
    out: Path = Path("interviews")
    profile: str = "grade"
    work: Path | None = None           # the folder the candidate edits
    stub: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    started_wall: float = field(default_factory=time.time)
    hints_taken: list[tuple[float, str]] = field(default_factory=list)
    first_pass: dict[str, float] = field(default_factory=dict)
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


def open_record(s: Session) -> Path:
    """Create the session's folder (``out``/KATA-CANDIDATE-STAMP) with its lock file."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(s.started_wall))
    s.out.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        folder = s.out / (f"{s.kata.name}-{slug(s.candidate)}-{stamp}"
                          + (f"-{n}" if n > 1 else ""))
        try:
            folder.mkdir()
            break
        except FileExistsError:
            n += 1
    (folder / LOCK_FILE).touch()
    s.record = folder
    return folder


def write_session_info(s: Session, stub_origin: str) -> None:
    assert s.record is not None and s.work is not None
    info = {"kata": s.kata.name, "title": s.kata.title, "candidate": s.candidate,
            "started_wall": s.started_wall,
            "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s.started_wall)),
            "minutes": s.minutes, "hints_allowed": s.hints_allowed, "pid": os.getpid(),
            "workspace": str(s.work), "profile": s.profile, "commit": commit_text(),
            "stub_origin": stub_origin, "stub": s.stub,
            "rubric": rubric_data(s.kata)}
    write_atomic(s.record / SESSION_FILE, json.dumps(info, indent=2) + "\n")


def rubric_data(kata: catalog.Kata) -> list[dict[str, Any]]:
    return [{"id": i.id, "points": i.points, "graded_by": i.graded_by,
             "description": i.description} for i in kata.rubric]


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """One writer at a time on a session's folder: the candidate's session writing its
    report, marks from the interviewer view or ``mark``, and ``grade``."""
    with open(folder / LOCK_FILE, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def session_info(folder: Path) -> dict[str, Any]:
    path = folder / SESSION_FILE
    if not path.is_file():
        raise MarkError(f"{folder} is not an interview's folder (it has no {SESSION_FILE}; "
                        "sessions are in interviews/KATA-CANDIDATE-YYYYmmdd-HHMMSS/)")
    try:
        info = read_json(path)
    except (OSError, ValueError) as exc:
        raise MarkError(f"{path} cannot be read: {exc}") from None
    if not isinstance(info, dict) or not isinstance(info.get("rubric"), list):
        raise MarkError(f"{path} holds no rubric")
    return info


def read_events(folder: Path) -> list[dict[str, Any]]:
    try:
        text = (folder / EVENTS_FILE).read_text(encoding="utf-8")
    except OSError:
        return []
    events = []
    for line in text.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue   # a line cut short by a killed process
        if isinstance(e, dict):
            events.append(e)
    return events


def pid_alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:   # a zombie (ended, not yet reaped by its parent) is gone too
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def is_running(folder: Path, info: dict[str, Any]) -> bool:
    """The candidate's process is still at it: no report yet and its process alive."""
    return not (folder / "report.json").exists() and pid_alive(info.get("pid"))


def read_marks_file(folder: Path) -> dict[str, Any]:
    """marks.json as {"history": [...], "interviewers": [...]} (an older file, one mark
    per item, read as a history of those marks)."""
    path = folder / MARKS_FILE
    if not path.is_file():
        return {"history": [], "interviewers": []}
    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("history"), list):
        data.setdefault("interviewers", [])
        return data
    old = data if isinstance(data, dict) else {}
    return {"history": [dict(m, item=k, where=m.get("by", "")) for k, m in old.items()
                        if isinstance(m, dict)], "interviewers": []}


def latest_marks(history: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each item's mark that counts: its latest."""
    return {m["item"]: m for m in history}


def read_marks(folder: Path) -> dict[str, dict[str, Any]]:
    return latest_marks(read_marks_file(folder)["history"])


def marks_part(marks: dict[str, Any]) -> dict[str, Any]:
    return {"marks": latest_marks(marks["history"]), "marks_history": marks["history"],
            "interviewers": marks["interviewers"]}
