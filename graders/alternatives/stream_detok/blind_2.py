"""Blind alternative (written from the prompt, the stub and the public tests only).

No str.find window and no prefix loop: the stop strings are compiled into an Aho-Corasick
automaton fed one character at a time; its state's depth IS the hold-back (the longest end
of the text that is a prefix of a stop), and its dictionary links give the earliest-ending,
longest stop. UTF-8 is decoded by a hand-written maximal-subpart decoder (the rule CPython's
errors="replace" follows), with a C fast path for runs that decode cleanly.
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Sequence

_REPL = "\ufffd"


def _second_range(lead: int) -> tuple[int, int, int] | None:
    """(continuation bytes needed, lo, hi of the first one) for a valid lead byte."""
    if 0xC2 <= lead <= 0xDF:
        return 1, 0x80, 0xBF
    if 0xE0 <= lead <= 0xEF:
        if lead == 0xE0:
            return 2, 0xA0, 0xBF
        if lead == 0xED:
            return 2, 0x80, 0x9F
        return 2, 0x80, 0xBF
    if 0xF0 <= lead <= 0xF4:
        if lead == 0xF0:
            return 3, 0x90, 0xBF
        if lead == 0xF4:
            return 3, 0x80, 0x8F
        return 3, 0x80, 0xBF
    return None


def _incomplete_tail(buf: bytes) -> int:
    """Length of the end of ``buf`` that is a proper prefix of one valid character, else 0."""
    n = len(buf)
    for k in range(1, min(3, n) + 1):
        b = buf[n - k]
        if b < 0x80:
            return 0
        if b >= 0xC0:
            spec = _second_range(b)
            if spec is None or k > spec[0]:
                return 0
            if k >= 2 and not spec[1] <= buf[n - k + 1] <= spec[2]:
                return 0
            if any(not 0x80 <= c <= 0xBF for c in buf[n - k + 2:]):
                return 0
            return k
    return 0


def _decode_slow(buf: bytes, final: bool) -> tuple[str, bytes]:
    """Maximal-subpart UTF-8 decoding: each ill-formed maximal subpart becomes one U+FFFD;
    an unfinished valid prefix at the end is kept (or becomes one U+FFFD when final)."""
    out: list[str] = []
    i, n = 0, len(buf)
    while i < n:
        b = buf[i]
        if b < 0x80:
            out.append(chr(b))
            i += 1
            continue
        spec = _second_range(b)
        if spec is None:
            out.append(_REPL)
            i += 1
            continue
        need, lo, hi = spec
        j = i + 1
        bad = False
        while j < i + 1 + need:
            if j >= n:
                if final:
                    out.append(_REPL)
                    return "".join(out), b""
                return "".join(out), buf[i:]
            c = buf[j]
            if not ((lo <= c <= hi) if j == i + 1 else (0x80 <= c <= 0xBF)):
                bad = True
                break
            j += 1
        if bad:
            out.append(_REPL)      # the valid prefix buf[i:j]; buf[j] starts afresh
            i = j
        else:
            out.append(buf[i:j].decode("utf-8"))
            i = j
    return "".join(out), b""


class _Utf8:
    def __init__(self) -> None:
        self.pending = b""

    def feed(self, data: bytes) -> str:
        buf = self.pending + data
        tail = _incomplete_tail(buf)
        head = buf[:len(buf) - tail]
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            text, self.pending = _decode_slow(buf, final=False)
            return text
        self.pending = buf[len(head):]
        return text

    def flush(self) -> str:
        text, _ = _decode_slow(self.pending, final=True)
        self.pending = b""
        return text


class _StopAutomaton:
    """Aho-Corasick over the stop strings, one character per step."""

    def __init__(self, stops: list[str]) -> None:
        self.goto: list[dict[str, int]] = [{}]
        self.label: list[str] = [""]          # the stop prefix a node stands for
        terminal = [False]
        for s in stops:
            node = 0
            for ch in s:
                nxt = self.goto[node].get(ch)
                if nxt is None:
                    nxt = len(self.goto)
                    self.goto[node][ch] = nxt
                    self.goto.append({})
                    self.label.append(self.label[node] + ch)
                    terminal.append(False)
                node = nxt
            terminal[node] = True
        size = len(self.goto)
        self.fail = [0] * size
        # hit[v]: length of the longest stop that ends at v's end (0 if none). A node's own
        # stop is the longest; otherwise the longest reached through the failure chain.
        self.hit = [0] * size
        queue = deque()
        for child in self.goto[0].values():
            self.hit[child] = len(self.label[child]) if terminal[child] else 0
            queue.append(child)
        while queue:
            v = queue.popleft()
            for ch, child in self.goto[v].items():
                f = self.fail[v]
                while f and ch not in self.goto[f]:
                    f = self.fail[f]
                self.fail[child] = self.goto[f].get(ch, 0)
                self.hit[child] = (len(self.label[child]) if terminal[child]
                                   else self.hit[self.fail[child]])
                queue.append(child)

    def step(self, state: int, ch: str) -> int:
        goto, fail = self.goto, self.fail
        while state and ch not in goto[state]:
            state = fail[state]
        return goto[state].get(ch, 0)


class StreamDetokenizer:
    """Bytes in, safe text out, stopping at the first stop string."""

    def __init__(self, vocab: Sequence[bytes], stop: Sequence[str] = (),
                 include_stop: bool = False) -> None:
        if isinstance(stop, str):
            stop = [stop]
        stops = list(stop)
        for s in stops:
            if not isinstance(s, str):
                raise TypeError(f"stop strings must be str, got {s!r}")
            if not s:
                raise ValueError("empty stop string")
        table = []
        for t in vocab:
            if not isinstance(t, (bytes, bytearray)):
                raise TypeError(f"tokens must be bytes, got {t!r}")
            table.append(bytes(t))
        self._vocab = table
        self._include = bool(include_stop)
        self._ac = _StopAutomaton(stops)
        self._utf8 = _Utf8()
        self._state = 0                # automaton state after all text decoded so far
        self._stopped = False
        self._matched: str | None = None
        self._finished = False

    def _run(self, chars: str, final: bool) -> str:
        """Feed decoded characters; return what becomes safe to send."""
        ac = self._ac
        held = "" if self._include else ac.label[self._state]
        state = self._state
        hit = ac.hit
        for j, ch in enumerate(chars):
            state = ac.step(state, ch)
            if hit[state]:
                length = hit[state]
                self._stopped = True
                self._matched = ac.label[state][-length:]
                whole = held + chars[:j + 1]
                return whole if self._include else whole[:len(whole) - length]
        self._state = state
        if self._include:
            return chars
        whole = held + chars
        keep = 0 if final else len(ac.label[state])
        return whole[:len(whole) - keep]

    def push(self, token_ids: Sequence[int]) -> str:
        if self._finished:
            raise RuntimeError("push after finish")
        n = len(self._vocab)
        chunks = []
        for t in token_ids:
            try:
                i = operator.index(t)
            except TypeError:
                raise ValueError(f"token id {t!r} is not an int") from None
            if not 0 <= i < n:
                raise ValueError(f"token id {i} not in range({n})")
            chunks.append(self._vocab[i])
        if self._stopped:
            return ""
        return self._run(self._utf8.feed(b"".join(chunks)), final=False)

    def finish(self) -> str:
        if self._finished:
            raise RuntimeError("finish called twice")
        self._finished = True
        if self._stopped:
            return ""
        return self._run(self._utf8.flush(), final=True)

    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def matched_stop(self) -> str | None:
        return self._matched
