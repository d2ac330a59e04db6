"""An independent correct fleet_plan solution: Hall's condition, branch and bound, fractions.

Written by the kata's author after the reference, working from the prompt and the stub only
(no blind helper was available in this session), in a deliberately different style:

- survival by Hall's condition (every set of user regions has its demand among the surviving
  replicas it can reach) instead of a max-flow;
- the smallest fleet by a depth-first search over regions with a running bound (the best
  total found so far), not by walking totals upward;
- the tail packing model by model: all copies of a model are placed at once as a
  combination of distinct GPUs, with the GPUs kept in a canonical order;
- prices in ``fractions.Fraction`` converted to float at the end; the canary's quantiles
  from ``NormalDist`` as the prompt says.

Changed later, when a blind test made the prompt exact there: an int too large for a float
and a growth factor (or a replica count) that overflows a float raise ValueError.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from statistics import NormalDist
from typing import Any

KEYS = ("gpus", "params", "weight_bytes", "kv_bytes_per_token", "peak_flops", "bandwidth")


def _bad(msg: str) -> ValueError:
    return ValueError(msg)


def _is_num(x: Any) -> bool:
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:       # an int too large for a float
        return False


def _count(x: Any, lo: int, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < lo:
        raise _bad(f"{what}: an int >= {lo} expected, got {x!r}")
    return x


def _counts(xs: Any, lo: int, what: str) -> list[int]:
    if not isinstance(xs, (list, tuple)):
        raise _bad(f"{what}: a list expected, got {xs!r}")
    return [_count(x, lo, what) for x in xs]


def _real(x: Any, what: str, lo: float = 0.0, strict: bool = False,
          hi: float | None = None, hi_strict: bool = False) -> float:
    if not _is_num(x):
        raise _bad(f"{what}: a finite number expected, got {x!r}")
    if x < lo or (strict and x == lo):
        raise _bad(f"{what}: out of range, got {x!r}")
    if hi is not None and (x > hi or (hi_strict and x == hi)):
        raise _bad(f"{what}: out of range, got {x!r}")
    return float(x)


# ------------------------------------------------------------------ failover
def _reach(demand: Any, near: Any) -> tuple[list[int], list[int]]:
    """Demand and, per user region, the bitmask of regions allowed to serve it."""
    d = _counts(demand, 0, "demand")
    r = len(d)
    if r < 2:
        raise _bad("two regions at least")
    if not isinstance(near, (list, tuple)) or len(near) != r:
        raise _bad("near: one list per region")
    masks = []
    for u, row in enumerate(near):
        vs = _counts(row, 0, f"near[{u}]")
        if len(set(vs)) != len(vs) or any(v == u or v >= r for v in vs):
            raise _bad(f"near[{u}] must name other regions once each")
        masks.append((1 << u) | sum(1 << v for v in vs))
    return d, masks


def _ok(d: list[int], masks: list[int], n: Sequence[int]) -> bool:
    r = len(d)
    for dead in range(r):
        for users in range(1, 1 << r):
            reach = 0
            need = 0
            for u in range(r):
                if users >> u & 1:
                    reach |= masks[u]
                    need += d[u]
            have = sum(n[s] for s in range(r) if reach >> s & 1 and s != dead)
            if need > have:
                return False
    return True


def survives(demand: Sequence[int], near: Sequence[Sequence[int]],
             placement: Sequence[int]) -> bool:
    d, masks = _reach(demand, near)
    n = _counts(placement, 0, "placement")
    if len(n) != len(d):
        raise _bad("placement: one count per region")
    return _ok(d, masks, n)


def smallest_fleet(demand: Sequence[int], near: Sequence[Sequence[int]],
                   caps: Sequence[int]) -> list[int] | None:
    d, masks = _reach(demand, near)
    c = _counts(caps, 0, "caps")
    if len(c) != len(d):
        raise _bad("caps: one cap per region")
    if not _ok(d, masks, c):
        return None
    best: list[list[int]] = [list(c)]
    r = len(d)

    def dfs(prefix: list[int], used: int) -> None:
        if used >= sum(best[0]):
            return
        if len(prefix) == r:
            if _ok(d, masks, prefix):
                best[0] = list(prefix)
            return
        i = len(prefix)
        # The rest of the regions at their caps must still survive (monotone), else prune.
        if not _ok(d, masks, prefix + c[i:]):
            return
        for x in range(c[i] + 1):
            dfs(prefix + [x], used + x)

    dfs([], 0)
    return best[0]


# ------------------------------------------------------------------ autoscaling
def headroom(growth_per_min: float, lead_min: float, model: str = "compound") -> float:
    g = _real(growth_per_min, "growth_per_min")
    t = _real(lead_min, "lead_min")
    if model == "linear":
        h = g * t
    elif model == "compound":
        try:
            h = math.expm1(t * math.log1p(g))
        except OverflowError:
            h = math.inf
    else:
        raise _bad(f"unknown growth model {model!r}")
    if math.isinf(h):
        raise _bad("the growth factor overflows a float")
    return h


def scale_target(ceiling: float, growth_per_min: float, lead_min: float,
                 model: str = "compound") -> float:
    c = _real(ceiling, "ceiling", 0.0, True, 1.0)
    return c / (1 + headroom(growth_per_min, lead_min, model))


def replicas_ahead(load: float, per_replica: float, growth_per_min: float, lead_min: float,
                   model: str = "compound") -> int:
    lam = _real(load, "load")
    per = _real(per_replica, "per_replica", 0.0, True)
    x = lam * (1 + headroom(growth_per_min, lead_min, model)) / per
    if math.isinf(x):
        raise _bad("the replica count overflows a float")
    n = math.floor(x)
    return n if n >= x * (1 - 1e-9) else n + 1


# ------------------------------------------------------------------ tiering
def idle_share(loads: Sequence[float], replicas: Sequence[int]) -> float:
    if not isinstance(loads, (list, tuple)) or len(loads) == 0:
        raise _bad("loads: a non-empty list")
    ls = [_real(x, "load") for x in loads]
    rs = _counts(replicas, 1, "replicas")
    if len(ls) != len(rs) or any(a > b for a, b in zip(ls, rs)):
        raise _bad("one load per model, at most its replicas")
    return (sum(rs) - math.fsum(ls)) / sum(rs)


def pack_tail(loads: Sequence[int], mems: Sequence[int], copies: int, gpu_load: int,
              gpu_mem: int) -> list[list[int]]:
    ls = _counts(loads, 0, "loads")
    ms = _counts(mems, 0, "mems")
    k = _count(copies, 1, "copies")
    cl = _count(gpu_load, 1, "gpu_load")
    cm = _count(gpu_mem, 1, "gpu_mem")
    if len(ls) != len(ms):
        raise _bad("one memory per load")
    if any(x > cl for x in ls) or any(m > cm for m in ms):
        raise _bad("a replica exceeds a GPU")
    order = sorted(range(len(ls)), key=lambda i: (-(ms[i] * cl + ls[i] * cm), i))
    best: list[Any] = [None, k * len(ls) + 1]
    floor = max(k, math.ceil(Fraction(k * sum(ls), cl)), math.ceil(Fraction(k * sum(ms), cm)))

    def go(j: int, gpus: list[list[int]], where: dict[int, tuple[int, ...]]) -> None:
        if len(gpus) >= best[1] or best[1] <= floor:
            return
        if j == len(order):
            best[0], best[1] = dict(where), len(gpus)
            return
        i = order[j]
        # Up to k new GPUs may be opened for this model, always the next indices.
        for opened in range(k + 1):
            pool = list(range(len(gpus))) + list(range(len(gpus), len(gpus) + opened))
            new = list(range(len(gpus), len(gpus) + opened))
            for pick in itertools.combinations(pool, k):
                if not set(new) <= set(pick):
                    continue
                grown = [list(g) for g in gpus] + [[0, 0] for _ in new]
                if any(grown[g][0] + ls[i] > cl or grown[g][1] + ms[i] > cm for g in pick):
                    continue
                for g in pick:
                    grown[g][0] += ls[i]
                    grown[g][1] += ms[i]
                where[i] = pick
                go(j + 1, grown, where)
                del where[i]

    go(0, [], {})
    return [list(best[0][i]) for i in range(len(ls))] if ls else []


# ------------------------------------------------------------------ pricing
def token_prices(replica: dict[str, float], gpu_hour_usd: float, mfu: float, batch: int,
                 ctx_len: int, utilisation: float) -> tuple[float, float]:
    if not isinstance(replica, dict) or any(key not in replica for key in KEYS):
        raise _bad(f"replica: a dict with {KEYS}")
    gpus = _count(replica["gpus"], 1, "gpus")
    vals = {key: Fraction(_real(replica[key], key, 0.0, key != "kv_bytes_per_token"))
            for key in KEYS if key != "gpus"}
    usd = Fraction(_real(gpu_hour_usd, "gpu_hour_usd", 0.0, True))
    eff = Fraction(_real(mfu, "mfu", 0.0, True, 1.0))
    b = _count(batch, 1, "batch")
    ctx = _count(ctx_len, 0, "ctx_len")
    util = Fraction(_real(utilisation, "utilisation", 0.0, True, 1.0))
    compute = eff * gpus * vals["peak_flops"]
    per_token_prefill = 2 * vals["params"] / compute           # seconds per input token
    step = max(b * 2 * vals["params"] / compute,
               (vals["weight_bytes"] + b * ctx * vals["kv_bytes_per_token"])
               / (gpus * vals["bandwidth"]))
    per_token_decode = step / b                                 # seconds per output token
    usd_per_busy_s = gpus * usd / 3600 / util
    return (float(10**6 * usd_per_busy_s * per_token_prefill),
            float(10**6 * usd_per_busy_s * per_token_decode))


def prompt_share(price_in: float, price_out: float, input_tokens: float,
                 output_tokens: float) -> float:
    pi = _real(price_in, "price_in", 0.0, True)
    po = _real(price_out, "price_out", 0.0, True)
    ti = _real(input_tokens, "input_tokens")
    to = _real(output_tokens, "output_tokens")
    if ti == 0 and to == 0:
        raise _bad("no tokens")
    return 1 / (1 + (to * po) / (ti * pi)) if ti else 0.0


# ------------------------------------------------------------------ canary
def canary_size(base_rate: float, bad_rate: float, alpha: float, power: float) -> int:
    for x in (base_rate, bad_rate, alpha, power):
        if not _is_num(x):
            raise _bad(f"a finite number expected, got {x!r}")
    if not (0 <= base_rate < bad_rate < 1 and 0 < alpha < 0.5 < power < 1):
        raise _bad("need 0 <= base < bad < 1, 0 < alpha < 0.5 < power < 1")
    p0, p1 = float(base_rate), float(bad_rate)
    nd = NormalDist()
    pbar = (p0 + p1) / 2
    num = (nd.inv_cdf(1 - alpha) * math.sqrt(2 * pbar * (1 - pbar))
           + nd.inv_cdf(power) * math.sqrt(p0 * (1 - p0) + p1 * (1 - p1)))
    x = num * num / ((p1 - p0) * (p1 - p0))
    n = math.floor(x)
    return n if n >= x * (1 - 1e-9) else n + 1


def canary_minutes(per_arm: int, requests_per_s: float, canary_share: float) -> float:
    n = _count(per_arm, 1, "per_arm")
    rps = _real(requests_per_s, "requests_per_s", 0.0, True)
    s = _real(canary_share, "canary_share", 0.0, True, 1.0, True)
    slow_arm = rps * (s if s <= 0.5 else 1 - s)
    return n / slow_arm / 60


