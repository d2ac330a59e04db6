"""The reports of a grade: the terminal table, results.json (Gradescope's autograder schema)
and junit.xml."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from graders.grade.model import Grade, ItemResult, MESSAGE_CHARS


def table(grade: Grade, candidate: bool = False) -> str:
    """The terminal table. ``candidate``: the version safe to show a candidate, in which
    a failed item names only its first failing public test (never a hidden one)."""
    kata = grade.kata
    seed = "derandomized" if grade.seed is None else str(grade.seed)
    lines = [f"{kata.title} ({kata.name})",
             f"implementation: {grade.impl}   hypothesis: {grade.profile}, seed {seed}",
             "",
             f"  {'rubric item':<26}{'points':>8}  {'status':<8} {'tests':>7}  first failure"]
    for r in grade.items:
        passed = sum(t.outcome == "passed" for t in r.tests)
        first = ""
        if r.status == "failed":
            bad = next((t for t in r.tests if t.outcome in ("failed", "not run")
                        and (not candidate or t.visibility != "hidden")), None)
            if bad is None:
                first = "failed by hidden tests"
            else:
                msg = " ".join(_headline(bad.message).split())
                first = _clip(f"{bad.nodeid.split('::')[-1]}: {msg}", FIRST_COLUMN)
        elif r.status in ("skipped", "no tests"):
            first = _clip(" ".join((_candidate_message(r) if candidate else r.message).split()),
                          FIRST_COLUMN)
        lines.append(f"  {r.item.id:<26}{r.score:>4}/{r.item.points:<3}  {r.status.upper():<8} "
                     f"{passed:>3}/{len(r.tests):<3}  {first}")
    for item in kata.rubric:
        if item.graded_by == "interviewer":
            lines.append(f"  {item.id:<26}{'-':>4}/{item.points:<3}  {'--':<8} {'':>7}  "
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
                  f"them   {counts}",
                  "  NOT A SCORE: the hidden tests that decide a grade are not here "
                  "(a candidate bundle)."]
    else:
        lines += ["", f"  score: {grade.score}/{grade.max_score}   {counts}"]
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
        lines.append("")
        if bad is None:
            lines.append(f"  {r.item.id}: failed by hidden tests (their detail is not shown)")
            continue
        where = bad.nodeid if not candidate or bad.visibility != "hidden" else ""
        lines.append(f"  {r.item.id}: {where}")
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


def _candidate_message(r: ItemResult) -> str:
    """What a candidate may read about one rubric item: pass or fail, and the failures of
    public tests only. A hidden test's name, path, source or message never appears."""
    public = [t for t in r.tests if t.visibility != "hidden"]
    failed = [t for t in public if t.outcome in ("failed", "not run")]
    hidden_failed = any(t.outcome in ("failed", "not run") for t in r.tests
                        if t.visibility == "hidden")
    if r.status == "passed":
        return f"{len(r.tests)} tests passed"
    if r.status == "no tests":
        return r.message
    if r.status == "skipped":
        return "skipped: no data to grade it on this machine"
    lines = []
    if failed:
        first = failed[0]
        lines.append(f"{len(failed)} of {len(public)} public tests failed; first: {first.nodeid}\n"
                     + first.message[:MESSAGE_CHARS])
    if hidden_failed:
        lines.append("hidden tests failed (their detail is not shown)")
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
        tests.append({"name": f"rubric: {r.item.id}", "number": str(n), "score": r.score,
                      "max_score": r.item.points if r.status != "skipped" else 0,
                      "status": "passed" if r.status in ("passed", "skipped") else "failed",
                      "output": f"{r.item.description}\n{_candidate_message(r)}",
                      "visibility": "visible", "tags": ["rubric", r.item.id]})
    for t in grade.tests:
        hidden = t.visibility == "hidden"
        tests.append({"name": t.nodeid, "score": 0, "max_score": 0,
                      "status": "passed" if t.outcome in ("passed", "skipped") else "failed",
                      "output": t.message[:MESSAGE_CHARS],
                      "visibility": hidden_visibility if hidden else "visible",
                      "tags": [t.rubric, t.visibility, t.outcome]})
    return {
        "score": grade.score,
        "max_score": grade.max_score,
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
            "isolation": grade.sandbox or {"process": False,
                                           "notes": ["in-process: the submission ran inside "
                                                     "the test process (--in-process)"]},
            "rubric": {r.item.id: {"status": r.status, "score": r.score,
                                   "max_score": r.item.points} for r in grade.items},
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
