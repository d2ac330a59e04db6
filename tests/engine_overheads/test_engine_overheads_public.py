"""Public tests for engine_overheads: the prompt's examples and one check per rule."""

from __future__ import annotations

from fractions import Fraction

import pytest

from graders.impl import kata_impl
from tests.engine_overheads.helpers import LLAMA8, MODULES, config, vllm_default_ladder

eo = kata_impl("engine_overheads")


# ------------------------------------------------------------------ capture sizes
@pytest.mark.rubric("capture_sizes")
def test_capture_sizes_default_example():
    """Rule: Capture sizes"""
    got = eo.vllm_capture_sizes(256, 8192)
    assert got == vllm_default_ladder(512), (
        f"vllm_capture_sizes(256, 8192): 1, 2, 4, steps of 8 below 256, steps of 16 from 256 "
        f"to min(256 x 2, 512) = 512; got {got}")
    assert len(got) == 51


@pytest.mark.rubric("capture_sizes")
def test_capture_sizes_small_caps_and_speculation():
    """Rule: Capture sizes"""
    assert eo.vllm_capture_sizes(4, 8192) == [1, 2, 4, 8], "top = 4 x 2 = 8"
    assert eo.vllm_capture_sizes(1, 8192) == [1, 2], "top = 1 x 2 = 2"
    assert eo.vllm_capture_sizes(16, 8192, 3) == vllm_default_ladder(128), (
        "three speculative tokens: top = 16 x 4 x 2 = 128")
    assert eo.vllm_capture_sizes(256, 100) == vllm_default_ladder(100), (
        "the token budget caps top: min(512, 100) = 100, so the last size is 96")
    assert eo.vllm_capture_sizes(8, 8192, 0, 300) == vllm_default_ladder(300), (
        "max_capture_size 300 replaces the default; 300 itself is not on the ladder")


@pytest.mark.rubric("capture_sizes")
def test_capture_sizes_bad_input():
    """Rule: Bad input"""
    for args in [(0, 8192), (True, 8192), (8, 0), (8.0, 8192), (8, 8192, -1), (8, 8192, 0, 0)]:
        with pytest.raises(ValueError):
            eo.vllm_capture_sizes(*args)


# ------------------------------------------------------------------ padding
@pytest.mark.rubric("padding")
def test_padded_size_next_captured_size():
    """Rule: Padding"""
    sizes = [1, 2, 4, 8, 16, 24, 32]
    for n, want in [(1, 1), (3, 4), (5, 8), (8, 8), (9, 16), (17, 24), (32, 32), (33, None)]:
        assert eo.padded_size(n, sizes) == want, (
            f"padded_size({n}, {sizes}): the smallest size >= {n}, None above 32")
    assert eo.padded_size(5, [32, 8, 8, 1]) == 8, "any order, repeats allowed"


@pytest.mark.rubric("padding")
def test_padding_waste_decode_example():
    """Rule: Padding waste"""
    ladder = eo.vllm_capture_sizes(256, 8192)
    got = eo.padding_waste({b: 1 for b in range(1, 257)}, ladder)
    assert got == {"steps": 256, "graph_steps": 256, "real_tokens": 32896,
                   "padding_tokens": 875}, f"decode over B = 1..256, one step each: {got}"
    assert Fraction(got["padding_tokens"], got["real_tokens"]) == Fraction(875, 32896)
    pow2 = eo.padding_waste({b: 1 for b in range(1, 257)}, [1, 2, 4, 8, 16, 32, 64, 128, 256])
    assert pow2["padding_tokens"] == 10795, f"powers of two pad far more: {pow2}"


@pytest.mark.rubric("padding")
def test_padding_waste_eager_steps_count_as_real_tokens():
    """Rule: Padding waste"""
    got = eo.padding_waste({3: 2, 9: 1, 100: 5, 7: 0}, [4, 8])
    assert got == {"steps": 8, "graph_steps": 2, "real_tokens": 2 * 3 + 9 + 500,
                   "padding_tokens": 2}, (
        f"two 3-token steps pad to 4 (2 dummy tokens); 9 and 100 run eagerly, unpadded: {got}")


# ------------------------------------------------------------------ capture ledger
@pytest.mark.rubric("capture_ledger")
def test_capture_ledger_shared_pool_and_pages():
    """Rule: Capture ledger"""
    graph = {1: 10, 2: 10, 4: 12, 8: 20}
    pool = {1: 100, 2: 150, 4: 300, 8: 700}
    got = eo.capture_ledger({"all": [1, 2, 4, 8], "small": [2, 1, 1], "none": []},
                            graph, pool, kv_bytes=10_050, page_bytes=1000)
    assert got["all"] == {"graph_bytes": 52 + 700, "kv_pages": 9, "kv_pages_lost": 1}, (
        f"private bytes summed (52) plus the largest pool need once (700): {got['all']}")
    assert got["small"] == {"graph_bytes": 20 + 150, "kv_pages": 9, "kv_pages_lost": 1}, (
        f"repeats count once: {got['small']}")
    assert got["none"] == {"graph_bytes": 0, "kv_pages": 10, "kv_pages_lost": 0}


@pytest.mark.rubric("capture_ledger")
def test_capture_ledger_refuses_missing_sizes_and_overruns():
    """Rules: Capture ledger; Bad input"""
    with pytest.raises(ValueError):
        eo.capture_ledger({"p": [1, 16]}, {1: 1}, {1: 1, 16: 1}, 100, 10)
    with pytest.raises(ValueError):
        eo.capture_ledger({"p": [1]}, {1: 60}, {1: 41}, 100, 10)


