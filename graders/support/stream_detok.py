"""Drivers for the stream_detok tests that must run next to the implementation.

``push_each`` streams a token sequence one token per push where the implementation lives;
graders.impl.measured_call takes the CPU time of the whole call from outside the worker (the
linear_time item's evidence: no clock read in here counts). It returns what was sent after
each push, so the trusted side can check that the tokens really were pushed one at a time
and streamed, and the text, which must equal the whole-output reference.
"""

from __future__ import annotations

import time
from typing import Any


def push_each(detokenizer_cls: Any, vocab: list[bytes], ids: list[int], stops: list[str],
              budget: float = float("inf")) -> tuple[list[int], str, int]:
    """Push ``ids`` one at a time, then finish; stop early once ``budget`` CPU seconds are
    spent (the trusted side enforces the budget from outside as well).

    Returns (characters sent in total after each push, the whole text sent, tokens pushed)."""
    start = time.process_time()
    d = detokenizer_cls(vocab, stops)
    out: list[str] = []
    sent: list[int] = []
    total = 0
    for k, t in enumerate(ids):
        piece = d.push([t])
        out.append(piece)
        total += len(piece)
        sent.append(total)
        if k % 500 == 499 and time.process_time() - start > budget:
            return sent, "".join(out), k + 1
    out.append(d.finish())
    return sent, "".join(out), len(ids)
