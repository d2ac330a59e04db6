"""Hidden tests for fp8_block_gemm: values built to sit on the traps, checked against an oracle.

Oracle: graders/hidden/fp8_block_gemm/oracle.py (ml_dtypes E4M3 casts, math.fsum partial sums,
one np.float32 rounding per step), never the reference. Strategies put quotients on E4M3 ties
and subnormal ties of scales with long mantissas, cut K and N across 128 (1, 44, 127, 128,
129, 300), plant zero tiles, and mix E4M3 values of 448 and 2**-9 so that K-block sums need
more than 24 bits.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graders.hidden.fp8_block_gemm import oracle as o
from graders.impl import kata_impl
from graders.support import inputs
from tests.fp8_block_gemm.helpers import DEEPSEEK_V3_MLA, frac, pair, same

fb = kata_impl("fp8_block_gemm")
F32 = np.float32
ROOT = Path(__file__).resolve().parents[3]
K_SIZES = [1, 2, 44, 127, 128, 129, 200, 256, 257, 300]
N_SIZES = [1, 3, 127, 128, 129, 140]
E4M3_TIES = ([math.ldexp(1 + (2 * i + 1) / 16, e) for i in range(8) for e in range(-6, 8)]
             + [(2 * i + 1) * 2.0**-10 for i in range(8)])
E4M3_VALUES = sorted({float(v) for v in o.e4m3(np.linspace(0, 448, 4000))} |
                     {i * 2.0**-9 for i in range(8)})
E4M3_ARR = np.array(E4M3_VALUES)


def _max_ex():
    return min(25, settings.default.max_examples)


@st.composite
def tiles(draw, rows: int, cols: int):
    """A (rows, cols) float32 block (one tile or weight block) of one of several kinds."""
    kind = draw(st.sampled_from(["ties", "ties", "random", "zero", "subnormal", "extreme"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "zero":
        return np.zeros((rows, cols), F32)
    e = draw(st.sampled_from([-100, -30, -7, 0, 3, 20, 99])) if kind == "extreme" \
        else draw(st.integers(-12, 12))
    amax = F32(math.ldexp(1.0 + rng.random(), e))           # a long mantissa
    s = float(F32(float(amax) / 448.0))
    if kind == "random":
        blk = rng.standard_normal((rows, cols)) * float(amax) / 4
    else:
        pool = E4M3_TIES if kind == "ties" else [i * 2.0**-10 for i in range(1, 16)]
        blk = rng.choice(np.array(pool + E4M3_VALUES[:40]), (rows, cols)) * s
        blk *= rng.choice([-1.0, 1.0], (rows, cols))
    blk = np.clip(blk, -float(amax), float(amax)).astype(F32)
    blk[draw(st.integers(0, rows - 1)), draw(st.integers(0, cols - 1))] = amax * draw(
        st.sampled_from([F32(1), F32(-1)]))
    return blk


@st.composite
def activations(draw):
    m = draw(st.integers(1, 3))
    k = draw(st.sampled_from(K_SIZES))
    x = np.zeros((m, k), F32)
    for i in range(m):
        for j in range(0, k, 128):
            x[i:i + 1, j:j + 128] = draw(tiles(1, min(128, k - j)))
    return x


@st.composite
def weights(draw):
    n = draw(st.sampled_from(N_SIZES))
    k = draw(st.sampled_from(K_SIZES))
    w = np.zeros((n, k), F32)
    for i in range(0, n, 128):
        for j in range(0, k, 128):
            w[i:i + 128, j:j + 128] = draw(tiles(min(128, n - i), min(128, k - j)))
    return w


def e4m3_matrix(rng: np.random.Generator, shape: tuple[int, int], wide: bool) -> np.ndarray:
    if wide:     # the top and the bottom of the range: sums need more than 24 bits
        pool = np.concatenate([E4M3_ARR[-24:], E4M3_ARR[1:24]])
    else:
        pool = E4M3_ARR
    return (rng.choice(pool, shape) * rng.choice([-1.0, 1.0], shape)).astype(F32)


def long_scales(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return np.ldexp(1.0 + rng.random(shape), rng.integers(-12, 4, shape)).astype(F32)


@st.composite
def gemm_inputs(draw):
    m = draw(st.integers(1, 3))
    n = draw(st.sampled_from(N_SIZES))
    k = draw(st.sampled_from(K_SIZES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    wide = draw(st.booleans())
    kb, nb = -(-k // 128), -(-n // 128)
    return (e4m3_matrix(rng, (m, k), wide), long_scales(rng, (m, kb)),
            e4m3_matrix(rng, (n, k), wide), long_scales(rng, (nb, kb)))


# ------------------------------------------------------------------ quantization
@pytest.mark.rubric("scales")
@settings(max_examples=min(50, settings.default.max_examples))
@given(activations())
def test_activation_scales_match_the_oracle(x):
    """Rules: The scale; Partial tiles"""
    _, s = pair(fb.quantize_activations(x), "quantize_activations")
    same(s, o.quantize(x, 1)[1], "activation scales")


@pytest.mark.rubric("scales")
@settings(max_examples=_max_ex())
@given(weights())
def test_weight_scales_match_the_oracle(w):
    """Rules: The scale; Partial tiles"""
    _, s = pair(fb.quantize_weights(w), "quantize_weights")
    same(s, o.quantize(w, 128)[1], "weight scales")


@pytest.mark.rubric("scales")
def test_a_partial_tile_takes_its_own_max():
    """Rule: Partial tiles"""
    x = np.zeros((1, 300), F32)
    x[0, 0] = 1000.0
    x[0, 299] = 5.0          # last tile: 256..299
    x[0, 255] = 9.0          # middle tile
    _, s = pair(fb.quantize_activations(x), "quantize_activations")
    same(s, np.array([[F32(1000) / F32(448), F32(9) / F32(448), F32(5) / F32(448)]], F32),
         "tiles cut from index 0")
    w = np.zeros((300, 1), F32)
    w[0, 0], w[129, 0], w[299, 0] = 2.0, 3.0, 4.0
    _, s = pair(fb.quantize_weights(w), "quantize_weights")
    same(s, np.array([[F32(2) / F32(448)], [F32(3) / F32(448)], [F32(4) / F32(448)]], F32),
         "weight blocks of 128 rows, the last holding rows 256..299")


@pytest.mark.rubric("e4m3_rounding")
@settings(max_examples=min(50, settings.default.max_examples))
@given(activations())
def test_activation_values_match_the_oracle(x):
    """Rule: Rounding to E4M3"""
    q, _ = pair(fb.quantize_activations(x), "quantize_activations")
    same(q, o.quantize(x, 1)[0], "activation E4M3 values")


@pytest.mark.rubric("e4m3_rounding")
@settings(max_examples=_max_ex())
@given(weights())
def test_weight_values_match_the_oracle(w):
    """Rule: Rounding to E4M3"""
    q, _ = pair(fb.quantize_weights(w), "quantize_weights")
    same(q, o.quantize(w, 128)[0], "weight E4M3 values")


@pytest.mark.rubric("e4m3_rounding")
def test_the_quotient_is_rounded_once():
    """Rule: Rounding to E4M3"""
    # scale s with a long mantissa; x = float32(t * s) for E4M3 ties t: the exact x / s lies a
    # hair off the tie, while float32(x / s) often lands on it
    rng = np.random.default_rng(7)
    rows = []
    for _ in range(40):
        amax = F32(math.ldexp(1 + rng.random(), int(rng.integers(-5, 5))))
        s = float(F32(float(amax) / 448))
        row = np.array([float(amax)] + [t * s for t in E4M3_TIES[:127]], dtype=np.float64)
        rows.append(np.minimum(row, float(amax)).astype(F32))
    x = np.stack(rows)
    q, _ = pair(fb.quantize_activations(x), "quantize_activations")
    same(q, o.quantize(x, 1)[0], "quotients next to E4M3 ties")


# ------------------------------------------------------------------ the GEMM
@pytest.mark.rubric("promotion")
@settings(max_examples=_max_ex())
@given(gemm_inputs())
def test_gemm_matches_the_exact_model(args):
    """Rules: The K-block partial sum; Promotion order"""
    qa, sa, qw, sw = args
    same(fb.block_gemm(qa, sa, qw, sw), o.gemm(qa, sa, qw, sw), "block_gemm")


@pytest.mark.rubric("promotion")
@settings(max_examples=min(10, settings.default.max_examples))
@given(activations(), st.integers(0, 2**32 - 1))
def test_quantize_then_gemm(x, seed):
    """Rules: The K-block partial sum; Promotion order; The scale"""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 130]))
    w = (rng.standard_normal((n, x.shape[1])) * 0.05).astype(F32)
    qa, sa = o.quantize(x, 1)
    qw, sw = o.quantize(w, 128)
    same(fb.block_gemm(qa, sa, qw, sw), o.gemm(qa, sa, qw, sw), "block_gemm of quantized inputs")


@pytest.mark.rubric("promotion")
def test_weight_scale_follows_the_output_column():
    """Rule: Promotion order"""
    qa = np.ones((1, 3), F32)
    qw = np.ones((260, 3), F32)
    sa = np.ones((1, 1), F32)
    sw = np.array([[2.0], [3.0], [5.0]], F32)
    want = np.array([[6.0] * 128 + [9.0] * 128 + [15.0] * 4], F32)
    same(fb.block_gemm(qa, sa, qw, sw), want, "sw[n // 128]")


@pytest.mark.rubric("accumulator_model")
@settings(max_examples=_max_ex())
@given(gemm_inputs(), st.sampled_from([1, 3, 8, 13, 14, 24]))
def test_accumulator_model_matches(args, bits):
    """Rule: The limited accumulator"""
    qa, sa, qw, sw = args
    same(fb.block_gemm(qa, sa, qw, sw, accum_bits=bits), o.gemm(qa, sa, qw, sw, bits),
         f"block_gemm(accum_bits={bits})")


@pytest.mark.rubric("accumulator_model")
def test_register_resets_per_block_and_truncates_toward_zero():
    """Rule: The limited accumulator"""
    qa = np.zeros((2, 160), F32)
    qw = np.zeros((1, 160), F32)
    qa[:, 0], qw[0, 0] = 448.0, 448.0              # block 0, group 0
    qa[0, 40], qw[0, 40] = 15.0, 1.0               # block 0, group 1
    qa[:, 128], qw[0, 128] = 11.0, 1.0             # block 1
    qa[1] *= -1
    one2, one1 = np.ones((2, 2), F32), np.ones((1, 2), F32)
    # 3 bits: 200704 -> 196608; + 15 -> 196608; block 1: 11 -> 10
    same(fb.block_gemm(qa, one2, qw, one1, accum_bits=3),
         np.array([[196618.0], [-196618.0]], F32), "3-bit accumulator")


# ------------------------------------------------------------------ cost side
@pytest.mark.rubric("gguf_bits")
def test_gguf_types_match_the_block_structs():
    """Rule: GGUF bits per weight"""
    published = {"Q2_K": Fraction(21, 8), "Q3_K": Fraction(55, 16), "Q4_K": Fraction(9, 2),
                 "Q5_K": Fraction(11, 2), "Q6_K": Fraction(105, 16)}   # ggml-common.h comments
    for ty in o.GGML_FIELDS:
        per = o.GGML_FIELDS[ty][0]
        for shape in [(per,), (3, 2 * per), (2, 1, per * 5)]:
            got = frac(fb.gguf_bits_per_weight({"t": (ty, shape)}), ty)
            assert got == o.bpw({"t": (ty, shape)}), (ty, shape, got)
        if ty in published:
            assert frac(fb.gguf_bits_per_weight({"t": (ty, (256,))}), ty) == published[ty], ty


@pytest.mark.rubric("gguf_bits")
@settings(max_examples=_max_ex())
@given(st.dictionaries(st.text("abc", min_size=1, max_size=3),
                       st.tuples(st.sampled_from(sorted(o.GGML_FIELDS)), st.integers(1, 3),
                                 st.integers(1, 4)), min_size=1, max_size=6))
def test_gguf_mix_is_exact(spec):
    """Rules: GGUF bits per weight; Q4_K_M's layer rule"""
    tensors = {k: (ty, (rows, o.GGML_FIELDS[ty][0] * mult)) for k, (ty, rows, mult) in spec.items()}
    assert frac(fb.gguf_bits_per_weight(tensors), "mix") == o.bpw(tensors)


