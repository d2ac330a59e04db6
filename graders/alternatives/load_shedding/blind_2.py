"""load_shedding: an independent correct solution, written blind (second round).

Written by a blind tester session, 2026-12-05, from the prompt, the stub and the public tests
only (it saw neither the reference, the other alternatives nor the hidden tests). It scored
100/100 in an isolated grade as written, and is kept as written but for this docstring. Its
saturation test uses the exact product of the two floats (the tester's notes asked which rho
decides; the prompt now says no test passes a product in [1 - 1e-6, 1), where the float
product and the exact one can disagree).

How it differs from the reference (solutions/load_shedding.py):
- exact ``Fraction`` arithmetic inside service_stats (two-pass variance, probabilities
  renormalised by their exact sum), the P-K mean latency, the controller and the replay;
  floats only on the way out;
- ln(1/(1-q)) as ``-log1p(-q)``; the ceiling written as 2(T - LS) / (2(T - LS) + (1 + c2) LS);
- the slots are a sorted list of free times (``bisect.insort``, ``pop(0)``), not a heap;
- the controller tests the fit before the "never fits" rule; Retry-After is the integer
  ceiling of an exact Fraction;
- the replay validates every argument before it simulates, passes the original numbers to one
  fresh AdmissionController and runs its own slot model for the finish times.
"""

from __future__ import annotations

import math
from bisect import insort
from fractions import Fraction
from typing import Any


