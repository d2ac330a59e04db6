"""Hidden tests for spec_decode's sampled verification (rejection sampling).

Two kinds of oracle:
- exact: ``sampled_row`` replays the prompt's rule in rational arithmetic. Probabilities are
  multiples of 1/16 and uniforms odd multiples of 2**-7, so no decision is a tie and any
  floating-point implementation of the rule gets the same answer;
- statistical: with fixed distributions and a fixed seed, the emitted tokens must follow the
  target distribution (chi-square at ALPHA = 1e-6 per check, see stats.py; every check here
  is one chi-square test, so a correct implementation fails one with probability about 1e-6
  over the choice of seed, and never with the seeds fixed here).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graders.hidden.spec_decode.stats import ALPHA, fit
from graders.impl import kata_impl
from tests.spec_decode.helpers import sampled_row

sd = kata_impl("spec_decode")

DEN = 16
UBITS = 7


def call(draft, num, q, p, ua, us) -> list[tuple[int, list[int]]]:
    out = sd.verify_sampled(np.asarray(draft), np.asarray(num), np.asarray(q, dtype=np.float64),
                            np.asarray(p, dtype=np.float64), np.asarray(ua, dtype=np.float64),
                            np.asarray(us, dtype=np.float64))
    assert len(out) == len(draft), f"one (accepted, emitted) per row: got {len(out)}"
    return [(int(a), [int(t) for t in e]) for a, e in out]


# -- hand-made cases -------------------------------------------------------------------

@pytest.mark.rubric("sampled_distribution")
def test_draft_probability_zero_is_accepted_when_the_target_allows_it():
    """Rules: Accept or reject; Residual or bonus"""
    q = [[[0.0, 0.5, 0.5]]]
    p = [[[0.25, 0.25, 0.5], [1.0, 0.0, 0.0]]]
    out = call([[0]], [1], q, p, [[0.99]], [0.5])
    assert out == [(1, [0, 0])], (
        "q(d)=0 < p(d)=0.25 for the drafted token 0: u * 0 < 0.25 accepts it whatever u is; "
        f"the bonus from p=[1, 0, 0] is 0: expected [(1, [0, 0])], got {out}")


@pytest.mark.rubric("sampled_distribution")
def test_zero_under_both_is_rejected_and_an_empty_residual_falls_back_to_p():
    """Rules: Accept or reject; Residual or bonus"""
    q = [[[0.0, 0.5, 0.5]]]
    p = [[[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]]
    out = call([[0]], [1], q, p, [[0.0]], [0.75])
    assert out == [(0, [2])], (
        "draft 0 with q(0)=p(0)=0 is rejected (0 < 0 is false); p == q, so max(p - q, 0) is "
        f"zero: draw from p=[0, .5, .5] with u=0.75 -> token 2: expected [(0, [2])], got {out}")


@pytest.mark.rubric("sampled_distribution")
def test_target_probability_zero_rejects_even_with_u_zero():
    """Rules: Accept or reject; Residual or bonus"""
    q = [[[0.5, 0.5, 0.0]]]
    p = [[[0.0, 0.25, 0.75], [1.0, 0.0, 0.0]]]
    out = call([[0]], [1], q, p, [[0.0]], [0.1])
    assert out == [(0, [2])], (
        "p(d)=0: 0 * 0.5 < 0 is false, reject; residual max(p-q,0) = [0, 0, 0.75] -> token 2: "
        f"got {out}")


@pytest.mark.rubric("sampled_distribution")
def test_ngram_draft_residual_removes_the_drafted_token():
    """Rules: Accept or reject; Residual or bonus; Draw"""
    # q one-hot on token 1: accept iff u < p(1) = 0.5. Rejected: residual = p without token 1.
    q = [[[0.0, 1.0, 0.0, 0.0]]] * 2
    p = [[[0.25, 0.5, 0.125, 0.125], [0.0, 0.0, 0.0, 1.0]]] * 2
    out = call([[1], [1]], [1, 1], q, p, [[0.49], [0.51]], [0.3, 0.7])
    assert out[0] == (1, [1, 3]), f"u=0.49 < p(1)=0.5 accepts, bonus 3: got {out[0]}"
    assert out[1] == (0, [2]), (
        "u=0.51 rejects; residual [0.25, 0, 0.125, 0.125] (total 0.5), u=0.7 -> 0.35 of it -> "
        f"token 2: got {out[1]}")


@pytest.mark.rubric("sampled_distribution")
def test_bonus_comes_from_the_rows_own_position():
    """Rules: Residual or bonus; Padding"""
    V = 3
    q = np.zeros((2, 3, V))
    q[:, :, 0] = 1.0
    p = np.zeros((2, 4, V))
    p[:, :, 2] = 1.0
    p[0, :2, :] = [1.0, 0.0, 0.0]          # row 0: 1 draft of K=3, bonus position 1
    p[0, 1, :] = [0.0, 1.0, 0.0]
    p[1, :3, :] = [1.0, 0.0, 0.0]          # row 1: all 3 drafts, bonus position 3 (token 2)
    out = call([[0, 0, 0], [0, 0, 0]], [1, 3], q, p, np.zeros((2, 3)), [0.5, 0.5])
    assert out[0] == (1, [0, 1]), (
        "row 0 has num_draft=1 of K=3; its bonus is drawn from p at position 1 (token 1), not "
        f"at position K: got {out[0]}")
    assert out[1] == (3, [0, 0, 0, 2]), f"row 1: got {out[1]}"


@pytest.mark.rubric("sampled_distribution")
def test_uniform_zero_never_draws_a_token_without_mass():
    """Rule: Draw"""
    # Row 0: bonus from p = [0, 0, .5, .5]; row 1: rejected, residual [0, .25, 0, .25].
    q = np.array([[[0.25, 0.25, 0.25, 0.25]], [[0.5, 0.25, 0.25, 0.0]]])
    p = np.array([[[0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 0.5, 0.5]],
                  [[0.25, 0.5, 0.0, 0.25], [1.0, 0.0, 0.0, 0.0]]])
    out = call([[1], [2]], [1, 1], q, p, [[0.5], [0.0]], [0.0, 0.0])
    assert out == [(1, [1, 2]), (0, [1])], (
        "u_sample = 0 draws the first token with mass (u * S < C[t] is strict): row 0's bonus "
        "from [0, 0, .5, .5] is 2; row 1 rejects draft 2 (p(2) = 0) and its residual "
        f"[0, .25, 0, .25] gives 1: expected [(1, [1, 2]), (0, [1])], got {out}")


@pytest.mark.rubric("sampled_distribution")
def test_k_zero_draws_from_the_target():
    """Rules: Residual or bonus; Result"""
    p = np.array([[[0.25, 0.25, 0.5]], [[1.0, 0.0, 0.0]]])
    out = call(np.zeros((2, 0), dtype=np.int64), [0, 0], np.zeros((2, 0, 3)), p,
               np.zeros((2, 0)), [0.6, 0.999])
    assert out == [(0, [2]), (0, [0])], f"K=0: one draw from p[:, 0]; got {out}"


@pytest.mark.rubric("sampled_distribution")
@pytest.mark.parametrize("case", ["draft id", "negative draft id", "negative prob",
                                  "negative draft prob", "u_accept=1", "u_sample<0", "q shape",
                                  "num_draft>K"])
def test_bad_sampled_input_raises_value_error(case):
    """Rule: Bad arrays"""
    draft, num = np.array([[1]]), np.array([1])
    q = np.array([[[0.5, 0.5]]])
    p = np.array([[[0.5, 0.5], [0.5, 0.5]]])
    ua, us = np.array([[0.5]]), np.array([0.5])
    if case == "draft id":
        draft = np.array([[2]])
    elif case == "negative draft id":
        draft = np.array([[-1]])
    elif case == "negative prob":
        p = np.array([[[1.5, -0.5], [0.5, 0.5]]])
    elif case == "negative draft prob":
        q = np.array([[[1.5, -0.5]]])
    elif case == "u_accept=1":
        ua = np.array([[1.0]])
    elif case == "u_sample<0":
        us = np.array([-0.1])
    elif case == "q shape":
        q = np.array([[[0.5, 0.5, 0.0]]])
    else:
        num = np.array([2])
    with pytest.raises(ValueError):
        sd.verify_sampled(draft, num, q, p, ua, us)


# -- statistics --------------------------------------------------------------------------

N = 20_000
V = 6


def markov_model() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A first-order Markov target (p0, P) and a different draft (q0, Q), with zeros on both
    sides so that the residual matters."""
    p0 = np.array([0.30, 0.25, 0.20, 0.15, 0.10, 0.00])
    q0 = np.array([0.10, 0.10, 0.40, 0.10, 0.00, 0.30])
    P = np.array([[0.40, 0.30, 0.10, 0.10, 0.10, 0.00],
                  [0.10, 0.10, 0.50, 0.20, 0.00, 0.10],
                  [0.25, 0.25, 0.25, 0.00, 0.25, 0.00],
                  [0.00, 0.60, 0.00, 0.20, 0.10, 0.10],
                  [0.20, 0.20, 0.20, 0.20, 0.10, 0.10],
                  [0.50, 0.00, 0.00, 0.00, 0.00, 0.50]])
    Q = np.array([[0.10, 0.50, 0.10, 0.10, 0.10, 0.10],
                  [0.30, 0.30, 0.10, 0.10, 0.20, 0.00],
                  [0.25, 0.25, 0.25, 0.25, 0.00, 0.00],
                  [0.00, 0.20, 0.40, 0.20, 0.10, 0.10],
                  [0.60, 0.00, 0.00, 0.00, 0.20, 0.20],
                  [0.00, 0.00, 0.50, 0.00, 0.00, 0.50]])
    return p0, q0, P, Q


