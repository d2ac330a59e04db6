"""Hidden tests for spec_policy: each rule and each trap, exact against an independent oracle."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import assume, example, given, settings

from graders.hidden.spec_policy import oracle
from graders.hidden.spec_policy.oracle import Ambiguous
from graders.impl import kata_impl
from tests.spec_policy.helpers import (H100_SXM, KEYS, LLAMA8, LLAMA70, NGRAM, close, config,
                                       gpu, llama8_stage, llama70_stage, stage)

sp = kata_impl("spec_policy")

DENSE = [LLAMA70, LLAMA8, "meta-llama--Meta-Llama-3.1-70B", "meta-llama--Meta-Llama-3.1-405B",
         "Qwen--Qwen3-32B", "Qwen--Qwen3-8B", "Qwen--Qwen2.5-72B-Instruct", "Qwen--Qwen2.5-7B",
         "google--gemma-2-9b-it", "google--gemma-3-27b-it", "google--gemma-3-1b-it"]
NOT_DENSE = ["Qwen--Qwen3-30B-A3B", "mistralai--Mixtral-8x7B-v0.1", "deepseek-ai--DeepSeek-V3",
             "deepseek-ai--DeepSeek-V2-Lite", "openai--gpt-oss-20b", "Qwen--Qwen3-235B-A22B"]
BAD_NUMBERS = [True, False, float("nan"), float("inf"), -1.0, "1", None]


def decided(fn, *args):
    """The oracle's answer, or skip the example when a float implementation may differ."""
    try:
        return fn(*args)
    except Ambiguous:
        assume(False)
        raise AssertionError("unreachable")


# ================================================================== expected tokens
@pytest.mark.rubric("expected_tokens")
@given(oracle.rates(0, 8), st.data())
@example([0.8, 0.75, 0.7, 0.65, 0.6], None)
def test_expected_tokens_matches_closed_form(rates, data):
    """Rule: Expected tokens"""
    k = data.draw(st.integers(0, len(rates)), label="k") if data is not None else len(rates)
    want = oracle.expected(rates, k)
    close(sp.expected_tokens(list(rates), k), float(want),
          f"expected_tokens({rates}, {k}): the distribution of accepted drafts gives "
          f"{float(want)!r}",
          rel=1e-12)


@pytest.mark.rubric("expected_tokens")
@settings(max_examples=min(60, settings.default.max_examples))
@given(oracle.rates(1, 8))
def test_expected_tokens_grow_by_the_running_product(rates):
    """Rule: Expected tokens"""
    got = [sp.expected_tokens(list(rates), k) for k in range(len(rates) + 1)]
    assert got[0] == 1.0, f"E(0) is one token (plain decoding), got {got[0]!r}"
    reach = 1.0
    for k in range(1, len(rates) + 1):
        reach *= rates[k - 1]
        assert abs((got[k] - got[k - 1]) - reach) <= 1e-12 * (k + 1), (
            f"E({k}) - E({k - 1}) for {rates} is {got[k] - got[k - 1]!r}: it must be the chance "
            f"that drafts 1..{k} are all accepted, {reach!r}")
        assert got[k] <= k + 1 + 1e-12, f"E({k}) = {got[k]} exceeds {k + 1} tokens"


@pytest.mark.rubric("expected_tokens")
def test_expected_tokens_are_conditional_not_summed():
    """Rule: Expected tokens"""
    # conditional 0.5, 0.5: reaching draft 2 has chance 0.25, not 0.5
    close(sp.expected_tokens([0.5, 0.5], 2), 1.75, "conditional rates multiply: 1 + 0.5 + 0.25")
    close(sp.expected_tokens([0.9, 0.0, 1.0], 3), 1.9,
          "a rate of 0 ends the run: later rates never count")
    close(sp.expected_tokens([1.0] * 7, 7), 8.0, "seven certain drafts and the bonus token")


@pytest.mark.rubric("expected_tokens")
@pytest.mark.parametrize("accept,k", [([0.5], 2), ([], 1), ([1.0000001], 1), ([-1e-9], 1),
                                      ([0.5, float("nan")], 1), ([0.5, float("inf")], 1),
                                      ([True], 1), ([0.5], True), ([0.5], 1.0), ([0.5], -1),
                                      (["0.5"], 1), ([None], 0), (0.5, 1)])
def test_expected_tokens_bad_input(accept, k):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        sp.expected_tokens(accept, k)


