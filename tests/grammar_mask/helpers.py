"""Oracles for grammar_mask: brute force straight from the prompt's rules.

Nothing here is clever: liveness is a fixpoint over the whole table, a mask walks every
token's bytes, forced bytes follow the definition, and jump-forward's "open" test tries
every token of the vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graders.support.grammar_mask import longest_match
from tests.grammar_mask.vocab import load_vocab

SINGLE_BYTES = [bytes([b]) for b in range(256)]


def shipped_vocab() -> tuple[list[bytes], int]:
    """stream_detok's 700-token byte-level BPE vocabulary plus an EOS token (id 700)."""
    tokens = list(load_vocab()) + [b"</s>"]
    return tokens, len(tokens) - 1


def small_vocab(extra: Sequence[bytes]) -> tuple[list[bytes], int]:
    """Every single byte (ids 0-255), then ``extra`` (ids 256...), then EOS."""
    tokens = SINGLE_BYTES + [bytes(t) for t in extra] + [b"<eos>"]
    return tokens, len(tokens) - 1


def live_states(table: Sequence[Sequence[int]], accepting: Sequence[bool]) -> list[bool]:
    """A state is live when some accepting state can be reached from it (itself included)."""
    live = [bool(a) for a in accepting]
    targets = [set(row) - {-1} for row in table]
    changed = True
    while changed:     # sweep until nothing changes (backwards: successors tend to come later)
        changed = False
        for s in reversed(range(len(table))):
            if not live[s] and any(live[t] for t in targets[s]):
                live[s] = changed = True
    return live


def walk(table: Sequence[Sequence[int]], state: int, data: bytes) -> int:
    """The state after ``data`` from ``state``, or -1 once a byte has no transition."""
    for b in data:
        state = table[state][b]
        if state < 0:
            return -1
    return state


def mask(tokens: Sequence[bytes], eos_id: int, table: Sequence[Sequence[int]],
         accepting: Sequence[bool], state: int, live: Sequence[bool] | None = None) -> np.ndarray:
    """``live``: the table's live states, when the caller has them already."""
    live = live_states(table, accepting) if live is None else live
    out = np.zeros(len(tokens), dtype=bool)
    for i, tok in enumerate(tokens):
        if i == eos_id:
            out[i] = bool(accepting[state])
        else:
            end = walk(table, state, tok)
            out[i] = end >= 0 and live[end]
    return out


def forced(table: Sequence[Sequence[int]], accepting: Sequence[bool], state: int) -> bytes:
    """Follow the only byte into a live state while the state is live, not accepting, and
    has exactly one such byte."""
    live = live_states(table, accepting)
    out = bytearray()
    while live[state] and not accepting[state]:
        good = [b for b in range(256) if table[state][b] >= 0 and live[table[state][b]]]
        if len(good) != 1:
            break
        out.append(good[0])
        state = table[state][good[0]]
    return bytes(out)


def jump(tokens: Sequence[bytes], eos_id: int, table: Sequence[Sequence[int]],
         accepting: Sequence[bool], ids: Sequence[int]) -> list[int]:
    """The prompt's jump-forward rule, by brute force."""
    live = live_states(table, accepting)
    state = walk(table, 0, b"".join(tokens[i] for i in ids))
    assert state >= 0 and live[state], "the ids given must keep the walk alive"
    f = forced(table, accepting, state)
    if not f:
        return list(ids)
    end = walk(table, state, f)
    last = tokens[ids[-1]] if ids else b""
    text = last + f
    kept: list[int] = []
    at = 0
    for tid in longest_match(tokens, eos_id, text):
        rest = text[at:]
        if any(i != eos_id and len(v) > len(rest) and v.startswith(rest)
               and walk(table, end, v[len(rest):]) >= 0
               and live[walk(table, end, v[len(rest):])]
               for i, v in enumerate(tokens)):
            break
        kept.append(tid)
        at += len(tokens[tid])
    if at <= len(last):
        return list(ids)
    return list(ids[:-1]) + kept


def describe(tokens: Sequence[bytes], ids: Sequence[int]) -> list[bytes]:
    return [tokens[i] for i in ids]
