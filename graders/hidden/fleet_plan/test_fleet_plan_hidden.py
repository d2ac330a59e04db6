"""Hidden tests for fleet_plan: each rule and each trap, against independent oracles."""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import assume, example, given, settings

from graders.hidden.fleet_plan import oracle
from graders.impl import kata_impl
from graders.support import inputs
from tests.fleet_plan.helpers import close, is_int, replica

fp = kata_impl("fleet_plan")
BAD_NUMBERS = [True, False, float("nan"), float("inf"), -float("inf"), "1", None]
HUGE = 10**400      # an int, but too large for a float: it counts as infinite


# ================================================================== strategies
@st.composite
def regions(draw, max_regions=4, max_demand=3, max_cap=6, near_sizes=(0, 3)):
    """(demand, near, caps): a few regions, sparse and asymmetric latency lists (each of
    ``near_sizes`` regions, within what the regions allow)."""
    r = draw(st.integers(2, max_regions), label="regions")
    demand = draw(st.lists(st.integers(0, max_demand), min_size=r, max_size=r), label="demand")
    near = []
    for u in range(r):
        others = [v for v in range(r) if v != u]
        picked = draw(st.lists(st.sampled_from(others), unique=True,
                               min_size=min(near_sizes[0], len(others)),
                               max_size=min(near_sizes[1], len(others))),
                      label=f"near[{u}]")
        near.append(picked)
    caps = draw(st.lists(st.integers(0, max_cap), min_size=r, max_size=r), label="caps")
    return demand, near, caps


def as_ints(got, r, what):
    assert isinstance(got, (list, tuple)) and len(got) == r, (
        f"{what}: expected one count per region ({r}), got {got!r}")
    for x in got:
        assert isinstance(x, numbers.Integral) and not isinstance(x, bool) and x >= 0, (
            f"{what}: counts must be ints >= 0, got {got!r}")
    return [int(x) for x in got]


# ================================================================== failover check
@pytest.mark.rubric("failover_check")
@given(regions(), st.data())
@example(([2, 1], [[1], [0]], [9, 9]), None)
@example(([4, 3, 2], [[1, 2], [0], [0]], [10, 10, 10]), None)
def test_survives_matches_halls_condition(inst, data):
    """Rules: Surviving a loss; Serving a region"""
    demand, near, caps = inst
    if data is None:
        placements = [[2, 3], [3, 3], [3, 2]] if len(demand) == 2 else \
            [[6, 4, 4], [4, 5, 5], [5, 4, 5], [4, 4, 6], [4, 6, 4]]
    else:
        placements = [data.draw(st.lists(st.integers(0, 6), min_size=len(demand),
                                         max_size=len(demand)), label="placement")
                      for _ in range(3)]
    for n in placements:
        want = oracle.survives(demand, near, n)
        got = inputs.leaves_inputs_alone(fp.survives, list(demand), [list(x) for x in near],
                                         list(n), what="survives")
        assert isinstance(got, (bool, np.bool_)) and bool(got) == want, (
            f"survives(demand={demand}, near={near}, placement={n}) = {got!r}, expected {want}: "
            "for every failed region, every region's users (the failed one's included) need a "
            "replica of their own region or a region near them")


