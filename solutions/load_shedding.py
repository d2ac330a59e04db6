"""Reference solution for the load_shedding kata: queues under a spike.

Closed forms for the queueing estimates; for admission, a min-heap of the times each FIFO slot
frees (the multi-server Lindley recursion): the next admitted request starts at the later of
its arrival and the earliest free time, so its finish is known the moment it arrives.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from typing import Any


# ------------------------------------------------------------------ checks
def _num(name: str, value: Any, *, positive: bool = False) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if not ok or (value <= 0 if positive else value < 0):
        raise ValueError(f"{name} must be a {'positive' if positive else 'non-negative'} "
                         f"finite int or float, got {value!r}")
    return float(value)


def _quantile(value: Any) -> float:
    q = _num("quantile", value)
    if not 0 < q < 1:
        raise ValueError(f"quantile must lie strictly between 0 and 1, got {value!r}")
    return q


def _servers(servers: Any) -> int:
    if isinstance(servers, bool) or not isinstance(servers, int) or servers < 1:
        raise ValueError(f"servers must be an int >= 1, got {servers!r}")
    return servers


# ------------------------------------------------------------------ estimates
def service_stats(prompt_lengths: Sequence[int], probabilities: Sequence[float], fixed_s: float,
                  per_token_s: float) -> tuple[float, float]:
    if not isinstance(prompt_lengths, (list, tuple)) or not isinstance(probabilities, (list, tuple)):
        raise ValueError("prompt_lengths and probabilities must be lists")
    if not prompt_lengths or len(prompt_lengths) != len(probabilities):
        raise ValueError("prompt_lengths and probabilities must be non-empty and of equal length")
    for n in prompt_lengths:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"a prompt length must be an int >= 0, got {n!r}")
    probs = [_num("probability", p) for p in probabilities]
    if abs(sum(probs) - 1.0) > 1e-9:
        raise ValueError(f"probabilities must sum to 1, got {sum(probs)!r}")
    fixed, per_token = _num("fixed_s", fixed_s), _num("per_token_s", per_token_s)
    times = [fixed + per_token * n for n in prompt_lengths]
    mean = sum(p * t for p, t in zip(probs, times))
    if mean <= 0:
        raise ValueError("the mean service time must be positive")
    var = sum(p * (t - mean) ** 2 for p, t in zip(probs, times))
    return mean, var / mean ** 2


def p99_latency_s(arrival_rate: float, mean_service_s: float, scv: float,
                  quantile: float = 0.99) -> float:
    lam, s = _num("arrival_rate", arrival_rate), _num("mean_service_s", mean_service_s, positive=True)
    c2, q = _num("scv", scv), _quantile(quantile)
    rho = lam * s
    if rho >= 1:
        return math.inf
    wait = rho * s * (1 + c2) / (2 * (1 - rho))
    return -math.log1p(-q) * (s + wait)


def utilisation_ceiling(mean_service_s: float, scv: float, target_s: float,
                        quantile: float = 0.99) -> float:
    s, c2 = _num("mean_service_s", mean_service_s, positive=True), _num("scv", scv)
    t, q = _num("target_s", target_s, positive=True), _quantile(quantile)
    a = t / (-math.log1p(-q) * s) - 1  # the wait the target leaves, in units of S
    if a <= 0:
        return 0.0
    return 2 * a / (2 * a + 1 + c2)


def spike_fluid(service_rate: float, base_rate: float, spike_rate: float, spike_s: float,
                timeout_s: float) -> dict[str, float]:
    mu = _num("service_rate", service_rate, positive=True)
    base, spike = _num("base_rate", base_rate), _num("spike_rate", spike_rate)
    duration, timeout = _num("spike_s", spike_s), _num("timeout_s", timeout_s, positive=True)
    if base >= mu:
        raise ValueError(f"base_rate {base} must be below service_rate {mu}: the queue never drains")
    backlog = max(0.0, spike - mu) * duration
    drain = backlog / (mu - base)
    dead = (backlog - mu * timeout) / (mu - base) + timeout if backlog > mu * timeout else 0.0
    return {"backlog": backlog, "drain_s": drain, "dead_window_s": dead}


# ------------------------------------------------------------------ admission
class AdmissionController:
    def __init__(self, servers: int) -> None:
        self._free = [0.0] * _servers(servers)  # a min-heap of the times each slot frees
        self._now = 0.0

    def offer(self, now: float, service_s: float, timeout_s: float) -> tuple[bool, int | None]:
        t = _num("now", now)
        s = _num("service_s", service_s, positive=True)
        patience = _num("timeout_s", timeout_s, positive=True)
        if t < self._now:
            raise ValueError(f"time runs backwards: {t} after {self._now}")
        self._now = t
        if s > patience:
            return False, None
        earliest = self._free[0]
        if max(t, earliest) + s <= t + patience:
            heapq.heapreplace(self._free, max(t, earliest) + s)
            return True, None
        return False, math.ceil(earliest + s - patience - t)


def replay(arrivals: Sequence[Sequence[float]], servers: int, shed: bool,
           spike_end: float) -> dict[str, Any]:
    if not isinstance(arrivals, (list, tuple)) or not isinstance(shed, bool):
        raise ValueError("arrivals must be a list and shed a bool")
    end = _num("spike_end", spike_end)
    rows: list[tuple[float, float, float]] = []
    for row in arrivals:
        if not isinstance(row, (list, tuple)) or len(row) != 3:
            raise ValueError(f"an arrival is (time, service_s, timeout_s), got {row!r}")
        at = _num("time", row[0])
        if rows and at < rows[-1][0]:
            raise ValueError("arrival times must be non-decreasing")
        rows.append((at, _num("service_s", row[1], positive=True),
                     _num("timeout_s", row[2], positive=True)))
    gate = AdmissionController(_servers(servers))
    free = [0.0] * servers
    accepted: list[bool] = []
    retry: list[int | None] = []
    finish: list[float | None] = []
    dead_work, goodput, last_dead = 0.0, 0, None
    for at, s, patience in rows:
        ok, after = gate.offer(at, s, patience) if shed else (True, None)
        accepted.append(ok)
        retry.append(after)
        if not ok:
            finish.append(None)
            continue
        done = max(at, free[0]) + s
        heapq.heapreplace(free, done)
        finish.append(done)
        if done <= at + patience:
            goodput += 1
        else:
            dead_work += s
            last_dead = done if last_dead is None else max(last_dead, done)
    recovery = 0.0 if last_dead is None else max(0.0, last_dead - end)
    return {"accepted": accepted, "retry_after": retry, "finish": finish,
            "dead_work_s": dead_work, "goodput": goodput, "recovery_s": recovery}
