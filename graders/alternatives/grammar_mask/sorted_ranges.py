"""An independent correct grammar_mask solution: the vocabulary as a sorted array, no trie.

Written by the kata's author from the prompt, the stub and the public tests only (no blind
helper was available in this session), in a different style from the reference:

- the tokens are sorted by their bytes once; the tokens that share a prefix are a contiguous
  range of that order, so a mask is a recursion over (range, depth, state) that splits a
  range by the byte at ``depth`` with ``bisect`` (the trie is implicit, as in XGrammar's
  sorted vocabulary);
- liveness is a frontier search over the edges grouped by target with numpy;
- forced bytes are memoised per state;
- jump-forward's "open" test is a range lookup: the tokens that start with a text are one
  range of the sorted order, searched with the DFA from its depth.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from graders.support.grammar_mask import longest_match


def _plain_int(x: object) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


class GrammarMasker:
    def __init__(self, tokens: Sequence[bytes], eos_id: int,
                 table: Sequence[Sequence[int]], accepting: Sequence[bool]) -> None:
        if not _plain_int(eos_id) or not 0 <= int(eos_id) < len(tokens):
            raise ValueError("eos_id must be a token id")
        if any(not isinstance(t, bytes) for t in tokens):
            raise TypeError("tokens must be bytes")
        if any(len(t) == 0 for i, t in enumerate(tokens) if i != eos_id):
            raise ValueError("only EOS may be empty")
        singles = {t for i, t in enumerate(tokens) if i != eos_id and len(t) == 1}
        if len(singles) != 256:
            raise ValueError("every byte must be a token")
        n = len(table)
        if n < 1 or len(accepting) != n:
            raise ValueError("one accepting flag per state, at least one state")
        for row in table:
            if len(row) != 256 or not (all(type(x) is int for x in row)
                                       or all(_plain_int(x) for x in row)):
                raise ValueError("each row: 256 ints")
        arr = np.array([[int(x) for x in row] for row in table], dtype=np.int64)
        if arr.min() < -1 or arr.max() >= n:
            raise ValueError("a target outside -1..n-1")
        if any(not isinstance(a, (bool, np.bool_)) for a in accepting):
            raise ValueError("accepting must be bools")

        self.n_tokens = len(tokens)
        self.eos = int(eos_id)
        self.tokens = list(tokens)
        self.table = arr.tolist()
        self.accepting = [bool(a) for a in accepting]
        # liveness: a frontier search over the edges grouped by target (numpy does the grouping)
        src, _ = np.nonzero(arr >= 0)
        dst = arr[arr >= 0]
        by_dst = np.argsort(dst, kind="stable")
        by_target, bounds = src[by_dst], np.searchsorted(dst[by_dst], np.arange(n + 1))
        live = np.array(self.accepting, dtype=bool)
        frontier = np.flatnonzero(live)
        while frontier.size:
            preds = np.unique(np.concatenate(
                [by_target[bounds[f]:bounds[f + 1]] for f in frontier.tolist()] + [src[:0]]))
            frontier = preds[~live[preds]]
            live[frontier] = True
        self.live = live.tolist()
        self.live_bytes = [[(b, t) for b, t in enumerate(row) if t >= 0 and self.live[t]]
                           for row in self.table]
        # the sorted vocabulary (EOS left out)
        order = sorted((t, i) for i, t in enumerate(tokens) if i != self.eos)
        self.sorted_bytes = [t for t, _ in order]
        self.sorted_ids = [i for _, i in order]
        self.memo: dict[int, npt.NDArray[np.bool_]] = {}
        self.forced_memo: dict[int, tuple[bytes, int]] = {}

    # ------------------------------------------------------------------ helpers
    def check_state(self, s: object) -> int:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool) \
                or not 0 <= int(s) < len(self.table):
            raise ValueError(f"bad state {s!r}")
        return int(s)

    def range_with_prefix(self, lo: int, hi: int, depth: int, byte: int) -> tuple[int, int]:
        """Within sorted[lo:hi] (all sharing a prefix of ``depth`` bytes, all longer than
        ``depth``), the sub-range whose byte at ``depth`` is ``byte`` (maybe empty)."""
        keys = self.sorted_bytes
        prefix = keys[lo][:depth]
        a = bisect_left(keys, prefix + bytes([byte]), lo, hi)
        b = hi if byte == 255 else bisect_left(keys, prefix + bytes([byte + 1]), lo, hi)
        return a, b

    def search(self, lo: int, hi: int, depth: int, state: int, hits: list[int],
               first_only: bool) -> bool:
        """Tokens in sorted[lo:hi] (sharing ``depth`` bytes, walked to ``state``) that are
        longer than ``depth`` and keep the walk alive from there; True once one is found
        when ``first_only``."""
        keys = self.sorted_bytes
        # the range starts with the token equal to the prefix, if there is one
        while lo < hi and len(keys[lo]) == depth:
            lo += 1
        if lo >= hi:
            return False
        row = self.table[state]
        groups: list[tuple[int, int, int]] = []     # (start, end, next state) per byte
        if len(self.live_bytes[state]) <= 8:        # few ways on: look each byte up
            for byte, nxt in self.live_bytes[state]:
                a, b = self.range_with_prefix(lo, hi, depth, byte)
                if a < b:
                    groups.append((a, b, nxt))
        else:                                       # many: walk the range's byte groups
            while lo < hi:
                byte = keys[lo][depth]
                a, b = self.range_with_prefix(lo, hi, depth, byte)
                if row[byte] >= 0 and self.live[row[byte]]:
                    groups.append((a, b, row[byte]))
                lo = b
        for a, b, nxt in groups:
            k = a
            while k < b and len(keys[k]) == depth + 1:
                hits.append(self.sorted_ids[k])
                k += 1
            if first_only and hits:
                return True
            if self.search(k, b, depth + 1, nxt, hits, first_only) and first_only:
                return True
        return bool(hits) and first_only

    # ------------------------------------------------------------------ API
    def allowed(self, state: int) -> npt.NDArray[np.bool_]:
        s = self.check_state(state)
        if s not in self.memo:
            out = np.zeros(self.n_tokens, dtype=bool)
            if self.live[s]:
                hits: list[int] = []
                self.search(0, len(self.sorted_bytes), 0, s, hits, False)
                out[hits] = True
            out[self.eos] = self.accepting[s]
            self.memo[s] = out
        return self.memo[s].copy()

    def forced_of(self, s: int) -> tuple[bytes, int]:
        if s not in self.forced_memo:
            result = (b"", s)
            if self.live[s] and not self.accepting[s]:
                ways = [b for b in range(256)
                        if self.table[s][b] >= 0 and self.live[self.table[s][b]]]
                if len(ways) == 1:
                    rest, end = self.forced_of(self.table[s][ways[0]])
                    result = (bytes(ways) + rest, end)
            self.forced_memo[s] = result
        return self.forced_memo[s]

    def forced_bytes(self, state: int) -> bytes:
        return self.forced_of(self.check_state(state))[0]

    def jump_forward(self, ids: Sequence[int]) -> list[int]:
        s = 0
        for pos, t in enumerate(ids):
            if not _plain_int(t) or not 0 <= int(t) < self.n_tokens or int(t) == self.eos:
                raise ValueError(f"ids[{pos}] is not a token")
            for byte in self.tokens[int(t)]:
                s = self.table[s][byte] if s >= 0 else -1
            if s < 0 or not self.live[s]:
                raise ValueError(f"ids[{pos}] is not allowed")
        forced, end = self.forced_of(s)
        if forced == b"":
            return list(ids)
        rolled = self.tokens[int(ids[-1])] if len(ids) else b""
        text = rolled + forced
        pieces = longest_match(self.tokens, self.eos, text)
        offsets = np.cumsum([0] + [len(self.tokens[p]) for p in pieces]).tolist()
        k = 0
        while k < len(pieces) and not self.is_open(text[offsets[k]:], end):
            k += 1
        if offsets[k] <= len(rolled):
            return list(ids)
        return [int(x) for x in ids[:-1]] + pieces[:k]

    def is_open(self, rest: bytes, end: int) -> bool:
        keys = self.sorted_bytes
        lo = bisect_left(keys, rest)
        hi = lo
        while hi < len(keys) and keys[hi].startswith(rest):
            hi += 1
        return self.search(lo, hi, len(rest), end, [], True)
