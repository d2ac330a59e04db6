"""Public tests for mini_engine: the prompt's example and the basic behaviours.

Run: nox -s kata -- mini_engine
"""

import pytest

from graders.impl import kata_impl
from graders.support.mini_engine import EOS, reference_generation
from tests.mini_engine.helpers import GREEDY, block_problems, run_to_end, seeded

me = kata_impl("mini_engine")


def accounting_ok(engine, num_blocks, block_size):
    s = engine.stats()
    problems = block_problems(s, num_blocks, block_size)
    assert not problems, "; ".join(problems)
    return s


@pytest.mark.rubric("exact_streams")
def test_one_request_streams_the_models_generation():
    """Rules: One step; Sampling; Stopping"""
    engine = me.Engine(num_blocks=8, block_size=4, max_batched_tokens=16, max_running=4)
    engine.add("a", [3, 1, 4, 1, 5], 6, GREEDY)
    streams, steps = run_to_end(engine)
    want = reference_generation([3, 1, 4, 1, 5], 6, GREEDY)
    assert streams == {"a": want}, f"expected the model's own generation {want}, got {streams}"
    assert steps == len(want), (f"the prompt fits the budget, so the first step prefills it and "
                                f"samples, then one decode per token: {len(want)} steps, got {steps}")


@pytest.mark.rubric("budget_order")
def test_prompt_example_record():
    """Rules: One step; Decodes first; Token budget; Preemption by recompute"""
    engine = me.Engine(num_blocks=4, block_size=2, max_batched_tokens=4, max_running=2)
    engine.add("a", [1, 2, 3], max_tokens=3, sampling=GREEDY)
    engine.add("b", [4, 5, 6], max_tokens=3, sampling=GREEDY)
    r = engine.step()
    assert r["decodes"] == [] and [tuple(p) for p in r["prefills"]] == [("a", 3), ("b", 1)], r
    assert [tuple(o) for o in r["outputs"]] == [("a", 1, False)], r
    r = engine.step()
    assert r["decodes"] == ["a"] and [tuple(p) for p in r["prefills"]] == [("b", 2)], (
        f"a decodes first (1 token), then b's prefill takes the rest of the budget: {r}")
    assert [tuple(o) for o in r["outputs"]] == [("a", 16, False), ("b", 30, False)], r
    s = accounting_ok(engine, 4, 2)
    assert s["free_blocks"] == 0 and s["running"] == ["a", "b"], s
    r = engine.step()
    assert r["preempted"] == ["b"] and r["decodes"] == ["a"] and r["prefills"] == [], r
    assert [tuple(o) for o in r["outputs"]] == [("a", 0, True)], r
    s = accounting_ok(engine, 4, 2)
    assert s["running"] == [] and s["waiting"] == ["b"], s
    assert s["requests"] == {"b": {"computed": 0, "generated": 1, "blocks": []}}, s
    r = engine.step()
    assert [tuple(p) for p in r["prefills"]] == [("b", 4)], (
        f"b is admitted again and recomputes its whole sequence [4, 5, 6, 30]: {r}")
    assert [tuple(o) for o in r["outputs"]] == [("b", 13, False)], r


@pytest.mark.rubric("budget_order")
def test_long_prompt_is_chunked_under_the_budget():
    """Rules: Token budget; One step"""
    engine = me.Engine(num_blocks=8, block_size=2, max_batched_tokens=3, max_running=2)
    engine.add("a", [7, 7, 7, 7, 7, 7, 7], 2, GREEDY)
    chunks = []
    for _ in range(3):
        r = engine.step()
        chunks += [tuple(p) for p in r["prefills"]]
        assert len(r["decodes"]) + sum(n for _, n in r["prefills"]) <= 3, r
    assert chunks == [("a", 3), ("a", 3), ("a", 1)], f"chunks of at most 3 tokens: {chunks}"