def markov_batch(seed: int, K: int = 3) -> tuple[list[tuple[int, list[int]]], np.ndarray]:
    """N ragged rows drafted from the Markov draft; returns the result and num_draft."""
    p0, q0, P, Q = markov_model()
    rng = np.random.default_rng(seed)
    num = rng.integers(0, K + 1, size=N)
    draft = np.zeros((N, K), dtype=np.int64)
    q = np.zeros((N, K, V))
    p = np.zeros((N, K + 1, V))
    prev = None
    for i in range(K):
        qi = np.tile(q0, (N, 1)) if prev is None else Q[prev]
        pi = np.tile(p0, (N, 1)) if prev is None else P[prev]
        c = np.cumsum(qi, axis=1)
        d = np.minimum((c <= rng.random(N)[:, None] * c[:, -1:]).sum(axis=1), V - 1)
        draft[:, i], q[:, i], p[:, i] = d, qi, pi
        prev = d
    p[:, K] = P[prev]
    live = np.arange(K) < num[:, None]
    draft = np.where(live, draft, -1)                 # padding outside the vocabulary
    out = call(draft, num, q, p, rng.random((N, K)), rng.random(N))
    return out, num


def check_fit(observed: np.ndarray, probs: np.ndarray, what: str) -> None:
    stat, dof, pvalue = fit(observed, probs)
    assert pvalue >= ALPHA, (
        f"{what}: the counts do not follow the target distribution (chi-square {stat:.1f} on "
        f"{dof} degrees of freedom, p-value {pvalue:.2e} < {ALPHA:g})\nobserved counts:\n"
        f"{np.asarray(observed).astype(int)}\nexpected probabilities:\n{np.round(probs, 3)}")