@pytest.mark.rubric("expected_tokens")
def test_expected_tokens_edges_are_valid():
    """Rule: Expected tokens"""
    close(sp.expected_tokens([], 0), 1.0, "no drafts, no rates: one token")
    close(sp.expected_tokens([0, 1], 2), 1.0, "int rates are numbers: 0 then 1")
    close(sp.expected_tokens([1, 1], 2), 3.0, "int rates of 1")


# ================================================================== step model
def _params(cfg):
    h, L, q = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or q
    d = cfg.get("head_dim") or h // q
    per_layer = 2 * h * d * q + 2 * h * d * kv + 3 * h * cfg["intermediate_size"]
    return sum(per_layer for _ in range(L)) + cfg["vocab_size"] * h, L, kv, d, q


def _tps(cfg):
    _, _, kv, _, q = _params(cfg)
    return [t for t in (1, 2, 4, 8, 16, 32) if q % t == 0 and (kv % t == 0 or t % kv == 0)]


@pytest.mark.rubric("step_model")
@pytest.mark.parametrize("name", DENSE)
@pytest.mark.parametrize("gpu_id,dtype,wb,kvb", [(H100_SXM, "bf16", 2, 2),
                                                  ("nvidia-h200-sxm-141gb", "fp8", 1, 1),
                                                  ("nvidia-a100-sxm-80gb", "bf16", 2, 1),
                                                  ("nvidia-b200-hgx", "fp4", 0.5, 0)])
def test_stage_from_every_dense_config(name, gpu_id, dtype, wb, kvb):
    """Rule: Stage from a config"""
    cfg, g = config(name), gpu(gpu_id)
    params, L, kv, d, _ = _params(cfg)
    for tp in _tps(cfg):
        got = sp.stage_from_config(cfg, g, tp, wb, kvb, dtype, 0.25)
        want = {"weight_bytes": params * wb / tp, "flops_per_token": 2 * params / tp,
                "kv_bytes_per_token": 2 * L * max(1, kv // tp) * d * kvb,
                "bandwidth": g["memory_bandwidth_gb_s"] * 1e9,
                "peak_flops": g["tensor_tflops"][dtype]["dense"] * 1e12, "overhead_s": 0.25}
        for key in KEYS:
            close(got[key], want[key],
                  f"stage_from_config({name}, {gpu_id}, tp={tp}, {dtype}): {key}")


@pytest.mark.rubric("step_model")
def test_stage_kv_heads_floor_at_one_per_gpu():
    """Rule: Stage from a config"""
    cfg = config(LLAMA70)                      # 8 KV heads
    at8 = sp.stage_from_config(cfg, gpu(H100_SXM), 8, 2, 2)
    at16 = sp.stage_from_config(cfg, gpu(H100_SXM), 16, 2, 2)
    assert at16["kv_bytes_per_token"] == at8["kv_bytes_per_token"] == 2 * 80 * 1 * 128 * 2, (
        "past the KV head count each GPU keeps a whole head: 40960 bytes per token at tp 8 and 16")
    close(at16["weight_bytes"], at8["weight_bytes"] / 2, "the weights keep splitting")


@pytest.mark.rubric("step_model")
def test_stage_head_dim_and_kv_defaults():
    """Rule: Stage from a config"""
    cfg = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "head_dim": None,
           "intermediate_size": 100, "vocab_size": 10}
    g = {"memory_bandwidth_gb_s": 1000,
         "tensor_tflops": {"bf16": {"dense": 100, "sparse_2_4": 200}}}
    got = sp.stage_from_config(cfg, g, 2, 2, 1)
    params = 2 * (2 * 64 * 16 * 8 + 3 * 64 * 100) + 10 * 64
    close(got["weight_bytes"], params * 2 / 2, "head_dim null means H // q; KV heads absent mean q")
    close(got["kv_bytes_per_token"], 2 * 2 * 2 * 16 * 1, "4 KV heads over 2 GPUs, d = 16")
    close(got["peak_flops"], 100e12, "the dense figure, never sparse_2_4")
    close(got["bandwidth"], 1e12, "decimal GB/s")
    assert got["overhead_s"] == 0.0


@pytest.mark.rubric("step_model")
@pytest.mark.parametrize("name", NOT_DENSE)
def test_stage_refuses_moe_and_mla(name):
    """Rules: Stage from a config; Bad input"""
    with pytest.raises(ValueError):
        sp.stage_from_config(config(name), gpu(H100_SXM), 1, 2, 2)


@pytest.mark.rubric("step_model")
@pytest.mark.parametrize("change", ["tp0", "tp3", "tp_bool", "tp_float", "wb_neg", "kv_neg",
                                    "dtype", "sparse_only", "overhead_neg", "wb_nan"])
