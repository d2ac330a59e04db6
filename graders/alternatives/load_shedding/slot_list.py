"""An independent correct load_shedding solution: a plain list of slots and a bisected ceiling.

Written by the kata's author after the reference, working from the prompt and the stub only
(no blind helper was available in this session), built differently on purpose:

- the service statistics come from the raw moments, scv = E[S^2] / E[S]^2 - 1;
- the utilisation ceiling is found by bisection on the latency quantile itself (60 halvings of
  [0, 1)), not by the closed form;
- the fluid dead window walks the backlog's two linear pieces (spike, then drain);
- the controller keeps one free time per slot in a plain list and scans it, and computes the
  Retry-After by asking, for d = the rounded-up shortfall, whether the request would fit then;
- the replay keeps a list of (finish, service, deadline) for the admitted requests and reads
  the metrics off it at the end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def _real(x: Any, what: str, *, strict: bool = False) -> float:
    if type(x) is bool or not isinstance(x, (int, float)):
        raise ValueError(f"{what}: not a number: {x!r}")
    if math.isnan(x) or math.isinf(x) or x < 0 or (strict and x == 0):
        raise ValueError(f"{what}: out of range: {x!r}")
    return float(x)


def _q(q: Any) -> float:
    v = _real(q, "quantile", strict=True)
    if v >= 1:
        raise ValueError(f"quantile: {q!r}")
    return v


def service_stats(prompt_lengths: Sequence[int], probabilities: Sequence[float], fixed_s: float,
                  per_token_s: float) -> tuple[float, float]:
    if not (isinstance(prompt_lengths, (list, tuple)) and isinstance(probabilities, (list, tuple))):
        raise ValueError("lists please")
    if len(prompt_lengths) == 0 or len(prompt_lengths) != len(probabilities):
        raise ValueError("lengths and probabilities must pair up")
    if any(type(n) is not int or n < 0 for n in prompt_lengths):
        raise ValueError("lengths are ints >= 0")
    ps = [_real(p, "probability") for p in probabilities]
    if not math.isclose(math.fsum(ps), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError("probabilities must sum to 1")
    a, b = _real(fixed_s, "fixed_s"), _real(per_token_s, "per_token_s")
    m1 = math.fsum(p * (a + b * n) for p, n in zip(ps, prompt_lengths))
    if m1 == 0:
        raise ValueError("zero mean service")
    m2 = math.fsum(p * (a + b * n) ** 2 for p, n in zip(ps, prompt_lengths))
    return m1, max(0.0, m2 / (m1 * m1) - 1.0)


def _quantile_latency(lam: float, s: float, c2: float, q: float) -> float:
    rho = lam * s
    if rho >= 1:
        return math.inf
    return math.log(1 / (1 - q)) * (s + rho * s * (1 + c2) / 2 / (1 - rho))


def p99_latency_s(arrival_rate: float, mean_service_s: float, scv: float,
                  quantile: float = 0.99) -> float:
    lam = _real(arrival_rate, "arrival_rate")
    s = _real(mean_service_s, "mean_service_s", strict=True)
    return _quantile_latency(lam, s, _real(scv, "scv"), _q(quantile))


def utilisation_ceiling(mean_service_s: float, scv: float, target_s: float,
                        quantile: float = 0.99) -> float:
    s = _real(mean_service_s, "mean_service_s", strict=True)
    c2, t, q = _real(scv, "scv"), _real(target_s, "target_s", strict=True), _q(quantile)
    if _quantile_latency(0.0, s, c2, q) >= t:
        return 0.0
    lo, hi = 0.0, 1.0  # latency(lo) < t, latency(hi) = inf
    for _ in range(60):
        mid = (lo + hi) / 2
        if _quantile_latency(mid / s, s, c2, q) <= t:
            lo = mid
        else:
            hi = mid
    return lo


def spike_fluid(service_rate: float, base_rate: float, spike_rate: float, spike_s: float,
                timeout_s: float) -> dict[str, float]:
    mu = _real(service_rate, "service_rate", strict=True)
    lam0, lam1 = _real(base_rate, "base_rate"), _real(spike_rate, "spike_rate")
    length, tau = _real(spike_s, "spike_s"), _real(timeout_s, "timeout_s", strict=True)
    if lam0 >= mu:
        raise ValueError("the base load never drains")
    peak = (lam1 - mu) * length if lam1 > mu else 0.0
    fall = mu - lam0  # requests per second the backlog loses after the spike
    threshold = mu * tau  # a backlog above this means a wait above the timeout
    window = 0.0
    if peak > threshold:
        window = tau + (peak - threshold) / fall
    return {"backlog": peak, "drain_s": peak / fall, "dead_window_s": window}


class AdmissionController:
    def __init__(self, servers: int) -> None:
        if type(servers) is not int or servers < 1:
            raise ValueError(f"servers: {servers!r}")
        self.slots = [0.0 for _ in range(servers)]
        self.clock = 0.0

    def _start(self, at: float) -> tuple[int, float]:
        i = min(range(len(self.slots)), key=lambda j: self.slots[j])
        return i, max(at, self.slots[i])

    def offer(self, now: float, service_s: float, timeout_s: float) -> tuple[bool, int | None]:
        at = _real(now, "now")
        need = _real(service_s, "service_s", strict=True)
        patience = _real(timeout_s, "timeout_s", strict=True)
        if at < self.clock:
            raise ValueError("offers must come in time order")
        self.clock = at
        i, start = self._start(at)
        if start + need <= at + patience:
            self.slots[i] = start + need
            return True, None
        if need > patience:
            return False, None
        d = max(1, math.ceil(self.slots[i] + need - patience - at))
        while self._start(at + d)[1] + need > at + d + patience:  # never runs: d is exact
            d += 1
        return False, d


def replay(arrivals: Sequence[Sequence[float]], servers: int, shed: bool,
           spike_end: float) -> dict[str, Any]:
    if not isinstance(arrivals, (list, tuple)) or type(shed) is not bool:
        raise ValueError("bad replay arguments")
    end = _real(spike_end, "spike_end")
    clean: list[tuple[float, float, float]] = []
    for r in arrivals:
        if not isinstance(r, (list, tuple)) or len(r) != 3:
            raise ValueError(f"bad arrival {r!r}")
        a = _real(r[0], "time")
        if clean and a < clean[-1][0]:
            raise ValueError("arrivals out of order")
        clean.append((a, _real(r[1], "service_s", strict=True),
                      _real(r[2], "timeout_s", strict=True)))
    gate = AdmissionController(servers)
    server = AdmissionController(servers)  # its slot list, used as the server itself
    out: dict[str, Any] = {"accepted": [], "retry_after": [], "finish": []}
    done: list[tuple[float, float, float]] = []
    for a, s, t in clean:
        ok, ra = gate.offer(a, s, t) if shed else (True, None)
        out["accepted"].append(ok)
        out["retry_after"].append(ra)
        if ok:
            i, start = server._start(a)
            server.slots[i] = start + s
            done.append((start + s, s, a + t))
            out["finish"].append(start + s)
        else:
            out["finish"].append(None)
    dead = [(f, s) for f, s, deadline in done if f > deadline]
    out["dead_work_s"] = math.fsum(s for _, s in dead)
    out["goodput"] = len(done) - len(dead)
    out["recovery_s"] = max([0.0] + [f - end for f, _ in dead])
    return out
