"""Public tests for moe_dispatch: the prompt's numbers and examples, and the basic rules."""

from __future__ import annotations

import pytest

from graders.impl import kata_impl
from tests.moe_dispatch.helpers import block_placement, config, exact_times

m = kata_impl("moe_dispatch")

EXAMPLE_ROUTE = [1, 5, 40, 41, 44, 70, 72, 100]     # GPUs 0, 1, 10, 10, 11, 17, 18, 25


def close(got, want, what):
    assert isinstance(got, (int, float)) and not isinstance(got, bool), \
        f"{what}: expected a number, got {got!r}"
    assert got == pytest.approx(float(want), rel=1e-9), \
        f"{what}: expected {float(want)!r}, got {got!r}"


# ------------------------------------------------------------------ bytes per token
@pytest.mark.rubric("token_bytes")
def test_deepseek_v3_bytes_per_token():
    """Rules: MoE layers; FP8 dispatch; BF16 combine; Per token per step"""
    cfg = config()
    assert m.moe_layers(cfg) == 58, "61 layers, the first 3 dense"
    assert m.dispatch_bytes_per_copy(cfg) == 7168 + 56 * 4, "FP8 values plus 56 FP32 scales"
    assert m.combine_bytes_per_copy(cfg) == 2 * 7168, "BF16 values"
    assert m.token_step_bytes(cfg) == 10_081_792, \
        "58 layers x 8 routed copies x (7392 + 14336)"


@pytest.mark.rubric("token_bytes")
def test_node_limit_bounds_the_nic_copies():
    """Rules: Node-limited routing; The shared expert sends nothing"""
    cfg = config()
    assert m.max_nic_copies(cfg, True) == 4, "one copy per node, at most topk_group = 4 nodes"
    assert m.max_nic_copies(cfg, False) == 8, \
        "one copy per routed expert; the shared one stays home"


@pytest.mark.rubric("token_bytes")
def test_config_errors():
    """Rule: Bad input"""
    cfg = config()
    del cfg["first_k_dense_replace"]
    with pytest.raises(ValueError):
        m.moe_layers(cfg)
    cfg = config()
    cfg["moe_layer_freq"] = 2
    with pytest.raises(ValueError):
        m.token_step_bytes(cfg)
    with pytest.raises(ValueError):
        m.max_nic_copies(config(), 1)        # a bool, not an int


# ------------------------------------------------------------------ copies on the links
@pytest.mark.rubric("link_split")
def test_the_prompt_example():
    """Rules: Placement; Three schemes"""
    gpu = block_placement()
    assert m.link_copies([EXAMPLE_ROUTE], [0], gpu, 8, "per_expert") == (1, 6)
    assert m.link_copies([EXAMPLE_ROUTE], [0], gpu, 8, "per_gpu") == (1, 5), \
        "experts 40 and 41 share GPU 10: one copy"
    assert m.link_copies([EXAMPLE_ROUTE], [0], gpu, 8, "per_node") == (6, 3), \
        "3 remote nodes: 3 NIC copies to GPUs 8, 16, 24, then 5 forwards plus GPU 1 over NVLink"


@pytest.mark.rubric("link_split")
def test_layer_traffic_in_bytes():
    """Rules: The combine mirrors the dispatch; FP8 dispatch; BF16 combine"""
    got = m.layer_traffic(config(), [EXAMPLE_ROUTE], [0], block_placement(), 8, "per_node")
    assert got == {"dispatch_nvlink": 6 * 7392, "dispatch_nic": 3 * 7392,
                   "combine_nvlink": 6 * 14336, "combine_nic": 3 * 14336}


@pytest.mark.rubric("link_split")
def test_local_experts_are_free():
    """Rules: Placement; Three schemes"""
    gpu = block_placement()
    for mode in ("per_expert", "per_gpu", "per_node"):
        assert m.link_copies([[0, 1, 2, 3]], [0], gpu, 8, mode) == (0, 0), \
            f"{mode}: all four experts live on the home GPU"
    # the forwarder is itself a target: it gets the NIC copy and no NVLink copy
    assert m.link_copies([[32]], [0], gpu, 8, "per_node") == (0, 1)
    assert m.link_copies([[32, 36]], [0], gpu, 8, "per_node") == (1, 1)
    assert m.link_copies([], [], gpu, 8, "per_gpu") == (0, 0)