def test_stage_bad_input(change):
    """Rules: Stage from a config; Bad input"""
    cfg, g = config(LLAMA70), gpu(H100_SXM)
    args = {"tp": 8, "weight_bytes": 2, "kv_bytes": 2, "dtype": "bf16", "overhead_s": 0.0}
    if change == "sparse_only":
        g = {"memory_bandwidth_gb_s": 3350, "tensor_tflops": {"bf16": {"sparse_2_4": 1979}}}
    else:
        args.update({"tp0": {"tp": 0}, "tp3": {"tp": 3}, "tp_bool": {"tp": True},
                     "tp_float": {"tp": 8.0}, "wb_neg": {"weight_bytes": -2},
                     "kv_neg": {"kv_bytes": -1}, "dtype": {"dtype": "int4"},
                     "overhead_neg": {"overhead_s": -1e-6},
                     "wb_nan": {"weight_bytes": float("nan")}}[change])
    with pytest.raises(ValueError):
        sp.stage_from_config(cfg, g, **args)


@pytest.mark.rubric("step_model")
@settings(max_examples=min(80, settings.default.max_examples))
@given(oracle.small_stage(), st.integers(1, 64), st.integers(0, 200), st.integers(0, 5000))
def test_pass_time_matches_the_model(s, seqs, extra, ctx):
    """Rule: Pass time"""
    tokens = seqs + extra
    want = oracle.pass_time(s, seqs, tokens, ctx)
    close(sp.pass_time_s(s, seqs, tokens, ctx), float(want),
          f"pass_time_s({s}, num_seqs={seqs}, num_tokens={tokens}, ctx_len={ctx}): "
          "overhead + max(tokens x flops / peak, (weights + seqs x ctx x kv) / bandwidth)",
          rel=1e-12)


@pytest.mark.rubric("step_model")
def test_pass_reads_kv_per_sequence_not_per_token():
    """Rule: Pass time"""
    s = stage(0.0, 0.001, 1.0, 1.0, 1.0)
    close(sp.pass_time_s(s, 4, 40, 100), 400.0,
          "4 sequences x 100 context tokens, whatever the tokens scored")
    close(sp.pass_time_s(s, 4, 4, 100), 400.0, "the same KV read for one token per sequence")
    close(sp.pass_time_s(s, 1, 1, 0), 0.001, "no context: the compute alone")


@pytest.mark.rubric("step_model")
def test_pass_overhead_is_added_not_maxed():
    """Rule: Pass time"""
    s = stage(10.0, 1.0, 0.0, 1.0, 1.0, 3.0)
    close(sp.pass_time_s(s, 1, 1, 0), 13.0, "overhead + the memory floor")
    close(sp.pass_time_s(s, 1, 20, 0), 23.0, "overhead + the compute floor")


@pytest.mark.rubric("step_model")
@pytest.mark.parametrize("bad", ["missing", "neg", "bw0", "peak0", "nan", "bool", "str", "notdict"])
def test_pass_time_bad_stage(bad):
    """Rule: Bad input"""
    s = stage(10.0, 1.0, 1.0, 1.0, 1.0, 0.0)
    s = {"missing": {k: v for k, v in s.items() if k != "kv_bytes_per_token"},
         "neg": {**s, "weight_bytes": -1.0}, "bw0": {**s, "bandwidth": 0},
         "peak0": {**s, "peak_flops": 0.0}, "nan": {**s, "flops_per_token": float("nan")},
         "bool": {**s, "overhead_s": False}, "str": {**s, "bandwidth": "1"},
         "notdict": list(s.values())}[bad]
    with pytest.raises(ValueError):
        sp.pass_time_s(s, 1, 1, 0)


@pytest.mark.rubric("step_model")
@pytest.mark.parametrize("args", [(0, 0, 0), (1, 0, 0), (3, 2, 0), (1, 1, -1), (1.0, 1, 0),
                                  (1, 1.0, 0), (1, 1, 0.0), (True, 1, 0), (1, 1, True)])
def test_pass_time_bad_counts(args):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        sp.pass_time_s(stage(10.0, 1.0), *args)


@pytest.mark.rubric("step_model")
def test_pass_time_extra_keys_ignored():
    """Rule: Pass time"""
    s = {**stage(10.0, 1.0), "name": "target", "layers": 80}
    close(sp.pass_time_s(s, 1, 1, 0), 10.0, "other keys of a stage are ignored")


