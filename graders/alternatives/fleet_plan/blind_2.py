"""An independent correct fleet_plan solution, written blind (round 2).

Written by a blind-test helper from the prompt, the stub and the public tests only (it never
saw the reference, the hidden tests or the other alternatives). Its own notes on the design:

- survival by Hall's (Gale's) condition over bitmask subsets of user regions, not max-flow;
- smallest_fleet: survival of the caps first (None if they fail), then totals upward via a
  recursive generator, largest count in region 0 first (so the prompt's example gives
  [5, 5, 4], one of the three optimal placements);
- headroom via expm1(lead_min x log1p(g)) instead of (1 + g) ** lead_min - 1;
- idle share and prompt share with exact Fractions;
- pack_tail: each model picks a combination of `copies` GPUs (open ones plus only the next
  fresh indices), failed states memoised by the multiset of (load, memory) fills (sound
  because anti-affinity only binds copies of one model);
- token prices written as closed forms (gpus cancels in the input price).

It scored 100/100 in an isolated grade as written. Changed since, by the helper who applied
the blind test: type annotations only (``_placements``, ``_pack_on``), for ``mypy --strict``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from fractions import Fraction
from itertools import combinations
from statistics import NormalDist

# ---------------------------------------------------------------- validation helpers


def _bad(msg: str) -> ValueError:
    return ValueError(msg)


def _num(x: object, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise _bad(f"{what}: not a number: {x!r}")
    try:
        f = float(x)
    except OverflowError:
        raise _bad(f"{what}: too large for a float") from None
    if not math.isfinite(f):
        raise _bad(f"{what}: not finite")
    return f


def _count(x: object, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise _bad(f"{what}: not an int: {x!r}")
    _num(x, what)  # an int too large for a float counts as infinite
    return int(x)


def _seq(x: object, what: str) -> list[object]:
    if not isinstance(x, (list, tuple)):
        raise _bad(f"{what}: not a list or tuple")
    return list(x)


def _ceil_rule(x: float) -> int:
    return math.ceil(x * (1 - 1e-9))


# ---------------------------------------------------------------- failover


def _check_regions(demand: object, near: object) -> tuple[list[int], list[int]]:
    """Returns demand and, per region, the bitmask of regions that may serve its users."""
    d = [_count(v, "demand") for v in _seq(demand, "demand")]
    r = len(d)
    if r < 2:
        raise _bad("fewer than two regions")
    if any(v < 0 for v in d):
        raise _bad("negative demand")
    nl = _seq(near, "near")
    if len(nl) != r:
        raise _bad("near: not one list per region")
    reach = []
    for u, entry in enumerate(nl):
        mask = 1 << u
        seen: set[int] = set()
        for v in _seq(entry, f"near[{u}]"):
            v = _count(v, "near entry")
            if not 0 <= v < r or v == u or v in seen:
                raise _bad(f"near[{u}]: bad entry {v}")
            seen.add(v)
            mask |= 1 << v
        reach.append(mask)
    return d, reach


def _check_per_region(x: object, r: int, what: str) -> list[int]:
    p = [_count(v, what) for v in _seq(x, what)]
    if len(p) != r:
        raise _bad(f"{what}: wrong length")
    if any(v < 0 for v in p):
        raise _bad(f"negative {what}")
    return p


def _survives(d: list[int], reach: list[int], p: list[int]) -> bool:
    r = len(d)
    users = [u for u in range(r) if d[u] > 0]
    k = len(users)
    full = 1 << r
    # capacity of every server subset
    cap = [0] * full
    for m in range(1, full):
        low = (m & -m).bit_length() - 1
        cap[m] = cap[m & (m - 1)] + p[low]
    # demand and reach of every user subset (indices into users)
    dem = [0] * (1 << k)
    nb = [0] * (1 << k)
    for m in range(1, 1 << k):
        low = (m & -m).bit_length() - 1
        dem[m] = dem[m & (m - 1)] + d[users[low]]
        nb[m] = nb[m & (m - 1)] | reach[users[low]]
    for f in range(r):
        alive = (full - 1) & ~(1 << f)
        for m in range(1, 1 << k):
            if dem[m] > cap[nb[m] & alive]:
                return False
    return True


def survives(demand: Sequence[int], near: Sequence[Sequence[int]],
             placement: Sequence[int]) -> bool:
    d, reach = _check_regions(demand, near)
    p = _check_per_region(placement, len(d), "placement")
    return _survives(d, reach, p)


def _placements(caps: list[int], i: int, total: int) -> Iterator[list[int]]:
    """Every placement of exactly ``total`` replicas over regions i.. within the caps."""
    if i == len(caps) - 1:
        if total <= caps[i]:
            yield [total]
        return
    rest = sum(caps[i + 1:])
    for here in range(min(caps[i], total), max(0, total - rest) - 1, -1):
        for tail in _placements(caps, i + 1, total - here):
            yield [here] + tail


def smallest_fleet(demand: Sequence[int], near: Sequence[Sequence[int]],
                   caps: Sequence[int]) -> list[int] | None:
    d, reach = _check_regions(demand, near)
    c = _check_per_region(caps, len(d), "caps")
    if not _survives(d, reach, c):
        return None
    for total in range(sum(d), sum(c) + 1):
        for pl in _placements(c, 0, total):
            if _survives(d, reach, pl):
                return pl
    return None  # unreachable: the caps survive


# ---------------------------------------------------------------- autoscaling


def _growth_factor(growth_per_min: object, lead_min: object, model: object) -> float:
    """1 + h, validated."""
    g = _num(growth_per_min, "growth_per_min")
    t = _num(lead_min, "lead_min")
    if g < 0 or t < 0:
        raise _bad("negative growth or lead time")
    if not isinstance(model, str) or model not in ("compound", "linear"):
        raise _bad(f"unknown model {model!r}")
    try:
        if model == "compound":
            factor = math.exp(t * math.log1p(g))
        else:
            factor = 1.0 + g * t
    except OverflowError:
        raise _bad("growth factor too large for a float") from None
    if not math.isfinite(factor):
        raise _bad("growth factor too large for a float")
    return factor


def headroom(growth_per_min: float, lead_min: float, model: str = "compound") -> float:
    g = _num(growth_per_min, "growth_per_min")
    t = _num(lead_min, "lead_min")
    factor = _growth_factor(growth_per_min, lead_min, model)
    if model == "compound":
        return math.expm1(t * math.log1p(g))
    return g * t


def scale_target(ceiling: float, growth_per_min: float, lead_min: float,
                 model: str = "compound") -> float:
    c = _num(ceiling, "ceiling")
    if not 0 < c <= 1:
        raise _bad("ceiling outside (0, 1]")
    return c / _growth_factor(growth_per_min, lead_min, model)


def replicas_ahead(load: float, per_replica: float, growth_per_min: float, lead_min: float,
                   model: str = "compound") -> int:
    ld = _num(load, "load")
    pr = _num(per_replica, "per_replica")
    if ld < 0:
        raise _bad("negative load")
    if pr <= 0:
        raise _bad("per_replica of 0 or less")
    factor = _growth_factor(growth_per_min, lead_min, model)
    x = ld * factor / pr
    if not math.isfinite(x):
        x = ld / pr * factor
    if not math.isfinite(x):
        raise _bad("replica count too large for a float")
    if ld == 0:
        return 0
    return max(1, _ceil_rule(x))  # some load needs a replica even if x underflows


# ---------------------------------------------------------------- tiering


def idle_share(loads: Sequence[float], replicas: Sequence[int]) -> float:
    ls = [_num(v, "load") for v in _seq(loads, "loads")]
    rs = [_count(v, "replicas") for v in _seq(replicas, "replicas")]
    if not ls:
        raise _bad("empty loads")
    if len(ls) != len(rs):
        raise _bad("lists of different lengths")
    for a, b in zip(ls, rs):
        if a < 0:
            raise _bad("negative load")
        if b < 1:
            raise _bad("replica count below 1")
        if a > b:
            raise _bad("load above its replicas")
    share = 1 - sum(map(Fraction, ls)) / sum(rs)
    return float(share)


def pack_tail(loads: Sequence[int], mems: Sequence[int], copies: int, gpu_load: int,
              gpu_mem: int) -> list[list[int]]:
    ls = [_count(v, "load") for v in _seq(loads, "loads")]
    ms = [_count(v, "mem") for v in _seq(mems, "mems")]
    k = _count(copies, "copies")
    cl = _count(gpu_load, "gpu_load")
    cm = _count(gpu_mem, "gpu_mem")
    if k < 1 or cl < 1 or cm < 1:
        raise _bad("copies, gpu_load or gpu_mem below 1")
    if len(ls) != len(ms):
        raise _bad("lists of different lengths")
    for a, b in zip(ls, ms):
        if a < 0 or b < 0:
            raise _bad("negative load or memory")
        if a > cl or b > cm:
            raise _bad("one replica does not fit a GPU")
    n = len(ls)
    if n == 0:
        return []
    # largest first, by the tighter of the two budgets
    order = sorted(range(n), key=lambda i: (-max(ls[i] / cl, ms[i] / cm), -ls[i], -ms[i], i))
    lb = max(k, -(-k * sum(ls) // cl), -(-k * sum(ms) // cm))
    for g in range(lb, n * k + 1):
        got = _pack_on(order, ls, ms, k, cl, cm, g)
        if got is not None:
            # relabel the GPUs in order of first use (all g are used: g is the fewest)
            label: dict[int, int] = {}
            out = []
            for i in range(n):
                row = []
                for gpu in got[i]:
                    row.append(label.setdefault(gpu, len(label)))
                out.append(row)
            return out
    raise AssertionError("one replica per GPU always fits")


def _pack_on(order: list[int], ls: list[int], ms: list[int], k: int, cl: int, cm: int,
            g: int) -> dict[int, tuple[int, ...]] | None:
    fill_l = [0] * g
    fill_m = [0] * g
    where: dict[int, tuple[int, ...]] = {}
    dead: set[tuple[int, tuple[tuple[int, int], ...]]] = set()

    def go(j: int, opened: int) -> bool:
        if j == len(order):
            return True
        key = (j, tuple(sorted(zip(fill_l, fill_m))))
        if key in dead:
            return False
        i = order[j]
        # candidate GPUs: the opened ones that fit, plus as many fresh ones as needed
        # (fresh GPUs are interchangeable: only the next indices are ever opened)
        fit = [x for x in range(opened) if fill_l[x] + ls[i] <= cl and fill_m[x] + ms[i] <= cm]
        fresh = list(range(opened, min(g, opened + k)))
        for new in range(0, len(fresh) + 1):
            if new > k or k - new > len(fit):
                continue
            for old in combinations(fit, k - new):
                pick = old + tuple(fresh[:new])
                for x in pick:
                    fill_l[x] += ls[i]
                    fill_m[x] += ms[i]
                where[i] = pick
                if go(j + 1, opened + new):
                    return True
                for x in pick:
                    fill_l[x] -= ls[i]
                    fill_m[x] -= ms[i]
        dead.add(key)
        return False

    return where if go(0, 0) else None


# ---------------------------------------------------------------- pricing

_KEYS = ("gpus", "params", "weight_bytes", "kv_bytes_per_token", "peak_flops", "bandwidth")


def token_prices(replica: dict[str, float], gpu_hour_usd: float, mfu: float, batch: int,
                 ctx_len: int, utilisation: float) -> tuple[float, float]:
    if not isinstance(replica, dict):
        raise _bad("replica is not a dict")
    for key in _KEYS:
        if key not in replica:
            raise _bad(f"replica lacks {key}")
    n = _count(replica["gpus"], "gpus")
    params = _num(replica["params"], "params")
    wb = _num(replica["weight_bytes"], "weight_bytes")
    kv = _num(replica["kv_bytes_per_token"], "kv_bytes_per_token")
    peak = _num(replica["peak_flops"], "peak_flops")
    bw = _num(replica["bandwidth"], "bandwidth")
    usd = _num(gpu_hour_usd, "gpu_hour_usd")
    m = _num(mfu, "mfu")
    b = _count(batch, "batch")
    c = _count(ctx_len, "ctx_len")
    u = _num(utilisation, "utilisation")
    if n < 1:
        raise _bad("gpus below 1")
    if min(params, wb, peak, bw, usd) <= 0:
        raise _bad("a size, rate or price of 0 or less")
    if kv < 0:
        raise _bad("negative kv_bytes_per_token")
    if not (0 < m <= 1 and 0 < u <= 1):
        raise _bad("mfu or utilisation outside (0, 1]")
    if b < 1:
        raise _bad("batch below 1")
    if c < 0:
        raise _bad("negative ctx_len")
    # USD per busy second of the replica, then seconds per token
    busy_usd_s = n * usd / 3600 / u
    prefill_s_per_tok = 2 * params / (m * n * peak)
    step = max(b * prefill_s_per_tok, (wb + b * c * kv) / (n * bw))
    decode_s_per_tok = step / b
    return (1e6 * busy_usd_s * prefill_s_per_tok, 1e6 * busy_usd_s * decode_s_per_tok)


def prompt_share(price_in: float, price_out: float, input_tokens: float,
                 output_tokens: float) -> float:
    pi = _num(price_in, "price_in")
    po = _num(price_out, "price_out")
    ti = _num(input_tokens, "input_tokens")
    to = _num(output_tokens, "output_tokens")
    if pi <= 0 or po <= 0:
        raise _bad("a price of 0 or less")
    if ti < 0 or to < 0:
        raise _bad("negative token count")
    if ti == 0 and to == 0:
        raise _bad("both token counts 0")
    # exact rationals: no underflow or overflow in the products
    paid_in = Fraction(ti) * Fraction(pi)
    return float(paid_in / (paid_in + Fraction(to) * Fraction(po)))


# ---------------------------------------------------------------- canary


def canary_size(base_rate: float, bad_rate: float, alpha: float, power: float) -> int:
    p0 = _num(base_rate, "base_rate")
    p1 = _num(bad_rate, "bad_rate")
    a = _num(alpha, "alpha")
    pw = _num(power, "power")
    if not (0 <= p0 < p1 < 1 and 0 < a < 0.5 and 0.5 < pw < 1):
        raise _bad("rates, alpha or power out of range")
    nd = NormalDist()
    za, zb = nd.inv_cdf(1 - a), nd.inv_cdf(pw)
    pbar = (p0 + p1) / 2
    root = za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p0 * (1 - p0) + p1 * (1 - p1))
    return _ceil_rule((root / (p1 - p0)) ** 2)


def canary_minutes(per_arm: int, requests_per_s: float, canary_share: float) -> float:
    n = _count(per_arm, "per_arm")
    rps = _num(requests_per_s, "requests_per_s")
    s = _num(canary_share, "canary_share")
    if n < 1:
        raise _bad("per_arm below 1")
    if rps <= 0:
        raise _bad("requests_per_s of 0 or less")
    if not 0 < s < 1:
        raise _bad("canary_share outside (0, 1)")
    slow = s if s <= 0.5 else 1 - s
    return n / rps / slow / 60
