"""Goodness-of-fit checks for the sampled-verification tests, without scipy.

``chi2_sf`` is the upper tail of the chi-square distribution (the regularized upper
incomplete gamma function Q(dof/2, x/2), by series or continued fraction). Each statistical
test rejects at ``ALPHA``: a correct implementation fails a given check with probability
about ``ALPHA`` over the choice of seed (the chi-square approximation holds well here: every
expected cell count is at least ``MIN_EXPECTED``). The seeds are fixed, so a run is
deterministic; the stated rate is what a different seed would risk.
"""

from __future__ import annotations

import math

import numpy as np

ALPHA = 1e-6
MIN_EXPECTED = 20.0


def _gamma_p_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    n = a
    for _ in range(10_000):
        n += 1
        term *= x / n
        total += term
        if abs(term) < abs(total) * 1e-15:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_q_fraction(a: float, x: float) -> float:
    tiny = 1e-300
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
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi2_sf(x: float, dof: int) -> float:
    """P(X >= x) for X ~ chi-square with ``dof`` degrees of freedom."""
    if x <= 0:
        return 1.0
    a, half = dof / 2, x / 2
    if half < a + 1:
        return 1.0 - _gamma_p_series(a, half)
    return _gamma_q_fraction(a, half)


def chi_square(observed: np.ndarray, expected: np.ndarray) -> tuple[float, int, float]:
    """Pearson's statistic over cells with a positive expected count; (stat, dof, p-value).

    ``expected`` must already be scaled to the observed total of each group; the caller gives
    the degrees of freedom through the cells (one constraint per group, see ``fit``).
    A count in a cell the truth gives probability zero is an immediate failure (p = 0).
    """
    observed = np.asarray(observed, dtype=np.float64).ravel()
    expected = np.asarray(expected, dtype=np.float64).ravel()
    if np.any((expected == 0) & (observed > 0)):
        return math.inf, 0, 0.0
    keep = expected > 0
    stat = float((((observed - expected) ** 2)[keep] / expected[keep]).sum())
    return stat, int(keep.sum()), 0.0


def fit(observed: np.ndarray, probs: np.ndarray) -> tuple[float, int, float]:
    """Chi-square test that each row of ``observed`` (groups x cells counts) follows the
    matching row of ``probs``. Returns (stat, dof, p-value); groups with no data are skipped.
    """
    observed = np.atleast_2d(np.asarray(observed, dtype=np.float64))
    probs = np.atleast_2d(np.asarray(probs, dtype=np.float64))
    totals = observed.sum(axis=1, keepdims=True)
    expected = totals * probs / probs.sum(axis=1, keepdims=True)
    used = totals[:, 0] > 0
    stat, cells, _ = chi_square(observed[used], expected[used])
    if math.isinf(stat):
        return stat, 0, 0.0
    dof = cells - int(used.sum())
    assert expected[used][probs[used] > 0].min() >= MIN_EXPECTED, (
        "test design: an expected count is too small for the chi-square approximation")
    return stat, dof, chi2_sf(stat, dof)
