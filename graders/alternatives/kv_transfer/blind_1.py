"""kv_transfer: an independent correct solution, written blind.

Written by a blind tester session, 2026-12-05, from the prompt, stub and public tests only
(it saw neither the reference nor the hidden tests); kept as the tester wrote it, with only
this docstring and one type annotation (``slow``, for mypy --strict) changed. It scored full
marks (90/90, isolated) as written. Its notes on the prompt made the prompt exact on which
config fields every function checks and on ``links_too_slow`` checking every table entry
(its own reading in both).

How it differs from the reference (solutions/kv_transfer.py): one frozen ``_Arch`` record
per config, validated once, that checks every architecture field in every function (the
reference reads the same fields); a ``_Setup`` of exact per-token coefficients (seconds per
token and per token^2 of recompute); ``fetch_wins_from`` scales the quadratic
recompute - fetch to integer coefficients and takes ``math.isqrt`` of its discriminant, then
nudges the root with exact integer comparisons, where the reference binary-searches the
window; ``links_too_slow`` validates every table entry before pricing any triple.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NamedTuple

_GB = 10**9
_TERA = 10**12
_DAY = 86_400


# ---------------------------------------------------------------- validation
def _bad(msg: str) -> ValueError:
    return ValueError(msg)


def _is_real(x: Any) -> bool:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    return isinstance(x, int) or math.isfinite(x)


def _real(x: Any, name: str) -> Fraction:
    if not _is_real(x):
        raise _bad(f"{name} must be a finite int or float, got {x!r}")
    return Fraction(x)


def _positive(x: Any, name: str) -> Fraction:
    v = _real(x, name)
    if v <= 0:
        raise _bad(f"{name} must be > 0, got {x!r}")
    return v


def _non_negative(x: Any, name: str) -> Fraction:
    v = _real(x, name)
    if v < 0:
        raise _bad(f"{name} must be >= 0, got {x!r}")
    return v


def _count(x: Any, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < 1:
        raise _bad(f"{name} must be an int >= 1, got {x!r}")
    return x


def _mfu(x: Any) -> Fraction:
    v = _real(x, "mfu")
    if not 0 < v <= 1:
        raise _bad(f"mfu must lie in (0, 1], got {x!r}")
    return v


def _field(cfg: dict[str, Any], key: str, *, zero_ok: bool = False) -> int:
    if key not in cfg:
        raise _bad(f"config has no {key!r}")
    v = cfg[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < (0 if zero_ok else 1):
        raise _bad(f"config field {key!r} must be a {'non-negative' if zero_ok else 'positive'} int, got {v!r}")
    return v


def _peak(gpu: Any, dtype: Any) -> Fraction:
    """Dense tensor FLOP/s of the GPU for dtype (exact)."""
    try:
        dense = gpu["tensor_tflops"][dtype]["dense"]
    except (KeyError, TypeError, IndexError):
        raise _bad(f"gpu has no tensor_tflops[{dtype!r}]['dense']") from None
    if not isinstance(gpu, dict) or not isinstance(dtype, str):
        raise _bad("gpu must be a datasheet dict and dtype a str")
    return _positive(dense, "dense TFLOP/s") * _TERA


def _sliding(cfg: dict[str, Any]) -> bool:
    kinds = cfg.get("layer_types")
    if isinstance(kinds, (list, tuple)) and "sliding_attention" in kinds:
        return True
    return cfg.get("sliding_window") is not None and cfg.get("use_sliding_window") is not False


class _Arch(NamedTuple):
    layers: int
    q_heads: int
    kv_elems: int      # KV elements per token per layer (both K and V for GQA; the latent for MLA)
    dims: int          # d_qk + d_v


def _arch(cfg: Any) -> _Arch:
    if not isinstance(cfg, dict):
        raise _bad("cfg must be a dict")
    if _sliding(cfg):
        raise _bad("sliding-window attention: KV stops growing with the prefix; refused")
    layers = _field(cfg, "num_hidden_layers")
    q = _field(cfg, "num_attention_heads")
    if cfg.get("kv_lora_rank") is not None:
        rank = _field(cfg, "kv_lora_rank")
        rope = _field(cfg, "qk_rope_head_dim")
        nope = _field(cfg, "qk_nope_head_dim", zero_ok=True)
        v = _field(cfg, "v_head_dim")
        return _Arch(layers, q, rank + rope, nope + rope + v)
    if cfg.get("head_dim") is None:
        head_dim = _field(cfg, "hidden_size") // q
        if head_dim < 1:
            raise _bad("hidden_size // num_attention_heads is 0")
    else:
        head_dim = _field(cfg, "head_dim")
    kv_heads = _field(cfg, "num_key_value_heads") if "num_key_value_heads" in cfg else q
    return _Arch(layers, q, 2 * kv_heads * head_dim, 2 * head_dim)


def _window(cfg: dict[str, Any]) -> int:
    w = cfg.get("max_position_embeddings")
    if isinstance(w, bool) or not isinstance(w, int) or w < 1:
        raise _bad(f"max_position_embeddings must be an int >= 1, got {w!r}")
    return w


# ---------------------------------------------------------------- exact core
class _Setup:
    """Exact per-token coefficients: recompute(T) = (lin T + quad T^2) seconds."""

    def __init__(self, cfg: Any, gpu: Any, active: Any, kv_bytes: Any, mfu: Any, dtype: Any) -> None:
        a = _arch(cfg)
        self.arch = a
        self.active = _count(active, "active_params")
        self.bytes_per_token = a.kv_elems * a.layers * _count(kv_bytes, "kv_dtype_bytes")
        rate = _peak(gpu, dtype) * _mfu(mfu)                     # FLOP/s achieved
        self.lin = Fraction(2 * self.active) / rate               # s per token, linear term
        self.quad = Fraction(a.layers * a.q_heads * a.dims) / rate  # s per token^2

    def recompute(self, t: int) -> Fraction:
        return t * (self.lin + self.quad * t)

    def send(self, t: int, link: Fraction) -> Fraction:
        return Fraction(self.bytes_per_token * t) / (link * _GB)


def _flops(arch: _Arch, active: int, t: int) -> int:
    return 2 * active * t + arch.layers * arch.q_heads * arch.dims * t * t


# ---------------------------------------------------------------- API
def kv_bytes_per_token(cfg: dict[str, Any], kv_dtype_bytes: int) -> int:
    a = _arch(cfg)
    return a.layers * a.kv_elems * _count(kv_dtype_bytes, "kv_dtype_bytes")


def recompute_flops(cfg: dict[str, Any], active_params: int, prefix_len: int) -> int:
    a = _arch(cfg)
    return _flops(a, _count(active_params, "active_params"), _count(prefix_len, "prefix_len"))


def recompute_time_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                     prefix_len: int, mfu: float, dtype: str = "bf16") -> float:
    a = _arch(cfg)
    flops = _flops(a, _count(active_params, "active_params"), _count(prefix_len, "prefix_len"))
    return float(flops / (_peak(gpu, dtype) * _mfu(mfu)))


def fetch_time_s(cfg: dict[str, Any], kv_dtype_bytes: int, prefix_len: int,
                 latency_s: float, link_gb_s: float) -> float:
    per_token = kv_bytes_per_token(cfg, kv_dtype_bytes)
    t = _count(prefix_len, "prefix_len")
    lat = _non_negative(latency_s, "latency_s")
    link = _positive(link_gb_s, "link_gb_s")
    return float(lat + Fraction(per_token * t) / (link * _GB))


def _break_even(s: _Setup) -> Fraction:
    # bytes per token / (seconds of linear recompute per token), in GB/s
    return s.bytes_per_token / s.lin / _GB


def break_even_gb_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, dtype: str = "bf16") -> float:
    return float(_break_even(_Setup(cfg, gpu, active_params, kv_dtype_bytes, mfu, dtype)))


def fetch_wins_from(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, latency_s: float, link_gb_s: float,
                    dtype: str = "bf16") -> int | None:
    s = _Setup(cfg, gpu, active_params, kv_dtype_bytes, mfu, dtype)
    lat = _non_negative(latency_s, "latency_s")
    link = _positive(link_gb_s, "link_gb_s")
    window = _window(cfg)
    # recompute - fetch = quad T^2 + (lin - bytes/link) T - lat; scale to integers.
    qa, qb, qc = s.quad, s.lin - Fraction(s.bytes_per_token) / (link * _GB), lat
    den = math.lcm(qa.denominator, qb.denominator, qc.denominator)
    a, b, c = int(qa * den), int(qb * den), int(qc * den)

    def wins(t: int) -> bool:
        return a * t * t + b * t - c > 0

    if not wins(window):
        return None
    root = math.isqrt(b * b + 4 * a * c)          # a > 0, c >= 0: real, one positive root
    t = min(window, max(1, (root - b) // (2 * a) + 1))
    while t > 1 and wins(t - 1):
        t -= 1
    while not wins(t):
        t += 1
    return t


def pd_link_gb_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                 kv_dtype_bytes: int, mfu: float, prompt_len: int,
                 dtype: str = "bf16") -> float:
    s = _Setup(cfg, gpu, active_params, kv_dtype_bytes, mfu, dtype)
    t = _count(prompt_len, "prompt_len")
    return float(Fraction(s.bytes_per_token * t) / s.recompute(t) / _GB)


def links_too_slow(models: dict[str, tuple[dict[str, Any], int]],
                   gpus: dict[str, dict[str, Any]], links: dict[str, float],
                   kv_dtype_bytes: int, mfu: float,
                   dtype: str = "bf16") -> list[tuple[str, str, str]]:
    for what, table in (("models", models), ("gpus", gpus), ("links", links)):
        if not isinstance(table, dict) or not all(isinstance(k, str) for k in table):
            raise _bad(f"{what} must be a dict keyed by str")
    rates = {name: _positive(rate, f"link {name!r}") for name, rate in links.items()}
    pairs: dict[str, tuple[Any, Any]] = {}
    for name, pair in models.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise _bad(f"models[{name!r}] must be a (cfg, active_params) pair")
        pairs[name] = (pair[0], pair[1])
    _count(kv_dtype_bytes, "kv_dtype_bytes")
    _mfu(mfu)
    for entry in gpus.values():
        _peak(entry, dtype)
    for cfg, active in pairs.values():
        _arch(cfg)
        _count(active, "active_params")
    slow: set[tuple[str, str, str]] = set()
    for mname, (cfg, active) in pairs.items():
        for gname, entry in gpus.items():
            need = _break_even(_Setup(cfg, entry, active, kv_dtype_bytes, mfu, dtype))
            slow.update((mname, gname, lname) for lname, r in rates.items() if need > r)
    return sorted(slow)


def handoff_ttft_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                   kv_dtype_bytes: int, mfu: float, prompt_len: int, latency_s: float,
                   link_gb_s: float, dtype: str = "bf16") -> tuple[float, float]:
    s = _Setup(cfg, gpu, active_params, kv_dtype_bytes, mfu, dtype)
    t = _count(prompt_len, "prompt_len")
    lat = _non_negative(latency_s, "latency_s")
    link = _positive(link_gb_s, "link_gb_s")
    n = s.arch.layers
    p, busy = s.recompute(t), s.send(t, link)
    # last transfer ends at max(P + S/L, P/L + S); subtract P
    exposed = max(busy / n, busy - (n - 1) * p / n)
    return float(lat + busy), float(lat + exposed)


def tier_values(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                kv_dtype_bytes: int, mfu: float, prefix_len: int,
                tiers: list[tuple[str, float, float]],
                dtype: str = "bf16") -> list[tuple[str, float]]:
    s = _Setup(cfg, gpu, active_params, kv_dtype_bytes, mfu, dtype)
    t = _count(prefix_len, "prefix_len")
    if not isinstance(tiers, (list, tuple)):
        raise _bad("tiers must be a list of (name, latency_s, link_gb_s)")
    parsed = []
    for tier in tiers:
        if not isinstance(tier, (tuple, list)) or len(tier) != 3 or not isinstance(tier[0], str):
            raise _bad(f"bad tier {tier!r}")
        parsed.append((tier[0], _non_negative(tier[1], "tier latency_s"),
                       _positive(tier[2], "tier link_gb_s")))
    saved = s.recompute(t)
    return [(name, float((saved - lat - s.send(t, link)) / t)) for name, lat, link in parsed]


def ssd_endurance_tb(dwpd: float, capacity_tb: float, years: float) -> float:
    return float(_positive(dwpd, "dwpd") * _positive(capacity_tb, "capacity_tb")
                 * 365 * _positive(years, "years"))


def ssd_days(endurance_tb: float, write_gb_s: float) -> float:
    tb = _positive(endurance_tb, "endurance_tb")
    rate = _positive(write_gb_s, "write_gb_s")
    return float(tb * _TERA / (rate * _GB) / _DAY)
