"""Hidden tests for fair_share: exact weights, the request-fair share, the unfairness bound
on adversarial backlogs, work conservation with costly requests, and no banking as a
metamorphic property (a tenant that returns from idle is served exactly as a new tenant)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graders.hidden.fair_share.model import DRR, Fairness, is_dense, weights
from graders.impl import kata_impl
from tests.fair_share.helpers import (H100_SXM, LLAMA8, SEED_BATCH, SEED_CTX, SEED_REQUESTS,
                                      close, config, drain, gpu, gpu_ids, model_names)

fs_mod = kata_impl("fair_share")

DENSE = [n for n in model_names() if is_dense(config(n))]
OTHER = [n for n in model_names() if not is_dense(config(n))]
# (batch, ctx_len, weight_bytes, kv_bytes): memory-bound, long context, compute-bound, fp8,
# no KV counted, weights not counted.
POINTS = [(1, 0, 2, 2), (64, 2048, 2, 2), (8, 32768, 2, 2), (2048, 0, 2, 2),
          (512, 128, 1, 1), (32, 4096, 2, 0), (16, 1000, 0, 2), (3, 7, 0.5, 1)]


# -- weights -----------------------------------------------------------------------------

@pytest.mark.rubric("weights")
@pytest.mark.parametrize("name", DENSE)
def test_weights_every_dense_model(name: str) -> None:
    """Rules: Model fields; Datasheet units; Prefill weight; Decode weight"""
    cfg = config(name)
    for gpu_id, point, dtype in itertools.product(gpu_ids(), POINTS, ("bf16", "fp8")):
        g = gpu(gpu_id)
        if dtype not in g["tensor_tflops"]:
            continue
        got = fs_mod.token_weights(config(name), g, *point, dtype=dtype)
        want = weights(cfg, g, *point, dtype=dtype)
        what = f"token_weights({name}, {gpu_id}, batch/ctx/wb/kvb={point}, {dtype})"
        assert isinstance(got, (tuple, list)) and len(got) == 2, f"{what}: a pair, got {got!r}"
        close(got[0], want[0], f"{what}: w_prefill")
        close(got[1], want[1], f"{what}: w_decode")


@pytest.mark.rubric("weights")
@given(h=st.sampled_from([64, 96, 128]), layers=st.integers(1, 4), q=st.sampled_from([2, 4, 8]),
       kv_div=st.sampled_from([1, 2]), head_dim=st.sampled_from([None, 32]),
       inter=st.integers(1, 512), vocab=st.integers(1, 5000), batch=st.integers(1, 4096),
       ctx=st.integers(0, 5000), wb=st.sampled_from([0, 0.5, 1, 2]), kvb=st.sampled_from([0, 1, 2]))
def test_weights_small_configs(h: int, layers: int, q: int, kv_div: int, head_dim: int | None,
                               inter: int, vocab: int, batch: int, ctx: int, wb: float,
                               kvb: float) -> None:
    """Rules: Model fields; Prefill weight; Decode weight"""
    cfg: dict[str, Any] = {"hidden_size": h, "num_hidden_layers": layers,
                           "num_attention_heads": q, "intermediate_size": inter,
                           "vocab_size": vocab, "head_dim": head_dim}
    if kv_div == 2:
        cfg["num_key_value_heads"] = q // 2
    g = gpu(H100_SXM)
    got = fs_mod.token_weights(cfg, g, batch, ctx, wb, kvb)
    want = weights(cfg, g, batch, ctx, wb, kvb)
    close(got[0], want[0], f"w_prefill for {cfg}")
    close(got[1], want[1], f"w_decode for {cfg}, batch {batch}, ctx {ctx}, wb {wb}, kvb {kvb}")


@pytest.mark.rubric("weights")
def test_weights_bad_input() -> None:
    """Rule: Bad input"""
    g = gpu(H100_SXM)
    for name in OTHER:
        with pytest.raises(ValueError):
            fs_mod.token_weights(config(name), g, 8, 100, 2, 2)
    cfg = config(LLAMA8)
    for args in [(0, 100, 2, 2), (8, -1, 2, 2), (8, 100, -1, 2), (8, 100, 2, -0.5)]:
        with pytest.raises(ValueError):
            fs_mod.token_weights(cfg, g, *args)
    with pytest.raises(ValueError):
        fs_mod.token_weights(cfg, gpu("nvidia-h200-sxm-141gb"), 8, 100, 2, 2, dtype="tf32")


@pytest.mark.rubric("weights")
def test_mla_without_experts_is_refused() -> None:
    """A dense config with kv_lora_rank set (MLA without experts): both shipped MLA configs
    also have experts, so a check on the expert keys alone would pass them.
    Rule: Bad input"""
    g = gpu(H100_SXM)
    for rank in (512, 0):
        cfg = dict(config(LLAMA8), kv_lora_rank=rank, qk_rope_head_dim=64)
        with pytest.raises(ValueError):
            fs_mod.token_weights(cfg, g, 8, 100, 2, 2)
    cfg = dict(config(LLAMA8), kv_lora_rank=None)       # null: not MLA
    close(fs_mod.token_weights(cfg, g, 8, 100, 2, 2)[1], weights(cfg, g, 8, 100, 2, 2)[1],
          '"kv_lora_rank": null is not MLA')


@pytest.mark.rubric("weights")
@pytest.mark.parametrize("key", ["num_experts", "num_local_experts", "n_routed_experts"])
def test_expert_key_set_means_neither_null_nor_zero(key: str) -> None:
    """Rule: Bad input"""
    g = gpu(H100_SXM)
    for value in (None, 0):
        cfg = dict(config(LLAMA8), **{key: value})
        got = fs_mod.token_weights(cfg, g, 8, 100, 2, 2)
        want = weights(config(LLAMA8), g, 8, 100, 2, 2)
        close(got[0], want[0], f"{key}={value!r} is a dense model")
        close(got[1], want[1], f"{key}={value!r} is a dense model")
    with pytest.raises(ValueError):
        fs_mod.token_weights(dict(config(LLAMA8), **{key: 8}), g, 8, 100, 2, 2)


# -- request-fair share ------------------------------------------------------------------

@pytest.mark.rubric("request_fair")
def test_seed_share_is_96_percent() -> None:
    """Rule: Request-fair share"""
    wp, wd = weights(config(LLAMA8), gpu(H100_SXM), SEED_BATCH, SEED_CTX, 2, 2)
    share = fs_mod.request_fair_share(wp, wd, dict(SEED_REQUESTS))
    docs = wp * 32_000 + wd * 500
    close(share["docs"], docs / (docs + wp * 400 + wd * 100), "the seed's document share")
    assert 0.96 < share["docs"] < 0.965


@pytest.mark.rubric("request_fair")
@given(wp=st.floats(1e-7, 1e-3), wd=st.floats(1e-7, 1e-2),
       reqs=st.dictionaries(st.sampled_from(["docs", "chat", "code", "batch"]),
                            st.tuples(st.integers(0, 100_000), st.integers(0, 4000))
                            .filter(lambda r: r[0] + r[1] > 0), min_size=1, max_size=4))
def test_request_fair_share_formula(wp: float, wd: float,
                                    reqs: dict[str, tuple[int, int]]) -> None:
    """Rule: Request-fair share"""
    got = fs_mod.request_fair_share(wp, wd, dict(reqs))
    cost = {t: wp * p + wd * d for t, (p, d) in reqs.items()}
    assert set(got) == set(reqs), f"one share per tenant: {got}"
    for t in reqs:
        close(got[t], cost[t] / sum(cost.values()), f"share of {t} in {reqs}", rel=1e-9)


@pytest.mark.rubric("request_fair")
def test_request_fair_bad_input() -> None:
    """Rule: Bad input"""
    for args in [(0.0, 1.0, {"a": (1, 1)}), (1.0, -1.0, {"a": (1, 1)}), (1.0, 1.0, {}),
                 (1.0, 1.0, {"a": (0, 0)}), (1.0, 1.0, {"a": (-3, 5)})]:
        with pytest.raises(ValueError):
            fs_mod.request_fair_share(*args)


# -- the unfairness bound on long adversarial backlogs ----------------------------------

def _sizes(big: int) -> st.SearchStrategy[list[int]]:
    return st.lists(st.sampled_from([1, 1, big, big, big // 2 + 1]), min_size=10, max_size=40)


@pytest.mark.rubric("bounded_unfairness")
@settings(max_examples=min(60, settings.default.max_examples))
@given(quantum=st.integers(1, 6), big=st.integers(5, 30), data=st.data())
def test_bound_over_every_run(quantum: int, big: int, data: st.DataObject) -> None:
    """Rule: Bounded unfairness"""
    fs = fs_mod.FairShare(1, 1, quantum)
    queues = {t: data.draw(_sizes(big), label=t) for t in ("x", "y", "z")[:data.draw(
        st.integers(2, 3), label="tenants")]}
    left = {}
    for t, sizes in queues.items():
        for i, cost in enumerate(sizes):
            fs.enqueue(t, f"{t}{i}", cost, 0)
        left[t] = len(sizes)
    max_cost = max(max(s) for s in queues.values())
    bound = quantum + 2 * max_cost
    fair = Fairness()
    for call in range(sum(left.values())):
        fair.before_call({t for t, n in left.items() if n})
        got = fs.next_request()
        assert got is not None, f"next_request() returned None with {left} waiting"
        tenant, _, cost = got
        left[tenant] -= 1
        for a, b, spread in fair.after_call(tenant, cost, {t for t, n in left.items() if n}):
            assert spread <= bound, (
                f"quantum {quantum}, costs {queues}: tenants {a!r} and {b!r}, both backlogged, "
                f"got weighted service differing by {spread} > quantum + 2 x Max = {bound} "
                f"(call {call})")


# -- work conservation with costs far above the quantum ----------------------------------

@pytest.mark.rubric("work_conserving")
@given(quantum=st.integers(1, 3), costs=st.lists(st.tuples(st.sampled_from("abc"),
                                                           st.integers(1, 90)),
                                                 min_size=1, max_size=12))
def test_every_call_serves_while_work_waits(quantum: int, costs: list[tuple[str, int]]) -> None:
    """Rule: Work conservation"""
    fs = fs_mod.FairShare(1, 1, quantum)
    for i, (t, cost) in enumerate(costs):
        fs.enqueue(t, f"r{i}", cost, 0)
    served = drain(fs, limit=len(costs) + 1)
    assert sorted(r[1] for r in served) == sorted(f"r{i}" for i in range(len(costs))), (
        f"quantum {quantum}, requests {costs}: every request is served once while work "
        f"waits, got {served}")
    for t in "abc":
        mine = [r[1] for r in served if r[0] == t]
        assert mine == sorted(mine, key=lambda r: int(r[1:])), f"{t}'s requests out of order: {mine}"


# -- no banking: a returning tenant is a new tenant --------------------------------------

OPS = st.lists(st.one_of(st.tuples(st.just("enq"), st.sampled_from("abc"), st.integers(1, 9)),
                         st.tuples(st.just("call"), st.integers(1, 4))),
               min_size=4, max_size=30)


def _play(quantum: int, ops: list[tuple[Any, ...]], rename: set[int]) -> list[Any]:
    """Run ops; the enqueues whose positions are in ``rename`` go to a fresh tenant name
    (one per idle return). Returns the served records and the op positions of returns."""
    fs = fs_mod.FairShare(1, 1, quantum)
    waiting: dict[str, int] = {}
    seen: set[str] = set()
    alias: dict[str, str] = {}
    out: list[Any] = []
    returns: set[int] = set()
    for pos, op in enumerate(ops):
        if op[0] == "enq":
            t = op[1]
            if t in seen and not waiting.get(t):
                returns.add(pos)
                if pos in rename:
                    alias[t] = f"{t}'{pos}"
            name = alias.get(t, t)
            fs.enqueue(name, f"r{pos}", op[2], 0)
            seen.add(t)
            waiting[t] = waiting.get(t, 0) + 1
        else:
            for _ in range(op[1]):
                got = fs.next_request()
                if got is None:
                    out.append(None)
                    continue
                name, rid, cost = got
                t = name.split("'")[0]
                waiting[t] = waiting.get(t, 0) - 1
                out.append((t, rid, cost))
    return [out, returns]


@pytest.mark.rubric("no_banking")
@given(quantum=st.integers(2, 12), ops=OPS)
def test_no_banking_returning_tenant_is_a_new_tenant(quantum: int,
                                                     ops: list[tuple[Any, ...]]) -> None:
    """Rule: No banking"""
    first, returns = _play(quantum, ops, set())
    second, _ = _play(quantum, ops, returns)
    assert first == second, (
        f"quantum {quantum}, ops {ops}: a tenant returning from idle (at ops {sorted(returns)}) "
        f"must be served exactly as a brand-new tenant would be.\n as itself: {first}\n "
        f"renamed:   {second}")


@pytest.mark.rubric("no_banking")
def test_idle_tenant_gets_no_quantum() -> None:
    """Rule: No banking"""
    fs = fs_mod.FairShare(1, 1, 5)
    fs.enqueue("idle", "i1", 2, 0)
    assert tuple(fs.next_request()) == ("idle", "i1", 2)
    for i in range(6):
        fs.enqueue("busy", f"b{i}", 5, 0)
    drain(fs)
    assert fs.stats()["idle"]["deficit"] == 0, "rounds passed while idle earn nothing"
    fs.enqueue("busy", "b9", 4, 0)
    fs.enqueue("idle", "i2", 6, 0)
    assert [r[1] for r in drain(fs)] == ["b9", "i2"], (
        "the returning tenant starts at deficit 0 behind the waiting tenant")


# -- visits, exactly ---------------------------------------------------------------------

@pytest.mark.rubric("deficit_counter")
def test_one_quantum_per_visit_not_per_call() -> None:
    """Rule: Visits"""
    fs = fs_mod.FairShare(1, 1, 10)
    for i in range(3):
        fs.enqueue("a", f"a{i}", 3, 0)
    fs.enqueue("b", "b0", 3, 0)
    deficits = []
    for _ in range(3):
        assert fs.next_request()[0] == "a", "a's visit of 10 covers its three requests of 3"
        deficits.append(fs.stats()["a"]["deficit"])
    assert deficits == [7, 4, 0], (
        f"one quantum when the visit starts, then 10 - 3 - 3 (- 3, emptied: 0); got {deficits}")
    assert tuple(fs.next_request()) == ("b", "b0", 3)


@pytest.mark.rubric("deficit_counter")
def test_visit_ends_in_the_call_that_served() -> None:
    """Rules: Visits; The round"""
    fs = fs_mod.FairShare(1, 1, 4)
    fs.enqueue("a", "a1", 3, 0)
    fs.enqueue("a", "a2", 3, 0)
    assert tuple(fs.next_request()) == ("a", "a1", 3)
    # a's visit ended in that call (3 > 1 left): a went to the tail of the round, alone.
    fs.enqueue("b", "b1", 1, 0)                    # b joins behind a
    assert tuple(fs.next_request()) == ("a", "a2", 3), (
        "a was already at the tail when b arrived, so a's next visit comes first")
    assert tuple(fs.next_request()) == ("b", "b1", 1)


@pytest.mark.rubric("deficit_counter")
@pytest.mark.parametrize("bad", [("a", "x", 0, 0), ("a", "x", -1, 2), ("", "x", 1, 0),
                                 ("a", "x", 1.5, 0)])
def test_a_refused_request_leaves_its_id_free(bad: tuple[object, ...]) -> None:
    """A refused enqueue changes nothing, so its id is still free (found blind: hunt_4).

    Rule: Bad input
    """
    fs = fs_mod.FairShare(1, 1, 4)
    with pytest.raises(ValueError):
        fs.enqueue(*bad)
    assert fs.stats() == {}, f"enqueue{bad} was refused but stats() = {fs.stats()}"
    assert fs.enqueue("a", "x", 1, 0) == 1, f"id 'x' must be free after enqueue{bad} failed"
    assert tuple(fs.next_request()) == ("a", "x", 1)


@pytest.mark.rubric("deficit_counter")
@pytest.mark.parametrize("args", [(True, 1, 4), (1, False, 4), (1, 1, True), (0, 1, 4),
                                  (1, 1, 0), (1.0, 1, 4), (1, 1, "4")])
def test_bad_scheduler_parameters(args: tuple[object, ...]) -> None:
    """Weights and quantum are ints >= 1, and a bool is not an int (found blind: hunt2_4).

    Rule: Bad input
    """
    with pytest.raises(ValueError):
        fs_mod.FairShare(*args)