@pytest.mark.rubric("link_split")
def test_routing_errors():
    """Rule: Bad input"""
    gpu = block_placement()
    for args in [([[1, 1]], [0], gpu, 8, "per_gpu"), ([[256]], [0], gpu, 8, "per_gpu"),
                 ([[1]], [0, 1], gpu, 8, "per_gpu"), ([[1]], [0], gpu, 0, "per_gpu"),
                 ([[1]], [0], gpu, 8, "per_rank"), ([[1]], [-1], gpu, 8, "per_gpu"),
                 ([[True]], [0], gpu, 8, "per_gpu")]:
        with pytest.raises(ValueError):
            m.link_copies(*args)
    with pytest.raises(ValueError):
        m.layer_traffic(config(), [[1, 2, 3]], [0], gpu, 8, "per_gpu")   # not 8 experts


# ------------------------------------------------------------------ two-batch overlap
@pytest.mark.rubric("overlap")
def test_one_and_two_batches():
    """Rules: Per micro-batch costs; One batch; Two micro-batches"""
    one, two = m.tbo_step_ns(64, 58, 20_000, 200, 30_000, 173_824, 50)
    want_one, want_two = exact_times(64, 58, 20_000, 200, 30_000, 173_824, 50)
    close(one, want_one, "one batch: 58 x (compute + comm)")
    close(two, want_two, "two micro-batches of 32")
    c, mm = 20_000 + 200 * 32, 30_000 + 32 * 173_824 / 50
    close(two, 2 * 58 * max(c, mm) + min(c, mm), "equal halves: 2 L max(C, M) + min(C, M)")


@pytest.mark.rubric("overlap")
def test_odd_batch_splits_smaller_half_first():
    """Rule: Two micro-batches"""
    for batch in (1, 3, 7):
        _, two = m.tbo_step_ns(batch, 3, 10, 5, 7, 9, 1)
        close(two, exact_times(batch, 3, 10, 5, 7, 9, 1)[1], f"batch {batch}: A = {batch // 2}")


@pytest.mark.rubric("overlap")
def test_smallest_batch_that_pays():
    """Rules: When splitting pays; A tie does not pay"""
    assert m.tbo_min_batch(58, 20_000, 200, 30_000, 173_824, 50, 64) == 53
    # no fixed costs: batch 1 ties (an empty micro-batch costs nothing), batch 2 pays
    assert m.tbo_min_batch(4, 0, 10, 0, 10, 1, 16) == 2
    # one layer, compute 4 + 10 n, comm 4 n: batches 2 and 3 tie exactly (32 and 46 ns)
    assert exact_times(2, 1, 4, 10, 0, 4, 1) == (32, 32)
    assert exact_times(3, 1, 4, 10, 0, 4, 1) == (46, 46)
    assert m.tbo_min_batch(1, 4, 10, 0, 4, 1, 8) == 4, "a tie does not pay: 4 is the first win"
    assert m.tbo_min_batch(1, 10, 0, 10, 0, 1, 8) is None, "fixed costs only: never pays"


@pytest.mark.rubric("overlap")
def test_overlap_errors():
    """Rule: Bad input"""
    for args in [(0, 58, 1, 1, 1, 1, 1), (4, 58, 1.5, 1, 1, 1, 1), (4, 58, 1, -1, 1, 1, 1),
                 (4, True, 1, 1, 1, 1, 1), (4, 58, 1, 1, 1, 1, 0)]:
        with pytest.raises(ValueError):
            m.tbo_step_ns(*args)
    with pytest.raises(ValueError):
        m.tbo_min_batch(58, 1, 1, 1, 1, 1, 0)
