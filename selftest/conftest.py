"""The suite's own order: the longest tests first, so that two workers end together
(xdist hands tests out in collection order; a long test started last would run alone)."""

from __future__ import annotations

from typing import Any

# (name prefix, rank): lower runs earlier; each a test of minutes' worth of grades
_FIRST = (("test_independent_solutions_score_full_marks", 0),
          ("test_mutants_lose_their_rubric_items", 1),
          ("test_reference_scores_full_marks", 2),
          ("test_stub_fails_every_item_cleanly", 3))


def _rank(item: Any) -> int:
    name = getattr(item, "originalname", None) or item.name
    return next((rank for prefix, rank in _FIRST if name == prefix), len(_FIRST))


def pytest_collection_modifyitems(items: list[Any]) -> None:
    items.sort(key=_rank)   # stable: the order within a rank is the collection's
