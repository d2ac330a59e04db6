"""Public tests for chunked_prefill: the prompt's examples and the basic rules."""

from __future__ import annotations

import pytest

from graders.impl import kata_impl
from graders.support import chunked_prefill as sim
from tests.chunked_prefill.helpers import (H100, close, close_lists, config, decision, decoding,
                                           request, run, waiting)

cp = kata_impl("chunked_prefill")

# The prompt's one-step example: d1 decodes, five prompts wait, budget 8, now = 2.0.
EXAMPLE_WAITING = [waiting("A", 0.0, 20, 4), waiting("B", 1.5, 3), waiting("E", 1.6, 5),
                   waiting("C", 1.8, 3), waiting("D", 1.9, 10)]
EXAMPLE_DECODING = [decoding("d1", 0.5)]


def example(cfg, names="ABECD"):
    w = [r for r in EXAMPLE_WAITING if r["id"] in names]
    return decision(cp.plan_step(cfg, 2.0, w, EXAMPLE_DECODING))


@pytest.mark.rubric("decode_first")
def test_decode_first_example():
    """Rule: Decode first"""
    chunks, decodes = example(config("spf"))
    assert decodes == ["d1"], f"the decoding request decodes in every step, got {decodes!r}"
    assert sum(chunks.values()) <= 7, f"prefill gets budget - 1 = 7 tokens, got {chunks!r}"


@pytest.mark.rubric("decode_first")
def test_decoders_past_the_budget_oldest_first():
    """Rule: Decode first"""
    d = [decoding("z", 0.1), decoding("y", 0.3), decoding("x", 0.2)]
    chunks, decodes = decision(cp.plan_step(config("fcfs", budget=2), 1.0,
                                            [waiting("p", 0.0, 4)], d))
    assert sorted(decodes) == ["x", "z"], f"the 2 earliest arrivals decode, got {decodes!r}"
    assert chunks == {}, f"no prefill when decoders take the whole budget, got {chunks!r}"


@pytest.mark.rubric("budget_fill")
def test_chunked_fill_example():
    """Rules: Fill in order; Token budget"""
    chunks, _ = example(config("fcfs"))
    assert chunks == {"A": 7}, f"fcfs, chunked: A takes the 7 tokens left, got {chunks!r}"


@pytest.mark.rubric("budget_fill")
@pytest.mark.parametrize("bad", [
    {"policy": "lifo"}, {"budget": 0}, {"budget": 2.0}, {"budget": True},
    {"chunked": 1}, {"starvation_s": -1.0}, {"starvation_s": "1"},
])
def test_bad_config(bad):
    """Rule: Bad config"""
    with pytest.raises(ValueError):
        cp.plan_step({**config(), **bad}, 0.0, [waiting("a", 0.0, 3)], [])


@pytest.mark.rubric("head_of_line")
def test_whole_prompts_no_overtaking_example():
    """Rules: Whole prompts without chunking; FCFS order"""
    chunks, _ = example(config("fcfs", chunked=False), names="BEC")
    assert chunks == {"B": 3}, \
        f"fcfs, no chunking: E (5) does not fit the 4 left and C must not overtake it, got {chunks!r}"


@pytest.mark.rubric("head_of_line")
def test_fcfs_ties_by_id_not_list_order():
    """Rule: FCFS order"""
    w = [waiting("b", 1.0, 2), waiting("c", 0.5, 2), waiting("a", 1.0, 2)]
    chunks, _ = decision(cp.plan_step(config("fcfs", budget=5), 2.0, w, []))
    assert chunks == {"c": 2, "a": 2, "b": 1}, f"c (earliest), then a, b (same arrival, by id), got {chunks!r}"


@pytest.mark.rubric("head_of_line")
def test_scenario_fcfs_without_chunking():
    """Rules: Whole prompts without chunking; FCFS order"""
    log = run(cp, sim.scenario_head_of_line(), config("fcfs", 32_768, chunked=False))
    first, second = log["steps"][0], log["steps"][1]
    assert first["prefill"] == [["long", 32_768]], f"step 1 is long's prefill alone: {first!r}"
    close(first["end"], 0.46678, "long's prefill step ends", rel=1e-4)
    assert sorted(r for r, _ in second["prefill"]) == [f"s{k:02d}" for k in range(1, 11)]
    close(second["end"], 0.54357, "the ten short prefills end (s01's TTFT = this - 0.001)",
          rel=1e-4)