@pytest.mark.rubric("failover_check")
@settings(max_examples=min(50, settings.default.max_examples))
@given(regions(max_demand=2, near_sizes=(1, 2)), st.randoms(use_true_random=False))
def test_survives_at_the_edge_of_an_assignment(inst, rng):
    """Rules: Surviving a loss; Serving a region

    For every failed region, each unit of demand is given a random replica it may use; the
    placement holds just what the busiest of those assignments needs, so it survives with
    no slack, and one replica fewer in any region may break it. Short near lists make the
    users compete: any order of filling that is not a flow (most constrained users first,
    own region first) misjudges such edges.
    """
    demand, near, _ = inst
    r = len(demand)
    for _ in range(3):
        n = [0] * r
        for f in range(r):
            used = [0] * r
            for u in range(r):
                allowed = [v for v in [u, *near[u]] if v != f]
                for _ in range(demand[u] if allowed else 0):
                    used[rng.choice(allowed)] += 1
            n = [max(a, b) for a, b in zip(n, used)]
        for k in range(-1, r):
            m = list(n)
            if k >= 0:
                if m[k] == 0:
                    continue
                m[k] -= 1
            want = oracle.survives(demand, near, m)
            got = fp.survives(list(demand), [list(x) for x in near], m)
            assert isinstance(got, (bool, np.bool_)) and bool(got) == want, (
                f"survives(demand={demand}, near={near}, placement={m}) = {got!r}, expected "
                f"{want}: for every failed region, every unit of demand needs its own replica "
                "in its region or a near one (a matching, not a greedy fill)")


def _with_far_region(demand, near, placement, pos, spare):
    """The same regions and a new one at index ``pos`` that no region may use and whose own
    users are none, holding ``spare`` replicas."""
    def moved(v):
        return v + 1 if v >= pos else v
    near2 = [[moved(v) for v in row] for row in near]
    return (demand[:pos] + [0] + demand[pos:], near2[:pos] + [[]] + near2[pos:],
            placement[:pos] + [spare] + placement[pos:])


@pytest.mark.rubric("failover_check")
@given(regions(max_regions=3, max_demand=4), st.data())
def test_replicas_nobody_may_use_change_nothing(inst, data):
    """Rules: Serving a region; Surviving a loss

    A region that is in no one's near list and has no users of its own adds replicas that
    serve no one: a placement survives with it exactly when it survives without it. With
    three regions plus that one, a check of too few sets of user regions counts its spare.
    """
    demand, near, _ = inst
    r = len(demand)
    for _ in range(3):
        spare = data.draw(st.lists(st.integers(0, 2), min_size=r, max_size=r), label="spare")
        n = [d + s for d, s in zip(demand, spare)]
        pos = data.draw(st.integers(0, r), label="far region")
        extra = data.draw(st.integers(1, 9), label="its replicas")
        want = oracle.survives(demand, near, n)
        d2, near2, n2 = _with_far_region(list(demand), [list(x) for x in near], n, pos, extra)
        assert oracle.survives(d2, near2, n2) == want
        got = fp.survives(d2, near2, n2)
        assert isinstance(got, (bool, np.bool_)) and bool(got) == want, (
            f"survives(demand={d2}, near={near2}, placement={n2}) = {got!r}, expected {want}: "
            f"region {pos} is near no one and has no users, so its {extra} replicas serve no "
            f"one; without it the placement {'survives' if want else 'does not survive'}")


@pytest.mark.rubric("failover_check")
def test_a_capacity_sum_is_not_enough():
    """Rule: Serving a region"""
    # Region 2 is near nobody: its 4 replicas count in a sum but serve no one else.
    demand, near = [2, 1, 0], [[1], [0], []]
    assert oracle.survives(demand, near, [3, 2, 4]) is False
    assert fp.survives(demand, near, [3, 2, 4]) is False, (
        f"demand {demand}, near {near}, placement [3, 2, 4]: losing region 0 leaves 6 "
        "replicas for 3 units, but only region 1's 2 may serve them")
    assert fp.survives(demand, near, [3, 3, 0]) is True


@pytest.mark.rubric("failover_check")
def test_near_is_not_symmetric():
    """Rule: Serving a region"""
    # Region 1 may use region 0; region 0 may use nobody else.
    assert fp.survives([1, 1], [[], [0]], [2, 1]) is False, (
        "region 0 has no near region: losing it leaves its user unserved, whatever region 1 "
        "holds (region 1 listing region 0 does not let region 0 use region 1)")
    assert fp.survives([0, 1], [[], [0]], [1, 1]) is True