@pytest.mark.rubric("sampled_distribution")
def test_first_emitted_token_follows_the_target():
    """Rule: Target distribution"""
    out, _ = markov_batch(seed=1234)
    p0 = markov_model()[0]
    counts = np.bincount([e[0] for _, e in out], minlength=V)
    check_fit(counts, p0, f"first emitted token over {N} ragged rows (num_draft 0..3)")


@pytest.mark.rubric("sampled_distribution")
def test_second_emitted_token_given_the_first_follows_the_target():
    """Rule: Target distribution"""
    out, _ = markov_batch(seed=4321)
    P = markov_model()[2]
    counts = np.zeros((V, V))
    for _, e in out:
        if len(e) >= 2:
            counts[e[0], e[1]] += 1
    used = counts.sum(axis=1) > 0
    check_fit(counts[used], P[used], "second emitted token given the first (rows x: first "
              "token, columns: second)")


@pytest.mark.rubric("sampled_distribution")
def test_every_later_token_given_the_one_before_follows_the_target():
    """Rule: Target distribution"""
    out, _ = markov_batch(seed=777)
    P = markov_model()[2]
    counts = np.zeros((V, V))
    for _, e in out:
        for a, b in zip(e[1:], e[2:]):
            counts[a, b] += 1
    used = counts.sum(axis=1) >= 400
    check_fit(counts[used], P[used], "emitted token j+1 given token j, for j >= 1")