@pytest.mark.rubric("head_of_line")
def test_scenario_fcfs_chunked_locks_out_the_short_ones():
    """Rules: Fill in order; FCFS order"""
    log = run(cp, sim.scenario_head_of_line(), config("fcfs", 2048))
    long_steps = [s for s in log["steps"] if any(r == "long" for r, _ in s["prefill"])]
    assert len(long_steps) == 16 and all(s["prefill"] == [["long", 2048]] for s in long_steps)
    first_short = min(s["start"] for s in log["steps"]
                      if any(r != "long" for r, _ in s["prefill"]))
    close(first_short, 0.53398, "no short prompt starts before long's prefill is done",
          rel=1e-4)


@pytest.mark.rubric("spf_order")
def test_spf_example():
    """Rule: Shortest prefill first"""
    chunks, _ = example(config("spf"))
    assert chunks == {"B": 3, "C": 3, "E": 1}, f"fewest tokens left first, got {chunks!r}"
    chunks, _ = example(config("spf", chunked=False), names="BEC")
    assert chunks == {"B": 3, "C": 3}, f"spf, no chunking, got {chunks!r}"


@pytest.mark.rubric("spf_order")
def test_scenario_spf_short_prompts_overtake():
    """Rule: Shortest prefill first"""
    log = run(cp, sim.scenario_head_of_line(), config("spf", 2048))
    second = sorted(map(tuple, log["steps"][1]["prefill"]))
    assert second == [(f"s0{k}", 512) for k in range(1, 5)], \
        f"step 2 (t = 33 ms, all ten arrived) prefills s01..s04 whole, got {second!r}"
    last_long = max(s["end"] for s in log["steps"] if any(r == "long" for r, _ in s["prefill"]))
    close(last_long, 0.63256, "long's TTFT under spf", rel=1e-4)


@pytest.mark.rubric("anti_starvation")
@pytest.mark.parametrize("w,want", [(1.0, {"A": 7}), (0.5, {"A": 7}),
                                    (2.5, {"B": 3, "C": 3, "E": 1}), (0.0, {"A": 7})])
def test_starvation_example(w, want):
    """Rule: Anti-starvation"""
    chunks, _ = example(config("spf", starvation_s=w))
    assert chunks == want, f"starvation_s={w}: want {want!r}, got {chunks!r}"


@pytest.mark.rubric("anti_starvation")
def test_starvation_bound_on_a_stream_of_short_prompts():
    """Rule: Starvation bound"""
    model = {"a": 1 / 64, "b": 1 / 1024, "c": 1 / 256}
    budget, w = 8, 0.25
    reqs = [request("long", 0.0, 64, 1)]
    reqs += [request(f"s{i:03d}", (i + 1) / 64, 4, 1) for i in range(200)]
    log = run(cp, reqs, config("spf", budget, starvation_s=w), model)
    done = max(s["end"] for s in log["steps"] if any(r == "long" for r, _ in s["prefill"]))
    t_max = model["a"] + max(model["b"], model["c"]) * budget
    bound = w + t_max * (1 + -(-64 // budget))      # the shorts have output 1: R = 0
    assert done <= bound, f"long's first token at {done}, beyond the bound {bound}"


@pytest.mark.rubric("latency_metrics")
def test_metrics_example():
    """Rules: Token times; TTFT; Inter-token latency"""
    log = sim.simulate([request("x", 0.0, 6, 3), request("y", 0.25, 2, 2)], config("fcfs", 4),
                       {"a": 0.125, "b": 0.0625, "c": 0.125}, _example_plan)
    times = cp.token_times(log)
    close_lists(times["x"], [0.75, 1.125, 1.375], "token_times x")
    close_lists(times["y"], [0.75, 1.125], "token_times y")
    t = cp.ttft(log)
    close(t["x"], 0.75, "ttft x")
    close(t["y"], 0.5, "ttft y: from arrival 0.25, not from the first chunk at 0.375")
    gaps = cp.itl(log)
    close_lists(gaps["x"], [0.375, 0.25], "itl x")
    close_lists(gaps["y"], [0.375], "itl y")


@pytest.mark.rubric("slowdown")
def test_slowdown_example():
    """Rule: Slowdown"""
    log = sim.simulate([request("x", 0.0, 6, 3), request("y", 0.25, 2, 2)], config("fcfs", 4),
                       {"a": 0.125, "b": 0.0625, "c": 0.125}, _example_plan)
    s = cp.slowdown(log)
    close(s["x"], 1.375 / 1.125, "slowdown x (alone: two chunks, two decode steps)")
    close(s["y"], 1.75, "slowdown y")


def _example_plan(cfg, now, w, d):
    """The metrics example's steps, fixed (so the metric tests do not rest on plan_step)."""
    steps = {0.0: ([("x", 4)], []), 0.375: ([("x", 2), ("y", 2)], []),
             0.75: ([], ["x", "y"]), 1.125: ([], ["x"])}
    return steps[now]
