"""Hidden tests for goodput: each rule and each trap, exact against an independent oracle."""

from __future__ import annotations

import math
from fractions import Fraction

import hypothesis.strategies as st
import pytest
from hypothesis import assume, example, given, settings

from graders.hidden.goodput import oracle
from graders.impl import kata_impl
from tests.goodput.helpers import H100_SXM, H200_SXM, LLAMA8, LLAMA70, as_pair, close, config, gpu

gp = kata_impl("goodput")

DENSE = [LLAMA8, LLAMA70, "Qwen--Qwen3-32B", "Qwen--Qwen2.5-7B", "google--gemma-2-9b-it",
         "google--gemma-3-1b-it", "meta-llama--Meta-Llama-3.1-405B"]
NOT_DENSE = ["Qwen--Qwen3-30B-A3B", "mistralai--Mixtral-8x7B-v0.1", "deepseek-ai--DeepSeek-V3",
             "deepseek-ai--DeepSeek-V2-Lite", "openai--gpt-oss-20b"]
GPUS = ["nvidia-a100-sxm-80gb", "nvidia-b200-hgx", "nvidia-h100-pcie-80gb", H100_SXM, H200_SXM]
NOT_NUMBERS = [True, False, float("nan"), float("inf"), "1", None]


def exact_close(got, want: Fraction, what: str) -> None:
    close(got, float(want), what)


# ================================================================== step line
@pytest.mark.rubric("step_line")
@pytest.mark.parametrize("name", DENSE)
@given(gpu_id=st.sampled_from(GPUS), ctx=st.integers(0, 200_000),
       wb=st.sampled_from([0, 0.5, 1, 2, 4]), kb=st.sampled_from([0, 0.5, 1, 2]),
       overhead=st.one_of(st.just(0.0), oracle.TIMES))
@settings(max_examples=min(20, settings.default.max_examples))
def test_step_line_matches_the_template(name, gpu_id, ctx, wb, kb, overhead):
    """Rule: Step line"""
    want0, want1 = oracle.line(config(name), gpu(gpu_id), ctx, wb, kb, overhead)
    got = gp.step_line(config(name), gpu(gpu_id), ctx, wb, kb, overhead)
    assert isinstance(got, (tuple, list)) and len(got) == 2, f"(t0, t1), got {got!r}"
    exact_close(got[0], want0, f"t0 of {name} on {gpu_id} (weights {wb} B, overhead {overhead})")
    exact_close(got[1], want1, f"t1 of {name} on {gpu_id} at {ctx} tokens, KV {kb} B")


@pytest.mark.rubric("step_line")
def test_step_line_reads_head_dim_and_kv_heads_defaults():
    """Rule: Step line"""
    base = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
            "intermediate_size": 100, "vocab_size": 50}
    g = {"memory_bandwidth_gb_s": 1}
    for extra in [{}, {"num_key_value_heads": None, "head_dim": None},
                  {"num_key_value_heads": 2}, {"head_dim": 32}, {"num_key_value_heads": 1, "head_dim": 8},
                  {"num_experts": 0, "kv_lora_rank": None},
                  {"num_local_experts": None, "n_routed_experts": 0, "num_experts": None}]:
        cfg = {**base, **extra}
        want0, want1 = oracle.line(cfg, g, 10, 2, 2, 0)
        got0, got1 = gp.step_line(cfg, g, 10)
        exact_close(got0, want0, f"t0 of {cfg} (kv heads absent or null: q; head_dim absent or "
                                 f"null: H // q; expert counts 0 or null and kv_lora_rank null: dense)")
        exact_close(got1, want1, f"t1 of {cfg}")


@pytest.mark.rubric("step_line")
def test_step_line_takes_zero_sizes():
    """Rule: Bad input"""
    cfg, g = config(LLAMA8), gpu(H100_SXM)
    got = gp.step_line(cfg, g, 0, 0, 0, 0.0)
    assert tuple(got) == (0.0, 0.0), f"zeros are not bad input in step_line: (0.0, 0.0), got {got!r}"
    want0, want1 = oracle.line(cfg, g, 0, 2, 2, 0)
    got0, got1 = gp.step_line(cfg, g, 0)
    exact_close(got0, want0, "t0 at ctx_len 0")
    assert got1 == 0, f"ctx_len 0 reads no KV: t1 = 0, got {got1!r}"