@pytest.mark.rubric("failover_check")
def test_survives_bad_input_hidden():
    """Rule: Bad input"""
    ok = ([1, 1], [[1], [0]], [2, 2])
    assert fp.survives(*ok) is True
    for bad in BAD_NUMBERS + [1.0, -1]:
        for pos in range(3):
            args = [list(ok[0]), [list(x) for x in ok[1]], list(ok[2])]
            if pos == 1:
                args[1][0] = [bad]
            else:
                args[pos][0] = bad
            with pytest.raises(ValueError):
                fp.survives(*args)
    for near in ([[1], [0], [0]], [[1], [1]], [[1], [0, 0]], [(1,), 0], None):
        with pytest.raises(ValueError):
            fp.survives([1, 1], near, [2, 2])


# ================================================================== smallest fleet
def _check_smallest(demand, near, caps):
    got = inputs.leaves_inputs_alone(fp.smallest_fleet, list(demand), [list(x) for x in near],
                                     list(caps), what="smallest_fleet")
    if not oracle.survives(demand, near, caps):
        assert got is None, (
            f"smallest_fleet(demand={demand}, near={near}, caps={caps}) = {got!r}: even the caps "
            "do not survive every single-region loss, so the answer is None")
        return
    assert got is not None, (
        f"smallest_fleet(demand={demand}, near={near}, caps={caps}) returned None, but the caps "
        f"themselves survive")
    n = as_ints(got, len(demand), f"smallest_fleet({demand}, {near}, {caps})")
    assert all(x <= c for x, c in zip(n, caps)), f"{n} exceeds the caps {caps}"
    assert oracle.survives(demand, near, n), (
        f"smallest_fleet(demand={demand}, near={near}, caps={caps}) = {n} does not survive "
        "every single-region loss")
    better = oracle.some_survivor(demand, near, caps, sum(n) - 1) if sum(n) else None
    assert better is None, (
        f"smallest_fleet(demand={demand}, near={near}, caps={caps}) = {n} holds {sum(n)} "
        f"replicas, but {list(better)} survives with {sum(n) - 1}")


@pytest.mark.rubric("smallest_fleet")
@given(regions())
@example(([4, 3, 2], [[1, 2], [0], [0]], [3, 10, 10]))
@example(([2, 1, 2], [[1], [0], [0]], [6, 6, 6]))
@example(([3, 0, 0, 3], [[1, 2], [3], [3], [0]], [6, 6, 6, 6]))
@example(([0, 0, 2], [[], [], [0, 1]], [6, 0, 6]))
@example(([0, 0, 2], [[], [], [0, 1]], [6, 6, 6]))             # [1, 1, 1]: below its demand
@example(([2, 2, 2, 2], [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]], [6, 6, 6, 6]))
def test_smallest_fleet_is_minimal(inst):
    """Rule: Smallest fleet"""
    _check_smallest(*inst)


@pytest.mark.rubric("smallest_fleet")
@settings(max_examples=min(30, settings.default.max_examples))
@given(regions(max_regions=3, max_demand=4, max_cap=9))
def test_smallest_fleet_larger_demand(inst):
    """Rule: Smallest fleet"""
    _check_smallest(*inst)


@pytest.mark.rubric("smallest_fleet")
def test_smallest_fleet_every_optimum_is_accepted_and_the_caps_bind():
    """Rule: Smallest fleet"""
    # A full mesh of four regions, one unit each: any 2,2,1,1-ish spread of 6 is optimal.
    demand, near = [1, 1, 1, 1], [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]]
    _check_smallest(demand, near, [6, 6, 6, 6])
    _check_smallest(demand, near, [0, 6, 6, 6])
    _check_smallest(demand, near, [0, 0, 6, 6])
    _check_smallest([1, 1], [[1], [0]], [1, 1])


