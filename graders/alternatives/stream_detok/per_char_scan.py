"""Alternative correct solution: scans the decoded text one character at a time.

Written by the kata author from the prompt and the stub, without reusing the reference's
code. Differs from the reference: a stop is detected the moment its last character
arrives (``endswith`` on a rolling window of recent characters, the longest stop winning
a tie), instead of one ``find`` per stop over the push's text; the hold-back is computed
on the unsent text only.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence


class StreamDetokenizer:
    def __init__(self, vocab: Sequence[bytes], stop: Sequence[str] = (),
                 include_stop: bool = False) -> None:
        if any(not isinstance(s, str) or s == "" for s in stop):
            raise ValueError("stop strings must be non-empty str")
        self.vocab = list(vocab)
        self.stops = sorted(set(stop), key=len, reverse=True)  # longest first: tie rule
        self.width = len(self.stops[0]) if self.stops else 0
        self.include = include_stop
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.recent = ""     # the last `width` characters seen
        self.unsent = ""
        self.match: str | None = None
        self.closed = False

    @property
    def stopped(self) -> bool:
        return self.match is not None

    @property
    def matched_stop(self) -> str | None:
        return self.match

    def push(self, token_ids: Sequence[int]) -> str:
        if self.closed:
            raise RuntimeError("the stream is finished")
        for t in token_ids:
            if not isinstance(t, int) or t < 0 or t >= len(self.vocab):
                raise ValueError(f"bad token id {t!r}")
        if self.match is not None:
            return ""
        return self._feed(self.decoder.decode(b"".join(self.vocab[t] for t in token_ids)),
                          last=False)

    def finish(self) -> str:
        if self.closed:
            raise RuntimeError("finish twice")
        self.closed = True
        if self.match is not None:
            return ""
        return self._feed(self.decoder.decode(b"", True), last=True)

    def _feed(self, text: str, last: bool) -> str:
        for ch in text:
            self.unsent += ch
            self.recent = (self.recent + ch)[-self.width:] if self.width else ""
            for s in self.stops:
                if self.recent.endswith(s):
                    self.match = s
                    if self.include:
                        out = self.unsent
                    else:
                        out = self.unsent[:len(self.unsent) - len(s)]
                    self.unsent = ""
                    return out
        hold = 0
        if not last and not self.include:
            for s in self.stops:
                for k in range(len(s) - 1, hold, -1):
                    if k <= len(self.unsent) and self.unsent.endswith(s[:k]):
                        hold = k
                        break
        out = self.unsent[:len(self.unsent) - hold]
        self.unsent = self.unsent[len(self.unsent) - hold:]
        return out
