"""Mock interview mode: a timed kata with watch-and-test, hints on request, the
interviewer's marks, and reports a hiring team can compare. docs/INTERVIEW.md is the guide.

    nox -s interview -- NAME [--candidate C] [--minutes M] [--no-hints] [--impl DIR] [--profile P]
    nox -s interview -- NAME --interviewer [--by NAME] [--session DIR]
    nox -s interview -- mark DIR ITEM POINTS [--note TEXT] [--by NAME]
    nox -s interview -- grade DIR          grade a session that ended without a submission
    nox -s interview -- summary [DIR]      one table (and DIR/summary.csv) over all sessions

Candidate view: the prompt, a countdown, the public tests re-run on every save with the
failing items and each one's first public failure line, and commands at the prompt:
hint, test, submit, quit (which asks first). At time-out it submits by itself; Ctrl-C,
a closed terminal or the end of input end the session with a report (not graded: ``grade
DIR`` grades it afterwards).

Each session has a workspace of its own: by default ``<session>/work/``, a fresh copy of the
committed stub (git HEAD, or a bundle's ``graders/stubs/NAME.py``), so no candidate starts on
another's code. ``--impl DIR`` (``katas`` for ``katas/NAME``) edits DIR instead: created from
the stub when absent or empty, refused (naming the files) when it is not the stub.

Interviewer view (--interviewer), for a second terminal the candidate does not see: the
notes (rubric, follow-ups, good answers, hints), then the candidate's live session in the
same --out folder, with a prompt of its own; commands: mark ITEM POINTS [NOTE], marks,
notes, next, quit. Marks come only from here or from ``mark``: the candidate's prompt has no
such command. Every mark is kept with who gave it, when, where, its value and note.

A session's folder, ``interviews/KATA-CANDIDATE-YYYYmmdd-HHMMSS/``, holds session.json
(kata, candidate, settings, the stub), events.jsonl (the live log), marks.json (the marks'
history), work/ (the workspace) and, when it ends, report.md/.html/.json (the hiring
team's copy: hidden tests' first failures, the interviewer's notes and marks) and
candidate-report.md/.html (no hidden-test detail, no interviewer notes).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import difflib
import fcntl
import html
import io
import json
import math
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graders import catalog, launch

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


# -- small texts --------------------------------------------------------------------------------

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


# -- the stub and the workspace -----------------------------------------------------------------

def pristine_stub(kata: catalog.Kata) -> tuple[dict[str, str], str]:
    """The committed stub, its code files (path in the kata folder -> text), and where it
    came from: git HEAD; in a candidate bundle its copy ``graders/stubs/NAME.py`` (the
    other files as shipped); with neither, ``katas/NAME`` itself once it passes as a stub.
    WorkspaceError otherwise."""
    folder = f"katas/{kata.name}"
    copy = STUBS_DIR / f"{kata.name}.py"
    if copy.is_file():
        files = {p.relative_to(kata.folder).as_posix(): p.read_text(encoding="utf-8")
                 for p in _code_files(kata.folder)}
        files["__init__.py"] = copy.read_text(encoding="utf-8")
        return files, f"graders/stubs/{kata.name}.py (a candidate bundle)"
    files = _committed(folder)
    if files:
        return files, f"{folder} at git HEAD {commit_text().split()[0]}"
    files = {p.relative_to(kata.folder).as_posix(): p.read_text(encoding="utf-8")
             for p in _code_files(kata.folder)}
    problems = [p for rel, text in files.items()
                for p in catalog.stub_problems(text, f"{folder}/{rel}")]
    if problems or "__init__.py" not in files:
        raise WorkspaceError(f"{folder} is not the stub, and no committed stub is at hand:\n  "
                             + "\n  ".join(problems or [f"{folder}/__init__.py is missing"]))
    return files, f"{folder} (checked to be a stub; no git history)"


def _committed(folder: str) -> dict[str, str]:
    """The .py files under ``folder`` in git HEAD (empty without git or history)."""
    try:
        listing = subprocess.run(["git", "ls-tree", "-r", "-z", "--name-only", "HEAD", "--",
                                  folder + "/"], cwd=catalog.ROOT, capture_output=True,
                                 timeout=30)
        files = {}
        for name in filter(None, listing.stdout.decode().split("\0")):
            if listing.returncode != 0 or not name.endswith(".py"):
                continue
            show = subprocess.run(["git", "show", f"HEAD:{name}"], cwd=catalog.ROOT,
                                  capture_output=True, timeout=30)
            if show.returncode == 0:
                files[name[len(folder) + 1:]] = show.stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return {}
    return files if "__init__.py" in files else {}


def candidate_prompt(kata: catalog.Kata) -> str:
    """The prompt as the candidate reads it: up to the hints, and the rubric table's row of
    each interviewer-graded item without the question it announces."""
    text = kata.prompt_path.read_text(encoding="utf-8").split("<details>")[0].rstrip()
    asked = {i.id for i in kata.rubric if i.graded_by != "tests"}
    lines = []
    for line in text.splitlines():
        cells = line.strip().strip("|").split("|")
        if line.startswith("|") and len(cells) >= 2 and cells[0].strip(" `") in asked:
            line = "|" + "|".join(cells[:-1]) + f"| ({ASKED}) |"
        lines.append(line)
    return "\n".join(lines)


def _code_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def differs_from_stub(folder: Path, stub: dict[str, str]) -> list[str]:
    """The files that make ``folder`` more (or less) than the stub: a changed or missing
    stub file, any other .py file."""
    found = []
    for rel, text in stub.items():
        path = folder / rel
        if not path.is_file():
            found.append(f"{path} is missing")
        elif _read(path) != text:
            changed = sum(1 for line in difflib.unified_diff(
                text.splitlines(), _read(path).splitlines(), lineterm="", n=0)
                if line[:1] in "+-" and line[:3] not in ("+++", "---"))
            found.append(f"{path} differs from the stub ({changed} line"
                         + ("" if changed == 1 else "s") + " changed)")
    found += [f"{p} is not part of the stub" for p in _code_files(folder)
              if p.relative_to(folder).as_posix() not in stub]
    return found


def prepare_workspace(kata: catalog.Kata, impl: str | None, record: Path,
                      stub: dict[str, str]) -> Path:
    """The folder the candidate edits, holding exactly the stub. Default: ``record``/work,
    written now. ``impl``: that folder (``katas`` for katas/NAME), filled from the stub when
    absent or empty; WorkspaceError naming the files when it holds anything else."""
    if impl is None:
        work = (record / WORK_DIR).resolve()   # the tests and the grade run from the root
        work.mkdir()
    else:
        work = kata.folder if impl == "katas" else Path(impl).expanduser().resolve()
        if work.exists() and not work.is_dir():
            raise WorkspaceError(f"--impl {impl}: {work} is not a folder")
        if work.is_dir() and any(work.iterdir()):
            problems = differs_from_stub(work, stub)
            if problems:
                raise WorkspaceError(
                    f"{work} is not the stub, so the candidate would start on code already "
                    "there:\n  " + "\n  ".join(problems) + "\nDrop --impl (each session "
                    "gets a fresh workspace of its own), or restore the stub (git checkout "
                    f"-- katas/{kata.name}, or empty the folder), then start again.")
            return work
        work.mkdir(parents=True, exist_ok=True)
    for rel, text in stub.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text, encoding="utf-8")
    (work / "README.md").write_text(candidate_prompt(kata) + "\n", encoding="utf-8")
    return work


def workspace_diff(work: Path, stub: dict[str, str], name: str) -> str:
    """The workspace's code as a unified diff against the stub (every .py file)."""
    if not (work / "__init__.py").is_file():
        return f"(the workspace {work} holds no __init__.py)"
    parts = []
    for path in _code_files(work):
        rel = path.relative_to(work).as_posix()
        base = stub.get(rel)
        try:
            now = _read(path)
        except OSError:
            continue
        parts.append("".join(difflib.unified_diff(
            (base or "").splitlines(keepends=True), now.splitlines(keepends=True),
            fromfile=f"stub katas/{name}/{rel}" if base is not None else "/dev/null",
            tofile=f"final {rel}")))
    parts += [f"--- stub katas/{name}/{rel}\n+++ (deleted)\n" for rel in stub
              if not (work / rel).is_file()]
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts if p) or \
        "(no change from the stub)"