@pytest.mark.rubric("gguf_bits")
def test_q4_k_m_more_bits_every_layer():
    """Rule: Q4_K_M's layer rule"""
    for n in [*range(1, 25), 27, 32, 40, 61, 80]:      # every remainder of n % 8 and of the % 3
        got = [bool(fb.q4_k_m_more_bits(i, n)) for i in range(n)]
        assert got == [o.more_bits(i, n) for i in range(n)], n
    for bad in [(-1, 4), (4, 4), (True, 4), (0, 0)]:
        with pytest.raises((ValueError, TypeError)):
            fb.q4_k_m_more_bits(*bad)


def _model(name: str) -> dict:
    return json.loads((ROOT / "data" / "models" / name).read_text())["config"]


@pytest.mark.rubric("mla_costs")
@given(st.integers(1, 16), st.integers(1, 64), st.integers(1, 32), st.integers(1, 32),
       st.integers(1, 32), st.integers(1, 9), st.sampled_from([1, 2, 4]))
def test_mla_costs_count_each_term(h, c, r, dn, dv, q, b):
    """Rule: MLA's costs per cached token"""
    cfg = {"num_attention_heads": h, "kv_lora_rank": c, "qk_rope_head_dim": r,
           "qk_nope_head_dim": dn, "v_head_dim": dv, "hidden_size": 7}
    per_head_scores, per_head_values = dn + r, dv
    mha = fb.mla_decode_cost(cfg, "mha", q, b)
    assert tuple(mha) == (2 * q * h * (per_head_scores + per_head_values), h * (dn + r + dv) * b)
    decompress = 2 * h * c * dn + 2 * h * c * dv
    assert tuple(fb.mla_decode_cost(cfg, "unabsorbed", q, b)) == (decompress + mha[0], (c + r) * b)
    assert tuple(fb.mla_decode_cost(cfg, "absorbed", q, b)) == (
        q * h * (2 * (c + r) + 2 * c), (c + r) * b)


