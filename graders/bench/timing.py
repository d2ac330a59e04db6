"""Interleaved timing: every contender of a case runs once per round, in a rotated order,
on the same inputs; a comparison is the per-round ratio of two contenders' costs, summarised
by its median, minimum and maximum over the rounds.

Costs are CPU seconds of this process (``time.process_time``) per unit of work (a call, a
request, a token): on a shared machine another process's load changes the wall clock far
more than the CPU time of single-threaded code. Every number is a ratio of two costs taken
in the same round, so a slow minute on the machine moves both sides together. Nothing here
compares a time with a constant.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable

ROLES = ("reference", "alternative", "peer", "floor")
KINDS = ("peer", "floor", "growth", "alternative")


@dataclass
class Contender:
    """One way to do a case's work. ``run`` does one sample of it (``units`` units: calls,
    requests or tokens); a stateful contender keeps its state (a cache at capacity, a stream
    of fresh prompts) in the closure, so every call does new work."""

    name: str
    label: str
    role: str
    run: Callable[[], Any]
    units: int = 1
    prepare: Callable[[int], None] | None = None   # make inputs for n calls, off the clock

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"contender {self.name!r}: role must be one of {ROLES}")
        if self.units < 1:
            raise ValueError(f"contender {self.name!r}: units must be >= 1")


@dataclass
class Comparison:
    """``numer`` costs ``ratio`` times what ``denom`` costs, per unit (above 1: slower)."""

    numer: str
    denom: str
    kind: str
    label: str = ""      # shown instead of denom's label (a growth says what grew)
    measured: str = ""   # shown instead of numer's label

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"comparison {self.numer}/{self.denom}: kind must be one of {KINDS}")


@dataclass
class Case:
    """A kata's workload: what is measured, by whom, and which ratios are reported."""

    kata: str
    workload: str
    unit: str
    contenders: list[Contender]
    comparisons: list[Comparison]
    notes: list[str] = field(default_factory=list)
    rounds: int | None = None   # None: the run's default

    def __post_init__(self) -> None:
        names = [c.name for c in self.contenders]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.kata}: contender names repeat: {names}")
        for cmp in self.comparisons:
            for side in (cmp.numer, cmp.denom):
                if side not in names:
                    raise ValueError(f"{self.kata}: comparison names unknown contender {side!r}")


@dataclass
class Summary:
    median: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float]:
        return {"median": self.median, "min": self.low, "max": self.high}


def summarise(values: list[float]) -> Summary:
    if not values:
        raise ValueError("nothing to summarise")
    return Summary(statistics.median(values), min(values), max(values))


@dataclass
class Measured:
    """Per contender: the CPU seconds per unit in each round; the repetitions per sample."""

    case: Case
    per_unit: dict[str, list[float]]
    wall_per_unit: dict[str, list[float]]
    reps: dict[str, int]

    def ratios(self, cmp: Comparison) -> list[float]:
        return [a / b for a, b in zip(self.per_unit[cmp.numer], self.per_unit[cmp.denom])]


def _sample(fn: Callable[[], Any], reps: int) -> tuple[float, float]:
    gc.collect()
    start_cpu, start = time.process_time(), time.perf_counter()
    for _ in range(reps):
        fn()
    return time.process_time() - start_cpu, time.perf_counter() - start


def _calibrate(fn: Callable[[], Any], target: float) -> int:
    """Repetitions per sample so that a sample takes about ``target`` CPU seconds (one
    warm-up call first: imports, caches and lazy set-up are not measured)."""
    fn()
    cpu, wall = _sample(fn, 1)
    once = max(cpu, wall, 1e-6)
    return max(1, min(10_000, math.ceil(target / once)))


def measure(case: Case, rounds: int, target: float = 0.05,
            progress: Callable[[str], None] | None = None) -> Measured:
    """Run ``rounds`` rounds of ``case``; in round r the contenders start at index r (a
    rotation), so none is always first after the others have warmed the caches."""
    if rounds < 1:
        raise ValueError("rounds must be >= 1")
    # what exists now (the case's inputs, a cache at capacity, imported modules) is not
    # garbage: frozen, the collection before each sample only walks what is new
    gc.collect()
    gc.freeze()
    try:
        return _measure(case, rounds, target, progress)
    finally:
        gc.unfreeze()


def _measure(case: Case, rounds: int, target: float,
             progress: Callable[[str], None] | None) -> Measured:
    reps = {}
    for c in case.contenders:
        if c.prepare is not None:
            c.prepare(2)
        reps[c.name] = _calibrate(c.run, target)
        if c.prepare is not None:
            c.prepare(reps[c.name] * rounds)
    per_unit: dict[str, list[float]] = {c.name: [] for c in case.contenders}
    wall_per_unit: dict[str, list[float]] = {c.name: [] for c in case.contenders}
    n = len(case.contenders)
    for r in range(rounds):
        for i in range(n):
            c = case.contenders[(r + i) % n]
            cpu, wall = _sample(c.run, reps[c.name])
            work = reps[c.name] * c.units
            # a sample under the clock's resolution still gets a positive cost
            per_unit[c.name].append(max(cpu, 1e-9) / work)
            wall_per_unit[c.name].append(max(wall, 1e-9) / work)
        if progress is not None:
            progress(f"{case.kata}: round {r + 1}/{rounds}")
    return Measured(case, per_unit, wall_per_unit, reps)