@pytest.mark.rubric("step_line")
@pytest.mark.parametrize("name", NOT_DENSE)
def test_step_line_rejects_moe_and_mla(name):
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        gp.step_line(config(name), gpu(H100_SXM), 1000)


@pytest.mark.rubric("step_line")
def test_step_line_bad_numbers():
    """Rule: Bad input"""
    cfg, g = config(LLAMA8), gpu(H100_SXM)
    for bad in NOT_NUMBERS + [-1]:
        for args in [(bad, 2, 2, 0.0), (10, bad, 2, 0.0), (10, 2, bad, 0.0), (10, 2, 2, bad)]:
            with pytest.raises(ValueError):
                gp.step_line(cfg, g, *args)
    for ctx in [10.0, -5]:
        with pytest.raises(ValueError):
            gp.step_line(cfg, g, ctx)
    moe = {**cfg, "num_local_experts": 8}
    with pytest.raises(ValueError):
        gp.step_line(moe, g, 10)
    mla = {**cfg, "kv_lora_rank": 512}
    with pytest.raises(ValueError):
        gp.step_line(mla, g, 10)


# ================================================================== shared step
@pytest.mark.rubric("shared_step")
@given(oracle.lines_near_target(), st.integers(-2, 2))
@example((0.003, 0.0002, 0.0292, 131), 0)
@example((0.5, 0.25, 1.5, 4), 0)
def test_speeds_share_one_step(case, shift):
    """Rules: One step for everyone; Exact comparisons"""
    t0, t1, tpot, b_star = case
    b = max(1, b_star + shift)
    t = oracle.step(t0, t1, b)
    got = gp.speeds(t0, t1, b, tpot)
    assert isinstance(got, (tuple, list)) and len(got) == 3, f"three numbers, got {got!r}"
    user, total, good = got
    what = f"speeds(t0={t0!r}, t1={t1!r}, batch={b}, tpot={tpot!r})"
    exact_close(user, 1 / t, f"{what}: per-user tokens/s is 1 / t(B)")
    exact_close(total, b / t, f"{what}: the batch's tokens/s is B / t(B)")
    if t <= Fraction(tpot):
        exact_close(good, b / t, f"{what}: t(B) = {t} <= tpot exactly, goodput is B / t(B)")
    else:
        assert good == 0, f"{what}: t(B) = {t} > tpot exactly: every sequence misses, goodput 0, got {good!r}"


@pytest.mark.rubric("shared_step")
def test_doubling_the_batch_raises_throughput_and_zeroes_goodput():
    """Rule: One step for everyone"""
    t0, t1 = 0.008, 0.0001                     # 8 ms fixed, 0.1 ms per sequence
    u1, th1, g1 = gp.speeds(t0, t1, 40, 0.0125)
    u2, th2, g2 = gp.speeds(t0, t1, 80, 0.0125)
    assert th2 > th1 * 1.3 and u2 < u1, "doubling the batch: more tokens/s in all, fewer per user"
    close(g1, th1, "batch 40 steps in 12 ms and meets 12.5 ms")
    assert g2 == 0.0, f"batch 80 steps in 16 ms > 12.5 ms: goodput 0, got {g2!r}"


@pytest.mark.rubric("shared_step")
def test_speeds_bad_input():
    """Rule: Bad input"""
    for bad in NOT_NUMBERS + [-0.5]:
        for args in [(bad, 0.1, 1, 1.0), (0.1, bad, 1, 1.0), (0.1, 0.1, 1, bad)]:
            with pytest.raises(ValueError):
                gp.speeds(*args)
    for b in [0, -1, 1.0, True, None]:
        with pytest.raises(ValueError):
            gp.speeds(0.1, 0.1, b, 1.0)
    with pytest.raises(ValueError):
        gp.speeds(0.0, 0.0, 1, 1.0)
    with pytest.raises(ValueError):
        gp.speeds(0.1, 0.1, 1, 0)