@pytest.mark.rubric("budget_order")
def test_decodes_come_before_a_new_prompt():
    """Rules: Decodes first; Queues"""
    engine = me.Engine(num_blocks=16, block_size=4, max_batched_tokens=4, max_running=3)
    engine.add("a", [1, 2], 8, seeded(1, top_p=1.0))
    engine.step()                                   # a prefills and samples
    engine.add("b", [9] * 10, 2, GREEDY)
    r = engine.step()
    assert r["decodes"] == ["a"] and [tuple(p) for p in r["prefills"]] == [("b", 3)], (
        f"a's decode comes first; b's prefill gets the 3 tokens left: {r}")


@pytest.mark.rubric("budget_order")
def test_max_running_caps_admission():
    """Rules: Queues; One step"""
    engine = me.Engine(num_blocks=16, block_size=4, max_batched_tokens=8, max_running=1)
    engine.add("a", [1], 3, GREEDY)
    engine.add("b", [2], 3, GREEDY)
    r = engine.step()
    assert [tuple(p) for p in r["prefills"]] == [("a", 1)], f"only one may run: {r}"
    assert engine.stats()["waiting"] == ["b"]


@pytest.mark.rubric("block_accounting")
def test_blocks_follow_the_computed_tokens():
    """Rule: Block accounting"""
    engine = me.Engine(num_blocks=8, block_size=3, max_batched_tokens=4, max_running=2)
    engine.add("a", [5, 6, 7, 8, 9], 3, seeded(3, top_p=1.0))
    engine.step()
    s = accounting_ok(engine, 8, 3)
    assert s["requests"]["a"]["computed"] == 4 and len(s["requests"]["a"]["blocks"]) == 2, (
        f"4 computed tokens in blocks of 3 need 2 blocks: {s}")
    for _ in range(10):
        engine.step()
        accounting_ok(engine, 8, 3)
    assert engine.stats()["free_blocks"] == 8, "a finished request returns every block"


@pytest.mark.rubric("preemption")
def test_preempted_request_resumes_its_stream():
    """Rules: Preemption by recompute; Resume"""
    engine = me.Engine(num_blocks=3, block_size=1, max_batched_tokens=2, max_running=2)
    engine.add("a", [4], 2, GREEDY)
    engine.add("b", [8], 2, GREEDY)
    preempted = []
    streams: dict = {}
    for _ in range(20):
        r = engine.step()
        preempted += r["preempted"]
        for rid, token, _ in r["outputs"]:
            streams.setdefault(rid, []).append(token)
        accounting_ok(engine, 3, 1)
        if not engine.stats()["requests"]:
            break
    assert preempted == ["b"], f"b, the newest, gives way when a needs a block: {preempted}"
    for rid, prompt in (("a", [4]), ("b", [8])):
        want = reference_generation(prompt, 2, GREEDY)
        assert streams[rid] == want, f"{rid} must stream {want} exactly once, got {streams[rid]}"


@pytest.mark.rubric("preemption")
def test_two_victims_go_to_the_front_in_admission_order():
    """Rules: Preemption by recompute; Queues"""
    engine = me.Engine(num_blocks=4, block_size=1, max_batched_tokens=4, max_running=3)
    engine.add("a", [1, 2], 2, GREEDY)
    engine.add("b", [3], 3, GREEDY)
    engine.add("c", [6], 3, GREEDY)
    engine.add("d", [7], 1, GREEDY)
    engine.step()                       # a, b, c prefill and fill the pool
    r = engine.step()                   # every decode needs a block
    assert r["preempted"] == ["c", "b"] and r["decodes"] == ["a"], (
        f"a's decode preempts c (the newest); b's decode then finds the pool dry and b, now "
        f"the newest, is preempted itself: {r}")
    s = accounting_ok(engine, 4, 1)
    assert s["waiting"] == ["b", "c", "d"], (
        f"the victims go to the front in admission order, before d: {s['waiting']}")


