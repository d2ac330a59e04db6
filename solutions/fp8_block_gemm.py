"""Reference solution for the fp8_block_gemm kata.

Quantization: one float32 scale amax / 448 per 1 x 128 activation tile and per 128 x 128
weight block; elements rounded once to E4M3 from the exact quotient (float64 division of two
float32 values cannot land on the wrong side of an E4M3 tie). The GEMM sums each K block's
products exactly in float64 (products of E4M3 values have 8 significant bits and lie on the
grid 2**-18, so a sum of 128 of them is exact), rounds once to float32 and then follows the
stated float32 order: (p * sa) * sw, then acc + t, K blocks in increasing order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np

E4M3_MAX = 448.0
TILE = 128
WGMMA_K = 32
GGML_TYPES: dict[str, tuple[int, int]] = {
    "F32": (1, 4), "F16": (1, 2), "BF16": (1, 2),
    "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22), "Q5_1": (32, 24), "Q8_0": (32, 34),
    "Q2_K": (256, 84), "Q3_K": (256, 110), "Q4_K": (256, 144), "Q5_K": (256, 176),
    "Q6_K": (256, 210),
}
_MLA_KEYS = ("num_attention_heads", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
             "v_head_dim")


def _is_int(v: object) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _matrix(x: object, what: str) -> np.ndarray:
    a = x if isinstance(x, np.ndarray) else None
    if a is None or a.dtype != np.float32 or a.ndim != 2 or a.size == 0:
        raise ValueError(f"{what} must be a non-empty 2-D float32 array")
    if not np.isfinite(a).all():
        raise ValueError(f"{what} must be finite")
    return a


def _round_e4m3(v: np.ndarray) -> np.ndarray:
    """float64 in, float64 out: nearest E4M3 value, ties to even, saturating at +-448."""
    a = np.minimum(np.abs(v), E4M3_MAX)
    _, e = np.frexp(np.maximum(a, 2.0**-6))      # below 2**-6 the subnormal step 2**-9 holds
    quantum = np.ldexp(1.0, e - 4)               # 3 mantissa bits
    out: np.ndarray = np.copysign(np.round(a / quantum) * quantum, v)
    return out


def _nblocks(n: int) -> int:
    return -(-n // TILE)


def _quantize(x: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Blocks of ``rows`` x 128 (rows = 1 for activation tiles)."""
    m, k = x.shape
    mb, kb = -(-m // rows), _nblocks(k)
    padded = np.zeros((mb * rows, kb * TILE), dtype=np.float32)
    padded[:m, :k] = np.abs(x)
    amax = padded.reshape(mb, rows, kb, TILE).max(axis=(1, 3))
    scale = np.where(amax > 0, amax / np.float32(E4M3_MAX), np.float32(1.0)).astype(np.float32)
    full = np.repeat(np.repeat(scale, rows, axis=0), TILE, axis=1)[:m, :k]
    q = _round_e4m3(x.astype(np.float64) / full.astype(np.float64)).astype(np.float32)
    return q, scale


def quantize_activations(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-token, per-128-channel E4M3 quantization (see the kata stub)."""
    return _quantize(_matrix(x, "x"), 1)


def quantize_weights(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-128x128-block E4M3 quantization (see the kata stub)."""
    return _quantize(_matrix(w, "w"), TILE)


def _truncate(v: np.ndarray, bits: int) -> np.ndarray:
    """Round toward zero to ``bits`` significant bits (exponent unbounded)."""
    m, e = np.frexp(v)
    out: np.ndarray = np.ldexp(np.trunc(np.ldexp(m, bits)), e - bits)
    return out


def block_gemm(qa: np.ndarray, sa: np.ndarray, qw: np.ndarray, sw: np.ndarray,
               accum_bits: int | None = None) -> np.ndarray:
    """Block-scaled FP8 GEMM with per-K-block promotion to float32 (see the kata stub)."""
    qa, qw = _matrix(qa, "qa"), _matrix(qw, "qw")
    sa, sw = _matrix(sa, "sa"), _matrix(sw, "sw")
    (m, k), (n, k2) = qa.shape, qw.shape
    kb = _nblocks(k)
    if k2 != k or sa.shape != (m, kb) or sw.shape != (_nblocks(n), kb):
        raise ValueError(f"shapes do not match: qa {qa.shape}, sa {sa.shape}, qw {qw.shape}, "
                         f"sw {sw.shape}")
    for arr, what in ((qa, "qa"), (qw, "qw")):
        a64 = arr.astype(np.float64)
        if not (_round_e4m3(a64) == a64).all() or (np.abs(a64) > E4M3_MAX).any():
            raise ValueError(f"{what} must hold E4M3 values")
    if (sa <= 0).any() or (sw <= 0).any():
        raise ValueError("scales must be > 0")
    if accum_bits is not None and not (_is_int(accum_bits) and 1 <= accum_bits <= 24):
        raise ValueError(f"accum_bits must be None or an int in 1..24, got {accum_bits!r}")
    a64, w64 = qa.astype(np.float64), qw.astype(np.float64)
    sw_rows = np.repeat(sw, TILE, axis=0)[:n]            # (n, kb): each output column's scales
    acc = np.zeros((m, n), dtype=np.float32)
    for b in range(kb):
        lo, hi = b * TILE, min(b * TILE + TILE, k)
        if accum_bits is None:
            part = a64[:, lo:hi] @ w64[:, lo:hi].T       # exact in float64
        else:
            part = np.zeros((m, n))
            for g in range(lo, hi, WGMMA_K):
                gh = min(g + WGMMA_K, hi)
                part = _truncate(part + a64[:, g:gh] @ w64[:, g:gh].T, int(accum_bits))
        p = part.astype(np.float32)
        t = (p * sa[:, b:b + 1]) * sw_rows[None, :, b]
        acc = acc + t
    return acc


def gguf_bits_per_weight(tensors: Mapping[str, tuple[str, tuple[int, ...]]]) -> tuple[int, int]:
    """Exact bits per weight of a tensor-type map (see the kata stub)."""
    if not isinstance(tensors, Mapping) or len(tensors) == 0:
        raise ValueError("tensors must be a non-empty mapping")
    bits = elements = 0
    for name, spec in tensors.items():
        ggml_type, shape = spec
        if ggml_type not in GGML_TYPES:
            raise ValueError(f"{name}: unknown ggml type {ggml_type!r}")
        dims = tuple(shape)
        if not dims or any(not _is_int(d) or d < 1 for d in dims):
            raise ValueError(f"{name}: bad shape {shape!r}")
        per_block, block_bytes = GGML_TYPES[ggml_type]
        if dims[-1] % per_block:
            raise ValueError(f"{name}: row length {dims[-1]} is not a multiple of {per_block}")
        count = math.prod(int(d) for d in dims)
        bits += count // per_block * block_bytes * 8
        elements += count
    exact = Fraction(bits, elements)
    return exact.numerator, exact.denominator


def q4_k_m_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama.cpp's use_more_bits (see the kata stub)."""
    if not (_is_int(i_layer) and _is_int(n_layers) and 0 <= i_layer < n_layers):
        raise ValueError(f"need 0 <= i_layer < n_layers, got {i_layer!r}, {n_layers!r}")
    i, n = int(i_layer), int(n_layers)
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def mla_decode_cost(cfg: Mapping[str, object], mode: str, query_tokens: int = 1,
                    bytes_per_element: int = 2) -> tuple[int, int]:
    """(FLOPs, bytes) per cached token, per layer, per step (see the kata stub)."""
    vals: list[int] = []
    for key in _MLA_KEYS:
        v = cfg.get(key) if isinstance(cfg, Mapping) else None
        if not _is_int(v) or int(v) < 1:  # type: ignore[call-overload]
            raise ValueError(f"cfg[{key!r}] must be an int >= 1, got {v!r}")
        vals.append(int(v))  # type: ignore[call-overload]
    h, c, r, dn, dv = vals
    for v, what in ((query_tokens, "query_tokens"), (bytes_per_element, "bytes_per_element")):
        if not _is_int(v) or v < 1:
            raise ValueError(f"{what} must be an int >= 1, got {v!r}")
    q, b = int(query_tokens), int(bytes_per_element)
    if mode == "mha":
        return 2 * q * h * (dn + r + dv), h * (dn + r + dv) * b
    if mode == "unabsorbed":
        return 2 * h * c * (dn + dv) + 2 * q * h * (dn + r + dv), (c + r) * b
    if mode == "absorbed":
        return 2 * q * h * (c + r + c), (c + r) * b
    raise ValueError(f"mode must be 'mha', 'unabsorbed' or 'absorbed', got {mode!r}")


def _shares(top_k: int, shares: Sequence[int | float]) -> list[Fraction]:
    if not _is_int(top_k) or top_k < 1 or isinstance(shares, (str, bytes)):
        raise ValueError(f"top_k must be an int >= 1, got {top_k!r}")
    exact: list[Fraction] = []
    for s in shares:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, float, Fraction, np.integer, np.floating)):
            raise ValueError(f"share {s!r} is not a number")
        if isinstance(s, (float, np.floating)) and not math.isfinite(s):
            raise ValueError(f"share {s!r} is not finite")
        f = Fraction(s) if not isinstance(s, np.integer) else Fraction(int(s))
        if f < 0:
            raise ValueError(f"share {s!r} is negative")
        exact.append(f)
    total = sum(exact, Fraction(0))
    if top_k > len(exact) or total == 0:
        raise ValueError("need at least top_k experts and a positive total share")
    norm = [f / total for f in exact]
    if max(norm) > Fraction(1, int(top_k)):
        raise ValueError("a share above 1 / top_k would route a token to one expert twice")
    return norm


def expert_calibration_tokens(tokens: int, top_k: int,
                              shares: Sequence[int | float]) -> list[tuple[int, int]]:
    """Expected tokens per expert (see the kata stub)."""
    if not _is_int(tokens) or tokens < 0:
        raise ValueError(f"tokens must be an int >= 0, got {tokens!r}")
    counts = [int(tokens) * int(top_k) * s for s in _shares(top_k, shares)]
    return [(c.numerator, c.denominator) for c in counts]


def calibration_tokens_needed(min_per_expert: int, top_k: int,
                              shares: Sequence[int | float]) -> int:
    """Fewest tokens that give every expert min_per_expert expected tokens (see the stub)."""
    if not _is_int(min_per_expert) or min_per_expert < 0:
        raise ValueError(f"min_per_expert must be an int >= 0, got {min_per_expert!r}")
    norm = _shares(top_k, shares)
    if min_per_expert == 0:
        return 0
    if min(norm) == 0:
        raise ValueError("an expert with share 0 never sees a calibration token")
    need = Fraction(int(min_per_expert)) / (int(top_k) * min(norm))
    return math.ceil(need)
