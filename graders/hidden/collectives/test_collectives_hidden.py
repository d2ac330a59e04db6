"""Hidden tests for collectives: the model, the crossover, the TP count and the step model,
checked against the exact rationals of the prompt's formulas (tests/collectives/helpers.py)
on inputs built to hit the traps: exact integer crossovers, n = 2, zero latency, ties."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from graders.impl import kata_impl
from tests.collectives.helpers import (ALGORITHMS, LLAMA_70B, LLAMA_405B, coefficients, config,
                                       exact_time, model_names)

m = kata_impl("collectives")

algos = st.sampled_from(ALGORITHMS)
gpus = st.one_of(st.sampled_from([2, 3, 4, 6, 7, 8, 16, 72]), st.integers(2, 4096))
sizes = st.one_of(st.sampled_from([0, 1, 16, 16384, 32768, 2**20, 2**30]), st.integers(0, 2**40))
alphas = st.one_of(st.sampled_from([0, 1, 500, 3000, 10**6]),
                   st.floats(0, 1e6, allow_nan=False, allow_infinity=False))
links = st.one_of(st.sampled_from([1, 25, 50, 370, 450, 900, 10**4]),
                  st.floats(1, 1e4, allow_nan=False, allow_infinity=False))
int_alphas = st.one_of(st.sampled_from([0, 1, 21, 3000]), st.integers(0, 10**6))
int_links = st.one_of(st.sampled_from([1, 7, 450, 900]), st.integers(1, 10**4))
BAD_NUMBERS = [float("nan"), float("inf"), -1, True, None, "3"]


def close(got, want, what, rel=1e-9):
    assert isinstance(got, (int, float)) and not isinstance(got, bool), \
        f"{what}: expected a number, got {got!r}"
    assert got == pytest.approx(float(want), rel=rel, abs=1e-9), \
        f"{what}: expected {float(want)!r}, got {got!r}"


def dense_configs():
    keys = ("hidden_size", "num_hidden_layers", "num_attention_heads")
    return [n for n in model_names() if all(k in config(n) for k in keys)]


# =====================================================================================
# alpha_beta
# =====================================================================================
@pytest.mark.rubric("alpha_beta")
@given(algo=algos, n=gpus, s=sizes, alpha=alphas, link=links)
def test_times_follow_the_model(algo, n, s, alpha, link):
    """Rules: Topology; Ring; One-shot; Two-shot"""
    got = m.allreduce_time_ns(algo, n, s, alpha, link)
    close(got, exact_time(algo, n, s, alpha, link),
          f"allreduce_time_ns({algo!r}, n={n}, nbytes={s}, alpha={alpha}, link={link})")


@pytest.mark.rubric("alpha_beta")
@pytest.mark.parametrize("n", [2, 3, 8, 64])
def test_latency_only_and_bandwidth_only(n):
    """Rules: Ring; One-shot; Two-shot"""
    assert m.allreduce_time_ns("ring", n, 0, 1000, 450) == pytest.approx(2 * (n - 1) * 1000), \
        f"a ring of {n} GPUs takes 2(n-1) = {2 * (n - 1)} steps"
    assert m.allreduce_time_ns("one_shot", n, 0, 1000, 450) == pytest.approx(1000), "one step"
    assert m.allreduce_time_ns("two_shot", n, 0, 1000, 450) == pytest.approx(2000), "two steps"
    s = 2**30
    close(m.allreduce_time_ns("one_shot", n, s, 0, 450), (n - 1) * s / 450,
          f"one-shot reads the {n - 1} other whole buffers")
    close(m.allreduce_time_ns("two_shot", n, s, 0, 450), 2 * (n - 1) * s / n / 450,
          "two-shot moves (n-1)/n of the message twice")
    close(m.allreduce_time_ns("ring", n, s, 0, 450), 2 * (n - 1) * s / n / 450,
          "the ring moves (n-1)/n of the message twice")


@pytest.mark.rubric("alpha_beta")
@given(n=gpus, s=sizes.filter(lambda x: x > 0), t=st.floats(1e-3, 1e15))
def test_bus_bandwidth(n, s, t):
    """Rule: Bus bandwidth"""
    close(m.bus_bandwidth_gb_s(n, s, t), Fraction(s) / Fraction(t) * Fraction(2 * (n - 1), n),
          f"bus_bandwidth_gb_s({n}, {s}, {t})")


@pytest.mark.rubric("alpha_beta")
@given(n=gpus, s=sizes.filter(lambda x: x > 0), link=links)
@settings(max_examples=min(40, settings.default.max_examples))
def test_no_algorithm_beats_the_link_rate(n, s, link):
    """Rules: Bus bandwidth; Topology"""
    for algo in ALGORITHMS:
        t = m.allreduce_time_ns(algo, n, s, 0, link)
        assert m.bus_bandwidth_gb_s(n, s, t) <= link * (1 + 1e-9), (
            f"{algo} on {n} GPUs at alpha 0: bus bandwidth above the {link} GB/s link")


@pytest.mark.rubric("alpha_beta")
def test_model_functions_refuse_bad_input():
    """Rule: Bad input"""
    cases = [("ring", 8, 1, 1, 1)]
    for i, bad_values in enumerate([["", "Ring", "tree", None], [1, 0, -2, True, 8.0, "8"],
                                    [-1, 1.5, True, None], BAD_NUMBERS, BAD_NUMBERS + [0]]):
        for bad in bad_values:
            args = list(cases[0])
            args[i] = bad
            with pytest.raises(ValueError):
                m.allreduce_time_ns(*args)
    for args in [(1, 8, 1.0), (8, -1, 1.0), (8, 8, 0), (8, 8, float("nan")), (True, 8, 1.0),
                 (8, 8, -1.0), (8, 8.5, 1.0)]:
        with pytest.raises(ValueError):
            m.bus_bandwidth_gb_s(*args)


# =====================================================================================
# crossover
# =====================================================================================
def truth_crossover(small, large, n, alpha, link):
    a0, a1 = coefficients(small, n)
    b0, b1 = coefficients(large, n)
    d0, d1 = Fraction((a0 - b0) * alpha), (a1 - b1) / link
    if d1 < 0:
        return None
    if d1 == 0:
        return 1 if d0 > 0 else None
    return max(1, math.floor(-d0 / d1) + 1)


@pytest.mark.rubric("crossover")
@given(small=algos, large=algos, n=gpus, alpha=int_alphas, link=int_links)
def test_crossover_definition(small, large, n, alpha, link):
    """Rules: Crossover; Exact ties"""
    got = m.crossover_bytes(small, large, n, alpha, link)
    want = truth_crossover(small, large, n, alpha, link)
    assert got == want, f"crossover_bytes({small!r}, {large!r}, n={n}, alpha={alpha}, link={link})"
    if want is not None:
        assert exact_time(large, n, want, alpha, link) < exact_time(small, n, want, alpha, link)
        if want > 1:
            assert exact_time(large, n, want - 1, alpha, link) >= \
                exact_time(small, n, want - 1, alpha, link)


def tie_alpha(small, large, n, link, k):
    """(alpha, x): the k-th int alpha at which ``small`` and ``large`` tie at the int size x."""
    a0, a1 = coefficients(small, n)
    b0, b1 = coefficients(large, n)
    d, e = a1 - b1, b0 - a0                    # x = e x alpha x link / d
    num = e * link * d.denominator
    g = math.gcd(num, d.numerator)
    return k * (d.numerator // g), k * (num // g)


tie_pairs = st.sampled_from([("one_shot", "two_shot"), ("one_shot", "ring")])
tie_cases = st.tuples(st.one_of(st.integers(3, 40), st.sampled_from([64, 72, 100, 1000, 4096])),
                      st.one_of(st.integers(1, 60), st.sampled_from([450, 900, 997, 10**4])),
                      st.integers(1, 40))
# found by comparing float formulas with the exact ones: each is an exact tie that a float
# computation puts a byte (or the winner) on the wrong side
FLOAT_TRAPS = [(3, 1, 450), (3, 2, 1), (3, 2, 25), (5, 4, 3), (5, 8, 3), (5, 52, 3)]


@pytest.mark.rubric("crossover")
@given(case=tie_cases, pair=tie_pairs)
def test_crossover_on_exact_ties(case, pair):
    """Rules: Exact ties; Crossover

    alpha is chosen so the two lines meet at an integer size: the answer is one byte past it.
    """
    n, link, k = case
    small, large = pair
    alpha, x = tie_alpha(small, large, n, link, k)
    assume(alpha <= 10**6)
    assert exact_time(small, n, x, alpha, link) == exact_time(large, n, x, alpha, link)
    got = m.crossover_bytes(small, large, n, alpha, link)
    assert got == x + 1, (
        f"{small} and {large} tie exactly at {x} bytes (n={n}, alpha={alpha}, link={link}): "
        f"the crossover is {x + 1}, got {got!r}")


@pytest.mark.rubric("crossover")
@pytest.mark.parametrize("n,alpha,link", FLOAT_TRAPS)
def test_float_traps(n, alpha, link):
    """Rules: Exact ties; Crossover"""
    for small, large in (("one_shot", "two_shot"), ("one_shot", "ring")):
        want = truth_crossover(small, large, n, alpha, link)
        got = m.crossover_bytes(small, large, n, alpha, link)
        assert got == want, f"crossover_bytes({small!r}, {large!r}, {n}, {alpha}, {link})"
    x = Fraction(alpha * n * link, (n - 1) * (n - 2))
    if x.denominator == 1:
        assert m.best_allreduce(n, int(x), alpha, link) == "one_shot", \
            f"one-shot and two-shot tie exactly at {int(x)} bytes: fewer steps win"


@pytest.mark.rubric("crossover")
def test_crossover_never_and_always():
    """Rule: Crossover"""
    for n in (2, 3, 8):
        assert m.crossover_bytes("ring", "ring", n, 10, 10) is None, \
            "an algorithm never beats itself"
        assert m.crossover_bytes("two_shot", "ring", n, 10, 10) is None
        if n > 2:
            assert m.crossover_bytes("two_shot", "one_shot", n, 10, 10) is None, \
                "one-shot is faster for small messages only: it does not stay faster"
    assert m.crossover_bytes("two_shot", "one_shot", 2, 10, 10) == 1, \
        "on two GPUs one-shot moves two-shot's bytes in one step: faster at every size"
    assert m.crossover_bytes("ring", "two_shot", 2, 10, 10) is None, "identical on two GPUs"
    assert m.crossover_bytes("ring", "two_shot", 3, 10, 10) == 1
    assert m.crossover_bytes("ring", "two_shot", 3, 0, 10) is None, \
        "with no latency ring and two-shot only tie"
    assert m.crossover_bytes("one_shot", "two_shot", 8, 0, 10) == 1


@pytest.mark.rubric("crossover")
@given(n=gpus, s=sizes, alpha=int_alphas, link=int_links)
def test_best_allreduce_exact(n, s, alpha, link):
    """Rule: Exact ties"""
    times = {a: exact_time(a, n, s, alpha, link) for a in ALGORITHMS}
    best = min(ALGORITHMS, key=lambda a: times[a])     # ALGORITHMS is in tie order
    assert m.best_allreduce(n, s, alpha, link) == best, f"times {times}"


@pytest.mark.rubric("crossover")
@given(case=tie_cases)
def test_best_allreduce_at_exact_ties(case):
    """Rule: Exact ties"""
    n, link, k = case
    alpha, x = tie_alpha("one_shot", "two_shot", n, link, k)
    assume(alpha <= 10**6)
    assert m.best_allreduce(n, x, alpha, link) == "one_shot", (
        f"one-shot and two-shot tie at {x} bytes (n={n}, alpha={alpha}, link={link}): "
        "the fewer steps win")
    assert m.best_allreduce(n, x + 1, alpha, link) == "two_shot"


@pytest.mark.rubric("crossover")
def test_exact_functions_refuse_floats_and_bools():
    """Rule: Bad input"""
    for args in [("one_shot", "two_shot", 8, 3000.0, 450), ("one_shot", "two_shot", 8, 3000, 450.0),
                 ("one_shot", "two_shot", 8, True, 450), ("one_shot", "two_shot", 8, -1, 450),
                 ("one_shot", "two_shot", 8, 1, 0), ("one_shot", "tree", 8, 1, 1),
                 ("one_shot", "two_shot", 1, 1, 1)]:
        with pytest.raises(ValueError):
            m.crossover_bytes(*args)
    for args in [(8, 1, 3000.0, 450), (8, -1, 1, 1), (8, 1, 1, False), (1, 1, 1, 1)]:
        with pytest.raises(ValueError):
            m.best_allreduce(*args)


# =====================================================================================
# tp_count
# =====================================================================================
@pytest.mark.rubric("tp_count")
@pytest.mark.parametrize("name", dense_configs())
def test_every_shipped_config(name):
    """Rules: Two all-reduces per layer; Message size"""
    cfg = config(name)
    heads, layers, h = cfg["num_attention_heads"], cfg["num_hidden_layers"], cfg["hidden_size"]
    for tp in (1, 2, 4, 8, 16):
        if heads % tp:
            with pytest.raises(ValueError):
                m.allreduces_per_token(cfg, tp)
            continue
        want = 0 if tp == 1 else 2 * layers
        assert m.allreduces_per_token(cfg, tp) == want, f"{name} at TP {tp}: {layers} layers"
    for batch, act in ((1, 2), (7, 1), (256, 4)):
        assert m.allreduce_bytes(cfg, batch, act) == batch * h * act, \
            f"{name}: batch {batch} x hidden {h} x {act} bytes"


@pytest.mark.rubric("tp_count")
def test_count_ignores_the_batch_and_bytes_ignore_tp():
    """Rules: Two all-reduces per layer; Message size"""
    cfg = config(LLAMA_70B)
    assert m.allreduces_per_token(cfg, 8) == 160
    assert m.allreduce_bytes(cfg, 1) == 16384, "one token of a 70B model: 8192 x 2 bytes"
    assert m.allreduce_bytes(cfg, 3) == 3 * 16384


@pytest.mark.rubric("tp_count")
def test_tp_and_config_bad_input():
    """Rule: Bad input"""
    cfg = config(LLAMA_405B)
    for tp in (0, -8, 3, 256, True, 8.0, "8"):
        with pytest.raises(ValueError):
            m.allreduces_per_token(cfg, tp)
    for key in ("num_hidden_layers", "num_attention_heads"):
        broken = dict(cfg)
        del broken[key]
        with pytest.raises(ValueError):
            m.allreduces_per_token(broken, 8)
    broken = dict(cfg, hidden_size=0)
    with pytest.raises(ValueError):
        m.allreduce_bytes(broken, 1)
    for args in [(0, 2), (1, 0), (True, 2), (1, 2.0), (-1, 2)]:
        with pytest.raises(ValueError):
            m.allreduce_bytes(cfg, *args)


def not_positive_ints(value):
    """What the prompt refuses for a config field of ``value``: a float (even a whole one), a
    bool, a string, None, zero and a negative."""
    return [float(value), float(value) + 0.5, True, False, str(value), None, 0, -value]


@pytest.mark.rubric("tp_count")
def test_config_fields_must_be_positive_ints():
    """Rule: Bad input"""
    cfg = config(LLAMA_405B)
    for key, tps in (("num_hidden_layers", (2, 8)), ("num_attention_heads", (1, 8))):
        for bad in not_positive_ints(cfg[key]):
            for tp in tps:
                with pytest.raises(ValueError):
                    m.allreduces_per_token(dict(cfg, **{key: bad}), tp)
    for bad in not_positive_ints(cfg["hidden_size"]):
        with pytest.raises(ValueError):
            m.allreduce_bytes(dict(cfg, hidden_size=bad), 1)
    broken = dict(cfg)
    del broken["hidden_size"]
    with pytest.raises(ValueError):
        m.allreduce_bytes(broken, 1)


# =====================================================================================
# step_model
# =====================================================================================
def truth_step(cfg, batch, tp, pp, step_bytes, hbm, alpha, link, act=2):
    s = batch * cfg["hidden_size"] * act
    t = Fraction(step_bytes) / (tp * Fraction(hbm))
    if tp > 1:
        fastest = min(exact_time(a, tp, s, alpha, link) for a in ALGORITHMS)
        t += 2 * cfg["num_hidden_layers"] * fastest
    return t + (pp - 1) * (Fraction(alpha) + Fraction(s) / Fraction(link))


layouts = st.sampled_from([(1, 1), (2, 1), (4, 1), (8, 1), (1, 2), (1, 8), (2, 2), (4, 2), (2, 4),
                           (16, 1), (8, 2), (1, 16)])


@pytest.mark.rubric("step_model")
@given(name=st.sampled_from([LLAMA_70B, LLAMA_405B, "Qwen--Qwen3-32B"]), batch=st.integers(1, 1024),
       layout=layouts, step_bytes=st.floats(0, 2e12), hbm=st.sampled_from([2000, 3350, 4800, 8000]),
       alpha=alphas, link=links, act=st.sampled_from([1, 2, 4]))
def test_step_time_formula(name, batch, layout, step_bytes, hbm, alpha, link, act):
    """Rules: Step time; Pipeline stages"""
    cfg = config(name)
    tp, pp = layout
    assume(cfg["num_attention_heads"] % tp == 0)
    got = m.step_time_ns(cfg, batch, tp, pp, step_bytes, hbm, alpha, link, act)
    close(got, truth_step(cfg, batch, tp, pp, step_bytes, hbm, alpha, link, act),
          f"step_time_ns({name}, batch={batch}, tp={tp}, pp={pp}, step_bytes={step_bytes}, "
          f"hbm={hbm}, alpha={alpha}, link={link}, act={act})")


@pytest.mark.rubric("step_model")
def test_fastest_allreduce_is_used_per_call():
    """Rule: Step time"""
    cfg = config(LLAMA_70B)
    for batch, want in ((1, "one_shot"), (64, "two_shot")):
        s = batch * 16384
        ar = exact_time(want, 8, s, 3000, 450)
        close(m.step_time_ns(cfg, batch, 8, 1, 0, 3350, 3000, 450), 160 * ar,
              f"batch {batch}: {s} bytes per all-reduce, {want} is the fastest")


@pytest.mark.rubric("step_model")
def test_pipeline_does_not_cut_the_read():
    """Rule: Pipeline stages"""
    cfg = config(LLAMA_405B)
    w = 405e9
    one = m.step_time_ns(cfg, 4, 1, 1, w, 4800, 0, 450)
    close(m.step_time_ns(cfg, 4, 1, 8, w, 4800, 0, 450), one + 7 * 4 * 32768 / 450,
          "PP 8: the same read, plus 7 hand-offs")
    close(m.step_time_ns(cfg, 4, 1, 126, w, 4800, 0, 450), one + 125 * 4 * 32768 / 450,
          "one layer per stage is allowed")
    for pp in (0, 127, True, 2.0):
        with pytest.raises(ValueError):
            m.step_time_ns(cfg, 4, 1, pp, w, 4800, 0, 450)
    for args in [(4, 8, 1, -1.0, 4800, 0, 450), (4, 8, 1, w, 0, 0, 450),
                 (4, 8, 1, w, 4800, -1, 450), (4, 8, 1, w, 4800, 0, 0), (0, 8, 1, w, 4800, 0, 450),
                 (4, 8, 1, float("nan"), 4800, 0, 450)]:
        with pytest.raises(ValueError):
            m.step_time_ns(cfg, *args)


@pytest.mark.rubric("step_model")
@given(batch=st.integers(1, 512), alpha=st.sampled_from([0, 1000, 3000, 20000, 10**6]),
       link=st.sampled_from([25, 50, 450, 900]),
       order=st.permutations([(1, 1), (2, 1), (4, 1), (8, 1), (1, 8), (4, 2), (2, 4)]))
@settings(max_examples=min(60, settings.default.max_examples))
def test_best_layout_is_the_shortest(batch, alpha, link, order):
    """Rule: Best layout"""
    cfg = config(LLAMA_70B)
    w = 140e9
    times = {lay: truth_step(cfg, batch, lay[0], lay[1], w, 3350, alpha, link) for lay in order}
    best = min(times.values())
    ranked = sorted(times.values())
    assume(len(ranked) < 2 or ranked[1] - ranked[0] > best * Fraction(1, 10**6))
    want = next(lay for lay in order if times[lay] == best)
    got = m.best_layout(cfg, batch, list(order), w, 3350, alpha, link)
    assert tuple(got) == want, f"step times {dict((k, float(v)) for k, v in times.items())}"


@pytest.mark.rubric("step_model")
def test_best_layout_ties_go_to_the_first():
    """Rule: Best layout"""
    cfg = config(LLAMA_70B)
    # nothing to read: TP 1 costs 0, every TP > 1 pays its all-reduces
    assert tuple(m.best_layout(cfg, 1, [(8, 1), (1, 1), (2, 1)], 0, 3350, 0, 450)) == (1, 1)
    assert tuple(m.best_layout(cfg, 1, [(4, 1), (4, 1)], 1e9, 3350, 10, 450)) == (4, 1)
    lays = [(2, 1), (1, 2)]
    # choose the read so TP 2 and PP 2 tie exactly: w/(2h) + 160 x AR(2) = w/h + hop
    ar = min(exact_time(a, 2, 16384, 0, 256) for a in ALGORITHMS)
    hop = Fraction(16384, 256)
    w = 2 * 4096 * (160 * ar - hop)
    assert w > 0
    got = m.best_layout(cfg, 1, lays, float(w), 4096, 0, 256)
    assert tuple(got) == (2, 1), "an exact tie goes to the layout listed first"
    got = m.best_layout(cfg, 1, lays[::-1], float(w), 4096, 0, 256)
    assert tuple(got) == (1, 2), "an exact tie goes to the layout listed first"
    for bad in ([], [(8,)], [(8, 1, 1)], [8], [(3, 1)], "81"):
        with pytest.raises(ValueError):
            m.best_layout(cfg, 1, bad, 1e9, 3350, 10, 450)


@pytest.mark.rubric("step_model")
def test_step_functions_refuse_a_bad_config():
    """Rule: Bad input"""
    cfg = config(LLAMA_405B)
    args = (1, 8, 2, 405e9, 4800, 3000, 450)
    for key in ("hidden_size", "num_hidden_layers", "num_attention_heads"):
        for bad in [*not_positive_ints(cfg[key]), "missing"]:
            broken = dict(cfg, **{key: bad})
            if bad == "missing":
                del broken[key]
            with pytest.raises(ValueError):
                m.step_time_ns(broken, *args)
            with pytest.raises(ValueError):
                m.best_layout(broken, 1, [(8, 2)], 405e9, 4800, 3000, 450)


@pytest.mark.rubric("step_model")
@given(c=st.floats(0, 1), f=st.floats(1, 1e3))
def test_slowdown(c, f):
    """Rule: Slowdown"""
    close(m.step_slowdown(c, f), (1 - c) + c * f, f"step_slowdown({c}, {f})")


@pytest.mark.rubric("step_model")
def test_slowdown_bad_input():
    """Rules: Slowdown; Bad input"""
    assert m.step_slowdown(1.0, 4) == pytest.approx(4.0), "a step that is all links slows 4x"
    assert m.step_slowdown(0.5, 1) == pytest.approx(1.0)
    for args in [(-0.1, 2), (1.1, 2), (0.5, 0.5), (float("nan"), 2), (0.5, float("inf")),
                 (True, 2), (0.5, None)]:
        with pytest.raises(ValueError):
            m.step_slowdown(*args)
