"""The work check: a grammar's masks must cost far less than walking every token.

Workload: a 16,001-token byte-level vocabulary (stream_detok's 700 BPE tokens, then 15,300
distinct 2-9 byte pieces of its corpus, then EOS) and a JSON-object grammar of 40 fields
with long literal keys, enum values, numbers and two free-text strings (1,619 DFA states,
most of them inside literals, where a mask holds one or two tokens). One driver call inside
the implementation's process (graders.support.grammar_mask.masks_of) builds the masker and
asks for the mask of every state once, in a shuffled order, then asks 1,000 more times for
the ten states inside the five free-text strings, as a decode of long strings does.

Evidence: the CPU time of that call, taken from outside the implementation's process
(graders.impl.measured_call: the kernel's account of the grading worker), against the
reference's for the same call in a worker of its own, so nothing the submission does
changes the baseline, and slowing any call down can only lose. Every mask the call returns
is checked against a brute-force walk of every token (computed here, with numpy), so a
fast wrong answer fails as well: a measured call is a checked call.

Measured on 2 busy cores: a trie walked with the DFA plus a per-state cache (the reference)
about 0.3 s, the sorted_ranges alternative 1.1x; walking every token per state, even with
a cache, 15-20 times that (vectorised with numpy, still past the 9x stop); a trie without a
cache, 15-20 times. The check passes below ``LIMIT`` (6) times the reference; a
call is stopped at 1.5 times that, and a near miss is measured once more (a busy machine).
No absolute time is ever compared with a constant.
"""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

from graders.impl import OverBudget, measured_call
from graders.support import grammar_mask as support
from tests.grammar_mask import helpers
from tests.grammar_mask.vocab import load_vocab
from tests.stream_detok import vocab as stream_detok_vocab

LIMIT = 6.0
VOCAB = 16_000
HOT_QUERIES = 1_000

WORDS = ["customer", "billing", "address", "line", "shipping", "account", "number", "primary",
         "contact", "email", "created", "updated", "timestamp", "status", "payment", "method",
         "default", "currency", "region", "country"]
VALUES = ['[0-9]+', '(true|false|null)', '"(pending|shipped|delivered|cancelled)"',
          '"(EUR|USD|JPY)"', r'[0-9]+\.[0-9][0-9]', '"[a-z ]*"', '(true|false)',
          '"(north|south|east|west)"']


@functools.lru_cache(maxsize=1)
def workload() -> tuple[list[bytes], int, list[list[int]], list[bool], list[int]]:
    rng = random.Random(5)
    text = stream_detok_vocab.corpus().encode("utf-8")
    tokens = list(load_vocab())
    assert tuple(tokens) == stream_detok_vocab.load_vocab(), \
        "tests/grammar_mask/data/tokenizer.json must be a copy of stream_detok's"
    seen = set(tokens)
    while len(tokens) < VOCAB:
        n = rng.randint(2, 9)
        at = rng.randrange(len(text) - n)
        piece = text[at:at + n]
        if piece not in seen:
            seen.add(piece)
            tokens.append(piece)
    tokens.append(b"</s>")
    keys = ["_".join(rng.sample(WORDS, 3)) for _ in range(40)]
    fields = [f'"{k}": {VALUES[i % len(VALUES)]}' for i, k in enumerate(keys)]
    table, accepting = support.compile_regex(r"\{" + ", ".join(fields) + r"\}")
    states = list(range(len(table)))
    rng.shuffle(states)
    hot = [s for s in range(len(table)) if table[s][ord("q")] >= 0]
    assert len(table) == 1619 and len(hot) == 10, (len(table), hot)
    states += [hot[k % len(hot)] for k in range(HOT_QUERIES)]
    return tokens, len(tokens) - 1, table, accepting, states


