"""A third correct collectives solution, written from the prompt, the stub and the public
tests only.

Written by the kata's author (no helper agent was available), differently again: the
crossover is found by searching sizes (doubling, then bisection on the exact predicate
"large is strictly faster here") instead of solving for the root; times are computed in
Fraction throughout and converted at the end; the slow-link search keeps its suspects as a
contiguous range of GPU ids, probes the upper half, pads a lone GPU with the lowest GPU it
has cleared, and always sends the largest message the protocol allows (2**53 bytes).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

NAMES = ("one_shot", "two_shot", "ring")


def _i(v: Any, lo: int, name: str) -> int:
    if type(v) is not int or v < lo:
        raise ValueError(f"{name}={v!r}: an int >= {lo} is required")
    return v


def _f(v: Any, name: str, *, zero_ok: bool) -> Fraction:
    if type(v) not in (int, float) or not math.isfinite(v) or v < 0 or (v == 0 and not zero_ok):
        raise ValueError(f"{name}={v!r} is out of range")
    return Fraction(v)


def _time(algo: str, n: int, s: int, alpha: Fraction, link: Fraction) -> Fraction:
    if algo == "ring":
        return 2 * (n - 1) * (alpha + Fraction(s, n) / link)
    if algo == "one_shot":
        return alpha + (n - 1) * s / link
    if algo == "two_shot":
        return 2 * (alpha + Fraction((n - 1) * s, n) / link)
    raise ValueError(f"no algorithm {algo!r}")


def allreduce_time_ns(algo: str, n: int, nbytes: int, alpha_ns: float,
                      link_gb_s: float) -> float:
    if algo not in NAMES:
        raise ValueError(f"no algorithm {algo!r}")
    return float(_time(algo, _i(n, 2, "n"), _i(nbytes, 0, "nbytes"),
                       _f(alpha_ns, "alpha_ns", zero_ok=True),
                       _f(link_gb_s, "link_gb_s", zero_ok=False)))


def bus_bandwidth_gb_s(n: int, nbytes: int, time_ns: float) -> float:
    n, s = _i(n, 2, "n"), _i(nbytes, 0, "nbytes")
    algbw = Fraction(s) / _f(time_ns, "time_ns", zero_ok=False)
    return float(algbw * Fraction(2 * (n - 1), n))


def crossover_bytes(small_algo: str, large_algo: str, n: int, alpha_ns: int,
                    link_gb_s: int) -> int | None:
    if small_algo not in NAMES or large_algo not in NAMES:
        raise ValueError("unknown algorithm")
    n = _i(n, 2, "n")
    alpha, link = Fraction(_i(alpha_ns, 0, "alpha_ns")), Fraction(_i(link_gb_s, 1, "link_gb_s"))

    def wins(s: int) -> bool:
        return _time(large_algo, n, s, alpha, link) < _time(small_algo, n, s, alpha, link)

    # slopes per byte decide whether the large algorithm stays ahead for big messages
    slope_small = _time(small_algo, n, 1, alpha, link) - _time(small_algo, n, 0, alpha, link)
    slope_large = _time(large_algo, n, 1, alpha, link) - _time(large_algo, n, 0, alpha, link)
    if slope_large > slope_small:
        return None
    if slope_large == slope_small:
        return 1 if wins(1) else None
    if wins(1):
        return 1
    lo, hi = 1, 2                      # wins(lo) is False; find hi with wins(hi) True
    while not wins(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if wins(mid):
            hi = mid
        else:
            lo = mid
    return hi


def best_allreduce(n: int, nbytes: int, alpha_ns: int, link_gb_s: int) -> str:
    n, s = _i(n, 2, "n"), _i(nbytes, 0, "nbytes")
    alpha, link = Fraction(_i(alpha_ns, 0, "alpha_ns")), Fraction(_i(link_gb_s, 1, "link_gb_s"))
    ranked = sorted(range(3), key=lambda i: (_time(NAMES[i], n, s, alpha, link), i))
    return NAMES[ranked[0]]


def _cfg(cfg: dict[str, Any]) -> tuple[int, int, int]:
    try:
        return (_i(cfg["hidden_size"], 1, "hidden_size"),
                _i(cfg["num_hidden_layers"], 1, "num_hidden_layers"),
                _i(cfg["num_attention_heads"], 1, "num_attention_heads"))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"config: {exc}") from None


def allreduces_per_token(cfg: dict[str, Any], tp: int) -> int:
    _, layers, heads = _cfg(cfg)
    if _i(tp, 1, "tp") > heads or heads % tp:
        raise ValueError(f"tp={tp} must divide {heads} heads")
    return 0 if tp == 1 else 2 * layers


def allreduce_bytes(cfg: dict[str, Any], batch: int, act_bytes: int = 2) -> int:
    hidden, _, _ = _cfg(cfg)
    return _i(batch, 1, "batch") * hidden * _i(act_bytes, 1, "act_bytes")


def _step(cfg: dict[str, Any], batch: int, tp: int, pp: int, step_bytes: float, hbm_gb_s: float,
          alpha_ns: float, link_gb_s: float, act_bytes: int) -> Fraction:
    calls = allreduces_per_token(cfg, tp)
    if _i(pp, 1, "pp") > _cfg(cfg)[1]:
        raise ValueError("pp above the layer count")
    read = _f(step_bytes, "step_bytes", zero_ok=True)
    hbm = _f(hbm_gb_s, "hbm_gb_s", zero_ok=False)
    alpha = _f(alpha_ns, "alpha_ns", zero_ok=True)
    link = _f(link_gb_s, "link_gb_s", zero_ok=False)
    s = allreduce_bytes(cfg, batch, act_bytes)
    t = read / (tp * hbm) + (pp - 1) * (alpha + s / link)
    if calls:
        t += calls * min(_time(a, tp, s, alpha, link) for a in NAMES)
    return t


def step_time_ns(cfg: dict[str, Any], batch: int, tp: int, pp: int, step_bytes: float,
                 hbm_gb_s: float, alpha_ns: float, link_gb_s: float,
                 act_bytes: int = 2) -> float:
    return float(_step(cfg, batch, tp, pp, step_bytes, hbm_gb_s, alpha_ns, link_gb_s, act_bytes))


def best_layout(cfg: dict[str, Any], batch: int, layouts: list[tuple[int, int]],
                step_bytes: float, hbm_gb_s: float, alpha_ns: float, link_gb_s: float,
                act_bytes: int = 2) -> tuple[int, int]:
    if not isinstance(layouts, (list, tuple)) or not layouts or \
            any(not isinstance(x, (list, tuple)) or len(x) != 2 for x in layouts):
        raise ValueError("layouts: a non-empty list of (tp, pp)")
    scored = [(_step(cfg, batch, tp, pp, step_bytes, hbm_gb_s, alpha_ns, link_gb_s, act_bytes), i)
              for i, (tp, pp) in enumerate(layouts)]
    _, i = min(scored)
    return (layouts[i][0], layouts[i][1])


def step_slowdown(comm_share: float, link_slowdown: float) -> float:
    c = _f(comm_share, "comm_share", zero_ok=True)
    f = _f(link_slowdown, "link_slowdown", zero_ok=False)
    if c > 1 or f < 1:
        raise ValueError("comm_share in [0, 1], link_slowdown >= 1")
    return float(1 - c + c * f)


class SlowLinkSearch:
    BYTES = 2**53

    def __init__(self, n_gpus: int, alpha_ns: float, link_gb_s: float) -> None:
        self.n = _i(n_gpus, 3, "n_gpus")
        self.alpha = _f(alpha_ns, "alpha_ns", zero_ok=True)
        self.link = _f(link_gb_s, "link_gb_s", zero_ok=False)
        self.lo, self.hi = 0, self.n        # suspects: lo .. hi - 1
        self.pending: tuple[list[int], int, int] | None = None   # gpus, tested lo, tested hi

    def next_probe(self) -> tuple[list[int], int] | None:
        if self.hi - self.lo == 1:
            return None
        if self.pending is None:
            mid = self.lo + (self.hi - self.lo) // 2
            a, b = mid, self.hi                       # the upper half
            gpus = list(range(a, b))
            if len(gpus) == 1:
                cleared = 0 if self.lo > 0 else self.hi if self.hi < self.n else None
                if cleared is None:                  # all three still suspect
                    a, b = self.lo + 1, self.hi
                    gpus = list(range(a, b))
                else:
                    gpus = sorted(gpus + [cleared])
            self.pending = (gpus, a, b)
        return list(self.pending[0]), self.BYTES

    def record(self, measured_ns: float) -> None:
        if self.pending is None:
            raise RuntimeError("no probe pending")
        t = _f(measured_ns, "measured_ns", zero_ok=False)
        gpus, a, b = self.pending
        k = len(gpus)
        healthy = 2 * (k - 1) * (self.alpha + Fraction(self.BYTES, k) / self.link)
        if t > healthy * Fraction(3, 2):
            self.lo, self.hi = a, b
        elif a == self.lo:
            self.lo = b
        else:
            self.hi = a
        self.pending = None

    def culprit(self) -> int:
        if self.hi - self.lo != 1:
            raise RuntimeError("not done")
        return self.lo