@pytest.mark.rubric("mla_costs")
def test_mla_on_published_configs():
    """Rule: MLA's costs per cached token"""
    v3 = _model("deepseek-ai--DeepSeek-V3.json")
    assert tuple(fb.mla_decode_cost(v3, "absorbed")) == (278528, 1152)
    assert tuple(fb.mla_decode_cost(v3, "absorbed", 1, 1)) == (278528, 576)
    assert tuple(fb.mla_decode_cost(v3, "mha", 1, 2)) == (81920, 81920)
    assert tuple(fb.mla_decode_cost(v3, "unabsorbed", 4, 2)) == (2 * 128 * 512 * 256 + 4 * 81920, 1152)
    lite = _model("deepseek-ai--DeepSeek-V2-Lite.json")
    h, c, r = lite["num_attention_heads"], lite["kv_lora_rank"], lite["qk_rope_head_dim"]
    assert tuple(fb.mla_decode_cost(lite, "absorbed", 3, 1)) == (3 * h * (4 * c + 2 * r), c + r)


@pytest.mark.rubric("calibration")
@given(st.integers(0, 10**6), st.integers(1, 4),
       st.lists(st.one_of(st.integers(1, 50), st.floats(0.01, 10.0),
                          st.sampled_from([0.1, 0.2, 0.3, 1 / 3])), min_size=4, max_size=12))
