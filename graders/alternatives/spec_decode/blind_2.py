"""Blind alternative (written from the prompt, the stub and the public tests only).

Greedy: no cumprod and no min of three lengths; one boolean "stop here" matrix over the K+1
positions (own token reached | EOS | budget exhausted) whose first True, found by argmax, is
the last emitted position. Sampled: the first rejection is the first True of an appended
"stop" mask, and the draw uses argmax(C > u*S) on the selected weights. Metrics: all
snapshots become one integer matrix; np.diff gives every window's deltas at once.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

_COUNTERS = ("drafts", "draft_tokens", "accepted", "emitted", "finished")
_KEYS = ("time",) + _COUNTERS + ("accepted_per_pos",)


# ---------------------------------------------------------------------------------------
# shared input checks

def _int_array(x: Any, name: str, ndim: int) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}")
    if a.dtype.kind not in "iu":
        if a.dtype.kind == "b" or a.size and not (
                np.issubdtype(a.dtype, np.floating)
                and np.all(np.isfinite(a)) and np.all(a == np.round(a))):
            raise ValueError(f"{name} must hold integers, got dtype {a.dtype}")
        a = a.astype(np.int64)
    return a


def _ragged_header(draft: Any, num_draft: Any) -> tuple[np.ndarray, np.ndarray, int, int]:
    d = _int_array(draft, "draft", 2)
    n = _int_array(num_draft, "num_draft", 1)
    B, K = d.shape
    if n.shape != (B,):
        raise ValueError(f"num_draft must have shape ({B},), got {n.shape}")
    if np.any((n < 0) | (n > K)):
        raise ValueError(f"num_draft must lie in 0..{K}, got {n.tolist()}")
    return d, n.astype(np.int64), B, K


# ---------------------------------------------------------------------------------------
# 1. greedy

def verify_greedy(draft: np.ndarray, num_draft: np.ndarray, target: np.ndarray,
                  eos_id: int, remaining: np.ndarray) -> list[dict[str, Any]]:
    d, n, B, K = _ragged_header(draft, num_draft)
    t = _int_array(target, "target", 2)
    if t.shape != (B, K + 1):
        raise ValueError(f"target must have shape ({B}, {K + 1}), got {t.shape}")
    r = _int_array(remaining, "remaining", 1)
    if r.shape != (B,):
        raise ValueError(f"remaining must have shape ({B},), got {r.shape}")
    if np.any(r < 1):
        raise ValueError(f"remaining must be >= 1, got {r.tolist()}")
    if B == 0:
        return []

    pos = np.arange(K + 1)
    live = pos[:K] < n[:, None]
    # Verification: the first position whose draft fails (padding counts as failing; an
    # appended column guarantees a hit at K). Padding is only ever compared under ~live.
    fail = np.ones((B, K + 1), dtype=bool)
    fail[:, :K] = ~live | (d != t[:, :K])
    v = fail.argmax(axis=1)                               # drafts accepted by verification

    # The last emitted position: the first j that is the target's own token (j == v), an
    # EOS, or the budget's last slot. Positions after v are never reached, since j >= v is
    # already a stop.
    stop = (pos >= v[:, None]) | (t == eos_id) | (pos >= (r - 1)[:, None])
    last = stop.argmax(axis=1)
    n_emit = last + 1
    accepted = np.minimum(n_emit, v)                      # drafts among the emitted tokens
    last_tok = t[np.arange(B), last]

    out: list[dict[str, Any]] = []
    for b in range(B):
        if last_tok[b] == eos_id:
            finish: str | None = "eos"
        elif n_emit[b] == r[b]:
            finish = "length"
        else:
            finish = None
        out.append({"accepted": int(accepted[b]),
                    "emitted": [int(x) for x in t[b, :n_emit[b]]],
                    "finish": finish,
                    "computed": int(n[b]) + 1,
                    "rollback": int(n[b] - accepted[b])})
    return out


# ---------------------------------------------------------------------------------------
# 2. rejection sampling

def _draw(w: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Smallest t with u * S < C[t], per row."""
    C = np.cumsum(w, axis=1)
    S = C[:, -1]
    hit = C > (u * S)[:, None]
    tok = hit.argmax(axis=1)
    # u < 1 and S > 0 give a hit in exact arithmetic; if rounding lost it, the answer is the
    # last token with positive weight (where C reaches S).
    none = ~hit.any(axis=1)
    if np.any(none):
        V = w.shape[1]
        lastpos = V - 1 - (w[:, ::-1] > 0).argmax(axis=1)
        tok = np.where(none, lastpos, tok)
    return tok


