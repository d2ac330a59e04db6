"""kv_transfer, written a second time from the prompt and the stub: per-token coefficients
and the exact root of the crossover's quadratic.

Who and how: the kata's author, after the reference, working from katas/kv_transfer/README.md
only and in a deliberately different shape (so not blind): one frozen ``Setup`` holds the
per-token coefficients (seconds per token and per token^2 of recompute, seconds per token
of fetch), and ``fetch_wins_from`` solves a T^2 + b T - c = 0 with an integer square root
and settles the answer with exact comparisons, where the reference binary-searches.
Later (after a blind tester's notes), ``links_too_slow`` gained checks of every table entry
even when an empty table leaves no triple, when the prompt made that a rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any


def _count(value: Any, what: str) -> int:
    if type(value) is not int or value < 1:          # bool's type is bool, not int
        raise ValueError(f"{what}: need an int >= 1, got {value!r}")
    return value


def _real(value: Any, what: str, zero_ok: bool = False) -> Fraction:
    if type(value) not in (int, float) or (type(value) is float and not math.isfinite(value)):
        raise ValueError(f"{what}: need a finite int or float, got {value!r}")
    q = Fraction(value)
    if q < 0 or (q == 0 and not zero_ok):
        raise ValueError(f"{what}: out of range: {value!r}")
    return q


@dataclass(frozen=True)
class Shape:
    layers: int
    q_heads: int
    kv_per_layer: int          # KV elements per token per layer
    attn_dims: int             # d_qk + d_v
    window: Any

    @staticmethod
    def of(cfg: Any) -> "Shape":
        if not isinstance(cfg, dict):
            raise ValueError("cfg must be a dict")
        kinds = cfg.get("layer_types") or ()
        if "sliding_attention" in kinds:
            raise ValueError("sliding layers are out of scope")
        if cfg.get("sliding_window") is not None and cfg.get("use_sliding_window") is not False:
            raise ValueError("a sliding window is out of scope")
        L = _count(cfg.get("num_hidden_layers"), "num_hidden_layers")
        q = _count(cfg.get("num_attention_heads"), "num_attention_heads")
        if cfg.get("kv_lora_rank") is not None:
            rope = _count(cfg.get("qk_rope_head_dim"), "qk_rope_head_dim")
            nope = cfg.get("qk_nope_head_dim")
            if type(nope) is not int or nope < 0:
                raise ValueError(f"qk_nope_head_dim: {nope!r}")
            latent = _count(cfg["kv_lora_rank"], "kv_lora_rank") + rope
            return Shape(L, q, latent, nope + rope + _count(cfg.get("v_head_dim"), "v_head_dim"),
                         cfg.get("max_position_embeddings"))
        d = cfg.get("head_dim")
        d = _count(cfg.get("hidden_size"), "hidden_size") // q if d is None else _count(d, "head_dim")
        kv = cfg["num_key_value_heads"] if "num_key_value_heads" in cfg else q
        return Shape(L, q, 2 * _count(kv, "num_key_value_heads") * _count(d, "head_dim"), 2 * d,
                     cfg.get("max_position_embeddings"))


@dataclass(frozen=True)
class Setup:
    """recompute(T) = lin T + quad T^2; fetch(T) = latency + per_byte x bytes_per_token x T."""
    shape: Shape
    bytes_per_token: int
    lin: Fraction              # seconds per token of the matrices
    quad: Fraction             # seconds per token^2 of attention

    @staticmethod
    def of(cfg: Any, gpu: Any, active: Any, kvb: Any, mfu: Any, dtype: str) -> "Setup":
        shape = Shape.of(cfg)
        a = _count(active, "active_params")
        per_token = shape.layers * shape.kv_per_layer * _count(kvb, "kv_dtype_bytes")
        u = _real(mfu, "mfu")
        if u > 1:
            raise ValueError(f"mfu above 1: {mfu!r}")
        try:
            dense = gpu["tensor_tflops"][dtype]["dense"]
        except (KeyError, TypeError, IndexError):
            raise ValueError(f"no dense {dtype} peak") from None
        rate = _real(dense, "dense TFLOP/s") * 10**12 * u
        return Setup(shape, per_token, 2 * a / rate,
                     Fraction(shape.layers * shape.q_heads * shape.attn_dims) / rate)

    def recompute(self, t: int) -> Fraction:
        return self.lin * t + self.quad * t * t

    def fetch(self, t: int, latency: Fraction, link: Fraction) -> Fraction:
        return latency + self.bytes_per_token * t / (link * 10**9)


def kv_bytes_per_token(cfg: dict[str, Any], kv_dtype_bytes: int) -> int:
    s = Shape.of(cfg)
    return s.layers * s.kv_per_layer * _count(kv_dtype_bytes, "kv_dtype_bytes")


def recompute_flops(cfg: dict[str, Any], active_params: int, prefix_len: int) -> int:
    s = Shape.of(cfg)
    t = _count(prefix_len, "prefix_len")
    return 2 * _count(active_params, "active_params") * t + s.layers * s.q_heads * s.attn_dims * t * t


def recompute_time_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                     prefix_len: int, mfu: float, dtype: str = "bf16") -> float:
    setup = Setup.of(cfg, gpu, active_params, 1, mfu, dtype)
    return float(setup.recompute(_count(prefix_len, "prefix_len")))


def fetch_time_s(cfg: dict[str, Any], kv_dtype_bytes: int, prefix_len: int,
                 latency_s: float, link_gb_s: float) -> float:
    per_token = kv_bytes_per_token(cfg, kv_dtype_bytes)
    t = _count(prefix_len, "prefix_len")
    return float(_real(latency_s, "latency_s", zero_ok=True)
                 + Fraction(per_token * t) / (_real(link_gb_s, "link_gb_s") * 10**9))


def break_even_gb_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, dtype: str = "bf16") -> float:
    setup = Setup.of(cfg, gpu, active_params, kv_dtype_bytes, mfu, dtype)
    return float(setup.bytes_per_token / setup.lin / 10**9)


def fetch_wins_from(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, latency_s: float, link_gb_s: float,
                    dtype: str = "bf16") -> int | None:
    setup = Setup.of(cfg, gpu, active_params, kv_dtype_bytes, mfu, dtype)
    c = _real(latency_s, "latency_s", zero_ok=True)
    link = _real(link_gb_s, "link_gb_s")
    window = setup.shape.window
    if type(window) is not int or window < 1:
        raise ValueError(f"max_position_embeddings: {window!r}")
    a = setup.quad
    b = setup.lin - Fraction(setup.bytes_per_token) / (link * 10**9)

    def gain(t: int) -> Fraction:
        return a * t * t + b * t - c

    # the larger root of a t^2 + b t - c, by an integer square root of the discriminant
    disc = b * b + 4 * a * c
    root_floor = Fraction(math.isqrt(disc.numerator * disc.denominator), disc.denominator)
    t = max(1, math.floor((root_floor - b) / (2 * a)))
    while gain(t) <= 0:
        t += 1
    while t > 1 and gain(t - 1) > 0:
        t -= 1
    return t if t <= window else None


def pd_link_gb_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                 kv_dtype_bytes: int, mfu: float, prompt_len: int,
                 dtype: str = "bf16") -> float:
    setup = Setup.of(cfg, gpu, active_params, kv_dtype_bytes, mfu, dtype)
    t = _count(prompt_len, "prompt_len")
    return float(setup.bytes_per_token * t / setup.recompute(t) / 10**9)


_STAND_IN_GPU = {"tensor_tflops": {"bf16": {"dense": 1}}}
_STAND_IN_CFG = {"num_hidden_layers": 1, "num_attention_heads": 1, "head_dim": 1}


def links_too_slow(models: dict[str, tuple[dict[str, Any], int]],
                   gpus: dict[str, dict[str, Any]], links: dict[str, float],
                   kv_dtype_bytes: int, mfu: float,
                   dtype: str = "bf16") -> list[tuple[str, str, str]]:
    for table in (models, gpus, links):
        if not isinstance(table, dict) or any(type(k) is not str for k in table):
            raise ValueError("models, gpus and links are dicts keyed by name")
    caps = [(name, _real(rate, f"link {name}")) for name, rate in links.items()]
    for mname, pair in models.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"{mname}: need (cfg, active_params)")
    # Check every entry, even one no triple uses: price each model and each GPU once
    # against a stand-in partner (and the stand-ins together, for the other arguments).
    Setup.of(_STAND_IN_CFG, _STAND_IN_GPU, 1, kv_dtype_bytes, mfu, "bf16")
    for pair in models.values():
        Setup.of(pair[0], _STAND_IN_GPU, pair[1], kv_dtype_bytes, mfu, "bf16")
    for entry in gpus.values():
        Setup.of(_STAND_IN_CFG, entry, 1, kv_dtype_bytes, mfu, dtype)
    out: list[tuple[str, str, str]] = []
    for mname, pair in models.items():
        for gname, entry in gpus.items():
            s = Setup.of(pair[0], entry, pair[1], kv_dtype_bytes, mfu, dtype)
            need = s.bytes_per_token / s.lin / 10**9
            out.extend((mname, gname, lname) for lname, cap in caps if need > cap)
    out.sort()
    return out


def handoff_ttft_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                   kv_dtype_bytes: int, mfu: float, prompt_len: int, latency_s: float,
                   link_gb_s: float, dtype: str = "bf16") -> tuple[float, float]:
    setup = Setup.of(cfg, gpu, active_params, kv_dtype_bytes, mfu, dtype)
    t = _count(prompt_len, "prompt_len")
    lat = _real(latency_s, "latency_s", zero_ok=True)
    busy = setup.fetch(t, Fraction(0), _real(link_gb_s, "link_gb_s"))
    L = setup.shape.layers
    layer_compute, layer_send = setup.recompute(t) / L, busy / L
    # the last layer's transfer ends at max(P + x, p + L x): the link's backlog or the tail
    last_end = max(L * layer_compute + layer_send, layer_compute + L * layer_send)
    return float(lat + busy), float(lat + last_end - L * layer_compute)


def tier_values(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                kv_dtype_bytes: int, mfu: float, prefix_len: int,
                tiers: list[tuple[str, float, float]],
                dtype: str = "bf16") -> list[tuple[str, float]]:
    setup = Setup.of(cfg, gpu, active_params, kv_dtype_bytes, mfu, dtype)
    t = _count(prefix_len, "prefix_len")
    if not isinstance(tiers, (list, tuple)):
        raise ValueError("tiers must be a list")
    checked = []
    for tier in tiers:
        if not isinstance(tier, (list, tuple)) or len(tier) != 3 or type(tier[0]) is not str:
            raise ValueError(f"bad tier {tier!r}")
        checked.append((tier[0], _real(tier[1], "latency_s", zero_ok=True),
                        _real(tier[2], "link_gb_s")))
    saved = setup.recompute(t)
    return [(name, float((saved - setup.fetch(t, lat, link)) / t)) for name, lat, link in checked]


def ssd_endurance_tb(dwpd: float, capacity_tb: float, years: float) -> float:
    return float(_real(dwpd, "dwpd") * _real(capacity_tb, "capacity_tb") * 365
                 * _real(years, "years"))


def ssd_days(endurance_tb: float, write_gb_s: float) -> float:
    seconds = _real(endurance_tb, "endurance_tb") * 1000 / _real(write_gb_s, "write_gb_s")
    return float(seconds / 86400)