def test_calibration_tokens_are_exact(tokens, top_k, raw):
    """Rule: Calibration tokens per expert"""
    exact = [Fraction(v) for v in raw]
    norm = [v / sum(exact) for v in exact]
    if max(norm) > Fraction(1, top_k):
        with pytest.raises(ValueError):
            fb.expert_calibration_tokens(tokens, top_k, raw)
        return
    got = fb.expert_calibration_tokens(tokens, top_k, raw)
    assert [frac(g, "tokens") for g in got] == [tokens * top_k * s for s in norm]
    need = fb.calibration_tokens_needed(100, top_k, raw)
    assert all(need * top_k * s >= 100 for s in norm), need
    assert any((need - 1) * top_k * s < 100 for s in norm), need
    assert fb.calibration_tokens_needed(0, top_k, raw) == 0


@pytest.mark.rubric("calibration")
def test_impossible_routing_and_dead_experts():
    """Rule: Calibration tokens per expert"""
    assert [frac(g, "tokens") for g in fb.expert_calibration_tokens(7, 2, [1, 1])] == [7, 7]
    for args in [(7, 3, [1, 1]), (7, 2, [2, 1]), (7, 1, [0, 0]), (-1, 1, [1]), (7, 0, [1]),
                 (7, 1, [1, -1, 3]), (7, 1, [1, math.nan]), (7, 1, [1, math.inf]),
                 (True, 1, [1]), (7, True, [1, 1])]:
        with pytest.raises((ValueError, TypeError)):
            fb.expert_calibration_tokens(*args)
    with pytest.raises(ValueError):
        fb.calibration_tokens_needed(5, 1, [1, 0, 1])
    assert fb.calibration_tokens_needed(0, 1, [1, 0, 1]) == 0