@pytest.mark.rubric("smallest_fleet")
def test_smallest_fleet_bad_input_hidden():
    """Rule: Bad input"""
    for caps in ([1], [1, -1], [1, True], [1.0, 2], "12"):
        with pytest.raises(ValueError):
            fp.smallest_fleet([1, 1], [[1], [0]], caps)
    with pytest.raises(ValueError):
        fp.smallest_fleet([1], [[]], [2])


# ================================================================== autoscaling
growth = st.one_of(st.floats(0, 0.5), st.sampled_from([0.0, 0.01, 0.05, 0.1]))
lead = st.one_of(st.floats(0, 30), st.integers(0, 30))


@pytest.mark.rubric("autoscaling")
@given(growth, lead, st.sampled_from(["compound", "linear"]), st.floats(0.05, 1.0))
@example(0.05, 5, "compound", 0.7)
@example(0.5, 30, "compound", 1.0)
@example(0.2, 2.5, "linear", 0.8)
def test_headroom_and_scale_target(g, t, model, ceiling):
    """Rules: Headroom; Scale target"""
    want = oracle.headroom(g, t, model)
    got = fp.headroom(g, t, model)
    assert isinstance(got, (int, float)) and not isinstance(got, bool), f"a number, got {got!r}"
    assert abs(got - want) <= 1e-12 * (1 + want), (
        f"headroom({g!r}, {t!r}, {model!r}) = {got!r}, expected {want!r} (1 + h within a "
        "relative 1e-12): " + ("(1 + g) ** t - 1" if model == "compound" else "g x t"))
    close(fp.scale_target(ceiling, g, t, model), ceiling / (1 + want),
          f"scale_target({ceiling!r}, {g!r}, {t!r}, {model!r}) = ceiling / (1 + h)", rel=1e-9)


@pytest.mark.rubric("autoscaling")
def test_headroom_default_is_compound():
    """Rule: Headroom"""
    close(fp.headroom(0.1, 3), 1.1 ** 3 - 1, "the default model is compound")
    close(fp.scale_target(0.8, 0.1, 3), 0.8 / 1.1 ** 3, "the default model is compound")
    is_int(fp.replicas_ahead(100.0, 10.0, 0.1, 3), math.ceil(133.1 / 10 - 1e-9),
           "the default model is compound")


@pytest.mark.rubric("autoscaling")
@given(st.integers(1, 500), st.floats(0.5, 100), growth, lead,
       st.sampled_from(["compound", "linear"]), st.booleans())
@example(10, 12.1, 0.1, 2, "compound", True)
@example(7, 3.0, 0.1, 5, "linear", True)
def test_replicas_ahead(n, per, g, t, model, exact):
    """Rules: Replicas ahead; Rounding up"""
    h = oracle.headroom(g, t, model)
    load = n * per / (1 + h) if exact else n * per / (1 + h) * 0.999
    _check_replicas_ahead(load, per, g, t, model)


def _check_replicas_ahead(load, per, g, t, model):
    """The prompt's rounding rule on x = load x (1 + h) / per_replica: x within 1e-12 x of
    an integer rounds to it, x at least 1e-6 x away from one rounds up (nothing between)."""
    h = oracle.headroom(g, t, model)
    x = load * (1 + h) / per
    assume(x < 1e8)
    near = round(x)
    if abs(x - near) <= 1e-12 * x:
        want = near
    else:
        assume(abs(x - near) >= 1e-6 * x)
        want = math.ceil(x)
    is_int(fp.replicas_ahead(load, per, g, t, model), want,
           f"replicas_ahead(load={load!r}, per_replica={per!r}, {g!r}, {t!r}, {model!r}): "
           f"load x (1 + h) / per_replica = {x!r}, rounded by ceil(x * (1 - 1e-9))")