# ================================================================== speedup
@pytest.mark.rubric("speedup")
@given(oracle.target_stages, oracle.drafter_stages, oracle.rates(1, 6), st.data(),
       st.integers(1, 300), st.sampled_from([0, 0, 1, 10, 100, 1000]))
def test_speedup_matches_the_model(t, d, rates, data, batch, ctx):
    """Rules: Verification step; Speedup"""
    k = data.draw(st.integers(0, len(rates)), label="k")
    want = oracle.speedup(t, d, rates, k, batch, ctx)
    close(sp.speedup(t, d, list(rates), k, batch, ctx), float(want),
          f"speedup(target={t}, drafter={d}, accept={rates}, k={k}, batch={batch}, ctx={ctx}): "
          "E(k) x plain pass / (k drafter passes at the batch + one target pass over k + 1 "
          "tokens each)",
          rel=1e-10)


@pytest.mark.rubric("speedup")
@settings(max_examples=min(60, settings.default.max_examples))
@given(oracle.target_stages, oracle.drafter_stages, oracle.rates(0, 4), st.integers(1, 500),
       st.integers(0, 1000))
def test_speedup_is_one_without_drafts(t, d, rates, batch, ctx):
    """Rule: Speedup"""
    got = sp.speedup(t, d, list(rates), 0, batch, ctx)
    close(got, 1.0, f"speedup at k = 0 (batch {batch}) is plain decoding", rel=1e-12)


@pytest.mark.rubric("speedup")
def test_drafter_passes_run_at_the_batch():
    """Rule: Verification step"""
    t = stage(100.0, 1.0)
    d = stage(1.0, 1.0)                      # a drafter pass: max(B, 1)
    # batch 40, k = 2: drafter 2 x 40, target max(120, 100) = 120, plain 100
    close(sp.speedup(t, d, [1.0, 1.0], 2, 40, 0), 3 * 100 / (80 + 120),
          "the drafter runs k passes over the whole batch (one token per sequence each)")


@pytest.mark.rubric("speedup")
def test_drafter_kv_is_read_each_pass():
    """Rule: Verification step"""
    t = stage(100.0, 0.0)
    d = stage(0.0, 0.0, 1.0)                 # a drafter pass reads B x ctx bytes
    close(sp.speedup(t, d, [1.0], 1, 2, 10), 2 * 100 / (20 + 100),
          "the drafter's pass reads its own KV for every sequence of the batch")


@pytest.mark.rubric("speedup")
def test_speedup_llama_examples():
    """Rules: Verification step; Speedup"""
    t, d = llama70_stage(), llama8_stage()
    rates = [0.8, 0.75, 0.7, 0.65, 0.6]
    for batch in (1, 64, 128, 256, 512):
        for ctx in (0, 4096, 32768):
            for k in range(6):
                want = oracle.speedup(t, d, rates, k, batch, ctx)
                close(sp.speedup(t, d, rates, k, batch, ctx), float(want),
                      f"Llama-3.3-70B with a Llama-3.1-8B drafter: k={k}, batch={batch}, ctx={ctx}",
                      rel=1e-10)


@pytest.mark.rubric("speedup")
@pytest.mark.parametrize("case", ["k_past_rates", "k_neg", "batch0", "ctx_neg", "free_target",
                                  "bad_drafter", "rate_high", "batch_float"])
def test_speedup_bad_input(case):
    """Rule: Bad input"""
    t, d = stage(100.0, 1.0), stage(1.0, 0.0)
    args = {"target": t, "drafter": d, "accept": [0.5, 0.5], "k": 2, "batch": 4, "ctx_len": 0}
    args.update({"k_past_rates": {"k": 3}, "k_neg": {"k": -1}, "batch0": {"batch": 0},
                 "ctx_neg": {"ctx_len": -1}, "free_target": {"target": stage(0.0, 0.0)},
                 "bad_drafter": {"drafter": {**d, "bandwidth": -1.0}},
                 "rate_high": {"accept": [0.5, 1.5]}, "batch_float": {"batch": 4.0}}[case])
    with pytest.raises(ValueError):
        sp.speedup(**args)


# ================================================================== draft length
@pytest.mark.rubric("draft_length")
@given(oracle.target_stages, oracle.drafter_stages, oracle.rates(0, 6), st.data(),
       st.integers(1, 400), st.sampled_from([0, 0, 10, 1000]))
