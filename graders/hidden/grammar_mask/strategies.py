"""Hypothesis strategies for grammar_mask, aimed at the traps.

Small alphabets ("a", "b", "c", '"', ",") so that tokens share prefixes and run across
accepting states; tables with trap states and branches that never close (dead states),
EOS at any position of the vocabulary, duplicate tokens, and regexes whose literals force
bytes right next to a choice.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

ALPHABET = b'abc",'


@st.composite
def vocabularies(draw, alphabet: bytes = ALPHABET, max_extra: int = 24):
    """(tokens, eos_id): every single byte, multi-byte tokens over a small alphabet (some
    duplicated), EOS at a drawn position."""
    extra = draw(st.lists(st.binary(min_size=2, max_size=5).map(
        lambda b: bytes(alphabet[x % len(alphabet)] for x in b)), max_size=max_extra))
    if extra and draw(st.booleans()):
        extra.append(extra[0])                         # a duplicate token
    tokens = [bytes([b]) for b in range(256)] + extra
    if draw(st.booleans()):                            # ids in a drawn order
        random.Random(draw(st.integers(0, 2**32 - 1))).shuffle(tokens)
    eos = draw(st.integers(0, len(tokens)))
    tokens.insert(eos, b"<|eos|>")
    return tokens, eos


@st.composite
def tables(draw, all_live: bool, alphabet: bytes = ALPHABET, max_states: int = 7):
    """(table, accepting). With ``all_live`` every state can reach an accepting one (a chain
    on byte ``alphabet[0]`` leads to the last state, which accepts); otherwise trap states
    and unclosed branches are likely."""
    n = draw(st.integers(1, max_states))
    table = [[-1] * 256 for _ in range(n)]
    for s in range(n):
        for b in alphabet:
            table[s][b] = draw(st.integers(-1, n - 1))
    accepting = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if all_live:
        for s in range(n - 1):
            table[s][alphabet[0]] = s + 1
        accepting[-1] = True
    elif n > 1 and draw(st.booleans()):
        trap = draw(st.integers(0, n - 1))             # a trap: loops, never accepts
        accepting[trap] = False
        for b in alphabet:
            table[trap][b] = trap if table[trap][b] >= 0 else -1
    return table, accepting


def _atom(inner):
    return st.one_of(
        st.sampled_from(["a", "b", "c", "ab", "abc", '"', ",", "[ab]", "[a-c]", "[^a]"]),
        inner.map(lambda r: f"({r})"),
    )


regex_patterns = st.recursive(
    st.sampled_from(["a", "b", "abc", '"', "[ab]", "c"]),
    lambda inner: st.one_of(
        st.tuples(_atom(inner), _atom(inner)).map("".join),
        st.tuples(inner, inner).map(lambda t: f"({t[0]}|{t[1]})"),
        st.tuples(_atom(inner), st.sampled_from(["?", "*", "+"])).map("".join),
    ),
    max_leaves=6,
)
