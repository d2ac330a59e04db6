"""Oracles for stream_detok, shared by the public and hidden tests.

Everything here is a model of the truth written from the prompt's rules, not a copy of the
reference: the whole-output reference (decode everything, cut at the first stop to
complete) and the two bounds on what may have been sent after each push.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


def first_stop(text: str, stops: Sequence[str]) -> tuple[int, int, str] | None:
    """The first stop to complete in ``text``: (start, end, stop), earliest end then start."""
    best: tuple[int, int, str] | None = None
    for s in stops:
        i = text.find(s)
        if i >= 0 and (best is None or (i + len(s), i) < (best[1], best[0])):
            best = (i, i + len(s), s)
    return best


def cut(text: str, stops: Sequence[str], include: bool) -> tuple[str, str | None]:
    """The whole-output reference for a decoded ``text``: (output, matched stop)."""
    hit = first_stop(text, stops)
    if hit is None:
        return text, None
    start, end, s = hit
    return (text[:end] if include else text[:start]), s


def reference(vocab: Sequence[bytes], ids: Sequence[int], stops: Sequence[str],
              include: bool) -> tuple[str, str | None]:
    """Rule 1: decode all bytes at once, cut at the first stop to complete."""
    text = b"".join(vocab[i] for i in ids).decode("utf-8", errors="replace")
    return cut(text, stops, include)


def _is_char_prefix(data: bytes) -> bool:
    """Whether ``data`` is a proper prefix of the UTF-8 encoding of some character."""
    if not data or len(data) > 3:
        return False
    lead = data[0]
    if 0xC2 <= lead <= 0xDF:
        n, lo, hi = 2, 0x80, 0xBF
    elif 0xE0 <= lead <= 0xEF:
        n = 3
        lo, hi = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F)}.get(lead, (0x80, 0xBF))
    elif 0xF0 <= lead <= 0xF4:
        n = 4
        lo, hi = {0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}.get(lead, (0x80, 0xBF))
    else:
        return False
    if len(data) >= n:
        return False
    if len(data) >= 2 and not lo <= data[1] <= hi:
        return False
    return all(0x80 <= b <= 0xBF for b in data[2:])


@dataclass
class Decoded:
    """What the bytes pushed so far say about the text."""
    std: str        # what the standard incremental decoder has produced
    det: str        # every character already certain (std, plus rare bytes the decoder keeps)
    pending: bytes  # bytes of an unfinished character (a proper prefix of one), else b""


def decode_so_far(data: bytes) -> Decoded:
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    std = dec.decode(data)
    kept = dec.getstate()[0]
    if _is_char_prefix(kept):
        return Decoded(std, std, kept)
    # CPython keeps e.g. ED A0 although it can only become replacement characters.
    return Decoded(std, std + kept.decode("utf-8", errors="replace"), b"")


def _next_char_possible(ch: str, pending: bytes) -> bool:
    return not pending or ch == "\ufffd" or ch.encode("utf-8").startswith(pending)


def max_safe(dec: Decoded, stops: Sequence[str], include: bool) -> str:
    """The longest text every continuation's final output starts with (no stop complete)."""
    text = dec.det
    if include:
        return text
    h = len(text)
    longest = max((len(s) for s in stops), default=0)
    for start in range(max(0, len(text) - longest + 1), len(text)):
        if start >= h:
            break
        tail = text[start:]
        for s in stops:
            if len(s) > len(tail) and s.startswith(tail):
                rest = s[len(tail):]
                if not _next_char_possible(rest[0], dec.pending):
                    continue
                hit = first_stop(text + rest, stops)
                assert hit is not None
                h = min(h, hit[0])
    return text[:h]


def held_rule(text: str, stops: Sequence[str], include: bool) -> str:
    """Rule 3's floor: ``text`` minus its longest end that is a proper prefix of a stop."""
    if include:
        return text
    keep = 0
    for s in stops:
        for k in range(min(len(s) - 1, len(text)), keep, -1):
            if text.endswith(s[:k]):
                keep = k
                break
    return text[:len(text) - keep]


@dataclass
class Bounds:
    """What may have been sent after a push: at least ``lo``, at most ``hi`` (a prefix)."""
    lo: str
    hi: str
    stopped: bool | None      # True/False when certain, None when either is allowed
    matched: str | None


def bounds(data: bytes, stops: Sequence[str], include: bool) -> Bounds:
    dec = decode_so_far(data)
    hit_std = first_stop(dec.std, stops)
    if hit_std is not None:
        out, matched = cut(dec.std, stops, include)
        return Bounds(out, out, True, matched)
    hit_det = first_stop(dec.det, stops)
    lo = held_rule(dec.std, stops, include)
    if hit_det is not None:  # a stop inside the replacement characters CPython still keeps
        out, matched = cut(dec.det, stops, include)
        return Bounds(lo, out, None, matched)
    return Bounds(lo, max_safe(dec, stops, include), False, None)