# ------------------------------------------------------------------ validation helpers
def _num(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{what}: not a number: {x!r}")
    if not math.isfinite(x):
        raise ValueError(f"{what}: not finite: {x!r}")
    return x


def _nonneg(x: Any, what: str) -> float:
    _num(x, what)
    if x < 0:
        raise ValueError(f"{what}: negative: {x!r}")
    return x


def _pos(x: Any, what: str) -> float:
    _num(x, what)
    if x <= 0:
        raise ValueError(f"{what}: must be > 0: {x!r}")
    return x


def _count(x: Any, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < 1:
        raise ValueError(f"{what}: not an int >= 1: {x!r}")
    return x


def _quantile(q: Any) -> float:
    _num(q, "quantile")
    if not 0 < q < 1:
        raise ValueError(f"quantile not in (0, 1): {q!r}")
    return q


def _log_term(q: float) -> float:
    # ln(1 / (1 - q)) without losing the digits of a small q
    return -math.log1p(-q)


# ------------------------------------------------------------------ estimates
def service_stats(prompt_lengths, probabilities, fixed_s, per_token_s):
    if not isinstance(prompt_lengths, (list, tuple)) or not isinstance(probabilities, (list, tuple)):
        raise ValueError("prompt_lengths and probabilities must be lists or tuples")
    if len(prompt_lengths) == 0 or len(prompt_lengths) != len(probabilities):
        raise ValueError("empty mix or lengths differ")
    for n in prompt_lengths:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"prompt length not an int >= 0: {n!r}")
    for p in probabilities:
        _nonneg(p, "probability")
    _nonneg(fixed_s, "fixed_s")
    _nonneg(per_token_s, "per_token_s")
    probs = [Fraction(p) for p in probabilities]
    total = sum(probs, Fraction(0))
    if abs(total - 1) > Fraction(1e-9):
        raise ValueError(f"probabilities sum to {float(total)!r}, not 1")
    f, c = Fraction(fixed_s), Fraction(per_token_s)
    times = [f + c * n for n in prompt_lengths]
    weights = [p / total for p in probs]          # normalised: allowed by the prompt
    mean = sum((w * x for w, x in zip(weights, times)), Fraction(0))
    if mean == 0:
        raise ValueError("the mix's mean service time is 0")
    var = sum((w * (x - mean) ** 2 for w, x in zip(weights, times)), Fraction(0))
    return float(mean), float(var / (mean * mean))


def p99_latency_s(arrival_rate, mean_service_s, scv, quantile=0.99):
    _nonneg(arrival_rate, "arrival_rate")
    _pos(mean_service_s, "mean_service_s")
    _nonneg(scv, "scv")
    q = _quantile(quantile)
    s = Fraction(mean_service_s)
    rho = Fraction(arrival_rate) * s
    if rho >= 1:
        return math.inf
    wait = rho * s * (1 + Fraction(scv)) / (2 * (1 - rho))
    return _log_term(q) * float(s + wait)


def utilisation_ceiling(mean_service_s, scv, target_s, quantile=0.99):
    _pos(mean_service_s, "mean_service_s")
    _nonneg(scv, "scv")
    _pos(target_s, "target_s")
    q = _quantile(quantile)
    idle = _log_term(q) * float(mean_service_s)   # the quantile of an idle server
    slack = float(target_s) - idle                # = a x idle
    if slack <= 0:
        return 0.0
    return 2.0 * slack / (2.0 * slack + (1.0 + float(scv)) * idle)


def spike_fluid(service_rate, base_rate, spike_rate, spike_s, timeout_s):
    _pos(service_rate, "service_rate")
    _nonneg(base_rate, "base_rate")
    _nonneg(spike_rate, "spike_rate")
    _nonneg(spike_s, "spike_s")
    _pos(timeout_s, "timeout_s")
    if base_rate >= service_rate:
        raise ValueError("base_rate at or above service_rate: the queue never drains")
    mu, lam, t = float(service_rate), float(base_rate), float(timeout_s)
    backlog = max(0.0, (float(spike_rate) - mu) * float(spike_s))
    drain = backlog / (mu - lam)
    held = mu * t                                  # the backlog whose last wait is exactly t
    dead = (backlog - held) / (mu - lam) + t if backlog > held else 0.0
    return {"backlog": backlog, "drain_s": drain, "dead_window_s": dead}


# ------------------------------------------------------------------ the server
class _Slots:
    """Free times of the slots, kept sorted (exact Fractions)."""

    def __init__(self, servers: int) -> None:
        self.free = [Fraction(0)] * servers

    def start_of(self, now: Fraction) -> Fraction:
        return max(now, self.free[0])

    def add(self, now: Fraction, service: Fraction) -> Fraction:
        start = self.start_of(now)
        self.free.pop(0)
        finish = start + service
        insort(self.free, finish)
        return finish


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


class AdmissionController:
    def __init__(self, servers):
        self._slots = _Slots(_count(servers, "servers"))
        self._clock: Fraction | None = None

    def _check(self, now, service_s, timeout_s):
        _nonneg(now, "now")
        _pos(service_s, "service_s")
        _pos(timeout_s, "timeout_s")
        n = Fraction(now)
        if self._clock is not None and n < self._clock:
            raise ValueError(f"offer at {now!r} earlier than the last offer")
        return n, Fraction(service_s), Fraction(timeout_s)

    def offer(self, now, service_s, timeout_s):
        n, s, t = self._check(now, service_s, timeout_s)
        self._clock = n                       # only after every check passed
        if self._slots.start_of(n) + s <= n + t:
            self._slots.add(n, s)
            return (True, None)
        if s > t:
            return (False, None)
        # offered at n + d it starts at max(n + d, earliest): fits once n + d >= earliest + s - t
        d = _ceil(self._slots.free[0] + s - t - n)
        return (False, max(1, d))


def replay(arrivals, servers, shed, spike_end):
    _count(servers, "servers")
    if not isinstance(shed, bool):
        raise ValueError("shed must be a bool")
    _nonneg(spike_end, "spike_end")
    if not isinstance(arrivals, (list, tuple)):
        raise ValueError("arrivals must be a list or tuple")
    rows = []
    last = None
    for a in arrivals:
        if not isinstance(a, (list, tuple)) or len(a) != 3:
            raise ValueError(f"arrival not a (time, service_s, timeout_s): {a!r}")
        at, s, t = a
        _nonneg(at, "arrival time")
        _pos(s, "service_s")
        _pos(t, "timeout_s")
        if last is not None and at < last:
            raise ValueError("arrival times decrease")
        last = at
        rows.append((Fraction(at), Fraction(s), Fraction(t)))

    controller = AdmissionController(servers) if shed else None
    slots = _Slots(servers)
    accepted, retry, finish = [], [], []
    dead_work, goodput, last_dead = Fraction(0), 0, None
    for (at, s, t), raw in zip(rows, arrivals):
        if controller is not None:
            ok, after = controller.offer(raw[0], raw[1], raw[2])
        else:
            ok, after = True, None
        accepted.append(ok)
        retry.append(after)
        if not ok:
            finish.append(None)
            continue
        f = slots.add(at, s)
        finish.append(float(f))
        if f <= at + t:
            goodput += 1
        else:
            dead_work += s
            last_dead = f if last_dead is None else max(last_dead, f)
    recovery = Fraction(0) if last_dead is None else max(Fraction(0), last_dead - Fraction(spike_end))
    return {"accepted": accepted, "retry_after": retry, "finish": finish,
            "dead_work_s": float(dead_work), "goodput": goodput, "recovery_s": float(recovery)}
