"""Public tests for kv_capacity: the prompt's rules on real configs and one recorded log.

Run: nox -s kata -- kv_capacity
"""

import pytest

from graders.impl import kata_impl
from tests.kv_capacity.helpers import GIB, config

kv = kata_impl("kv_capacity")

LLAMA_8B = "meta-llama--Meta-Llama-3.1-8B"


@pytest.mark.rubric("per_token_formula")
def test_llama_8b_bf16_per_token():
    """Rule: KV bytes per token"""
    got = kv.kv_bytes_per_token(config(LLAMA_8B), 2)
    assert got == 131072, f"2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131072, got {got}"


@pytest.mark.rubric("per_token_formula")
def test_explicit_head_dim_wins():
    cfg = config("Qwen--Qwen3-32B")   # 64 heads x head_dim 128 on a 5120-wide model
    got = kv.kv_bytes_per_token(cfg, 2)
    assert got == 2 * 64 * 8 * 128 * 2, (
        f"Qwen3-32B: head_dim is 128 from the config, not 5120/64 = 80; expected 262144, got {got}")


@pytest.mark.rubric("per_token_formula")
def test_pipeline_stages_and_busiest_stage():
    assert list(kv.pp_stage_layers(61, 4)) == [15, 15, 16, 15], "leftover layers go to the stages before the last"
    assert list(kv.pp_stage_layers(32, 2)) == [16, 16]
    got = kv.kv_bytes_per_token(config(LLAMA_8B), 2, pp=2)
    assert got == 65536, f"PP2 puts 16 of 32 layers on a GPU: expected 65536, got {got}"


@pytest.mark.rubric("tp_replication")
def test_tp_splits_kv_heads_then_replicates():
    cfg = config(LLAMA_8B)            # 8 KV heads
    got = [kv.kv_bytes_per_token(cfg, 2, tp=t) for t in (1, 2, 8, 16, 32)]
    assert got == [131072, 65536, 16384, 16384, 16384], (
        f"TP 1/2/8 split the 8 KV heads; TP 16 and 32 keep one whole head per GPU: got {got}")


@pytest.mark.rubric("mla")
def test_mla_latent_is_on_every_rank():
    cfg = config("deepseek-ai--DeepSeek-V3")
    one = kv.kv_bytes_per_token(cfg, 2)
    assert one == (512 + 64) * 61 * 2, f"(512 + 64) x 61 layers x 2 bytes = 70272, got {one}"
    assert kv.kv_bytes_per_token(cfg, 2, tp=8) == one, "TP does not split an MLA cache"


@pytest.mark.rubric("weights")
def test_llama_8b_weights():
    """Rule: Weights per GPU"""
    got = kv.weight_bytes_per_gpu(config(LLAMA_8B), 2)
    assert got == pytest.approx(16060522496, rel=1e-12), f"Llama-3.1-8B has 8,030,261,248 weights in the template: expected 16060522496 bytes, got {got}"


@pytest.mark.rubric("weights")
def test_moe_holds_every_expert():
    """Rule: Weights per GPU"""
    got = kv.weight_bytes_per_gpu(config("mistralai--Mixtral-8x7B-v0.1"), 1)
    assert abs(got / 1e9 - 46.7) < 0.05, f"Mixtral-8x7B holds all 8 experts: about 46.7e9 weights, got {got / 1e9:.2f}e9"


@pytest.mark.rubric("budget_order")
def test_budget_uses_total_memory_times_utilisation():
    """Rule: Budget"""
    got = kv.kv_budget_bytes(80 * GIB, 0.9, 15 * GIB, 2 * GIB, 1 * GIB)
    assert got == pytest.approx(54 * GIB), f"80 x 0.9 - 15 - 2 - 1 = 54 GiB, got {got / GIB} GiB"


@pytest.mark.rubric("budget_order")
def test_model_that_does_not_fit():
    with pytest.raises(kv.DoesNotFit):
        kv.kv_budget_bytes(80 * GIB, 0.9, 70 * GIB, 2 * GIB, 1 * GIB)


@pytest.mark.rubric("blocks")
def test_tokens_come_in_whole_blocks():
    """Rules: Whole blocks; Fragmentation bound"""
    assert kv.kv_cache_tokens(16 * 100 + 15, 1, 16) == 1600
    assert kv.kv_cache_tokens(131072 * 33, 131072, 16) == 32, "33 tokens' worth is 2 whole blocks"
    assert kv.fragmentation_bound(16, 10) == 150


@pytest.mark.rubric("sliding_window")
def test_sliding_window_saving_is_set_by_the_layer_ratio():
    """Rule: Sliding windows"""
    cfg = config("openai--gpt-oss-20b")   # 12 of 24 layers on a 128-token window
    got = kv.sliding_window_saving(cfg, 131072)
    assert got == pytest.approx(0.5 * (131072 - 128) / 131072), f"got {got}"
    assert kv.sliding_window_saving(cfg, 128) == 0.0, "the window covers a 128-token sequence"
    assert kv.sliding_window_saving(config(LLAMA_8B), 131072) == 0.0


@pytest.mark.rubric("binding_ceiling")
def test_default_sequence_cap_is_not_reached_at_2k():
    """Rules: Ceilings; Maximum concurrency"""
    got = kv.effective_max_batch(476016, 2048, 1024, 8192)
    assert tuple(got) == (232, "kv_cache"), f"29,751 blocks / 128 blocks per 2K sequence = 232, got {got}"
    assert kv.max_concurrency(476016, 8192) == pytest.approx(476016 / 8192)


@pytest.mark.rubric("recorded_logs")
def test_readme_example_llama_8b_on_h100():
    per_token = kv.kv_bytes_per_token(config(LLAMA_8B), 2)
    budget = kv.kv_budget_bytes(79.19 * GIB, 0.95, 14.99 * GIB, 1.89 * GIB, 0.25 * GIB)
    assert abs(budget / GIB - 58.11) <= 0.02, f"logged 58.11 GiB, got {budget / GIB:.3f}"
    lo = kv.kv_cache_tokens(58.105 * GIB, per_token)
    hi = kv.kv_cache_tokens(58.115 * GIB, per_token)
    assert lo <= 476016 <= hi, f"logged 476,016 tokens; 58.11 +- 0.005 GiB gives {lo}..{hi}"
