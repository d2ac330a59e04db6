"""Reference solution of the grammar_mask kata: a token trie walked together with the DFA.

The trie is built once per vocabulary. A mask is a depth-first walk of (trie node, DFA
state) pairs that stops at the first byte leaving the live part of the DFA, so it costs the
live part of the trie, not the whole vocabulary; each state's mask is computed once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from graders.support.grammar_mask import longest_match

Mask = npt.NDArray[np.bool_]


def _is_int(x: object) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


class GrammarMasker:
    def __init__(self, tokens: Sequence[bytes], eos_id: int,
                 table: Sequence[Sequence[int]], accepting: Sequence[bool]) -> None:
        if not _is_int(eos_id) or not 0 <= eos_id < len(tokens):
            raise ValueError(f"eos_id must be an int in 0..{len(tokens) - 1}, got {eos_id!r}")
        n = len(table)
        if n == 0 or len(accepting) != n:
            raise ValueError(f"need at least one state and one accepting flag per state "
                             f"({n} rows, {len(accepting)} flags)")
        rows: list[list[int]] = []
        for s, row in enumerate(table):
            row = list(row)
            if (len(row) != 256 or not all(type(t) is int or _is_int(t) for t in row)
                    or min(row) < -1 or max(row) >= n):
                raise ValueError(f"table[{s}] must be 256 ints in -1..{n - 1}")
            rows.append([int(t) for t in row])
        if not all(isinstance(a, (bool, np.bool_)) for a in accepting):
            raise ValueError("accepting must hold bools")
        # The trie: children[node] maps a byte to a node; ends[node] lists the token ids
        # whose bytes end there. Node 0 is the empty prefix.
        children: list[dict[int, int]] = [{}]
        ends: list[list[int]] = [[]]
        for tid, tok in enumerate(tokens):
            if not isinstance(tok, bytes):
                raise ValueError(f"token {tid} must be bytes, got {type(tok).__name__}")
            if tid == eos_id:
                continue
            if not tok:
                raise ValueError(f"token {tid} is empty: only eos_id may have no bytes")
            node = 0
            for b in tok:
                nxt = children[node].get(b)
                if nxt is None:
                    nxt = len(children)
                    children[node][b] = nxt
                    children.append({})
                    ends.append([])
                node = nxt
            ends[node].append(tid)
        if any(ends[children[0].get(b, 0)] == [] for b in range(256)):
            raise ValueError("the vocabulary must hold every single byte 0-255 as a token")
        self._tokens = [bytes(t) for t in tokens]
        self._eos = int(eos_id)
        self._table = rows
        self._accepting = [bool(a) for a in accepting]
        self._children, self._ends = children, ends
        # Live states can reach an accepting one: a reverse search from the accepting states.
        back: list[list[int]] = [[] for _ in range(n)]
        for s, row in enumerate(rows):
            for t in set(row) - {-1}:
                back[t].append(s)
        live = list(self._accepting)
        stack = [s for s in range(n) if live[s]]
        while stack:
            for p in back[stack.pop()]:
                if not live[p]:
                    live[p] = True
                    stack.append(p)
        self._live = live
        # Each state's bytes that lead to a live state.
        self._edges = [[(b, t) for b, t in enumerate(row) if t >= 0 and live[t]] for row in rows]
        self._cache: dict[int, Mask] = {}

    def _state(self, state: int) -> int:
        if not _is_int(state) or not 0 <= state < len(self._table):
            raise ValueError(f"state must be an int in 0..{len(self._table) - 1}, got {state!r}")
        return int(state)

    def _walk(self, node: int, state: int, found: list[int], stop_at_first: bool) -> None:
        """Collect the tokens below trie ``node`` (``node`` itself excluded) whose bytes keep
        the walk from ``state`` alive."""
        stack = [(node, state)]
        while stack:
            node, state = stack.pop()
            kids, edges = self._children[node], self._edges[state]
            pairs = ((c, self._table[state][b]) for b, c in kids.items()) \
                if len(kids) <= len(edges) else ((kids.get(b), t) for b, t in edges)
            for child, nxt in pairs:
                if child is None or nxt < 0 or not self._live[nxt]:
                    continue
                if self._ends[child]:
                    found.extend(self._ends[child])
                    if stop_at_first:
                        return
                stack.append((child, nxt))

    def allowed(self, state: int) -> Mask:
        state = self._state(state)
        mask = self._cache.get(state)
        if mask is None:
            mask = np.zeros(len(self._tokens), dtype=bool)
            if self._live[state]:
                found: list[int] = []
                self._walk(0, state, found, stop_at_first=False)
                mask[found] = True
            mask[self._eos] = self._accepting[state]
            self._cache[state] = mask
        return mask.copy()

    def forced_bytes(self, state: int) -> bytes:
        state = self._state(state)
        return self._forced(state)[0]

    def _forced(self, state: int) -> tuple[bytes, int]:
        out = bytearray()
        if self._live[state]:
            while not self._accepting[state] and len(self._edges[state]) == 1:
                b, state = self._edges[state][0]
                out.append(b)
        return bytes(out), state

    def jump_forward(self, ids: Sequence[int]) -> list[int]:
        state = 0
        for k, tid in enumerate(ids):
            if not _is_int(tid) or not 0 <= tid < len(self._tokens) or tid == self._eos:
                raise ValueError(f"ids[{k}] = {tid!r} is not a non-EOS token id")
            for b in self._tokens[tid]:
                state = self._table[state][b]
                if state < 0:
                    break
            if state < 0 or not self._live[state]:
                raise ValueError(f"token ids[{k}] = {tid} kills the walk")
        forced, end = self._forced(state)
        if not forced:
            return list(ids)
        last = self._tokens[ids[-1]] if ids else b""
        text = last + forced
        kept: list[int] = []
        at = 0
        for tid in longest_match(self._tokens, self._eos, text):
            if self._open(text[at:], end):
                break
            kept.append(tid)
            at += len(self._tokens[tid])
        if at <= len(last):
            return list(ids)
        return list(ids[:-1]) + kept

    def _open(self, rest: bytes, end: int) -> bool:
        """Could a longer token that starts with ``rest`` still come, given the grammar?"""
        node = 0
        for b in rest:
            nxt = self._children[node].get(b)
            if nxt is None:
                return False
            node = nxt
        found: list[int] = []
        self._walk(node, end, found, stop_at_first=True)
        return bool(found)