def test_best_draft_length_is_the_exhaustive_best(t, d, rates, data, batch, ctx):
    """Rules: Best draft length; Tie tolerance"""
    max_k = data.draw(st.integers(0, len(rates)), label="max_k")
    want = decided(oracle.best_k, t, d, rates, max_k, batch, ctx)
    got = sp.best_draft_length(t, d, list(rates), max_k, batch, ctx)
    assert got == want, (
        f"best_draft_length(target={t}, drafter={d}, accept={rates}, max_k={max_k}, batch={batch}, "
        f"ctx={ctx}): expected {want}, got {got!r}; speedups "
        f"{[float(oracle.speedup(t, d, rates, k, batch, ctx)) for k in range(max_k + 1)]}")


@pytest.mark.rubric("draft_length")
@pytest.mark.parametrize("tail,want", [([0.0], 1), ([1e-13], 1), ([1e-6], 2), ([0.0, 1.0], 1),
                                       ([1e-14, 1.0], 1)])
def test_tie_tolerance_is_relative_1e9(tail, want):
    """Rules: Tie tolerance; Best draft length"""
    t, free = stage(100.0, 1.0), stage(0.0, 0.0)     # memory-bound verification, free drafts
    rates = [0.5, *tail]
    got = sp.best_draft_length(t, free, rates, len(rates), 1, 0)
    assert got == want, (
        f"accept {rates}, free drafter, batch 1: speedups "
        f"{[sp.speedup(t, free, rates, k, 1, 0) for k in range(len(rates) + 1)]}: values within "
        f"1e-9 of the best tie and the smallest k wins; expected {want}, got {got!r}")


@pytest.mark.rubric("draft_length")
def test_best_draft_length_never_looks_past_max_k():
    """Rule: Best draft length"""
    t, free = stage(100.0, 1.0), stage(0.0, 0.0)
    for max_k in range(5):
        assert sp.best_draft_length(t, free, [0.9] * 6, max_k, 1, 0) == max_k, (
            f"free drafts at batch 1 all pay: the best is max_k = {max_k}")
    assert sp.best_draft_length(t, free, [0.9] * 6, 0, 1, 0) == 0


@pytest.mark.rubric("draft_length")
def test_best_draft_length_compute_bound_is_zero():
    """Rule: Best draft length"""
    t, free = stage(1.0, 1.0), stage(0.0, 0.0)       # compute-bound from batch 1
    assert sp.best_draft_length(t, free, [0.99, 0.99], 2, 8, 0) == 0, (
        "a compute-bound pass costs k + 1 times as much; E(k) < k + 1, so speculation never pays")


@pytest.mark.rubric("draft_length")
@pytest.mark.parametrize("case", ["max_k_past", "max_k_neg", "max_k_bool", "batch0"])
def test_best_draft_length_bad_input(case):
    """Rule: Bad input"""
    t, d = stage(100.0, 1.0), stage(1.0, 0.0)
    args = {"max_k": 2, "batch": 1}
    args.update({"max_k_past": {"max_k": 3}, "max_k_neg": {"max_k": -1},
                 "max_k_bool": {"max_k": True}, "batch0": {"batch": 0}}[case])
    with pytest.raises(ValueError):
        sp.best_draft_length(t, d, [0.5, 0.5], args["max_k"], args["batch"], 0)


@st.composite
def bucket_edges(draw, top=40):
    edges = sorted(draw(st.sets(st.integers(1, top), min_size=1, max_size=5)))
    return edges


@pytest.mark.rubric("draft_length")
@settings(max_examples=min(40, settings.default.max_examples))
@given(oracle.target_stages, oracle.drafter_stages, oracle.rates(1, 4), st.data(), bucket_edges(),
       st.sampled_from([0, 0, 10]))
def test_buckets_match_the_exhaustive_worst_case(t, d, rates, data, edges, ctx):
    """Rules: Buckets; Tie tolerance"""
    max_k = data.draw(st.integers(0, len(rates)), label="max_k")
    want = decided(oracle.buckets, t, d, rates, max_k, edges, ctx)
    got = sp.bucket_draft_lengths(t, d, list(rates), max_k, list(edges), ctx)
    assert got == want, (
        f"bucket_draft_lengths(target={t}, drafter={d}, accept={rates}, max_k={max_k}, "
        f"edges={edges}, ctx={ctx}): expected {want}, got {got!r}")


