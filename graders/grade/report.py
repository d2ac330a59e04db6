"""The reports of a grade: the terminal table, results.json (Gradescope's autograder schema)
and junit.xml."""

from __future__ import annotations

import json
import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from graders.grade.model import (LOAD_POINTER, MESSAGE_CHARS, MISSING_POINTER, NOT_IMPLEMENTED,
                                 Grade, ItemResult)


def table(grade: Grade, candidate: bool = False) -> str:
    """The terminal table. ``candidate``: the version safe to show a candidate, in which
    a failed item names only its first failing public test (never a hidden one)."""
    kata = grade.kata
    seed = "derandomized" if grade.seed is None else str(grade.seed)
    lines = [f"{kata.title} ({kata.name})",
             f"implementation: {grade.impl}   hypothesis: {grade.profile}, seed {seed}"]
    if grade.load_error:
        lines += ["", *(f"  {line}" for line in grade.load_error.splitlines())]
    lines += ["", f"  {'rubric item':<26}{'points':>8}  {'status':<11} {'tests':>7}  "
              "first failure"]
    for r in grade.items:
        passed = sum(t.outcome == "passed" for t in r.tests)
        first = ""
        if r.status == "failed":
            bad = next((t for t in r.tests if t.outcome in ("failed", "not run")
                        and (not candidate or t.visibility != "hidden")), None)
            if bad is None:
                first = _clip(hidden_failure(r, grade.hidden_detail if candidate else "rules"),
                              FIRST_COLUMN)
            elif bad.message in (LOAD_POINTER, MISSING_POINTER):
                first = "see the message above the table"
            else:
                msg = " ".join(_headline(bad.message).split())
                first = _clip(f"{bad.nodeid.split('::')[-1]}: {msg}", FIRST_COLUMN)
        elif r.status in ("skipped", "no tests"):
            first = _clip(" ".join(item_note(r, candidate).split()), FIRST_COLUMN)
        if r.note and r.status not in ("skipped", "no tests"):
            first = _clip(f"{first}  [{r.note}]" if first else r.note, FIRST_COLUMN)
        points = f"{r.score:>4}/{r.item.points:<3}" if r.status != "skipped" else \
            f"{'-':>4}/{r.item.points:<3}"
        lines.append(f"  {r.item.id:<26}{points}  {status_label(r):<11} "
                     f"{passed:>3}/{len(r.tests):<3}  {first}")
    for item in kata.rubric:
        if item.graded_by == "interviewer":
            lines.append(f"  {item.id:<26}{'-':>4}/{item.points:<3}  {'--':<11} {'':>7}  "
                         "graded by the interviewer")
    if grade.sandbox is not None:
        s = grade.sandbox
        parts = [label for key, label in (
            ("separate_uid", "own uid"), ("no_network", "no network"),
            ("hidden_repository", "repository hidden"), ("pid_namespace", "own pids"),
            ("seccomp", "seccomp")) if s.get(key)]
        lines += ["", f"  isolation: {s.get('backend', 'worker process')}"
                  + (f" ({', '.join(parts)})" if parts else "")
                  + "".join(f"\n    lacks {n}" for n in s.get("lacks", []))
                  + "".join(f"\n    note: {n}" for n in s.get("notes", []))]
    counts = (f"({len(grade.tests)} tests, {grade.seconds:.1f} s"
              + (f", {grade.restarts} test-process restarts" if grade.restarts else "") + ")")
    if grade.public_only:
        lines += ["", f"  public tests only: {grade.score}/{grade.max_score} rubric points pass "
                  f"them{_not_counted(grade)}   {counts}",
                  "  NOT A SCORE: the hidden tests that decide a grade are not here "
                  "(a candidate bundle)."]
    else:
        lines += ["", f"  score: {grade.score}/{grade.max_score}{_not_counted(grade)}   {counts}"]
    uncounted = [r for r in grade.items if r.status == "skipped"]
    if uncounted:
        lines += ["", "  not counted (out of the maximum, not lost):",
                  *(f"    {r.item.id}: {item_note(r, candidate)[len('not counted: '):]}"
                    for r in uncounted)]
    details = failure_details(grade, candidate)
    if details:
        lines += ["", "  first failure of each failed item, in full:", *details]
    return "\n".join(lines)