# ------------------------------------------------------------------ errors
@pytest.mark.rubric("errors")
def test_bad_arrays_and_arguments():
    """Rule: Bad input"""
    good = np.ones((2, 130), F32)
    for bad in [np.ones((2, 3), np.float16), np.ones(5, F32), np.ones((0, 3), F32),
                np.array([[1.0, np.inf]], F32), [[1.0, 2.0]]]:
        for fn in (fb.quantize_activations, fb.quantize_weights):
            with pytest.raises((ValueError, TypeError)):
                fn(bad)
    qa, sa = o.quantize(good, 1)
    qw, sw = o.quantize(good, 128)
    assert fb.block_gemm(qa, sa, qw, sw).shape == (2, 2)
    cases = [
        (qa, sa[:, :1], qw, sw, None), (qa, sa, qw[:, :129], sw, None), (qa, sa, qw, sw.T, None),
        (qa, sa, qw, -sw, None), (qa, sa * 0, qw, sw, None), (qa, sa, qw * 1.01, sw, None),
        (qa * 2, sa, qw, sw, None), (qa, sa.astype(np.float64), qw, sw, None),
        (qa, sa, qw, sw, 0), (qa, sa, qw, sw, 25), (qa, sa, qw, sw, 14.0), (qa, sa, qw, sw, False),
    ]
    for i, (a, s1, w, s2, bits) in enumerate(cases):
        with pytest.raises((ValueError, TypeError)):
            fb.block_gemm(a, s1, w, s2, accum_bits=bits)
    for tensors in [{}, {"a": ("Q4_K_M", (256,))}, {"a": ("Q4_K", ())}, {"a": ("Q4_K", (0, 256))},
                    {"a": ("Q8_0", (2, 48))}, {"a": ("F32", (True, 2))}]:
        with pytest.raises((ValueError, TypeError)):
            fb.gguf_bits_per_weight(tensors)
    cfg = dict(DEEPSEEK_V3_MLA)
    for c, mode, q, b in [(cfg, "MHA", 1, 2), ({**cfg, "kv_lora_rank": 0}, "absorbed", 1, 2),
                          ({k: v for k, v in cfg.items() if k != "v_head_dim"}, "mha", 1, 2),
                          (cfg, "absorbed", 0, 2), (cfg, "absorbed", 1, 0),
                          (cfg, "absorbed", True, 2), ({**cfg, "num_attention_heads": 1.5}, "mha", 1, 2)]:
        with pytest.raises((ValueError, TypeError)):
            fb.mla_decode_cost(c, mode, q, b)


@pytest.mark.rubric("errors")
def test_inputs_are_left_alone():
    """Rule: Bad input"""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 200)) * 3).astype(F32)
    w = (rng.standard_normal((130, 200)) * 0.1).astype(F32)
    qa, sa = pair(inputs.leaves_inputs_alone(fb.quantize_activations, x, what="quantize_activations"),
                  "quantize_activations")
    qw, sw = pair(inputs.leaves_inputs_alone(fb.quantize_weights, w, what="quantize_weights"),
                  "quantize_weights")
    for bits in (None, 14):
        y = inputs.leaves_inputs_alone(fb.block_gemm, qa, sa, qw, sw, bits, what="block_gemm")
        same(y, o.gemm(*o.quantize(x, 1), *o.quantize(w, 128), bits), "block_gemm")
    shares = [3, 1, 2, 2]
    got = inputs.leaves_inputs_alone(fb.expert_calibration_tokens, 8, 2, shares,
                                     what="expert_calibration_tokens")
    assert [frac(g, "tokens") for g in got] == [6, 2, 4, 4]
    assert inputs.leaves_inputs_alone(fb.calibration_tokens_needed, 1, 2, shares,
                                      what="calibration_tokens_needed") == 4
