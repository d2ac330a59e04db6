"""The suite's own order: the longest tests first, so that the workers end together
(xdist hands tests out in collection order; a long test, or a long serial group, started
last would run alone)."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import pytest

from graders import candidate_tests

# (name prefix, rank): lower runs earlier; each a test of minutes' worth of grades
_FIRST = (("test_independent_solutions_score_full_marks", 0),
          ("test_mutants_lose_their_rubric_items", 1),
          ("test_reference_scores_full_marks", 2),
          ("test_stub_fails_every_item_cleanly", 3))


# xdist groups that one worker runs one test at a time (the hostile attacks: each checks
# that no process of another attack is left): the longest chain of the suite, so it starts
# first and the other workers share the kata checks around it
_SERIAL_GROUPS = ("hostile",)


def _rank(item: Any) -> int:
    if any(mark.args and mark.args[0] in _SERIAL_GROUPS
           for mark in item.iter_markers("xdist_group")):
        return -1
    name = getattr(item, "originalname", None) or item.name
    return next((rank for prefix, rank in _FIRST if name == prefix), len(_FIRST))


def pytest_collection_modifyitems(items: list[Any]) -> None:
    items.sort(key=_rank)   # stable: the order within a rank is the collection's


@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
def pytest_collection_modifyitems_groups(config: Any, items: list[Any]) -> None:
    """``--dist loadgroup`` sends the tests of one ``xdist_group`` to one worker by a
    "@group" suffix that pytest-xdist writes into each item's nodeid on the worker. pytest 9
    keeps an item's id in a structured field that the write (``item._nodeid``) no longer
    reaches, so every group fell apart without a word: the hostile attacks ran side by
    side, each module fixture was built once per worker. Write the suffix where the
    running pytest reads it (a no-op where xdist's own write took)."""
    if not getattr(config.option, "loadgroup", False) or not hasattr(config, "workerinput"):
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        nodeid = item.nodeid
        if names and nodeid.rfind("@") <= nodeid.rfind("]"):
            _set_nodeid(item, f"{nodeid}@{'_'.join(names)}")


def _set_nodeid(item: Any, nodeid: str) -> None:
    try:
        from _pytest.nodeid import NodeId   # pytest 9: a structured id
    except ImportError:
        item._nodeid = nodeid
    else:
        item._id = NodeId.parse(nodeid)


def pytest_configure(config: Any) -> None:
    """The suite grades each correct solution in both modes, and both run the same
    candidate-written tests in the same sandbox: a run of the same prepared folder is kept
    for the session (graders/candidate_tests.py, ``KATA_CANDIDATE_RUN_CACHE``). Set once,
    by the controlling process, before xdist starts its workers (they inherit it)."""
    if hasattr(config, "workerinput") or os.environ.get(candidate_tests.CACHE_ENV):
        return
    folder = tempfile.mkdtemp(prefix="kata-candidate-runs-")
    os.environ[candidate_tests.CACHE_ENV] = folder
    config._kata_run_cache = folder


def pytest_unconfigure(config: Any) -> None:
    folder = getattr(config, "_kata_run_cache", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(candidate_tests.CACHE_ENV, None)