def verify_sampled(draft: np.ndarray, num_draft: np.ndarray, draft_probs: np.ndarray,
                   target_probs: np.ndarray, u_accept: np.ndarray,
                   u_sample: np.ndarray) -> list[tuple[int, list[int]]]:
    d, n, B, K = _ragged_header(draft, num_draft)
    q = np.asarray(draft_probs, dtype=np.float64)
    p = np.asarray(target_probs, dtype=np.float64)
    ua = np.asarray(u_accept, dtype=np.float64)
    us = np.asarray(u_sample, dtype=np.float64)
    if p.ndim != 3 or p.shape[:2] != (B, K + 1) or p.shape[2] < 1:
        raise ValueError(f"target_probs must have shape ({B}, {K + 1}, V>=1), got {p.shape}")
    V = p.shape[2]
    if q.shape != (B, K, V):
        raise ValueError(f"draft_probs must have shape ({B}, {K}, {V}), got {q.shape}")
    if ua.shape != (B, K):
        raise ValueError(f"u_accept must have shape ({B}, {K}), got {ua.shape}")
    if us.shape != (B,):
        raise ValueError(f"u_sample must have shape ({B},), got {us.shape}")

    pos = np.arange(K + 1)
    live = pos[:K] < n[:, None]                           # live drafts / q / u_accept
    live_p = pos <= n[:, None]                            # live target positions
    if np.any(live & ((d < 0) | (d >= V))):
        raise ValueError(f"a draft token lies outside the vocabulary 0..{V - 1}")
    if np.any(live[:, :, None] & ~(q >= 0)) or np.any(live_p[:, :, None] & ~(p >= 0)):
        raise ValueError("probabilities must be non-negative numbers")
    if np.any(live & ~((ua >= 0) & (ua < 1))) or np.any(~((us >= 0) & (us < 1))):
        raise ValueError("uniforms must lie in [0, 1)")
    if B == 0:
        return []

    rows = np.arange(B)
    safe = np.where(live, d, 0)
    if K:
        pd = np.take_along_axis(p[:, :K], safe[:, :, None], axis=2)[:, :, 0]
        qd = np.take_along_axis(q, safe[:, :, None], axis=2)[:, :, 0]
        pd, qd, u = (np.where(live, x, 0.0) for x in (pd, qd, ua))
        ok = live & (u * qd < pd)
    else:
        ok = np.zeros((B, 0), dtype=bool)
    stop = np.ones((B, K + 1), dtype=bool)
    stop[:, :K] = ~ok
    a = stop.argmax(axis=1)                               # first rejection, or num_draft

    rejected = a < n
    pa = p[rows, a]
    if K:
        qa = np.where(rejected[:, None], q[rows, np.minimum(a, K - 1)], 0.0)
    else:
        qa = np.zeros_like(pa)
    resid = np.maximum(pa - qa, 0.0)
    use_resid = rejected & (resid.sum(axis=1) > 0)
    w = np.where(use_resid[:, None], resid, pa)
    if np.any(~(w.sum(axis=1) > 0)):
        bad = rows[~(w.sum(axis=1) > 0)].tolist()
        raise ValueError(f"rows {bad}: the target distribution to draw from has no mass")
    tok = _draw(w, us)

    return [(int(a[b]), [int(x) for x in d[b, :a[b]]] + [int(tok[b])]) for b in range(B)]


# ---------------------------------------------------------------------------------------
# 3. metrics

def _count(x: Any, what: str) -> int:
    if isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{what} must be an integer count, got {x!r}")
    if isinstance(x, numbers.Integral):
        v = int(x)
    elif isinstance(x, numbers.Real) and float(x).is_integer():
        v = int(x)
    else:
        raise ValueError(f"{what} must be an integer count, got {x!r}")
    if v < 0:
        raise ValueError(f"{what} must not be negative, got {v}")
    return v


def acceptance_report(snapshots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    snaps = list(snapshots)
    times: list[float] = []
    matrix: list[list[int]] = []
    K: int | None = None
    for k, s in enumerate(snaps):
        if not isinstance(s, dict):
            raise ValueError(f"snapshot {k} must be a dict")
        missing = [key for key in _KEYS if key not in s]
        if missing:
            raise ValueError(f"snapshot {k} lacks keys {missing}")
        t = s["time"]
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not np.isfinite(t):
            raise ValueError(f"snapshot {k}: time must be a finite number, got {t!r}")
        app = s["accepted_per_pos"]
        if isinstance(app, (str, bytes, dict)) or not hasattr(app, "__len__"):
            raise ValueError(f"snapshot {k}: accepted_per_pos must be a list")
        if K is None:
            K = len(app)
        elif len(app) != K:
            raise ValueError(f"snapshot {k}: accepted_per_pos has {len(app)} entries, "
                             f"earlier snapshots have {K}")
        row = [_count(s[c], f"snapshot {k}: {c}") for c in _COUNTERS]
        row += [_count(x, f"snapshot {k}: accepted_per_pos[{i}]") for i, x in enumerate(app)]
        times.append(float(t))
        matrix.append(row)
    for k in range(1, len(times)):
        if not times[k] > times[k - 1]:
            raise ValueError(f"snapshot times must strictly increase: {times[k - 1]} then "
                             f"{times[k]}")
    if len(snaps) < 2:
        return []

    M = np.array(matrix, dtype=np.int64)                  # (N, 5 + K)
    D = np.diff(M, axis=0)                                # every window's deltas
    valid = ~np.any(D < 0, axis=1)
    iD, iT, iA, iE, iF = range(5)
    report: list[dict[str, Any]] = []
    for w in range(D.shape[0]):
        out: dict[str, Any] = {"start": snaps[w]["time"], "end": snaps[w + 1]["time"],
                               "valid": bool(valid[w]), "acceptance_rate": None,
                               "mean_acceptance_length": None, "per_position": None,
                               "steps": None}
        if valid[w]:
            dw = D[w]
            low = max(int(dw[iE] - dw[iA]), 0)
            hidden = min(int(dw[iF]), int(dw[5])) if K else 0
            out["steps"] = (low, low + hidden)
            if dw[iD] > 0:
                if dw[iT] > 0:
                    out["acceptance_rate"] = float(dw[iA] / dw[iT])
                out["mean_acceptance_length"] = float(1 + dw[iA] / dw[iD])
                out["per_position"] = [float(x / dw[iD]) for x in dw[5:]]
        report.append(out)
    return report
