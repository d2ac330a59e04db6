"""The honest baseline several attacks share: the same submission without their cheats."""

from __future__ import annotations

import codecs
from collections.abc import Sequence


class StreamDetokenizer:
    """Bytes in, safe text out, stopping at the first stop string."""

    def __init__(self, vocab: Sequence[bytes], stop: Sequence[str] = (),
                 include_stop: bool = False) -> None:
        stops = list(stop)
        for s in stops:
            if not isinstance(s, str):
                raise TypeError(f"stop strings must be str, got {s!r}")
            if not s:
                raise ValueError("a stop string must not be empty")
        for i, token in enumerate(vocab):
            if not isinstance(token, (bytes, bytearray)):
                raise TypeError(f"vocab[{i}] must be bytes, got {token!r}")
        self._vocab = [bytes(t) for t in vocab]
        self._stops = stops
        self._include = bool(include_stop)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._longest = max((len(s) for s in stops), default=0)
        self._tail = ""    # the last len(longest stop) - 1 decoded characters, sent or not
        self._held = ""    # the end of _tail not sent yet
        self._matched: str | None = None
        self._finished = False
        self._bytes = bytearray()
        self._decoded = 0

    @property
    def stopped(self) -> bool:
        return self._matched is not None

    @property
    def matched_stop(self) -> str | None:
        return self._matched

    def push(self, token_ids: Sequence[int]) -> str:
        if self._finished:
            raise RuntimeError("push after finish")
        ids = list(token_ids)
        n = len(self._vocab)
        for t in ids:
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < n:
                raise ValueError(f"token id {t!r} is not in range({n})")
        if self._matched is not None:
            return ""
        self._bytes += b"".join(self._vocab[t] for t in ids)
        dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        everything = dec.decode(bytes(self._bytes))
        text = everything[self._decoded:]
        self._decoded = len(everything)
        return self._advance(text, final=False)

    def finish(self) -> str:
        if self._finished:
            raise RuntimeError("finish called twice")
        self._finished = True
        if self._matched is not None:
            return ""
        return self._advance(bytes(self._bytes).decode("utf-8", errors="replace")[self._decoded:], final=True)

    def _advance(self, text: str, final: bool) -> str:
        """Append decoded ``text``; return what becomes safe to send."""
        window = self._tail + text
        old = len(self._tail)
        sent = old - len(self._held)  # window[:sent] has gone to the client already
        # The first stop to complete: earliest end, then earliest start. It ends inside the
        # new text (none is complete in the tail) but may start in the tail, even in its
        # sent part when include_stop holds nothing back.
        best: tuple[int, int, str] | None = None
        for s in self._stops:
            start = window.find(s, max(0, old - len(s) + 1))
            if start >= 0 and (best is None or (start + len(s), start) < best[:2]):
                best = (start + len(s), start, s)
        if best is not None:
            end, start, self._matched = best
            self._tail = self._held = ""
            return window[sent:end] if self._include else window[sent:max(sent, start)]
        keep = 0 if (final or self._include) else self._longest_stop_prefix_suffix(window)
        cut = len(window) - keep
        self._held = window[cut:]
        self._tail = window[-(self._longest - 1):] if self._longest > 1 else ""
        return window[sent:cut]

    def _longest_stop_prefix_suffix(self, window: str) -> int:
        """Length of the longest end of ``window`` that is a proper prefix of a stop."""
        best = 0
        for s in self._stops:
            for k in range(min(len(s) - 1, len(window)), best, -1):
                if window.endswith(s[:k]):
                    best = k
                    break
        return best
