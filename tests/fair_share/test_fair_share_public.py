"""Public tests for fair_share: the prompt's examples and the basic behaviours.

Run: nox -s kata -- fair_share
"""

from __future__ import annotations

import pytest

from graders.impl import kata_impl
from tests.fair_share.helpers import (H100_SXM, LLAMA8, SEED_BATCH, SEED_CTX, SEED_REQUESTS,
                                      close, config, drain, gpu)

fs_mod = kata_impl("fair_share")

LLAMA8_BODY = 6_979_321_856          # P: 32 x (2 x 4096 x 128 x 40 + 3 x 4096 x 14336)
LLAMA8_ALL = 7_504_658_432           # P + V x H
KV_PER_TOKEN = 131_072               # 2 x 32 x 8 x 128 x 2 bytes
PEAK, BW = 989.4e12, 3.35e12


@pytest.mark.rubric("weights")
def test_seed_weights():
    """Rules: Model fields; Datasheet units; Prefill weight; Decode weight"""
    wp, wd = fs_mod.token_weights(config(LLAMA8), gpu(H100_SXM), SEED_BATCH, SEED_CTX, 2, 2)
    close(wp, 2 * LLAMA8_BODY / PEAK, "w_prefill: 2 x P / dense peak (no LM head)")
    step = LLAMA8_ALL * 2 + SEED_BATCH * SEED_CTX * KV_PER_TOKEN
    close(wd, step / BW / SEED_BATCH,
          "w_decode at batch 64, ctx 2048: the step's bytes / bandwidth / batch (memory-bound)")


@pytest.mark.rubric("weights")
def test_huge_batch_decode_is_compute_bound():
    """Rule: Decode weight"""
    _, wd = fs_mod.token_weights(config(LLAMA8), gpu(H100_SXM), 1024, 0, 2, 2)
    close(wd, 2 * LLAMA8_ALL / PEAK,
          "batch 1024 without KV: 2 x (P + V x H) / peak exceeds the memory share")


@pytest.mark.rubric("weights")
def test_moe_config_is_bad_input():
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        fs_mod.token_weights(config("mistralai--Mixtral-8x7B-v0.1"), gpu(H100_SXM), 8, 100, 2, 2)


@pytest.mark.rubric("request_fair")
def test_request_fair_share_of_the_seed():
    """Rule: Request-fair share"""
    wp, wd = 2 * LLAMA8_BODY / PEAK, (LLAMA8_ALL * 2 + 64 * 2048 * KV_PER_TOKEN) / BW / 64
    share = fs_mod.request_fair_share(wp, wd, dict(SEED_REQUESTS))
    docs = wp * 32_000 + wd * 500
    chat = wp * 400 + wd * 100
    assert set(share) == {"docs", "chat"}, f"one share per tenant: {share}"
    close(share["docs"], docs / (docs + chat), "the document tenant's weighted share (~0.962)")
    close(share["chat"], chat / (docs + chat), "the chat tenant's weighted share")


@pytest.mark.rubric("deficit_counter")
def test_prompt_example_call_by_call():
    """Rules: The round; Visits; Stats"""
    fs = fs_mod.FairShare(1, 1, 4)
    assert fs.enqueue("a", "a1", 3, 0) == 3
    fs.enqueue("a", "a2", 3, 0)
    fs.enqueue("b", "b1", 6, 0)
    assert fs.stats() == {"a": {"deficit": 0, "queued": 2, "backlog": 6, "served": 0},
                          "b": {"deficit": 0, "queued": 1, "backlog": 6, "served": 0}}
    assert tuple(fs.next_request()) == ("a", "a1", 3)
    assert fs.stats()["a"]["deficit"] == 1, "a's visit: 0 + 4 - 3"
    assert tuple(fs.next_request()) == ("a", "a2", 3), "b could not afford 6 with 4; a's turn"
    assert fs.stats()["b"]["deficit"] == 4, "b keeps its deficit while it waits"
    assert fs.stats()["a"] == {"deficit": 0, "queued": 0, "backlog": 0, "served": 6}
    assert tuple(fs.next_request()) == ("b", "b1", 6)
    assert fs.next_request() is None
    assert fs.stats()["b"] == {"deficit": 0, "queued": 0, "backlog": 0, "served": 6}


@pytest.mark.rubric("deficit_counter")
def test_cost_is_token_weighted():
    """Rule: Costs"""
    fs = fs_mod.FairShare(3, 20, 100)
    assert fs.enqueue("t", "r", 10, 2) == 3 * 10 + 20 * 2


@pytest.mark.rubric("deficit_counter")
def test_bad_enqueue_changes_nothing():
    """Rule: Bad input"""
    fs = fs_mod.FairShare(1, 1, 4)
    fs.enqueue("a", "x", 2, 0)
    before = fs.stats()
    for args in [("a", "x", 1, 0), ("b", "y", 0, 0), ("b", "y", -1, 3), ("", "y", 1, 0),
                 ("b", "y", 1.5, 0), ("b", "y", True, 0)]:
        with pytest.raises(ValueError):
            fs.enqueue(*args)
        assert fs.stats() == before, f"enqueue{args} failed but changed the stats"
    with pytest.raises(ValueError):
        fs_mod.FairShare(1, 0, 4)


@pytest.mark.rubric("work_conserving")
def test_work_conservation_with_costly_requests():
    """Rule: Work conservation"""
    fs = fs_mod.FairShare(1, 1, 1)
    assert fs.next_request() is None, "nothing waits"
    fs.enqueue("a", "big", 50, 0)
    fs.enqueue("b", "bigger", 70, 0)
    served = drain(fs)
    assert [r[1] for r in served] == ["big", "bigger"], (
        f"a request costing many quanta is still served by one call: {served}")


@pytest.mark.rubric("no_banking")
def test_no_banking_after_idle():
    """Rules: No banking; The round"""
    fs = fs_mod.FairShare(1, 1, 10)
    fs.enqueue("a", "a1", 1, 0)
    fs.enqueue("b", "b1", 8, 0)
    fs.enqueue("b", "b2", 8, 0)
    assert tuple(fs.next_request()) == ("a", "a1", 1)
    assert fs.stats()["a"]["deficit"] == 0, "a's queue emptied: its 9 units of credit are gone"
    fs.enqueue("a", "a2", 9, 0)            # a returns: tail of the round, deficit 0
    assert [r[1] for r in drain(fs)] == ["b1", "a2", "b2"]


@pytest.mark.rubric("bounded_unfairness")
def test_seed_tenants_get_equal_weighted_time():
    """Rule: Bounded unfairness"""
    fs = fs_mod.FairShare(141, 1501, 1_000_000)         # 0.1 us units, the seed's weights
    for i in range(10):
        fs.enqueue("docs", f"d{i}", 32_000, 500)       # 5,262,500 each
    for i in range(400):
        fs.enqueue("chat", f"c{i}", 400, 100)          # 206,500 each
    bound = 1_000_000 + 2 * 5_262_500
    served = {"docs": 0, "chat": 0}
    for _ in range(200):                                # both stay backlogged throughout
        tenant, _, cost = fs.next_request()
        served[tenant] += cost
        gap = abs(served["docs"] - served["chat"])
        assert gap <= bound, f"weighted service differs by {gap} > quantum + 2 x Max = {bound}"
    assert served["chat"] > 0.4 * (served["docs"] + served["chat"]), served