def load_problem(work: Path) -> str | None:
    """'SyntaxError at line N' (with the file) when the workspace's code does not compile."""
    for path in _code_files(work):
        try:
            compile(path.read_bytes(), str(path), "exec")
        except SyntaxError as exc:
            where = "" if path.name == "__init__.py" and path.parent == work else \
                f" in {path.relative_to(work)}"
            return f"{type(exc).__name__} at line {exc.lineno}{where}: {exc.msg}"
        except (OSError, ValueError) as exc:
            return f"{path.name} cannot be read: {exc}"
    return None


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


# -- the session's folder: session.json, events, marks ------------------------------------------

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
    _write_atomic(s.record / SESSION_FILE, json.dumps(info, indent=2) + "\n")


def rubric_data(kata: catalog.Kata) -> list[dict[str, Any]]:
    return [{"id": i.id, "points": i.points, "graded_by": i.graded_by,
             "description": i.description} for i in kata.rubric]


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One writer at a time on a session's folder: the candidate's session writing its
    report, marks from the interviewer view or ``mark``, and ``grade``."""
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
                        "sessions are in interviews/KATA-CANDIDATE-YYYYmmdd-HHMMSS/)")
    try:
        info = _read_json(path)
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
    data = _read_json(path)
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


def record_mark(folder: Path, item_id: str, value: str, note: str, by: str,
                where: str) -> dict[str, Any]:
    """Add one interviewer mark to a session's history (the latest mark of an item counts);
    if the report is written already, rewrite it. Validated before anything is written: a
    refused mark (MarkError) changes no file."""
    info = session_info(folder)
    item, points = check_mark(info["rubric"], item_id, value)
    try:
        by = check_name(by, "the interviewer's name")
    except ValueError as exc:
        raise MarkError(str(exc)) from None
    mark = {"item": item_id, "points": points, "max": item["points"], "note": note.strip(),
            "by": by, "where": where, "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    with _locked(folder):
        report = folder / "report.json"
        try:
            data = _read_json(report) if report.is_file() else None
            marks = read_marks_file(folder)
        except (OSError, ValueError) as exc:
            raise MarkError(f"{folder}'s report or marks cannot be read: {exc}") from None
        marks["history"].append(mark)
        if by not in marks["interviewers"]:
            marks["interviewers"].append(by)
        texts = {MARKS_FILE: json.dumps(marks, indent=2) + "\n"}
        if data is not None:
            data.update(marks_part(marks))
            texts.update(render_all(data))
        for name, text in texts.items():
            _write_atomic(folder / name, text)
    return mark


def join_as_interviewer(folder: Path, by: str) -> None:
    """Name the interviewer following a session (the report lists who interviewed)."""
    with _locked(folder):
        marks = read_marks_file(folder)
        if by in marks["interviewers"]:
            return
        marks["interviewers"].append(by)
        _write_atomic(folder / MARKS_FILE, json.dumps(marks, indent=2) + "\n")


def marks_part(marks: dict[str, Any]) -> dict[str, Any]:
    return {"marks": latest_marks(marks["history"]), "marks_history": marks["history"],
            "interviewers": marks["interviewers"]}


# -- a grade, as the reports keep it ------------------------------------------------------------

def first_line(message: str) -> str:
    """What a failure says, in one line: its first 'E' line (pytest's assertion), else its
    first line."""
    for line in message.splitlines():
        if line.startswith("E "):
            return " ".join(line[1:].split())
    return " ".join(message.strip().splitlines()[0].split()) if message.strip() else ""


def _clip(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def _first_failure(tests: list[Any]) -> str | None:
    bad = next((t for t in tests if t.outcome in ("failed", "not run")), None)
    if bad is None:
        return None
    return _clip(f"{bad.nodeid.split('::')[-1]}: {first_line(bad.message) or bad.outcome}")


def isolation_text(sandbox: dict[str, Any] | None) -> str:
    if sandbox is None:
        return "in-process (no sandbox)"
    parts = [label for key, label in (
        ("separate_uid", "own uid"), ("no_network", "no network"),
        ("hidden_repository", "repository hidden"), ("pid_namespace", "own pids"),
        ("seccomp", "seccomp")) if sandbox.get(key)]
    return str(sandbox.get("backend", "worker process")) + (f" ({', '.join(parts)})"
                                                            if parts else "")


def grade_summary(result: Any) -> dict[str, Any]:
    """What the reports keep of a grade (graders.grade.Grade): the score, the settings,
    and per item its test counts and first failures, public and hidden apart."""
    items = []
    for r in result.items:
        public = [t for t in r.tests if t.visibility != "hidden"]
        hidden = [t for t in r.tests if t.visibility == "hidden"]
        items.append({
            "id": r.item.id, "points": r.item.points, "score": r.score, "status": r.status,
            "tests": len(r.tests), "passed": sum(t.outcome == "passed" for t in r.tests),
            "public": {"tests": len(public),
                       "passed": sum(t.outcome == "passed" for t in public),
                       "first_failure": _first_failure(public)},
            "hidden": {"tests": len(hidden),
                       "passed": sum(t.outcome == "passed" for t in hidden),
                       "first_failure": _first_failure(hidden)}})
    return {"score": result.score, "max_score": result.max_score,
            "public_only": bool(getattr(result, "public_only", False)),
            "seconds": round(float(getattr(result, "seconds", 0.0)), 2),
            "settings": {"profile": result.profile,
                         "seed": "derandomized" if result.seed is None else result.seed,
                         "isolation": isolation_text(getattr(result, "sandbox", None)),
                         "implementation": str(result.impl)},
            "items": items}


def grade_workspace(kata_name: str, work: Path, profile: str) -> tuple[Any, float]:
    """Grade the workspace with the public and hidden tests (graders.grade.run)."""
    from graders import grade

    start = time.monotonic()
    result = grade.run(kata_name, str(work), profile=profile)
    return result, time.monotonic() - start


# -- the report ---------------------------------------------------------------------------------

def report_data(folder: Path, ended: str, time_used: float, graded: dict[str, Any] | None,
                grading_s: float) -> dict[str, Any]:
    """Everything the reports show, as plain data, from the session's folder: session.json,
    events.jsonl (runs, hints), marks.json and the workspace (report.json holds it;
    ``mark`` and ``grade`` re-render the reports from it)."""
    info = session_info(folder)
    events = read_events(folder)
    runs = [{"at": e.get("at", 0.0), "why": e.get("why", ""), "status": e.get("status", {}),
             "failing": e.get("failing", {}), "load_error": e.get("load_error")}
            for e in events if e.get("event") == "run"]
    first_pass: dict[str, float] = {}
    for r in runs:
        for item, st in r["status"].items():
            if st == "passed":
                first_pass.setdefault(item, r["at"])
    work = Path(info.get("workspace", folder / WORK_DIR))
    data = {
        "kata": info["kata"], "title": info.get("title", info["kata"]),
        "candidate": info.get("candidate", "candidate"),
        "started": info.get("started") or time.strftime(
            "%Y-%m-%d %H:%M:%S", time.localtime(info.get("started_wall", 0))),
        "minutes_allowed": info.get("minutes", 0), "time_used_s": round(time_used, 2),
        "grading_s": round(grading_s, 2), "ended": ended,
        "hints_allowed": info.get("hints_allowed", True),
        "hints_taken": [{"at": e.get("at", 0.0), "hint": e.get("hint", "")}
                        for e in events if e.get("event") == "hint"],
        "runs": runs, "first_pass": first_pass, "rubric": info["rubric"],
        "settings": {"profile": info.get("profile", "grade"),
                     "workspace": str(work), "commit": info.get("commit", "unknown"),
                     "stub": info.get("stub_origin", "")},
        "grade": graded, "diff": workspace_diff(work, _stub_of(info), info["kata"]),
        "folder": str(folder),
    }
    data.update(marks_part(read_marks_file(folder)))
    return data


def _stub_of(info: dict[str, Any]) -> dict[str, str]:
    """session.json's stub (an older one held __init__.py's text alone)."""
    stub = info.get("stub", {})
    return {"__init__.py": stub} if isinstance(stub, str) else dict(stub)


def totals(data: dict[str, Any]) -> dict[str, Any]:
    """The combined score: the tests' grade plus the interviewer's marks."""
    marks = data.get("marks", {})
    by_interviewer = [i for i in data["rubric"] if i["graded_by"] != "tests"]
    graded = data.get("grade")
    if graded and graded.get("public_only"):
        graded = None    # a candidate bundle's run of the public tests: not a score
    t_score = graded["score"] if graded else 0
    t_max = graded["max_score"] if graded else sum(i["points"] for i in data["rubric"]
                                                   if i["graded_by"] == "tests")
    i_score = sum(marks[i["id"]]["points"] for i in by_interviewer if i["id"] in marks)
    i_max = sum(i["points"] for i in by_interviewer)
    return {"tests_score": t_score, "tests_max": t_max, "tests_graded": graded is not None,
            "interviewer_score": i_score, "interviewer_max": i_max,
            "unmarked": [i["id"] for i in by_interviewer if i["id"] not in marks],
            "score": t_score + i_score, "max_score": t_max + i_max}


def _cell(text: Any) -> str:
    return str(text).replace("|", "/").replace("\n", " ")


def _mark_by(m: dict[str, Any]) -> str:
    return f"{m['by']}" + (f", {m['where']}" if m.get("where") else "")


def render_markdown(data: dict[str, Any], candidate: bool = False) -> str:
    """The report. ``candidate``: the copy for the candidate: no hidden test's name or
    message, no interviewer's note or marks' history."""
    tot = totals(data)
    marks = data.get("marks", {})
    settings = data.get("settings", {})
    graded = data.get("grade")
    gset = graded.get("settings", {}) if graded else {}
    interviewers = data.get("interviewers") or []
    md: list[str] = [
        f"# Interview report: {data.get('candidate', 'candidate')}, {data['title']} "
        f"({data['kata']})" + (" (the candidate's copy)" if candidate else ""), "",
        f"- candidate: {data.get('candidate', 'candidate')}"]
    if not candidate:
        md.append(f"- interviewer: {', '.join(interviewers) or 'none recorded'}")
    md += [
        f"- started: {data['started']}",
        f"- time allowed: {minutes_text(data['minutes_allowed'])}; time used: "
        f"{clock(data['time_used_s'])}"
        + (f" (the final grading's {seconds_text(data['grading_s'])} not counted)"
           if graded is not None and data.get("grading_s") else ""),
        f"- ended by: {data['ended']}",
        f"- hints: {'allowed' if data['hints_allowed'] else 'off'}; taken: "
        f"{len(data['hints_taken'])}",
        f"- watch runs of the public tests: {len(data['runs'])}",
        f"- settings: hypothesis profile {gset.get('profile', settings.get('profile', '?'))}"
        f", seed {gset.get('seed', 'derandomized')}, isolation "
        f"{gset.get('isolation', NOT_GRADED)}, implementation "
        f"{gset.get('implementation', settings.get('workspace', '?'))}, commit "
        f"{settings.get('commit', 'unknown')}"]
    if not candidate:
        md.append(f"- session folder: {data.get('folder', '?')}")
    md.append("")
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
        why = ("public tests only: a candidate bundle holds no hidden tests"
               if graded is not None else f"the session ended by: {data['ended']}")
        md.append(f"## Score: not graded by the tests ({why}; "
                  f"nox -s interview -- grade {data.get('folder', 'DIR')} grades it)"
                  + (f"; {interviewer}" if tot["interviewer_max"] else ""))
    md += ["", "| rubric item | graded by | points | status | tests passed "
           "| first passed (public tests) | interviewer's note |",
           "|---|---|---|---|---|---|---|"]
    items = {r["id"]: r for r in graded["items"]} if graded else {}
    for item in data["rubric"]:
        if item["graded_by"] == "tests":
            r = items.get(item["id"])
            first = data["first_pass"].get(item["id"])
            score = f"{r['score']}/{item['points']}" if r else f"-/{item['points']}"
            counts = (f"{r['passed']}/{r['tests']} (public {r['public']['passed']}/"
                      f"{r['public']['tests']}, hidden {r['hidden']['passed']}/"
                      f"{r['hidden']['tests']})") if r else "-"
            md.append(f"| {item['id']} | tests | {score} | {r['status'] if r else NOT_GRADED}"
                      f" | {counts} | {clock(first) if first is not None else '-'} | |")
        else:
            m = marks.get(item["id"])
            score = f"{points_text(m['points'])}/{item['points']}" if m else \
                f"-/{item['points']}"
            status = (f"marked by {_mark_by(m)}" if not candidate else "marked") if m else \
                "not marked yet"
            note = "" if candidate or not m else _cell(m["note"])
            md.append(f"| {item['id']} | interviewer | {score} | {status} | - | - | {note} |")
    failed = [r for r in (graded["items"] if graded else []) if r["status"] == "failed"]
    if failed:
        md += ["", "## First failures", ""]
        for r in failed:
            pub, hid = r["public"]["first_failure"], r["hidden"]["first_failure"]
            if pub:
                md.append(f"- {r['id']}, public: {pub}")
            if hid:
                md.append(f"- {r['id']}, hidden: " + (
                    "failed by hidden tests (their detail is not shown)" if candidate else hid))
    md += ["", "## Hints taken", ""]
    md += [f"- {clock(h['at'])}: {h['hint']}" for h in data["hints_taken"]] or ["- none"]
    if not candidate:
        md += ["", "## Interviewer-graded items (checklist)", ""]
        by_interviewer = [i for i in data["rubric"] if i["graded_by"] != "tests"]
        for i in by_interviewer:
            m = marks.get(i["id"])
            if m:
                md.append(f"- [x] {i['id']} ({points_text(m['points'])}/{i['points']} points, "
                          f"{_mark_by(m)}, {m['when']}): {i['description']}"
                          + (f" Note: {m['note']}" if m["note"] else ""))
            else:
                md.append(f"- [ ] {i['id']} ({i['points']} points): {i['description']}")
        if not by_interviewer:
            md.append("- none for this kata")
        history = data.get("marks_history", [])
        md += ["", "## Marks, in the order given", ""]
        for n, m in enumerate(history):
            later = any(x["item"] == m["item"] for x in history[n + 1:])
            md.append(f"- {m['when']} {m['item']} {points_text(m['points'])}/{m['max']} by "
                      f"{_mark_by(m)}" + (f": {m['note']}" if m["note"] else "")
                      + (" (replaced by a later mark)" if later else " (counts)"))
        if not history:
            md.append("- none")
    md += ["", "## Timeline of watch runs", ""]
    md += [f"- {clock(r['at'])} {r['why']}: "
           + (f"does not load: {r['load_error']}" if r.get("load_error") else
              ", ".join(f"{k} {v}" for k, v in r["status"].items()) or "no tests")
           for r in data["runs"]] or ["- none"]
    md += ["", "## Final code (diff against the stub)", "", "```diff", data["diff"].rstrip("\n"),
           "```", ""]
    return "\n".join(md)


def render_all(data: dict[str, Any]) -> dict[str, str]:
    """The hiring team's report.md, .html, .json and the candidate's copy (.md, .html)."""
    data = dict(data, totals=totals(data))
    full = render_markdown(data)
    mine = render_markdown(data, candidate=True)
    title = f"{data.get('candidate', 'candidate')}: {data['title']}"
    return {"report.md": full, "report.html": markdown_to_html(full, title),
            "report.json": json.dumps(data, indent=2) + "\n",
            "candidate-report.md": mine, "candidate-report.html": markdown_to_html(mine, title)}


def write_report(folder: Path, ended: str, time_used: float, graded: dict[str, Any] | None,
                 grading_s: float = 0.0) -> Path:
    """Write every report file of a session's folder, with the marks given so far."""
    with _locked(folder):
        data = report_data(folder, ended, time_used, graded, grading_s)
        for name, text in render_all(data).items():
            _write_atomic(folder / name, text)
    return folder


