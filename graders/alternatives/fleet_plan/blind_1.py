"""An independent correct fleet_plan solution, written blind.

Written by a blind-test helper from the prompt, the stub and the public tests only (it never
saw the reference, the hidden tests or the other alternative). Its own notes on the design:

- survival is decided by Hall/Gale covering constraints (one linear inequality per failed
  region and set of user regions), not by a max-flow; a small max-flow is used only as a
  fallback for many regions;
- the smallest fleet is an integer program over those inequalities, searched total by total
  with prefix pruning;
- the tail is packed model by model (a model picks a whole set of GPUs at once), with
  new-GPU-as-next-index and identical-model ordering symmetry breaking plus a slot bound;
- the idle share is summed exactly with fractions.

It scored 100/100 in an isolated grade as written. Changed since, by the helper who applied
the blind test: type annotations (``Sequence[object]``, an int flow augment), so that it
passes ``mypy --strict``; and linear growth that overflows a float (g x lead_min = inf) now
raises ValueError like compound growth already did, when the prompt made an overflowing
growth factor bad input (it had been silent; the blind solution's own notes raised it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations
from statistics import NormalDist

# ------------------------------------------------------------------ validation helpers


def _num(x: object, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{what}: not a number: {x!r}")
    try:
        ok = math.isfinite(x)
    except OverflowError:       # an int too large for a float
        ok = False
    if not ok:
        raise ValueError(f"{what}: not finite: {x!r}")
    return x


def _count(x: object, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(f"{what}: not an int: {x!r}")
    return x


def _seq(x: object, what: str) -> Sequence[object]:
    if not isinstance(x, (list, tuple)):
        raise ValueError(f"{what}: not a list or tuple: {type(x).__name__}")
    return x


def _counts(xs: object, what: str, lo: int) -> tuple[int, ...]:
    out = []
    for i, x in enumerate(_seq(xs, what)):
        c = _count(x, f"{what}[{i}]")
        if c < lo:
            raise ValueError(f"{what}[{i}] = {c} below {lo}")
        out.append(c)
    return tuple(out)


def _regions(demand: object, near: object) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Validated demand and, per region, the bitmask of regions that may serve its users."""
    d = _counts(demand, "demand", 0)
    R = len(d)
    if R < 2:
        raise ValueError("fewer than two regions")
    nr = _seq(near, "near")
    if len(nr) != R:
        raise ValueError("near must hold one list per region")
    reach = []
    for u, lst in enumerate(nr):
        mask = 1 << u
        seen = 0
        for v in _seq(lst, f"near[{u}]"):
            v = _count(v, f"near[{u}] entry")
            if not 0 <= v < R:
                raise ValueError(f"near[{u}]: {v} is not a region")
            if v == u:
                raise ValueError(f"near[{u}] lists its own region")
            if seen >> v & 1:
                raise ValueError(f"near[{u}] repeats {v}")
            seen |= 1 << v
        reach.append(mask | seen)
    return d, tuple(reach)


def _per_region(xs: object, what: str, R: int) -> tuple[int, ...]:
    p = _counts(xs, what, 0)
    if len(p) != R:
        raise ValueError(f"{what} has {len(p)} entries for {R} regions")
    return p


# ------------------------------------------------------------------ failover

_HALL_MAX_REGIONS = 12


def _covering_constraints(d: tuple[int, ...], reach: tuple[int, ...]) -> dict[int, int]:
    """Gale/Hall: a placement p survives iff for every failed f and every set S of user
    regions, sum(p over reach(S) minus f) >= demand(S). Keep, per server mask, the largest
    demand it must cover."""
    R = len(d)
    full = 1 << R
    dsum = [0] * full
    rmask = [0] * full
    for s in range(1, full):
        low = s & -s
        b = low.bit_length() - 1
        dsum[s] = dsum[s ^ low] + d[b]
        rmask[s] = rmask[s ^ low] | reach[b]
    need: dict[int, int] = {}
    for s in range(1, full):
        if dsum[s] == 0:
            continue
        for f in range(R):
            m = rmask[s] & ~(1 << f)
            if need.get(m, 0) < dsum[s]:
                need[m] = dsum[s]
    return need


