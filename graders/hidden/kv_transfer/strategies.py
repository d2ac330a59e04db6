"""Hypothesis strategies for the kv_transfer hidden tests: configs and GPUs built for the
traps (MHA defaults, explicit head_dim, MLA with a misleading num_key_value_heads), and
setups whose crossover is an exact tie at a chosen length."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from tests.kv_transfer.helpers import GB, config, full_attention_models, gpu, gpu_ids

HEADS = [1, 2, 4, 8, 16, 28, 32, 64, 128]
HEAD_DIMS = [1, 2, 64, 80, 96, 128, 256]


@st.composite
def gqa_configs(draw: Any, window: Any = None) -> dict[str, Any]:
    layers = draw(st.integers(1, 130))
    heads = draw(st.sampled_from(HEADS))
    d = draw(st.sampled_from(HEAD_DIMS))
    cfg: dict[str, Any] = {"num_hidden_layers": layers, "num_attention_heads": heads,
                           "max_position_embeddings": draw(window if window is not None else st.integers(1, 10**6))}
    how = draw(st.sampled_from(["explicit", "null", "absent"]))
    if how == "explicit":                       # hidden_size says something else
        cfg["head_dim"] = d
        cfg["hidden_size"] = heads * d + draw(st.sampled_from([0, heads, 7 * heads, 1024]))
    else:                                       # hidden_size // heads, with a remainder
        cfg["hidden_size"] = heads * d + draw(st.integers(0, heads - 1))
        if how == "null":
            cfg["head_dim"] = None
    if draw(st.booleans()):
        cfg["num_key_value_heads"] = draw(st.integers(1, heads))
    if draw(st.integers(0, 3)) == 0:
        cfg["kv_lora_rank"] = None              # null is not MLA
    if draw(st.integers(0, 3)) == 0:
        cfg["sliding_window"] = draw(st.sampled_from([4096, 131072]))
        cfg["use_sliding_window"] = False
    return cfg


@st.composite
def mla_configs(draw: Any, window: Any = None) -> dict[str, Any]:
    heads = draw(st.sampled_from(HEADS))
    return {"num_hidden_layers": draw(st.integers(1, 100)), "num_attention_heads": heads,
            "num_key_value_heads": draw(st.sampled_from([heads, 1, 8])),
            "hidden_size": draw(st.sampled_from([2048, 7168])),
            "kv_lora_rank": draw(st.sampled_from([1, 128, 512])),
            "qk_rope_head_dim": draw(st.sampled_from([1, 32, 64])),
            "qk_nope_head_dim": draw(st.sampled_from([0, 64, 128])),
            "v_head_dim": draw(st.sampled_from([1, 64, 128])),
            "max_position_embeddings": draw(window if window is not None else st.integers(1, 10**6))}


def shipped_configs() -> Any:
    return st.sampled_from(full_attention_models()).map(config)


def configs(window: Any = None) -> Any:
    if window is None:
        return st.one_of(gqa_configs(), mla_configs(), shipped_configs())
    return st.one_of(gqa_configs(window), mla_configs(window))


@st.composite
def gpus_and_dtypes(draw: Any) -> tuple[dict[str, Any], str]:
    if draw(st.booleans()):
        entry = gpu(draw(st.sampled_from(gpu_ids())))
        dtype = draw(st.sampled_from(sorted(entry["tensor_tflops"])))
        return entry, dtype
    peak = draw(st.one_of(st.integers(1, 5000), st.floats(0.5, 5000)))
    dtype = draw(st.sampled_from(["bf16", "fp8"]))
    # the sparse figure is twice the dense one: reading it is a factor of two off
    return {"id": "synthetic", "tensor_tflops": {dtype: {"dense": peak, "sparse_2_4": 2 * peak}}}, dtype


actives = st.one_of(st.sampled_from([1, 3 * 10**9, 8 * 10**9, 37 * 10**9, 70 * 10**9]),
                    st.integers(1, 10**12))
mfus = st.one_of(st.sampled_from([1, 1.0, 0.5, 0.4, 0.35]), st.floats(0.01, 1.0))
kv_bytes = st.sampled_from([1, 2, 4])
latencies = st.one_of(st.sampled_from([0, 0.0, 1e-6, 1e-5, 1e-3, 0.02]), st.floats(0, 1.0))
links = st.one_of(st.sampled_from([0.1, 1, 3.125, 25, 50, 64, 400]), st.floats(0.01, 1000))
lengths = st.one_of(st.sampled_from([1, 2, 16, 1000, 8192, 131072]), st.integers(1, 10**6))


@st.composite
def exact_ties(draw: Any) -> dict[str, Any]:
    """A setup in ints and dyadic floats where recompute and fetch are equal at T0 exactly.

    A GQA model with K = 2 L q d attention FLOPs per T^2 and 2 L kv d b bytes per token; the
    peak p = c j / m TFLOP/s at mfu m against 1000 j GB/s, so one byte costs what c FLOPs do.
    With latency 0: recompute - fetch = T K (T - T0) / P when 2A = kvb c - K T0. With a
    latency w T0 / 2^s: 2A = w P / 2^s - K T0 + kvb c puts the one positive root at T0 too.
    Half the setups add one active parameter: T0 then wins by 2 T0 / P seconds, while T0 - 1
    still loses (K >= 2 makes its deficit at least that large). Half use a float mfu of any
    value with the link at mfu x 2^e GB/s and no latency: the tie is exact only for the
    floats' binary values ("a float input stands for its exact binary value"), so reading
    them as their short decimals moves it by a hair either way.
    """
    layers = draw(st.integers(1, 8))
    heads = draw(st.sampled_from([1, 2, 4, 8]))
    kv = draw(st.integers(1, heads))
    d = draw(st.sampled_from([1, 2, 64, 128]))
    b = draw(st.sampled_from([1, 2]))
    binary = draw(st.booleans())
    if binary:                  # an mfu with no short decimal: the tie holds for its binary value
        mfu = draw(st.floats(0.01, 1.0))
        e, cc = draw(st.integers(3, 12)), draw(st.integers(1, 32))
        c = 125 * cc
        peak: Any = cc * 2 ** (e - 3)
        link: Any = mfu * 2**e                       # exact: a float times a power of two
    else:
        c = draw(st.integers(2, 4000))
        j = draw(st.integers(1, 50))
        mfu = draw(st.sampled_from([1, 0.5, 0.25]))
        peak = c * j / mfu                           # exact: an int over a power of two
        link = 1000 * j
    P = Fraction(peak) * 10**12 * Fraction(mfu)      # = c x link x 10^9
    K, kvb = 2 * layers * heads * d, 2 * layers * kv * d * b
    assert P / (Fraction(link) * GB) == c
    if (binary or draw(st.booleans())) and (kv * b * c - 1) // heads >= 1:     # no latency
        t0 = draw(st.integers(1, (kv * b * c - 1) // heads))
        twice_a = Fraction(kvb * c - K * t0)
        latency: Any = draw(st.sampled_from([0, 0.0]))
    else:
        t0 = draw(st.integers(1, 10**5))
        s = draw(st.integers(0, 11))
        w = max(draw(st.integers(1, 64)), -(-(K * t0 + 2) * 2**s // int(P)))
        twice_a = w * P / 2**s - K * t0 + kvb * c
        latency = w * t0 / 2**s                      # exact in a float
    assert twice_a > 0 and twice_a.denominator == 1 and twice_a.numerator % 2 == 0, twice_a
    active = twice_a.numerator // 2
    # one more active parameter makes T0 a win by a hair (2 T0 / P seconds; see the tests)
    hair = draw(st.booleans())
    window = draw(st.sampled_from([t0 + 1, t0 + 2, 10**7, t0]))   # t0: the first win is past it
    cfg = {"num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": kv,
           "head_dim": d, "hidden_size": heads * d, "max_position_embeddings": window}
    entry = {"id": "tie", "tensor_tflops": {"bf16": {"dense": peak, "sparse_2_4": 2 * peak}}}
    first = t0 if hair else t0 + 1
    return {"cfg": cfg, "gpu": entry, "active": active + hair, "kv_bytes": b, "mfu": mfu,
            "latency": latency, "link": link, "t0": t0, "hair": hair,
            "want": first if first <= window else None}
