"""An independent correct solution of spec_decode, written from the prompt and the stub only.

Written by the kata's author session without the reference open (no helper agent could be
started). It differs from the reference on purpose: a plain loop over rows and positions
instead of masks and cumulative products; the accept test as a ratio with q(d) = 0 handled
apart; draws that normalise the weights first and search the CDF with numpy; steps returned
as a list; restarts detected while walking the counters one by one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

KEYS = ("drafts", "draft_tokens", "accepted", "emitted", "finished")


def _batch(draft: Any, num_draft: Any) -> tuple[np.ndarray, list[int]]:
    draft = np.asarray(draft)
    counts = [int(x) for x in np.asarray(num_draft).reshape(-1)]
    if draft.ndim != 2 or np.asarray(num_draft).shape != (draft.shape[0],):
        raise ValueError("draft must be 2-D and num_draft hold one count per row")
    for n in counts:
        if not 0 <= n <= draft.shape[1]:
            raise ValueError(f"num_draft {n} outside 0..{draft.shape[1]}")
    return draft, counts


def verify_greedy(draft: np.ndarray, num_draft: np.ndarray, target: np.ndarray,
                  eos_id: int, remaining: np.ndarray) -> list[dict[str, Any]]:
    draft, counts = _batch(draft, num_draft)
    target = np.asarray(target)
    budget = np.asarray(remaining)
    B, K = draft.shape
    if target.shape != (B, K + 1):
        raise ValueError("target must be (B, K + 1)")
    if budget.shape != (B,) or (budget < 1).any():
        raise ValueError("remaining must be (B,) and at least 1 everywhere")
    results = []
    for b in range(B):
        n, cap = counts[b], int(budget[b])
        out: list[int] = []
        kept = 0
        finish = None
        i = 0
        while True:
            tok = int(target[b, i])
            out.append(tok)
            ok = i < n and int(draft[b, i]) == tok
            kept += ok
            if tok == eos_id:
                finish = "eos"
            elif len(out) >= cap:
                finish = "length"
            if finish or not ok:
                break
            i += 1
        results.append({"accepted": kept, "emitted": out, "finish": finish,
                        "computed": n + 1, "rollback": n - kept})
    return results


def _draw(w: np.ndarray, u: float) -> int:
    total = float(w.sum())
    cdf = np.cumsum(w / total)
    # smallest t with u < cdf[t]
    t = int(np.searchsorted(cdf, u, side="right"))
    while t > 0 and w[min(t, len(w) - 1)] == 0:   # rounding past the end lands on mass
        t -= 1
    return min(t, len(w) - 1)


def verify_sampled(draft: np.ndarray, num_draft: np.ndarray, draft_probs: np.ndarray,
                   target_probs: np.ndarray, u_accept: np.ndarray,
                   u_sample: np.ndarray) -> list[tuple[int, list[int]]]:
    draft, counts = _batch(draft, num_draft)
    q = np.asarray(draft_probs, dtype=float)
    p = np.asarray(target_probs, dtype=float)
    ua = np.asarray(u_accept, dtype=float)
    us = np.asarray(u_sample, dtype=float)
    B, K = draft.shape
    if p.ndim != 3 or p.shape[:2] != (B, K + 1):
        raise ValueError("target_probs must be (B, K + 1, V)")
    V = p.shape[2]
    if q.shape != (B, K, V) or ua.shape != (B, K) or us.shape != (B,):
        raise ValueError("draft_probs (B, K, V), u_accept (B, K), u_sample (B,)")
    if (p < 0).any() or (q < 0).any():
        raise ValueError("negative probability")
    if (ua < 0).any() or (ua >= 1).any() or (us < 0).any() or (us >= 1).any():
        raise ValueError("uniforms must be in [0, 1)")
    results = []
    for b in range(B):
        toks = [int(x) for x in draft[b, :counts[b]]]
        if any(not 0 <= t < V for t in toks):
            raise ValueError("draft token outside the vocabulary")
        results.append(toks)
    out = []
    for b, toks in enumerate(results):
        emitted: list[int] = []
        final = None
        for i, d in enumerate(toks):
            pd, qd = p[b, i, d], q[b, i, d]
            accept = pd > 0 if qd == 0 else ua[b, i] < pd / qd
            if not accept:
                res = np.clip(p[b, i] - q[b, i], 0, None)
                final = _draw(res if res.sum() > 0 else p[b, i], float(us[b]))
                break
            emitted.append(d)
        if final is None:
            final = _draw(p[b, len(toks)], float(us[b]))
        out.append((len(emitted), emitted + [final]))
    return out


def acceptance_report(snapshots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    width = None
    last_time = None
    for s in snapshots:
        if "time" not in s or "accepted_per_pos" not in s or any(k not in s for k in KEYS):
            raise ValueError("snapshot misses a key")
        if any(s[k] < 0 for k in KEYS) or any(x < 0 for x in s["accepted_per_pos"]):
            raise ValueError("negative counter")
        if width is not None and len(s["accepted_per_pos"]) != width:
            raise ValueError("accepted_per_pos changes length")
        width = len(s["accepted_per_pos"])
        if last_time is not None and not s["time"] > last_time:
            raise ValueError("times must increase")
        last_time = s["time"]
    windows = []
    for prev, cur in zip(snapshots, snapshots[1:]):
        w: dict[str, Any] = {"start": prev["time"], "end": cur["time"], "valid": True,
                             "acceptance_rate": None, "mean_acceptance_length": None,
                             "per_position": None, "steps": None}
        d = {}
        for k in KEYS:
            d[k] = cur[k] - prev[k]
            if d[k] < 0:
                w["valid"] = False
        pos = []
        for a, c in zip(prev["accepted_per_pos"], cur["accepted_per_pos"]):
            pos.append(c - a)
            if c < a:
                w["valid"] = False
        if w["valid"]:
            base = d["emitted"] - d["accepted"]
            could_hide = pos[0] if pos else 0   # steps that emitted an accepted draft
            w["steps"] = [base, base + min(d["finished"], could_hide)]
            if d["drafts"]:
                w["acceptance_rate"] = d["accepted"] / d["draft_tokens"]
                w["mean_acceptance_length"] = 1.0 + d["accepted"] / d["drafts"]
                w["per_position"] = [x / d["drafts"] for x in pos]
        windows.append(w)
    return windows
