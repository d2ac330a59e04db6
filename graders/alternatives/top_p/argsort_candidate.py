"""Independent correct solution in the style most candidates reach: argsort, cumsum, then
extend the cut to the tied values.

Written by the kata's author working from the prompt and stub (no separate helper could be
started, so not blind: the author also wrote the reference). It differs from the reference
in the ways the tests must allow: an (unstable) argsort of indices instead of a sort of
values, probabilities normalized before the cumsum (compared with p - 1e-6 directly), top-k
taken by position and then widened to ties by value, explicit branches for T = 0 and
p >= 1 applied as masks, and sampling by np.argmax(cdf > u) on a normalized CDF.
"""

from __future__ import annotations

import numpy as np


def _prep(logits, temperature, top_p, top_k):  # type: ignore[no-untyped-def]
    x = np.asarray(logits)
    if not isinstance(logits, np.ndarray) or x.ndim != 2 or x.size == 0:
        x = np.asarray(logits, dtype=np.float64)
        if x.ndim != 2 or x.size == 0:
            raise ValueError("logits must be a non-empty (B, V) array")
    x = x.astype(np.float64)                      # copy
    if np.isnan(x).any():
        raise ValueError("NaN logit")
    if np.isposinf(x).any():
        raise ValueError("+inf logit")
    if np.isneginf(x).all(axis=1).any():
        raise ValueError("a row has no finite logit")
    B = x.shape[0]
    T = np.asarray(temperature, dtype=np.float64)
    P = np.asarray(top_p, dtype=np.float64)
    if T.shape != (B,) or P.shape != (B,):
        raise ValueError("temperature and top_p must have shape (B,)")
    if not np.all(np.isfinite(T)) or np.any(T < 0):
        raise ValueError("bad temperature")
    if np.any(np.isnan(P)) or np.any(P <= 0):
        raise ValueError("bad top_p")
    if top_k is None:
        K = np.zeros(B, dtype=np.int64)
    else:
        K0 = np.asarray(top_k)
        if K0.shape != (B,):
            raise ValueError("top_k must have shape (B,)")
        if K0.dtype.kind == "f" and np.all(np.isfinite(K0)) and np.all(K0 == np.trunc(K0)):
            K0 = K0.astype(np.int64)
        if K0.dtype.kind not in "iu":
            raise ValueError("top_k must be integers")
        K = K0.astype(np.int64)
        if np.any(K < 0):
            raise ValueError("top_k must be >= 0")
    return x, T, P, K


def _mask_and_weights(x, T, P, K):  # type: ignore[no-untyped-def]
    B, V = x.shape
    rows = np.arange(B)
    finite = np.isfinite(x)
    order = np.argsort(-x, axis=1)                 # any tie order: only values are used below
    xs = np.take_along_axis(x, order, axis=1)
    n_finite = finite.sum(axis=1)
    k_eff = np.where((K == 0) | (K > n_finite), n_finite, K)
    kth_value = xs[rows, k_eff - 1]
    in_topk = finite & (x >= kth_value[:, None])
    Tsafe = np.where(T == 0, 1.0, T)
    mx = xs[:, :1]
    ws = np.exp((xs - mx) / Tsafe[:, None])
    ws[~(xs >= kth_value[:, None])] = 0.0           # sorted weights over the top-k set
    probs = ws / ws.sum(axis=1, keepdims=True)
    cum = np.cumsum(probs, axis=1)
    reached = cum >= (P - 1e-6)[:, None]
    reached[:, -1] = True
    idx = np.argmax(reached, axis=1)
    cut = xs[rows, idx]
    mask = in_topk & (x >= cut[:, None])
    mask = np.where((P >= 1)[:, None], in_topk, mask)
    greedy = finite & (x == mx)
    mask = np.where((T == 0)[:, None], greedy, mask)
    w = np.where(mask, np.exp((x - mx) / Tsafe[:, None]), 0.0)
    return mask, w


def kept_mask(logits, temperature, top_p, top_k=None):  # type: ignore[no-untyped-def]
    return _mask_and_weights(*_prep(logits, temperature, top_p, top_k))[0]


def sample(logits, temperature, top_p, u, top_k=None):  # type: ignore[no-untyped-def]
    x, T, P, K = _prep(logits, temperature, top_p, top_k)
    U = np.asarray(u, dtype=np.float64)
    if U.shape != (x.shape[0],) or np.any(np.isnan(U)) or np.any(U < 0) or np.any(U >= 1):
        raise ValueError("u must be (B,) values in [0, 1)")
    mask, w = _mask_and_weights(x, T, P, K)
    cdf = np.cumsum(w, axis=1) / w.sum(axis=1, keepdims=True)
    above = cdf > U[:, None]
    positive = w > 0
    last_positive = x.shape[1] - 1 - np.argmax(positive[:, ::-1], axis=1)
    pick = np.where(above.any(axis=1), np.argmax(above, axis=1), last_positive)
    first_max = np.argmax(mask, axis=1)
    return np.where(T == 0, first_max, pick).astype(np.int64)
