"""spec_decode reference: greedy and sampled verification over a ragged batch, and
acceptance metrics from counter snapshots.

Every function is vectorised over the batch: a mask ``pos < num_draft[:, None]`` keeps the
padding out, and a cumulative product turns per-position matches into the leading run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

COUNTERS = ("drafts", "draft_tokens", "accepted", "emitted", "finished")


def _check_batch(draft: np.ndarray, num_draft: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    draft, num_draft = np.asarray(draft), np.asarray(num_draft)
    if draft.ndim != 2 or num_draft.shape != draft.shape[:1]:
        raise ValueError(f"draft must be (B, K) and num_draft (B,): got {draft.shape}, "
                         f"{num_draft.shape}")
    if np.any(num_draft < 0) or np.any(num_draft > draft.shape[1]):
        raise ValueError(f"num_draft must lie in 0..{draft.shape[1]}: {num_draft.tolist()}")
    return draft, num_draft.astype(np.int64)


def _leading_run(ok: np.ndarray) -> np.ndarray:
    """Per row, how many leading entries of the boolean (B, K) array are True."""
    run: np.ndarray = np.cumprod(ok, axis=1).sum(axis=1).astype(np.int64)
    return run


def verify_greedy(draft: np.ndarray, num_draft: np.ndarray, target: np.ndarray,
                  eos_id: int, remaining: np.ndarray) -> list[dict[str, Any]]:
    draft, num_draft = _check_batch(draft, num_draft)
    target, remaining = np.asarray(target), np.asarray(remaining)
    B, K = draft.shape
    if target.shape != (B, K + 1) or remaining.shape != (B,):
        raise ValueError(f"target must be ({B}, {K + 1}) and remaining ({B},): got "
                         f"{target.shape}, {remaining.shape}")
    if np.any(remaining < 1):
        raise ValueError(f"remaining must be >= 1: {remaining.tolist()}")

    pos = np.arange(K + 1)
    live = pos[:K] < num_draft[:, None]
    verified = _leading_run((draft == target[:, :K]) & live)       # accepted by verification
    eos_at = (target == eos_id) & (pos <= verified[:, None])
    cut_eos = np.where(eos_at.any(axis=1), eos_at.argmax(axis=1) + 1, K + 1)
    n_emit = np.minimum(np.minimum(verified + 1, cut_eos), remaining)
    accepted = np.minimum(verified, n_emit)                          # only drafts emitted
    last_is_eos = target[np.arange(B), n_emit - 1] == eos_id

    rows = []
    for b in range(B):
        finish = "eos" if last_is_eos[b] else "length" if n_emit[b] == remaining[b] else None
        rows.append({
            "accepted": int(accepted[b]),
            "emitted": target[b, :n_emit[b]].tolist(),
            "finish": finish,
            "computed": int(num_draft[b]) + 1,
            "rollback": int(num_draft[b] - accepted[b]),
        })
    return rows


def verify_sampled(draft: np.ndarray, num_draft: np.ndarray, draft_probs: np.ndarray,
                   target_probs: np.ndarray, u_accept: np.ndarray,
                   u_sample: np.ndarray) -> list[tuple[int, list[int]]]:
    draft, num_draft = _check_batch(draft, num_draft)
    q, p = np.asarray(draft_probs), np.asarray(target_probs)   # no copies: read in place
    u_accept, u_sample = np.asarray(u_accept, dtype=np.float64), np.asarray(u_sample, np.float64)
    B, K = draft.shape
    if p.ndim != 3 or p.shape[:2] != (B, K + 1) or q.shape != (B, K, p.shape[2]):
        raise ValueError(f"target_probs must be ({B}, {K + 1}, V) and draft_probs ({B}, {K}, V):"
                         f" got {p.shape}, {q.shape}")
    if u_accept.shape != (B, K) or u_sample.shape != (B,):
        raise ValueError(f"u_accept must be ({B}, {K}) and u_sample ({B},): got "
                         f"{u_accept.shape}, {u_sample.shape}")
    V = p.shape[2]
    live = np.arange(K) < num_draft[:, None]
    if np.any(live & ((draft < 0) | (draft >= V))):
        raise ValueError(f"draft tokens must lie in 0..{V - 1}")
    if (p.size and p.min() < 0) or (q.size and q.min() < 0):   # one pass each, no temporaries
        raise ValueError("probabilities must be non-negative")
    for u in (u_accept, u_sample):
        if np.any((u < 0) | (u >= 1)):
            raise ValueError("uniforms must lie in [0, 1)")

    # Only what the rule reads is touched: the (B, K) probabilities of the drafts, then one
    # (B, V) row per request; those are computed in float64 whatever the input dtype.
    d = np.where(live, draft, 0)[..., None]
    p_d = np.take_along_axis(p[:, :K], d, axis=2)[..., 0].astype(np.float64)
    q_d = np.take_along_axis(q, d, axis=2)[..., 0].astype(np.float64)
    accepted = _leading_run((u_accept * q_d < p_d) & live)

    rows = np.arange(B)
    p_at = p[rows, accepted].astype(np.float64)
    if K > 0:
        q_at = q[rows, np.minimum(accepted, K - 1)].astype(np.float64)
        residual = np.maximum(p_at - q_at, 0.0)
    else:
        residual = p_at
    rejected = accepted < num_draft
    w = np.where(rejected[:, None], residual, p_at)
    w = np.where(w.sum(axis=1, keepdims=True) > 0, w, p_at)          # p == q: draw from p
    cdf = np.cumsum(w, axis=1)
    token = np.minimum((cdf <= u_sample[:, None] * cdf[:, -1:]).sum(axis=1), V - 1)

    return [(int(accepted[b]), draft[b, :accepted[b]].tolist() + [int(token[b])])
            for b in range(B)]


def _check_snapshot(s: dict[str, Any], width: int | None) -> int:
    try:
        values = [s[k] for k in COUNTERS] + list(s["accepted_per_pos"])
        float(s["time"])
    except KeyError as exc:
        raise ValueError(f"snapshot lacks the key {exc.args[0]!r}: {s}") from exc
    if any(v < 0 for v in values):
        raise ValueError(f"counters must be non-negative: {s}")
    if width is not None and len(s["accepted_per_pos"]) != width:
        raise ValueError("accepted_per_pos lists differ in length")
    return len(s["accepted_per_pos"])


def acceptance_report(snapshots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    width = None
    for i, s in enumerate(snapshots):
        width = _check_snapshot(s, width)
        if i and not float(s["time"]) > float(snapshots[i - 1]["time"]):
            raise ValueError(f"snapshot times must strictly increase (index {i})")

    report = []
    for a, b in zip(snapshots, snapshots[1:]):
        delta = {k: int(b[k]) - int(a[k]) for k in COUNTERS}
        per_pos = [int(y) - int(x) for x, y in zip(a["accepted_per_pos"], b["accepted_per_pos"])]
        window: dict[str, Any] = {"start": float(a["time"]), "end": float(b["time"]),
                                  "valid": False, "acceptance_rate": None,
                                  "mean_acceptance_length": None, "per_position": None,
                                  "steps": None}
        report.append(window)
        if min(delta.values()) < 0 or min(per_pos, default=0) < 0:
            continue                                 # a restart inside the window
        # Every untruncated step emits its accepted drafts + 1 target token. A finishing
        # request's last step may emit accepted drafts only: it hides, and it is one of the
        # steps that emitted an accepted draft (accepted_per_pos[0]).
        low = delta["emitted"] - delta["accepted"]
        hidden = min(delta["finished"], per_pos[0] if per_pos else 0)
        window["valid"] = True
        window["steps"] = (low, low + hidden)
        if delta["drafts"] > 0 and delta["draft_tokens"] > 0:
            window["acceptance_rate"] = delta["accepted"] / delta["draft_tokens"]
            window["mean_acceptance_length"] = 1 + delta["accepted"] / delta["drafts"]
            window["per_position"] = [n / delta["drafts"] for n in per_pos]
    return report