# ================================================================== best batch
@pytest.mark.rubric("best_batch")
@given(oracle.lines_near_target(), st.one_of(st.integers(1, 400), st.integers(1, 20)))
@example((0.003, 0.0002, 0.0292, 131), 1000)
@example((0.0, 0.25, 1.0, 4), 100)
@example((0.5, 0.0, 1.0, 1), 7)
@example((0.5, 0.0, 0.4, 1), 7)
@example((0.5, 0.25, 0.6, 1), 9)
def test_best_batch_is_the_largest_feasible(case, cap):
    """Rules: Goodput-optimal batch; Exact comparisons"""
    t0, t1, tpot, _ = case
    want = oracle.best_batch(t0, t1, tpot, cap)
    got = gp.best_batch(t0, t1, tpot, cap)
    assert isinstance(got, int) and not isinstance(got, bool), f"an int, got {got!r}"
    assert got == want, (f"best_batch(t0={t0!r}, t1={t1!r}, tpot={tpot!r}, max_batch={cap}): the "
                         f"largest B in 1..{cap} with t0 + B t1 <= tpot exactly is {want}, got {got}")


@pytest.mark.rubric("best_batch")
def test_best_batch_has_the_largest_goodput():
    """Rule: Goodput-optimal batch"""
    t0, t1, tpot, cap = 0.004480393093731343, 0.00016025997373134328, 0.02, 200
    b = gp.best_batch(t0, t1, tpot, cap)
    goods = [gp.speeds(t0, t1, k, tpot)[2] for k in range(1, cap + 1)]
    assert goods[b - 1] == max(goods) and all(g < goods[b - 1] for g in goods[:b - 1]), \
        f"best_batch {b} must have the largest goodput over 1..{cap}"


@pytest.mark.rubric("best_batch")
def test_best_batch_bad_input():
    """Rule: Bad input"""
    for cap in [0, -3, 2.0, True]:
        with pytest.raises(ValueError):
            gp.best_batch(0.1, 0.1, 1.0, cap)
    for bad in NOT_NUMBERS + [-1.0]:
        with pytest.raises(ValueError):
            gp.best_batch(0.1, bad, 1.0, 10)
        with pytest.raises(ValueError):
            gp.best_batch(0.1, 0.1, bad, 10)
    with pytest.raises(ValueError):
        gp.best_batch(0.0, 0.0, 1.0, 10)


# ================================================================== Little's law
@st.composite
def loads(draw):
    n = draw(st.integers(1, 5000), label="output_len")
    t1 = draw(st.one_of(st.just(0.0), oracle.TIMES), label="t1") / 1000
    t0 = draw(oracle.TIMES, label="t0") / 100
    target = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0, 1.5]), label="load")
    lam = target / (n * t1) if t1 else draw(oracle.TIMES, label="lambda")
    if lam != lam or lam == math.inf:
        lam = 1.0
    pre = draw(st.one_of(st.just(0.0), oracle.TIMES), label="prefill") / 10
    return lam, n, t0, t1, pre


@pytest.mark.rubric("littles_law")
@given(loads(), st.one_of(st.none(), st.integers(0, 10**6)))
@example((1.0, 4, 0.5, 0.25, 0.0), None)
@example((3.0, 1, 0.001, 1 / 3, 0.0), None)
@example((1.0, 2, 0.5, 0.25, 0.0), 2)
@example((1.0, 2, 0.5, 0.25, 0.0), 1)
@example((0.1, 1, 20.0, 0.0, 0.0), 2)
def test_residency_is_the_fixed_point(case, cap):
    """Rules: Little's law residency; Exact comparisons"""
    lam, n, t0, t1, pre = case
    want = oracle.residency(lam, n, t0, t1, pre, cap)
    got = gp.resident_sequences(lam, n, t0, t1, pre, cap)
    what = (f"resident_sequences(arrival_rate={lam!r}, output_len={n}, t0={t0!r}, t1={t1!r}, "
            f"prefill_s={pre!r}, max_seqs={cap})")
    load = Fraction(lam) * n * Fraction(t1)
    if want is None:
        why = "lambda n t1 >= 1: no fixed point" if load >= 1 else f"N > max_seqs = {cap}"
        assert got is None, f"{what}: {why} (exactly), expected None, got {got!r}"
    else:
        assert got is not None, f"{what}: lambda n t1 = {float(load)!r} < 1 exactly, N = {float(want)!r} fits"
        exact_close(got, want, f"{what}: N = lambda (prefill + n t0) / (1 - lambda n t1)")