def fixed_model() -> tuple[np.ndarray, np.ndarray]:
    """Context-free draft and target distributions for K=4 positions (q, p[:K + 1])."""
    q = np.array([[0.50, 0.20, 0.20, 0.10, 0.00, 0.00],
                  [0.10, 0.10, 0.10, 0.10, 0.30, 0.30],
                  [0.00, 0.00, 0.50, 0.50, 0.00, 0.00],
                  [0.20, 0.20, 0.20, 0.20, 0.10, 0.10]])
    p = np.array([[0.40, 0.30, 0.10, 0.10, 0.05, 0.05],
                  [0.10, 0.20, 0.10, 0.10, 0.20, 0.30],
                  [0.05, 0.05, 0.40, 0.30, 0.10, 0.10],
                  [0.30, 0.10, 0.20, 0.20, 0.10, 0.10],
                  [0.00, 0.10, 0.20, 0.30, 0.40, 0.00]])
    return q, p


def fixed_batch(q: np.ndarray, p: np.ndarray, seed: int,
                draft_tokens: list[int] | None = None) -> list[tuple[int, list[int]]]:
    K = q.shape[0]
    rng = np.random.default_rng(seed)
    if draft_tokens is None:
        c = np.cumsum(q, axis=1)
        u = rng.random((N, K))
        draft = np.minimum((c[None] <= u[..., None] * c[None, :, -1:]).sum(axis=2), V - 1)
    else:
        draft = np.tile(draft_tokens, (N, 1))
    return call(draft, np.full(N, K), np.tile(q, (N, 1, 1)), np.tile(p, (N, 1, 1)),
                rng.random((N, K)), rng.random(N))


def accepted_closed_form(alpha: np.ndarray) -> np.ndarray:
    """P(accepted = n) for n = 0..K when position i accepts with probability alpha[i]."""
    K = len(alpha)
    reach = np.concatenate([[1.0], np.cumprod(alpha)])
    return np.array([reach[n] * (1 - alpha[n]) for n in range(K)] + [reach[K]])


@pytest.mark.rubric("sampled_distribution")
def test_number_accepted_follows_the_closed_form():
    """Rules: Target distribution; Accept or reject"""
    q, p = fixed_model()
    out = fixed_batch(q, p, seed=99)
    alpha = np.minimum(p[:4], q).sum(axis=1)
    counts = np.bincount([a for a, _ in out], minlength=5)
    check_fit(counts, accepted_closed_form(alpha),
              f"number of accepted drafts, with acceptance rates {np.round(alpha, 3).tolist()} "
              "per position (P(n) = prod_{i<n} a_i * (1 - a_n))")


