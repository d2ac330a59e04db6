"""Reference solution for the collectives kata: all-reduce costs, TP layouts, the slow link.

Units: bytes, nanoseconds and GB/s (10^9 bytes per second, which is one byte per ns), so
``bytes / link_gb_s`` is a time in ns.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

ALGORITHMS = ("one_shot", "two_shot", "ring")     # also the tie order: fewer steps first
MAX_PROBE_BYTES = 2**53


def _int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def _real(name: str, value: Any, *, positive: bool) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if not ok or (value <= 0 if positive else value < 0):
        raise ValueError(f"{name} must be a {'positive' if positive else 'non-negative'} "
                         f"finite number, got {value!r}")
    return float(value)


def _algo(name: Any) -> str:
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; expected one of {ALGORITHMS}")
    return str(name)


def _coefficients(algo: str, n: int) -> tuple[int, Fraction]:
    """(steps, bytes per link per byte of message): time = steps x alpha + that x S / link."""
    if algo == "ring":
        return 2 * (n - 1), Fraction(2 * (n - 1), n)
    if algo == "one_shot":
        return 1, Fraction(n - 1)
    return 2, Fraction(2 * (n - 1), n)                  # two_shot


def allreduce_time_ns(algo: str, n: int, nbytes: int, alpha_ns: float,
                      link_gb_s: float) -> float:
    steps, per_byte = _coefficients(_algo(algo), _int("n", n, 2))
    size = _int("nbytes", nbytes, 0)
    alpha = _real("alpha_ns", alpha_ns, positive=False)
    link = _real("link_gb_s", link_gb_s, positive=True)
    return steps * alpha + float(per_byte) * size / link


def bus_bandwidth_gb_s(n: int, nbytes: int, time_ns: float) -> float:
    n = _int("n", n, 2)
    size = _int("nbytes", nbytes, 0)
    t = _real("time_ns", time_ns, positive=True)
    return size / t * 2 * (n - 1) / n


def _exact_args(n: int, alpha_ns: int, link_gb_s: int) -> tuple[int, int, int]:
    return _int("n", n, 2), _int("alpha_ns", alpha_ns, 0), _int("link_gb_s", link_gb_s, 1)


def _exact_time(algo: str, n: int, nbytes: int, alpha: int, link: int) -> Fraction:
    steps, per_byte = _coefficients(algo, n)
    return steps * alpha + per_byte * nbytes / link


def crossover_bytes(small_algo: str, large_algo: str, n: int, alpha_ns: int,
                    link_gb_s: int) -> int | None:
    small, large = _algo(small_algo), _algo(large_algo)
    n, alpha, link = _exact_args(n, alpha_ns, link_gb_s)
    a_steps, a_byte = _coefficients(small, n)
    b_steps, b_byte = _coefficients(large, n)
    # large is strictly faster at S  <=>  d0 + d1 x S > 0
    d0 = Fraction((a_steps - b_steps) * alpha)
    d1 = (a_byte - b_byte) / link
    if d1 < 0:
        return None                     # slower for every large enough message
    if d1 == 0:
        return 1 if d0 > 0 else None
    return max(1, math.floor(-d0 / d1) + 1)


def best_allreduce(n: int, nbytes: int, alpha_ns: int, link_gb_s: int) -> str:
    n, alpha, link = _exact_args(n, alpha_ns, link_gb_s)
    size = _int("nbytes", nbytes, 0)
    return min(ALGORITHMS, key=lambda a: _exact_time(a, n, size, alpha, link))


def _model(cfg: dict[str, Any]) -> tuple[int, int, int]:
    return (_int("hidden_size", cfg.get("hidden_size"), 1),
            _int("num_hidden_layers", cfg.get("num_hidden_layers"), 1),
            _int("num_attention_heads", cfg.get("num_attention_heads"), 1))


def _tp(cfg: dict[str, Any], tp: int) -> int:
    heads = _model(cfg)[2]
    if _int("tp", tp, 1) > heads or heads % tp:
        raise ValueError(f"tp={tp} does not divide the {heads} attention heads")
    return tp


def allreduces_per_token(cfg: dict[str, Any], tp: int) -> int:
    return 0 if _tp(cfg, tp) == 1 else 2 * _model(cfg)[1]


def allreduce_bytes(cfg: dict[str, Any], batch: int, act_bytes: int = 2) -> int:
    return _int("batch", batch, 1) * _model(cfg)[0] * _int("act_bytes", act_bytes, 1)


def step_time_ns(cfg: dict[str, Any], batch: int, tp: int, pp: int, step_bytes: float,
                 hbm_gb_s: float, alpha_ns: float, link_gb_s: float,
                 act_bytes: int = 2) -> float:
    count = allreduces_per_token(cfg, tp)
    if _int("pp", pp, 1) > _model(cfg)[1]:
        raise ValueError(f"pp={pp} exceeds the layer count")
    read = _real("step_bytes", step_bytes, positive=False)
    hbm = _real("hbm_gb_s", hbm_gb_s, positive=True)
    alpha = _real("alpha_ns", alpha_ns, positive=False)
    link = _real("link_gb_s", link_gb_s, positive=True)
    size = allreduce_bytes(cfg, batch, act_bytes)
    # The pp stages run one after another for the batch: together they read step_bytes on
    # tp GPUs each, so pp cuts the bytes per GPU but not the time.
    t = read / (tp * hbm)
    if count:
        t += count * min(allreduce_time_ns(a, tp, size, alpha, link) for a in ALGORITHMS)
    return t + (pp - 1) * (alpha + size / link)


def best_layout(cfg: dict[str, Any], batch: int, layouts: list[tuple[int, int]],
                step_bytes: float, hbm_gb_s: float, alpha_ns: float, link_gb_s: float,
                act_bytes: int = 2) -> tuple[int, int]:
    if not isinstance(layouts, (list, tuple)) or not layouts:
        raise ValueError("layouts must be a non-empty list of (tp, pp) pairs")
    best: tuple[float, tuple[int, int]] | None = None
    for layout in layouts:
        if not isinstance(layout, (list, tuple)) or len(layout) != 2:
            raise ValueError(f"a layout is a (tp, pp) pair, got {layout!r}")
        tp, pp = layout
        t = step_time_ns(cfg, batch, tp, pp, step_bytes, hbm_gb_s, alpha_ns, link_gb_s,
                         act_bytes)
        if best is None or t < best[0]:
            best = (t, (tp, pp))
    assert best is not None
    return best[1]


def step_slowdown(comm_share: float, link_slowdown: float) -> float:
    c = _real("comm_share", comm_share, positive=False)
    if c > 1:
        raise ValueError(f"comm_share must be in [0, 1], got {comm_share!r}")
    f = _real("link_slowdown", link_slowdown, positive=True)
    if f < 1:
        raise ValueError(f"link_slowdown must be >= 1, got {link_slowdown!r}")
    return (1 - c) + c * f


class SlowLinkSearch:
    """Bisection over the GPUs that may own the slow link, one ring all-reduce per halving."""

    def __init__(self, n_gpus: int, alpha_ns: float, link_gb_s: float) -> None:
        self._n = _int("n_gpus", n_gpus, 3)
        self._alpha = _real("alpha_ns", alpha_ns, positive=False)
        self._link = _real("link_gb_s", link_gb_s, positive=True)
        self._suspects = list(range(self._n))
        self._pending: tuple[list[int], int, list[int]] | None = None   # probe, bytes, tested

    def next_probe(self) -> tuple[list[int], int] | None:
        if len(self._suspects) == 1:
            return None
        if self._pending is None:
            half = self._suspects[:len(self._suspects) // 2]
            members = list(half)
            if len(members) == 1:
                suspects = set(self._suspects)
                cleared = next((g for g in range(self._n) if g not in suspects), None)
                if cleared is not None:
                    members.append(cleared)             # a GPU known healthy pads the probe
                else:
                    half = members = self._suspects[:2]  # three suspects, none cleared yet
            k = len(members)
            # Make the bandwidth term ten times the latency term, so a link at half speed
            # adds over 80% to the time, far above the 2% noise.
            size = min(MAX_PROBE_BYTES, max(1, math.ceil(10 * k * self._alpha * self._link)))
            self._pending = (sorted(members), size, half)
        members, size, _ = self._pending
        return list(members), size

    def record(self, measured_ns: float) -> None:
        if self._pending is None:
            raise RuntimeError("record() needs a probe from next_probe() first")
        t = _real("measured_ns", measured_ns, positive=True)
        members, size, tested = self._pending
        k = len(members)
        healthy = allreduce_time_ns("ring", k, size, self._alpha, self._link)
        halved = allreduce_time_ns("ring", k, size, self._alpha, self._link / 2)
        slow = t > (healthy + halved) / 2
        inside = set(tested)
        self._suspects = [g for g in self._suspects if (g in inside) == slow]
        self._pending = None

    def culprit(self) -> int:
        if len(self._suspects) != 1:
            raise RuntimeError("the slow link is not known yet")
        return self._suspects[0]
