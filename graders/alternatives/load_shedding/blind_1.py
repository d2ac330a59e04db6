"""load_shedding: an independent correct solution, written blind.

Written by a blind tester session, 2026-12-05, from the prompt, the stub and the public tests
only (it saw neither the reference, the other alternatives nor the hidden tests); kept as the
tester wrote it, with only this docstring changed. It scored 100/100 in an isolated grade as
written; the prompt was then made exact on the points its notes raised (none changed a test
verdict on it).

How it differs from the reference (solutions/load_shedding.py):
- service_stats works in exact fractions (raw moments, safe when exact), with the
  probabilities renormalised by their exact sum;
- the slot model is a sorted list holding only the free times of the slots ever used (at most
  ``servers`` of them; an unused slot is free since time 0), kept by bisect.insort;
- the controller tests the fit before the "never fits" rule, and the in-time / dead
  comparisons and the Retry-After delay are exact (Fractions of the floats);
- the replay sums dead work in Fractions and keeps the latest dead finish as one.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any


# ------------------------------------------------------------------ validation
def _num(x: object, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{what} must be an int or float, got {x!r}")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{what} must be finite, got {x!r}")
    return x


def _nonneg(x: object, what: str) -> float:
    v = _num(x, what)
    if v < 0:
        raise ValueError(f"{what} must be >= 0, got {x!r}")
    return v


def _pos(x: object, what: str) -> float:
    v = _num(x, what)
    if v <= 0:
        raise ValueError(f"{what} must be > 0, got {x!r}")
    return v


def _quantile(q: object) -> float:
    v = _num(q, "quantile")
    if not 0 < v < 1:
        raise ValueError(f"quantile must be strictly between 0 and 1, got {q!r}")
    return v


def _count(x: object, what: str, least: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(f"{what} must be an int, got {x!r}")
    if x < least:
        raise ValueError(f"{what} must be at least {least}, got {x!r}")
    return x


def _tail_factor(q: float) -> float:
    return -math.log1p(-q)          # ln(1 / (1 - q))


# ------------------------------------------------------------------ estimates
def service_stats(prompt_lengths: Sequence[int], probabilities: Sequence[float], fixed_s: float,
                  per_token_s: float) -> tuple[float, float]:
    if not isinstance(prompt_lengths, (list, tuple)) or not isinstance(probabilities, (list, tuple)):
        raise ValueError("prompt_lengths and probabilities must be lists or tuples")
    if not prompt_lengths or len(prompt_lengths) != len(probabilities):
        raise ValueError("prompt_lengths and probabilities must be non-empty and of equal length")
    for n in prompt_lengths:
        _count(n, "prompt length", 0)
    for p in probabilities:
        _nonneg(p, "probability")
    fixed = Fraction(_nonneg(fixed_s, "fixed_s"))
    per_token = Fraction(_nonneg(per_token_s, "per_token_s"))
    if abs(math.fsum(probabilities) - 1.0) > 1e-9:
        raise ValueError("probabilities must sum to 1 within 1e-9")
    total = Fraction(0)
    m1 = Fraction(0)
    m2 = Fraction(0)
    for n, p in zip(prompt_lengths, probabilities):
        fp = Fraction(p)
        s = fixed + per_token * n
        total += fp
        m1 += fp * s
        m2 += fp * s * s
    mean = m1 / total
    if mean == 0:
        raise ValueError("the mix's mean service time is 0")
    var = m2 / total - mean * mean
    return float(mean), float(var / (mean * mean))


def p99_latency_s(arrival_rate: float, mean_service_s: float, scv: float,
                  quantile: float = 0.99) -> float:
    lam = _nonneg(arrival_rate, "arrival_rate")
    s = _pos(mean_service_s, "mean_service_s")
    c2 = _nonneg(scv, "scv")
    q = _quantile(quantile)
    rho = lam * s
    if rho >= 1:
        return math.inf
    wait = rho * s * (1 + c2) / (2 * (1 - rho))
    return _tail_factor(q) * (s + wait)


def utilisation_ceiling(mean_service_s: float, scv: float, target_s: float,
                        quantile: float = 0.99) -> float:
    s = _pos(mean_service_s, "mean_service_s")
    c2 = _nonneg(scv, "scv")
    t = _pos(target_s, "target_s")
    q = _quantile(quantile)
    a = t / (_tail_factor(q) * s) - 1
    if a <= 0:
        return 0.0
    return 2 * a / (2 * a + 1 + c2)


def spike_fluid(service_rate: float, base_rate: float, spike_rate: float, spike_s: float,
                timeout_s: float) -> dict[str, float]:
    mu = _pos(service_rate, "service_rate")
    base = _nonneg(base_rate, "base_rate")
    peak = _nonneg(spike_rate, "spike_rate")
    length = _nonneg(spike_s, "spike_s")
    timeout = _pos(timeout_s, "timeout_s")
    if base >= mu:
        raise ValueError("base_rate must be below service_rate: the queue never drains")
    backlog = float(max(0.0, (peak - mu) * length))
    slack = mu - base
    drain = backlog / slack
    patience = mu * timeout
    dead = (backlog - patience) / slack + timeout if backlog > patience else 0.0
    return {"backlog": backlog, "drain_s": float(drain), "dead_window_s": float(dead)}


# ------------------------------------------------------------------ the server
class _Slots:
    """Free times of the slots used so far, ascending; unused slots are free since 0."""

    __slots__ = ("_servers", "_free")

    def __init__(self, servers: int) -> None:
        self._servers = servers
        self._free: list[float] = []

    def earliest(self) -> float:
        return 0.0 if len(self._free) < self._servers else self._free[0]

    def start_of(self, now: float) -> float:
        e = self.earliest()
        return now if now >= e else e

    def take(self, now: float, service: float) -> float:
        finish = self.start_of(now) + service
        if len(self._free) >= self._servers:
            del self._free[0]
        bisect.insort(self._free, finish)
        return finish


class AdmissionController:
    def __init__(self, servers: int) -> None:
        self._slots = _Slots(_count(servers, "servers", 1))
        self._clock: float = 0.0
        self._seen = False

    def offer(self, now: float, service_s: float, timeout_s: float) -> tuple[bool, int | None]:
        at = _nonneg(now, "now")
        service = _pos(service_s, "service_s")
        timeout = _pos(timeout_s, "timeout_s")
        if self._seen and at < self._clock:
            raise ValueError(f"now {now!r} is earlier than the previous offer's {self._clock!r}")
        self._seen = True
        self._clock = at
        start = self._slots.start_of(at)
        if Fraction(start) + Fraction(service) <= Fraction(at) + Fraction(timeout):
            self._slots.take(at, service)
            return True, None
        if service > timeout:
            return False, None
        delay = (Fraction(self._slots.earliest()) + Fraction(service) - Fraction(timeout)
                 - Fraction(at))
        return False, max(1, math.ceil(delay))


def replay(arrivals: Sequence[Sequence[float]], servers: int, shed: bool,
           spike_end: float) -> dict[str, Any]:
    if not isinstance(arrivals, (list, tuple)):
        raise ValueError("arrivals must be a list or tuple")
    _count(servers, "servers", 1)
    if not isinstance(shed, bool):
        raise ValueError("shed must be a bool")
    end = _nonneg(spike_end, "spike_end")
    rows: list[tuple[float, float, float]] = []
    for row in arrivals:
        if not isinstance(row, (list, tuple)) or len(row) != 3:
            raise ValueError(f"each arrival must be a (time, service_s, timeout_s) triple: {row!r}")
        at = _nonneg(row[0], "arrival time")
        if rows and at < rows[-1][0]:
            raise ValueError("arrival times must not decrease")
        rows.append((at, _pos(row[1], "service_s"), _pos(row[2], "timeout_s")))

    gate = AdmissionController(servers) if shed else None
    server = _Slots(servers)
    accepted: list[bool] = []
    retry: list[int | None] = []
    finish: list[float | None] = []
    dead_work = Fraction(0)
    goodput = 0
    last_dead: Fraction | None = None
    for at, service, timeout in rows:
        ok, after = gate.offer(at, service, timeout) if gate is not None else (True, None)
        accepted.append(ok)
        retry.append(after)
        if not ok:
            finish.append(None)
            continue
        done = server.take(at, service)
        finish.append(done)
        exact_done = Fraction(done)
        if exact_done <= Fraction(at) + Fraction(timeout):
            goodput += 1
        else:
            dead_work += Fraction(service)
            if last_dead is None or exact_done > last_dead:
                last_dead = exact_done
    recovery = 0.0 if last_dead is None else float(max(Fraction(0), last_dead - Fraction(end)))
    return {"accepted": accepted, "retry_after": retry, "finish": finish,
            "dead_work_s": float(dead_work), "goodput": goodput, "recovery_s": recovery}
