"""top_p: nucleus (top-p) and top-k sampling that does not depend on sort order.

Fill in both functions. The prompt is katas/top_p/README.md; run the public tests with
``nox -s kata -- top_p``.

Shapes: ``B`` rows (requests), ``V`` tokens (the vocabulary). Every per-row parameter is a
``(B,)`` array. Both functions are pure: they never modify their arguments.

Rules, in short (the prompt has the details):
- Tokens with equal logits are tied; a kept set never splits a tie.
- ``temperature == 0`` is greedy: the kept set is every token tied for the maximum logit.
- Otherwise: top-k (if ``top_k[b] > 0``) keeps every finite token whose logit is at least
  the ``k``-th largest; then top-p keeps the smallest tie-closed set of most probable of
  those tokens whose probability mass, renormalized over the top-k set with
  ``softmax(logits / temperature)`` in float64, is at least ``top_p[b] - 1e-6``.
  ``top_p[b] >= 1`` turns top-p off. ``-inf`` logits are never kept.
- Bad input raises ValueError.
"""

from __future__ import annotations

import numpy as np

_PROMPT = "see katas/top_p/README.md"

#: Mass comparisons use this slack: a set's mass "reaches" p when it is >= p - MASS_TOLERANCE.
MASS_TOLERANCE = 1e-6


def kept_mask(logits: np.ndarray, temperature: np.ndarray, top_p: np.ndarray,
              top_k: np.ndarray | None = None) -> np.ndarray:
    """The ``(B, V)`` bool mask of the tokens each row may sample.

    ``logits``: ``(B, V)`` real array, ``B >= 1``, ``V >= 1`` (float16/32/64); ``-inf``
    marks a banned token. ``temperature``: ``(B,)``, finite, ``>= 0``. ``top_p``: ``(B,)``,
    ``> 0`` (values ``>= 1``, ``inf`` included, disable top-p). ``top_k``: ``None`` or
    ``(B,)`` whole numbers ``>= 0``, an integer array or whole-valued floats (``0``
    disables top-k for that row).

    Row ``b`` of the result depends only on row ``b`` of the inputs and only on the values
    of its logits: permuting the vocabulary permutes the mask.

    Raises ValueError for: wrong shapes, NaN or ``+inf`` logits, a row whose logits are all
    ``-inf``, a temperature that is negative or not finite, a top_p that is ``<= 0`` or
    NaN, a top_k that is negative or not a whole number; greedy rows are checked too.
    """
    raise NotImplementedError(f"kept_mask ({_PROMPT})")


def sample(logits: np.ndarray, temperature: np.ndarray, top_p: np.ndarray,
           u: np.ndarray, top_k: np.ndarray | None = None) -> np.ndarray:
    """One token id per row, ``(B,)`` int64, chosen deterministically from ``u``.

    ``u``: ``(B,)`` floats in ``[0, 1)``, one uniform draw per row. The other arguments are
    those of ``kept_mask``.

    Greedy rows (``temperature == 0``) return the lowest token id tied for the maximum
    logit. Other rows invert the CDF of the kept distribution (``softmax(logits / T)``
    renormalized over the kept set) walked in token-id order: the answer is the kept
    token ``i`` with ``F(i - 1) <= u < F(i)``, where ``F(i)`` is the kept mass of tokens
    ``0 .. i``.

    Raises ValueError as ``kept_mask`` does, and for a ``u`` outside ``[0, 1)`` or of the
    wrong shape.
    """
    raise NotImplementedError(f"sample ({_PROMPT})")