HTML_STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}"
              "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.2em .6em}"
              "pre{background:#f6f8fa;padding:1em;overflow:auto}"
              ".add{background:#e6ffec;color:#116329}.del{background:#ffebe9;color:#82071e}"
              ".hunk{color:#0550ae;background:#ddf4ff}.file{color:#57606a;font-weight:bold}")


def _diff_line(line: str) -> str:
    """One line of a unified diff, classed for colour: added, removed, hunk, file."""
    kind = ("file" if line.startswith(("+++", "---")) else "add" if line.startswith("+")
            else "del" if line.startswith("-") else "hunk" if line.startswith("@@") else "")
    body = html.escape(line)
    return f"<span class='{kind}'>{body}</span>" if kind else f"<span>{body}</span>"


def markdown_to_html(text: str, title: str) -> str:
    """A small Markdown subset to HTML: headings, lists, tables, code blocks (a ```diff
    block coloured line by line; its lines stay apart without the stylesheet, pasted into
    an email or a tracking system)."""
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
           f"</title><style>{HTML_STYLE}</style></head><body>"]
    code: str | None = None         # the open code block's language ("" for none)
    block: list[str] = []
    in_list = in_table = False

    def close_code() -> None:
        if code == "diff":   # inline spans, one per line, newlines between them
            out.append("<pre class='diff'>" + "\n".join(_diff_line(x) for x in block)
                       + "</pre>")
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


