"""A Python loop over tokens that computes the timed call's answer before the call, from
the seed the public tests use.

Attack: on its first call kept_mask and sample start a thread that rebuilds the vectorised
item's inputs from tests/top_p/helpers.py's generator and fixed seeds (83 for rows, 89 for
tokens) and runs the slow token loop on them; a later call whose logits match is answered
from that table, so the CPU spent falls outside the measured call.
Class: growth
Targets: vectorised
Stopped by: the timed inputs are drawn per test process from a secret seed (tests/top_p/helpers.py: TIMED_SEED), so the table never matches; and a call answered early by a thread is still checked
Blind: written from the harness code for round 3
"""

from __future__ import annotations

import numpy as np

MASS_TOLERANCE = 1e-6


def _row_param(name: str, value: object, rows: int) -> np.ndarray:
    arr = np.asarray(value)
    if arr.shape != (rows,):
        raise ValueError(f"{name} must have shape ({rows},), got {arr.shape}")
    return arr


def _check(logits: object, temperature: object, top_p: object, top_k: object,
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validated inputs: logits (B, V) as a float array, T and p as float64, k as int64."""
    x = np.asarray(logits)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"logits must be a non-empty (B, V) array, got shape {x.shape}")
    if x.dtype.kind not in "fiu":
        raise ValueError(f"logits must be real numbers, got dtype {x.dtype}")
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    if np.isnan(x).any() or np.isposinf(x).any():
        raise ValueError("logits must not contain NaN or +inf")
    if not np.isfinite(x).any(axis=1).all():
        raise ValueError("every row needs at least one finite logit")
    rows = x.shape[0]
    t = _row_param("temperature", temperature, rows).astype(np.float64)
    if not (np.isfinite(t) & (t >= 0)).all():
        raise ValueError(f"temperature must be finite and >= 0, got {t}")
    p = _row_param("top_p", top_p, rows).astype(np.float64)
    if not (p > 0).all():  # also rejects NaN
        raise ValueError(f"top_p must be > 0, got {p}")
    if top_k is None:
        k = np.zeros(rows, dtype=np.int64)
    else:
        k_raw = _row_param("top_k", top_k, rows)
        if k_raw.dtype.kind not in "iu" and not (
                k_raw.dtype.kind == "f" and np.isfinite(k_raw).all()
                and (k_raw == np.round(k_raw)).all()):
            raise ValueError(f"top_k must hold integers, got {k_raw}")
        k = k_raw.astype(np.int64)
        if (k < 0).any():
            raise ValueError(f"top_k must be >= 0, got {k}")
    return x, t, p, k


def _cut(x: np.ndarray, t: np.ndarray, p: np.ndarray, k: np.ndarray,
         ) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the logit cut (keep finite tokens >= cut) and the row maximum."""
    rows, vocab = x.shape
    r = np.arange(rows)
    desc = np.sort(x, axis=1)[:, ::-1]          # values only: ties have no order here
    top = desc[:, 0].astype(np.float64)
    finite = np.isfinite(desc).sum(axis=1)      # -inf sorts last
    # top-k: the k-th largest value (k = 0 or k >= the finite count: every finite token)
    kk = np.where((k > 0) & (k < finite), k, finite)
    cut_k = desc[r, kk - 1]
    # top-p over the top-k set, masses in float64 along the sorted values
    scale = np.where(t > 0, t, 1.0)
    w = np.exp((desc.astype(np.float64) - top[:, None]) / scale[:, None])
    w[desc < cut_k[:, None]] = 0.0
    need = (p - MASS_TOLERANCE) * w.sum(axis=1)
    mass = np.zeros(rows)
    first = np.full(rows, vocab - 1)
    open_rows = np.ones(rows, dtype=bool)
    for j in range(vocab):
        mass += w[:, j]
        done = open_rows & (mass >= need)
        first[done] = j
        open_rows &= ~done
        if not open_rows.any():
            break
    cut = np.where(p >= 1, cut_k, np.maximum(desc[r, first], cut_k))
    cut = np.where(t == 0, desc[:, 0], cut)     # greedy: the maximum and its ties
    return cut, top


def _mask(x: np.ndarray, cut: np.ndarray) -> np.ndarray:
    mask: np.ndarray = np.isfinite(x) & (x >= cut[:, None])
    return mask


def kept_mask(logits: np.ndarray, temperature: np.ndarray, top_p: np.ndarray,
              top_k: np.ndarray | None = None) -> np.ndarray:
    """The (B, V) bool mask of the tokens each row may sample (see the kata stub)."""
    x, t, p, k = _check(logits, temperature, top_p, top_k)
    cut, _ = _cut(x, t, p, k)
    return _mask(x, cut)


def sample(logits: np.ndarray, temperature: np.ndarray, top_p: np.ndarray,
           u: np.ndarray, top_k: np.ndarray | None = None) -> np.ndarray:
    """One token id per row by inverse CDF in token-id order (see the kata stub)."""
    x, t, p, k = _check(logits, temperature, top_p, top_k)
    draw = _row_param("u", u, x.shape[0]).astype(np.float64)
    if not ((draw >= 0) & (draw < 1)).all():
        raise ValueError(f"u must lie in [0, 1), got {draw}")
    cut, top = _cut(x, t, p, k)
    keep = _mask(x, cut)
    scale = np.where(t > 0, t, 1.0)
    w = np.where(keep, np.exp((x.astype(np.float64) - top[:, None]) / scale[:, None]), 0.0)
    cdf = np.cumsum(w, axis=1)
    target = draw * cdf[:, -1]
    pick = (cdf <= target[:, None]).sum(axis=1)
    # rounding can put target at the very top: fall back to the last token with weight
    last = x.shape[1] - 1 - np.argmax(w[:, ::-1] > 0, axis=1)
    pick = np.minimum(pick, last)
    greedy = np.argmax(keep, axis=1)            # lowest id among the tied maxima
    ids: np.ndarray = np.where(t == 0, greedy, pick).astype(np.int64)
    return ids


_honest_mask, _honest_sample = kept_mask, sample
_table: dict[tuple[str, bytes], object] = {}
_started: list[object] = []


def _bf16(x):  # type: ignore[no-untyped-def]
    f = np.ascontiguousarray(x, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return np.where(np.isfinite(f), rounded.view(np.float32), f).astype(np.float32)


def _inputs(direction):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(83 if direction == "rows" else 89)
    if direction == "rows":
        rows, vocab = 32768, 2
        x = _bf16((rng.standard_normal((rows, vocab)) * 2.0).astype(np.float32))
        t, p = rng.uniform(0.5, 1.5, rows), rng.uniform(0.5, 0.99, rows)
        t[::5] = 0.0
        p[1::7] = 1.0
        k = rng.integers(0, vocab + 1, rows)
    else:
        rows, vocab = 1, 1 << 18
        x = (rng.standard_normal((rows, vocab)) * 0.3).astype(np.float32)
        t, p = rng.uniform(0.5, 1.5, rows), rng.uniform(0.995, 0.999, rows)
        k = np.zeros(rows, dtype=np.int64)
    return x, t, p, rng.random(rows), k


def _precompute() -> None:
    for direction in ("rows", "tokens"):
        x, t, p, u, k = _inputs(direction)
        key = np.ascontiguousarray(x).tobytes()
        _table[("kept_mask", key)] = _honest_mask(x, t, p, k)
        _table[("sample", key)] = _honest_sample(x, t, p, u, k)


def _start() -> None:
    if not _started:
        import threading

        thread = threading.Thread(target=_precompute, daemon=True)
        thread.start()
        _started.append(thread)


def kept_mask(logits, temperature, top_p, top_k=None):  # type: ignore[no-untyped-def]
    _start()
    got = _table.get(("kept_mask", np.ascontiguousarray(np.asarray(logits)).tobytes()))
    return got if got is not None else _honest_mask(logits, temperature, top_p, top_k)


def sample(logits, temperature, top_p, u, top_k=None):  # type: ignore[no-untyped-def]
    _start()
    got = _table.get(("sample", np.ascontiguousarray(np.asarray(logits)).tobytes()))
    return got if got is not None else _honest_sample(logits, temperature, top_p, u, top_k)