def show(text: str) -> str:
    return repr(text)


@dataclass
class Step:
    pushed: list[int]
    returned: str
    sent: str                  # everything sent so far
    data: bytes                # every byte pushed so far
    stopped: Any
    matched: Any


@dataclass
class Trace:
    vocab: Sequence[bytes]
    stops: list[str]
    include: bool
    groups: list[list[int]]
    steps: list[Step] = field(default_factory=list)
    final: str = ""            # finish()'s result
    stopped_after_finish: Any = None
    matched_after_finish: Any = None

    @property
    def output(self) -> str:
        return (self.steps[-1].sent if self.steps else "") + self.final

    def describe(self) -> str:
        lines = [f"stop={self.stops!r}, include_stop={self.include}"]
        for k, step in enumerate(self.steps):
            toks = [self.vocab[i] for i in step.pushed]
            lines.append(f"  push #{k} {step.pushed} bytes {toks!r} -> {step.returned!r}")
        lines.append(f"  finish() -> {self.final!r}")
        return "\n".join(lines)


def run(mod: Any, vocab: Sequence[bytes], groups: Sequence[Sequence[int]],
        stops: Sequence[str] = (), include: bool = False, finish: bool = True,
        flags: bool = True) -> Trace:
    """Push ``groups`` one push each, then finish; record everything (with ``flags=False``,
    ``stopped`` and ``matched_stop`` only after finish: enough for check_equals_whole)."""
    d = mod.StreamDetokenizer(list(vocab), list(stops), include)
    trace = Trace(vocab, list(stops), include, [list(g) for g in groups])
    sent = ""
    data = b""
    for g in groups:
        r = d.push(list(g))
        assert isinstance(r, str), f"push must return str, got {r!r}"
        sent += r
        data += b"".join(vocab[i] for i in g)
        trace.steps.append(Step(list(g), r, sent, data, d.stopped if flags else None,
                                d.matched_stop if flags else None))
    if finish:
        trace.final = d.finish()
        assert isinstance(trace.final, str), f"finish must return str, got {trace.final!r}"
        trace.stopped_after_finish = d.stopped
        trace.matched_after_finish = d.matched_stop
    return trace


def check_equals_whole(trace: Trace) -> None:
    """Rule 1 and 2: the stream is the whole-output reference, and never overshoots it."""
    ids = [i for g in trace.groups for i in g]
    want, matched = reference(trace.vocab, ids, trace.stops, trace.include)
    for k, step in enumerate(trace.steps):
        assert want.startswith(step.sent), (
            f"after push #{k} the stream has sent {step.sent!r}, which is not a prefix of the "
            f"whole-output reference {want!r}: text was sent that must be taken back\n"
            + trace.describe())
    assert trace.output == want, (
        f"pushes + finish gave {trace.output!r}, the whole-output reference is {want!r}\n"
        + trace.describe())
    assert trace.stopped_after_finish == (matched is not None), (
        f"stopped is {trace.stopped_after_finish!r} at the end, expected {matched is not None}"
        + "\n" + trace.describe())
    assert trace.matched_after_finish == matched, (
        f"matched_stop is {trace.matched_after_finish!r} at the end, expected {matched!r}\n"
        + trace.describe())


def check_holdback(trace: Trace) -> None:
    """Rule 3 after every push (and the stopped flag), from the bytes pushed so far."""
    for k, step in enumerate(trace.steps):
        b = bounds(step.data, trace.stops, trace.include)
        assert step.sent.startswith(b.lo), (
            f"after push #{k} the stream has sent {step.sent!r} but must have sent at least "
            f"{b.lo!r} (all the decoded text but an unfinished character"
            + ("" if trace.include else " and the longest end that could begin a stop")
            + ")\n" + trace.describe())
        assert b.hi.startswith(step.sent), (
            f"after push #{k} the stream has sent {step.sent!r}, more than is certain: at most "
            f"{b.hi!r} (some continuation of the bytes {step.data!r} would need it back)\n"
            + trace.describe())
        if b.stopped is not None:
            assert bool(step.stopped) == b.stopped, (
                f"after push #{k} stopped is {step.stopped!r}, expected {b.stopped}\n"
                + trace.describe())
            if b.stopped:
                assert step.matched == b.matched, (
                    f"after push #{k} matched_stop is {step.matched!r}, expected {b.matched!r}\n"
                    + trace.describe())
