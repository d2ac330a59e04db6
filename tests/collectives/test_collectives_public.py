"""Public tests for collectives: the prompt's examples and the basic rules."""

from __future__ import annotations

import pytest

from graders.impl import kata_impl
from tests.collectives.helpers import (LLAMA_70B, LLAMA_405B, HonestCluster, config,
                                       exact_time, probe_bound, run_search)

m = kata_impl("collectives")
ALPHA, LINK = 3000, 450          # 3 us per step, NVLink 4's 450 GB/s per direction


def close(got, want, what, rel=1e-9):
    assert isinstance(got, (int, float)) and not isinstance(got, bool), \
        f"{what}: expected a number, got {got!r}"
    assert got == pytest.approx(want, rel=rel, abs=1e-12), f"{what}: expected {want!r}, got {got!r}"


# ------------------------------------------------------------------ the model
@pytest.mark.rubric("alpha_beta")
def test_three_algorithms_on_eight_gpus():
    """Rules: Topology; Ring; One-shot; Two-shot"""
    s = 16384                    # one token of a 70B model in bf16
    close(m.allreduce_time_ns("ring", 8, s, ALPHA, LINK), 14 * (3000 + s / 8 / 450),
          "ring: 14 steps of S/8 bytes")
    close(m.allreduce_time_ns("one_shot", 8, s, ALPHA, LINK), 3000 + 7 * s / 450,
          "one-shot: one step reading 7 whole buffers")
    close(m.allreduce_time_ns("two_shot", 8, s, ALPHA, LINK), 2 * (3000 + 7 * s / 8 / 450),
          "two-shot: two steps of 7 chunks of S/8")


@pytest.mark.rubric("alpha_beta")
def test_ring_bus_bandwidth_is_the_link_rate():
    """Rules: Bus bandwidth; Ring"""
    # with no latency a ring moves every byte at the link rate: that is what busbw measures
    t = m.allreduce_time_ns("ring", 8, 2**30, 0, LINK)
    close(m.bus_bandwidth_gb_s(8, 2**30, t), 450.0, "ring busbw at alpha = 0")
    # nccl-tests: 16 GiB at an algorithm bandwidth of 275.58 GB/s on 8 GPUs
    close(m.bus_bandwidth_gb_s(8, 16 * 2**30, 16 * 2**30 / 275.58), 275.58 * 14 / 8,
          "busbw = algbw x 2(n-1)/n")


@pytest.mark.rubric("alpha_beta")
def test_bad_input_is_refused():
    """Rule: Bad input"""
    for args in [("tree", 8, 1, 1, 1), ("ring", 1, 1, 1, 1), ("ring", 8, -1, 1, 1),
                 ("ring", 8, 1, -1, 1), ("ring", 8, 1, 1, 0), ("ring", True, 1, 1, 1),
                 ("ring", 8, 1, float("nan"), 1)]:
        with pytest.raises(ValueError):
            m.allreduce_time_ns(*args)


@pytest.mark.rubric("crossover")
def test_crossover_eight_gpus():
    """Rule: Crossover"""
    assert m.crossover_bytes("one_shot", "two_shot", 8, ALPHA, LINK) == 257_143
    assert m.crossover_bytes("one_shot", "ring", 8, ALPHA, LINK) == 3_342_858
    assert m.crossover_bytes("ring", "two_shot", 8, ALPHA, LINK) == 1, \
        "two-shot moves the ring's bytes in fewer steps: faster at every size"
    assert m.crossover_bytes("two_shot", "ring", 8, ALPHA, LINK) is None, "the ring never overtakes"


@pytest.mark.rubric("crossover")
def test_two_gpus_never_cross():
    """Rule: Crossover"""
    # on two GPUs two-shot moves one-shot's bytes and pays a second step
    assert m.crossover_bytes("one_shot", "two_shot", 2, ALPHA, LINK) is None
    assert m.crossover_bytes("one_shot", "ring", 2, ALPHA, LINK) is None


@pytest.mark.rubric("crossover")
def test_a_tie_is_not_an_overtaking():
    """Rules: Crossover; Exact ties"""
    # alpha = 21, link = 1, n = 8: one-shot 21 + 7S, two-shot 42 + 1.75S: equal at S = 4
    assert exact_time("one_shot", 8, 4, 21, 1) == exact_time("two_shot", 8, 4, 21, 1)
    assert m.crossover_bytes("one_shot", "two_shot", 8, 21, 1) == 5
    assert m.best_allreduce(8, 4, 21, 1) == "one_shot", "a tie goes to fewer steps"
    assert m.best_allreduce(8, 5, 21, 1) == "two_shot"


