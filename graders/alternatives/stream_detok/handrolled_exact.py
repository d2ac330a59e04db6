"""Alternative correct solution: a hand-written UTF-8 decoder and the exact hold-back.

Written by the kata author from the prompt and the stub, without reusing the reference's
code. Differs from the reference in the two places where the prompt allows more than one
answer:
- its UTF-8 decoder (maximal subparts replaced by one U+FFFD each, as CPython does) sends a
  replacement character as soon as it is certain, even for bytes such as ED A0 that
  CPython's incremental decoder keeps;
- it sends held text that can be proved safe: a stop start is held only when some
  continuation (consistent with the bytes of an unfinished character) would make that stop
  the first to complete, so with stops "abcd" and "bc" the text "xa" goes out whole.
"""

from __future__ import annotations

from collections.abc import Sequence

REPLACEMENT = "\ufffd"


def _need(lead: int) -> int:
    """Continuation bytes a lead byte needs; -1 when it cannot start a character."""
    if lead < 0x80:
        return 0
    if 0xC2 <= lead <= 0xDF:
        return 1
    if 0xE0 <= lead <= 0xEF:
        return 2
    if 0xF0 <= lead <= 0xF4:
        return 3
    return -1


def _second_range(lead: int) -> tuple[int, int]:
    return {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF),
            0xF4: (0x80, 0x8F)}.get(lead, (0x80, 0xBF))


class Utf8:
    """Byte-at-a-time UTF-8 decoding with replacement."""

    def __init__(self) -> None:
        self.part = bytearray()

    def feed(self, data: bytes) -> str:
        out: list[str] = []
        for b in data:
            while True:
                if not self.part:
                    n = _need(b)
                    if n == 0:
                        out.append(chr(b))
                    elif n < 0:
                        out.append(REPLACEMENT)
                    else:
                        self.part.append(b)
                    break
                lo, hi = _second_range(self.part[0]) if len(self.part) == 1 else (0x80, 0xBF)
                if lo <= b <= hi:
                    self.part.append(b)
                    if len(self.part) == _need(self.part[0]) + 1:
                        out.append(bytes(self.part).decode("utf-8"))
                        self.part.clear()
                    break
                out.append(REPLACEMENT)  # the unfinished character is broken: retry b alone
                self.part.clear()
        return "".join(out)

    def flush(self) -> str:
        broken = REPLACEMENT if self.part else ""
        self.part.clear()
        return broken

    def could_start_with(self, ch: str) -> bool:
        """Whether the next decoded character may be ``ch``."""
        return not self.part or ch == REPLACEMENT or ch.encode("utf-8").startswith(self.part)


def _first_stop(text: str, stops: list[str], after: int) -> tuple[int, int, str] | None:
    """(end, start, stop) of the first stop to complete in ``text`` ending past ``after``."""
    best = None
    for s in stops:
        i = text.find(s, max(0, after - len(s) + 1))
        if i >= 0 and (best is None or (i + len(s), i) < best[:2]):
            best = (i + len(s), i, s)
    return best


class StreamDetokenizer:
    def __init__(self, vocab: Sequence[bytes], stop: Sequence[str] = (),
                 include_stop: bool = False) -> None:
        for s in stop:
            if not isinstance(s, str):
                raise TypeError("stop strings must be str")
            if not s:
                raise ValueError("empty stop string")
        self.vocab = list(vocab)
        self.stops = list(stop)
        self.longest = max(map(len, self.stops), default=0)
        self.include = include_stop
        self.utf8 = Utf8()
        self.text = ""      # recent text: at least the last longest-1 characters, sent or not
        self.sent = 0       # how much of self.text has been sent
        self.matched: str | None = None
        self.done = False

    @property
    def stopped(self) -> bool:
        return self.matched is not None

    @property
    def matched_stop(self) -> str | None:
        return self.matched

    def push(self, token_ids: Sequence[int]) -> str:
        if self.done:
            raise RuntimeError("push after finish")
        bad = [t for t in token_ids if not isinstance(t, int) or not 0 <= t < len(self.vocab)]
        if bad:
            raise ValueError(f"token ids out of range: {bad}")
        if self.matched is not None:
            return ""
        return self._take(self.utf8.feed(b"".join(self.vocab[t] for t in token_ids)), False)

    def finish(self) -> str:
        if self.done:
            raise RuntimeError("finish after finish")
        self.done = True
        if self.matched is not None:
            return ""
        return self._take(self.utf8.flush(), True)

    def _take(self, new: str, final: bool) -> str:
        old = len(self.text)
        text = self.text + new
        hit = _first_stop(text, self.stops, old)
        if hit is not None:
            end, start, self.matched = hit
            return text[self.sent:end if self.include else max(self.sent, start)]
        safe = len(text)
        if not final and not self.include:
            for s in range(max(self.sent, len(text) - self.longest + 1), len(text)):
                if s >= safe:
                    break
                tail = text[s:]
                for stop in self.stops:
                    if len(stop) > len(tail) and stop.startswith(tail):
                        rest = stop[len(tail):]
                        if self.utf8.could_start_with(rest[0]):
                            first = _first_stop(text + rest, self.stops, len(text))
                            assert first is not None
                            safe = min(safe, first[1])
        out = text[self.sent:safe]
        keep_from = min(safe, max(0, len(text) - self.longest))
        self.text = text[keep_from:]
        self.sent = safe - keep_from
        return out
