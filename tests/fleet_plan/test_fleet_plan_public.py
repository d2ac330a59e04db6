"""Public tests for fleet_plan: the prompt's examples and one check per rule."""

from __future__ import annotations

import math

import pytest

from graders.impl import kata_impl
from tests.fleet_plan.helpers import close, is_int, replica

fp = kata_impl("fleet_plan")
DEMAND = [4, 3, 2]
NEAR = [[1, 2], [0], [0]]


# ------------------------------------------------------------------ failover check
@pytest.mark.rubric("failover_check")
def test_surviving_a_loss_example():
    """Rules: Surviving a loss; Serving a region"""
    for placement in ([4, 5, 5], [5, 4, 5], [5, 5, 4], [7, 7, 2]):
        assert fp.survives(DEMAND, NEAR, placement) is True, f"{placement} survives any loss"
    assert fp.survives(DEMAND, NEAR, [6, 4, 4]) is False, (
        "[6, 4, 4]: when region 0 dies its 4 units find 1 spare in region 1 and 2 in region 2")
    assert fp.survives(DEMAND, NEAR, [9, 9, 9]) is True


@pytest.mark.rubric("failover_check")
def test_the_failed_regions_users_still_need_serving():
    """Rule: Surviving a loss"""
    # Each region's users can only go to the other: whichever region dies, the survivor
    # holds all 3 units.
    assert fp.survives([2, 1], [[1], [0]], [3, 3]) is True
    assert fp.survives([2, 1], [[1], [0]], [2, 3]) is False, (
        "demand [2, 1], placement [2, 3]: losing region 1 sends its user to region 0, "
        "which then needs 3 replicas for 3 units (the failed region's users do not go away)")


@pytest.mark.rubric("failover_check")
def test_serving_a_region_only_from_near_regions():
    """Rule: Serving a region"""
    # Region 2 may use region 0, but region 0 may not use region 2.
    near = [[1], [0, 2], [0]]
    assert fp.survives([2, 0, 1], near, [1, 2, 2]) is False, (
        "losing region 1 leaves region 0's 2 units with only region 0's 1 replica: region 2 is "
        "not near region 0 (near need not be symmetric)")
    assert fp.survives([2, 0, 1], near, [3, 2, 1]) is True


@pytest.mark.rubric("failover_check")
def test_survives_bad_input():
    """Rule: Bad input"""
    for demand, near, placement in [([1], [[]], [2]), ([1, True], [[1], [0]], [1, 1]),
                                    ([1, -1], [[1], [0]], [1, 1]), ([1, 1], [[1]], [1, 1]),
                                    ([1, 1], [[0], [0]], [1, 1]), ([1, 1], [[1, 1], [0]], [1, 1]),
                                    ([1, 1], [[2], [0]], [1, 1]), ([1, 1], [[1], [0]], [1]),
                                    ([1, 1], [[1], [0]], [1.0, 1]), ("11", [[1], [0]], [1, 1])]:
        with pytest.raises(ValueError):
            fp.survives(demand, near, placement)


# ------------------------------------------------------------------ smallest fleet
@pytest.mark.rubric("smallest_fleet")
def test_smallest_fleet_example():
    """Rule: Smallest fleet"""
    got = fp.smallest_fleet(DEMAND, NEAR, [10, 10, 10])
    assert got is not None and [int(x) for x in got] in ([4, 5, 5], [5, 4, 5], [5, 5, 4]), (
        f"demand {DEMAND}, near {NEAR}: the smallest surviving fleet holds 14 replicas, and "
        f"[4, 5, 5], [5, 4, 5] and [5, 5, 4] are the placements that reach it; got {got!r}")
    got = fp.smallest_fleet(DEMAND, [[1], [0], [0]], [10, 10, 10])
    assert got is not None and [int(x) for x in got] == [7, 7, 2], (
        f"with region 0 unable to reach region 2 the only fleet of 16 is [7, 7, 2], got {got!r}")


@pytest.mark.rubric("smallest_fleet")
def test_smallest_fleet_respects_the_caps():
    """Rule: Smallest fleet"""
    got = fp.smallest_fleet(DEMAND, NEAR, [4, 10, 10])
    assert got is not None and [int(x) for x in got] == [4, 5, 5], (
        f"caps [4, 10, 10] leave [4, 5, 5] as the only fleet of 14, got {got!r}")
    got = fp.smallest_fleet(DEMAND, NEAR, [3, 10, 10])
    assert got is not None and sum(got) == 15 and got[0] <= 3, (
        f"with region 0 capped at 3 the smallest fleet holds 15, got {got!r}")


