"""A second correct collectives solution, written from the prompt, the stub and the public
tests only.

Written by the kata's author (no helper agent was available) in a different style from
the reference: every time is kept as an exact integer numerator over the common
denominator n x link (no Fraction), the crossover is solved by integer floor division,
and the search is non-adaptive: probe j is the larger side of "bit j of the GPU id", so
the probes are fixed in advance and the culprit's id is read off the answers bit by bit.
A probe counts as slow when it is more than 1.25 x the healthy model's time, with
messages where the bandwidth term is at least four times the latency term.
"""

from __future__ import annotations

import math
from typing import Any

_ORDER = ["one_shot", "two_shot", "ring"]


def _shape(algo: str, n: int) -> tuple[int, int]:
    """(steps, numerator over n of the bytes per link per message byte)."""
    if algo == "one_shot":
        return 1, (n - 1) * n
    if algo == "two_shot":
        return 2, 2 * (n - 1)
    return 2 * (n - 1), 2 * (n - 1)


def _bad(msg: str) -> ValueError:
    return ValueError(msg)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _need_int(x: Any, lo: int, what: str) -> int:
    if not _is_int(x) or x < lo:
        raise _bad(f"{what}: need an int >= {lo}, got {x!r}")
    return int(x)


def _need_num(x: Any, what: str, allow_zero: bool) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise _bad(f"{what}: need a finite number, got {x!r}")
    if x < 0 or (x == 0 and not allow_zero):
        raise _bad(f"{what}: out of range: {x!r}")
    return float(x)


def _need_algo(a: Any) -> str:
    if not isinstance(a, str) or a not in _ORDER:
        raise _bad(f"unknown all-reduce algorithm {a!r}")
    return a


def allreduce_time_ns(algo: str, n: int, nbytes: int, alpha_ns: float,
                      link_gb_s: float) -> float:
    steps, per = _shape(_need_algo(algo), _need_int(n, 2, "n"))
    s = _need_int(nbytes, 0, "nbytes")
    a = _need_num(alpha_ns, "alpha_ns", True)
    b = _need_num(link_gb_s, "link_gb_s", False)
    return steps * a + per * s / (n * b)


def bus_bandwidth_gb_s(n: int, nbytes: int, time_ns: float) -> float:
    n = _need_int(n, 2, "n")
    s = _need_int(nbytes, 0, "nbytes")
    t = _need_num(time_ns, "time_ns", False)
    return (2 * (n - 1) * s) / (n * t)


def _scaled(algo: str, n: int, s: int, alpha: int, link: int) -> int:
    """The time x n x link, an exact integer."""
    steps, per = _shape(algo, n)
    return steps * alpha * n * link + per * s


def _exact_inputs(n: Any, alpha: Any, link: Any) -> tuple[int, int, int]:
    return _need_int(n, 2, "n"), _need_int(alpha, 0, "alpha_ns"), _need_int(link, 1, "link_gb_s")


