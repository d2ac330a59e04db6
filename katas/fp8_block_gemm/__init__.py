"""fp8_block_gemm: DeepSeek-style block-scaled FP8 GEMM, bit-exactly, and what low-bit formats cost.

Fill in every function. The prompt is katas/fp8_block_gemm/README.md; run the public tests with
``nox -s kata -- fp8_block_gemm``.

Arrays are numpy float32 and never modified (the tests pass them read-only). Tiles and blocks
run along K in steps of 128 from index 0; the last one holds what is left when K (or N) is not
a multiple of 128. Bad input raises ValueError (TypeError is accepted wherever a value has the
wrong type) and changes nothing. Bools are never accepted as ints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import numpy as np

_PROMPT = "see katas/fp8_block_gemm/README.md"

E4M3_MAX = 448.0
TILE = 128          # activation tile: 1 token x 128 channels; weight block: 128 x 128
WGMMA_K = 32        # products per accumulation step in the limited-precision accumulator model

#: ggml tensor types: name -> (elements per block, bytes per block), from ggml/src/ggml-common.h
GGML_TYPES: dict[str, tuple[int, int]] = {
    "F32": (1, 4), "F16": (1, 2), "BF16": (1, 2),
    "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22), "Q5_1": (32, 24), "Q8_0": (32, 34),
    "Q2_K": (256, 84), "Q3_K": (256, 110), "Q4_K": (256, 144), "Q5_K": (256, 176),
    "Q6_K": (256, 210),
}


def quantize_activations(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-token, per-128-channel FP8 quantization: ``(q, scales)``.

    ``x``: float32, shape (M, K), M >= 1, K >= 1, every value finite. For each row m and each
    tile j (channels 128 j .. min(128 j + 128, K) - 1), ``amax`` is the tile's largest |x| and
    ``scales[m, j]`` is the float32 nearest to ``amax / 448`` (1.0 when amax is 0). Each element
    becomes ``q = the E4M3 value nearest to x / scale`` (the exact quotient, rounded once: ties
    to even, subnormals kept, magnitudes above 448 saturate to 448, the sign kept).

    ``q``: float32 holding E4M3 values, shape (M, K). ``scales``: float32, (M, ceil(K / 128)).
    Raises ValueError for a non-float32 or non-2-D or empty x, or a NaN or infinity in it.
    """
    raise NotImplementedError(f"quantize_activations ({_PROMPT})")


def quantize_weights(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-128x128-block FP8 quantization of a weight ``w`` of shape (N, K): ``(q, scales)``.

    Block (i, j) covers rows 128 i .. and columns 128 j .. (the last ones shorter when N or K is
    not a multiple of 128). Its scale is the float32 nearest to ``amax / 448`` over the block
    (1.0 when amax is 0); elements are rounded as in ``quantize_activations``.

    ``q``: float32 holding E4M3 values, shape (N, K). ``scales``: float32,
    (ceil(N / 128), ceil(K / 128)). Raises ValueError as ``quantize_activations`` does.
    """
    raise NotImplementedError(f"quantize_weights ({_PROMPT})")


def block_gemm(qa: np.ndarray, sa: np.ndarray, qw: np.ndarray, sw: np.ndarray,
               accum_bits: int | None = None) -> np.ndarray:
    """``y = dequant(qa) @ dequant(qw).T`` the way a block-scaled FP8 kernel computes it.

    ``qa`` (M, K) and ``qw`` (N, K) hold E4M3 values; ``sa`` (M, ceil(K/128)) and
    ``sw`` (ceil(N/128), ceil(K/128)) their float32 scales, every one finite and > 0.
    For each output (m, n) and K block b = 0, 1, ... in increasing order:

    - ``P`` = the K block's partial sum of ``qa[m, k] * qw[n, k]``: exact when ``accum_bits``
      is None; otherwise through the limited-precision accumulator of the prompt (groups of
      ``WGMMA_K`` products, the running sum truncated toward zero to ``accum_bits``
      significant bits after each group);
    - ``p = float32(P)``; ``t = float32(float32(p * sa[m, b]) * sw[n // 128, b])``;
    - ``acc = float32(acc + t)``, starting from ``acc = 0.0``.

    Returns ``acc`` as a float32 array (M, N). ``accum_bits``: None or an int in 1 .. 24.
    Raises ValueError for wrong dtypes or shapes, values of qa or qw that are not E4M3 values,
    scales that are not finite and > 0, or a bad ``accum_bits``.
    """
    raise NotImplementedError(f"block_gemm ({_PROMPT})")


def gguf_bits_per_weight(tensors: Mapping[str, tuple[str, tuple[int, ...]]]) -> tuple[int, int]:
    """Bits per weight of a GGUF file's tensors: total storage bits / total elements, exactly,
    as ``(numerator, denominator)`` in lowest terms (4.5 bits is ``(9, 2)``).

    ``tensors`` maps a tensor name to ``(ggml type, shape)``; the type is a key of
    ``GGML_TYPES``, whose blocks cut every row (the last dimension of ``shape``, ggml's ne[0])
    into whole blocks. Raises ValueError for an empty map, an unknown type, a shape that is empty
    or has a dimension below 1 (or not an int), or a row length that is not a multiple of the
    type's block size.
    """
    raise NotImplementedError(f"gguf_bits_per_weight ({_PROMPT})")


def q4_k_m_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama.cpp's ``use_more_bits``: whether Q4_K_M gives layer ``i_layer`` of ``n_layers``
    the Q6_K type for attn_v and ffn_down. Raises ValueError unless 0 <= i_layer < n_layers.
    """
    raise NotImplementedError(f"q4_k_m_more_bits ({_PROMPT})")


def mla_decode_cost(cfg: Mapping[str, object], mode: str, query_tokens: int = 1,
                    bytes_per_element: int = 2) -> tuple[int, int]:
    """``(flops, bytes)`` of attention per cached token, per layer, per step of one sequence.

    ``cfg`` holds ``num_attention_heads``, ``kv_lora_rank``, ``qk_rope_head_dim``,
    ``qk_nope_head_dim`` and ``v_head_dim`` (a model's config.json). ``mode`` is "mha",
    "unabsorbed" or "absorbed", each defined in the prompt; ``query_tokens`` is how many query
    tokens of the sequence the step scores against the cache. Raises ValueError for an unknown
    mode, a missing key, or a value that is not an int >= 1.
    """
    raise NotImplementedError(f"mla_decode_cost ({_PROMPT})")


def expert_calibration_tokens(tokens: int, top_k: int,
                              shares: Sequence[int | float]) -> list[tuple[int, int]]:
    """Expected calibration tokens each routed expert sees: ``tokens * top_k * share_i``, each
    as ``(numerator, denominator)`` in lowest terms (denominator >= 1; 500 is ``(500, 1)``).

    ``shares`` are routing weights, one per expert, normalised by their sum (floats converted
    exactly). Raises ValueError for tokens < 0, top_k < 1 or above the number of experts, a
    negative, NaN or infinite share, shares summing to 0, or a normalised share above 1 / top_k.
    """
    raise NotImplementedError(f"expert_calibration_tokens ({_PROMPT})")


def calibration_tokens_needed(min_per_expert: int, top_k: int,
                              shares: Sequence[int | float]) -> int:
    """The fewest calibration tokens T for which every expert's expected count
    ``T * top_k * share_i`` reaches ``min_per_expert``. Raises ValueError as
    ``expert_calibration_tokens`` does, for min_per_expert < 0, and for an expert with share 0
    when min_per_expert > 0.
    """
    raise NotImplementedError(f"calibration_tokens_needed ({_PROMPT})")
