"""Reference solution for the fleet_plan kata: the arithmetic of a serving fleet.

Failover by exact search (compositions of each total, checked by a max-flow per failed
region), autoscaler headroom and the pricing by closed forms, the tail packing by a
first-fit-decreasing branch and bound over a growing number of GPUs, the canary from the
normal quantiles of ``statistics.NormalDist``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator, Sequence
from statistics import NormalDist
from typing import Any

REL = 1e-9
REPLICA_KEYS = ("gpus", "params", "weight_bytes", "kv_bytes_per_token", "peak_flops",
                "bandwidth")


# ------------------------------------------------------------------ checks
def _finite(value: Any) -> bool:
    """A Python int or float (not a bool) that a float holds: finite, and for an int not
    too large to convert."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:       # an int beyond a float's range
        return False


def _num(name: str, value: Any, *, positive: bool = False) -> float:
    ok = _finite(value)
    if not ok or (value <= 0 if positive else value < 0):
        raise ValueError(f"{name} must be a {'positive' if positive else 'non-negative'} "
                         f"finite int or float, got {value!r}")
    return float(value)


def _int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def _ints(name: str, values: Any, low: int) -> list[int]:
    if not isinstance(values, (list, tuple)):
        raise ValueError(f"{name} must be a list of ints, got {values!r}")
    return [_int(name, v, low) for v in values]


def _share(name: str, value: Any) -> float:
    x = _num(name, value, positive=True)
    if x > 1:
        raise ValueError(f"{name} must lie in (0, 1], got {value!r}")
    return x


def _regions(demand: Any, near: Any) -> tuple[list[int], list[frozenset[int]]]:
    d = _ints("demand", demand, 0)
    if len(d) < 2:
        raise ValueError("a failover plan needs at least two regions")
    if not isinstance(near, (list, tuple)) or len(near) != len(d):
        raise ValueError(f"near must hold one list per region ({len(d)}), got {near!r}")
    sets = []
    for u, row in enumerate(near):
        r = _ints(f"near[{u}]", row, 0)
        if any(v >= len(d) or v == u for v in r) or len(set(r)) != len(r):
            raise ValueError(f"near[{u}] must list other regions, each once, got {row!r}")
        sets.append(frozenset(r))
    return d, sets


# ------------------------------------------------------------------ failover
def _served(demand: list[int], near: list[frozenset[int]], n: Sequence[int]) -> bool:
    """Whether replicas ``n`` can serve every unit of demand: a max-flow from the user
    regions to the server regions (source -> user u: demand[u]; u -> server s when s is u
    or near u; server s -> sink: n[s]), by shortest augmenting paths."""
    r = len(demand)
    src, sink = 2 * r, 2 * r + 1
    cap = [[0] * (2 * r + 2) for _ in range(2 * r + 2)]
    for u in range(r):
        cap[src][u] = demand[u]
        cap[r + u][sink] = n[u]
        for s in {u} | near[u]:
            cap[u][r + s] = sum(demand)
    need = sum(demand)
    while need:
        prev = {src: src}
        queue = deque([src])
        while queue and sink not in prev:
            a = queue.popleft()
            for b, c in enumerate(cap[a]):
                if c > 0 and b not in prev:
                    prev[b] = a
                    queue.append(b)
        if sink not in prev:
            return False
        path, b = [], sink
        while b != src:
            path.append((prev[b], b))
            b = prev[b]
        push = min(cap[a][b] for a, b in path)
        for a, b in path:
            cap[a][b] -= push
            cap[b][a] += push
        need -= push
    return True


def survives(demand: Sequence[int], near: Sequence[Sequence[int]],
             placement: Sequence[int]) -> bool:
    d, sets = _regions(demand, near)
    n = _ints("placement", placement, 0)
    if len(n) != len(d):
        raise ValueError(f"placement must give one count per region ({len(d)}), got {placement!r}")
    return _survives(d, sets, n)


def _survives(demand: list[int], near: list[frozenset[int]], n: Sequence[int]) -> bool:
    return all(_served(demand, near, [0 if r == f else x for r, x in enumerate(n)])
               for f in range(len(demand)))


def _compositions(total: int, caps: list[int]) -> Iterator[list[int]]:
    """Every placement of ``total`` replicas within ``caps``, in lexicographic order."""
    if len(caps) == 1:
        if total <= caps[0]:
            yield [total]
        return
    rest = sum(caps[1:])
    for first in range(max(0, total - rest), min(caps[0], total) + 1):
        for tail in _compositions(total - first, caps[1:]):
            yield [first, *tail]


