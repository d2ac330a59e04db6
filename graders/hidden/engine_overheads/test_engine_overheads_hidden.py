"""Hidden tests for engine_overheads: each rule and each trap, exact against an independent oracle."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import example, given, settings

from graders.hidden.engine_overheads import oracle
from graders.impl import kata_impl
from tests.engine_overheads.helpers import DENSE, LLAMA8, MODULES, MOE, config

eo = kata_impl("engine_overheads")

NOT_INTS = [True, False, 1.0, float("nan"), float("inf"), "3", None]

# Seq counts around the 256 boundary of the ladder (top = 2 x seqs) and the 512 cap.
SEQS = st.one_of(st.integers(1, 8), st.integers(120, 136), st.integers(250, 260),
                 st.integers(1, 1024))
BUDGETS = st.one_of(st.integers(1, 16), st.integers(250, 262), st.just(8192),
                    st.integers(1, 20_000))


# ================================================================== capture sizes
@pytest.mark.rubric("capture_sizes")
@given(SEQS, BUDGETS, st.integers(0, 5))
@example(128, 8192, 0)
@example(127, 8192, 0)
@example(64, 8192, 1)
@example(256, 255, 0)
@example(32, 100, 3)
def test_capture_sizes_follow_the_default_rule(seqs, budget, spec):
    """Rule: Capture sizes"""
    want = oracle.ladder(oracle.default_top(seqs, budget, spec))
    got = eo.vllm_capture_sizes(seqs, budget, spec)
    assert got == want, (
        f"vllm_capture_sizes({seqs}, {budget}, {spec}): top = min(min({seqs} x {1 + spec} x 2, "
        f"512), {budget}); want {want}, got {got}")


@pytest.mark.rubric("capture_sizes")
@given(st.integers(1, 64), BUDGETS,
       st.one_of(st.integers(1, 10), st.integers(250, 300), st.integers(500, 1100)))
@example(4, 8192, 256)
@example(4, 8192, 255)
@example(4, 8192, 1024)
@example(4, 200, 1024)
def test_capture_sizes_with_max_capture_size(seqs, budget, given_top):
    """Rule: Capture sizes"""
    want = oracle.ladder(min(given_top, budget))
    got = eo.vllm_capture_sizes(seqs, budget, 0, given_top)
    assert got == want, (
        f"vllm_capture_sizes({seqs}, {budget}, 0, {given_top}): max_capture_size replaces the "
        f"default (no 512 cap) and the token budget still caps it; want {want}, got {got}")


@pytest.mark.rubric("capture_sizes")
def test_capture_sizes_ends_and_boundaries():
    """Rule: Capture sizes"""
    assert eo.vllm_capture_sizes(128, 8192)[-3:] == [240, 248, 256], "top 256: 256 once"
    assert eo.vllm_capture_sizes(127, 8192)[-2:] == [240, 248], "top 254: below 256"
    assert eo.vllm_capture_sizes(136, 8192)[-3:] == [248, 256, 272], "top 272: step 16"
    assert eo.vllm_capture_sizes(2, 8192) == [1, 2, 4], "top 4"
    assert eo.vllm_capture_sizes(3, 8192) == [1, 2, 4], "top 6: no 8"
    assert eo.vllm_capture_sizes(1024, 3) == [1, 2], "budget 3 caps top at 3"
    assert eo.vllm_capture_sizes(64, 8192, 7) == oracle.ladder(512), "64 x 8 x 2 capped at 512"


@pytest.mark.rubric("capture_sizes")
def test_capture_sizes_bad_input():
    """Rule: Bad input"""
    for bad in NOT_INTS + [0, -1]:
        for args in [(bad, 8192), (8, bad)]:
            with pytest.raises(ValueError):
                eo.vllm_capture_sizes(*args)
    for bad in NOT_INTS[:-1] + [-1]:
        with pytest.raises(ValueError):
            eo.vllm_capture_sizes(8, 8192, bad)
    for bad in NOT_INTS[:-1] + [0, -5]:
        with pytest.raises(ValueError):
            eo.vllm_capture_sizes(8, 8192, 0, bad)


# ================================================================== padding
SIZE_LISTS = st.lists(st.integers(1, 64), min_size=1, max_size=10)


@pytest.mark.rubric("padding")
@given(SIZE_LISTS, st.data())
def test_padded_size_is_the_smallest_size_that_fits(sizes, data):
    """Rule: Padding"""
    top = max(sizes)
    n = data.draw(st.one_of(st.sampled_from(sorted({1, top, top + 1} | set(sizes)
                                                   | {s + 1 for s in sizes})),
                            st.integers(1, top + 3)), label="n")
    want = oracle.padded(n, sizes)
    got = eo.padded_size(n, list(sizes))
    assert got == want, (
        f"padded_size({n}, {sizes}): the smallest size >= {n} (None above {top}); "
        f"want {want}, got {got}")


@pytest.mark.rubric("padding")
@settings(max_examples=min(15, settings.default.max_examples))
@given(st.one_of(SIZE_LISTS, st.integers(1, 600).map(oracle.ladder)))
@example(oracle.ladder(512))
def test_padded_size_agrees_with_vllms_lookup_table(sizes):
    """Rule: Padding"""
    table = oracle.vllm_style_table(sizes)
    edges = sorted({1, len(table), len(table) + 1} | {s + d for s in sizes for d in (-1, 0, 1)})
    for n in [e for e in edges if e >= 1]:
        want = table[n] if n < len(table) else None
        got = eo.padded_size(n, list(sizes))
        assert got == want, (
            f"padded_size({n}, {sizes}): vLLM's lookup table gives {want} (None: no graph, "
            f"eager above the largest size), got {got}")


@pytest.mark.rubric("padding")
def test_padded_size_bad_input():
    """Rule: Bad input"""
    for n in NOT_INTS + [0, -1]:
        with pytest.raises(ValueError):
            eo.padded_size(n, [1, 2])
    for sizes in [[], [0], [1, True], [1, 2.0], "12", None, [1, -4], {1: 1}]:
        with pytest.raises(ValueError):
            eo.padded_size(1, sizes)


HISTOGRAMS = st.dictionaries(st.one_of(st.integers(1, 70), st.integers(60, 600)),
                             st.one_of(st.just(0), st.integers(1, 5), st.integers(1, 10**6)),
                             max_size=12)


@pytest.mark.rubric("padding")
@given(HISTOGRAMS, SIZE_LISTS)
@example({3: 2, 9: 1, 100: 5, 7: 0}, [4, 8])
@example({}, [1])
def test_padding_waste_matches_the_histogram(hist, sizes):
    """Rule: Padding waste"""
    want = oracle.waste(hist, sizes)
    got = eo.padding_waste(dict(hist), list(sizes))
    assert got == want, (
        f"padding_waste({hist}, {sizes}): eager steps add their tokens to real_tokens and "
        f"no padding; want {want}, got {got}")


@pytest.mark.rubric("padding")
def test_padding_waste_uniform_decode_on_the_default_ladder():
    """Rule: Padding waste"""
    for top in (8, 32, 100, 256, 512):
        hist = {b: 1 for b in range(1, top + 1)}
        want = oracle.waste(hist, oracle.ladder(512))
        assert eo.padding_waste(hist, oracle.ladder(512)) == want, f"B = 1..{top}"


@pytest.mark.rubric("padding")
def test_padding_waste_bad_input():
    """Rule: Bad input"""
    for hist in [[(1, 2)], {0: 1}, {1: -1}, {True: 1}, {1: 1.0}, {1.0: 1}, {2: None}, None]:
        with pytest.raises(ValueError):
            eo.padding_waste(hist, [1, 2])
    with pytest.raises(ValueError):
        eo.padding_waste({1: 1}, [])


# ================================================================== capture ledger
@st.composite
def ledgers(draw):
    sizes = draw(st.lists(st.integers(1, 40), min_size=1, max_size=8, unique=True))
    graph = {s: draw(st.integers(0, 50)) for s in sizes}
    pool = {s: draw(st.integers(0, 500)) for s in sizes}
    policies = {f"p{i}": draw(st.lists(st.sampled_from(sizes), max_size=10))
                for i in range(draw(st.integers(1, 4)))}
    worst = max(sum(graph[s] for s in set(p)) + max((pool[s] for s in set(p)), default=0)
                for p in policies.values())
    kv = draw(st.one_of(st.just(worst), st.integers(worst, worst + 3000)))
    page = draw(st.one_of(st.integers(1, 10), st.integers(50, 700)))
    return policies, graph, pool, kv, page


@pytest.mark.rubric("capture_ledger")
@given(ledgers())
def test_capture_ledger_matches_the_model(case):
    """Rule: Capture ledger"""
    policies, graph, pool, kv, page = case
    want = oracle.ledger(policies, graph, pool, kv, page)
    got = eo.capture_ledger(policies, graph, pool, kv, page)
    assert got == want, (
        f"capture_ledger({policies}, graph={graph}, pool={pool}, kv={kv}, page={page}): "
        f"private bytes of distinct sizes + the largest pool need once; want {want}, got {got}")


@pytest.mark.rubric("capture_ledger")
def test_capture_ledger_pages_lost_is_a_difference_of_floors():
    """Rule: Capture ledger"""
    got = eo.capture_ledger({"p": [1]}, {1: 1}, {1: 0}, 1000, 100)["p"]
    assert got == {"graph_bytes": 1, "kv_pages": 9, "kv_pages_lost": 1}, (
        f"one byte of graphs costs a whole page when the KV bytes are a whole number of pages: "
        f"{got}")
    got = eo.capture_ledger({"p": [1]}, {1: 99}, {1: 0}, 1099, 100)["p"]
    assert got == {"graph_bytes": 99, "kv_pages": 10, "kv_pages_lost": 0}, (
        f"99 bytes out of the 99-byte remainder cost no page: {got}")
    got = eo.capture_ledger({"p": [4, 8]}, {4: 0, 8: 0}, {4: 500, 8: 300}, 1000, 100)["p"]
    assert got["graph_bytes"] == 500, "the pool's largest need is at size 4 here, not at 8"


@pytest.mark.rubric("capture_ledger")
def test_capture_ledger_bad_input():
    """Rules: Capture ledger; Bad input"""
    g, p = {1: 1, 2: 1}, {1: 1, 2: 1}
    cases = [({}, g, p, 10, 1), ({"a": [3]}, g, p, 10, 1), ({"a": [1]}, g, {2: 1}, 10, 1),
             ({"a": [1]}, g, p, 1, 1), ({"a": [1]}, g, p, 10, 0), ({"a": [1]}, g, p, -1, 1),
             ({"a": [1]}, g, p, 10.0, 1), ({"a": [1]}, {1: -1}, p, 10, 1),
             ({"a": [1]}, {1: True}, p, 10, 1), ({1: [1]}, g, p, 10, 1),
             ({"a": [0]}, g, p, 10, 1), ({"a": 1}, g, p, 10, 1), ([("a", [1])], g, p, 10, 1),
             ({"a": [1]}, [1], p, 10, 1)]
    for args in cases:
        with pytest.raises(ValueError):
            eo.capture_ledger(*args)


# ================================================================== multi-LoRA
ADAPTER_LISTS = st.lists(st.sampled_from(["a", "b", "c", "d", "e", None]), max_size=14)


@pytest.mark.rubric("lora_batches")
@given(ADAPTER_LISTS, st.integers(1, 5))
@example(["a", "b", None, "a", "c", "b", "d"], 2)
@example(["a", "b", "a", "c", "b"], 1)
@example([None, "a", None], 1)
def test_lora_sub_batches_match_first_appearance_groups(adapters, max_loras):
    """Rule: Sub-batches"""
    want = oracle.lora_steps(adapters, max_loras)
    got = eo.lora_sub_batches(list(adapters), max_loras)
    assert got == want, (
        f"lora_sub_batches({adapters}, {max_loras}): step k serves the adapters that appear "
        f"k x max_loras .. (k + 1) x max_loras - 1 first, base requests in the first step; "
        f"want {want}, got {got}")


@pytest.mark.rubric("lora_batches")
@given(ADAPTER_LISTS, st.integers(1, 5), st.data())
def test_lora_step_cost_matches_the_model(adapters, max_loras, data):
    """Rule: Step cost"""
    tokens = data.draw(st.lists(st.integers(1, 600), min_size=len(adapters),
                                max_size=len(adapters)), label="tokens")
    base, per_adapter, per_token = data.draw(st.tuples(st.integers(0, 10**4),
                                                       st.integers(0, 10**3),
                                                       st.integers(0, 50)), label="costs")
    want = oracle.lora_cost(adapters, tokens, max_loras, base, per_adapter, per_token)
    got = eo.lora_step_cost(list(adapters), tokens, max_loras, base, per_adapter, per_token)
    assert got == want, (
        f"lora_step_cost({adapters}, {tokens}, {max_loras}, {base}, {per_adapter}, "
        f"{per_token}): want {want}, got {got}")


@pytest.mark.rubric("lora_batches")
def test_lora_step_cost_counts_distinct_adapters_not_requests():
    """Rule: Step cost"""
    assert eo.lora_step_cost(["x"] * 5 + ["y"] * 5, [1] * 10, 2, 100, 10, 0) == 100 + 2 * 10
    assert eo.lora_step_cost([None] * 3, [4, 4, 4], 1, 7, 1000, 1000) == 7
    assert eo.lora_step_cost([], [], 3, 7, 1, 1) == 0


@pytest.mark.rubric("lora_batches")
def test_lora_batches_bad_input():
    """Rule: Bad input"""
    for args in [(["a", 1], 1), (["a", b"b"], 1), ("ab", 1), (None, 1)]:
        with pytest.raises(ValueError):
            eo.lora_sub_batches(*args)
    for bad in NOT_INTS + [0, -1]:
        with pytest.raises(ValueError):
            eo.lora_sub_batches(["a"], bad)
    ok = (["a", None], [1, 2], 1, 1, 1, 1)
    for i, bad in [(1, [1]), (1, [1, 0]), (1, None), (1, "12"), (1, [1, True]), (1, [1, 2.0]), (3, -1), (4, -1),
                   (5, -1), (3, 1.0), (2, 0), (5, True)]:
        args = list(ok)
        args[i] = bad
        with pytest.raises(ValueError):
            eo.lora_step_cost(*args)


@st.composite
def lora_cases(draw):
    name = draw(st.sampled_from(DENSE))
    targets = draw(st.lists(st.sampled_from(MODULES), min_size=1, max_size=7, unique=True))
    max_rank = draw(st.sampled_from([1, 8, 16, 32, 64, 128, 256, 320, 512]))
    ranks = draw(st.lists(st.integers(1, max_rank), max_size=6))
    return name, draw(st.sampled_from([1, 2, 4])), ranks, targets, draw(st.integers(1, 16)), \
        max_rank


@pytest.mark.rubric("lora_memory")
@given(lora_cases())
def test_lora_memory_matches_the_shapes(case):
    """Rule: Adapter memory"""
    name, dbytes, ranks, targets, slots, max_rank = case
    cfg = config(name)
    want = oracle.lora_memory(cfg, dbytes, ranks, targets, slots, max_rank)
    got = eo.lora_memory(cfg, dbytes, ranks, targets, slots, max_rank)
    assert got == want, (
        f"lora_memory({name}, {dbytes}, {ranks}, {targets}, max_loras={slots}, "
        f"max_lora_rank={max_rank}): want {want}, got {got}")


@pytest.mark.rubric("lora_memory")
def test_lora_memory_head_dim_and_kv_heads_from_the_config():
    """Rule: Adapter memory"""
    cfg = {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 3,
           "num_attention_heads": 4, "num_key_value_heads": None, "head_dim": 32}
    per_rank = 3 * ((64 + 128) * 2 + (64 + 128) + (128 + 64) + 2 * (64 + 96) + (96 + 64))
    got = eo.lora_memory(cfg, 1, [2], list(MODULES), 1, 4)
    assert got["adapter_bytes"] == [2 * per_rank], (
        "head_dim 32 given (q d = 128 > hidden 64); null num_key_value_heads means q heads")
    assert got["slot_bytes"] == 4 * per_rank
    del cfg["head_dim"], cfg["num_key_value_heads"]
    per_rank = 3 * ((64 + 64) * 4 + 3 * (64 + 96))
    assert eo.lora_memory(cfg, 1, [1], list(MODULES), 1, 1)["adapter_bytes"] == [per_rank], (
        "absent head_dim: hidden // heads = 16; absent kv heads: 4")
    assert eo.lora_memory(cfg, 1, [], ["o_proj"], 3, 2)["gpu_bytes"] == 3 * 2 * per_rank


@pytest.mark.rubric("lora_memory")
def test_lora_memory_refuses():
    """Rules: Adapter memory; Bad input"""
    cfg = config(LLAMA8)
    for name in MOE:
        with pytest.raises(ValueError):
            eo.lora_memory(config(name), 2, [8], ["q_proj"], 1, 16)
    for args in [(2, [17], ["q_proj"], 1, 16), (2, [16], [], 1, 16), (2, [16], ["qkv_proj"], 1, 16),
                 (2, [16], ["up_proj", "up_proj"], 1, 16), (0, [16], ["q_proj"], 1, 16),
                 (2, [0], ["q_proj"], 1, 16), (2, [16], ["q_proj"], 0, 16),
                 (2, [16], ["q_proj"], 1, 0), (2.0, [16], ["q_proj"], 1, 16),
                 (2, [True], ["q_proj"], 1, 16), (2, 16, ["q_proj"], 1, 16),
                 (2, [16], "q_proj", 1, 16), (True, [16], ["q_proj"], 1, 16)]:
        with pytest.raises(ValueError):
            eo.lora_memory(cfg, *args)
    for bad_cfg in [None, [("hidden_size", 4096)], "llama"]:
        with pytest.raises(ValueError):
            eo.lora_memory(bad_cfg, 2, [16], ["q_proj"], 1, 16)
    broken = dict(cfg)
    del broken["intermediate_size"]
    with pytest.raises(ValueError):
        eo.lora_memory(broken, 2, [16], ["q_proj"], 1, 16)


# ================================================================== multimodal
@st.composite
def mm_cases(draw):
    patch = draw(st.sampled_from([1, 2, 3, 14, 16]))
    merge = draw(st.sampled_from([1, 2, 3]))
    window = patch * merge

    def side():
        k = draw(st.integers(1, 12))
        return draw(st.sampled_from([k * window, k * window + 1, max(1, k * window - 1),
                                     draw(st.integers(1, 40 * window))]))

    images = [(side(), side()) for _ in range(draw(st.integers(0, 4)))]
    text = draw(st.integers(0 if images else 1, 500))
    new = draw(st.integers(0, 2000))
    page = draw(st.sampled_from([1, 2, 16, 64, 7]))
    kv, emb, enc = (draw(st.integers(0, 10**6)) for _ in range(3))
    return images, patch, merge, text, new, kv, page, emb, enc


@pytest.mark.rubric("mm_ledger")
@given(mm_cases())
@example(([(1024, 768)], 14, 2, 200, 512, 131_072, 16, 7_168, 100_000))
@example(([(280, 280), (28, 28)], 14, 2, 0, 0, 1, 1, 10, 0))
@example(([(28, 28), (280, 280)], 14, 2, 0, 0, 0, 1, 1000, 1))
def test_mm_ledger_matches_the_model(case):
    """Rules: Image tokens; KV; Phases"""
    want = oracle.mm(*case)
    got = eo.mm_ledger(*case)
    assert got == want, f"mm_ledger{case}: want {want}, got {got}"


@pytest.mark.rubric("mm_ledger")
def test_mm_ledger_image_tokens_pad_up_to_whole_windows():
    """Rule: Image tokens"""
    got = eo.mm_ledger([(28, 28), (29, 28), (56, 57), (1, 1)], 14, 2, 0, 0, 0, 1, 0, 0)
    assert got["image_tokens"] == [1, 2, 6, 1], (
        f"ceil(side / 28) windows per side, one token per window: {got['image_tokens']}")
    got = eo.mm_ledger([(30, 30)], 10, 3, 0, 0, 0, 1, 0, 1)
    assert got["image_tokens"] == [1] and got["encode_bytes"] == 9, (
        "a 30-pixel side is one 3 x 3 window of 10-pixel patches: 9 patches, one token")


@pytest.mark.rubric("mm_ledger")
def test_mm_ledger_encode_peak_can_be_an_early_image():
    """Rule: Phases"""
    got = eo.mm_ledger([(280, 280), (28, 28)], 14, 2, 0, 0, 0, 1, 0, 5)
    assert got["encode_bytes"] == 400 * 5, "the first, larger image sets the encode peak"
    got = eo.mm_ledger([(28, 28), (28, 28)], 14, 2, 0, 0, 0, 1, 10, 1)
    assert got["encode_bytes"] == 10 + 4, (
        "encoding the second image holds the first one's embedding (10) and 4 patches")
    assert got["prefill_bytes"] == 20 and got["decode_bytes"] == 0
    assert got["peak_phase"] == "prefill"


@pytest.mark.rubric("mm_ledger")
def test_mm_ledger_bad_input():
    """Rule: Bad input"""
    ok = [[(28, 28)], 14, 2, 1, 1, 1, 1, 1, 1]
    for i, bad in [(0, [(28,)]), (0, [(28, 28, 3)]), (0, [(0, 28)]), (0, [(28.0, 28)]),
                   (0, "img"), (0, [28]), (1, 0), (2, 0), (3, -1), (4, -1), (5, -1), (6, 0),
                   (7, -1), (8, -1), (1, True), (6, 1.0), (5, float("nan"))]:
        args = list(ok)
        args[i] = bad
        with pytest.raises(ValueError):
            eo.mm_ledger(*args)
    with pytest.raises(ValueError):
        eo.mm_ledger([], 14, 2, 0, 10, 1, 1, 1, 1)