@pytest.mark.rubric("sampling_stop")
def test_tokens_do_not_depend_on_the_batch():
    """Rules: Sampling; Stopping"""
    prompts = {"a": [1, 2, 3], "b": [4, 5], "c": [6]}
    alone = {}
    for rid, prompt in prompts.items():
        e = me.Engine(8, 4, 8, 1)
        e.add(rid, prompt, 5, seeded(42))
        alone.update(run_to_end(e)[0])
    e = me.Engine(4, 2, 2, 2)
    for rid, prompt in prompts.items():
        e.add(rid, prompt, 5, seeded(42))
    together, _ = run_to_end(e)
    assert together == alone, f"batched {together} differ from alone {alone}"
    for rid, prompt in prompts.items():
        assert alone[rid] == reference_generation(prompt, 5, seeded(42))


@pytest.mark.rubric("sampling_stop")
def test_max_tokens_finishes_in_the_step():
    """Rule: Stopping"""
    engine = me.Engine(num_blocks=8, block_size=4, max_batched_tokens=8, max_running=2)
    engine.add("a", [2, 2], 1, GREEDY)
    r = engine.step()
    token = reference_generation([2, 2], 1, GREEDY)[0]
    assert [tuple(o) for o in r["outputs"]] == [("a", token, True)], (
        f"max_tokens=1: the first token finishes the request in the same step: {r}")
    assert engine.stats()["requests"] == {} and engine.stats()["free_blocks"] == 8


@pytest.mark.rubric("sampling_stop")
def test_eos_finishes_in_the_step():
    """Rule: Stopping"""
    # [3, 4] greedy: the model's first token is EOS
    assert reference_generation([3, 4], 5, GREEDY) == [EOS]
    engine = me.Engine(num_blocks=8, block_size=4, max_batched_tokens=8, max_running=2)
    engine.add("a", [3, 4], 5, GREEDY)
    r = engine.step()
    assert [tuple(o) for o in r["outputs"]] == [("a", EOS, True)], r
    assert engine.step()["outputs"] == [], "a finished request is never mentioned again"


@pytest.mark.rubric("abort")
def test_abort_frees_a_running_request():
    """Rule: Abort"""
    engine = me.Engine(num_blocks=8, block_size=2, max_batched_tokens=4, max_running=2)
    engine.add("a", [1, 2, 3, 4, 5], 5, GREEDY)
    engine.add("b", [1], 5, GREEDY)
    engine.step()                                   # a: 4 of 5 prompt tokens, 2 blocks
    assert engine.stats()["free_blocks"] == 6
    engine.abort("a")
    s = accounting_ok(engine, 8, 2)
    assert "a" not in s["requests"] and s["free_blocks"] == 8 and s["waiting"] == ["b"], s
    for _ in range(6):
        r = engine.step()
        assert all("a" not in (p[0] if isinstance(p, (list, tuple)) else p)
                   for k in r for p in r[k]), f"an aborted request is never mentioned: {r}"


@pytest.mark.rubric("errors")
def test_bad_input_raises_and_changes_nothing():
    """Rules: Bad input; Refusal; Abort"""
    with pytest.raises(ValueError):
        me.Engine(4, 2, 1, 2)       # max_batched_tokens < max_running
    engine = me.Engine(num_blocks=4, block_size=2, max_batched_tokens=4, max_running=2)
    engine.add("a", [1, 2], 2, GREEDY)
    before = engine.stats()
    for args in (("a", [1], 1, GREEDY), (7, [1], 1, GREEDY), ("b", [], 1, GREEDY),
                 ("b", [32], 1, GREEDY), ("b", [-1], 1, GREEDY),
                 ("b", [1], 0, GREEDY), ("b", [1], 1, {"temperature": 1.0}),
                 ("b", [1, 2, 3], 6, GREEDY)):   # ceil(9 / 2) = 5 blocks > 4
        with pytest.raises(ValueError):
            engine.add(*args)
        assert engine.stats() == before, f"add{args} raised but changed the stats"
    engine.add("c", [1, 2, 3], 5, GREEDY)       # ceil(8 / 2) = 4 blocks: fits
    with pytest.raises(KeyError):
        engine.abort("nobody")
