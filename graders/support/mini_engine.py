"""The toy model and the sampler of the mini_engine kata (shipped with the kata: both the
engine and the tests use them; no expectations live here).

- ``model_logits(tokens)``: the model's next-token logits after the sequence ``tokens``. A
  deterministic function of the whole sequence (a hash of it), so the right output of a
  request is known without any engine, whatever the batching.
- ``sample(logits, sampling, index)``: one token id. Greedy at temperature 0 (the lowest id
  among the tied maxima); otherwise the top_p kata's rule (the smallest tie-closed set of
  most probable tokens whose mass reaches ``top_p - 1e-6``, then the inverse CDF in token-id
  order) at ``u = draw_u(seed, index)``. ``index`` is how many tokens the request generated
  before this one, so a request's k-th token never depends on other requests or on when it
  was computed.
- ``reference_generation(prompt, max_tokens, sampling)``: the model's own generation for a
  request, token by token, without any engine: what an engine must stream.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

VOCAB = 32           # token ids 0 .. VOCAB - 1
EOS = 0              # the end-of-sequence token
EOS_BIAS = 1.0       # added to the EOS logit, so generations end on their own now and then
MASS_TOLERANCE = 1e-6
GREEDY: dict[str, Any] = {"temperature": 0.0, "top_p": 1.0, "seed": 0}


def model_logits(tokens: list[int]) -> np.ndarray:
    """The toy model's (VOCAB,) float64 logits for the token after ``tokens`` (non-empty)."""
    if len(tokens) == 0:
        raise ValueError("the model needs at least one token")
    data = np.asarray(tokens, dtype="<i8").tobytes()
    digest = hashlib.blake2b(data, digest_size=VOCAB, person=b"mini_engine").digest()
    logits = (np.frombuffer(digest, dtype=np.uint8).astype(np.float64) - 128.0) / 24.0
    logits[EOS] += EOS_BIAS
    return logits


def check_sampling(sampling: Any) -> None:
    """Raise ValueError unless ``sampling`` is a dict with exactly the keys ``temperature``
    (a finite float >= 0; 0 is greedy), ``top_p`` (a float in (0, 1]) and ``seed`` (an int
    >= 0)."""
    if not isinstance(sampling, dict) or set(sampling) != {"temperature", "top_p", "seed"}:
        raise ValueError(f"sampling must be a dict with the keys temperature, top_p and seed, "
                         f"got {sampling!r}")
    t, p, seed = sampling["temperature"], sampling["top_p"], sampling["seed"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
        raise ValueError(f"temperature must be a finite number >= 0, got {t!r}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
        raise ValueError(f"top_p must lie in (0, 1], got {p!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")


def draw_u(seed: int, index: int) -> float:
    """The uniform draw in [0, 1) for a request's ``index``-th generated token (0-based):
    a function of ``(seed, index)`` only."""
    digest = hashlib.blake2b(f"{seed}:{index}".encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") >> 11) / float(1 << 53)


def sample(logits: np.ndarray, sampling: dict[str, Any], index: int) -> int:
    """One token id from ``logits`` (see the module docstring): greedy at temperature 0,
    else top-p by the top_p kata's rule at ``u = draw_u(sampling["seed"], index)``."""
    x = np.asarray(logits, dtype=np.float64)
    t, p = float(sampling["temperature"]), float(sampling["top_p"])
    if t == 0:
        return int(np.argmax(x))                       # the lowest id among the tied maxima
    desc = np.sort(x)[::-1]                            # values only: ties have no order
    mass = np.cumsum(np.exp((desc - desc[0]) / t))
    cut = desc[-1] if p >= 1 else desc[min(int((mass < (p - MASS_TOLERANCE) * mass[-1]).sum()),
                                            len(desc) - 1)]
    kept = np.where(x >= cut, np.exp((x - desc[0]) / t), 0.0)
    cdf = np.cumsum(kept)
    pick = int((cdf <= draw_u(int(sampling["seed"]), index) * cdf[-1]).sum())
    last = int(np.flatnonzero(kept > 0)[-1])           # rounding must not run past the end
    return min(pick, last)


def reference_generation(prompt: list[int], max_tokens: int,
                         sampling: dict[str, Any]) -> list[int]:
    """The model's own generation for one request, without any engine: token k is
    ``sample(model_logits(prompt + tokens[:k]), sampling, k)``; it stops after EOS or after
    ``max_tokens`` tokens, whichever comes first (EOS is part of the output)."""
    seq, out = list(prompt), []
    for k in range(max_tokens):
        token = sample(model_logits(seq), sampling, k)
        out.append(token)
        seq.append(token)
        if token == EOS:
            break
    return out