def _flow_survives(d: tuple[int, ...], reach: tuple[int, ...], p: tuple[int, ...]) -> bool:
    R = len(d)
    for f in range(R):
        # nodes: 0 source, 1..R users, R+1..2R servers, 2R+1 sink
        n = 2 * R + 2
        cap = [[0] * n for _ in range(n)]
        for u in range(R):
            cap[0][1 + u] = d[u]
            for v in range(R):
                if v != f and reach[u] >> v & 1:
                    cap[1 + u][1 + R + v] = sum(d)
        for v in range(R):
            if v != f:
                cap[1 + R + v][n - 1] = p[v]
        flow = 0
        while True:
            prev = [-1] * n
            prev[0] = 0
            queue = [0]
            for x in queue:
                for y in range(n):
                    if prev[y] < 0 and cap[x][y] > 0:
                        prev[y] = x
                        queue.append(y)
            if prev[n - 1] < 0:
                break
            push, y = sum(d), n - 1
            while y:
                push = min(push, cap[prev[y]][y])
                y = prev[y]
            y = n - 1
            while y:
                cap[prev[y]][y] -= push
                cap[y][prev[y]] += push
                y = prev[y]
            flow += push
        if flow < sum(d):
            return False
    return True


def _meets(need: dict[int, int], p: Sequence[int]) -> bool:
    for m, want in need.items():
        have = 0
        mm = m
        while mm:
            low = mm & -mm
            have += p[low.bit_length() - 1]
            mm ^= low
        if have < want:
            return False
    return True


def survives(demand: Sequence[int], near: Sequence[Sequence[int]],
             placement: Sequence[int]) -> bool:
    d, reach = _regions(demand, near)
    p = _per_region(placement, "placement", len(d))
    if len(d) > _HALL_MAX_REGIONS:
        return _flow_survives(d, reach, p)
    return _meets(_covering_constraints(d, reach), p)


def smallest_fleet(demand: Sequence[int], near: Sequence[Sequence[int]],
                   caps: Sequence[int]) -> list[int] | None:
    d, reach = _regions(demand, near)
    R = len(d)
    c = _per_region(caps, "caps", R)
    total_demand = sum(d)
    # More than the whole demand in one region never helps: clamp the search space.
    top = tuple(min(x, total_demand) for x in c)
    need = _covering_constraints(d, reach)
    if not _meets(need, top):
        return None
    # Check each inequality as soon as its highest region has been assigned.
    by_last: list[list[tuple[int, int]]] = [[] for _ in range(R)]
    for m, want in need.items():
        if m == 0:
            continue        # want > 0 with nothing to cover it: excluded by _meets above
        by_last[m.bit_length() - 1].append((m, want))
    lower = max(need.values(), default=0)
    suffix_top = [0] * (R + 1)
    for r in range(R - 1, -1, -1):
        suffix_top[r] = suffix_top[r + 1] + top[r]

    p = [0] * R

    def fill(r: int, left: int) -> bool:
        if r == R:
            return left == 0
        lo = max(0, left - suffix_top[r + 1])
        for x in range(lo, min(top[r], left) + 1):
            p[r] = x
            if all(sum(p[b] for b in range(r + 1) if m >> b & 1) >= want
                   for m, want in by_last[r]) and fill(r + 1, left - x):
                return True
        p[r] = 0
        return False

    for total in range(lower, suffix_top[0] + 1):
        if fill(0, total):
            return list(p)
    return None     # unreachable: the clamped caps survive


# ------------------------------------------------------------------ autoscaling

_MODELS = ("compound", "linear")


def _growth(growth_per_min: object, lead_min: object, model: object) -> float:
    g = _num(growth_per_min, "growth_per_min")
    t = _num(lead_min, "lead_min")
    if g < 0:
        raise ValueError("negative growth")
    if t < 0:
        raise ValueError("negative lead time")
    if not isinstance(model, str) or model not in _MODELS:
        raise ValueError(f"model must be 'compound' or 'linear', got {model!r}")
    if model == "linear":
        h = g * t
    else:
        try:
            h = math.expm1(t * math.log1p(g))
        except OverflowError as e:
            raise ValueError("headroom overflows a float") from e
    if not math.isfinite(1 + h):
        raise ValueError("headroom overflows a float")
    return h


def headroom(growth_per_min: float, lead_min: float, model: str = "compound") -> float:
    return _growth(growth_per_min, lead_min, model)


def scale_target(ceiling: float, growth_per_min: float, lead_min: float,
                 model: str = "compound") -> float:
    c = _num(ceiling, "ceiling")
    if not 0 < c <= 1:
        raise ValueError("ceiling outside (0, 1]")
    return c / (1 + _growth(growth_per_min, lead_min, model))


def _round_up(x: float) -> int:
    return math.ceil(x * (1 - 1e-9))


