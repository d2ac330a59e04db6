"""The linear-time check: how the time of a one-token-per-push stream grows from 10k to 50k.

Linear work per push gives a ratio near 5; re-decoding or re-searching the whole output
on every push gives about 25. The check passes below ``LIMIT`` (12): wide enough for a
shared, noisy machine, far below quadratic. The 50k run is abandoned as soon as it has
used ``LIMIT`` times the 10k time, so a quadratic submission fails in seconds, not
minutes. No absolute time is ever compared with a constant.
"""

from __future__ import annotations

import random
import time
from typing import Any

SMALL, LARGE, LIMIT = 10_000, 50_000, 12.0
STOPS = ["<|end|>", "\n\nUser:"]


def workload(n: int, seed: int = 7) -> tuple[list[bytes], list[int]]:
    """A 64-token vocabulary of 8-byte tokens cut at random byte offsets from text full of
    stop prefixes ("<|", "\\n\\n", "User") and multi-byte characters, so holding back and
    character splitting happen all the time; no stop ever completes.
    """
    rng = random.Random(seed)
    text = "".join(rng.choice(["a", "b", " ", "<", "<|", "€", "中", "\n", "\n\nU", "Use"])
                   for _ in range(4000)).encode("utf-8")
    vocab = []
    for _ in range(64):
        at = rng.randrange(len(text) - 8)
        vocab.append(text[at:at + 8])
    return vocab, [rng.randrange(len(vocab)) for _ in range(n)]


def stream_time(mod: Any, vocab: list[bytes], ids: list[int],
                budget: float = float("inf")) -> tuple[float, int]:
    """Seconds to push ``ids`` one at a time and finish; stops early past ``budget``.

    Returns (seconds, tokens pushed)."""
    d = mod.StreamDetokenizer(vocab, STOPS)
    start = time.perf_counter()
    for k, t in enumerate(ids):
        d.push([t])
        if k % 500 == 499 and time.perf_counter() - start > budget:
            return time.perf_counter() - start, k + 1
    d.finish()
    return time.perf_counter() - start, len(ids)


def growth(mod: Any) -> tuple[bool, str]:
    """(passed, what was measured)."""
    vocab, ids = workload(LARGE)
    notes = []
    for attempt in range(2):
        t_small = min(stream_time(mod, vocab, ids[:SMALL])[0] for _ in range(1 + attempt))
        t_large, done = stream_time(mod, vocab, ids, budget=LIMIT * t_small)
        if done == LARGE and t_large < LIMIT * t_small:
            return True, f"ratio {t_large / t_small:.1f} ({t_small:.3f}s, {t_large:.3f}s)"
        notes.append(f"10k tokens took {t_small:.3f}s; after {LIMIT:g}x that "
                     f"({t_large:.3f}s) only {done} of 50k tokens were pushed")
        if done < 0.85 * LARGE:
            break  # far from linear: no need for a second try
    return False, "; ".join(notes)