def total_line(folder: Path) -> str:
    """The report's combined total, in one line."""
    try:
        tot = totals(_read_json(folder / "report.json"))
    except (OSError, ValueError, KeyError) as exc:
        return f"(the report's total cannot be read: {exc})"
    return (f"total: {points_text(tot['score'])}/{tot['max_score']} (tests "
            f"{tot['tests_score']}/{tot['tests_max']}"
            + ("" if tot["tests_graded"] else f", {NOT_GRADED}")
            + f" + interviewer {points_text(tot['interviewer_score'])}/{tot['interviewer_max']}"
            + (f"; not marked yet: {', '.join(tot['unmarked'])}" if tot["unmarked"] else "")
            + ")")


# -- the candidate's session --------------------------------------------------------------------

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


IMPORT_FAILURE = re.compile(r"failed to import: ([^\n]*)|(called exit\(.*?\) while being "
                            r"imported)")


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
            failing.setdefault(item, _clip(f"{e['nodeid'].split('::')[-1]}: "
                                           f"{first_line(message) or 'failed'}"))
            said = "\n".join(x[1:].strip() for x in message.splitlines() if x.startswith("E "))
            found = IMPORT_FAILURE.search(said)   # what it says, not the source it quotes
            imports.append(_clip((found.group(1) or found.group(2)).strip()) if found else None)
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
    return {str(p): p.stat().st_mtime for p in _code_files(folder)}