@pytest.mark.rubric("crossover")
def test_best_algorithm_by_size():
    """Rule: Exact ties"""
    assert m.best_allreduce(8, 16384, ALPHA, LINK) == "one_shot"
    assert m.best_allreduce(8, 2**20, ALPHA, LINK) == "two_shot"
    assert m.best_allreduce(8, 0, 0, LINK) == "one_shot", "everything ties at 0: fewest steps"
    with pytest.raises(ValueError):
        m.crossover_bytes("one_shot", "two_shot", 8, 3000.0, LINK)   # floats are refused here


# ------------------------------------------------------------------ tensor parallelism
@pytest.mark.rubric("tp_count")
def test_llama_405b_at_tp8():
    """Rules: Two all-reduces per layer; Message size"""
    cfg = config(LLAMA_405B)
    assert m.allreduces_per_token(cfg, 8) == 252, "126 layers x 2"
    assert m.allreduces_per_token(cfg, 1) == 0, "one GPU has nothing to reduce"
    assert m.allreduce_bytes(cfg, 1) == 32_768, "16384 x 2 bytes"
    assert m.allreduce_bytes(cfg, 64, 2) == 64 * 32_768


@pytest.mark.rubric("tp_count")
def test_tp_must_divide_the_heads():
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        m.allreduces_per_token(config(LLAMA_405B), 3)


@pytest.mark.rubric("step_model")
def test_step_time_llama_70b():
    """Rule: Step time"""
    cfg = config(LLAMA_70B)
    w = 140e9                                 # bytes a bf16 decode step reads, about
    one = m.step_time_ns(cfg, 1, 1, 1, w, 3350, ALPHA, LINK)
    close(one, w / 3350, "TP 1: the HBM read only")
    ar = min(exact_time(a, 8, 16384, ALPHA, LINK) for a in ("one_shot", "two_shot", "ring"))
    close(m.step_time_ns(cfg, 1, 8, 1, w, 3350, ALPHA, LINK), w / 8 / 3350 + 160 * float(ar),
          "TP 8: an eighth of the read plus 160 one-shot all-reduces of 16 KB")


@pytest.mark.rubric("step_model")
def test_pipeline_stages_add_up():
    """Rules: Pipeline stages; Best layout"""
    cfg = config(LLAMA_70B)
    w = 140e9
    pp8 = m.step_time_ns(cfg, 1, 1, 8, w, 3350, ALPHA, LINK)
    close(pp8, w / 3350 + 7 * (3000 + 16384 / 450), "PP 8: the whole read plus 7 hand-offs")
    assert m.best_layout(cfg, 1, [(1, 8), (8, 1), (4, 2)], w, 3350, ALPHA, LINK) == (8, 1)
    assert m.best_layout(cfg, 1, [(2, 1), (2, 1)], w, 3350, ALPHA, LINK) == (2, 1)


@pytest.mark.rubric("step_model")
def test_quarter_rate_link_doubles_the_step():
    """Rule: Slowdown"""
    close(m.step_slowdown(1 / 3, 4), 2.0, "a third of the step on a link at a quarter rate")
    close(m.step_slowdown(0.0, 10), 1.0, "no time on the links, no slowdown")


# ------------------------------------------------------------------ the slow link
@pytest.mark.rubric("slow_link")
@pytest.mark.parametrize("slow_gpu", range(8))
def test_finds_the_slow_gpu_of_eight(slow_gpu):
    """Rules: The cluster; A probe; Logarithmic probes"""
    cluster = HonestCluster(8, ALPHA, LINK, slow_gpu, slowdown=4.0)
    found, probes = run_search(m, cluster)
    assert found == slow_gpu, f"the slow link is GPU {slow_gpu}'s; got {found} after {probes}"
    assert len(probes) <= probe_bound(8)


@pytest.mark.rubric("slow_link")
@pytest.mark.parametrize("slow_gpu", range(3))
def test_three_gpus_under_noise(slow_gpu):
    """Rules: Noise; A probe"""
    cluster = HonestCluster(3, ALPHA, LINK, slow_gpu, slowdown=2.0, noise=(1.02, 0.98))
    found, probes = run_search(m, cluster)
    assert found == slow_gpu, \
        f"GPU {slow_gpu} is slow (2x, noisy times); got {found} after {probes}"


@pytest.mark.rubric("slow_link")
def test_protocol_order():
    """Rules: Out of order; The protocol"""
    s = m.SlowLinkSearch(8, ALPHA, LINK)
    with pytest.raises(RuntimeError):
        s.record(1000.0)                      # nothing pending yet
    with pytest.raises(RuntimeError):
        s.culprit()
    first = s.next_probe()
    assert s.next_probe() == first, "asking again before record() gives the same probe"
    with pytest.raises(ValueError):
        s.record(float("nan"))
    assert s.next_probe() == first, "a refused time leaves the probe pending"
