"""Shipped helpers of the grammar_mask kata (the candidate may use them; they hold no answers).

- ``compile_regex(pattern)``: a byte-level DFA, as plain data, from a small regex subset;
- ``longest_match(tokens, eos_id, data)``: the kata's tokenizer (longest token first);
- ``masks_of(...)``: the driver of the work check (runs next to the implementation).

The DFA format is the kata's: ``table[s][b]`` is the state after byte ``b`` from state ``s``
(``-1``: no transition), ``accepting[s]`` says whether the walk may end at ``s``; the start
state is 0.

Regex subset (matched against the whole output, as bytes): literal characters (a
non-ASCII one stands for its UTF-8 bytes), ``\\`` escapes any character (``\\n``, ``\\t``
and ``\\r`` are the control characters), classes ``[a-z0-9_]`` and ``[^"\\\\]`` (ASCII
members and ranges; a negated class holds every byte 0-255 not listed), ``.`` (any byte but
``\\n``), groups ``( )``, alternation ``|`` and the postfix operators ``?``, ``*``, ``+``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

Table = list[list[int]]

_ESCAPES = {"n": 0x0A, "t": 0x09, "r": 0x0D}


class _Nfa:
    """Thompson NFA: ``eps[q]`` epsilon targets, ``moves[q]`` (byte set, target)."""

    def __init__(self) -> None:
        self.eps: list[list[int]] = []
        self.moves: list[list[tuple[frozenset[int], int]]] = []

    def state(self) -> int:
        self.eps.append([])
        self.moves.append([])
        return len(self.eps) - 1


class _Parser:
    def __init__(self, pattern: str, nfa: _Nfa) -> None:
        self.p, self.i, self.nfa = pattern, 0, nfa

    def error(self, what: str) -> ValueError:
        return ValueError(f"regex {self.p!r}, at offset {self.i}: {what}")

    def peek(self) -> str | None:
        return self.p[self.i] if self.i < len(self.p) else None

    def alternation(self) -> tuple[int, int]:
        start, end = self.sequence()
        if self.peek() != "|":
            return start, end
        s, e = self.nfa.state(), self.nfa.state()
        self.nfa.eps[s].append(start)
        self.nfa.eps[end].append(e)
        while self.peek() == "|":
            self.i += 1
            a, b = self.sequence()
            self.nfa.eps[s].append(a)
            self.nfa.eps[b].append(e)
        return s, e

    def sequence(self) -> tuple[int, int]:
        start = end = self.nfa.state()
        while self.peek() not in (None, "|", ")"):
            a, b = self.repeat()
            self.nfa.eps[end].append(a)
            end = b
        return start, end

    def repeat(self) -> tuple[int, int]:
        a, b = self.atom()
        while self.peek() in ("?", "*", "+"):
            op = self.p[self.i]
            self.i += 1
            s, e = self.nfa.state(), self.nfa.state()
            self.nfa.eps[s].append(a)
            self.nfa.eps[b].append(e)
            if op in "?*":
                self.nfa.eps[s].append(e)
            if op in "*+":
                self.nfa.eps[b].append(a)
            a, b = s, e
        return a, b

    def atom(self) -> tuple[int, int]:
        c = self.peek()
        if c is None or c in "?*+":
            raise self.error("expected a character, a class or a group")
        self.i += 1
        if c == "(":
            inner = self.alternation()
            if self.peek() != ")":
                raise self.error("unclosed group")
            self.i += 1
            return inner
        if c == "[":
            return self.chain([self.klass()])
        if c == ".":
            return self.chain([frozenset(range(256)) - {0x0A}])
        if c == "\\":
            c = self.escaped()
            return self.chain([frozenset({ord(c)})] if ord(c) < 128 else
                              [frozenset({b}) for b in c.encode("utf-8")])
        return self.chain([frozenset({b}) for b in c.encode("utf-8")])

    def escaped(self) -> str:
        c = self.peek()
        if c is None:
            raise self.error("a trailing backslash")
        self.i += 1
        return chr(_ESCAPES[c]) if c in _ESCAPES else c

    def klass(self) -> frozenset[int]:
        negate = self.peek() == "^"
        if negate:
            self.i += 1
        members: set[int] = set()
        first = True
        while True:
            c = self.peek()
            if c is None:
                raise self.error("unclosed class")
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            self.i += 1
            lo = self.escaped() if c == "\\" else c
            hi = lo
            if self.peek() == "-" and self.i + 1 < len(self.p) and self.p[self.i + 1] != "]":
                self.i += 1
                c = self.p[self.i]
                self.i += 1
                hi = self.escaped() if c == "\\" else c
            if ord(lo) > 127 or ord(hi) > 127 or ord(lo) > ord(hi):
                raise self.error(f"class range {lo!r}-{hi!r} must be ASCII and ascending")
            members.update(range(ord(lo), ord(hi) + 1))
        return frozenset(set(range(256)) - members) if negate else frozenset(members)

    def chain(self, sets: list[frozenset[int]]) -> tuple[int, int]:
        start = cur = self.nfa.state()
        for byte_set in sets:
            nxt = self.nfa.state()
            self.nfa.moves[cur].append((byte_set, nxt))
            cur = nxt
        return start, cur


def compile_regex(pattern: str) -> tuple[Table, list[bool]]:
    """(table, accepting) of a DFA matching exactly the byte strings of ``pattern``.

    States are numbered in breadth-first order from the start state 0, bytes in ascending
    order, so the same pattern always gives the same table. Every state it makes can reach an
    accepting one (the subset construction never makes the empty set: that is ``-1``).
    Raises ValueError for a pattern outside the subset.
    """
    if not isinstance(pattern, str):
        raise ValueError(f"pattern must be a str, got {type(pattern).__name__}")
    nfa = _Nfa()
    parser = _Parser(pattern, nfa)
    start, accept = parser.alternation()
    if parser.peek() is not None:
        raise parser.error("unbalanced ')'")

    def closure(states: set[int]) -> frozenset[int]:
        stack, seen = list(states), set(states)
        while stack:
            for t in nfa.eps[stack.pop()]:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        return frozenset(seen)

    first = closure({start})
    index = {first: 0}
    order = [first]
    table: Table = []
    k = 0
    while k < len(order):
        subset = order[k]
        row = [-1] * 256
        targets: dict[int, set[int]] = {}
        for q in subset:
            for byte_set, t in nfa.moves[q]:
                for b in byte_set:
                    targets.setdefault(b, set()).add(t)
        for b in sorted(targets):
            nxt = closure(targets[b])
            if nxt not in index:
                index[nxt] = len(order)
                order.append(nxt)
            row[b] = index[nxt]
        table.append(row)
        k += 1
    return table, [accept in subset for subset in order]


def longest_match(tokens: Sequence[bytes], eos_id: int, data: bytes) -> list[int]:
    """The kata's tokenizer: from the left, the longest token (never ``eos_id``) that is a
    prefix of the rest of ``data``; among tokens with the same bytes, the lowest id.
    Raises ValueError where no token fits (a byte-level vocabulary always has one)."""
    index: dict[bytes, int] = {}
    for i, t in enumerate(tokens):
        if i != eos_id and t:
            index.setdefault(bytes(t), i)
    longest = max((len(t) for t in index), default=0)
    ids: list[int] = []
    i = 0
    data = bytes(data)
    while i < len(data):
        for n in range(min(longest, len(data) - i), 0, -1):
            tid = index.get(data[i:i + n])
            if tid is not None:
                ids.append(tid)
                i += n
                break
        else:
            raise ValueError(f"no token starts with byte {data[i]:#04x} at offset {i}")
    return ids


def masks_of(masker_cls: Any, tokens: list[bytes], eos_id: int, table: Table,
             accepting: list[bool], states: list[int],
             budget: float = float("inf")) -> tuple[list[bytes], int]:
    """The work check's driver: build one masker, ask ``allowed(s)`` for each of ``states`` in
    order, and return (each mask packed with numpy's packbits, the number of queries made);
    stop early once ``budget`` CPU seconds are spent (the trusted side also enforces the
    budget from outside). What it returns is checked mask by mask against a brute force."""
    import numpy as np

    start = time.process_time()
    masker = masker_cls(tokens, eos_id, table, accepting)
    out: list[bytes] = []
    for k, s in enumerate(states):
        out.append(np.packbits(np.asarray(masker.allowed(s), dtype=bool)).tobytes())
        if k % 16 == 15 and time.process_time() - start > budget:
            return out, k + 1
    return out, len(states)
