"""The linear-time check: how the time of a one-token-per-push stream grows from 10k to 50k.

Linear work per push gives a ratio near 5; re-decoding or re-searching the whole output
on every push gives about 25. The check passes below ``LIMIT`` (12): wide enough for a
shared, noisy machine, far below quadratic. The 50k run is abandoned as soon as it has
used ``LIMIT`` times the 10k time, so a quadratic submission fails in seconds, not
minutes. No absolute time is ever compared with a constant.
"""

from __future__ import annotations

import random
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


def stream_time(mod: Any, vocab: list[bytes], ids: list[int], stops: list[str],
                budget: float = float("inf")) -> tuple[float, int, str]:
    """Seconds to push ``ids`` one at a time and finish; stops early past ``budget``.
    Timed next to the implementation (graders/support/stream_detok.py).

    Returns (seconds, tokens pushed, the text streamed)."""
    from graders.impl import run_support
    from graders.support import stream_detok as driver

    secs, pushed, text = run_support("stream_detok", driver.stream_time, mod.StreamDetokenizer,
                                     vocab, ids, stops, budget)
    return float(secs), int(pushed), str(text)


def growth(mod: Any, stops: list[str] = STOPS) -> tuple[bool, str]:
    """(passed, what was measured). The timed stream must also be right: a fast wrong
    answer is not linear time."""
    from tests.stream_detok.helpers import reference

    vocab, ids = workload(LARGE)
    _, _, text = stream_time(mod, vocab, ids[:2000], stops)
    want = reference(vocab, ids[:2000], stops, False)[0]
    if text != want:
        return False, (f"the timed stream is wrong: after 2000 tokens it sent {text[:60]!r}..., "
                       f"the whole-output reference is {want[:60]!r}...")
    notes = []
    for attempt in range(2):
        t_small = min(stream_time(mod, vocab, ids[:SMALL], stops)[0] for _ in range(1 + attempt))
        t_large, done, _ = stream_time(mod, vocab, ids, stops, budget=LIMIT * t_small)
        if done == LARGE and t_large < LIMIT * t_small:
            return True, f"ratio {t_large / t_small:.1f} ({t_small:.3f}s, {t_large:.3f}s)"
        notes.append(f"10k tokens took {t_small:.3f}s; after {LIMIT:g}x that "
                     f"({t_large:.3f}s) only {done} of 50k tokens were pushed")
        if done < 0.85 * LARGE:
            break  # far from linear: no need for a second try
    return False, "; ".join(notes)