DETAIL_LINES = 60


def failure_details(grade: Grade, candidate: bool = False) -> list[str]:
    """Below the table: each failed rubric item's first failure, whole (the table's column
    holds only its opening words). ``candidate``: public tests only; an item failed by
    hidden tests alone says so and nothing more (their names, sources and messages stay
    in junit.xml and results.json's hidden entries)."""
    lines: list[str] = []
    for r in grade.items:
        if r.status != "failed":
            continue
        bad = next((t for t in r.tests if t.outcome in ("failed", "not run")
                    and (not candidate or t.visibility != "hidden")), None)
        if bad is not None and bad.message in (LOAD_POINTER, MISSING_POINTER):
            continue    # said once, above the table
        lines.append("")
        if bad is None:
            lines.append(f"  {r.item.id}: "
                         + hidden_failure(r, grade.hidden_detail if candidate else "rules"))
            if r.note:
                lines.append(f"    ({r.note})")
            continue
        where = bad.nodeid if not candidate or bad.visibility != "hidden" else ""
        lines.append(f"  {r.item.id}: {where}")
        if r.note:
            lines.append(f"    ({r.note})")
        body = _explanation(bad.message).splitlines() or [bad.outcome]
        if len(body) > DETAIL_LINES:
            rest = len(body) - DETAIL_LINES
            body = body[:DETAIL_LINES] + [f"... {rest} more lines"
                                          + ("" if candidate else " in junit.xml")]
        lines += [f"    {line}".rstrip() for line in body]
    return lines


def _explanation(message: str) -> str:
    """What a pytest failure says went wrong: its 'E' lines (the assertion's message, the
    comparison, Hypothesis's failing example) and the line that closes them (file:line:
    exception), without the test's source. A message with no 'E' lines (not implemented
    yet, the harness's own verdicts) is whole already."""
    lines = message.splitlines()
    picked: list[str] = []
    closing = ""
    for n, line in enumerate(lines):
        if line.startswith("E ") or line == "E":
            picked.append(line[2:])
        elif line.startswith("... [") and line.endswith("characters cut] ..."):
            picked.append(line)   # the plugin's cut of an overlong message, kept visible
        elif picked and not closing and line.strip() and not line.startswith(" ") \
                and ": " in line and (n == 0 or not lines[n - 1].strip()
                                      or lines[n - 1].startswith("E")):
            closing = line   # "path.py:64: AssertionError" after the block
    if not picked:
        return message.strip()
    return "\n".join([textwrap.dedent("\n".join(picked)).strip(), closing]).strip()


FIRST_COLUMN = 90   # characters of the table's "first failure" column; the rest is below


def _clip(text: str, width: int) -> str:
    """``text`` within ``width`` characters; a cut one ends in "..." (read on below)."""
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def _headline(message: str) -> str:
    """The line of a pytest failure that says what went wrong (its first 'E' line)."""
    for line in message.splitlines():
        if line.startswith("E "):
            return line[1:].strip()
    return message.strip().splitlines()[0] if message.strip() else ""


HIDDEN_VISIBILITIES = ("hidden", "after_published")
HIDDEN_DETAILS = ("rules", "none")


def status_label(r: ItemResult) -> str:
    """An item's status as the table shows it: a skipped item is not counted, not lost."""
    return "NOT COUNTED" if r.status == "skipped" else r.status.upper()


def item_note(r: ItemResult, candidate: bool = False) -> str:
    """One line about an item that has no pass or fail of its own to show: why it is not
    counted (skipped: no data to grade it on this machine, a check this place cannot run),
    or why no test scores it. Other notes about an item (which fixture graded it, say)
    belong here too. ``candidate``: a hidden test's skip reason is not shown."""
    if r.status == "skipped":
        return f"not counted: {_skip_reason(r, candidate)}"
    if r.status == "no tests":
        return r.message
    return r.note   # what graded it (a hardware item's data), when its tests say