def replicas_ahead(load: float, per_replica: float, growth_per_min: float, lead_min: float,
                   model: str = "compound") -> int:
    ld = _num(load, "load")
    per = _num(per_replica, "per_replica")
    if ld < 0:
        raise ValueError("negative load")
    if per <= 0:
        raise ValueError("per_replica of 0 or less")
    h = _growth(growth_per_min, lead_min, model)
    if ld == 0:
        return 0
    x = ld * (1 + h) / per
    if not math.isfinite(x):
        raise ValueError("replica count overflows")
    return _round_up(x)


# ------------------------------------------------------------------ tiering


def idle_share(loads: Sequence[float], replicas: Sequence[int]) -> float:
    ls = [_num(x, f"loads[{i}]") for i, x in enumerate(_seq(loads, "loads"))]
    rs = _counts(replicas, "replicas", 1)
    if not ls:
        raise ValueError("empty loads")
    if len(ls) != len(rs):
        raise ValueError("loads and replicas differ in length")
    for i, (x, r) in enumerate(zip(ls, rs)):
        if x < 0:
            raise ValueError(f"loads[{i}] negative")
        if x > r:
            raise ValueError(f"loads[{i}] above its replicas")
    busy = sum((Fraction(x) for x in ls), Fraction(0))
    return float(1 - busy / sum(rs))