def crossover_bytes(small_algo: str, large_algo: str, n: int, alpha_ns: int,
                    link_gb_s: int) -> int | None:
    small, large = _need_algo(small_algo), _need_algo(large_algo)
    n, alpha, link = _exact_inputs(n, alpha_ns, link_gb_s)
    # scaled(small) - scaled(large) = c0 + c1 x S; large strictly faster where it is > 0
    c0 = _scaled(small, n, 0, alpha, link) - _scaled(large, n, 0, alpha, link)
    c1 = (_scaled(small, n, 1, alpha, link) - _scaled(small, n, 0, alpha, link)) - \
         (_scaled(large, n, 1, alpha, link) - _scaled(large, n, 0, alpha, link))
    if c1 < 0:
        return None
    if c1 == 0:
        return 1 if c0 > 0 else None
    # smallest S with c0 + c1 S > 0  <=>  S > -c0 / c1
    return max(1, (-c0) // c1 + 1)


def best_allreduce(n: int, nbytes: int, alpha_ns: int, link_gb_s: int) -> str:
    n, alpha, link = _exact_inputs(n, alpha_ns, link_gb_s)
    s = _need_int(nbytes, 0, "nbytes")
    best = _ORDER[0]
    for name in _ORDER[1:]:
        if _scaled(name, n, s, alpha, link) < _scaled(best, n, s, alpha, link):
            best = name
    return best


def _field(cfg: dict[str, Any], key: str) -> int:
    if not isinstance(cfg, dict) or key not in cfg:
        raise _bad(f"config needs {key}")
    return _need_int(cfg[key], 1, key)


def allreduces_per_token(cfg: dict[str, Any], tp: int) -> int:
    layers = _field(cfg, "num_hidden_layers")
    heads = _field(cfg, "num_attention_heads")
    tp = _need_int(tp, 1, "tp")
    if heads % tp != 0:
        raise _bad(f"tp {tp} does not divide {heads} heads")
    return 2 * layers if tp > 1 else 0


def allreduce_bytes(cfg: dict[str, Any], batch: int, act_bytes: int = 2) -> int:
    return _need_int(batch, 1, "batch") * _field(cfg, "hidden_size") * \
        _need_int(act_bytes, 1, "act_bytes")


def step_time_ns(cfg: dict[str, Any], batch: int, tp: int, pp: int, step_bytes: float,
                 hbm_gb_s: float, alpha_ns: float, link_gb_s: float,
                 act_bytes: int = 2) -> float:
    calls = allreduces_per_token(cfg, tp)
    pp = _need_int(pp, 1, "pp")
    if pp > _field(cfg, "num_hidden_layers"):
        raise _bad("more stages than layers")
    read = _need_num(step_bytes, "step_bytes", True)
    hbm = _need_num(hbm_gb_s, "hbm_gb_s", False)
    alpha = _need_num(alpha_ns, "alpha_ns", True)
    link = _need_num(link_gb_s, "link_gb_s", False)
    msg = allreduce_bytes(cfg, batch, act_bytes)
    hbm_term = read / hbm / tp
    comm = 0.0
    if calls:
        comm = calls * min(allreduce_time_ns(a, tp, msg, alpha, link) for a in _ORDER)
    handoffs = (pp - 1) * (alpha + msg / link)
    return hbm_term + comm + handoffs


def best_layout(cfg: dict[str, Any], batch: int, layouts: list[tuple[int, int]],
                step_bytes: float, hbm_gb_s: float, alpha_ns: float, link_gb_s: float,
                act_bytes: int = 2) -> tuple[int, int]:
    if not isinstance(layouts, (list, tuple)) or len(layouts) == 0:
        raise _bad("no layouts")
    times = []
    for entry in layouts:
        if not isinstance(entry, (list, tuple)) or len(entry) != 2:
            raise _bad(f"bad layout {entry!r}")
        times.append(step_time_ns(cfg, batch, entry[0], entry[1], step_bytes, hbm_gb_s,
                                  alpha_ns, link_gb_s, act_bytes))
    i = times.index(min(times))
    return (layouts[i][0], layouts[i][1])


def step_slowdown(comm_share: float, link_slowdown: float) -> float:
    c = _need_num(comm_share, "comm_share", True)
    f = _need_num(link_slowdown, "link_slowdown", False)
    if c > 1 or f < 1:
        raise _bad("comm_share must be in [0, 1] and link_slowdown >= 1")
    return 1 + c * (f - 1)


class SlowLinkSearch:
    def __init__(self, n_gpus: int, alpha_ns: float, link_gb_s: float) -> None:
        self.n = _need_int(n_gpus, 3, "n_gpus")
        self.alpha = _need_num(alpha_ns, "alpha_ns", True)
        self.link = _need_num(link_gb_s, "link_gb_s", False)
        self.bits = (self.n - 1).bit_length()
        self.answers: list[bool] = []       # answers[j]: is the culprit's bit j set?
        self.asked = False                   # next_probe() handed out probe len(answers)

    def _probe(self, j: int) -> tuple[list[int], bool]:
        """Probe j: the larger side of bit j (>= 2 GPUs since n >= 3), and which side it is."""
        ones = [g for g in range(self.n) if g >> j & 1]
        zeros = [g for g in range(self.n) if not g >> j & 1]
        return (ones, True) if len(ones) >= len(zeros) else (zeros, False)

    def _nbytes(self, k: int) -> int:
        # bandwidth term 2(k-1)/k x S / link >= 4 x latency term 2(k-1) x alpha
        return min(2**53, max(1, math.ceil(4 * k * self.alpha * self.link)))

    def next_probe(self) -> tuple[list[int], int] | None:
        j = len(self.answers)
        if j == self.bits:
            return None
        gpus, _ = self._probe(j)
        self.asked = True
        return gpus, self._nbytes(len(gpus))

    def record(self, measured_ns: float) -> None:
        j = len(self.answers)
        if j == self.bits or not self.asked:
            raise RuntimeError("nothing to record: no probe is pending")
        t = _need_num(measured_ns, "measured_ns", False)
        self.asked = False
        gpus, side = self._probe(j)
        k = len(gpus)
        healthy = allreduce_time_ns("ring", k, self._nbytes(k), self.alpha, self.link)
        slow = t > 1.25 * healthy
        self.answers.append(slow == side)

    def culprit(self) -> int:
        if len(self.answers) < self.bits:
            raise RuntimeError("search not finished")
        return sum(1 << j for j, bit in enumerate(self.answers) if bit)
