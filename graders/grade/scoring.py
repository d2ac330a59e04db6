"""Scoring: a rubric item scores its points when every one of its tests passed (no partial
credit inside an item; a skipped item is not counted)."""

from __future__ import annotations

import re

from graders.grade.model import Grade, ItemResult, MESSAGE_CHARS


# what no report may carry from a submission: C0 controls but newline and tab (ESC starts
# the terminal's escape sequences; most are invalid in XML 1.0), DEL and the C1 controls,
# surrogates and U+FFFE/U+FFFF (invalid in XML), and the bidirectional overrides and
# isolates that make text read other than it is stored
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff"
                     "\u202a-\u202e\u2066-\u2069]")


def safe_text(text: str) -> str:
    """``text`` with every character no report may show replaced by U+FFFD: what a
    submission can influence (exception messages, reprs, names, output) passes through
    here before it reaches any report (the terminal table, junit.xml, results.json,
    summary.csv, report.html)."""
    return _UNSAFE.sub("\ufffd", text)


def score(grade: Grade) -> None:
    # the boundary: every report is made from what this leaves in the grade
    grade.impl = safe_text(grade.impl)
    for t in grade.tests:
        t.message = safe_text(t.message)
    items = grade.kata.tested_items
    if grade.rubric_filter:
        wanted = set(grade.rubric_filter.split(","))
        items = tuple(i for i in items if i.id in wanted)
    for item in items:
        tests = [t for t in grade.tests if t.rubric == item.id]
        failed = [t for t in tests if t.outcome in ("failed", "not run")]
        ran = [t for t in tests if t.outcome == "passed"]
        if not tests:
            status, message = "no tests", "no test scores this item"
        elif failed:
            first = failed[0]
            status = "failed"
            message = (f"{len(failed)} of {len(tests)} tests failed; first: {first.nodeid}\n"
                       + first.message[:MESSAGE_CHARS])
        elif not ran:
            status, message = "skipped", tests[0].message[:MESSAGE_CHARS]
        else:
            status, message = "passed", f"{len(tests)} tests passed"
        points = item.points if status == "passed" else 0
        note = "; ".join(dict.fromkeys(t.note for t in tests if t.note and t.outcome != "skipped"))
        if item.hardware and status == "skipped":
            note = "not counted (no data)"
        grade.items.append(ItemResult(item, status, points, tests, message, note))