@pytest.mark.rubric("draft_length")
def test_bucket_worst_batch_can_be_the_smallest():
    """Rule: Buckets"""
    # the target is memory-bound at every batch and reads 10 bytes of KV per sequence; the
    # drafter costs a flat 30 per pass: the larger the batch, the more of the step is KV the
    # drafts share, so every k pays least at batch 1
    t = stage(100.0, 0.001, 1.0)
    d = stage(30.0, 0.0)
    rates = [0.5, 0.5]
    for k in (1, 2):
        assert min(range(1, 101), key=lambda b: oracle.speedup(t, d, rates, k, b, 10)) == 1
    # at batch 100 k = 2 is best (1.66 against 1.46), at batch 1 k = 1 (1.18 against 1.13)
    assert oracle.best_k(t, d, rates, 2, 100, 10) == 2 and oracle.best_k(t, d, rates, 2, 1, 10) == 1
    got = sp.bucket_draft_lengths(t, d, rates, 2, [100], 10)
    assert got == [1], (
        f"bucket 1..100 at 10 tokens of context: k = 1 is worst at batch 1 (speedup 1.18), k = 2 "
        f"too (1.13): the bucket keeps k = 1, though k = 2 wins at its largest batch; got {got!r}")
    # k = 1 and k = 2 tie exactly at batch 5 (1.5 x 150 / 180 = 1.75 x 150 / 210 = 1.25) and
    # k = 2 leads from batch 6: a bucket starting at 5 must be priced at 5 (a tie: k = 1)
    got = sp.bucket_draft_lengths(t, d, rates, 2, [4, 100], 10)
    assert got == [1, 1], (
        f"buckets 1..4 and 5..100: the second is worst at its first batch, 5, where k = 1 and "
        f"k = 2 tie; expected [1, 1], got {got!r}")


@pytest.mark.rubric("draft_length")
def test_bucket_worst_batch_can_be_inside():
    """Rule: Buckets"""
    # plain pass max(B, 100); k = 1 adds a drafter pass of 5 and scores 2B: the speedup is flat
    # to batch 50, falls to batch 100, then recovers a little: the worst is inside 1..200
    t, d = stage(100.0, 1.0), stage(5.0, 0.0)
    rates = [0.9]
    assert min(range(1, 201), key=lambda b: oracle.speedup(t, d, rates, 1, b, 0)) == 100
    assert sp.bucket_draft_lengths(t, d, rates, 1, [40, 200], 0) == [1, 0]
    assert sp.bucket_draft_lengths(t, d, rates, 1, [50, 99, 100, 101], 0) == [1, 0, 0, 0]


@pytest.mark.rubric("draft_length")
@pytest.mark.parametrize("ctx,want", [(0, [4, 4, 4, 4, 4, 4, 3, 1, 0]),
                                      (4096, [4, 4, 4, 4, 3, 3, 3, 2, 2]),
                                      (32768, [4, 3, 3, 3, 2, 2, 2, 2, 2])])
def test_bucket_llama_tables(ctx, want):
    """Rule: Buckets"""
    # the tables come from the exact oracle (oracle.buckets), kept here because it is slow
    t, d = llama70_stage(), llama8_stage()
    rates = [0.8, 0.75, 0.7, 0.65, 0.6]
    got = sp.bucket_draft_lengths(t, d, rates, 5, [1, 2, 4, 8, 16, 32, 64, 128, 256], ctx)
    assert got == want, (
        f"Llama-3.3-70B with a Llama-3.1-8B drafter, accept {rates}, ctx {ctx}: expected {want}, "
        f"got {got!r}")


@pytest.mark.rubric("draft_length")
@pytest.mark.parametrize("edges", [[], [0], [3, 3], [5, 2], [1.5], [True], "1,2", [1, 2, -4]])
def test_bucket_bad_edges(edges):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        sp.bucket_draft_lengths(stage(100.0, 1.0), stage(1.0, 0.0), [0.5], 1, edges, 0)


# ================================================================== flip
@pytest.mark.rubric("flip")
@settings(max_examples=min(40, settings.default.max_examples))
@given(oracle.target_stages, oracle.drafter_stages, oracle.drafter_stages, oracle.rates(2, 3),
       oracle.rates(2, 3), st.integers(1, 40), st.integers(0, 40), st.sampled_from([0, 0, 10]),
       st.integers(0, 2))
def test_flip_matches_the_scan(t, da, db, ra, rb, lo, span, ctx, max_k):
    """Rule: Drafter flip"""
    hi = lo + span
    want = decided(oracle.flip, t, da, ra, db, rb, max_k, lo, hi, ctx)
    got = sp.flip_batch(t, da, list(ra), db, list(rb), max_k, lo, hi, ctx)
    assert got == want, (
        f"flip_batch(target={t}, a={da} {ra}, b={db} {rb}, max_k={max_k}, lo={lo}, hi={hi}, "
        f"ctx={ctx}): expected {want}, got {got!r}")


