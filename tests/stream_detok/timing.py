"""The linear-time check: the CPU time of a 50k-token stream, one token per push, against
the reference's on the same stream.

The CPU time is taken from outside the implementation's process (graders.impl.measured_call:
the kernel's account of the grading worker, or this process's when testing in-process), and
the reference runs in a worker of its own, so nothing the submission does can change either
the clock or the baseline. The timed pushes run in a driver inside the implementation's
process (one request; 50k round trips would cost more than the pushes): what it reports
after each push must be what the class itself sends when pushed from the test's side over a
window of the stream (``same_window``), so a replaced driver gains nothing. Each stream is judged on its own against the reference (never
against the submission's own time at a smaller size), so slowing any push down can only
lose the item.

Linear solutions cost 0.3 to 2 times the reference here; re-decoding or re-searching the
whole output on every push costs about 90 times as much at 50k tokens (its cost grows with
the square of the length). The check passes below ``LIMIT`` (8) times the reference: wide
enough for a shared, noisy machine and for plain, unoptimised linear code. A stream is
stopped as soon as it has used 1.5 times that, so a quadratic submission fails in seconds.
No absolute time is ever compared with a constant.
"""

from __future__ import annotations

import codecs
import random
import secrets
from typing import Any

LENGTH, LIMIT = 50_000, 8.0
STOPS = ["<|end|>", "\n\nUser:"]
# the timed stream is drawn afresh by every test process, so no submission can compute its
# answers ahead of the timed call (outside the measured window) from a seed it can read
TIMED_SEED = secrets.randbits(32)


def workload(n: int, seed: int = 7) -> tuple[list[bytes], list[int]]:
    """A 64-token vocabulary of 8-byte tokens cut at random byte offsets from text full of
    stop prefixes ("<|", "\\n\\n", "User") and multi-byte characters, so holding back and
    character splitting happen all the time; no stop ever completes.
    """
    rng = random.Random(seed)
    text = "".join(rng.choice(["a", "b", " ", "<", "<|", "€", "中", "\n", "\n\nU", "Use"])
                   for _ in range(4000)).encode("utf-8")
    vocab = []
    for _ in range(64):
        at = rng.randrange(len(text) - 8)
        vocab.append(text[at:at + 8])
    return vocab, [rng.randrange(len(vocab)) for _ in range(n)]


def streamed(vocab: list[bytes], ids: list[int], stops: list[str], sent: list[int],
             text: str) -> str | None:
    """What is wrong with a timed stream, or None: the text must be the whole-output
    reference, and after every push at most a stop's length (plus an unfinished character)
    may be held back, so the tokens really were pushed and streamed one at a time."""
    from tests.stream_detok.helpers import reference

    want = reference(vocab, ids, stops, False)[0]
    if text != want:
        return (f"the timed stream is wrong: it sent {text[:60]!r}..., the whole-output "
                f"reference is {want[:60]!r}...")
    if len(sent) != len(ids):
        return f"{len(ids)} tokens were pushed one at a time but {len(sent)} pushes reported"
    slack = max((len(s) for s in stops), default=0) + 4
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    decoded = 0
    for k, t in enumerate(ids):
        decoded += len(dec.decode(vocab[t]))
        floor = min(decoded, len(want)) - slack
        if not floor <= sent[k] <= decoded + 4:
            return (f"after push {k + 1}, {sent[k]} characters had been sent of {decoded} "
                    "decoded: the stream was held back, or ran ahead of its tokens")
    return None


def same_window(mod: Any, vocab: list[bytes], ids: list[int], stops: list[str],
                sent: list[int], start: int, length: int = 400) -> str | None:
    """What the timed run reported must be what the class itself streams: pushed from this
    side, call by call, a fresh detokenizer gets ``ids[:start]`` in one push and then one
    token per push; each push must send exactly what the timed run says it sent there. (A
    timed run is a driver inside the implementation's process; this ties it to the class.)"""
    d = mod.StreamDetokenizer(list(vocab), list(stops))
    first = d.push(list(ids[:start]))
    if len(first) != sent[start - 1]:
        return (f"pushing the first {start} tokens at once sent {len(first)} characters; the "
                f"timed run, one token per push, had sent {sent[start - 1]}")
    for k in range(start, min(start + length, len(ids))):
        got = len(d.push([ids[k]]))
        if got != sent[k] - sent[k - 1]:
            return (f"push {k + 1} sent {got} characters when made from the test, "
                    f"{sent[k] - sent[k - 1]} in the timed run")
    return None


