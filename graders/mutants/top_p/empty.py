"""Trivial answers: nothing is kept and every row samples token 0.

Rubric: *
"""

from __future__ import annotations

import numpy as np


def kept_mask(logits: np.ndarray, temperature: np.ndarray, top_p: np.ndarray,
              top_k: np.ndarray | None = None) -> np.ndarray:
    return np.zeros(np.shape(logits), dtype=bool)


def sample(logits: np.ndarray, temperature: np.ndarray, top_p: np.ndarray,
           u: np.ndarray, top_k: np.ndarray | None = None) -> np.ndarray:
    return np.zeros(np.shape(logits)[0], dtype=np.int64)
