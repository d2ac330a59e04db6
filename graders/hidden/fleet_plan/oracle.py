"""Independent oracles for the fleet_plan hidden tests.

Nothing here shares code with the reference: survival by Hall's condition over every set of
user regions (not a max-flow), the smallest fleet and the tail packing by brute force over
every placement or set partition, the prices and the canary in exact fractions where the
formula allows it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from fractions import Fraction
from statistics import NormalDist


# ------------------------------------------------------------------ failover
def survives(demand: Sequence[int], near: Sequence[Sequence[int]], n: Sequence[int]) -> bool:
    """Hall's condition for every failed region: each set S of user regions has at least
    sum(demand[S]) surviving replicas in the regions S can reach."""
    r = len(demand)
    reach = [{u, *near[u]} for u in range(r)]
    for failed in range(r):
        for mask in range(1, 1 << r):
            users = [u for u in range(r) if mask >> u & 1]
            servers = set().union(*(reach[u] for u in users)) - {failed}
            if sum(demand[u] for u in users) > sum(n[s] for s in servers):
                return False
    return True


def placements(total: int, caps: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every placement of exactly ``total`` replicas within ``caps``."""
    if not caps:
        if total == 0:
            yield ()
        return
    for first in range(min(caps[0], total) + 1):
        for rest in placements(total - first, caps[1:]):
            yield (first, *rest)


def some_survivor(demand: Sequence[int], near: Sequence[Sequence[int]], caps: Sequence[int],
                  total: int) -> tuple[int, ...] | None:
    """A surviving placement of exactly ``total`` replicas within the caps, or None.

    Survival is monotone (a replica more never hurts), so when none of total T - 1
    survives, none of any smaller total does either (each extends to T - 1 within the caps).
    """
    return next((n for n in placements(total, caps) if survives(demand, near, n)), None)


# ------------------------------------------------------------------ autoscaling
def headroom(g: float, t: float, model: str) -> float:
    return math.expm1(t * math.log1p(g)) if model == "compound" else g * t


# ------------------------------------------------------------------ tiering
def _partitions(k: int) -> Iterator[list[int]]:
    """Restricted growth strings: every set partition of k items, each once."""
    labels = [0] * k

    def go(i: int, top: int) -> Iterator[list[int]]:
        if i == k:
            yield labels
            return
        for b in range(top + 2):
            labels[i] = b
            yield from go(i + 1, max(top, b))

    if k:
        yield from go(1, 0)
    else:
        yield labels


def packing_ok(loads: Sequence[int], mems: Sequence[int], copies: int, gpu_load: int,
               gpu_mem: int, answer: object) -> str | None:
    """What is wrong with ``answer`` as a packing (None when it is a valid packing)."""
    if not isinstance(answer, list) or len(answer) != len(loads):
        return f"expected one list per model ({len(loads)}), got {answer!r}"
    used: dict[int, list[int]] = {}
    for i, gpus in enumerate(answer):
        if not isinstance(gpus, list) or len(gpus) != copies:
            return f"model {i}: expected {copies} GPU indices, got {gpus!r}"
        if any(isinstance(g, bool) or not isinstance(g, int) or g < 0 for g in gpus):
            return f"model {i}: GPU indices must be ints >= 0, got {gpus!r}"
        if len(set(gpus)) != copies:
            return f"model {i}: two replicas on one GPU ({gpus!r})"
        for g in gpus:
            used.setdefault(g, []).append(i)
    if sorted(used) != list(range(len(used))):
        return f"GPUs must be numbered 0..G-1 with each used, got {sorted(used)}"
    for g, models in used.items():
        if sum(loads[i] for i in models) > gpu_load:
            return f"GPU {g} carries load {sum(loads[i] for i in models)} > {gpu_load}"
        if sum(mems[i] for i in models) > gpu_mem:
            return f"GPU {g} holds memory {sum(mems[i] for i in models)} > {gpu_mem}"
    return None


def fewest_gpus(loads: Sequence[int], mems: Sequence[int], copies: int, gpu_load: int,
                gpu_mem: int) -> int:
    """The fewest GPUs, by every set partition of the replicas."""
    items = [i for i in range(len(loads)) for _ in range(copies)]
    best = len(items)
    for labels in _partitions(len(items)):
        bins = max(labels, default=-1) + 1
        if bins >= best:
            continue
        ok = True
        for b in range(bins):
            members = [items[j] for j, lb in enumerate(labels) if lb == b]
            if (len(set(members)) != len(members) or sum(loads[i] for i in members) > gpu_load
                    or sum(mems[i] for i in members) > gpu_mem):
                ok = False
                break
        if ok:
            best = bins
    return best


# ------------------------------------------------------------------ pricing
def prices(replica: dict[str, float], usd_h: float, mfu: float, batch: int, ctx: int,
           util: float) -> tuple[Fraction, Fraction]:
    """Exact prices: USD per GPU-second over tokens per busy GPU-second, per phase."""
    f = {k: Fraction(v) for k, v in replica.items()}
    usd_h_f, mfu_f, util_f = Fraction(usd_h), Fraction(mfu), Fraction(util)
    flops = mfu_f * f["gpus"] * f["peak_flops"]
    prefill = flops / (2 * f["params"])
    step = max(batch * 2 * f["params"] / flops,
               (f["weight_bytes"] + batch * ctx * f["kv_bytes_per_token"])
               / (f["gpus"] * f["bandwidth"]))
    per_s = f["gpus"] * usd_h_f / 3600
    return (10**6 * per_s / (prefill * util_f), 10**6 * per_s * step / (batch * util_f))


# ------------------------------------------------------------------ canary
def canary_x(p0: float, p1: float, alpha: float, power: float) -> float:
    """The unrounded per-arm size (quantiles by bisection of the normal cdf, not inv_cdf)."""
    def quantile(q: float) -> float:
        lo, hi = -40.0, 40.0
        for _ in range(200):
            mid = (lo + hi) / 2
            if 0.5 * math.erfc(-mid / math.sqrt(2)) < q:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    za, zb = quantile(1 - alpha), quantile(power)
    pbar = (p0 + p1) / 2
    root = za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p0 * (1 - p0) + p1 * (1 - p1))
    return (root / (p1 - p0)) ** 2


def normal_quantile(q: float) -> float:
    return NormalDist().inv_cdf(q)