@pytest.mark.rubric("flip")
def test_flip_from_b_back_to_a():
    """Rule: Drafter flip"""
    # b (free, good) wins at small batches; once verification is compute-bound neither pays:
    # a tie, and ties go to a
    t = stage(100.0, 1.0)
    a, b = stage(50.0, 0.0), stage(0.0, 0.0)
    want = oracle.flip(t, a, [0.9], b, [0.9], 1, 1, 200, 0)
    assert want is not None and want > 1
    assert sp.flip_batch(t, a, [0.9], b, [0.9], 1, 1, 200, 0) == want


@pytest.mark.rubric("flip")
def test_flip_near_tie_goes_to_a():
    """Rules: Drafter flip; Tie tolerance"""
    # b's second draft is accepted with chance 1e-13: its best speedup beats a's by about
    # 3e-14 relative at small batches, a tie under the tolerance, so a wins everywhere
    t, free = stage(100.0, 1.0), stage(0.0, 0.0)
    got = sp.flip_batch(t, free, [0.5, 0.0], free, [0.5, 1e-13], 2, 1, 150, 0)
    assert got is None, f"b never beats a by more than 1e-9 relative: no flip; got {got!r}"


@pytest.mark.rubric("flip")
def test_flip_compares_best_k_not_max_k():
    """Rule: Drafter flip"""
    t = stage(100.0, 1.0)
    a = stage(0.0, 0.0)
    b = stage(0.0, 0.0)
    # a: only the first draft is any good; at max_k 3 its speedup at k = 3 is worse than at k = 1
    ra, rb = [0.9, 0.0, 0.0], [0.5, 0.5, 0.5]
    want = oracle.flip(t, a, ra, b, rb, 3, 1, 120, 0)
    assert sp.flip_batch(t, a, ra, b, rb, 3, 1, 120, 0) == want


@pytest.mark.rubric("flip")
def test_flip_llama_vs_ngram():
    """Rule: Drafter flip"""
    t, d = llama70_stage(), llama8_stage()
    good, poor = [0.9, 0.85, 0.8, 0.75, 0.7], [0.6, 0.5, 0.4, 0.3, 0.2]
    for ctx, want in ((4096, 61), (32768, 8)):
        assert sp.flip_batch(t, d, good, NGRAM, poor, 5, 1, 256, ctx) == want
        assert sp.flip_batch(t, NGRAM, poor, d, good, 5, 1, 256, ctx) == want, "swapped: same flip"
    assert sp.flip_batch(t, d, good, NGRAM, poor, 5, 61, 256, 4096) is None, "b wins from lo on"
    assert sp.flip_batch(t, d, good, NGRAM, poor, 5, 60, 60, 4096) is None, "lo = hi: no flip"


@pytest.mark.rubric("flip")
@pytest.mark.parametrize("case", ["hi_below_lo", "lo0", "rates_short", "max_k_neg"])
def test_flip_bad_input(case):
    """Rule: Bad input"""
    t, d = stage(100.0, 1.0), stage(1.0, 0.0)
    args = dict(lo=1, hi=5, max_k=1, ra=[0.5], rb=[0.5])
    args.update({"hi_below_lo": {"lo": 5, "hi": 4}, "lo0": {"lo": 0},
                 "rates_short": {"max_k": 1, "rb": []}, "max_k_neg": {"max_k": -1}}[case])
    with pytest.raises(ValueError):
        sp.flip_batch(t, d, args["ra"], d, args["rb"], args["max_k"], args["lo"], args["hi"], 0)


# ================================================================== per request
PROFILES = [[0.0, 0.0, 0.0], [0.2, 0.1, 0.0], [0.5, 0.5, 0.5], [0.8, 0.7, 0.6], [1.0, 1.0, 1.0],
            [0.95, 0.9, 0.85], [0.6, 0.0, 0.0]]


def _check_choice(t, d, accepts, max_k, ctx, got):
    n = len(accepts)
    k, m = decided(oracle.request_choice, t, d, accepts, max_k, ctx)
    where = (f"per_request_draft_lengths(target={t}, drafter={d}, accepts={accepts}, "
             f"max_k={max_k}, ctx={ctx})")
    assert isinstance(got, list) and len(got) == n, \
        f"{where}: one draft length per request, got {got!r}"
    drafting = [i for i, g in enumerate(got) if g != 0]
    assert len(drafting) == m and all(got[i] == k for i in drafting), (
        f"{where}: expected {m} requests drafting {k} tokens (the best k, then the fewest "
        f"drafting requests), got {got!r}")
    if k:
        gains = [oracle.expected(a, k) for a in accepts]
        for i in range(n):
            if i in drafting:
                continue
            for j in drafting:
                assert gains[i] < gains[j] or (gains[i] == gains[j] and i > j), (
                    f"{where}: request {i} (E = {float(gains[i])}) does not draft but request {j} "
                    f"(E = {float(gains[j])}) does; the drafting set is the requests with the "
                    f"largest E(k), lower index first on equal E; got {got!r}")


