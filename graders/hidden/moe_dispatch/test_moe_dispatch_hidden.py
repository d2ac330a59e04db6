"""Hidden tests for moe_dispatch: the byte rules on synthetic and shipped configs, the copy
counts against a link-by-link brute force (tests/moe_dispatch/helpers.py), and the overlap
schedule against its dependency graph in exact rationals, on inputs built to hit the traps:
hidden sizes that are not multiples of 128, experts on the home GPU, two experts on one GPU,
forwarders that are targets, one GPU per node, empty micro-batches, exact ties."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graders.impl import kata_impl
from tests.moe_dispatch.helpers import (KEYS, MODES, block_placement, config, count_copies,
                                        exact_times, true_min_batch)

m = kata_impl("moe_dispatch")


def close(got, want, what):
    assert isinstance(got, (int, float)) and not isinstance(got, bool), \
        f"{what}: expected a number, got {got!r}"
    assert got == pytest.approx(float(want), rel=1e-9, abs=1e-9), \
        f"{what}: expected {float(want)!r}, got {got!r}"


# =====================================================================================
# token_bytes
# =====================================================================================
@st.composite
def moe_configs(draw):
    layers = draw(st.integers(1, 128))
    experts = draw(st.integers(1, 1024))
    groups = draw(st.integers(1, 16))
    return {"hidden_size": draw(st.one_of(st.sampled_from([1, 100, 127, 128, 129, 255, 256,
                                                           2048, 4096, 7168, 7169]),
                                          st.integers(1, 20000))),
            "num_hidden_layers": layers,
            "first_k_dense_replace": draw(st.integers(0, layers)),
            "moe_layer_freq": 1,
            "n_routed_experts": experts,
            "num_experts_per_tok": draw(st.integers(1, min(experts, 16))),
            "n_group": groups,
            "topk_group": draw(st.integers(1, groups))}


@pytest.mark.rubric("token_bytes")
@given(cfg=moe_configs())
def test_bytes_follow_the_rules(cfg):
    """Rules: MoE layers; FP8 dispatch; BF16 combine; Per token per step; Node-limited routing"""
    h = cfg["hidden_size"]
    layers = cfg["num_hidden_layers"] - cfg["first_k_dense_replace"]
    d, c = h + 4 * math.ceil(h / 128), 2 * h
    k = cfg["num_experts_per_tok"]
    assert m.moe_layers(cfg) == layers
    assert m.dispatch_bytes_per_copy(cfg) == d, \
        f"hidden {h}: {h} FP8 bytes + 4 per started block of 128 = {d}"
    assert m.combine_bytes_per_copy(cfg) == c
    assert m.token_step_bytes(cfg) == layers * k * (d + c), f"{cfg}"
    assert m.max_nic_copies(cfg, True) == min(k, cfg["topk_group"])
    assert m.max_nic_copies(cfg, False) == k


@pytest.mark.rubric("token_bytes")
@pytest.mark.parametrize("hidden,want", [(129, 129 + 8), (100, 104), (128, 132), (1, 5),
                                         (7168, 7392), (7169, 7169 + 57 * 4)])
def test_partial_scale_blocks(hidden, want):
    """Rule: FP8 dispatch"""
    cfg = config()
    cfg["hidden_size"] = hidden
    assert m.dispatch_bytes_per_copy(cfg) == want, f"hidden {hidden}: the last block is partial"


@pytest.mark.rubric("token_bytes")
def test_deepseek_v2_lite_as_shipped_lacks_group_fields():
    """Rule: Bad input"""
    cfg = config("deepseek-ai--DeepSeek-V2-Lite")      # no moe_layer_freq, n_group, topk_group
    for fn in (m.moe_layers, m.dispatch_bytes_per_copy, m.token_step_bytes):
        with pytest.raises(ValueError):
            fn(cfg)
    cfg.update(moe_layer_freq=1, n_group=1, topk_group=1)
    assert m.moe_layers(cfg) == 26
    assert m.token_step_bytes(cfg) == 26 * 6 * (2048 + 4 * 16 + 2 * 2048)
    assert m.max_nic_copies(cfg, True) == 1, "one group: all of a token's experts on one node"


@pytest.mark.rubric("token_bytes")
def test_the_shared_expert_sends_nothing():
    """Rules: The shared expert sends nothing; Per token per step"""
    cfg = config()
    base = m.token_step_bytes(cfg)
    cfg["n_shared_experts"] = 4
    assert m.token_step_bytes(cfg) == base, "shared experts run on the home GPU"
    assert base == 58 * 8 * (7392 + 14336), "8 routed copies, not 9"


BAD_VALUES = [None, -1, 0, True, 1.0, "8"]


@pytest.mark.rubric("token_bytes")
@pytest.mark.parametrize("key", ["hidden_size", "num_hidden_layers", "first_k_dense_replace",
                                 "moe_layer_freq", "n_routed_experts", "num_experts_per_tok",
                                 "n_group", "topk_group"])
def test_bad_config_fields(key):
    """Rule: Bad input"""
    for bad in BAD_VALUES + ["missing"]:
        if key == "first_k_dense_replace" and bad == 0:
            continue
        cfg = config()
        if bad == "missing":
            del cfg[key]
        else:
            cfg[key] = bad
        for fn in (m.moe_layers, m.dispatch_bytes_per_copy, m.combine_bytes_per_copy,
                   m.token_step_bytes):
            with pytest.raises(ValueError):
                fn(cfg)
        with pytest.raises(ValueError):
            m.max_nic_copies(cfg, True)


@pytest.mark.rubric("token_bytes")
def test_inconsistent_configs():
    """Rule: Bad input"""
    for change in ({"first_k_dense_replace": 62}, {"moe_layer_freq": 2},
                   {"num_experts_per_tok": 257}, {"topk_group": 9}):
        cfg = config()
        cfg.update(change)
        with pytest.raises(ValueError):
            m.token_step_bytes(cfg)
    for bad in (None, [], "cfg"):
        with pytest.raises(ValueError):
            m.moe_layers(bad)
    for bad in (1, 0, None, "yes"):
        with pytest.raises(ValueError):
            m.max_nic_copies(config(), bad)


# =====================================================================================
# link_split
# =====================================================================================
@st.composite
def clusters(draw, max_tokens=12):
    """A few nodes, few experts and few tokens, so that experts share GPUs, land on the home
    GPU and on forwarders, and tokens share nodes."""
    per_node = draw(st.sampled_from([1, 2, 3, 4, 8]))
    n_gpus = per_node * draw(st.integers(1, 4))
    experts = draw(st.integers(1, 16))
    rnd = random.Random(draw(st.integers(0, 2**32)))
    expert_gpu = [rnd.randrange(n_gpus) for _ in range(experts)]
    tokens = draw(st.integers(0, max_tokens))
    routes = [rnd.sample(range(experts), rnd.randint(0, experts)) for _ in range(tokens)]
    homes = [rnd.randrange(n_gpus) for _ in range(tokens)]
    return routes, homes, expert_gpu, per_node


@pytest.mark.rubric("link_split")
@given(case=clusters(), mode=st.sampled_from(MODES))
def test_copies_against_brute_force(case, mode):
    """Rules: Placement; Three schemes"""
    routes, homes, expert_gpu, per_node = case
    got = m.link_copies(routes, homes, expert_gpu, per_node, mode)
    want = count_copies(routes, homes, expert_gpu, per_node, mode)
    assert tuple(got) == want, (
        f"{mode}: routes={routes} homes={homes} expert_gpu={expert_gpu} "
        f"gpus_per_node={per_node}: want (nvlink, nic) = {want}, got {got!r}")


@pytest.mark.rubric("link_split")
@given(case=clusters())
def test_deduplication_only_removes_nic_copies(case):
    """Rules: Three schemes; Node-limited routing"""
    routes, homes, expert_gpu, per_node = case
    _, nic_expert = m.link_copies(routes, homes, expert_gpu, per_node, "per_expert")
    _, nic_gpu = m.link_copies(routes, homes, expert_gpu, per_node, "per_gpu")
    _, nic_node = m.link_copies(routes, homes, expert_gpu, per_node, "per_node")
    assert nic_node <= nic_gpu <= nic_expert
    remote_nodes = sum(len({expert_gpu[e] // per_node for e in r} - {h // per_node})
                       for r, h in zip(routes, homes))
    assert nic_node == remote_nodes, "per_node: one NIC copy per remote node a token touches"


@pytest.mark.rubric("link_split")
@given(case=clusters())
def test_one_gpu_per_node(case):
    """Rules: Placement; Three schemes"""
    routes, homes, expert_gpu, _ = case
    gpu = m.link_copies(routes, homes, expert_gpu, 1, "per_gpu")
    node = m.link_copies(routes, homes, expert_gpu, 1, "per_node")
    assert tuple(gpu) == tuple(node) == (0, gpu[1]), \
        "with one GPU per node every copy leaves the node and there is nothing to forward"


@st.composite
def v3_routings(draw):
    """DeepSeek-V3 on 64 GPUs (expert e on GPU e // 4), node-limited or not."""
    rnd = random.Random(draw(st.integers(0, 2**32)))
    tokens = draw(st.integers(0, 16))
    routes, homes = [], []
    for _ in range(tokens):
        if rnd.random() < 0.5:
            groups = rnd.sample(range(8), rnd.randint(1, 4))
            pool = [e for g in groups for e in range(32 * g, 32 * g + 32)]
            routes.append(rnd.sample(pool, 8))
        else:
            routes.append(rnd.sample(range(256), 8))
        homes.append(rnd.randrange(64))
    return routes, homes


@pytest.mark.rubric("link_split")
@given(case=v3_routings(), mode=st.sampled_from(MODES))
def test_layer_traffic_on_deepseek_v3(case, mode):
    """Rules: The combine mirrors the dispatch; FP8 dispatch; BF16 combine; Three schemes"""
    routes, homes = case
    gpu = block_placement()
    got = m.layer_traffic(config(), routes, homes, gpu, 8, mode)
    nvlink, nic = count_copies(routes, homes, gpu, 8, mode)
    want = {"dispatch_nvlink": nvlink * 7392, "dispatch_nic": nic * 7392,
            "combine_nvlink": nvlink * 14336, "combine_nic": nic * 14336}
    assert isinstance(got, dict) and set(got) == set(KEYS), f"keys {KEYS}, got {got!r}"
    assert {k: got[k] for k in KEYS} == want, f"{mode}: routes={routes} homes={homes}"


@pytest.mark.rubric("link_split")
def test_node_limited_tokens_cross_at_most_four_nics():
    """Rules: Node-limited routing; Three schemes"""
    gpu = block_placement()
    route = [3, 35, 67, 99, 100, 104, 108, 112]           # 4 nodes: 0 (GPU 0), 1, 2, 3
    assert m.link_copies([route], [63], gpu, 8, "per_node") == (8, 4), \
        "home on node 7: 4 NIC copies to GPUs 7, 15, 23, 31, then 8 NVLink forwards"
    assert m.link_copies([route], [63], gpu, 8, "per_gpu") == (0, 8)
    assert m.link_copies([route], [0], gpu, 8, "per_node") == (4, 3), \
        "home GPU 0 holds expert 3; the forwarders GPUs 8, 16 and 24 are targets themselves"


@pytest.mark.rubric("link_split")
def test_two_experts_on_one_gpu():
    """Rule: Three schemes"""
    gpu = block_placement()
    assert m.link_copies([[4, 5, 6, 7]], [0], gpu, 8, "per_expert") == (4, 0)
    assert m.link_copies([[4, 5, 6, 7]], [0], gpu, 8, "per_gpu") == (1, 0)
    assert m.link_copies([[36, 37, 38]], [0], gpu, 8, "per_node") == (1, 1)
    assert m.link_copies([[32, 33, 36]], [0], gpu, 8, "per_node") == (1, 1)


@pytest.mark.rubric("link_split")
def test_tuples_are_lists():
    """Rule: Bad input"""
    gpu = tuple(block_placement())
    assert tuple(m.link_copies(((1, 40),), (0,), gpu, 8, "per_gpu")) == (0, 1)


@pytest.mark.rubric("link_split")
def test_bad_routing_input():
    """Rule: Bad input"""
    gpu = block_placement()
    bad = [
        ("x", [0], gpu, 8, "per_gpu"), ([[1]], "0", gpu, 8, "per_gpu"),
        ([[1]], [0], "gpu", 8, "per_gpu"), ([[1]], [0], [0, -1] + gpu[2:], 8, "per_gpu"),
        ([[1]], [0], [0, 1.0] + gpu[2:], 8, "per_gpu"), ([[1]], [0], gpu, True, "per_gpu"),
        ([[1]], [0], gpu, -8, "per_gpu"), ([[1]], [0], gpu, 8.0, "per_gpu"),
        ([[1]], [0], gpu, 8, "PER_GPU"), ([[1]], [0], gpu, 8, None),
        ([1], [0], gpu, 8, "per_gpu"), ([[1.0]], [0], gpu, 8, "per_gpu"),
        ([[-1]], [0], gpu, 8, "per_gpu"), ([[2, 3, 2]], [0], gpu, 8, "per_node"),
        ([[1]], [True], gpu, 8, "per_gpu"), ([[1]], [None], gpu, 8, "per_gpu"),
        ([[1], [2]], [0], gpu, 8, "per_gpu"), ([[300]], [0], gpu, 8, "per_expert"),
    ]
    for args in bad:
        with pytest.raises(ValueError):
            m.link_copies(*args)
    cfg = config()
    with pytest.raises(ValueError):
        m.layer_traffic(cfg, [list(range(8))], [0], gpu[:255], 8, "per_gpu")
    with pytest.raises(ValueError):
        m.layer_traffic(cfg, [list(range(9))], [0], gpu, 8, "per_gpu")
    with pytest.raises(ValueError):
        m.layer_traffic(cfg, [list(range(8)), [1]], [0, 0], gpu, 8, "per_gpu")
    with pytest.raises(ValueError):
        m.layer_traffic(cfg, [list(range(8))], [0], gpu, 8, "per_rack")


# =====================================================================================
# overlap
# =====================================================================================
small = st.integers(0, 12)


@pytest.mark.rubric("overlap")
@given(batch=st.integers(1, 12), layers=st.integers(1, 6), c0=small, c1=small, m0=small,
       mb=small, link=st.integers(1, 4))
def test_schedule_against_its_graph(batch, layers, c0, c1, m0, mb, link):
    """Rules: Per micro-batch costs; One batch; Two micro-batches"""
    one, two = m.tbo_step_ns(batch, layers, c0, c1, m0, mb, link)
    want_one, want_two = exact_times(batch, layers, c0, c1, m0, mb, link)
    args = (batch, layers, c0, c1, m0, mb, link)
    close(one, want_one, f"one batch, tbo_step_ns{args}")
    close(two, want_two, f"two micro-batches of {batch // 2} and {batch - batch // 2}, "
                         f"tbo_step_ns{args}")


@pytest.mark.rubric("overlap")
@given(half=st.integers(1, 512), layers=st.integers(1, 256), c0=st.integers(0, 10**5),
       c1=st.integers(0, 10**4), m0=st.integers(0, 10**5), mb=st.integers(0, 10**6),
       link=st.integers(1, 900))
@settings(max_examples=min(40, settings.default.max_examples))
def test_equal_halves_closed_form(half, layers, c0, c1, m0, mb, link):
    """Rules: Two micro-batches; One batch"""
    c = Fraction(c0 + c1 * half)
    mm = m0 + Fraction(half * mb, link)
    one, two = m.tbo_step_ns(2 * half, layers, c0, c1, m0, mb, link)
    close(two, 2 * layers * max(c, mm) + min(c, mm), "2 L max(C, M) + min(C, M)")
    close(one, layers * (2 * c - c0 + 2 * mm - m0), "L (compute(B) + comm(B))")


@pytest.mark.rubric("overlap")
def test_empty_micro_batch_costs_its_fixed_part():
    """Rules: Per micro-batch costs; Two micro-batches"""
    one, two = m.tbo_step_ns(1, 2, 100, 10, 50, 30, 1)
    assert one == pytest.approx(2 * (110 + 80))
    close(two, exact_times(1, 2, 100, 10, 50, 30, 1)[1], "A is empty but still pays 100 + 50")
    assert two > one, "at batch 1 the split only adds fixed costs"


@pytest.mark.rubric("overlap")
@given(layers=st.integers(1, 4), c0=small, c1=small, m0=small, mb=small,
       link=st.integers(1, 3), top=st.integers(1, 20))
@settings(max_examples=min(60, settings.default.max_examples))
def test_min_batch_against_the_definition(layers, c0, c1, m0, mb, link, top):
    """Rules: When splitting pays; A tie does not pay"""
    got = m.tbo_min_batch(layers, c0, c1, m0, mb, link, top)
    want = true_min_batch(layers, c0, c1, m0, mb, link, top)
    args = (layers, c0, c1, m0, mb, link, top)
    assert got == want, f"tbo_min_batch{args}: want {want}, got {got!r}"


# (layers, c0, c1, m0, m_bytes, link, max_batch): each has an exact tie at the batch just
# below the answer, with times that are not integers
TIES = [(1, 4, 10, 0, 4, 1, 8), (1, 2, 3, 0, 2, 3, 12), (2, 6, 1, 1, 10, 3, 16),
        (3, 1, 0, 1, 1, 3, 10), (1, 1, 2, 0, 1, 3, 10), (1, 0, 1, 1, 1, 3, 12),
        (1, 1, 1, 1, 1, 3, 12), (1, 0, 1, 2, 1, 3, 12), (2, 1, 3, 0, 2, 7, 12)]


@pytest.mark.rubric("overlap")
@pytest.mark.parametrize("case", TIES)
def test_min_batch_on_exact_ties(case):
    """Rules: A tie does not pay; When splitting pays"""
    want = true_min_batch(*case)
    got = m.tbo_min_batch(*case)
    assert got == want, f"tbo_min_batch{case}: want {want}, got {got!r}"


@pytest.mark.rubric("overlap")
def test_min_batch_at_scale():
    """Rule: When splitting pays"""
    args = (58, 20_000, 200, 30_000, 173_824, 50)
    got = m.tbo_min_batch(*args, 96)
    assert got == 53
    for b in (52, 53):
        one, two = exact_times(b, *args)
        assert (two < one) == (b == 53)
    assert m.tbo_min_batch(*args, 53) == 53
    assert m.tbo_min_batch(*args, 52) is None, "does not pay at max_batch"
    assert m.tbo_min_batch(256, 0, 1, 0, 1, 1, 24) == 2


@pytest.mark.rubric("overlap")
def test_overlap_bad_input():
    """Rule: Bad input"""
    good = [4, 3, 1, 1, 1, 1, 1]
    for i in range(7):
        for bad in [None, True, 1.0, "1", -1, float("nan")]:
            args = list(good)
            args[i] = bad
            with pytest.raises(ValueError):
                m.tbo_step_ns(*args)
        if i in (0, 1, 6):
            args = list(good)
            args[i] = 0
            with pytest.raises(ValueError):
                m.tbo_step_ns(*args)
    good_min = [3, 1, 1, 1, 1, 1, 8]
    for i in range(7):
        for bad in [None, True, 2.0, -1]:
            args = list(good_min)
            args[i] = bad
            with pytest.raises(ValueError):
                m.tbo_min_batch(*args)
    for i in (0, 5, 6):
        args = list(good_min)
        args[i] = 0
        with pytest.raises(ValueError):
            m.tbo_min_batch(*args)
