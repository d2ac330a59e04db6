"""Reference solution for stream_detok: a streaming detokenizer with stop strings.

Small state makes every push cost O(new text + longest stop): the standard incremental
UTF-8 decoder keeps an incomplete character's bytes; ``_tail`` keeps the last
``len(longest stop) - 1`` decoded characters, the only old text a new stop can start in;
``_held`` is the end of it not yet sent. Nothing older matters. A stop that completes, and
an end that could still grow into one, both start at a stop's first character: a push tries
only those places (few in ordinary text), with a set of every proper prefix of every stop.
"""

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
        self._prefixes = {s[:k] for s in stops for k in range(1, len(s))}
        self._by_first: dict[str, list[str]] = {}
        for s in stops:
            self._by_first.setdefault(s[0], []).append(s)
        self._tail = ""    # the last len(longest stop) - 1 decoded characters, sent or not
        self._held = ""    # the end of _tail not sent yet
        self._matched: str | None = None
        self._finished = False

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
        text = self._decoder.decode(b"".join(self._vocab[t] for t in ids))
        return self._advance(text, final=False)

    def finish(self) -> str:
        if self._finished:
            raise RuntimeError("finish called twice")
        self._finished = True
        if self._matched is not None:
            return ""
        return self._advance(self._decoder.decode(b"", final=True), final=True)

    def _advance(self, text: str, final: bool) -> str:
        """Append decoded ``text``; return what becomes safe to send."""
        window = self._tail + text
        old = len(self._tail)
        sent = old - len(self._held)  # window[:sent] has gone to the client already
        stop, start, hold = self._scan(window, old)
        if stop is not None:
            self._matched = stop
            self._tail = self._held = ""
            end = start + len(stop)
            return window[sent:end] if self._include else window[sent:max(sent, start)]
        cut = len(window) if (final or self._include) else hold
        self._held = window[cut:]
        self._tail = window[-(self._longest - 1):] if self._longest > 1 else ""
        return window[sent:cut]

    def _scan(self, window: str, old: int) -> tuple[str | None, int, int]:
        """(the first stop to complete, where it starts), or (None, 0); then where the
        longest end of ``window`` that is a proper prefix of a stop starts.

        The first stop to complete has the earliest end, then the earliest start. It ends in
        the new text (the tail holds no complete stop) but may start in the tail, even in its
        sent part when include_stop holds nothing back. Places before ``old - longest + 1``
        can start neither a stop that ends in the new text nor a held-back end."""
        best: tuple[int, int, str] | None = None
        hold = len(window)
        for first, stops in self._by_first.items():
            i = window.find(first, max(0, old - self._longest + 1))
            while i >= 0:
                for s in stops:
                    if window.startswith(s, i) and (best is None or (i + len(s), i) < best[:2]):
                        best = (i + len(s), i, s)
                if i < hold and len(window) - i < self._longest and window[i:] in self._prefixes:
                    hold = i
                i = window.find(first, i + 1)
        return (best[2], best[1], hold) if best is not None else (None, 0, hold)