@pytest.mark.rubric("littles_law")
@given(loads())
@settings(max_examples=min(50, settings.default.max_examples))
def test_residency_cap_refuses_exactly_what_exceeds_it(case):
    """Rules: Little's law residency; Exact comparisons

    Every cap around the fixed point N (0 included: a count, not "no cap") leaves N alone
    when N <= cap and refuses it when N > cap."""
    lam, n, t0, t1, pre = case
    free = oracle.residency(lam, n, t0, t1, pre, None)
    assume(free is not None)
    for cap in sorted({0, 1, math.floor(free), math.ceil(free)}):
        got = gp.resident_sequences(lam, n, t0, t1, pre, cap)
        what = (f"resident_sequences(arrival_rate={lam!r}, output_len={n}, t0={t0!r}, "
                f"t1={t1!r}, prefill_s={pre!r}, max_seqs={cap}) with N = {float(free)!r}")
        if free > cap:
            assert got is None, f"{what}: N > max_seqs, expected None, got {got!r}"
        else:
            assert got is not None, f"{what}: N <= max_seqs fits, got None"
            exact_close(got, free, what)


@pytest.mark.rubric("littles_law")
@given(loads())
def test_residency_solves_its_own_equation(case):
    """Rule: Little's law residency"""
    lam, n, t0, t1, pre = case
    assume(Fraction(lam) * n * Fraction(t1) <= Fraction(99, 100))
    got = gp.resident_sequences(lam, n, t0, t1, pre)
    assert got is not None
    rhs = lam * (pre + n * (t0 + got * t1))
    assert got == pytest.approx(rhs, rel=1e-9, abs=1e-300), \
        f"N = {got!r} must equal lambda (prefill + n t(N)) = {rhs!r}: the duration depends on N"


@pytest.mark.rubric("littles_law")
def test_residency_bad_input():
    """Rule: Bad input"""
    for bad in NOT_NUMBERS + [-1.0]:
        for args in [(bad, 10, 0.1, 0.1), (1.0, 10, bad, 0.1), (1.0, 10, 0.1, bad)]:
            with pytest.raises(ValueError):
                gp.resident_sequences(*args)
        with pytest.raises(ValueError):
            gp.resident_sequences(1.0, 10, 0.1, 0.01, bad)
    for n in [0, 2.0, True]:
        with pytest.raises(ValueError):
            gp.resident_sequences(1.0, n, 0.1, 0.01)
    for cap in [-1, 2.5, 13.0, True]:
        with pytest.raises(ValueError):
            gp.resident_sequences(1.0, 10, 0.1, 0.01, 0.0, cap)
    for lam in [1.0, 0.0]:   # a load of 0 does not excuse a step of no time
        with pytest.raises(ValueError):
            gp.resident_sequences(lam, 10, 0.0, 0.0)


# ================================================================== continuous batching
def _gain(lengths, b):
    got = as_pair(gp.continuous_gain(lengths, b), f"continuous_gain({lengths}, {b})")
    assert got[1] > 0 and math.gcd(*got) == 1, f"lowest terms, positive denominator: got {got}"
    return Fraction(*got)


@pytest.mark.rubric("continuous_gain")
@given(oracle.length_dists(max_support=3, max_len=60), st.integers(1, 4))
@example({100: 1, 1000: 1}, 3)
def test_gain_matches_every_tuple_of_draws(lengths, b):
    """Rule: Continuous batching gain"""
    want = oracle.gain_enumerated(lengths, b)
    got = _gain(lengths, b)
    assert got == want, f"continuous_gain({lengths}, {b}): E[max]/E[L] = {want}, got {got}"


@pytest.mark.rubric("continuous_gain")
@given(oracle.length_dists(), st.integers(1, 96))
@example({1: 999, 10_000: 1}, 64)
@example({7: 5}, 50)
def test_gain_for_larger_batches(lengths, b):
    """Rule: Continuous batching gain"""
    want = oracle.gain_tail(lengths, b)
    got = _gain(lengths, b)
    assert got == want, f"continuous_gain({lengths}, {b}): E[max]/E[L] = {want}, got {got}"
    assert 1 <= got <= Fraction(max(lengths)) / (Fraction(sum(k * w for k, w in lengths.items()),
                                                          sum(lengths.values()))), got


