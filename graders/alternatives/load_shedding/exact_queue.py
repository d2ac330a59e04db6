"""An independent correct load_shedding solution: exact fractions and an explicit FIFO line.

Written by the kata's author from the prompt and the stub (no blind helper was available in
this session), after the reference and slot_list.py, deliberately unlike both:

- every quantity is a ``fractions.Fraction`` of the inputs; floats are made only on return;
- the estimates solve the prompt's equations symbolically in fractions (the logarithm is the
  one float factor), and the fluid dead window is found by following the backlog's line;
- the controller keeps the admitted requests' finish times in a sorted list and finds a new
  request's start as the first moment the number of unfinished admitted requests drops below
  the slot count (the floor at the previous admitted start is redundant: before it, every
  slot is taken; kept for clarity);
- the Retry-After is searched: the smallest integer d >= 1 at which the same request would
  be admitted, from an upper bound found by doubling, then bisection;
- the replay re-runs its own controller and reads finish times from it.

Saturation in ``p99_latency_s`` is decided by the exact product (where the float product
rounds up to 1.0 it returns a finite value): the prompt's tests never pass such a pair.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any


def _f(x: Any, name: str, *, positive: bool = False) -> Fraction:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{name} must be a number, got {x!r}")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x!r}")
    v = Fraction(x)
    if v < 0 or (positive and v == 0):
        raise ValueError(f"{name} out of range: {x!r}")
    return v


def _log_factor(quantile: Any) -> float:
    q = _f(quantile, "quantile", positive=True)
    if q >= 1:
        raise ValueError(f"quantile must be below 1, got {quantile!r}")
    return -math.log1p(-float(q))


def service_stats(prompt_lengths: Sequence[int], probabilities: Sequence[float], fixed_s: float,
                  per_token_s: float) -> tuple[float, float]:
    if not isinstance(prompt_lengths, (list, tuple)) or not isinstance(probabilities, (list, tuple)):
        raise ValueError("prompt_lengths and probabilities are lists")
    if not prompt_lengths or len(prompt_lengths) != len(probabilities):
        raise ValueError("one probability per length, at least one length")
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in prompt_lengths):
        raise ValueError("lengths are ints >= 0")
    probs = [_f(p, "probability") for p in probabilities]
    if abs(sum(probs, Fraction(0)) - 1) > Fraction(1, 10 ** 9):
        raise ValueError("probabilities must sum to 1")
    a, b = _f(fixed_s, "fixed_s"), _f(per_token_s, "per_token_s")
    times = [a + b * n for n in prompt_lengths]
    mean = sum((p * t for p, t in zip(probs, times)), Fraction(0))
    if mean == 0:
        raise ValueError("zero mean service")
    var = sum((p * (t - mean) ** 2 for p, t in zip(probs, times)), Fraction(0))
    return float(mean), float(var / mean ** 2)


def p99_latency_s(arrival_rate: float, mean_service_s: float, scv: float,
                  quantile: float = 0.99) -> float:
    lam = _f(arrival_rate, "arrival_rate")
    s = _f(mean_service_s, "mean_service_s", positive=True)
    c2, k = _f(scv, "scv"), _log_factor(quantile)
    rho = lam * s
    if rho >= 1:  # exact: the prompt's tests never sit where floats would round up to 1
        return math.inf
    return k * float(s + rho * s * (1 + c2) / (2 * (1 - rho)))


def utilisation_ceiling(mean_service_s: float, scv: float, target_s: float,
                        quantile: float = 0.99) -> float:
    s = _f(mean_service_s, "mean_service_s", positive=True)
    c2 = _f(scv, "scv")
    t = _f(target_s, "target_s", positive=True)
    k = Fraction(_log_factor(quantile))
    # k (S + W) = T with W = rho S (1 + c2) / (2 (1 - rho)):  rho (1 + c2) / (2 (1 - rho)) = a
    a = t / (k * s) - 1
    if a <= 0:
        return 0.0
    return float(a / (a + (1 + c2) / 2))


def spike_fluid(service_rate: float, base_rate: float, spike_rate: float, spike_s: float,
                timeout_s: float) -> dict[str, float]:
    mu = _f(service_rate, "service_rate", positive=True)
    base, peak_rate = _f(base_rate, "base_rate"), _f(spike_rate, "spike_rate")
    length, tau = _f(spike_s, "spike_s"), _f(timeout_s, "timeout_s", positive=True)
    if base >= mu:
        raise ValueError("base load at or above capacity")
    backlog = (peak_rate - mu) * length if peak_rate > mu else Fraction(0)
    slope = mu - base
    # after the spike the backlog is backlog - slope x; a request arriving at x waits
    # (backlog - slope x) / mu; it is dead while that exceeds tau
    if backlog / mu > tau:
        x_last = (backlog - mu * tau) / slope
        dead = x_last + tau
    else:
        dead = Fraction(0)
    return {"backlog": float(backlog), "drain_s": float(backlog / slope),
            "dead_window_s": float(dead)}


class AdmissionController:
    def __init__(self, servers: int) -> None:
        if isinstance(servers, bool) or not isinstance(servers, int) or servers < 1:
            raise ValueError(f"servers must be an int >= 1, got {servers!r}")
        self._k = servers
        self._finishes: list[Fraction] = []  # sorted finish times of admitted requests
        self._last_start = Fraction(0)
        self._clock = Fraction(0)

    def _start(self, at: Fraction) -> Fraction:
        """When a request arriving at ``at`` would start: FIFO (not before the last admitted
        start) and once fewer than k admitted requests are unfinished."""
        t = max(at, self._last_start)
        busy = len(self._finishes) - bisect.bisect_right(self._finishes, t)
        if busy < self._k:
            return t
        # the (busy - k + 1)-th of the finishes after t frees the slot we need
        i = bisect.bisect_right(self._finishes, t) + (busy - self._k)
        return self._finishes[i]

    def _fits(self, at: Fraction, need: Fraction, patience: Fraction) -> bool:
        return self._start(at) + need <= at + patience

    def offer(self, now: float, service_s: float, timeout_s: float) -> tuple[bool, int | None]:
        at = _f(now, "now")
        need = _f(service_s, "service_s", positive=True)
        patience = _f(timeout_s, "timeout_s", positive=True)
        if at < self._clock:
            raise ValueError("now went backwards")
        self._clock = at
        if self._fits(at, need, patience):
            start = self._start(at)
            self._last_start = start
            bisect.insort(self._finishes, start + need)
            return True, None
        if need > patience:
            return False, None
        hi = 1
        while not self._fits(at + hi, need, patience):
            hi *= 2
        lo = hi // 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._fits(at + mid, need, patience):
                hi = mid
            else:
                lo = mid
        return False, hi

    def _book(self, at: Fraction, need: Fraction) -> Fraction:
        start = self._start(at)
        self._last_start = start
        bisect.insort(self._finishes, start + need)
        return start + need


def replay(arrivals: Sequence[Sequence[float]], servers: int, shed: bool,
           spike_end: float) -> dict[str, Any]:
    if not isinstance(arrivals, (list, tuple)) or not isinstance(shed, bool):
        raise ValueError("arrivals is a list, shed a bool")
    end = _f(spike_end, "spike_end")
    rows: list[tuple[Fraction, Fraction, Fraction]] = []
    for r in arrivals:
        if not isinstance(r, (list, tuple)) or len(r) != 3:
            raise ValueError(f"bad arrival {r!r}")
        row = (_f(r[0], "time"), _f(r[1], "service_s", positive=True),
               _f(r[2], "timeout_s", positive=True))
        if rows and row[0] < rows[-1][0]:
            raise ValueError("arrival times decrease")
        rows.append(row)
    gate, server = AdmissionController(servers), AdmissionController(servers)
    accepted: list[bool] = []
    retry: list[int | None] = []
    finish: list[float | None] = []
    dead_work, good = Fraction(0), 0
    last_dead: Fraction | None = None
    for at, need, patience in rows:
        ok, after = gate.offer(float(at), float(need), float(patience)) if shed else (True, None)
        accepted.append(ok)
        retry.append(after)
        if not ok:
            finish.append(None)
            continue
        done = server._book(at, need)
        finish.append(float(done))
        if done <= at + patience:
            good += 1
        else:
            dead_work += need
            last_dead = done if last_dead is None or done > last_dead else last_dead
    recovery = Fraction(0) if last_dead is None else max(Fraction(0), last_dead - end)
    return {"accepted": accepted, "retry_after": retry, "finish": finish,
            "dead_work_s": float(dead_work), "goodput": good, "recovery_s": float(recovery)}