@pytest.mark.rubric("smallest_fleet")
def test_smallest_fleet_none_when_nothing_survives():
    """Rule: Smallest fleet"""
    assert fp.smallest_fleet(DEMAND, [[1, 2], [0], []], [10, 10, 10]) is None, (
        "region 2's users have no other region: losing region 2 leaves them unserved")
    assert fp.smallest_fleet([3, 3], [[1], [0]], [5, 5]) is None, (
        "two regions with 3 units each need 6 in each: caps of 5 cannot survive")
    got = fp.smallest_fleet([0, 0, 0], [[], [], []], [1, 1, 1])
    assert got is not None and list(got) == [0, 0, 0], f"no demand needs no replicas, got {got!r}"


# ------------------------------------------------------------------ autoscaling
@pytest.mark.rubric("autoscaling")
def test_headroom_example():
    """Rules: Headroom; Scale target"""
    close(fp.headroom(0.05, 5), 1.05 ** 5 - 1, "5% compound growth per minute over 5 minutes")
    close(fp.headroom(0.05, 5, "linear"), 0.25, "5% of today's load per minute over 5 minutes")
    close(fp.headroom(0.05, 2.5, "compound"), 1.05 ** 2.5 - 1, "a fractional lead time")
    close(fp.scale_target(0.7, 0.05, 5), 0.7 / 1.05 ** 5, "scale at ceiling / (1 + h)")
    close(fp.scale_target(0.7, 0.0, 5), 0.7, "no growth: scale at the ceiling")


@pytest.mark.rubric("autoscaling")
def test_replicas_ahead_rounding_up():
    """Rules: Replicas ahead; Rounding up"""
    is_int(fp.replicas_ahead(100.0, 30.0, 0.05, 5, "linear"), 5, "125 / 30 = 4.17: 5 replicas")
    is_int(fp.replicas_ahead(100.0, 12.1, 0.1, 2), 10,
           "100 x 1.1 ** 2 / 12.1 = 10.000000000000002 in floats: 10 by the rounding rule")
    is_int(fp.replicas_ahead(0.0, 10.0, 0.5, 5), 0, "no load, no replicas")


@pytest.mark.rubric("autoscaling")
def test_autoscaling_bad_input():
    """Rule: Bad input"""
    for call in [lambda: fp.headroom(-0.1, 5), lambda: fp.headroom(0.1, -1),
                 lambda: fp.headroom(0.1, 5, "exponential"), lambda: fp.headroom(True, 5),
                 lambda: fp.scale_target(0.0, 0.1, 5), lambda: fp.scale_target(1.5, 0.1, 5),
                 lambda: fp.replicas_ahead(10.0, 0.0, 0.1, 5),
                 lambda: fp.replicas_ahead(float("nan"), 1.0, 0.1, 5)]:
        with pytest.raises(ValueError):
            call()


# ------------------------------------------------------------------ tiering
@pytest.mark.rubric("tiering")
def test_idle_share_example():
    """Rule: Idle share"""
    close(fp.idle_share([1.5, 1.5] + [0.1] * 18, [2] * 20), 1 - 4.8 / 40,
          "twenty models with two replicas each, two busy")


def _check_packing(got, loads, mems, copies, gpu_load, gpu_mem, want_gpus):
    assert isinstance(got, list) and len(got) == len(loads), f"one list per model, got {got!r}"
    where: dict[int, list[int]] = {}
    for i, gpus in enumerate(got):
        assert len(gpus) == copies and len(set(gpus)) == copies, (
            f"model {i} needs {copies} replicas on different GPUs, got {gpus!r}")
        for g in gpus:
            where.setdefault(int(g), []).append(i)
    assert sorted(where) == list(range(want_gpus)), (
        f"the fewest GPUs is {want_gpus} (numbered 0..{want_gpus - 1}), got GPUs {sorted(where)}")
    for g, models in where.items():
        assert sum(loads[i] for i in models) <= gpu_load, f"GPU {g} over its load budget"
        assert sum(mems[i] for i in models) <= gpu_mem, f"GPU {g} over its memory"


@pytest.mark.rubric("tiering")
def test_tail_packing_example():
    """Rule: Tail packing"""
    loads, mems = [50] * 18, [20] * 18
    _check_packing(fp.pack_tail(loads, mems, 2, 700, 80), loads, mems, 2, 700, 80, 9)


@pytest.mark.rubric("tiering")
def test_tail_packing_both_budgets_and_copies_apart():
    """Rule: Tail packing"""
    loads, mems = [300, 300, 200, 500], [10, 50, 40, 30]
    _check_packing(fp.pack_tail(loads, mems, 2, 700, 80), loads, mems, 2, 700, 80, 4)
    # One model with three copies: three GPUs, however small it is.
    _check_packing(fp.pack_tail([1], [1], 3, 700, 80), [1], [1], 3, 700, 80, 3)
    assert fp.pack_tail([], [], 2, 700, 80) == []