# ------------------------------------------------------------------ multi-LoRA
@pytest.mark.rubric("lora_batches")
def test_lora_sub_batches_examples():
    """Rule: Sub-batches"""
    assert eo.lora_sub_batches(["a", "b", None, "a", "c", "b", "d"], 2) == [[0, 1, 2, 3, 5],
                                                                             [4, 6]]
    tenants = [f"t{i}" for i in range(8)]
    assert eo.lora_sub_batches(tenants, 1) == [[i] for i in range(8)], (
        "max_loras = 1 (vLLM's default): one step per distinct adapter")
    assert eo.lora_sub_batches(tenants, 8) == [list(range(8))]
    assert eo.lora_sub_batches([], 1) == []
    assert eo.lora_sub_batches([None, None], 1) == [[0, 1]], "base-model requests always fit"


@pytest.mark.rubric("lora_batches")
def test_lora_step_cost_eight_tenants():
    """Rule: Step cost"""
    tenants = [f"t{i}" for i in range(8)]
    assert eo.lora_step_cost(tenants, [1] * 8, 1, 10_000, 300, 2) == 8 * (10_000 + 300 + 2)
    assert eo.lora_step_cost(tenants, [1] * 8, 8, 10_000, 300, 2) == 10_000 + 8 * 300 + 8 * 2
    assert eo.lora_step_cost(["a"] * 8, [1] * 8, 1, 10_000, 300, 2) == 10_000 + 300 + 16, (
        "eight requests of one adapter: the adapter term is paid once")
    assert eo.lora_step_cost(["a", None], [5, 7], 1, 0, 0, 1) == 5, (
        "only tokens of requests that use an adapter pay the LoRA token cost")


@pytest.mark.rubric("lora_batches")
def test_lora_bad_input():
    """Rule: Bad input"""
    for args in [(["a", 1], 1), (["a"], 0), ("ab", 1), (["a"], True)]:
        with pytest.raises(ValueError):
            eo.lora_sub_batches(*args)
    with pytest.raises(ValueError):
        eo.lora_step_cost(["a"], [1, 2], 1, 0, 0, 0)
    with pytest.raises(ValueError):
        eo.lora_step_cost(["a"], [0], 1, 0, 0, 0)


@pytest.mark.rubric("lora_memory")
def test_lora_memory_llama8_example():
    """Rule: Adapter memory"""
    got = eo.lora_memory(config(LLAMA8), 2, [16] * 8, list(MODULES), 8, 16)
    assert got["adapter_bytes"] == [83_886_080] * 8, "32 x 81,920 x 16 x 2 bytes each"
    assert got["slot_bytes"] == 83_886_080 and got["gpu_bytes"] == 8 * 83_886_080


@pytest.mark.rubric("lora_memory")
def test_lora_memory_slot_is_sized_by_the_setting():
    """Rule: Adapter memory"""
    got = eo.lora_memory(config(LLAMA8), 2, [16], ["q_proj", "v_proj"], 1, 128)
    assert got["adapter_bytes"] == [13_631_488], "q_proj (4096 + 4096) + v_proj (4096 + 1024)"
    assert got["slot_bytes"] == 671_088_640, (
        "the slot is preallocated at max_lora_rank = 128 over all seven modules")
    assert got["gpu_bytes"] == 671_088_640


@pytest.mark.rubric("lora_memory")
def test_lora_memory_refuses():
    """Rules: Adapter memory; Bad input"""
    cfg = config(LLAMA8)
    with pytest.raises(ValueError):
        eo.lora_memory(cfg, 2, [32], ["q_proj"], 1, 16)
    with pytest.raises(ValueError):
        eo.lora_memory(cfg, 2, [16], ["q_proj", "q_proj"], 1, 16)
    with pytest.raises(ValueError):
        eo.lora_memory(cfg, 2, [16], ["lm_head"], 1, 16)
    with pytest.raises(ValueError):
        eo.lora_memory(config("Qwen--Qwen3-30B-A3B"), 2, [16], ["q_proj"], 1, 16)


# ------------------------------------------------------------------ multimodal
@pytest.mark.rubric("mm_ledger")
def test_mm_ledger_example():
    """Rules: Image tokens; KV; Phases"""
    got = eo.mm_ledger([(1024, 768)], 14, 2, 200, 512, 131_072, 16, 7_168, 100_000)
    want = {"image_tokens": [1036], "prompt_tokens": 1236, "kv_pages": 110,
            "embed_bytes": 1036 * 7168, "encode_bytes": 577_977_856,
            "prefill_bytes": 171_003_904, "decode_bytes": 230_686_720,
            "peak_bytes": 577_977_856, "peak_phase": "encode"}
    assert got == want, f"the prompt's example: {got}"


@pytest.mark.rubric("mm_ledger")
def test_mm_ledger_text_only_and_ties():
    """Rules: Phases; Image tokens"""
    got = eo.mm_ledger([], 14, 2, 10, 6, 1, 4, 1, 1)
    assert got["encode_bytes"] == 0 and got["prefill_bytes"] == 12 and got["decode_bytes"] == 16
    assert got["peak_phase"] == "decode" and got["kv_pages"] == 4
    tie = eo.mm_ledger([], 14, 2, 8, 0, 1, 4, 1, 1)
    assert tie["prefill_bytes"] == tie["decode_bytes"] == 8 and tie["peak_phase"] == "prefill", (
        "a tie goes to the earlier phase")
    with pytest.raises(ValueError):
        eo.mm_ledger([], 14, 2, 0, 5, 1, 4, 1, 1)
    with pytest.raises(ValueError):
        eo.mm_ledger([(10,)], 14, 2, 1, 5, 1, 4, 1, 1)