@pytest.mark.rubric("per_request")
@settings(max_examples=min(60, settings.default.max_examples))
@given(oracle.target_stages, oracle.drafter_stages,
       st.lists(st.sampled_from(PROFILES), min_size=1, max_size=6), st.integers(0, 3),
       st.sampled_from([0, 0, 10]))
def test_per_request_matches_exhaustive_subsets(t, d, accepts, max_k, ctx):
    """Rule: Per-request policy"""
    got = sp.per_request_draft_lengths(t, d, [list(a) for a in accepts], max_k, ctx)
    _check_choice(t, d, accepts, max_k, ctx, got)


@pytest.mark.rubric("per_request")
def test_per_request_one_bad_request_does_not_stop_the_rest():
    """Rule: Per-request policy"""
    t, d = stage(100.0, 1.0), stage(2.0, 0.0)
    accepts = [[0.9, 0.9]] * 5 + [[0.0, 0.0]]
    got = sp.per_request_draft_lengths(t, d, accepts, 2, 0)
    _check_choice(t, d, accepts, 2, 0, got)
    assert got[5] == 0 and got[:5] == [2] * 5, got


@pytest.mark.rubric("per_request")
def test_per_request_judges_the_batch_not_each_request():
    """Rule: Per-request policy"""
    # pass max(tokens, 10), free drafts: with everyone drafting one token each request gains
    # (1.9 tokens in 12 against 1 in 10), yet the batch does best when only four draft
    # (9.6 tokens in 10): the decision is the batch's tokens per second
    t, d = stage(10.0, 1.0), stage(0.0, 0.0)
    accepts = [[0.9, 0.9]] * 6
    assert oracle.request_choice(t, d, accepts, 2, 0) == (1, 4)
    got = sp.per_request_draft_lengths(t, d, accepts, 2, 0)
    assert got == [1, 1, 1, 1, 0, 0], (
        f"6 equal requests, target pass max(tokens, 10), free drafter: the best is 4 requests "
        f"drafting 1 token (9.6 tokens per 10 s), lowest indices first; got {got!r}")


@pytest.mark.rubric("per_request")
def test_per_request_ties_prefer_the_smaller_k():
    """Rules: Per-request policy; Tie tolerance"""
    # 8 equal requests [0.5, 1.0], target pass max(tokens, 14), free drafts: six requests
    # drafting one token and three drafting two both emit 11 tokens in 14 s; the smaller k wins
    t, free = stage(14.0, 1.0), stage(0.0, 0.0)
    accepts = [[0.5, 1.0]] * 8
    assert oracle.request_choice(t, free, accepts, 2, 0) == (1, 6)
    got = sp.per_request_draft_lengths(t, free, accepts, 2, 0)
    assert got == [1] * 6 + [0] * 2, (
        f"(k = 1, m = 6) and (k = 2, m = 3) tie at 11 tokens per 14 s: the smaller k wins, "
        f"then the fewer drafting requests; got {got!r}")


@pytest.mark.rubric("per_request")
def test_per_request_llama_batch():
    """Rule: Per-request policy"""
    t, d = llama70_stage(), llama8_stage()
    accepts = [PROFILES[i % len(PROFILES)] for i in range(5)]
    for ctx in (0, 4096):
        got = sp.per_request_draft_lengths(t, d, accepts, 3, ctx)
        _check_choice(t, d, accepts, 3, ctx, got)


@pytest.mark.rubric("per_request")
@pytest.mark.parametrize("case", ["empty", "short", "rate", "max_k", "not_list", "bool_rate"])
def test_per_request_bad_input(case):
    """Rule: Bad input"""
    t, d = stage(100.0, 1.0), stage(1.0, 0.0)
    accepts, max_k = {"empty": ([], 1), "short": ([[0.5, 0.5], [0.5]], 2),
                      "rate": ([[0.5], [-0.5]], 1), "max_k": ([[0.5]], -1),
                      "not_list": ("0.5", 1), "bool_rate": ([[True]], 1)}[case]
    with pytest.raises(ValueError):
        sp.per_request_draft_lengths(t, d, accepts, max_k, 0)