@pytest.mark.rubric("tiering")
def test_tiering_bad_input():
    """Rule: Bad input"""
    for call in [lambda: fp.idle_share([], []), lambda: fp.idle_share([2.5], [2]),
                 lambda: fp.idle_share([0.5], [0]), lambda: fp.idle_share([0.5, 0.5], [1]),
                 lambda: fp.pack_tail([800], [10], 2, 700, 80),
                 lambda: fp.pack_tail([100], [90], 2, 700, 80),
                 lambda: fp.pack_tail([100], [10], 0, 700, 80),
                 lambda: fp.pack_tail([100.0], [10], 2, 700, 80),
                 lambda: fp.pack_tail([100, 100], [10], 2, 700, 80)]:
        with pytest.raises(ValueError):
            call()


# ------------------------------------------------------------------ pricing
@pytest.mark.rubric("pricing")
def test_pricing_example():
    """Rules: Pricing; Prompt share"""
    r = replica()
    assert r["params"] == 69_501_714_432 and r["kv_bytes_per_token"] == 327_680
    got = fp.token_prices(r, 2.0, 0.5, 64, 4096, 0.6)
    usd_s = 8 * 2.0 / 3600
    prefill = 0.5 * 8 * 989.4e12 / (2 * 69_501_714_432)
    decode = 64 / ((139_003_428_864 + 64 * 4096 * 327_680) / (8 * 3.35e12))
    assert len(got) == 2
    close(got[0], 1e6 * usd_s / (prefill * 0.6), "USD per million input tokens")
    close(got[1], 1e6 * usd_s / (decode * 0.6), "USD per million output tokens (memory-bound)")
    close(fp.prompt_share(got[0], got[1], 1500, 200),
          1500 * got[0] / (1500 * got[0] + 200 * got[1]), "1,500 in, 200 out")
    assert abs(fp.prompt_share(got[0], got[1], 1500, 200) - 2 / 3) < 0.01


@pytest.mark.rubric("pricing")
def test_pricing_decode_compute_bound_at_a_large_batch():
    """Rule: Pricing"""
    r = {"gpus": 1, "params": 1e9, "weight_bytes": 2e9, "kv_bytes_per_token": 0,
         "peak_flops": 1e15, "bandwidth": 1e12}
    got = fp.token_prices(r, 3.6, 1.0, 4096, 0, 1.0)
    # Compute per step 4096 x 2e9 / 1e15 = 8.192 ms beats the weights' 2 ms read.
    close(got[1], 1e6 * 0.001 / 500_000, "USD per million output tokens, compute-bound decode")
    close(got[0], 1e6 * 0.001 / 500_000, "prefill at the same compute rate")


@pytest.mark.rubric("pricing")
def test_pricing_bad_input():
    """Rule: Bad input"""
    r = replica()
    for call in [lambda: fp.token_prices({**r, "gpus": 0}, 2.0, 0.5, 64, 4096, 0.6),
                 lambda: fp.token_prices({k: v for k, v in r.items() if k != "bandwidth"},
                                         2.0, 0.5, 64, 4096, 0.6),
                 lambda: fp.token_prices(r, 2.0, 1.5, 64, 4096, 0.6),
                 lambda: fp.token_prices(r, 2.0, 0.5, 0, 4096, 0.6),
                 lambda: fp.token_prices(r, 2.0, 0.5, 64, 4096, 0.0),
                 lambda: fp.prompt_share(1.0, 2.0, 0, 0),
                 lambda: fp.prompt_share(0.0, 2.0, 1, 1)]:
        with pytest.raises(ValueError):
            call()


# ------------------------------------------------------------------ canary
@pytest.mark.rubric("canary")
def test_canary_size_example():
    """Rule: Canary size"""
    is_int(fp.canary_size(0.01, 0.015, 0.05, 0.8), 6105,
           "1% -> 1.5% at alpha 0.05 (one-sided), power 0.8")


@pytest.mark.rubric("canary")
def test_canary_time_smaller_arm_sets_the_pace():
    """Rule: Canary time"""
    close(fp.canary_minutes(6105, 50.0, 0.05), 6105 / (50 * 0.05) / 60, "5% on the canary")
    close(fp.canary_minutes(6000, 50.0, 0.8), 6000 / (50 * 0.2) / 60,
          "80% on the canary: the baseline arm (20%) is the slow one")


@pytest.mark.rubric("canary")
def test_canary_bad_input():
    """Rule: Bad input"""
    for call in [lambda: fp.canary_size(0.02, 0.01, 0.05, 0.8),
                 lambda: fp.canary_size(0.01, 0.02, 0.5, 0.8),
                 lambda: fp.canary_size(0.01, 0.02, 0.05, 0.4),
                 lambda: fp.canary_minutes(0, 50.0, 0.1),
                 lambda: fp.canary_minutes(100, 50.0, 1.0)]:
        with pytest.raises(ValueError):
            call()
    assert math.isfinite(fp.canary_minutes(1, 1.0, 0.5))