# -- the interviewer's companion view -----------------------------------------------------------

def live_sessions(out: Path, kata: str, skip: set[Path] | None = None) -> list[Path]:
    """This kata's sessions under ``out`` still running, newest first."""
    found = []
    for folder in out.glob(f"{kata}-*"):
        try:
            info = _read_json(folder / SESSION_FILE)
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
                            f"{'':>7}  by {_mark_by(m)}" + (f": {m['note']}" if m["note"]
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


def mark_at_prompt(folder: Path | None, line: str, by: str, where: str) -> None:
    if folder is None:
        print("no session to mark yet")
        return
    try:
        item, value, note = parse_mark_command(line)
        mark = record_mark(folder, item, value, note, by, where)
    except MarkError as exc:
        print(f"mark refused: {exc}", flush=True)
        return
    print(f"marked {item}: {points_text(mark['points'])}/{mark['max']}"
          + (f" ({mark['note']})" if mark["note"] else ""), flush=True)
    print(interviewer_items(folder), flush=True)
    if (folder / "report.json").is_file():
        print(f"report rewritten; {total_line(folder)}", flush=True)


def interviewer_items(folder: Path) -> str:
    """The interviewer-graded items' current marks, one line."""
    info = session_info(folder)
    marks = read_marks(folder)
    return "interviewer's items now: " + ", ".join(
        f"{i['id']} {points_text(marks[i['id']]['points']) if i['id'] in marks else '-'}"
        f"/{i['points']}" for i in info["rubric"] if i["graded_by"] != "tests")


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
                      f"by {_mark_by(m)}" + (f": {m['note']}" if m["note"] else ""))
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


