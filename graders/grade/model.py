"""What a grade is: the result of each test, of each rubric item, and of the whole run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graders import catalog


MESSAGE_CHARS = 2000
# what each test says when the submission cannot be loaded, or lacks a name the stub declares
NOT_IMPLEMENTED = "not implemented yet: "   # graders/plugin.py's verdict on a stub's body
LOAD_POINTER = "not graded: the submission could not be loaded (see the message above the table)"
MISSING_POINTER = ("failed: the submission lacks a name the stub declares (see the message "
                   "above the table)")


class GradeError(RuntimeError):
    """The grader itself could not run (a broken kata or harness, not the submission)."""


@dataclass
class TestResult:
    nodeid: str
    rubric: str
    visibility: str
    outcome: str = "not run"          # passed | failed | skipped | not run
    message: str = ""
    duration: float = 0.0
    rules: tuple[str, ...] = ()       # the prompt's rule labels the test checks (plugin.rules_of)
    note: str = ""                    # what graded it (a hardware test's data), if it says


@dataclass
class ItemResult:
    item: catalog.RubricItem
    status: str                        # passed | failed | skipped | no tests
    score: int
    tests: list[TestResult]
    message: str = ""
    note: str = ""                     # what graded it: its tests' notes (hardware data)


@dataclass
class Grade:
    kata: catalog.Kata
    impl: str
    seed: int | None
    profile: str
    tests: list[TestResult]
    items: list[ItemResult] = field(default_factory=list)
    restarts: int = 0
    seconds: float = 0.0
    sandbox: dict[str, Any] | None = None
    rubric_filter: str | None = None
    # the hidden tests were asked for but are not here (a candidate bundle): the public
    # tests alone ran, and what they give is not a score
    public_only: bool = False
    # why the submission could not be loaded (no file of the kata's name, a syntax or import
    # error, a class the stub declares missing): said once, above the table; each test it
    # failed carries LOAD_POINTER instead of its own traceback
    load_error: str | None = None
    # what a candidate learns of an item failed by hidden tests alone: "rules" (the rule
    # labels those tests cite) or "none"
    hidden_detail: str = "rules"

    @property
    def score(self) -> int:
        return sum(i.score for i in self.items)

    @property
    def max_score(self) -> int:
        return sum(i.item.points for i in self.items if i.status != "skipped")

    @property
    def not_counted(self) -> int:
        """Points of items that could not be graded here (skipped: no hardware data, a
        check that needs what this place lacks): out of the maximum, not lost."""
        return sum(i.item.points for i in self.items if i.status == "skipped")


def items_that_differ(a: Grade, b: Grade) -> dict[str, tuple[str, str | None]]:
    """Rubric items whose status differs between two grades of one submission (isolated
    and in-process, say): item -> (status in ``a``, status in ``b``)."""
    in_b = {r.item.id: r.status for r in b.items}
    return {r.item.id: (r.status, in_b.get(r.item.id)) for r in a.items
            if in_b.get(r.item.id) != r.status}