def _measure(stops: list[str], ids: list[int], vocab: list[bytes], reference: bool,
             budget: float | None = None, window: int | None = None
             ) -> tuple[tuple[list[int], str, int], float]:
    """One timed stream; unless ``reference``, checked as the correctness tests check a
    stream (``streamed``; with ``window``, also ``same_window``) before its time counts."""
    from graders.impl import kata_impl, measured_call
    from graders.support import stream_detok as driver

    def check(result: Any) -> str | None:
        sent, text, pushed = result
        sent = [int(n) for n in sent]
        if int(pushed) < len(ids):
            return None   # stopped at its budget: judged by the caller, never by its answer
        return streamed(vocab, ids, stops, sent, str(text)) or (
            None if window is None else
            same_window(kata_impl("stream_detok"), vocab, ids, stops, sent, window))

    (sent, text, pushed), used = measured_call(
        "stream_detok", driver.push_each, "StreamDetokenizer", vocab, ids, stops,
        reference=reference, budget=budget, check=None if reference else check)
    return ([int(n) for n in sent], str(text), int(pushed)), float(used)


_reference_cpu: dict[tuple[bool, tuple[str, ...]], float] = {}


def reference_cpu(stops: list[str], again: bool = False) -> float:
    """The reference's CPU seconds for the 50k stream (the fastest run so far)."""
    from graders.impl import isolated

    key = (isolated(), tuple(stops))
    if key not in _reference_cpu or again:
        vocab, ids = workload(LENGTH, TIMED_SEED)
        if key not in _reference_cpu:
            _measure(stops, ids[:2000], vocab, True)   # warm-up
        used = _measure(stops, ids, vocab, True)[1]
        _reference_cpu[key] = min(used, _reference_cpu.get(key, used))
    return _reference_cpu[key]


def growth(stops: list[str] = STOPS, window: int = 30_000) -> tuple[bool, str]:
    """(passed, what was measured). The timed stream must also be right and streamed: a
    fast wrong answer is not linear time. ``window``: where ``same_window`` checks that the
    timed run's pushes are the class's own."""
    from graders.impl import OverBudget, WrongResult

    vocab, ids = workload(LENGTH, TIMED_SEED)
    ref = reference_cpu(stops)
    try:   # a warm-up that counts: the first 2000 tokens, under the whole stream's budget
        (sent, text, _), _ = _measure(stops, ids[:2000], vocab, False, 1.5 * LIMIT * ref)
    except OverBudget as exc:
        return False, (f"the first 2000 tokens alone used {exc.seconds:.2f} CPU seconds, past "
                       f"1.5 x {LIMIT:g} times the reference's {ref:.3f} s for all {LENGTH}")
    except WrongResult as exc:
        return False, str(exc)
    notes = []
    for attempt in range(2):
        ref = reference_cpu(stops, again=attempt > 0)
        bound = LIMIT * ref
        try:
            (sent, text, pushed), used = _measure(stops, ids, vocab, False, 1.5 * bound,
                                                  window)
        except OverBudget as exc:
            return False, (f"stopped after {exc.seconds:.2f} CPU seconds, past 1.5 x {LIMIT:g} "
                           f"times the reference's {ref:.3f} s")
        except WrongResult as exc:
            return False, str(exc)
        if pushed < LENGTH:
            return False, (f"after {1.5 * bound:.2f} CPU seconds ({1.5 * LIMIT:g} times the "
                           f"reference's) only {pushed} of {LENGTH} tokens were pushed")
        if used <= bound:
            return True, f"{used:.3f} CPU seconds, {used / ref:.1f} times the reference's"
        notes.append(f"{used:.3f} CPU seconds, {used / ref:.1f} times the reference's "
                     f"{ref:.3f} s")
    return False, "; ".join(notes)
