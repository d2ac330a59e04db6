"""kv_transfer in plain floating point wherever the prompt's 1e-9 tolerance allows it.

Who and how: the kata's author, from the prompt, as a candidate in a hurry would write it
(not blind): every time and rate is computed with float operations, in the order the
formulas are written, and only ``fetch_wins_from`` and ``links_too_slow`` (the two answers
graded on exact ties) use ``fractions.Fraction``; the first winning length is found by
galloping up from T = 1 and then bisecting, where the reference bisects the whole window.
It guards the tolerances: a float solution must pass every check but the exact ones.
Later (after a blind tester's notes), ``links_too_slow`` gained checks of every table entry
even when an empty table leaves no triple, when the prompt made that a rule.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any


def _pos_int(x: Any, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x <= 0:
        raise ValueError(f"{name}={x!r}")
    return x


def _number(x: Any, name: str, allow_zero: bool = False) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ValueError(f"{name}={x!r}")
    if x < 0 or (x == 0 and not allow_zero):
        raise ValueError(f"{name}={x!r}")
    return x


def _fields(cfg: Any) -> tuple[int, int, int, int]:
    """(layers, query heads, KV elements per token per layer, d_qk + d_v)."""
    if not isinstance(cfg, dict):
        raise ValueError("cfg")
    if "sliding_attention" in (cfg.get("layer_types") or []):
        raise ValueError("sliding layers")
    if cfg.get("sliding_window") is not None and cfg.get("use_sliding_window") is not False:
        raise ValueError("sliding window")
    layers = _pos_int(cfg.get("num_hidden_layers"), "num_hidden_layers")
    heads = _pos_int(cfg.get("num_attention_heads"), "num_attention_heads")
    if cfg.get("kv_lora_rank") is not None:
        nope = cfg.get("qk_nope_head_dim")
        if isinstance(nope, bool) or not isinstance(nope, int) or nope < 0:
            raise ValueError("qk_nope_head_dim")
        rope = _pos_int(cfg.get("qk_rope_head_dim"), "qk_rope_head_dim")
        return (layers, heads, _pos_int(cfg["kv_lora_rank"], "kv_lora_rank") + rope,
                nope + rope + _pos_int(cfg.get("v_head_dim"), "v_head_dim"))
    hd = cfg.get("head_dim")
    if hd is None:
        hd = _pos_int(cfg.get("hidden_size"), "hidden_size") // heads
    hd = _pos_int(hd, "head_dim")
    kv = _pos_int(cfg.get("num_key_value_heads", heads), "num_key_value_heads")
    return layers, heads, 2 * kv * hd, 2 * hd


def _flops_per_s(gpu: Any, dtype: str, mfu: Any) -> float:
    m = _number(mfu, "mfu")
    if m > 1:
        raise ValueError("mfu")
    if not isinstance(gpu, dict) or not isinstance(gpu.get("tensor_tflops"), dict) or \
            not isinstance(gpu["tensor_tflops"].get(dtype), dict):
        raise ValueError("gpu")
    return _number(gpu["tensor_tflops"][dtype].get("dense"), "dense") * 1e12 * m


def _exact_flops_per_s(gpu: Any, dtype: str, mfu: Any) -> Fraction:
    _flops_per_s(gpu, dtype, mfu)            # the checks
    return Fraction(gpu["tensor_tflops"][dtype]["dense"]) * 10**12 * Fraction(mfu)


def kv_bytes_per_token(cfg: dict[str, Any], kv_dtype_bytes: int) -> int:
    layers, _, per_layer, _ = _fields(cfg)
    return layers * per_layer * _pos_int(kv_dtype_bytes, "kv_dtype_bytes")


def recompute_flops(cfg: dict[str, Any], active_params: int, prefix_len: int) -> int:
    layers, heads, _, dims = _fields(cfg)
    n = _pos_int(prefix_len, "prefix_len")
    return 2 * _pos_int(active_params, "active_params") * n + layers * heads * dims * n ** 2


def recompute_time_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                     prefix_len: int, mfu: float, dtype: str = "bf16") -> float:
    return recompute_flops(cfg, active_params, prefix_len) / _flops_per_s(gpu, dtype, mfu)


def fetch_time_s(cfg: dict[str, Any], kv_dtype_bytes: int, prefix_len: int,
                 latency_s: float, link_gb_s: float) -> float:
    total = kv_bytes_per_token(cfg, kv_dtype_bytes) * _pos_int(prefix_len, "prefix_len")
    return (_number(latency_s, "latency_s", allow_zero=True)
            + total / (_number(link_gb_s, "link_gb_s") * 1e9))


def break_even_gb_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, dtype: str = "bf16") -> float:
    tokens_per_s = _flops_per_s(gpu, dtype, mfu) / (2 * _pos_int(active_params, "active_params"))
    return kv_bytes_per_token(cfg, kv_dtype_bytes) * tokens_per_s / 1e9


def fetch_wins_from(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, latency_s: float, link_gb_s: float,
                    dtype: str = "bf16") -> int | None:
    window = cfg.get("max_position_embeddings") if isinstance(cfg, dict) else None
    per_token = kv_bytes_per_token(cfg, kv_dtype_bytes)
    rate = _exact_flops_per_s(gpu, dtype, mfu)
    lat = Fraction(_number(latency_s, "latency_s", allow_zero=True))
    link = Fraction(_number(link_gb_s, "link_gb_s")) * 10**9
    _pos_int(window, "max_position_embeddings")
    assert isinstance(window, int)

    def wins(n: int) -> bool:
        return recompute_flops(cfg, active_params, n) / rate > lat + per_token * n / link

    hi = 1
    while hi < window and not wins(hi):      # gallop: 1, 2, 4, ... up to the window
        hi = min(2 * hi, window)
    if not wins(hi):
        return None
    lo = hi // 2                             # lo loses (or is 0), hi wins
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if wins(mid):
            hi = mid
        else:
            lo = mid
    return hi


def pd_link_gb_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                 kv_dtype_bytes: int, mfu: float, prompt_len: int,
                 dtype: str = "bf16") -> float:
    t = recompute_time_s(cfg, gpu, active_params, prompt_len, mfu, dtype)
    return kv_bytes_per_token(cfg, kv_dtype_bytes) * prompt_len / t / 1e9


def links_too_slow(models: dict[str, tuple[dict[str, Any], int]],
                   gpus: dict[str, dict[str, Any]], links: dict[str, float],
                   kv_dtype_bytes: int, mfu: float,
                   dtype: str = "bf16") -> list[tuple[str, str, str]]:
    if not all(isinstance(d, dict) and all(isinstance(k, str) for k in d)
               for d in (models, gpus, links)):
        raise ValueError("tables")
    caps = {k: Fraction(_number(v, f"link {k}")) for k, v in links.items()}
    _pos_int(kv_dtype_bytes, "kv_dtype_bytes")
    if _number(mfu, "mfu") > 1:
        raise ValueError("mfu")
    for entry in gpus.values():                  # checked even when no model uses them
        _flops_per_s(entry, dtype, mfu)
    for mname, pair in models.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(mname)
        _fields(pair[0])
        _pos_int(pair[1], "active_params")
    found = []
    for mname, pair in models.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(mname)
        cfg, active = pair
        per_token = kv_bytes_per_token(cfg, kv_dtype_bytes)
        for gname, entry in gpus.items():
            need = (per_token * _exact_flops_per_s(entry, dtype, mfu)
                    / (2 * _pos_int(active, "active_params")) / 10**9)
            found += [(mname, gname, lname) for lname, cap in caps.items() if need > cap]
    return sorted(found)


def handoff_ttft_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                   kv_dtype_bytes: int, mfu: float, prompt_len: int, latency_s: float,
                   link_gb_s: float, dtype: str = "bf16") -> tuple[float, float]:
    p = recompute_time_s(cfg, gpu, active_params, prompt_len, mfu, dtype)
    lat = _number(latency_s, "latency_s", allow_zero=True)
    s = fetch_time_s(cfg, kv_dtype_bytes, prompt_len, 0, link_gb_s)
    layers = _fields(cfg)[0]
    return lat + s, lat + max(s / layers, s - (layers - 1) * p / layers)


def tier_values(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                kv_dtype_bytes: int, mfu: float, prefix_len: int,
                tiers: list[tuple[str, float, float]],
                dtype: str = "bf16") -> list[tuple[str, float]]:
    r = recompute_time_s(cfg, gpu, active_params, prefix_len, mfu, dtype)
    if not isinstance(tiers, (list, tuple)):
        raise ValueError("tiers")
    out = []
    for tier in tiers:
        if not (isinstance(tier, (list, tuple)) and len(tier) == 3 and isinstance(tier[0], str)):
            raise ValueError(f"tier {tier!r}")
        f = fetch_time_s(cfg, kv_dtype_bytes, prefix_len, tier[1], tier[2])
        out.append((tier[0], (r - f) / prefix_len))
    return out


def ssd_endurance_tb(dwpd: float, capacity_tb: float, years: float) -> float:
    return _number(dwpd, "dwpd") * _number(capacity_tb, "capacity_tb") * 365 * _number(years, "years")


def ssd_days(endurance_tb: float, write_gb_s: float) -> float:
    return _number(endurance_tb, "endurance_tb") * 1e12 / (_number(write_gb_s, "write_gb_s") * 1e9) / 86400
