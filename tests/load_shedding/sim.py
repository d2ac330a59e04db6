"""A seeded spike and an event-driven simulator of the kata's server, in exact fractions.

This is the trusted side's model of the truth: it never calls the implementation under test
and shares no code with the reference. It advances a clock from event to event (completions
first, then arrivals, then starts), keeps a FIFO waiting line and the set of running requests,
and answers "would this request finish in time if admitted now" by replaying the admitted
requests with it added.
"""

from __future__ import annotations

import random
from collections import deque
from fractions import Fraction
from typing import Any

Row = tuple[Fraction, Fraction, Fraction]  # (arrival, service, timeout)


def exact(rows: list[tuple[float, float, float]] | list[list[float]]) -> list[Row]:
    return [(Fraction(a), Fraction(s), Fraction(t)) for a, s, t in rows]


def finishes(jobs: list[tuple[Fraction, Fraction]], servers: int) -> list[Fraction]:
    """Finish time of each (arrival, service) job, FIFO over ``servers`` slots, by events."""
    finish: list[Fraction] = [Fraction(-1)] * len(jobs)
    waiting: deque[int] = deque()
    running: list[tuple[Fraction, int]] = []  # (finish, job)
    nxt, clock = 0, Fraction(0)
    while nxt < len(jobs) or waiting or running:
        candidates = [f for f, _ in running]
        if nxt < len(jobs):
            candidates.append(jobs[nxt][0])
        clock = max(clock, min(candidates))
        running = [(f, j) for f, j in running if f > clock]  # completions free their slots
        while nxt < len(jobs) and jobs[nxt][0] <= clock:      # arrivals join the line
            waiting.append(nxt)
            nxt += 1
        while waiting and len(running) < servers:             # the head starts on a free slot
            j = waiting.popleft()
            finish[j] = clock + jobs[j][1]
            running.append((finish[j], j))
    return finish


def fits(admitted: list[tuple[Fraction, Fraction]], servers: int, at: Fraction, service: Fraction,
         timeout: Fraction) -> bool:
    return finishes([*admitted, (at, service)], servers)[-1] <= at + timeout


def decide(admitted: list[tuple[Fraction, Fraction]], servers: int, at: Fraction,
           service: Fraction, timeout: Fraction) -> tuple[bool, int | None]:
    """The decision the prompt defines, found by replaying: admit when it fits; else the
    smallest whole number of seconds d >= 1 after which it would fit, or None if none does."""
    if fits(admitted, servers, at, service, timeout):
        return True, None
    if service > timeout:
        return False, None
    hi = 1
    while not fits(admitted, servers, at + hi, service, timeout):
        hi *= 2
    lo = hi // 2  # does not fit at lo (lo = 0: it was just rejected)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(admitted, servers, at + mid, service, timeout):
            hi = mid
        else:
            lo = mid
    return False, hi


def oracle_replay(rows: list[Row], servers: int, shed: bool, spike_end: Fraction) -> dict[str, Any]:
    admitted: list[tuple[Fraction, Fraction]] = []
    accepted: list[bool] = []
    retry: list[int | None] = []
    for at, service, timeout in rows:
        ok, after = decide(admitted, servers, at, service, timeout) if shed else (True, None)
        accepted.append(ok)
        retry.append(after)
        if ok:
            admitted.append((at, service))
    done = iter(finishes(admitted, servers))
    finish: list[Fraction | None] = [next(done) if ok else None for ok in accepted]
    dead = [(f, s) for (at, s, t), f in zip(rows, finish) if f is not None and f > at + t]
    on_time = sum(1 for (at, _, t), f in zip(rows, finish) if f is not None and f <= at + t)
    last = max((f for f, _ in dead), default=None)
    return {"accepted": accepted, "retry_after": retry, "finish": finish,
            "dead_work_s": sum((s for _, s in dead), Fraction(0)), "goodput": on_time,
            "recovery_s": Fraction(0) if last is None else max(Fraction(0), last - spike_end)}


TICK = 64  # every generated time is a multiple of 1/64 s, so float sums of them stay exact


def _ticks(x: float) -> float:
    return max(1, round(x * TICK)) / TICK


def spike(seed: int, *, base_rate: float = 0.8, spike_rate: float = 2.4, start: float = 20.0,
          length: float = 30.0, horizon: float = 150.0, timeouts: tuple[float, ...] = (10.0, 20.0),
          lengths: tuple[int, ...] = (500, 1000, 2000, 8000),
          weights: tuple[float, ...] = (0.4, 0.3, 0.2, 0.1), fixed_s: float = 0.2,
          per_token_s: float = 4e-4) -> list[tuple[float, float, float]]:
    """Seeded arrivals: Poisson at ``base_rate``, at ``spike_rate`` during the spike
    [start, start + length); service = fixed_s + per_token_s x prompt length; times in 1/64 s."""
    rng = random.Random(seed)
    rows: list[tuple[float, float, float]] = []
    t = 0.0
    while True:
        rate = spike_rate if start <= t < start + length else base_rate
        t += _ticks(rng.expovariate(rate))
        if t >= horizon:
            return rows
        n = rng.choices(lengths, weights)[0]
        rows.append((t, _ticks(fixed_s + per_token_s * n), rng.choice(timeouts)))