@functools.lru_cache(maxsize=1)
def oracle() -> dict[int, bytes]:
    """Each state's packed mask by brute force: every token's bytes walked over the table
    (vectorised over the tokens; a token leaves the walk at its first missing transition)."""
    tokens, eos, table, accepting, _ = workload()
    t = np.asarray(table, dtype=np.int64)
    live = np.asarray(helpers.live_states(table, accepting))
    lengths = np.asarray([0 if i == eos else len(x) for i, x in enumerate(tokens)])
    padded = np.zeros((len(tokens), int(lengths.max())), dtype=np.int64)
    for i, x in enumerate(tokens):
        if i != eos:
            padded[i, :len(x)] = list(x)
    walkers = np.flatnonzero(lengths > 0)
    out: dict[int, bytes] = {}
    for s in range(len(table)):
        ids, cur = walkers, np.full(len(walkers), s)
        for j in range(padded.shape[1]):
            going = lengths[ids] > j
            nxt = cur.copy()
            nxt[going] = t[cur[going], padded[ids[going], j]]
            ids, cur = ids[nxt >= 0], nxt[nxt >= 0]
        ok = np.zeros(len(tokens), dtype=bool)
        ok[ids] = live[cur]
        ok[eos] = accepting[s]
        out[s] = np.packbits(ok).tobytes()
    return out


def _measure(reference: bool, budget: float | None = None) -> tuple[list[bytes], int, float]:
    tokens, eos, table, accepting, states = workload()
    (masks, done), used = measured_call(
        "grammar_mask", support.masks_of, "GrammarMasker", tokens, eos, table, accepting,
        states, reference=reference, budget=budget,
        check=None if reference else _check_result)
    return [bytes(m) for m in masks], int(done), float(used)


def _check_result(result: object) -> str | None:
    """measured_call's check: the timed call's answers are judged as the tests judge them."""
    masks, done = result  # type: ignore[misc]
    return _wrong([bytes(m) for m in masks], int(done))


def _wrong(masks: list[bytes], done: int) -> str | None:
    tokens, _, table, _, states = workload()
    want = oracle()
    if done != len(states) or len(masks) != len(states):
        return f"the timed call answered {len(masks)} of {len(states)} queries"
    for k, (s, got) in enumerate(zip(states, masks)):
        if got != want[s]:
            have = np.unpackbits(np.frombuffer(got, dtype=np.uint8))[:len(tokens)].astype(bool)
            need = np.unpackbits(np.frombuffer(want[s], dtype=np.uint8))[:len(tokens)].astype(bool)
            diff = np.flatnonzero(have != need)[:5]
            return (f"query {k} (state {s}) of the timed call: the mask is wrong at token ids "
                    f"{diff.tolist()} ({[tokens[i] for i in diff]}): allowed "
                    f"{have[diff].tolist()}, the brute force says {need[diff].tolist()}")
    return None


_reference: list[float] = []


@pytest.mark.rubric("work")
def test_masks_cost_far_less_than_walking_every_token():
    """Rule: Work"""
    if not _reference:
        _measure(True)                       # warm-up (imports, numpy)
        _reference.append(_measure(True)[2])
    notes = []
    for attempt in range(2):
        if attempt:
            _reference.append(min(_reference[-1], _measure(True)[2]))
        ref = _reference[-1]
        try:
            masks, done, used = _measure(False, budget=1.5 * LIMIT * ref)
        except OverBudget as exc:
            pytest.fail(f"building the masker and answering the {len(workload()[4])} mask "
                        f"queries was stopped after {exc.seconds:.2f} CPU seconds, past 1.5 x "
                        f"{LIMIT:g} times the reference's {ref:.3f} s: a mask must cost the "
                        "live part of a token trie, and a state's mask is asked for again and "
                        "again during a decode")
        wrong = _wrong(masks, done)
        if wrong:
            pytest.fail(wrong)
        print(f"grammar_mask work: {used:.3f} CPU seconds, the reference {ref:.3f} s "
              f"({used / ref:.1f}x, limit {LIMIT:g}x)")
        if used <= LIMIT * ref:
            return
        notes.append(f"{used:.3f} CPU seconds against the reference's {ref:.3f} s "
                     f"({used / ref:.1f}x)")
    pytest.fail(f"building the masker and answering {len(workload()[4])} mask queries used "
                f"{'; then '.join(notes)} (limit {LIMIT:g}x): walk a token trie together with "
                "the DFA, stop at the first dead byte, and cache each state's mask")