@pytest.mark.rubric("continuous_gain")
def test_gain_bad_input():
    """Rule: Bad input"""
    for lengths in [{}, {0: 1}, {-3: 1}, {5: 0}, {5: -1}, {5.0: 1}, {5: 1.0}, {True: 1}, {5: True},
                    [(5, 1)], None]:
        with pytest.raises(ValueError):
            gp.continuous_gain(lengths, 4)
    for b in [0, -1, 2.0, True]:
        with pytest.raises(ValueError):
            gp.continuous_gain({5: 1}, b)


# ================================================================== KV growth
ADMISSIONS = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 30), st.integers(1, 40)),
                      max_size=8)


@pytest.mark.rubric("kv_growth")
@given(ADMISSIONS)
@example([(0, 0, 10), (5, 0, 2)])
@example([(0, 10, 5), (5, 10, 5)])
@example([(3, 4, 1), (0, 0, 4)])
def test_kv_peak_matches_a_step_by_step_count(adm):
    """Rule: KV grows after admission"""
    want = oracle.kv_peak(adm)
    for given_as in ([list(a) for a in adm], tuple(adm)):
        got = gp.kv_peak_tokens(given_as)
        assert got == want, (f"kv_peak_tokens({given_as}): counting every step, the most held "
                             f"at once is {want}, got {got!r}")


@st.composite
def pool_cases(draw):
    """A cohort and a pool on, or one token either side of, the peak of some cohort size."""
    p = draw(st.integers(0, 30), label="prompt")
    n = draw(st.integers(1, 40), label="output")
    spacing = draw(st.integers(0, 8), label="spacing")
    cap = draw(st.integers(0, 25), label="max_seqs")
    size = draw(st.integers(0, 30), label="cohort on the edge")
    edge = oracle.kv_peak([(i * spacing, p, n) for i in range(size)])
    pool = max(0, edge + draw(st.integers(-1, 1), label="delta"))
    return pool, p, n, spacing, cap


@pytest.mark.rubric("kv_growth")
@given(pool_cases())
@example((2100, 100, 2000, 0, 5))
@example((99, 0, 10, 1, 25))
@example((29, 0, 10, 2, 25))
@example((56, 1, 10, 2, 25))
@example((35, 1, 10, 2, 25))
def test_batch_from_the_pool_matches_the_simulated_peak(case):
    """Rules: Batch from the pool; KV grows after admission"""
    pool, p, n, spacing, cap = case
    want = oracle.pool_batch(pool, p, n, spacing, cap)
    got = gp.max_batch_for_pool(pool, p, n, spacing, cap)
    assert got == want, (f"max_batch_for_pool(pool={pool}, prompt={p}, output={n}, "
                         f"spacing={spacing}, max_seqs={cap}): {want} by simulating each cohort, "
                         f"got {got!r}")


@pytest.mark.rubric("kv_growth")
def test_staggering_nearly_doubles_the_batch():
    """Rule: Batch from the pool"""
    pool, p, n = 1_000_000, 50, 8000
    together = gp.max_batch_for_pool(pool, p, n, 0, 10**6)
    assert together == pool // (p + n), f"admitted together: pool // (p + n), got {together}"
    spacing = n // (2 * together)
    staggered = gp.max_batch_for_pool(pool, p, n, spacing, 10**6)
    assert staggered > 1.7 * together, f"staggered by {spacing}: {staggered} against {together}"


@pytest.mark.rubric("kv_growth")
def test_kv_growth_bad_input():
    """Rule: Bad input"""
    for adm in [[(0, 1)], [(0, 1, 0)], [(-1, 1, 1)], [(0, -1, 1)], [(0, 1.0, 1)], [(True, 1, 1)],
                [5], None, [(0, 1, 2, 3)]]:
        with pytest.raises(ValueError):
            gp.kv_peak_tokens(adm)
    for args in [(-1, 1, 1, 0, 5), (10, -1, 1, 0, 5), (10, 1, 0, 0, 5), (10, 1, 1, -1, 5),
                 (10, 1, 1, 0, -1), (10.0, 1, 1, 0, 5), (10, 1, 1, True, 5), (10, 1, 1, 0, 5.0)]:
        with pytest.raises(ValueError):
            gp.max_batch_for_pool(*args)


# ================================================================== upgrade
def _dtypes(a, b):
    return sorted(set(gpu(a)["tensor_tflops"]) & set(gpu(b)["tensor_tflops"]))