# -- after the session: mark, grade, summary ----------------------------------------------------

def mark_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="nox -s interview -- mark",
        description="Record the interviewer's mark for an interviewer-graded item of an "
                    "interview (finished or running); the latest mark of an item counts, "
                    "every one is kept; a written report is rewritten.")
    parser.add_argument("folder", type=Path, help="the interview's folder, interviews/KATA-...")
    parser.add_argument("item", help="the rubric item (graded_by = \"interviewer\")")
    parser.add_argument("points", help="from 0 to the item's points")
    parser.add_argument("--note", default="", help="what the candidate said, in a sentence")
    parser.add_argument("--by", default="interviewer", help="who marks (default: interviewer)")
    args = parser.parse_args(argv)
    try:
        mark = record_mark(args.folder, args.item, args.points, args.note, args.by,
                           "after the session")
        info = session_info(args.folder)
        data = _read_json(args.folder / "report.json") \
            if (args.folder / "report.json").is_file() else None
    except (MarkError, OSError, ValueError) as exc:
        print(f"interview mark: {exc}", file=sys.stderr)
        return 2
    print(f"marked {args.item}: {points_text(mark['points'])}/{mark['max']} by {mark['by']}")
    if data is not None:
        tot = data["totals"]
        print(f"report rewritten: {args.folder / 'report.md'}; total "
              f"{points_text(tot['score'])}/{tot['max_score']}"
              + (f" (not marked yet: {', '.join(tot['unmarked'])})" if tot["unmarked"] else ""))
    elif is_running(args.folder, info):
        print("the session is still running: its report will include the mark")
    else:
        print("the session ended without a report (its process is gone): nox -s interview "
              f"-- grade {args.folder} writes one, with this mark")
    return 0