# x = load x (1 + h) / per_replica: within 1e-12 x of an integer at every magnitude the
# prompt allows (below 1e8), well between two integers, or far below one replica.
counts_x = st.one_of(
    st.builds(lambda n, d: n * (1 + d),
              st.one_of(st.integers(1, 10**8 - 1), st.sampled_from([10**k for k in range(8)])),
              st.floats(-0.9e-12, 0.9e-12)),
    st.builds(lambda n, f: n + f, st.integers(0, 1000), st.floats(1e-3, 1 - 1e-3)),
    st.floats(1e-15, 1e-3))


@pytest.mark.rubric("autoscaling")
@given(counts_x, st.floats(0.5, 100), growth, lead, st.sampled_from(["compound", "linear"]))
def test_rounding_up_is_relative(x, per, g, t, model):
    """Rules: Rounding up; Replicas ahead

    A count within 1e-12 x of an integer is that integer at every size below 1e8 (the
    tolerance is relative), and a load far below one replica still needs one.
    """
    load = x * per / (1 + oracle.headroom(g, t, model))
    assume(load > 0)
    _check_replicas_ahead(load, per, g, t, model)


@pytest.mark.rubric("autoscaling")
def test_autoscaling_bad_input_hidden():
    """Rule: Bad input"""
    for bad in BAD_NUMBERS + [-0.5]:
        for call in (lambda b: fp.headroom(b, 5), lambda b: fp.headroom(0.1, b),
                     lambda b: fp.scale_target(b, 0.1, 5), lambda b: fp.replicas_ahead(b, 1.0, 0.1, 5),
                     lambda b: fp.replicas_ahead(1.0, b, 0.1, 5)):
            with pytest.raises(ValueError):
                call(bad)
    for model in ("Compound", "", None, 1):
        with pytest.raises(ValueError):
            fp.headroom(0.1, 5, model)
    with pytest.raises(ValueError):
        fp.scale_target(1.0000001, 0.1, 5)
    for call in (lambda: fp.headroom(HUGE, 1), lambda: fp.headroom(0.1, HUGE, "linear"),
                 lambda: fp.replicas_ahead(HUGE, 1.0, 0.1, 5),
                 lambda: fp.replicas_ahead(1.0, HUGE, 0.1, 5)):
        with pytest.raises(ValueError):     # an int too large for a float counts as infinite
            call()
    # A growth factor 1 + h, or a count, that overflows a float is bad input too.
    for call in (lambda: fp.headroom(1.0, 2000), lambda: fp.headroom(1e300, 1e300, "linear"),
                 lambda: fp.scale_target(0.5, 1.0, 2000),
                 lambda: fp.scale_target(0.5, 1e300, 1e10, "linear"),
                 lambda: fp.replicas_ahead(1.0, 1.0, 1.0, 2000),
                 lambda: fp.replicas_ahead(1e300, 1e-300, 0.0, 0.0)):
        with pytest.raises(ValueError):
            call()
    close(fp.headroom(1e300, 1.0, "linear"), 1e300, "a large growth that a float holds")


# ================================================================== tiering
@pytest.mark.rubric("tiering")
@given(st.lists(st.tuples(st.floats(0, 4), st.integers(1, 4)), min_size=1, max_size=25))
@example([(3.9999999999999996, 4), (4.0, 4)])   # exactly 2 ** -54, 0.0 when summed in floats
def test_idle_share(models):
    """Rule: Idle share

    Graded to an absolute 1e-12 (the prompt's constraints): the share may be summed in floats
    or exactly, and near a fully busy fleet the two differ by more than a relative 1e-9.
    """
    loads = [min(x, r) for x, r in models]
    reps = [r for _, r in models]
    got = fp.idle_share(loads, reps)
    want = float(1 - sum(map(Fraction, loads)) / sum(reps))
    assert isinstance(got, (int, float)) and not isinstance(got, bool), f"a number, got {got!r}"
    assert abs(got - want) <= 1e-12, (
        f"idle_share({loads}, {reps}) = {got!r}, expected {want!r} (1 - sum(loads) / "
        "sum(replicas), to an absolute 1e-12)")