def _skip_reason(r: ItemResult, candidate: bool = False) -> str:
    """Why the item's tests skipped (the first skip's reason; with ``candidate``, a public
    test's only)."""
    for t in r.tests:
        if t.outcome == "skipped" and t.message.strip() and \
                not (candidate and t.visibility == "hidden"):
            text = " ".join(t.message.strip().splitlines()[-1].split())
            return re.sub(r"^Skipped:\s*", "", text) or "its tests skipped here"
    return "no data or device to grade it on this machine"


def _not_counted(grade: Grade) -> str:
    n = grade.not_counted
    return (f" ({n} point{'s' if n != 1 else ''} not counted: "
            f"{', '.join(r.item.id for r in grade.items if r.status == 'skipped')})") if n else ""


def hidden_failure(r: ItemResult, detail: str = "rules") -> str:
    """What a candidate may learn of an item failed by hidden tests: with ``detail``
    "rules", the labels of the prompt's rules those tests cite (plugin.rules_of), never a
    test's name, input or message; with "none", only that hidden tests failed."""
    rules: list[str] = []
    for t in r.tests:
        if t.visibility == "hidden" and t.outcome in ("failed", "not run"):
            rules += [x for x in t.rules if x not in rules]
    if detail != "rules" or not rules:
        return "failed by hidden tests (their detail is not shown)"
    quoted = ", ".join(f"'{x}'" for x in rules)
    return (f"failed by hidden tests of rule{'s' if len(rules) > 1 else ''} {quoted} "
            "(see the prompt's Rules)")


def _candidate_message(r: ItemResult, hidden_detail: str = "rules") -> str:
    """What a candidate may read about one rubric item: pass or fail, and the failures of
    public tests only. A hidden test's name, path, source or message never appears."""
    public = [t for t in r.tests if t.visibility != "hidden"]
    failed = [t for t in public if t.outcome in ("failed", "not run")]
    hidden_failed = any(t.outcome in ("failed", "not run") for t in r.tests
                        if t.visibility == "hidden")
    if r.status == "passed":
        return f"{len(r.tests)} tests passed"
    if r.status in ("no tests", "skipped"):
        return item_note(r, candidate=True)
    pointers = (LOAD_POINTER, MISSING_POINTER)
    if any(t.message in pointers for t in r.tests) and \
            all(t.message in pointers for t in r.tests if t.outcome in ("failed", "not run")):
        return next(t.message for t in r.tests if t.message in pointers)
    bad = [t for t in r.tests if t.outcome in ("failed", "not run")]
    if failed and all(t.message.startswith(NOT_IMPLEMENTED) for t in bad):
        return failed[0].message.strip()   # a stub: one line says it, for every test
    lines = []
    if failed:
        first = failed[0]
        lines.append(f"{len(failed)} of {len(public)} public tests failed; first: {first.nodeid}\n"
                     + first.message[:MESSAGE_CHARS])
    if hidden_failed:
        lines.append(hidden_failure(r, hidden_detail))
    return "\n".join(lines)


