"""Reference solution for the kv_transfer kata: recompute a prefix or fetch its KV.

Everything is computed exactly in ``fractions.Fraction`` (a float is taken at its exact
binary value); times and rates are rounded to a float only when returned. Units: bytes,
FLOPs, seconds; GB/s = 10^9 bytes/s, TFLOP/s = 10^12 FLOP/s.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

GB = 10**9
TERA = 10**12
DAY_S = 86_400
YEAR_DAYS = 365


def _int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def _num(name: str, value: Any, *, positive: bool) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    x = Fraction(value)
    if x < 0 or (positive and x == 0):
        raise ValueError(f"{name} must be {'positive' if positive else '>= 0'}, got {value!r}")
    return x


def _mfu(mfu: Any) -> Fraction:
    m = _num("mfu", mfu, positive=True)
    if m > 1:
        raise ValueError(f"mfu must be in (0, 1], got {mfu!r}")
    return m


class _Model:
    """The fields of a config this kata reads."""

    def __init__(self, cfg: Any) -> None:
        if not isinstance(cfg, dict):
            raise ValueError("cfg must be a config.json dict")
        if "sliding_attention" in (cfg.get("layer_types") or []) or (
                cfg.get("sliding_window") is not None and cfg.get("use_sliding_window") is not False):
            raise ValueError("sliding-window attention is not covered by this kata")
        self.layers = _int("num_hidden_layers", cfg.get("num_hidden_layers"), 1)
        self.heads = _int("num_attention_heads", cfg.get("num_attention_heads"), 1)
        if cfg.get("kv_lora_rank") is not None:
            rank = _int("kv_lora_rank", cfg.get("kv_lora_rank"), 1)
            rope = _int("qk_rope_head_dim", cfg.get("qk_rope_head_dim"), 1)
            self.kv_elems = rank + rope                       # one latent per layer
            self.qk_dim = _int("qk_nope_head_dim", cfg.get("qk_nope_head_dim"), 0) + rope
            self.v_dim = _int("v_head_dim", cfg.get("v_head_dim"), 1)
        else:
            kv_heads = _int("num_key_value_heads",
                            cfg.get("num_key_value_heads", self.heads), 1)
            head_dim = cfg.get("head_dim")
            if head_dim is None:
                head_dim = _int("hidden_size", cfg.get("hidden_size"), 1) // self.heads
            self.qk_dim = self.v_dim = _int("head_dim", head_dim, 1)
            self.kv_elems = 2 * kv_heads * self.qk_dim        # K and V
        self.window = cfg.get("max_position_embeddings")

    def context_window(self) -> int:
        return _int("max_position_embeddings", self.window, 1)


def _peak(gpu: Any, dtype: str) -> Fraction:
    try:
        dense = gpu["tensor_tflops"][dtype]["dense"]
    except (KeyError, TypeError):
        raise ValueError(f"the GPU entry has no dense {dtype!r} TFLOP/s") from None
    return _num("dense TFLOP/s", dense, positive=True) * TERA


def kv_bytes_per_token(cfg: dict[str, Any], kv_dtype_bytes: int) -> int:
    m = _Model(cfg)
    return m.layers * m.kv_elems * _int("kv_dtype_bytes", kv_dtype_bytes, 1)


def recompute_flops(cfg: dict[str, Any], active_params: int, prefix_len: int) -> int:
    m = _Model(cfg)
    n = _int("prefix_len", prefix_len, 1)
    return (2 * _int("active_params", active_params, 1) * n
            + m.layers * m.heads * (m.qk_dim + m.v_dim) * n * n)


def _recompute(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
               prefix_len: int, mfu: float, dtype: str) -> Fraction:
    flops = recompute_flops(cfg, active_params, prefix_len)
    return flops / (_peak(gpu, dtype) * _mfu(mfu))


def _fetch(cfg: dict[str, Any], kv_dtype_bytes: int, prefix_len: int, latency_s: float,
           link_gb_s: float) -> Fraction:
    nbytes = kv_bytes_per_token(cfg, kv_dtype_bytes) * _int("prefix_len", prefix_len, 1)
    return (_num("latency_s", latency_s, positive=False)
            + nbytes / (_num("link_gb_s", link_gb_s, positive=True) * GB))


def recompute_time_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                     prefix_len: int, mfu: float, dtype: str = "bf16") -> float:
    return float(_recompute(cfg, gpu, active_params, prefix_len, mfu, dtype))


def fetch_time_s(cfg: dict[str, Any], kv_dtype_bytes: int, prefix_len: int,
                 latency_s: float, link_gb_s: float) -> float:
    return float(_fetch(cfg, kv_dtype_bytes, prefix_len, latency_s, link_gb_s))


def _break_even(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                kv_dtype_bytes: int, mfu: float, dtype: str) -> Fraction:
    # Bytes per token over the linear term's seconds per token: 2 x active / (peak x mfu).
    per_token = kv_bytes_per_token(cfg, kv_dtype_bytes)
    rate = _peak(gpu, dtype) * _mfu(mfu) / (2 * _int("active_params", active_params, 1))
    return per_token * rate / GB


def break_even_gb_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, dtype: str = "bf16") -> float:
    return float(_break_even(cfg, gpu, active_params, kv_dtype_bytes, mfu, dtype))


def fetch_wins_from(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, latency_s: float, link_gb_s: float,
                    dtype: str = "bf16") -> int | None:
    window = _Model(cfg).context_window()

    def wins(n: int) -> bool:
        return (_recompute(cfg, gpu, active_params, n, mfu, dtype)
                > _fetch(cfg, kv_dtype_bytes, n, latency_s, link_gb_s))

    # recompute - fetch is a T^2 + b T - latency with a > 0: at most one sign change for
    # T > 0, from not winning to winning. Binary search for it, exactly.
    if not wins(window):
        return None
    lo, hi = 0, window                  # wins(hi); lo = 0 or not wins(lo)
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
    nbytes = kv_bytes_per_token(cfg, kv_dtype_bytes) * _int("prompt_len", prompt_len, 1)
    return float(nbytes / _recompute(cfg, gpu, active_params, prompt_len, mfu, dtype) / GB)


def links_too_slow(models: dict[str, tuple[dict[str, Any], int]],
                   gpus: dict[str, dict[str, Any]], links: dict[str, float],
                   kv_dtype_bytes: int, mfu: float,
                   dtype: str = "bf16") -> list[tuple[str, str, str]]:
    for what, table in (("models", models), ("gpus", gpus), ("links", links)):
        if not isinstance(table, dict) or not all(isinstance(k, str) for k in table):
            raise ValueError(f"{what} must be a dict keyed by name")
    rates = {name: _num(f"link {name!r}", gb_s, positive=True) for name, gb_s in links.items()}
    # Every entry and argument is checked, even when an empty table leaves no triple.
    _int("kv_dtype_bytes", kv_dtype_bytes, 1)
    _mfu(mfu)
    for gpu in gpus.values():
        _peak(gpu, dtype)
    for model, entry in models.items():
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise ValueError(f"models[{model!r}] must be a (cfg, active_params) pair")
        _Model(entry[0])
        _int("active_params", entry[1], 1)
    need: dict[tuple[str, str], Fraction] = {}
    for model, (cfg, active) in models.items():
        for gpu_name, gpu in gpus.items():
            need[model, gpu_name] = _break_even(cfg, gpu, active, kv_dtype_bytes, mfu, dtype)
    return sorted((model, gpu_name, link) for (model, gpu_name), gb_s in need.items()
                  for link, rate in rates.items() if gb_s > rate)


def handoff_ttft_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                   kv_dtype_bytes: int, mfu: float, prompt_len: int, latency_s: float,
                   link_gb_s: float, dtype: str = "bf16") -> tuple[float, float]:
    prefill = _recompute(cfg, gpu, active_params, prompt_len, mfu, dtype)
    latency = _num("latency_s", latency_s, positive=False)
    send = _fetch(cfg, kv_dtype_bytes, prompt_len, latency_s, link_gb_s) - latency
    layers = _Model(cfg).layers
    # Layer i's KV leaves when layer i is computed and the link is free: the last layer's
    # share is exposed, or the link's backlog when it is slower than the layers.
    layerwise = latency + max(send / layers, send - prefill * (layers - 1) / layers)
    return float(latency + send), float(layerwise)


def tier_values(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                kv_dtype_bytes: int, mfu: float, prefix_len: int,
                tiers: list[tuple[str, float, float]],
                dtype: str = "bf16") -> list[tuple[str, float]]:
    if not isinstance(tiers, (list, tuple)):
        raise ValueError("tiers must be a list of (name, latency_s, link_gb_s)")
    recompute = _recompute(cfg, gpu, active_params, prefix_len, mfu, dtype)
    values = []
    for tier in tiers:
        if not isinstance(tier, (list, tuple)) or len(tier) != 3 or not isinstance(tier[0], str):
            raise ValueError(f"a tier is (name, latency_s, link_gb_s), got {tier!r}")
        name, latency, gb_s = tier
        fetch = _fetch(cfg, kv_dtype_bytes, prefix_len, latency, gb_s)
        values.append((name, float((recompute - fetch) / prefix_len)))
    return values


def ssd_endurance_tb(dwpd: float, capacity_tb: float, years: float) -> float:
    return float(_num("dwpd", dwpd, positive=True) * _num("capacity_tb", capacity_tb, positive=True)
            * YEAR_DAYS * _num("years", years, positive=True))


def ssd_days(endurance_tb: float, write_gb_s: float) -> float:
    written = _num("endurance_tb", endurance_tb, positive=True) * TERA
    return float(written / (_num("write_gb_s", write_gb_s, positive=True) * GB) / DAY_S)