@pytest.mark.rubric("sampled_distribution")
def test_token_at_each_position_follows_the_target():
    """Rule: Target distribution"""
    q, p = fixed_model()
    out = fixed_batch(q, p, seed=2024)
    counts = np.zeros((5, V))
    for _, e in out:
        for j, t in enumerate(e):
            counts[j, t] += 1
    check_fit(counts, p, "emitted token at position j (rows: j = 0..4) with context-free "
              "draft and target")


@pytest.mark.rubric("sampled_distribution")
def test_ngram_drafts_follow_the_target():
    """Rule: Target distribution"""
    q_tokens = [0, 5, 2, 0]
    q = np.zeros((4, V))
    q[np.arange(4), q_tokens] = 1.0
    p = fixed_model()[1]
    out = fixed_batch(q, p, seed=555, draft_tokens=q_tokens)
    counts = np.zeros((5, V))
    for _, e in out:
        for j, t in enumerate(e):
            counts[j, t] += 1
    check_fit(counts, p, f"n-gram drafts {q_tokens} (q one-hot): emitted token at position j")
    alpha = p[np.arange(4), q_tokens]
    acc = np.bincount([a for a, _ in out], minlength=5)
    check_fit(acc, accepted_closed_form(alpha), "n-gram drafts: number accepted "
              f"(acceptance rates p(d) = {alpha.tolist()})")


# -- exact behaviour (last: shrinking a failure takes a few seconds) ----------------------

