"""The interviewer's marks: checked, kept with their whole history (who, when, where, value,
note), the latest of each item counting."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from graders.interview.record import (MarkError, MARKS_FILE, check_name, locked, marks_part,
                                      points_text, read_json, read_marks, read_marks_file,
                                      session_info, write_atomic)
from graders.interview.report import render_all, total_line


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
    with locked(folder):
        report = folder / "report.json"
        try:
            data = read_json(report) if report.is_file() else None
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
            write_atomic(folder / name, text)
    return mark


def join_as_interviewer(folder: Path, by: str) -> None:
    """Name the interviewer following a session (the report lists who interviewed)."""
    with locked(folder):
        marks = read_marks_file(folder)
        if by in marks["interviewers"]:
            return
        marks["interviewers"].append(by)
        write_atomic(folder / MARKS_FILE, json.dumps(marks, indent=2) + "\n")


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
