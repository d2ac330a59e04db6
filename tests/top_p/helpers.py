"""Shared helpers for the top_p tests: bf16 rounding, a model of the truth, statistics,
and a counter of Python-level steps.

The model (``model_mask``, ``model_sample``) follows the prompt's definitions literally,
one row at a time: distinct logit values in decreasing order, the mass of every set
"tokens >= value", the first such set that reaches ``p - 1e-6``. It never sorts tokens,
so it cannot depend on a tie order.
"""

from __future__ import annotations

import math
import secrets
from typing import Any

import numpy as np
import pytest

TOL = 1e-6            # the prompt's mass tolerance
CLEAR = 1e-8          # tests keep every boundary at least this far from p - TOL and from u
VOCAB_128K = 131072


# ---------------------------------------------------------------- inputs
def bf16_round(x: np.ndarray) -> np.ndarray:
    """Round to the nearest bfloat16 value (ties to even), returned as float32.

    bf16 keeps float32's exponent and the top 7 stored mantissa bits, so rounding is done
    on the float32 bit pattern: add half of the dropped 16 bits (plus the lowest kept bit
    for ties to even) and clear them. Finite inputs only (infinities pass through).
    """
    f = np.ascontiguousarray(x, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    finite = np.isfinite(f)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = np.where(finite, rounded.view(np.float32), f)
    return out.astype(np.float32)


def rows_of(rng: np.random.Generator, rows: int, vocab: int, scale: float,
            bf16: bool = False, offset: float = 0.0) -> np.ndarray:
    """Normal logits (float32), optionally bf16-rounded; ``offset`` shifts every row."""
    x = (rng.standard_normal((rows, vocab)) * scale + offset).astype(np.float32)
    return bf16_round(x) if bf16 else x


# ---------------------------------------------------------------- the model
def _topk_row(x: np.ndarray, k: int) -> np.ndarray:
    finite = np.isfinite(x)
    n = int(finite.sum())
    if k <= 0 or k >= n:
        return finite
    kth = np.sort(x[finite])[::-1][k - 1]
    return finite & (x >= kth)


def _weights_row(x: np.ndarray, t: float, keep: np.ndarray) -> np.ndarray:
    """exp((x - max) / T) on the kept tokens, 0 elsewhere (float64)."""
    x64 = x.astype(np.float64)
    top = x64[keep].max()
    w = np.zeros_like(x64)
    w[keep] = np.exp((x64[keep] - top) / t)
    return w


def _value_masses(x: np.ndarray, t: float, keep: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Distinct kept values in decreasing order and the mass of "kept tokens >= value"."""
    w = _weights_row(x, t, keep)
    values, inverse = np.unique(x[keep], return_inverse=True)
    group = np.bincount(inverse.ravel(), weights=w[keep], minlength=len(values))
    total = math.fsum(w[keep])
    return values[::-1], np.cumsum(group[::-1]) / total


def model_mask_row(x: np.ndarray, t: float, p: float, k: int) -> np.ndarray:
    finite = np.isfinite(x)
    if t == 0:
        return finite & (x == x[finite].max())
    keep = _topk_row(x, k)
    if p >= 1:
        return keep
    values, masses = _value_masses(x, t, keep)
    j = int(np.argmax(masses >= p - TOL))
    return keep & (x >= values[j])


def p_margin_row(x: np.ndarray, t: float, p: float, k: int) -> float:
    """How far p - TOL is from the mass of every candidate set (inf when p is unused)."""
    if t == 0 or p >= 1:
        return math.inf
    _, masses = _value_masses(x, t, _topk_row(x, k))
    return float(np.min(np.abs(masses - (p - TOL))))


def model_mask(x: np.ndarray, t: Any, p: Any, k: Any = None) -> np.ndarray:
    rows = x.shape[0]
    k = np.zeros(rows, dtype=np.int64) if k is None else k
    return np.stack([model_mask_row(x[b], float(t[b]), float(p[b]), int(k[b]))
                     for b in range(rows)])


def p_margin(x: np.ndarray, t: Any, p: Any, k: Any = None) -> float:
    rows = x.shape[0]
    k = np.zeros(rows, dtype=np.int64) if k is None else k
    return min(p_margin_row(x[b], float(t[b]), float(p[b]), int(k[b])) for b in range(rows))


def clear_p(x: np.ndarray, t: float, p: float, k: int = 0) -> float:
    """``p`` nudged up until no candidate mass lies within CLEAR of ``p - TOL``."""
    for _ in range(50):
        if p_margin_row(x, t, p, k) > CLEAR:
            return p
        p += 3 * CLEAR
    raise AssertionError("could not find a p clear of the tolerance edge")


def kept_cdf_row(x: np.ndarray, t: float, p: float, k: int) -> np.ndarray:
    """F(i): the renormalized kept mass of tokens 0..i (token-id order)."""
    keep = model_mask_row(x, t, p, k)
    w = _weights_row(x, t if t > 0 else 1.0, keep)
    return np.cumsum(w) / math.fsum(w)


def model_sample_row(x: np.ndarray, t: float, p: float, k: int, u: float) -> int:
    keep = model_mask_row(x, t, p, k)
    if t == 0:
        return int(np.flatnonzero(keep)[0])
    f = kept_cdf_row(x, t, p, k)
    return int(min(np.searchsorted(f, u, side="right"), np.flatnonzero(np.diff(
        np.concatenate([[0.0], f])) > 0)[-1]))


def u_margin_row(x: np.ndarray, t: float, p: float, k: int, u: float) -> float:
    if t == 0:
        return math.inf
    f = kept_cdf_row(x, t, p, k)
    return float(np.min(np.abs(f - u)))


def model_sample(x: np.ndarray, t: Any, p: Any, u: Any, k: Any = None) -> np.ndarray:
    rows = x.shape[0]
    k = np.zeros(rows, dtype=np.int64) if k is None else k
    return np.array([model_sample_row(x[b], float(t[b]), float(p[b]), int(k[b]), float(u[b]))
                     for b in range(rows)], dtype=np.int64)


def u_margin(x: np.ndarray, t: Any, p: Any, u: Any, k: Any = None) -> float:
    rows = x.shape[0]
    k = np.zeros(rows, dtype=np.int64) if k is None else k
    return min(u_margin_row(x[b], float(t[b]), float(p[b]), int(k[b]), float(u[b]))
               for b in range(rows))


# ---------------------------------------------------------------- checks
def describe_row(x: np.ndarray, limit: int = 12) -> str:
    if x.size <= limit:
        return np.array2string(x, precision=6, max_line_width=200)
    vals, counts = np.unique(x, return_counts=True)
    top = ", ".join(f"{v:.6g} x{c}" for v, c in zip(vals[::-1][:6], counts[::-1][:6]))
    return f"{x.size} logits ({x.dtype}), {len(vals)} distinct; largest values: {top}, ..."


def check_mask(got: Any, want: np.ndarray, x: np.ndarray, t: Any, p: Any, k: Any = None,
               what: str = "") -> None:
    got = np.asarray(got)
    assert got.shape == want.shape, f"{what}kept_mask shape {got.shape}, expected {want.shape}"
    assert got.dtype == np.bool_, f"{what}kept_mask must return a bool array, got {got.dtype}"
    bad = np.flatnonzero((got != want).any(axis=1))
    if bad.size == 0:
        return
    b = int(bad[0])
    extra = np.flatnonzero(got[b] & ~want[b])
    missing = np.flatnonzero(want[b] & ~got[b])
    kk = None if k is None else int(np.asarray(k)[b])
    xs = x[b]
    raise AssertionError(
        f"{what}row {b} of {x.shape[0]}: temperature={float(t[b])!r}, top_p={float(p[b])!r}, "
        f"top_k={kk}\n  logits: {describe_row(xs)}\n"
        f"  expected {int(want[b].sum())} kept tokens, got {int(got[b].sum())}\n"
        f"  kept but should not be: ids {extra[:8].tolist()} with logits {xs[extra[:8]].tolist()}\n"
        f"  missing: ids {missing[:8].tolist()} with logits {xs[missing[:8]].tolist()}")


def check_sample(got: Any, want: np.ndarray, x: np.ndarray, t: Any, p: Any, u: Any,
                 k: Any = None, what: str = "") -> None:
    got = np.asarray(got)
    assert got.shape == want.shape, f"{what}sample shape {got.shape}, expected {want.shape}"
    assert got.dtype.kind in "iu", f"{what}sample must return integer ids, got {got.dtype}"
    bad = np.flatnonzero(got != want)
    if bad.size == 0:
        return
    b = int(bad[0])
    kk = None if k is None else int(np.asarray(k)[b])
    raise AssertionError(
        f"{what}row {b} of {x.shape[0]}: temperature={float(t[b])!r}, top_p={float(p[b])!r}, "
        f"top_k={kk}, u={float(u[b])!r}\n  logits: {describe_row(x[b])}\n"
        f"  expected token {int(want[b])} (logit {x[b][want[b]]}), got {int(got[b])}"
        + (f" (logit {x[b][got[b]]})" if 0 <= int(got[b]) < x.shape[1] else ""))


# ---------------------------------------------------------------- statistics
def chi2_sf(stat: float, df: int) -> float:
    """P(chi-square with ``df`` degrees of freedom >= stat): the regularized upper
    incomplete gamma Q(df/2, stat/2), by its series or continued fraction."""
    a, x = df / 2.0, stat / 2.0
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:   # series for P, then Q = 1 - P
        term = total = 1.0 / a
        n = a
        for _ in range(10_000):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300    # Lentz's continued fraction for Q
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(log_front) * h


def chi_square_pvalue(counts: np.ndarray, probs: np.ndarray, min_expected: float = 5.0
                      ) -> tuple[float, float, int]:
    """Pearson's test of ``counts`` against ``probs``; cells expected below
    ``min_expected`` are pooled into one. Returns (statistic, p-value, degrees of freedom)."""
    n = counts.sum()
    expected = probs * n
    small = expected < min_expected
    obs = np.concatenate([counts[~small], [counts[small].sum()]]) if small.any() else counts
    exp = np.concatenate([expected[~small], [expected[small].sum()]]) if small.any() else expected
    keep = exp > 0
    if (obs[~keep] > 0).any():
        return math.inf, 0.0, int(keep.sum()) - 1
    obs, exp = obs[keep], exp[keep]
    stat = float(((obs - exp) ** 2 / exp).sum())
    df = len(obs) - 1
    return stat, (chi2_sf(stat, df) if df > 0 else 1.0), df


# ---------------------------------------------------------------- vectorisation
def check_plausible(fn_name: str, result: Any, logits: np.ndarray) -> None:
    """The minimum a counted call must return to earn the vectorised item: a (B, V) bool
    mask that keeps some finite tokens and no -inf one, or (B,) ids of finite tokens."""
    got = np.asarray(result)
    rows, vocab = logits.shape
    if fn_name == "kept_mask":
        assert got.shape == (rows, vocab) and got.dtype == np.bool_, (
            f"kept_mask must return a ({rows}, {vocab}) bool array, got {got.shape} {got.dtype}")
        assert got.any(), "kept_mask kept nothing at all"
        assert np.isfinite(logits[got]).all(), "kept_mask kept a -inf token"
    else:
        assert got.shape == (rows,) and got.dtype.kind in "iu", (
            f"sample must return ({rows},) integer ids, got {got.shape} {got.dtype}")
        assert ((got >= 0) & (got < vocab)).all(), f"token ids out of range: {got}"
        assert np.isfinite(logits[np.arange(rows), got]).all(), "sample returned a -inf token"


def python_steps(module: Any, fn_name: str, *args: Any, **kwargs: Any) -> int:
    """Python-level steps (function calls and line events) that ``module.fn_name(...)``
    executes in the submission's own source files, counted where the submission runs
    (graders/support/top_p.py). Counted inside the submission's interpreter, a submission
    can silence the count, so it is used only in-process (``check_no_loop``); the CPU time
    measured from outside (``check_cpu``) is what an isolated grade rests on. The call's answer must be
    plausible (``check_plausible``)."""
    from graders.impl import run_support
    from graders.support import top_p as support

    steps, result = run_support("top_p", support.python_steps, getattr(module, fn_name),
                                *args, **kwargs)
    check_plausible(fn_name, result, np.asarray(args[0]))
    return int(steps)


def _vector_inputs(rng: np.random.Generator, rows: int, vocab: int, flat: bool
                   ) -> tuple[np.ndarray, ...]:
    x = rows_of(rng, rows, vocab, 0.3 if flat else 2.0, bf16=not flat)
    t = rng.uniform(0.5, 1.5, rows)
    p = rng.uniform(0.95, 0.99, rows) if flat else rng.uniform(0.5, 0.99, rows)
    k = rng.integers(0, vocab, rows)
    if not flat:
        t[::5] = 0.0
        p[1::7] = 1.0
        k[::3] = 0
    return x, t, p, rng.random(rows), k


STEP_SHAPES = {"rows": (4096, 16), "tokens": (2, 16384)}
STEP_LIMIT = 3000


def check_no_loop(module: Any, fn_name: str, direction: str) -> None:
    """No Python loop over rows (``direction="rows"``) or tokens (``"tokens"``), by the
    submission's Python steps on 4096 rows or on 16384-token rows: vectorised code takes a
    few hundred steps whatever the size, a loop at least one per row or token. The bound is
    absolute, so adding steps anywhere can only lose the item.

    Counted inside the submission's interpreter, the figure is evidence only where the
    submission is trusted code running in the test's own process (practice, the project's
    mutants). A graded, isolated submission could silence the count, so there the item rests
    on the CPU time measured from outside (``check_cpu``) alone and this check is skipped."""
    from graders import impl

    if impl.isolated():
        pytest.skip("the Python step count is taken inside the submission's process, so an "
                    "isolated grade does not use it: vectorised is graded on CPU time "
                    "measured from outside")
    rng = np.random.default_rng(67 if direction == "rows" else 71)
    rows, vocab = STEP_SHAPES[direction]
    x, t, p, u, k = _vector_inputs(rng, rows, vocab, flat=direction == "tokens")
    extra = {"u": u} if fn_name == "sample" else {}
    steps = python_steps(module, fn_name, x, t, p, top_k=k, **extra)
    assert steps < STEP_LIMIT, (
        f"{fn_name} ran {steps} Python steps (calls and lines in the submission) for {rows} x "
        f"{vocab} logits, at most {STEP_LIMIT} allowed: a Python loop over {direction} (a "
        "comprehension or generator counts too, input checks included)")


# ---------------------------------------------------------------- CPU time
# Shapes that make Python work per row, or per token, cost far more than numpy's work per
# element: 32768 rows of 2 tokens; one flat row of 2^18 tokens with p near 1 and no top-k
# (a loop that walks the sorted tokens until the mass reaches p runs through nearly all).
CPU_LIMIT = 40.0        # honest numpy solutions measured at 1-19x the reference, loops 100x+


# the timed inputs are drawn afresh by every test process, so no submission can compute their
# answers ahead of the timed call (outside the measured window) from a seed it can read
TIMED_SEED = secrets.randbits(32)


def cpu_inputs(direction: str) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng([TIMED_SEED, 83 if direction == "rows" else 89])
    if direction == "rows":
        rows, vocab = 32768, 2
        x = rows_of(rng, rows, vocab, 2.0, bf16=True)
        t, p = rng.uniform(0.5, 1.5, rows), rng.uniform(0.5, 0.99, rows)
        t[::5] = 0.0
        p[1::7] = 1.0
        k = rng.integers(0, vocab + 1, rows)
    else:
        rows, vocab = 1, 1 << 18
        x = rows_of(rng, rows, vocab, 0.3)
        t, p = rng.uniform(0.5, 1.5, rows), rng.uniform(0.995, 0.999, rows)
        k = np.zeros(rows, dtype=np.int64)
    return x, t, p, rng.random(rows), k


_reference_cpu: dict[tuple[bool, str, str], float] = {}
_reference_out: dict[tuple[bool, str, str], np.ndarray] = {}


def _positional(fn_name: str, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    x, t, p, u, k = inputs
    return (x, t, p, k) if fn_name == "kept_mask" else (x, t, p, u, k)


def _small(args: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """The first row (64 tokens of it) of each input: a warm-up call."""
    return (args[0][:1, :64].copy(),) + tuple(a[:1] for a in args[1:])


def check_measured(fn_name: str, got: Any, args: tuple[np.ndarray, ...],
                   near: np.ndarray) -> None:
    """A timed call's answer, checked as the correctness tests check answers: every row
    that differs from ``near`` (the reference's answer on the same inputs: a cheap way to
    find the rows worth a look) must be the model's, unless the row sits within ``CLEAR``
    of a tie (p against a candidate mass, u against the CDF), where either side of the
    tie is accepted as the correctness tests accept it by never drawing such rows."""
    x = args[0]
    check_plausible(fn_name, got, x)
    got = np.asarray(got)
    if fn_name == "kept_mask":
        t, p, k = args[1], args[2], args[3]
        rows = np.flatnonzero((got != near).any(axis=1))
    else:
        t, p, u, k = args[1], args[2], args[3], args[4]
        rows = np.flatnonzero(got != near)
    for b in rows.tolist():
        tb, pb, kb = float(t[b]), float(p[b]), int(k[b])
        if p_margin_row(x[b], tb, pb, kb) <= CLEAR:
            continue
        sl = slice(b, b + 1)
        if fn_name == "kept_mask":
            check_mask(got[sl], model_mask_row(x[b], tb, pb, kb)[None], x[sl], t[sl], p[sl],
                       k[sl], what=f"the timed call (row {b}): ")
        else:
            if u_margin_row(x[b], tb, pb, kb, float(u[b])) <= CLEAR:
                continue
            check_sample(got[sl], np.array([model_sample_row(x[b], tb, pb, kb, float(u[b]))]),
                         x[sl], t[sl], p[sl], u[sl], k[sl], what=f"the timed call (row {b}): ")


def reference_cpu(fn_name: str, direction: str) -> float:
    """The reference's CPU seconds for the same call, in a worker of its own (in-process
    when testing in-process): the fastest of two runs after a warm-up. Its answer is kept
    (``reference_out``) to find the rows of a timed answer worth checking."""
    from graders.impl import isolated, measured_call

    key = (isolated(), fn_name, direction)
    if key not in _reference_cpu:
        args = _positional(fn_name, cpu_inputs(direction))
        measured_call("top_p", None, fn_name, *_small(args), reference=True)
        runs = [measured_call("top_p", None, fn_name, *args, reference=True)
                for _ in range(2)]
        _reference_cpu[key] = min(used for _, used in runs)
        _reference_out[key] = np.asarray(runs[0][0])
    return _reference_cpu[key]


def check_cpu(fn_name: str, direction: str) -> None:
    """The call's CPU time, taken from outside the implementation's process, is within
    ``CPU_LIMIT`` times the reference's on the same inputs. Each call is judged on its own
    (never against the submission's own time at another size), so slowing any call down can
    only lose the item. Every timed call is made as the checked calls are (through the
    proxy, no driver) and its answer checked against the model (``check_measured``), so
    answering a timed call differently can only lose. A near miss is measured once more
    (a busy machine)."""
    from graders.impl import OverBudget, isolated, measured_call

    args = _positional(fn_name, cpu_inputs(direction))
    ref = reference_cpu(fn_name, direction)
    near = _reference_out[(isolated(), fn_name, direction)]
    # a small call first: the worker has imported everything before the measured one
    small = _small(args)
    want_small = (model_mask(*small) if fn_name == "kept_mask" else
                  model_sample(small[0], small[1], small[2], small[3], small[4]))
    measured_call("top_p", None, fn_name, *small,
                  check=lambda got: check_measured(fn_name, got, small, want_small))
    bound = CPU_LIMIT * ref
    shape = "x".join(map(str, args[0].shape))
    seen = []
    for _ in range(2):
        try:
            result, used = measured_call(
                "top_p", None, fn_name, *args, budget=1.5 * bound,
                check=lambda got: check_measured(fn_name, got, args, near))
        except OverBudget as exc:
            seen.append(f"more than {exc.budget:.3f} s (stopped at {exc.seconds:.3f} s)")
            break
        if used <= bound:
            return
        seen.append(f"{used:.3f} s")
    raise AssertionError(
        f"{fn_name} on {shape} logits used {', then '.join(seen)} of CPU; the reference "
        f"takes {ref:.4f} s and at most {CPU_LIMIT:g}x that ({bound:.3f} s) is allowed: "
        f"Python work per {direction[:-1]} (a loop over {direction}) is too slow for a batch "
        "of 64 x 128K")