def grade_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="nox -s interview -- grade",
        description="Grade the workspace of a session that ended without a submission "
                    "(quit, Ctrl-C, a closed terminal, a killed process), or one run in a "
                    "candidate bundle (public tests only there), with the public and hidden "
                    "tests, and write its reports, keeping how it ended, its time and marks.")
    parser.add_argument("folder", type=Path, help="the interview's folder, interviews/KATA-...")
    parser.add_argument("--profile", default=None, choices=("grade", "selftest", "kata"),
                        help="Hypothesis profile (default: the session's own)")
    args = parser.parse_args(argv)
    from graders import grade

    folder = args.folder
    try:
        info = session_info(folder)
        catalog.load(info["kata"])
        old = _read_json(folder / "report.json") if (folder / "report.json").is_file() \
            else None
    except (MarkError, catalog.CatalogError, OSError, ValueError) as exc:
        print(f"interview grade: {exc}", file=sys.stderr)
        return 2
    if old is None and is_running(folder, info):
        print(f"interview grade: the session is still running (process {info.get('pid')}): "
              "it is graded when the candidate submits", file=sys.stderr)
        return 2
    if old is not None and old.get("grade") is not None \
            and not old["grade"].get("public_only"):
        print(f"interview grade: {folder} is graded already ({old['ended']}): "
              f"{total_line(folder)}; nothing changed", file=sys.stderr)
        return 2
    if not catalog.load(info["kata"]).hidden_tests.is_dir():
        print(f"interview grade: the hidden tests of {info['kata']} are not here (a candidate "
              "bundle): grade the session from the full repository", file=sys.stderr)
        return 2
    work = Path(info.get("workspace", folder / WORK_DIR))
    if not work.is_dir() and (folder / WORK_DIR).is_dir():
        work = folder / WORK_DIR       # the session's folder was moved or copied here
    if not work.is_dir():
        print(f"interview grade: the session's workspace {work} is gone", file=sys.stderr)
        return 2
    if old is not None:   # quit, Ctrl-C, end of input; or a bundle's public-only grade
        ended, used = old["ended"], float(old["time_used_s"])
    else:   # the process died before writing anything: its log says how far it got
        events = read_events(folder)
        used = min(max((float(e.get("at", 0)) for e in events), default=0.0),
                   float(info.get("minutes", 0)) * 60)
        ended = "the session's process ended without a report"
    print(f"grading {work} ({info['kata']}, {info.get('candidate', 'candidate')})...",
          flush=True)
    try:
        result, seconds = grade_workspace(info["kata"], work,
                                          args.profile or info.get("profile", "grade"))
    except grade.GradeError as exc:
        print(f"interview grade: grading failed: {exc}", file=sys.stderr)
        return 2
    print(grade.table(result))
    summary = grade_summary(result)
    with open(folder / EVENTS_FILE, "a", encoding="utf-8") as f:   # for a view following it
        f.write(json.dumps({"event": "graded", "at": round(used, 2), "afterwards": True,
                            "summary": summary, "score": result.score,
                            "max_score": result.max_score}) + "\n")
    write_report(folder, f"{ended}; graded afterwards", used, summary, seconds)
    print(f"\nreport: {folder / 'report.md'}; {total_line(folder)}")
    return 0


SUMMARY_COLUMNS = ("candidate", "kata", "date", "tests", "marks", "total", "hints",
                   "time used", "ended", "folder")


