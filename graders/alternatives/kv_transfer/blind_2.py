"""kv_transfer: an independent correct solution, written blind (second round).

Written by a blind tester session (helper), 2026-12-05, from the prompt, stub and public tests
only (it saw neither the reference, the hidden tests nor blind_1.py); kept as the tester wrote
it, with only this docstring and one type annotation (``out``, for mypy --strict) changed.
It scored full marks (90/90, isolated) as written.

Design, deliberately unlike the obvious one:
- every model quantity is reduced to integer coefficients; a time is an exact rational
  num/den built from them, turned into a float only at the very end (a Fraction beyond
  float range becomes +-inf);
- fetch_wins_from solves the quadratic with a float root as a *guess*, then corrects it
  with an exact galloping search and a bisection (never a plain bisection over [1, window]);
- the layerwise hand-off is computed as the end of the last transfer, max(P + x, p + L x),
  minus P (hint 5's form rather than the prompt's max(S/L, S - (L-1)P/L));
- links_too_slow validates all three tables before pricing any triple.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NamedTuple

GB = 10**9
TERA = 10**12
DAY = 86_400


# ---------------------------------------------------------------- validation helpers
def _is_num(x: Any) -> bool:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    return not isinstance(x, float) or math.isfinite(x)


def _count(x: Any, what: str, low: int = 1) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < low:
        raise ValueError(f"{what} must be an int >= {low}, got {x!r}")
    return int(x)


def _pos(x: Any, what: str) -> Fraction:
    if not _is_num(x) or not x > 0:
        raise ValueError(f"{what} must be a positive finite number, got {x!r}")
    return Fraction(x)


def _latency(x: Any, what: str = "latency_s") -> Fraction:
    if not _is_num(x) or x < 0:
        raise ValueError(f"{what} must be a finite number >= 0, got {x!r}")
    return Fraction(x)


def _mfu(x: Any) -> Fraction:
    if not _is_num(x) or not (0 < x <= 1):
        raise ValueError(f"mfu must lie in (0, 1], got {x!r}")
    return Fraction(x)


def _peak(gpu: Any, dtype: Any) -> Fraction:
    """Dense peak in FLOP/s (exact)."""
    node: Any = gpu
    for key in ("tensor_tflops", dtype, "dense"):
        try:
            if not isinstance(node, dict) or key not in node:
                raise ValueError(f"gpu has no tensor_tflops[{dtype!r}]['dense']")
        except TypeError:                      # an unhashable dtype
            raise ValueError(f"bad dtype {dtype!r}") from None
        node = node[key]
    return _pos(node, "dense peak") * TERA


class _Model(NamedTuple):
    layers: int
    heads: int
    kv_elems: int      # KV elements per token per layer (2 x kv_heads x head_dim, or rank + rope)
    dims: int          # d_qk + d_v


def _uses_sliding(cfg: dict[str, Any]) -> bool:
    lt = cfg.get("layer_types")
    if isinstance(lt, (list, tuple)) and any(x == "sliding_attention" for x in lt):
        return True
    return cfg.get("sliding_window") is not None and cfg.get("use_sliding_window") is not False


def _model(cfg: Any) -> _Model:
    if not isinstance(cfg, dict):
        raise ValueError("cfg must be a dict")
    layers = _count(cfg.get("num_hidden_layers"), "num_hidden_layers")
    heads = _count(cfg.get("num_attention_heads"), "num_attention_heads")
    if cfg.get("kv_lora_rank") is not None:
        rank = _count(cfg["kv_lora_rank"], "kv_lora_rank")
        rope = _count(cfg.get("qk_rope_head_dim"), "qk_rope_head_dim")
        nope = _count(cfg.get("qk_nope_head_dim"), "qk_nope_head_dim", low=0)
        v = _count(cfg.get("v_head_dim"), "v_head_dim")
        model = _Model(layers, heads, rank + rope, nope + rope + v)
    else:
        kv_heads = (_count(cfg["num_key_value_heads"], "num_key_value_heads")
                    if "num_key_value_heads" in cfg else heads)
        if cfg.get("head_dim") is not None:
            hd = _count(cfg["head_dim"], "head_dim")
        else:
            hidden = _count(cfg.get("hidden_size"), "hidden_size")
            hd = hidden // heads
            if hd < 1:
                raise ValueError("hidden_size // num_attention_heads is 0")
        model = _Model(layers, heads, 2 * kv_heads * hd, 2 * hd)
    if _uses_sliding(cfg):
        raise ValueError("sliding-window attention: KV stops growing past the window")
    return model


def _to_float(x: Fraction) -> float:
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


# ---------------------------------------------------------------- exact building blocks
def _per_token(mdl: _Model, kvb: int) -> int:
    return mdl.layers * mdl.kv_elems * kvb


def _flops(mdl: _Model, active: int, t: int) -> int:
    return t * (2 * active + mdl.layers * mdl.heads * mdl.dims * t)


def _recompute(mdl: _Model, active: int, t: int, rate: Fraction) -> Fraction:
    return Fraction(_flops(mdl, active, t)) / rate


def _send(per_token: int, t: int, link: Fraction) -> Fraction:
    return per_token * t / (link * GB)


# ---------------------------------------------------------------- the twelve functions
def kv_bytes_per_token(cfg: dict[str, Any], kv_dtype_bytes: int) -> int:
    mdl = _model(cfg)
    return _per_token(mdl, _count(kv_dtype_bytes, "kv_dtype_bytes"))


def recompute_flops(cfg: dict[str, Any], active_params: int, prefix_len: int) -> int:
    mdl = _model(cfg)
    return _flops(mdl, _count(active_params, "active_params"), _count(prefix_len, "prefix_len"))


def recompute_time_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                     prefix_len: int, mfu: float, dtype: str = "bf16") -> float:
    mdl = _model(cfg)
    a, t = _count(active_params, "active_params"), _count(prefix_len, "prefix_len")
    rate = _peak(gpu, dtype) * _mfu(mfu)
    return _to_float(_recompute(mdl, a, t, rate))


def fetch_time_s(cfg: dict[str, Any], kv_dtype_bytes: int, prefix_len: int,
                 latency_s: float, link_gb_s: float) -> float:
    mdl = _model(cfg)
    per = _per_token(mdl, _count(kv_dtype_bytes, "kv_dtype_bytes"))
    t = _count(prefix_len, "prefix_len")
    lat, link = _latency(latency_s), _pos(link_gb_s, "link_gb_s")
    return _to_float(lat + _send(per, t, link))


def _break_even(mdl: _Model, kvb: int, active: int, rate: Fraction) -> Fraction:
    return Fraction(_per_token(mdl, kvb)) * rate / (2 * active * GB)


def break_even_gb_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, dtype: str = "bf16") -> float:
    mdl = _model(cfg)
    a, kvb = _count(active_params, "active_params"), _count(kv_dtype_bytes, "kv_dtype_bytes")
    rate = _peak(gpu, dtype) * _mfu(mfu)
    return _to_float(_break_even(mdl, kvb, a, rate))


def fetch_wins_from(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, latency_s: float, link_gb_s: float,
                    dtype: str = "bf16") -> int | None:
    mdl = _model(cfg)
    window = _count(cfg.get("max_position_embeddings"), "max_position_embeddings")
    a, kvb = _count(active_params, "active_params"), _count(kv_dtype_bytes, "kv_dtype_bytes")
    rate = _peak(gpu, dtype) * _mfu(mfu)
    lat, link = _latency(latency_s), _pos(link_gb_s, "link_gb_s")

    # recompute - fetch = qa T^2 + qb T - lat (seconds), all exact
    qa = Fraction(mdl.layers * mdl.heads * mdl.dims) / rate
    qb = Fraction(2 * a) / rate - Fraction(_per_token(mdl, kvb)) / (link * GB)

    def wins(t: int) -> bool:
        return qa * t * t + qb * t - lat > 0

    # float guess for the positive root, then exact correction
    try:
        fa, fb, fl = float(qa), float(qb), float(lat)
        disc = fb * fb + 4 * fa * fl
        root = (-fb + math.sqrt(disc)) / (2 * fa) if fa > 0 else 1.0
        guess = int(min(max(root, 0.0), 4.0 * window)) + 1
    except (OverflowError, ValueError, ZeroDivisionError):
        guess = 1
    guess = max(guess, 1)

    if wins(guess):
        # go down: find a losing lo < guess (or reach 0), then bisect (lo, hi]
        hi, step = guess, 1
        lo = guess - step
        while lo >= 1 and wins(lo):
            hi = lo
            step *= 2
            lo = hi - step
        lo = max(lo, 0)
    else:
        lo, step = guess, 1
        hi = guess + step
        while not wins(hi):
            if hi > window:           # f is increasing past its root: no win inside
                return None
            lo = hi
            step *= 2
            hi = lo + step
    # invariant: lo == 0 or not wins(lo); wins(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if wins(mid):
            hi = mid
        else:
            lo = mid
    return hi if hi <= window else None


def pd_link_gb_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                 kv_dtype_bytes: int, mfu: float, prompt_len: int,
                 dtype: str = "bf16") -> float:
    mdl = _model(cfg)
    a, kvb = _count(active_params, "active_params"), _count(kv_dtype_bytes, "kv_dtype_bytes")
    t = _count(prompt_len, "prompt_len")
    rate = _peak(gpu, dtype) * _mfu(mfu)
    return _to_float(Fraction(_per_token(mdl, kvb) * t) * rate / _flops(mdl, a, t) / GB)


def _str_keyed(table: Any, what: str) -> dict[str, Any]:
    if not isinstance(table, dict) or not all(isinstance(k, str) for k in table):
        raise ValueError(f"{what} must be a dict keyed by str")
    return table


def links_too_slow(models: dict[str, tuple[dict[str, Any], int]],
                   gpus: dict[str, dict[str, Any]], links: dict[str, float],
                   kv_dtype_bytes: int, mfu: float,
                   dtype: str = "bf16") -> list[tuple[str, str, str]]:
    kvb = _count(kv_dtype_bytes, "kv_dtype_bytes")
    u = _mfu(mfu)
    mods: dict[str, tuple[_Model, int]] = {}
    for name, pair in _str_keyed(models, "models").items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"models[{name!r}] must be a (cfg, active_params) pair")
        mods[name] = (_model(pair[0]), _count(pair[1], "active_params"))
    peaks = {name: _peak(g, dtype) for name, g in _str_keyed(gpus, "gpus").items()}
    rates = {name: _pos(v, f"links[{name!r}]") for name, v in _str_keyed(links, "links").items()}

    out: list[tuple[str, str, str]] = []
    for mn, (mdl, a) in mods.items():
        for gn, peak in peaks.items():
            need = _break_even(mdl, kvb, a, peak * u)
            out.extend((mn, gn, ln) for ln, r in rates.items() if need > r)
    out.sort()
    return out


def handoff_ttft_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                   kv_dtype_bytes: int, mfu: float, prompt_len: int, latency_s: float,
                   link_gb_s: float, dtype: str = "bf16") -> tuple[float, float]:
    mdl = _model(cfg)
    a, kvb = _count(active_params, "active_params"), _count(kv_dtype_bytes, "kv_dtype_bytes")
    t = _count(prompt_len, "prompt_len")
    rate = _peak(gpu, dtype) * _mfu(mfu)
    lat, link = _latency(latency_s), _pos(link_gb_s, "link_gb_s")
    p_all = _recompute(mdl, a, t, rate)
    s_all = _send(_per_token(mdl, kvb), t, link)
    n = mdl.layers
    p, x = p_all / n, s_all / n
    last_end = max(p_all + x, p + n * x)
    return _to_float(lat + s_all), _to_float(lat + last_end - p_all)


def tier_values(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                kv_dtype_bytes: int, mfu: float, prefix_len: int,
                tiers: list[tuple[str, float, float]],
                dtype: str = "bf16") -> list[tuple[str, float]]:
    mdl = _model(cfg)
    a, kvb = _count(active_params, "active_params"), _count(kv_dtype_bytes, "kv_dtype_bytes")
    t = _count(prefix_len, "prefix_len")
    rate = _peak(gpu, dtype) * _mfu(mfu)
    if not isinstance(tiers, (list, tuple)):
        raise ValueError("tiers must be a list or tuple")
    parsed = []
    for tier in tiers:
        if not isinstance(tier, (tuple, list)) or len(tier) != 3 or not isinstance(tier[0], str):
            raise ValueError(f"bad tier {tier!r}")
        parsed.append((tier[0], _latency(tier[1], "tier latency_s"), _pos(tier[2], "tier link_gb_s")))
    rec = _recompute(mdl, a, t, rate)
    per = _per_token(mdl, kvb)
    return [(name, _to_float((rec - lat - _send(per, t, link)) / t)) for name, lat, link in parsed]


def ssd_endurance_tb(dwpd: float, capacity_tb: float, years: float) -> float:
    d, c, y = _pos(dwpd, "dwpd"), _pos(capacity_tb, "capacity_tb"), _pos(years, "years")
    return _to_float(d * c * 365 * y)


def ssd_days(endurance_tb: float, write_gb_s: float) -> float:
    e, w = _pos(endurance_tb, "endurance_tb"), _pos(write_gb_s, "write_gb_s")
    return _to_float(e * TERA / (w * GB) / DAY)
