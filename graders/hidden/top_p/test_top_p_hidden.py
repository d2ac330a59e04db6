"""Hidden tests for top_p: the traps of KATAS.md section 5 and issue 4.

Oracles: the model of the prompt's rules in tests/top_p/helpers.py (distinct values in
decreasing order, masses of "tokens >= value"; it never sorts tokens, so no tie order can
leak into it), and properties that need no model (permuting the vocabulary permutes the
mask; a row's answer does not depend on the other rows).

Every p and u is kept at least helpers.CLEAR (1e-8) away from a boundary (a candidate
set's mass for p - 1e-6; a CDF step for u): float64 rounding over 128K terms is about
1e-11, so any float64 implementation of the prompt gets these cases right.

Statistical tests use fixed seeds and Pearson's chi-square at a false-alarm rate of 1e-6
each (three here and one public: under 4e-6 in all that a correct sampler would be flagged,
were the seeds drawn at random; with the seeds fixed the verdict never changes).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graders.impl import kata_impl
from graders.support import inputs
from tests.top_p import helpers as h

tp = kata_impl("top_p")
V = h.VOCAB_128K


def arr(*values):
    return np.array(values, dtype=np.float64)


def ints(*values):
    return np.array(values, dtype=np.int64)


# ------------------------------------------------------------------ strategies
ALPHABET = [-6.0, -2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.5, 8.0]


@st.composite
def tie_rows(draw, max_rows=5, max_vocab=24, neg_inf=True):
    """A (B, V) float32 batch from a few distinct values per row (ties everywhere), with
    optional -inf entries; every row has a finite logit."""
    rows = draw(st.integers(1, max_rows))
    vocab = draw(st.integers(1, max_vocab))
    out = np.empty((rows, vocab), dtype=np.float32)
    for b in range(rows):
        values = draw(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=4, unique=True))
        pool = np.array(values + ([-math.inf] if neg_inf and draw(st.booleans()) else []))
        # one byte per token picks its value (cheap to draw; shrinks towards values[0])
        picks = np.frombuffer(draw(st.binary(min_size=vocab, max_size=vocab)), dtype=np.uint8)
        row = pool[picks % len(pool)]
        if not np.isfinite(row).any():
            row[draw(st.integers(0, vocab - 1))] = values[0]
        out[b] = row
    return out


temperatures = st.sampled_from([0.05, 0.3, 0.7, 1.0, 1.0, 2.0, 5.0])
probabilities = st.one_of(st.sampled_from([1e-12, 0.05, 0.3, 0.5, 0.8, 0.9, 0.95, 0.999]),
                          st.floats(1e-6, 0.9999))


@st.composite
def params(draw, x, greedy_share=0.0, with_k=False, p_one_share=0.0):
    """Per-row temperature, top_p (cleared of the tolerance edge) and top_k."""
    rows, vocab = x.shape
    t = np.array([0.0 if draw(st.floats(0, 1, exclude_max=True)) < greedy_share else draw(temperatures)
                  for _ in range(rows)])
    k = (np.array([draw(st.one_of(st.just(0), st.integers(1, vocab + 2))) for _ in range(rows)],
                  dtype=np.int64) if with_k else None)
    p = []
    for b in range(rows):
        pb = (draw(st.sampled_from([1.0, 1.5])) if draw(st.floats(0, 1, exclude_max=True)) < p_one_share
              else draw(probabilities))
        p.append(h.clear_p(x[b], t[b], pb, 0 if k is None else int(k[b])) if t[b] > 0 else pb)
    return t, np.array(p), k


def clear_u(x, t, p, k, u):
    u = np.array(u, dtype=np.float64)
    for b in range(x.shape[0]):
        kb = 0 if k is None else int(k[b])
        while h.u_margin_row(x[b], t[b], p[b], kb, u[b]) <= h.CLEAR:
            u[b] = u[b] + 3 * h.CLEAR if u[b] < 0.5 else u[b] - 3 * h.CLEAR
    return u


def big_rows(seed, scales, bf16, offset=0.0):
    rng = np.random.default_rng(seed)
    return np.concatenate([h.rows_of(rng, 1, V, s, bf16=bf16, offset=offset) for s in scales])


def clear_ps(x, t, p, k=None):
    return np.array([h.clear_p(x[b], t[b], p[b], 0 if k is None else int(k[b]))
                     for b in range(x.shape[0])])


def check_against_model(x, t, p, k=None, what=""):
    got = tp.kept_mask(x, t, p, top_k=k) if k is not None else tp.kept_mask(x, t, p)
    h.check_mask(got, h.model_mask(x, t, p, k), x, t, p, k, what=what)
    return np.asarray(got)


# ================================================================== order_independent_ties
@pytest.mark.rubric("order_independent_ties")
@given(data=st.data())
def test_tied_rows_match_the_model_and_permute(data):
    """Rules: Ties; Nucleus; Order independence; Banned tokens"""
    x = data.draw(tie_rows())
    t, p, _ = data.draw(params(x))
    got = check_against_model(x, t, p, what="tie-heavy rows: ")
    perm = np.array(data.draw(st.permutations(range(x.shape[1]))), dtype=np.int64)
    h.check_mask(tp.kept_mask(x[:, perm], t, p), got[:, perm], x[:, perm], t, p,
                 what=f"columns permuted by {perm.tolist()}: mask must be permuted the same: ")


@pytest.mark.rubric("order_independent_ties")
@pytest.mark.parametrize("row", [[0.0, -0.0, -1.0], [-0.0, 0.0, -1.0], [-1.0, -0.0, 0.0, -0.0]])
@pytest.mark.parametrize("t", [0.0, 1.0])
def test_minus_zero_ties_with_zero(row, t):
    """The prompt: "two tokens are tied when their logits are equal", and -0.0 == 0.0; a
    key or comparison that orders -0.0 below 0.0 splits the tie."""
    x = np.array([row], dtype=np.float64)
    got = check_against_model(x, arr(t), arr(0.3), what="-0.0 and 0.0 are equal logits: ")
    zeros = np.array([v == 0.0 for v in row])
    assert np.array_equal(got[0] & zeros, zeros), (
        f"kept_mask({row}, T={t}, p=0.3) must keep every zero logit (tied at the maximum), "
        f"got {got[0].tolist()}")


@pytest.mark.rubric("order_independent_ties")
@pytest.mark.parametrize("low", [-1000.0, -5000.0, -1e6])
def test_a_row_is_judged_on_its_own_values(low):
    """The prompt: row b of the answer is a function of the values in row b. A softmax
    stabilised with the batch's maximum instead of the row's underflows a low row.

    Rule: Order independence
    """
    x = np.array([[low, low - 1.0, low - 3.0], [0.0, 0.0, 5.0]])
    t, p = arr(1.0, 1.0), arr(0.9, 0.9)
    together = check_against_model(x, t, p, what=f"a row near {low} beside a row near 0: ")
    alone = np.asarray(tp.kept_mask(x[:1], t[:1], p[:1]))
    assert np.array_equal(together[0], alone[0]), (
        f"row 0 {x[0].tolist()} kept {together[0].tolist()} beside row 1 but "
        f"{alone[0].tolist()} alone: a row's answer may not depend on the other rows")


@pytest.mark.rubric("order_independent_ties")
def test_bf16_128k_rows_match_the_model_under_permutation():
    """Rules: Order independence; Nucleus"""
    x = big_rows(11, [1.0, 2.5, 4.0], bf16=True)
    t = arr(1.0, 0.7, 1.3)
    p = clear_ps(x, t, arr(0.9, 0.5, 0.95))
    got = check_against_model(x, t, p, what="bf16 128K rows: ")
    rng = np.random.default_rng(12)
    for name, perm in [("reversed", np.arange(V)[::-1]), ("shuffled", rng.permutation(V))]:
        h.check_mask(tp.kept_mask(np.ascontiguousarray(x[:, perm]), t, p), got[:, perm],
                     x[:, perm], t, p, what=f"bf16 128K rows, vocabulary {name}: ")


@pytest.mark.rubric("order_independent_ties")
def test_float32_128k_rows_match_the_model():
    """Rules: Nucleus; Probabilities"""
    x = big_rows(13, [1.0, 3.0], bf16=False)
    t = arr(0.8, 1.6)
    p = clear_ps(x, t, arr(0.7, 0.92))
    check_against_model(x, t, p, what="float32 128K rows: ")


@pytest.mark.rubric("order_independent_ties")
@pytest.mark.parametrize("probs, p, kept", [
    ([0.5, 0.3, 0.15, 0.05], 0.8, 2),        # a float cumsum lands a hair below 0.8
    ([0.6, 0.2, 0.2], 0.6, 1),               # the first token alone has mass exactly p
    ([0.6, 0.2, 0.2], 0.61, 3),              # one 0.2 is needed, so both
    ([0.25, 0.25, 0.25, 0.25], 0.5, 4),      # one tie group
    ([0.1] * 10, 0.3, 10),
    ([0.7, 0.1, 0.1, 0.1], 0.7, 1),
    ([0.4, 0.3, 0.2, 0.1], 0.9, 3),
    ([0.4, 0.3, 0.2, 0.1], 0.95, 4),
    # the tolerance is exactly 1e-6, absolute: short by 5e-7 or 9e-7 is enough, 1.5e-6 is not
    ([0.5, 0.3 - 5e-7, 0.2 + 5e-7], 0.8, 2),
    ([0.3 - 9e-7, 0.25, 0.25, 0.2 + 9e-7], 0.3, 1),
    ([0.5, 0.3 - 1.5e-6, 0.2 + 1.5e-6], 0.8, 3),
])
def test_tolerance_and_ties_on_exact_probabilities(probs, p, kept):
    """Rules: Tolerance; Nucleus"""
    rng = np.random.default_rng(len(probs))
    perm = rng.permutation(len(probs))
    x = np.log(np.array([probs], dtype=np.float64))[:, perm]
    got = np.asarray(tp.kept_mask(x, arr(1.0), arr(p)))
    want = h.model_mask(x, arr(1.0), arr(p))
    assert int(want.sum()) == kept
    h.check_mask(got, want, x, arr(1.0), arr(p),
                 what=f"probabilities {np.array(probs)[perm].tolist()} with p={p}: ")


@pytest.mark.rubric("order_independent_ties")
@pytest.mark.parametrize("p", [1e-12, 1e-7, 5e-324])
def test_tiny_p_keeps_the_tied_maxima_of_a_bf16_row(p):
    """Rule: Nucleus"""
    x = big_rows(17, [2.0, 0.5], bf16=True)
    x[1, [5, 900, 131000]] = x[1].max()        # several maxima tied on purpose
    t, pp = arr(1.0, 2.0), arr(p, p)
    got = check_against_model(x, t, pp, what=f"tiny p={p}: ")
    assert got.any(axis=1).all(), "the kept set must never be empty"


@pytest.mark.rubric("order_independent_ties")
def test_huge_logits_and_small_temperatures_do_not_overflow():
    """Rule: Probabilities"""
    x = big_rows(19, [1.0, 1.0], bf16=False, offset=5000.0)   # float32 spacing: heavy ties
    t = arr(0.01, 0.5)
    p = clear_ps(x, t, arr(0.9, 0.9))
    check_against_model(x, t, p, what="logits near 5000 (exp(x / T) overflows): ")
    y = np.array([[-3e4, 3e4, 2.99e4, -np.inf, 3e4]], dtype=np.float32)
    check_against_model(y, arr(0.001), arr(0.6), what="logits of +-3e4 at T=0.001: ")


@pytest.mark.rubric("order_independent_ties")
@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_other_float_dtypes(dtype):
    """Rule: Probabilities"""
    rng = np.random.default_rng(23)
    x = (rng.standard_normal((3, 3000)) * 2).astype(dtype)
    t = arr(1.0, 0.6, 2.0)
    p = clear_ps(x, t, arr(0.5, 0.8, 0.3))
    check_against_model(x, t, p, what=f"{np.dtype(dtype).name} logits: ")


@pytest.mark.rubric("order_independent_ties")
@given(data=st.data())
def test_a_row_does_not_depend_on_the_other_rows(data):
    """Rule: Order independence"""
    x = data.draw(tie_rows(max_rows=4))
    t, p, k = data.draw(params(x, greedy_share=0.3, with_k=True))
    together = np.asarray(tp.kept_mask(x, t, p, top_k=k))
    for b in range(x.shape[0]):
        alone = np.asarray(tp.kept_mask(x[b:b + 1], t[b:b + 1], p[b:b + 1], top_k=k[b:b + 1]))
        h.check_mask(together[b:b + 1], alone, x[b:b + 1], t[b:b + 1], p[b:b + 1], k[b:b + 1],
                     what=f"row {b} computed inside a batch of {x.shape[0]} vs alone: ")


# ================================================================== p_one
@pytest.mark.rubric("p_one")
def test_p_one_keeps_all_of_three_128k_rows():
    """Rules: p >= 1 switches top-p off; Banned tokens"""
    x = big_rows(29, [1.0, 6.0, 3.0], bf16=False)
    rng = np.random.default_rng(30)
    x[2, rng.choice(V, 5000, replace=False)] = -np.inf
    t, p = arr(1.0, 0.25, 3.0), arr(1.0, 1.0, 2.5)
    h.check_mask(tp.kept_mask(x, t, p), np.isfinite(x), x, t, p,
                 what="p >= 1 keeps every finite token: ")


@pytest.mark.rubric("p_one")
def test_p_one_on_bf16_rows_and_tiny_temperature():
    """Rule: p >= 1 switches top-p off"""
    x = big_rows(31, [2.0, 8.0], bf16=True)
    x[0, ::7] = -np.inf
    t, p = arr(1.0, 0.01), arr(1.0, 1.0)     # at T=0.01 nearly every weight underflows
    h.check_mask(tp.kept_mask(x, t, p), np.isfinite(x), x, t, p,
                 what="p = 1 keeps every finite token, however improbable: ")


@pytest.mark.rubric("p_one")
@given(data=st.data())
def test_p_one_small_rows_never_keep_minus_inf(data):
    """Rules: p >= 1 switches top-p off; Banned tokens"""
    x = data.draw(tie_rows())
    t, p, _ = data.draw(params(x, p_one_share=1.0))
    h.check_mask(tp.kept_mask(x, t, p), np.isfinite(x), x, t, p,
                 what="p >= 1 keeps every finite token and no -inf one: ")


@pytest.mark.rubric("p_one")
def test_infinite_p_switches_top_p_off():
    """top_p = inf is >= 1, not an error: it keeps every finite token top-k kept.

    Rule: p >= 1 switches top-p off
    """
    x = np.array([[0.0, -30.0, -np.inf, 2.0, -800.0], [1.0, 1.0, -2.0, -np.inf, 0.5]])
    t, p, k = arr(1.0, 0.5), arr(np.inf, np.inf), ints(0, 2)
    want = np.isfinite(x)
    want[1, [2, 4]] = False                      # top_k = 2 keeps the two tied maxima
    h.check_mask(tp.kept_mask(x, t, p, top_k=k), want, x, t, p, k,
                 what="top_p = inf keeps every finite token of the top-k set: ")
    got = np.asarray(tp.sample(x, t, p, u=arr(0.99, 0.75), top_k=k))
    assert got.tolist() == [3, 1], f"top_p = inf: expected samples [3, 1], got {got.tolist()}"


@pytest.mark.rubric("p_one")
def test_p_one_with_top_k_keeps_exactly_the_top_k_set():
    """Rules: p >= 1 switches top-p off; Top-k"""
    x = big_rows(37, [2.0], bf16=True)
    x = np.concatenate([x, x])
    x[1, :100] = -np.inf
    t, p, k = arr(1.0, 1.0), arr(1.0, 1.0), ints(300, V)
    check_against_model(x, t, p, k, what="p = 1 with top_k: ")


# ================================================================== greedy
@pytest.mark.rubric("greedy")
@given(data=st.data())
def test_greedy_rows_in_mixed_batches(data):
    x = data.draw(tie_rows(max_rows=5))
    t, p, k = data.draw(params(x, greedy_share=0.5, with_k=True))
    u = np.array(data.draw(st.lists(st.floats(0, 0.999999), min_size=x.shape[0],
                                    max_size=x.shape[0])))
    got_mask = np.asarray(tp.kept_mask(x, t, p, top_k=k))
    got = np.asarray(tp.sample(x, t, p, u=u, top_k=k))
    for b in np.flatnonzero(t == 0):
        row = x[b]
        argmax = np.isfinite(row) & (row == row[np.isfinite(row)].max())
        h.check_mask(got_mask[b:b + 1], argmax[None], x[b:b + 1], t[b:b + 1], p[b:b + 1],
                     k[b:b + 1], what=f"T = 0 (batch temperatures {t.tolist()}): ")
        lowest = int(np.flatnonzero(argmax)[0])
        assert int(got[b]) == lowest, (
            f"row {b}: T = 0 must return the lowest tied maximum {lowest}, got {int(got[b])}; "
            f"logits {row.tolist()}, u={u[b]}, batch temperatures {t.tolist()}")


@pytest.mark.rubric("greedy")
def test_greedy_on_128k_bf16_rows_returns_the_lowest_tied_maximum():
    x = big_rows(41, [2.0, 2.0, 1.0], bf16=True)
    top = x.max() + 1
    x[0, [131071, 17, 65536]] = top
    x[1, [9, 10]] = top
    t, p, u = arr(0.0, 0.0, 0.9), arr(0.9, 1.0, 0.5), arr(0.999, 0.0, 0.3)
    u = clear_u(x, t, p, None, u)
    got = np.asarray(tp.sample(x, t, p, u=u))
    assert got[:2].tolist() == [17, 9], f"T = 0 rows must return ids 17 and 9, got {got[:2]}"
    want = h.model_mask(x, t, p)[:2]
    h.check_mask(np.asarray(tp.kept_mask(x, t, p))[:2], want, x[:2], t[:2], p[:2],
                 what="T = 0 keeps the tied maxima: ")
    rev = np.ascontiguousarray(x[:2, ::-1])          # reversed vocabulary: id i -> V - 1 - i
    got = np.asarray(tp.sample(rev, t[:2], p[:2], u=u[:2]))
    assert got.tolist() == [V - 1 - 131071, V - 1 - 10], (
        f"vocabulary reversed: the tied maxima move to ids {[V - 1 - i for i in (131071, 17, 65536)]}"
        f" and {[V - 1 - 9, V - 1 - 10]}; T = 0 must return the lowest of each, "
        f"{[V - 1 - 131071, V - 1 - 10]}, got {got.tolist()}")


@pytest.mark.rubric("greedy")
def test_float64_logits_closer_than_float32_spacing_are_not_tied():
    """Rules: Ties; Greedy

    Tied means equal as given: float64 logits 1e-12 apart are different, so T = 0 keeps the
    larger one alone (rounding them to float32 first would tie them)."""
    x = np.array([[1.0, 1.0 + 1e-12, 0.5, 1.0 + 1e-12], [1.0 + 1e-12, 1.0, 0.5, 1.0]])
    t, p = np.zeros(2), arr(0.9, 0.9)
    want = np.array([[False, True, False, True], [True, False, False, False]])
    h.check_mask(tp.kept_mask(x, t, p), want, x, t, p,
                 what="float64 logits 1e-12 apart at T = 0: ")
    got = np.asarray(tp.sample(x, t, p, u=arr(0.5, 0.5)))
    assert got.tolist() == [1, 0], f"T = 0 must return [1, 0], got {got.tolist()}"


@pytest.mark.rubric("greedy")
def test_greedy_ignores_top_k_and_top_p():
    x = np.array([[1.0, 7.0, 7.0, 3.0, 7.0, -np.inf]] * 3)
    t, p, k = np.zeros(3), arr(1.0, 1e-9, 0.999), ints(1, 5, 0)
    want = np.tile(np.array([False, True, True, False, True, False]), (3, 1))
    h.check_mask(tp.kept_mask(x, t, p, top_k=k), want, x, t, p, k,
                 what="T = 0 keeps the tied maxima whatever top_k and top_p say: ")
    got = np.asarray(tp.sample(x, t, p, u=arr(0.99, 0.5, 0.0), top_k=k))
    assert got.tolist() == [1, 1, 1], f"T = 0 must return 1 in every row, got {got.tolist()}"


@pytest.mark.rubric("greedy")
def test_greedy_with_negative_maxima_and_banned_tokens():
    x = np.array([[-np.inf, -5.0, -3.0, -np.inf, -3.0], [-np.inf, -np.inf, -1e4, -np.inf, -1e4]])
    t, p = np.zeros(2), arr(0.5, 0.5)
    got = np.asarray(tp.sample(x, t, p, u=arr(0.5, 0.5)))
    assert got.tolist() == [2, 2], f"expected [2, 2], got {got.tolist()} for logits {x.tolist()}"
    h.check_mask(tp.kept_mask(x, t, p), h.model_mask(x, t, p), x, t, p)


# ================================================================== topk_then_topp
@pytest.mark.rubric("topk_then_topp")
@given(data=st.data())
def test_top_k_then_top_p_matches_the_model(data):
    """Rules: Top-k, then top-p; Nucleus"""
    x = data.draw(tie_rows())
    t, p, k = data.draw(params(x, with_k=True, p_one_share=0.2))
    check_against_model(x, t, p, k, what="top-k then top-p: ")


@pytest.mark.rubric("topk_then_topp")
@pytest.mark.parametrize("probs, k, p, kept", [
    # top-2 renormalizes 0.3, 0.2 to 0.6, 0.4: p = 0.55 keeps one token (top-p on the full
    # distribution, or before top-k, keeps two)
    ([0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1], 2, 0.55, [0]),
    ([0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1], 3, 0.6, [0, 1, 2, 3, 4, 5, 6]),  # ties with the 3rd
    ([0.1, 0.3, 0.2, 0.4], 3, 0.42, [3]),     # 0.4 / 0.9 = 0.444 >= 0.42
    ([0.1, 0.3, 0.2, 0.4], 3, 0.5, [1, 3]),
    ([0.1, 0.3, 0.2, 0.4], 2, 0.5, [3]),      # 0.4 / 0.7 = 0.571 >= 0.5
    ([0.1, 0.3, 0.2, 0.4], 1, 0.99, [3]),
])
def test_top_p_is_applied_to_the_renormalized_top_k_set(probs, k, p, kept):
    """Rules: Top-k, then top-p; Probabilities"""
    x = np.log(np.array([probs]))
    want = np.zeros((1, len(probs)), dtype=bool)
    want[0, kept] = True
    assert (h.model_mask(x, arr(1.0), arr(p), ints(k)) == want).all()
    check_against_model(x, arr(1.0), arr(p), ints(k),
                        what=f"probabilities {probs}, top_k={k}, top_p={p}: ")


@pytest.mark.rubric("topk_then_topp")
def test_top_k_larger_than_the_finite_count_keeps_no_minus_inf():
    """Rules: Top-k; Banned tokens"""
    x = np.array([[0.0, -np.inf, 1.0, -np.inf, 1.0, -np.inf]] * 3)
    t, p, k = np.ones(3), arr(1.0, 0.99, 1.0), ints(5, 4, 1000)
    want = np.tile(np.isfinite(x[0]), (3, 1))
    h.check_mask(tp.kept_mask(x, t, p, top_k=k), want, x, t, p, k,
                 what="top_k above the number of finite logits: ")


@pytest.mark.rubric("topk_then_topp")
def test_per_row_top_k_on_bf16_128k_rows():
    """Rules: Top-k; Order independence"""
    x = big_rows(43, [2.0, 2.0, 3.0, 1.0], bf16=True)
    t, k = arr(1.0, 0.8, 1.2, 1.0), ints(1, 40, 5000, 0)
    p = clear_ps(x, t, arr(0.6, 0.9, 0.97, 0.3), k)
    got = check_against_model(x, t, p, k, what="bf16 rows, per-row top_k: ")
    perm = np.random.default_rng(44).permutation(V)
    h.check_mask(tp.kept_mask(np.ascontiguousarray(x[:, perm]), t, p, top_k=k), got[:, perm],
                 x[:, perm], t, p, k, what="bf16 rows with top_k, vocabulary shuffled: ")


# ================================================================== deterministic_sampling
@pytest.mark.rubric("deterministic_sampling")
@given(data=st.data())
def test_sample_is_the_inverse_cdf_in_token_id_order(data):
    """Rule: Sampling"""
    x = data.draw(tie_rows())
    t, p, k = data.draw(params(x, greedy_share=0.1, with_k=data.draw(st.booleans()),
                               p_one_share=0.2))
    u = np.array(data.draw(st.lists(st.floats(0, 0.999999), min_size=x.shape[0],
                                    max_size=x.shape[0])))
    u = clear_u(x, t, p, k, u)
    got = tp.sample(x, t, p, u=u, top_k=k) if k is not None else tp.sample(x, t, p, u=u)
    h.check_sample(got, h.model_sample(x, t, p, u, k), x, t, p, u, k)


@pytest.mark.rubric("deterministic_sampling")
@pytest.mark.parametrize("bf16", [False, True])
def test_sample_on_128k_rows(bf16):
    """Rule: Sampling"""
    x = big_rows(47 + bf16, [1.0, 2.0, 3.0, 2.0], bf16=bf16)
    t, k = arr(1.0, 0.7, 1.4, 1.0), ints(0, 0, 2000, 0)
    p = clear_ps(x, t, arr(0.9, 0.5, 0.95, 1.0), k)
    u = clear_u(x, t, p, k, arr(0.13, 0.5, 0.77, 0.999))
    h.check_sample(tp.sample(x, t, p, u=u, top_k=k), h.model_sample(x, t, p, u, k),
                   x, t, p, u, k, what=f"128K {'bf16' if bf16 else 'float32'} rows: ")


@pytest.mark.rubric("deterministic_sampling")
@pytest.mark.parametrize("temperature", [1e-3, 1e-7])
def test_tied_maxima_at_a_small_positive_temperature_are_sampled_by_u(temperature):
    """Rules: Greedy; Sampling

    Only temperature == 0 is greedy: no small positive temperature is rounded to it."""
    x = np.array([[0.0, 1.0, 0.0, 5.0, 2.0, 1.0, 0.0, 5.0]] * 4)
    t, p = np.full(4, temperature), np.full(4, 0.9)
    u = arr(0.0, 0.2, 0.7, 0.9999)
    got = np.asarray(tp.sample(x, t, p, u=u))
    assert got.tolist() == [3, 3, 7, 7], (
        f"T = {temperature} is not greedy: tied maxima 3 and 7 share the mass, u={u.tolist()} must "
        f"give [3, 3, 7, 7], got {got.tolist()}")


@pytest.mark.rubric("deterministic_sampling")
def test_extreme_u_values():
    """Rule: Sampling"""
    x = np.array([[-np.inf, 1.0, 0.0, 2.0, 0.5, -np.inf], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]])
    t, p = arr(1.0, 1.0), arr(1.0, 0.6)
    u = np.array([0.0, np.nextafter(1.0, 0.0)])
    got = np.asarray(tp.sample(x, t, p, u=u))
    assert got.tolist() == [1, 5], (
        f"u=0 takes the first kept token, u just below 1 the last: expected [1, 5], got "
        f"{got.tolist()}")
    u = np.array([np.nextafter(1.0, 0.0), 0.0])
    got = np.asarray(tp.sample(x, t, p, u=u))
    assert got.tolist() == [4, 0], f"expected [4, 0], got {got.tolist()}"


@pytest.mark.rubric("deterministic_sampling")
def test_u_close_to_one_lands_on_the_last_kept_token_with_weight():
    """Rule: Sampling

    A u just below 1, in rows past the first (where an implementation that offsets each
    row's CDF by the row number loses precision), takes the last kept token whose float64
    weight is not 0: never a banned token, never a kept token whose weight underflowed (its
    interval is empty; in exact arithmetic u < F of the token before it too)."""
    x = np.array([[0.0, -800.0, -np.inf, -np.inf],
                  [0.0, -800.0, -np.inf, -np.inf],
                  [-np.inf, 1.0, 0.0, -np.inf],
                  [1.0, 0.0, -1000.0, -800.0]])
    t, p = np.ones(4), np.ones(4)
    u = np.full(4, np.nextafter(1.0, 0.0))
    got = np.asarray(tp.sample(x, t, p, u=u))
    assert got.tolist() == [0, 0, 2, 1], (
        f"u = 1 - 2^-53 must take the last kept token with nonzero weight, [0, 0, 2, 1]; got "
        f"{got.tolist()} for logits {x.tolist()}")


@pytest.mark.rubric("deterministic_sampling")
def test_the_cdf_is_accumulated_in_float64():
    """Rules: Probabilities; Sampling

    One token of weight 1 and 400 of weight 5e-8: in float32, 1 + 5e-8 rounds back to 1,
    so a float32 CDF gives the tail tokens empty intervals; u in the middle of the tail
    must draw the tail token whose interval holds it."""
    row = np.array([0.0] + [math.log(5e-8)] * 400)
    x = np.tile(row, (3, 1))
    t, p = np.ones(3), np.ones(3)
    f = h.kept_cdf_row(row, 1.0, 1.0, 0)
    u = np.array([(f[i] + f[i + 1]) / 2 for i in (50, 200, 380)])
    want = h.model_sample(x, t, p, u)
    assert want.tolist() == [51, 201, 381] and h.u_margin(x, t, p, u) > h.CLEAR
    h.check_sample(tp.sample(x, t, p, u=u), want, x, t, p, u,
                   what="a long tail of tiny weights after one large one: ")


@pytest.mark.rubric("deterministic_sampling")
@given(data=st.data())
def test_sampled_token_is_kept_and_repeatable(data):
    """Rule: Sampling"""
    x = data.draw(tie_rows())
    t, p, k = data.draw(params(x, greedy_share=0.2, with_k=True))
    u = np.array(data.draw(st.lists(st.floats(0, 0.999999), min_size=x.shape[0],
                                    max_size=x.shape[0])))
    first = np.asarray(tp.sample(x, t, p, u=u, top_k=k))
    mask = np.asarray(tp.kept_mask(x, t, p, top_k=k))
    rows = np.arange(x.shape[0])
    assert ((first >= 0) & (first < x.shape[1])).all(), f"token ids out of range: {first}"
    assert mask[rows, first].all(), (
        f"sampled tokens {first.tolist()} are not all in kept_mask: {mask.tolist()}")
    again = np.asarray(tp.sample(x, t, p, u=u, top_k=k))
    assert (first == again).all(), f"same inputs, different samples: {first} vs {again}"


# ================================================================== distribution
def _frequency_check(row, t, p, k, n, seed, what):
    x = np.tile(row, (n, 1))
    rng = np.random.default_rng(seed)
    got = np.asarray(tp.sample(x, np.full(n, t), np.full(n, p), u=rng.random(n),
                               top_k=np.full(n, k, dtype=np.int64)))
    keep = h.model_mask_row(row, t, p, k)
    assert keep[got].all(), f"{what}sampled tokens {np.unique(got[~keep[got]])} are not kept"
    probs = np.diff(np.concatenate([[0.0], h.kept_cdf_row(row, t, p, k)]))
    counts = np.bincount(got, minlength=row.size)
    stat, pval, df = h.chi_square_pvalue(counts, probs)
    top = np.argsort(-probs)[:8]
    assert pval > 1e-6, (
        f"{what}{n} draws: chi2={stat:.1f} on {df} df, p-value {pval:.2e} < 1e-6.\n"
        f"  most likely tokens {top.tolist()}: counts {counts[top].tolist()}, "
        f"expected {np.round(probs[top] * n, 1).tolist()}")


@pytest.mark.rubric("distribution")
def test_frequencies_with_ties_top_k_and_top_p():
    """Rule: Sampling"""
    row = h.bf16_round(np.random.default_rng(53).standard_normal(32).astype(np.float32) * 1.5)
    row[[3, 9, 20]] = row.max()
    row[[4, 11]] = np.sort(row)[-8]
    _frequency_check(row, 0.8, h.clear_p(row, 0.8, 0.85, 12), 12, 20_000, 54,
                     "bf16 row with ties, T=0.8, top_k=12: ")


@pytest.mark.rubric("distribution")
def test_frequencies_at_high_temperature_and_p_one():
    """Rule: Sampling"""
    row = np.array([3.0, -np.inf, 1.0, 1.0, 0.0, 2.5, -1.0, 0.5, 0.5, -2.0])
    _frequency_check(row, 2.5, 1.0, 0, 20_000, 55, "T=2.5, p=1: ")


@pytest.mark.rubric("distribution")
def test_frequencies_on_a_wide_bf16_row():
    """Rule: Sampling"""
    row = h.bf16_round(np.random.default_rng(57).standard_normal(2048).astype(np.float32) * 2)
    _frequency_check(row, 0.6, h.clear_p(row, 0.6, 0.5), 0, 3000, 58,
                     "2048-token bf16 row, T=0.6, p=0.5: ")


# ================================================================== errors
def _valid(rows=2, vocab=6):
    x = np.linspace(-1, 1, rows * vocab).reshape(rows, vocab)
    return x, np.ones(rows), np.full(rows, 0.9), np.full(rows, 0.5), np.full(rows, 3)


def _bad(case):
    x, t, p, u, k = _valid()
    if case == "nan logit":
        x[0, 3] = np.nan
    elif case == "+inf logit":
        x[1, 0] = np.inf
    elif case == "row of -inf":
        x[1, :] = -np.inf
    elif case == "1-D logits":
        x = x[0]
    elif case == "3-D logits":
        x = x[None]
    elif case == "no tokens":
        x = x[:, :0]
    elif case == "no rows":
        x, t, p, u, k = x[:0], t[:0], p[:0], u[:0], k[:0]
    elif case == "negative T":
        t[1] = -1e-3
    elif case == "NaN T":
        t[0] = np.nan
    elif case == "infinite T":
        t[0] = np.inf
    elif case == "T shape":
        t = np.ones(3)
    elif case == "p = 0":
        p[0] = 0.0
    elif case == "p = 0 in a greedy row":
        t[0], p[0] = 0.0, 0.0
    elif case == "negative k in a greedy row":
        t[1], k = 0.0, np.array([3, -1])
    elif case == "negative p":
        p[1] = -0.5
    elif case == "NaN p":
        p[1] = np.nan
    elif case == "p shape":
        p = np.full((2, 1), 0.9)
    elif case == "negative k":
        k = np.array([3, -1])
    elif case == "fractional k":
        k = np.array([2.5, 3.0])
    elif case == "k shape":
        k = np.array([3])
    elif case == "u = 1":
        u[0] = 1.0
    elif case == "negative u":
        u[1] = -1e-9
    elif case == "NaN u":
        u[0] = np.nan
    elif case == "u shape":
        u = np.full(4, 0.5)
    else:
        raise AssertionError(case)
    return x, t, p, u, k


MASK_CASES = ["nan logit", "+inf logit", "row of -inf", "1-D logits", "3-D logits",
              "no tokens", "no rows", "negative T", "NaN T", "infinite T", "T shape", "p = 0",
              "negative p", "NaN p", "p shape", "negative k", "fractional k", "k shape",
              "p = 0 in a greedy row", "negative k in a greedy row"]
U_CASES = ["u = 1", "negative u", "NaN u", "u shape"]


@pytest.mark.rubric("errors")
@pytest.mark.parametrize("case", MASK_CASES)
def test_kept_mask_rejects_bad_input(case):
    """Rule: Errors"""
    x, t, p, u, k = _bad(case)
    copies = [a.copy() for a in (x, t, p, k)]
    with pytest.raises(ValueError):
        tp.kept_mask(x, t, p, top_k=k)
    for before, after in zip(copies, (x, t, p, k)):
        np.testing.assert_array_equal(after, before, err_msg=f"{case}: an input was modified")


@pytest.mark.rubric("errors")
@pytest.mark.parametrize("case", MASK_CASES + U_CASES)
def test_sample_rejects_bad_input(case):
    """Rule: Errors"""
    x, t, p, u, k = _bad(case)
    copies = [a.copy() for a in (x, t, p, u, k)]
    with pytest.raises(ValueError):
        tp.sample(x, t, p, u=u, top_k=k)
    for before, after in zip(copies, (x, t, p, u, k)):
        np.testing.assert_array_equal(after, before, err_msg=f"{case}: an input was modified")


@pytest.mark.rubric("errors")
def test_whole_float_top_k_is_accepted():
    """Rule: Errors

    top_k given as floats with whole values is an integer top_k, not an error."""
    x = np.array([[5.0, 4.0, 1.0, 4.0, 3.0], [0.0, 1.0, 2.0, 3.0, 4.0]])
    t, p = np.ones(2), np.ones(2)
    want = np.array([[True, True, False, True, False], [True] * 5])
    for k in (np.array([2.0, 0.0]), np.array([2.0, 7.0], dtype=np.float32)):
        h.check_mask(tp.kept_mask(x, t, p, top_k=k), want, x, t, p, k.astype(np.int64),
                     what=f"top_k={k.tolist()} ({k.dtype}): ")
        got = np.asarray(tp.sample(x, t, p, u=arr(0.0, 0.0), top_k=k))
        assert got.tolist() == [0, 0], f"top_k={k.tolist()}: expected [0, 0], got {got.tolist()}"


@pytest.mark.rubric("errors")
def test_inputs_are_never_modified():
    """Rules: Read-only inputs; Errors"""
    # The arrays reach the implementation read-only in both modes (graders/support/inputs.py):
    # an in-place write raises there and fails this call.
    rng = np.random.default_rng(61)
    x = h.rows_of(rng, 4, 500, 2.0, bf16=True)
    x[0, :10] = -np.inf
    t, p, u, k = arr(0.0, 0.5, 1.0, 2.0), arr(0.9, 1.0, 0.3, 0.99), rng.random(4), ints(0, 5, 0, 50)
    calls = [("kept_mask", (x, t, p, k)), ("sample", (x, t, p, u, k)),
             ("kept_mask", (x, t, p)), ("sample", (x, t, p, u))]
    for name, args in calls:
        inputs.leaves_inputs_alone(getattr(tp, name), *args, what=name)


# ================================================================== vectorised
@pytest.mark.rubric("vectorised")
@pytest.mark.parametrize("fn", ["kept_mask", "sample"])
def test_no_python_loop_over_rows(fn):
    """Rule: Vectorised"""
    h.check_no_loop(tp, fn, "rows")


@pytest.mark.rubric("vectorised")
@pytest.mark.parametrize("fn", ["kept_mask", "sample"])
def test_no_python_loop_over_tokens(fn):
    """Rule: Vectorised"""
    h.check_no_loop(tp, fn, "tokens")


# The evidence that grants the item: CPU time measured from outside the implementation's
# process against the reference's in a worker of its own (the step counts above run inside
# the submission's interpreter and can only withhold it).
@pytest.mark.rubric("vectorised")
@pytest.mark.parametrize("direction", ["rows", "tokens"])
@pytest.mark.parametrize("fn", ["kept_mask", "sample"])
def test_cpu_time_within_the_references(fn, direction):
    """Rule: Vectorised"""
    h.check_cpu(fn, direction)