@st.composite
def tails(draw):
    copies = draw(st.integers(1, 3), label="copies")
    models = draw(st.integers(0, 8 // copies), label="models")
    gpu_load = draw(st.sampled_from([10, 12, 100, 700, 1000]), label="gpu_load")
    gpu_mem = draw(st.sampled_from([10, 12, 80, 141]), label="gpu_mem")
    loads = draw(st.lists(st.integers(0, gpu_load), min_size=models, max_size=models))
    mems = draw(st.lists(st.integers(0, gpu_mem), min_size=models, max_size=models))
    return loads, mems, copies, gpu_load, gpu_mem


@pytest.mark.rubric("tiering")
@given(tails())
@example(([5, 4, 3, 3, 3, 2], [0] * 6, 1, 10, 10))          # first-fit decreasing needs 3
@example(([0] * 6, [5, 4, 3, 3, 3, 2], 1, 10, 10))          # the same, in memory
@example(([6, 4, 4, 6], [4, 6, 6, 4], 2, 10, 10))           # two budgets that cross
@example(([1, 1, 1], [1, 1, 1], 2, 100, 100))               # anti-affinity alone
def test_tail_packing_fewest_gpus(inst):
    """Rule: Tail packing"""
    loads, mems, copies, gpu_load, gpu_mem = inst
    got = inputs.leaves_inputs_alone(fp.pack_tail, list(loads), list(mems), copies, gpu_load,
                                     gpu_mem, what="pack_tail")
    got = [list(x) for x in got] if isinstance(got, (list, tuple)) else got
    if isinstance(got, list):
        got = [[int(g) if isinstance(g, numbers.Integral) and not isinstance(g, bool) else g
                for g in x] for x in got]
    wrong = oracle.packing_ok(loads, mems, copies, gpu_load, gpu_mem, got)
    assert wrong is None, f"pack_tail{inst}: {wrong}"
    used = len({g for x in got for g in x})
    best = oracle.fewest_gpus(loads, mems, copies, gpu_load, gpu_mem)
    assert used == best, (
        f"pack_tail(loads={loads}, mems={mems}, copies={copies}, gpu_load={gpu_load}, "
        f"gpu_mem={gpu_mem}) uses {used} GPUs; {best} suffice")


@pytest.mark.rubric("tiering")
def test_tiering_bad_input_hidden():
    """Rule: Bad input"""
    for bad in BAD_NUMBERS + [-1.0]:
        with pytest.raises(ValueError):
            fp.idle_share([bad], [2])
    for bad in BAD_NUMBERS + [1.0, -1]:
        for call in (lambda b: fp.pack_tail([b], [1], 1, 10, 10),
                     lambda b: fp.pack_tail([1], [b], 1, 10, 10),
                     lambda b: fp.pack_tail([1], [1], b, 10, 10),
                     lambda b: fp.pack_tail([1], [1], 1, b, 10),
                     lambda b: fp.pack_tail([1], [1], 1, 10, b),
                     lambda b: fp.idle_share([0.5], [b])):
            with pytest.raises(ValueError):
                call(bad)
    with pytest.raises(ValueError):
        fp.pack_tail([11], [1], 1, 10, 10)
    with pytest.raises(ValueError):
        fp.pack_tail([1], [11], 1, 10, 10)
    for args in ((0, 10, 10), (1, 0, 10), (1, 10, 0), (1.0, 10, 10)):
        with pytest.raises(ValueError):     # checked with no models too
            fp.pack_tail([], [], *args)
    assert fp.pack_tail([], [], 2, 10, 10) == []
    with pytest.raises(ValueError):
        fp.idle_share([HUGE], [2])


# ================================================================== pricing
MODELS = ["meta-llama--Llama-3.3-70B-Instruct", "meta-llama--Meta-Llama-3.1-8B",
          "Qwen--Qwen3-32B", "google--gemma-2-9b-it", "Qwen--Qwen2.5-7B"]
GPUS = ["nvidia-h100-sxm-80gb", "nvidia-a100-sxm-80gb", "nvidia-h200-sxm-141gb",
        "nvidia-b200-hgx"]


@pytest.mark.rubric("pricing")
@given(st.sampled_from(MODELS), st.sampled_from(GPUS), st.sampled_from([1, 2, 4, 8]),
       st.floats(0.5, 10), st.floats(0.05, 1.0), st.integers(1, 4096),
       st.integers(0, 131072), st.floats(0.05, 1.0))
@example("meta-llama--Llama-3.3-70B-Instruct", "nvidia-h100-sxm-80gb", 8, 2.0, 0.5, 64, 4096, 0.6)
@example("meta-llama--Meta-Llama-3.1-8B", "nvidia-h100-sxm-80gb", 1, 2.0, 0.3, 4096, 0, 1.0)
def test_token_prices(model, gpu_id, gpus, usd, mfu, batch, ctx, util):
    """Rule: Pricing"""
    r = replica(model, gpu_id, gpus)
    want_in, want_out = oracle.prices(r, usd, mfu, batch, ctx, util)
    got = inputs.leaves_inputs_alone(fp.token_prices, dict(r), usd, mfu, batch, ctx, util,
                                     what="token_prices")
    assert isinstance(got, (tuple, list)) and len(got) == 2, f"expected a pair, got {got!r}"
    what = f"token_prices({model} on {gpus} x {gpu_id}, {usd}, mfu {mfu}, batch {batch}, " \
           f"ctx {ctx}, util {util})"
    close(got[0], float(want_in), what + ": USD per million input tokens", rel=1e-9)
    close(got[1], float(want_out), what + ": USD per million output tokens", rel=1e-9)


tokens = st.one_of(st.just(0), st.floats(1e-3, 1e5))


@pytest.mark.rubric("pricing")
@given(st.floats(1e-3, 100), st.floats(1e-3, 100), tokens, tokens)
def test_prompt_share(pin, pout, tin, tout):
    """Rule: Prompt share

    Token counts are 0 or at least 1e-3 (no product of a price and a count underflows, as
    the prompt's constraints promise), so float and exact arithmetic agree to 1e-9.
    """
    assume(tin + tout > 0)
    want = tin * pin / (tin * pin + tout * pout)
    close(fp.prompt_share(pin, pout, tin, tout), want,
          f"prompt_share({pin!r}, {pout!r}, {tin!r}, {tout!r})", rel=1e-9)


@pytest.mark.rubric("pricing")
def test_pricing_bad_input_hidden():
    """Rule: Bad input"""
    r = replica()
    for bad in BAD_NUMBERS + [0, -1.0]:
        for key in ("params", "weight_bytes", "peak_flops", "bandwidth", "gpus"):
            with pytest.raises(ValueError):
                fp.token_prices({**r, key: bad}, 2.0, 0.5, 64, 4096, 0.6)
        for pos in (0, 1, 4):
            args = [2.0, 0.5, 64, 4096, 0.6]
            args[pos] = bad
            with pytest.raises(ValueError):
                fp.token_prices(r, *args)
    for bad in (1.5, 64.0, True):
        with pytest.raises(ValueError):
            fp.token_prices({**r, "gpus": 8.0 if bad is True else bad}, 2.0, 0.5, 64, 4096, 0.6)
    with pytest.raises(ValueError):
        fp.token_prices({**r, "kv_bytes_per_token": -1}, 2.0, 0.5, 64, 4096, 0.6)
    with pytest.raises(ValueError):
        fp.token_prices(r, 2.0, 0.5, 64, -1, 0.6)
    with pytest.raises(ValueError):
        fp.token_prices(r, 2.0, 0.5, 64, 4096.0, 0.6)
    with pytest.raises(ValueError):
        fp.token_prices([r], 2.0, 0.5, 64, 4096, 0.6)
    for key in ("params", "weight_bytes", "kv_bytes_per_token", "peak_flops", "bandwidth"):
        with pytest.raises(ValueError):     # an int too large for a float counts as infinite
            fp.token_prices({**r, key: HUGE}, 2.0, 0.5, 64, 4096, 0.6)
    with pytest.raises(ValueError):
        fp.token_prices(r, HUGE, 0.5, 64, 4096, 0.6)
    for pos in range(4):
        args = [1.0, 2.0, 10, 10]
        args[pos] = HUGE
        with pytest.raises(ValueError):
            fp.prompt_share(*args)
    close(fp.token_prices({**r, "kv_bytes_per_token": 0, "extra": "ignored"}, 2.0, 0.5, 64,
                          4096, 0.6)[0], float(oracle.prices(r, 2.0, 0.5, 64, 4096, 0.6)[0]),
          "other keys are ignored; a KV of 0 is allowed", rel=1e-9)
    for bad in BAD_NUMBERS + [0.0, -1.0]:
        with pytest.raises(ValueError):
            fp.prompt_share(bad, 1.0, 1, 1)
    with pytest.raises(ValueError):
        fp.prompt_share(1.0, 1.0, -1, 1)


# ================================================================== canary
@pytest.mark.rubric("canary")
@given(st.floats(0, 0.9), st.floats(0.001, 0.5), st.floats(0.001, 0.2), st.floats(0.55, 0.99))
@example(0.01, 0.005, 0.05, 0.8)
@example(0.0, 0.01, 0.05, 0.8)
@example(0.5, 0.05, 0.01, 0.9)
def test_canary_size(p0, gap, alpha, power):
    """Rules: Canary size; Rounding up"""
    p1 = p0 + gap
    assume(p1 < 0.999)
    x = oracle.canary_x(p0, p1, alpha, power)
    near = round(x)
    assume(x < 1e8 and (abs(x - near) >= 1e-6 * x or abs(x - near) <= 1e-12 * x))
    want = near if abs(x - near) <= 1e-12 * x else math.ceil(x)
    is_int(fp.canary_size(p0, p1, alpha, power), want,
           f"canary_size({p0!r}, {p1!r}, alpha={alpha!r}, power={power!r}): the one-sided "
           f"formula gives {x!r} per arm")


@pytest.mark.rubric("canary")
@given(st.integers(1, 10**6), st.floats(0.01, 1e4), st.floats(0.001, 0.999))
@example(100, 10.0, 0.5)
@example(100, 10.0, 0.9)
def test_canary_minutes(n, rps, share):
    """Rule: Canary time"""
    close(fp.canary_minutes(n, rps, share), n / (rps * min(share, 1 - share)) / 60,
          f"canary_minutes({n}, {rps!r}, {share!r}): the smaller arm sets the pace", rel=1e-9)


@pytest.mark.rubric("canary")
def test_canary_bad_input_hidden():
    """Rule: Bad input"""
    for bad in BAD_NUMBERS:
        for pos in range(4):
            args = [0.01, 0.02, 0.05, 0.8]
            args[pos] = bad
            with pytest.raises(ValueError):
                fp.canary_size(*args)
    for args in ([0.01, 0.01, 0.05, 0.8], [-0.01, 0.01, 0.05, 0.8], [0.01, 1.0, 0.05, 0.8],
                 [0.01, 0.02, 0.0, 0.8], [0.01, 0.02, 0.05, 0.5], [0.01, 0.02, 0.05, 1.0]):
        with pytest.raises(ValueError):
            fp.canary_size(*args)
    for args in ([1.0, 1.0, 0.5], [10, 0.0, 0.5], [10, 1.0, 0.0], [10, True, 0.5],
                 [10, HUGE, 0.5], [True, 1.0, 0.5], [10, 1.0, float("nan")]):
        with pytest.raises(ValueError):
            fp.canary_minutes(*args)