def summary_rows(root: Path) -> list[dict[str, str]]:
    """One row per session under ``root`` (its own folders, or ``root`` itself)."""
    folders = [root] if (root / SESSION_FILE).is_file() else \
        sorted(p for p in root.iterdir() if (p / SESSION_FILE).is_file())
    rows = []
    for folder in folders:
        try:
            info = session_info(folder)
            data = _read_json(folder / "report.json") if (folder / "report.json").is_file() \
                else None
        except (MarkError, OSError, ValueError) as exc:
            rows.append({"candidate": "?", "kata": "?", "date": "", "tests": "",
                         "marks": "", "total": "", "hints": "", "time used": "",
                         "ended": f"unreadable: {exc}", "folder": str(folder)})
            continue
        if data is None:
            data = report_data(folder, "running" if is_running(folder, info)
                               else "no report (the process is gone)", 0.0, None, 0.0)
            used = max((float(e.get("at", 0)) for e in read_events(folder)), default=0.0)
            data["time_used_s"] = min(used, float(info.get("minutes", 0)) * 60)
        tot = totals(data)
        rows.append({
            "candidate": data.get("candidate", "candidate"), "kata": data["kata"],
            "date": data["started"],
            "tests": (f"{tot['tests_score']}/{tot['tests_max']}" if tot["tests_graded"]
                      else f"{NOT_GRADED}/{tot['tests_max']}"),
            "marks": (f"{points_text(tot['interviewer_score'])}/{tot['interviewer_max']}"
                      + (f" ({len(tot['unmarked'])} unmarked)" if tot["unmarked"] else "")
                      if tot["interviewer_max"] else "-"),
            "total": f"{points_text(tot['score'])}/{tot['max_score']}",
            "hints": str(len(data["hints_taken"])),
            "time used": f"{clock(data['time_used_s'])} of {minutes_text(data['minutes_allowed'])}",
            "ended": data["ended"], "folder": folder.name})
    return rows


def _csv_safe(value: str) -> str:
    """A cell a spreadsheet shows as text, never runs as a formula."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def summary_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="nox -s interview -- summary",
        description="One table over every session in a folder (default interviews/), and "
                    "the same as CSV in DIR/summary.csv.")
    parser.add_argument("folder", type=Path, nargs="?", default=catalog.ROOT / "interviews")
    parser.add_argument("--csv", type=Path, default=None,
                        help="where to write the CSV (default: FOLDER/summary.csv)")
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        print(f"interview summary: {args.folder} is not a folder", file=sys.stderr)
        return 2
    rows = summary_rows(args.folder)
    if not rows:
        print(f"interview summary: no sessions in {args.folder}", file=sys.stderr)
        return 2
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in SUMMARY_COLUMNS}
    print("  ".join(c.ljust(widths[c]) for c in SUMMARY_COLUMNS).rstrip())
    print("  ".join("-" * widths[c] for c in SUMMARY_COLUMNS))
    for r in rows:
        print("  ".join(r[c].ljust(widths[c]) for c in SUMMARY_COLUMNS).rstrip())
    path = args.csv or args.folder / SUMMARY_FILE
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(SUMMARY_COLUMNS))
    writer.writeheader()
    for r in rows:
        writer.writerow({k: _csv_safe(v) for k, v in r.items()})
    _write_atomic(path, buffer.getvalue())
    print(f"\n{len(rows)} sessions; CSV: {path}")
    return 0


# -- command line -------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"mark": mark_main, "grade": grade_main, "summary": summary_main}
    if argv and argv[0] in commands:
        return commands[argv[0]](argv[1:])
    parser = argparse.ArgumentParser(
        prog="nox -s interview --",
        epilog="afterwards: mark DIR ITEM POINTS [--note T] [--by NAME]; grade DIR (a session "
               "that ended without a submission); summary [DIR] (a table and CSV over all "
               "sessions). docs/INTERVIEW.md is the guide.")
    parser.add_argument("kata")
    parser.add_argument("--candidate", default="candidate",
                        help="the candidate's name: it names the session's folder and reports")
    parser.add_argument("--minutes", type=float, default=None)
    parser.add_argument("--no-hints", action="store_true")
    parser.add_argument("--interviewer", action="store_true",
                        help="the interviewer's view (never show it to the candidate): the "
                             "notes, then the candidate's live session, and marks")
    parser.add_argument("--by", default="interviewer",
                        help="with --interviewer: your name, on your marks and in the report")
    parser.add_argument("--session", type=Path, default=None,
                        help="with --interviewer: the session folder to follow (default: "
                             "the newest running one of this kata under --out, or the next)")
    parser.add_argument("--impl", default=None,
                        help="the folder the candidate edits (default: a fresh workspace in "
                             "the session's folder; 'katas' for katas/NAME); it must hold "
                             "the stub or nothing")
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
            ("--impl", args.impl is not None), ("--profile", args.profile is not None),
            ("--candidate", args.candidate != "candidate")) if given]
        if misplaced:
            print(f"interview: {', '.join(misplaced)} set the candidate's session: give them "
                  f"on the candidate's command (nox -s interview -- {kata.name} "
                  f"{' '.join(misplaced)} ...); --interviewer follows that session as it is",
                  file=sys.stderr)
            return 2
        try:
            by = check_name(args.by, "--by")
        except ValueError as exc:
            print(f"interview: {exc}", file=sys.stderr)
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
        return companion(kata, args.out, args.session, by)
    for flag, given in (("--session", args.session is not None),
                        ("--by", args.by != "interviewer")):
        if given:
            print(f"interview: {flag} goes with --interviewer", file=sys.stderr)
            return 2
    return run_session(kata, args)


if __name__ == "__main__":
    sys.exit(main())