@pytest.mark.rubric("upgrade")
@pytest.mark.parametrize("name", [LLAMA8, LLAMA70, "Qwen--Qwen3-32B"])
@given(old=st.sampled_from(GPUS), new=st.sampled_from(GPUS), ctx=st.integers(1, 65_536),
       wb=st.sampled_from([0.5, 1, 2]), kb=st.sampled_from([0.5, 1, 2]), data=st.data())
@settings(max_examples=min(25, settings.default.max_examples))
def test_three_regimes_match_the_model(name, old, new, ctx, wb, kb, data):
    """Rule: Three regimes"""
    cfg = config(name)
    _, kv_tok = oracle.dense_counts(cfg)
    per_seq = ctx * kv_tok * Fraction(kb)
    pools = [data.draw(st.one_of(st.integers(1, 64), st.integers(1, 2000)), label=f"seqs_{i}")
             * per_seq + data.draw(st.integers(0, int(per_seq) - 1 if per_seq > 1 else 0), label="slack")
             for i in range(2)]
    pools = [int(p) if p == int(p) else float(p) for p in pools]
    dtype = data.draw(st.sampled_from(_dtypes(old, new)), label="dtype")
    got = gp.upgrade_gains(cfg, gpu(old), gpu(new), ctx, pools[0], pools[1], wb, kb, dtype)
    what = f"upgrade_gains({name}, {old} -> {new}, ctx={ctx}, pools={pools}, {wb}, {kb}, {dtype})"
    assert isinstance(got, dict) and {"bandwidth", "compute", "capacity"} <= set(got), got
    lines = [oracle.line(cfg, gpu(g), ctx, wb, kb, 0) for g in (old, new)]
    t1_old, t1_new = (a + b for a, b in lines)
    exact_close(got["bandwidth"], t1_old / t1_new, f"{what}: bandwidth = t_old(1) / t_new(1)")
    peak = [Fraction(gpu(g)["tensor_tflops"][dtype]["dense"]) for g in (old, new)]
    exact_close(got["compute"], peak[1] / peak[0], f"{what}: compute = dense peak ratio")
    rates = []
    for (a, b), pool in zip(lines, pools):
        batch = math.floor(Fraction(pool) / per_seq)
        rates.append(batch / (a + batch * b))
    exact_close(got["capacity"], rates[1] / rates[0],
                f"{what}: capacity = tokens/s at each GPU's own KV-limited batch, new over old")


@pytest.mark.rubric("upgrade")
def test_upgrade_bad_input():
    """Rule: Bad input"""
    cfg, old, new = config(LLAMA8), gpu(H100_SXM), gpu(H200_SXM)
    per_seq = 4096 * 131_072
    ok = (4096, 10 * per_seq, 20 * per_seq)
    gp.upgrade_gains(cfg, old, new, *ok)
    for name in NOT_DENSE[:3]:
        with pytest.raises(ValueError):
            gp.upgrade_gains(config(name), old, new, *ok)
    with pytest.raises(ValueError):
        gp.upgrade_gains(cfg, old, new, 4096, per_seq - 1, 20 * per_seq)
    with pytest.raises(ValueError):
        gp.upgrade_gains(cfg, old, new, 4096, 10 * per_seq, per_seq - 1)
    with pytest.raises(ValueError):
        gp.upgrade_gains(cfg, old, gpu("nvidia-a100-sxm-80gb"), *ok, dtype="fp8")
    for args in [(0, 10 * per_seq, 20 * per_seq), (4096.0, 10 * per_seq, 20 * per_seq),
                 (4096, -1, 20 * per_seq), (4096, True, 20 * per_seq)]:
        with pytest.raises(ValueError):
            gp.upgrade_gains(cfg, old, new, *args)
    with pytest.raises(ValueError):
        gp.upgrade_gains(cfg, old, new, *ok, kv_bytes=0)
    with pytest.raises(ValueError):
        gp.upgrade_gains(cfg, old, new, *ok, weight_bytes=-1)
    free = gp.upgrade_gains(cfg, old, new, *ok, weight_bytes=0)
    close(free["bandwidth"], 4800 / 3350, "weight_bytes 0 is not bad input: decode at batch 1 "
          "reads only one sequence's KV, and the ratio is the bandwidths'")
