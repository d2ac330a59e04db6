"""Hypothesis strategies for stream_detok, built to hit the traps on purpose.

- Texts over a tiny alphabet (so stop prefixes keep appearing and collide), mixing ASCII
  with two-, three- and four-byte characters and U+FFFD itself.
- Stop lists drawn from the text (so they complete) and derived from each other: a prefix,
  a suffix, the inside of another stop, a stop extended on either side, duplicates.
- Invalid bytes spliced in: stray continuation bytes, lone lead bytes, truncated
  characters, and ED A0 (a surrogate half that CPython's incremental decoder holds back).
- Tokenizations that cut the bytes at arbitrary points (inside characters and inside stop
  strings), and groupings of tokens into pushes of 1 to 5 tokens, or one push of all.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from tests.stream_detok.vocab import load_vocab

CHARS = ["a", "b", "c", "<", "/", ">", " ", "\n", "é", "€", "中", "🙂", "\ufffd"]
BAD_BYTES = [b"\xff", b"\x80", b"\xbf", b"\xe2\x82", b"\xf0\x9f", b"\xf0\x9f\x99", b"\xc3",
             b"\xed\xa0", b"\xe0\x80", b"\xf4\x90"]


@dataclass
class Case:
    vocab: list[bytes]
    ids: list[int]
    groups: list[list[int]]
    stops: list[str]
    include: bool

    def __repr__(self) -> str:
        toks = [self.vocab[i] for i in self.ids]
        return (f"Case(stops={self.stops!r}, include_stop={self.include}, "
                f"tokens={toks!r}, pushes={[len(g) for g in self.groups]})")


def texts(max_size: int = 24, chars: list[str] = CHARS) -> st.SearchStrategy[str]:
    return st.text(alphabet=st.sampled_from(chars), max_size=max_size)


@st.composite
def stop_lists(draw: st.DrawFn, text: str, min_size: int = 1) -> list[str]:
    stops: list[str] = []
    for _ in range(draw(st.integers(min_size, 3))):
        if text and draw(st.booleans()):
            i = draw(st.integers(0, len(text) - 1))
            j = draw(st.integers(i + 1, min(len(text), i + 5)))
            stops.append(text[i:j])
        else:
            stops.append(draw(st.text(alphabet=st.sampled_from(CHARS), min_size=1, max_size=4)))
    for _ in range(draw(st.integers(0, 3))):
        s = draw(st.sampled_from(stops))
        c = draw(st.sampled_from(CHARS))
        kind = draw(st.sampled_from(["prefix", "suffix", "inside", "longer", "before", "dup"]))
        derived = {"prefix": s[:-1], "suffix": s[1:], "inside": s[1:-1], "longer": s + c,
                   "before": c + s, "dup": s}[kind]
        if derived:
            stops.append(derived)
    return draw(st.permutations(stops))


@st.composite
def with_bad_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    if not draw(st.booleans()):
        return data
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(out)))
        out[at:at] = draw(st.sampled_from(BAD_BYTES))
    return bytes(out)


@st.composite
def tokenize(draw: st.DrawFn, data: bytes) -> tuple[list[bytes], list[int]]:
    """Cut ``data`` at arbitrary byte offsets; the vocabulary is the distinct pieces (shuffled,
    plus a few unused ones) and the ids spell ``data``."""
    if not data:
        return [b"x"], []
    cuts = draw(st.sets(st.integers(1, max(1, len(data) - 1)), max_size=len(data)))
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(data)), len(data)]
    pieces = [data[a:b] for a, b in zip(bounds, bounds[1:])]
    extra = draw(st.lists(st.binary(min_size=1, max_size=3), max_size=3))
    vocab = draw(st.permutations(list(dict.fromkeys(pieces + extra))))
    index = {p: i for i, p in enumerate(vocab)}
    return vocab, [index[p] for p in pieces]


@st.composite
def groupings(draw: st.DrawFn, ids: list[int]) -> list[list[int]]:
    if draw(st.integers(0, 5)) == 0:
        return [list(ids)] if ids else []
    groups: list[list[int]] = []
    i = 0
    while i < len(ids):
        n = draw(st.integers(1, 5)) if draw(st.booleans()) else 1
        groups.append(ids[i:i + n])
        i += n
    if draw(st.integers(0, 4)) == 0:
        groups.insert(draw(st.integers(0, len(groups))), [])  # an empty push is allowed
    return groups


@st.composite
def cases(draw: st.DrawFn, with_stops: bool = True, bad_bytes: bool = True,
          include: bool | None = None, text: st.SearchStrategy[str] | None = None,
          plant_stop: bool = False) -> Case:
    body = draw(text if text is not None else texts())
    stops = draw(stop_lists(body)) if with_stops else []
    if plant_stop and stops:  # make sure some stop completes, somewhere in the middle
        s = draw(st.sampled_from(stops))
        at = draw(st.integers(0, len(body)))
        body = body[:at] + s + body[at:]
    data = body.encode("utf-8")
    if bad_bytes:
        data = draw(with_bad_bytes(data))
    vocab, ids = draw(tokenize(data))
    groups = draw(groupings(ids))
    inc = draw(st.booleans()) if include is None else include
    return Case(vocab, ids, groups, stops, inc)


@st.composite
def bpe_cases(draw: st.DrawFn, with_stops: bool = True) -> Case:
    """Random id sequences over the shipped BPE vocabulary: partial characters, stray
    continuation bytes and whole words, in any order."""
    vocab = list(load_vocab())
    ids = draw(st.lists(st.integers(0, len(vocab) - 1), max_size=40))
    text = b"".join(vocab[i] for i in ids).decode("utf-8", errors="replace")
    stops = draw(stop_lists(text)) if with_stops else []
    groups = draw(groupings(ids))
    return Case(vocab, ids, groups, stops, draw(st.booleans()))


@st.composite
def nested_stop_cases(draw: st.DrawFn) -> Case:
    """A stop with another stop inside it (as a prefix, a suffix or strictly inside),
    planted in the text, so the first to complete is not the first to start; pushes are
    often large, so both complete within one push."""
    small = ["a", "b", "c", "€", "中"]
    outer = draw(st.text(alphabet=st.sampled_from(small), min_size=2, max_size=5))
    i = draw(st.integers(0, len(outer) - 1))
    j = draw(st.integers(i + 1, len(outer)))
    inner = outer[i:j] if (i, j) != (0, len(outer)) else outer[:-1]
    others = draw(st.lists(st.text(alphabet=st.sampled_from(small), min_size=1, max_size=3),
                           max_size=2))
    stops = draw(st.permutations([outer, inner, *others]))
    before = draw(st.text(alphabet=st.sampled_from(small), max_size=6))
    after = draw(st.text(alphabet=st.sampled_from(small), max_size=4))
    data = (before + outer + after).encode("utf-8")
    vocab, ids = draw(tokenize(data))
    if draw(st.booleans()):
        groups = [ids]
    else:
        groups = draw(groupings(ids))
    return Case(vocab, ids, groups, stops, draw(st.booleans()))