def results_json(grade: Grade, hidden_visibility: str = "hidden") -> dict[str, Any]:
    """The Gradescope autograder schema: one entry per rubric item (carrying the points),
    then one per test (no points).

    Safe to show a candidate as it is: every entry with visibility "visible" (and the
    top-level "output") carries only the rubric item, its points, pass or fail, and the
    failures of public tests. Hidden tests' names, paths, sources and messages appear only
    in their own entries, with ``hidden_visibility`` ("hidden", or "after_published" for
    teams that show them once grades are published)."""
    if hidden_visibility not in HIDDEN_VISIBILITIES:
        raise ValueError(f"hidden_visibility must be one of {HIDDEN_VISIBILITIES}")
    tests: list[dict[str, Any]] = []
    for n, r in enumerate(grade.items, 1):
        entry: dict[str, Any] = {
            "name": f"rubric: {r.item.id}", "number": str(n), "score": r.score,
            "max_score": r.item.points, "status": "passed" if r.status == "passed" else "failed",
            "output": f"{r.item.description}\n{_candidate_message(r, grade.hidden_detail)}"
                      + (f"\n{r.note}" if r.note and r.status != "skipped" else ""),
            "visibility": "visible", "tags": ["rubric", r.item.id]}
        if r.status == "skipped":
            # not counted: neither points nor a status (Gradescope's schema has only
            # passed and failed); the output says why
            for key in ("score", "max_score", "status"):
                del entry[key]
            entry["tags"].append("not counted")
        tests.append(entry)
    for t in grade.tests:
        hidden = t.visibility == "hidden"
        entry = {"name": t.nodeid, "score": 0, "max_score": 0,
                 "status": "passed" if t.outcome == "passed" else "failed",
                 "output": t.message[:MESSAGE_CHARS],
                 "visibility": hidden_visibility if hidden else "visible",
                 "tags": [t.rubric, t.visibility, t.outcome]}
        if t.outcome == "skipped":
            for key in ("score", "max_score", "status"):
                del entry[key]
            entry["output"] = f"not counted (skipped): {t.message[:MESSAGE_CHARS]}"
        tests.append(entry)
    return {
        "score": grade.score,
        "execution_time": round(grade.seconds, 2),
        "output": table(grade, candidate=True),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "kata": grade.kata.name,
            "implementation": grade.impl,
            "hypothesis_profile": grade.profile,
            "seed": grade.seed,
            "restarts": grade.restarts,
            "public_only": grade.public_only,
            # Gradescope's schema has no top-level maximum: the assignment's points are set
            # in Gradescope; these are the grade's own
            "max_score": grade.max_score,
            "not_counted": grade.not_counted,
            "load_error": grade.load_error,
            "hidden_detail": grade.hidden_detail,
            "isolation": grade.sandbox or {"process": False,
                                           "notes": ["in-process: the submission ran inside "
                                                     "the test process (--in-process)"]},
            "rubric": {r.item.id: {"status": r.status, "score": r.score,
                                   "max_score": r.item.points,
                                   **({"note": item_note(r, True)} if item_note(r) else {})}
                       for r in grade.items},
            "interviewer_items": [i.id for i in grade.kata.rubric if i.graded_by == "interviewer"],
        },
    }


def junit_xml(grade: Grade) -> ET.ElementTree[ET.Element]:
    failures = sum(t.outcome in ("failed", "not run") for t in grade.tests)
    skipped = sum(t.outcome == "skipped" for t in grade.tests)
    total_time = f"{sum(t.duration for t in grade.tests):.3f}"
    root = ET.Element("testsuites", name="inference-katas", tests=str(len(grade.tests)),
                      failures=str(failures), errors="0", time=total_time)
    suite = ET.SubElement(root, "testsuite", name=grade.kata.name, tests=str(len(grade.tests)),
                          failures=str(failures), errors="0", skipped=str(skipped),
                          time=total_time)
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="score", value=str(grade.score))
    ET.SubElement(props, "property", name="max_score", value=str(grade.max_score))
    ET.SubElement(props, "property", name="seed",
                  value="derandomized" if grade.seed is None else str(grade.seed))
    for r in grade.items:
        ET.SubElement(props, "property", name=f"rubric.{r.item.id}",
                      value=f"{r.status} {r.score}/{r.item.points}")
    for t in grade.tests:
        case = ET.SubElement(suite, "testcase", classname=f"{grade.kata.name}.{t.rubric}",
                             name=t.nodeid, time=f"{t.duration:.3f}")
        if t.outcome in ("failed", "not run"):
            first = t.message.strip().splitlines()[-1][:200] if t.message.strip() else t.outcome
            fail = ET.SubElement(case, "failure", message=first)
            fail.text = t.message[:MESSAGE_CHARS]
        elif t.outcome == "skipped":
            ET.SubElement(case, "skipped", message=t.message[:200])
    return ET.ElementTree(root)


def write_reports(grade: Grade, out: Path, hidden_visibility: str = "hidden") -> None:
    """results.json (safe to show a candidate) and junit.xml (full detail, for the
    hiring team only) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    data = results_json(grade, hidden_visibility)
    tmp = out / "results.json.tmp"
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / "results.json")
    junit_xml(grade).write(out / "junit.xml", encoding="utf-8", xml_declaration=True)