def dyadic_dist(V: int) -> Any:
    """A distribution over V tokens, every probability a multiple of 1/16 (zeros likely):
    free integer weights, rounded to sixteenths by largest remainder."""
    def to_sixteenths(ws: list[int]) -> list[int]:
        ws = ws if sum(ws) else [1] * V
        total = sum(ws)
        base = [w * DEN // total for w in ws]
        order = sorted(range(V), key=lambda t: (-(ws[t] * DEN % total), t))
        for t in order[:DEN - sum(base)]:
            base[t] += 1
        return base
    return st.lists(st.integers(0, 12), min_size=V, max_size=V).map(to_sixteenths)


UNIFORM = st.integers(0, 2 ** (UBITS - 1) - 1).map(lambda k: (2 * k + 1) / 2 ** UBITS)
# Accept uniforms lean towards 1 (what Hypothesis tries first is 0): rejections are common.
U_ACCEPT = UNIFORM.map(lambda u: 1 - u)
MODES = st.sampled_from(["free", "free", "ngram", "same", "q_zero"])
# One verified position: (mode, p weights, q weights, draft pick). A pick below V takes a
# token from q's support (a draft sampled from q), otherwise any token.
POSITION = {v: st.tuples(MODES, dyadic_dist(v), dyadic_dist(v), st.integers(0, 2 * v - 1))
            for v in range(2, 6)}
PADDING = {v: st.sampled_from([-1, v, v - 1]) for v in range(2, 6)}


@st.composite
def sampled_batches(draw: Any) -> dict[str, Any]:
    K = 3 - draw(st.integers(0, 3))                   # counted down: K = 0 is rarer
    B = draw(st.integers(1, 3))
    V = draw(st.integers(2, 5))
    q = np.zeros((B, K, V))
    p = np.zeros((B, K + 1, V))
    draft = np.zeros((B, K), dtype=np.int64)
    num = np.zeros(B, dtype=np.int64)
    ua = np.array(draw(st.lists(U_ACCEPT, min_size=B * K, max_size=B * K))).reshape(B, K)
    us = np.array(draw(st.lists(UNIFORM, min_size=B, max_size=B)))
    rows = []
    for b in range(B):
        n = K - draw(st.integers(0, K))
        qs, ps, ds = [], [], []
        for i in range(n + 1):
            mode, pi, qi, pick = draw(POSITION[V])
            if i < n:
                support = [t for t in range(V) if qi[t] > 0]
                d = support[pick % len(support)] if pick < V else pick - V
                if mode == "ngram":
                    qi = [DEN if t == d else 0 for t in range(V)]
                elif mode == "same":
                    pi = list(qi)
                elif mode == "q_zero":                  # move q's mass off the draft
                    qi[(d + 1) % V] += qi[d]
                    qi[d] = 0
                qs.append(qi)
                ds.append(d)
            ps.append(pi)
        # Padding that would change the answer if read: one-hot distributions on the last
        # token, draft ids outside the vocabulary.
        q[b, :, V - 1] = 1.0
        p[b, :, V - 1] = 1.0
        draft[b] = draw(PADDING[V])
        for i in range(n):
            q[b, i] = np.array(qs[i]) / DEN
            draft[b, i] = ds[i]
        for i in range(n + 1):
            p[b, i] = np.array(ps[i]) / DEN
        num[b] = n
        rows.append((ds, [[Fraction(x, DEN) for x in r] for r in qs],
                     [[Fraction(x, DEN) for x in r] for r in ps]))
    return {"draft": draft, "num": num, "q": q, "p": p, "ua": ua, "us": us, "rows": rows}


def check_exact(batch: dict[str, Any]) -> None:
    out = call(batch["draft"], batch["num"], batch["q"], batch["p"], batch["ua"], batch["us"])
    for b, (ds, qs, ps) in enumerate(batch["rows"]):
        ua = [Fraction(float(x)) for x in batch["ua"][b, :len(ds)]]
        us = Fraction(float(batch["us"][b]))
        want = sampled_row(ds, qs, ps, ua, us)
        assert out[b] == want, (
            f"row {b}: drafts={ds}, q={[[str(x) for x in r] for r in qs]}, "
            f"p={[[str(x) for x in r] for r in ps]}, u_accept={[float(x) for x in ua]}, "
            f"u_sample={float(us)}, K={batch['draft'].shape[1]}, V={batch['p'].shape[2]}\n"
            f"expected (accepted, emitted) = {want}; got {out[b]}")


@pytest.mark.rubric("sampled_distribution")
@given(sampled_batches())
def test_rejection_sampling_matches_the_exact_rule(batch):
    """Rules: Accept or reject; Residual or bonus; Draw; Result; Padding"""
    check_exact(batch)


@st.composite
def rejected_rows(draw: Any) -> dict[str, Any]:
    """Rows of one draft each that are surely rejected (q(d) > p(d), u_accept = 127/128), so
    every row exercises the residual draw; p == q rows exercise the fallback to p."""
    V = draw(st.integers(2, 5))
    B = draw(st.integers(1, 6))
    q = np.zeros((B, 1, V))
    p = np.zeros((B, 2, V))
    draft = np.zeros((B, 1), dtype=np.int64)
    us = np.array(draw(st.lists(UNIFORM, min_size=B, max_size=B)))
    rows = []
    for b in range(B):
        _, pi, qi, pick = draw(POSITION[V])
        over = [t for t in range(V) if qi[t] > pi[t]]
        if over:
            d = over[pick % len(over)]
        else:                                   # p == q: reject a token both give 0 mass
            d = pick % V
            qi[(d + 1) % V] += qi[d]
            qi[d] = 0
            pi = list(qi)
        q[b, 0], p[b, 0], draft[b, 0] = np.array(qi) / DEN, np.array(pi) / DEN, d
        p[b, 1, :] = 1.0 / V
        rows.append(([d], [[Fraction(x, DEN) for x in qi]],
                     [[Fraction(x, DEN) for x in pi], [Fraction(1, V)] * V]))
    return {"draft": draft, "num": np.ones(B, dtype=np.int64), "q": q, "p": p,
            "ua": np.full((B, 1), 127 / 128), "us": us, "rows": rows}


@pytest.mark.rubric("sampled_distribution")
@given(rejected_rows())
def test_residual_draw_matches_the_exact_rule(batch):
    """Rule: Residual or bonus"""
    check_exact(batch)