def smallest_fleet(demand: Sequence[int], near: Sequence[Sequence[int]],
                   caps: Sequence[int]) -> list[int] | None:
    d, sets = _regions(demand, near)
    c = _ints("caps", caps, 0)
    if len(c) != len(d):
        raise ValueError(f"caps must give one cap per region ({len(d)}), got {caps!r}")
    # A replica more never hurts: when the caps fail, every placement within them does.
    if not _survives(d, sets, c):
        return None
    for total in range(sum(d), sum(c) + 1):
        for n in _compositions(total, c):
            if _survives(d, sets, n):
                return n
    raise AssertionError("the caps survive")  # pragma: no cover


# ------------------------------------------------------------------ autoscaling
def headroom(growth_per_min: float, lead_min: float, model: str = "compound") -> float:
    g = _num("growth_per_min", growth_per_min)
    t = _num("lead_min", lead_min)
    if model not in ("compound", "linear"):
        raise ValueError(f"model must be 'compound' or 'linear', got {model!r}")
    try:
        h = float((1.0 + g) ** t - 1.0) if model == "compound" else g * t
    except OverflowError:
        h = math.inf
    if not math.isfinite(1.0 + h):
        raise ValueError(f"growth factor 1 + h overflows a float ({g!r} per minute over "
                         f"{t!r} minutes, {model})")
    return h


def scale_target(ceiling: float, growth_per_min: float, lead_min: float,
                 model: str = "compound") -> float:
    u = _share("ceiling", ceiling)
    return u / (1.0 + headroom(growth_per_min, lead_min, model))


def replicas_ahead(load: float, per_replica: float, growth_per_min: float, lead_min: float,
                   model: str = "compound") -> int:
    lam = _num("load", load)
    c = _num("per_replica", per_replica, positive=True)
    need = lam * (1.0 + headroom(growth_per_min, lead_min, model)) / c
    if not math.isfinite(need):
        raise ValueError(f"load x (1 + h) / per_replica overflows a float ({load!r}, "
                         f"{per_replica!r})")
    n = math.ceil(need * (1.0 - REL))
    return max(n, 0)


# ------------------------------------------------------------------ tiering
def idle_share(loads: Sequence[float], replicas: Sequence[int]) -> float:
    if not isinstance(loads, (list, tuple)) or not loads:
        raise ValueError(f"loads must be a non-empty list of numbers, got {loads!r}")
    ld = [_num("load", x) for x in loads]
    rp = _ints("replicas", replicas, 1)
    if len(rp) != len(ld):
        raise ValueError("loads and replicas must have the same length")
    if any(x > r for x, r in zip(ld, rp)):
        raise ValueError("a model's load exceeds its replicas' capacity")
    return 1.0 - sum(ld) / sum(rp)


