"""Trivial answers: nothing accepted, nothing emitted, no windows.

Rubric: *
"""

from __future__ import annotations

from typing import Any

import numpy as np


def verify_greedy(draft: np.ndarray, num_draft: np.ndarray, target: np.ndarray,
                  eos_id: int, remaining: np.ndarray) -> list[dict[str, Any]]:
    return [{"accepted": 0, "emitted": [], "finish": None, "computed": 0, "rollback": 0}
            for _ in range(len(draft))]


def verify_sampled(draft: np.ndarray, num_draft: np.ndarray, draft_probs: np.ndarray,
                   target_probs: np.ndarray, u_accept: np.ndarray,
                   u_sample: np.ndarray) -> list[tuple[int, list[int]]]:
    return [(0, []) for _ in range(len(draft))]


def acceptance_report(snapshots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return []
