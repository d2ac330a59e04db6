"""Drivers for the stream_detok tests that must run next to the implementation.

``stream_time`` pushes a token stream one token at a time and times it where the
implementation lives (inside the grading worker when isolated), so the growth check
measures the implementation, not the cost of crossing a process boundary per push. It
returns plain observations; every expectation stays in the tests.
"""

from __future__ import annotations

import time
from typing import Any


def stream_time(detokenizer_cls: Any, vocab: list[bytes], ids: list[int], stops: list[str],
                budget: float = float("inf")) -> tuple[float, int, str]:
    """Seconds to push ``ids`` one at a time and finish; stops early past ``budget``.

    Returns (seconds, tokens pushed, the text streamed)."""
    d = detokenizer_cls(vocab, stops)
    out = []
    start = time.perf_counter()
    for k, t in enumerate(ids):
        out.append(d.push([t]))
        if k % 500 == 499 and time.perf_counter() - start > budget:
            return time.perf_counter() - start, k + 1, "".join(out)
    out.append(d.finish())
    return time.perf_counter() - start, len(ids), "".join(out)