def pack_tail(loads: Sequence[int], mems: Sequence[int], copies: int, gpu_load: int,
              gpu_mem: int) -> list[list[int]]:
    L = _counts(loads, "loads", 0)
    M = _counts(mems, "mems", 0)
    k_copies = _count(copies, "copies")
    cl = _count(gpu_load, "gpu_load")
    cm = _count(gpu_mem, "gpu_mem")
    if k_copies < 1 or cl < 1 or cm < 1:
        raise ValueError("copies, gpu_load and gpu_mem must be at least 1")
    if len(L) != len(M):
        raise ValueError("loads and mems differ in length")
    for i in range(len(L)):
        if L[i] > cl or M[i] > cm:
            raise ValueError(f"model {i}: one replica does not fit a GPU")
    n = len(L)
    if n == 0:
        return []

    order = sorted(range(n), key=lambda i: (-max(Fraction(L[i], cl), Fraction(M[i], cm)),
                                            -L[i], -M[i], i))
    sl = [L[i] for i in order]
    sm = [M[i] for i in order]
    # suffix minima for the slot bound
    min_l = [0] * (n + 1)
    min_m = [0] * (n + 1)
    min_l[n] = min_m[n] = 0
    for j in range(n - 1, -1, -1):
        min_l[j] = sl[j] if j == n - 1 else min(sl[j], min_l[j + 1])
        min_m[j] = sm[j] if j == n - 1 else min(sm[j], min_m[j + 1])

    lower = max(k_copies, -(-k_copies * sum(L) // cl), -(-k_copies * sum(M) // cm))

    for G in range(lower, n * k_copies + 1):
        free_l = [cl] * G
        free_m = [cm] * G
        sets: list[tuple[int, ...]] = [()] * n

        def slots_ok(j: int) -> bool:
            left_models = n - j
            if left_models == 0:
                return True
            a, b = min_l[j], min_m[j]
            total = 0
            for g in range(G):
                s = left_models
                if a:
                    s = min(s, free_l[g] // a)
                if b:
                    s = min(s, free_m[g] // b)
                total += s
            return total >= left_models * k_copies

        def place(j: int, used: int) -> bool:
            if j == n:
                return True
            if not slots_ok(j):
                return False
            a, b = sl[j], sm[j]
            fits = [g for g in range(used) if free_l[g] >= a and free_m[g] >= b]
            prev = sets[j - 1] if j and (sl[j - 1], sm[j - 1]) == (a, b) else None
            for new in range(0, min(k_copies, G - used) + 1):
                fresh = tuple(range(used, used + new))
                for old in combinations(fits, k_copies - new):
                    chosen = old + fresh
                    if prev is not None and chosen < prev:
                        continue
                    for g in chosen:
                        free_l[g] -= a
                        free_m[g] -= b
                    sets[j] = chosen
                    if place(j + 1, used + new):
                        return True
                    for g in chosen:
                        free_l[g] += a
                        free_m[g] += b
            return False

        if place(0, 0):
            out: list[list[int]] = [[] for _ in range(n)]
            for j, i in enumerate(order):
                out[i] = list(sets[j])
            return out
    raise AssertionError("unreachable: one replica per GPU always fits")


# ------------------------------------------------------------------ pricing

_REPLICA_KEYS = ("gpus", "params", "weight_bytes", "kv_bytes_per_token", "peak_flops",
                 "bandwidth")


def token_prices(replica: dict[str, float], gpu_hour_usd: float, mfu: float, batch: int,
                 ctx_len: int, utilisation: float) -> tuple[float, float]:
    if not isinstance(replica, dict):
        raise ValueError("replica must be a dict")
    missing = [k for k in _REPLICA_KEYS if k not in replica]
    if missing:
        raise ValueError(f"replica lacks {missing}")
    gpus = _count(replica["gpus"], "gpus")
    if gpus < 1:
        raise ValueError("gpus below 1")
    params = _num(replica["params"], "params")
    wbytes = _num(replica["weight_bytes"], "weight_bytes")
    kv = _num(replica["kv_bytes_per_token"], "kv_bytes_per_token")
    peak = _num(replica["peak_flops"], "peak_flops")
    bw = _num(replica["bandwidth"], "bandwidth")
    usd = _num(gpu_hour_usd, "gpu_hour_usd")
    for v, what in ((params, "params"), (wbytes, "weight_bytes"), (peak, "peak_flops"),
                    (bw, "bandwidth"), (usd, "gpu_hour_usd")):
        if v <= 0:
            raise ValueError(f"{what} of 0 or less")
    if kv < 0:
        raise ValueError("negative kv_bytes_per_token")
    u_mfu = _num(mfu, "mfu")
    util = _num(utilisation, "utilisation")
    if not 0 < u_mfu <= 1:
        raise ValueError("mfu outside (0, 1]")
    if not 0 < util <= 1:
        raise ValueError("utilisation outside (0, 1]")
    b = _count(batch, "batch")
    ctx = _count(ctx_len, "ctx_len")
    if b < 1:
        raise ValueError("batch below 1")
    if ctx < 0:
        raise ValueError("negative ctx_len")

    compute = u_mfu * gpus * peak            # FLOP/s actually delivered
    flops_per_token = 2 * params
    usd_per_busy_s = gpus * usd / 3600 / util
    # seconds per token
    prefill_s = flops_per_token / compute
    step = max(b * flops_per_token / compute, (wbytes + b * ctx * kv) / (gpus * bw))
    decode_s = step / b
    return (1e6 * usd_per_busy_s * prefill_s, 1e6 * usd_per_busy_s * decode_s)


def prompt_share(price_in: float, price_out: float, input_tokens: float,
                 output_tokens: float) -> float:
    pi = _num(price_in, "price_in")
    po = _num(price_out, "price_out")
    ti = _num(input_tokens, "input_tokens")
    to = _num(output_tokens, "output_tokens")
    if pi <= 0 or po <= 0:
        raise ValueError("price of 0 or less")
    if ti < 0 or to < 0:
        raise ValueError("negative token count")
    if ti == 0 and to == 0:
        raise ValueError("both token counts 0")
    a = ti * pi
    return a / (a + to * po)


# ------------------------------------------------------------------ canary


def canary_size(base_rate: float, bad_rate: float, alpha: float, power: float) -> int:
    p0 = _num(base_rate, "base_rate")
    p1 = _num(bad_rate, "bad_rate")
    a = _num(alpha, "alpha")
    pw = _num(power, "power")
    if not (0 <= p0 < p1 < 1 and 0 < a < 0.5 and 0.5 < pw < 1):
        raise ValueError("need 0 <= base < bad < 1, 0 < alpha < 0.5, 0.5 < power < 1")
    nd = NormalDist()
    za = nd.inv_cdf(1 - a)
    zb = nd.inv_cdf(pw)
    pbar = (p0 + p1) / 2
    root = za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p0 * (1 - p0) + p1 * (1 - p1))
    return _round_up(root * root / ((p1 - p0) * (p1 - p0)))


def canary_minutes(per_arm: int, requests_per_s: float, canary_share: float) -> float:
    n = _count(per_arm, "per_arm")
    rps = _num(requests_per_s, "requests_per_s")
    s = _num(canary_share, "canary_share")
    if n < 1:
        raise ValueError("per_arm below 1")
    if rps <= 0:
        raise ValueError("requests_per_s of 0 or less")
    if not 0 < s < 1:
        raise ValueError("canary_share outside (0, 1)")
    return n / (rps * min(s, 1 - s)) / 60
