"""Scoring: a rubric item scores its points when every one of its tests passed (no partial
credit inside an item; a skipped item is not counted)."""

from __future__ import annotations

from graders.grade.model import Grade, ItemResult, MESSAGE_CHARS


def score(grade: Grade) -> None:
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
