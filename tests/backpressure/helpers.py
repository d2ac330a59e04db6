"""Helpers shared by the public and hidden tests of the backpressure kata.

The scenarios that need the implementation's own process (its server and the clients on
one loopback interface, a look at the memory of an ``OutputBuffers``, timing its calls)
run as drivers of ``graders/support/backpressure.py`` through ``graders.impl.run_support``:
in the test's process under ``nox -s kata``, inside the grader's sandboxed worker when
grading. The drivers report plain data; the tests judge it.
"""

from __future__ import annotations

from typing import Any

from graders.impl import run_support
from graders.support import backpressure as support

KATA = "backpressure"


def serve(module: Any, budget: int, steps: list[list[Any]]) -> dict[str, Any]:
    """Run ``support.run_server_scenario`` with the implementation's ``StreamServer``."""
    return run_support(KATA, support.run_server_scenario, module.StreamServer, budget, steps)


def measure(fn: Any, *args: Any) -> Any:
    """Run the driver ``fn`` of graders/support/backpressure.py next to the implementation
    (arguments: plain data or objects the implementation returned)."""
    return run_support(KATA, fn, *args)


def cancels_of(records: dict[str, Any], name: str) -> int:
    """How many times the engine was asked to cancel client ``name``'s stream."""
    sid = records["sids"].get(name)
    return 0 if sid is None else int(records["cancels"].get(sid, 0))


class Plan:
    """The steps of a server scenario (see ``support.run_server_scenario``); ``add``
    returns the index of the step's report."""

    def __init__(self) -> None:
        self.steps: list[list[Any]] = []

    def add(self, *step: Any) -> int:
        self.steps.append(list(step))
        return len(self.steps) - 1