def pack_tail(loads: Sequence[int], mems: Sequence[int], copies: int, gpu_load: int,
              gpu_mem: int) -> list[list[int]]:
    ld = _ints("loads", loads, 0)
    mm = _ints("mems", mems, 0)
    k = _int("copies", copies, 1)
    cap_l = _int("gpu_load", gpu_load, 1)
    cap_m = _int("gpu_mem", gpu_mem, 1)
    if len(ld) != len(mm):
        raise ValueError("loads and mems must have the same length")
    if any(x > cap_l for x in ld) or any(m > cap_m for m in mm):
        raise ValueError("a replica larger than a GPU cannot be placed")
    if not ld:
        return []
    # Copies, largest first (by memory, then load): big items fail early in the search.
    items = sorted(((m, x, i) for i, (x, m) in enumerate(zip(ld, mm)) for _ in range(k)),
                   reverse=True)
    lower = max(k, -(-k * sum(ld) // cap_l), -(-k * sum(mm) // cap_m))
    for bins in range(lower, len(items) + 1):
        where = _pack(items, bins, cap_l, cap_m)
        if where is not None:
            out: list[list[int]] = [[] for _ in ld]
            for (_, _, model), gpu in zip(items, where):
                out[model].append(gpu)
            return [sorted(g) for g in out]
    raise AssertionError("one copy per GPU always fits")  # pragma: no cover


def _pack(items: list[tuple[int, int, int]], bins: int, cap_l: int,
          cap_m: int) -> list[int] | None:
    used_l = [0] * bins
    used_m = [0] * bins
    holds: list[set[int]] = [set() for _ in range(bins)]
    where = [0] * len(items)

    def place(j: int, opened: int) -> bool:
        if j == len(items):
            return True
        mem, load, model = items[j]
        for b in range(min(opened + 1, bins)):
            if (model in holds[b] or used_l[b] + load > cap_l or used_m[b] + mem > cap_m):
                continue
            used_l[b] += load
            used_m[b] += mem
            holds[b].add(model)
            where[j] = b
            if place(j + 1, max(opened, b + 1)):
                return True
            used_l[b] -= load
            used_m[b] -= mem
            holds[b].discard(model)
        return False

    return where if place(0, 0) and len(set(where)) == bins else None


# ------------------------------------------------------------------ pricing
def _replica(replica: Any) -> dict[str, float]:
    if not isinstance(replica, dict):
        raise ValueError(f"a replica is a dict with keys {REPLICA_KEYS}, got {replica!r}")
    missing = [k for k in REPLICA_KEYS if k not in replica]
    if missing:
        raise ValueError(f"replica lacks {missing}")
    out = {k: _num(k, replica[k], positive=k != "kv_bytes_per_token") for k in REPLICA_KEYS}
    _int("gpus", replica["gpus"], 1)
    return out


def token_prices(replica: dict[str, float], gpu_hour_usd: float, mfu: float, batch: int,
                 ctx_len: int, utilisation: float) -> tuple[float, float]:
    r = _replica(replica)
    usd_h = _num("gpu_hour_usd", gpu_hour_usd, positive=True)
    eff = _share("mfu", mfu)
    b = _int("batch", batch, 1)
    ctx = _int("ctx_len", ctx_len, 0)
    util = _share("utilisation", utilisation)
    flops = eff * r["gpus"] * r["peak_flops"]
    prefill_tps = flops / (2.0 * r["params"])
    step = max(b * 2.0 * r["params"] / flops,
               (r["weight_bytes"] + b * ctx * r["kv_bytes_per_token"])
               / (r["gpus"] * r["bandwidth"]))
    decode_tps = b / step
    usd_per_s = r["gpus"] * usd_h / 3600.0
    return (1e6 * usd_per_s / (prefill_tps * util), 1e6 * usd_per_s / (decode_tps * util))


def prompt_share(price_in: float, price_out: float, input_tokens: float,
                 output_tokens: float) -> float:
    pin = _num("price_in", price_in, positive=True)
    pout = _num("price_out", price_out, positive=True)
    tin = _num("input_tokens", input_tokens)
    tout = _num("output_tokens", output_tokens)
    if tin + tout == 0:
        raise ValueError("a workload with no tokens has no bill")
    return tin * pin / (tin * pin + tout * pout)


# ------------------------------------------------------------------ canary
def canary_size(base_rate: float, bad_rate: float, alpha: float, power: float) -> int:
    p0 = _num("base_rate", base_rate)
    p1 = _num("bad_rate", bad_rate)
    a = _num("alpha", alpha)
    pw = _num("power", power)
    if not 0 <= p0 < p1 < 1:
        raise ValueError(f"need 0 <= base_rate < bad_rate < 1, got {p0!r}, {p1!r}")
    if not 0 < a < 0.5 or not 0.5 < pw < 1:
        raise ValueError(f"need 0 < alpha < 0.5 < power < 1, got {a!r}, {pw!r}")
    z = NormalDist()
    za, zb = z.inv_cdf(1.0 - a), z.inv_cdf(pw)
    mean = (p0 + p1) / 2.0
    root = (za * math.sqrt(2.0 * mean * (1.0 - mean))
            + zb * math.sqrt(p0 * (1.0 - p0) + p1 * (1.0 - p1)))
    return math.ceil((root / (p1 - p0)) ** 2 * (1.0 - REL))


def canary_minutes(per_arm: int, requests_per_s: float, canary_share: float) -> float:
    n = _int("per_arm", per_arm, 1)
    rps = _num("requests_per_s", requests_per_s, positive=True)
    s = _num("canary_share", canary_share, positive=True)
    if s >= 1:
        raise ValueError(f"canary_share must lie in (0, 1), got {canary_share!r}")
    return n / (rps * min(s, 1.0 - s)) / 60.0
