"""Lookup cost: acquire/extend/release must cost O(length of the tokens), not a walk over
the tree or the pool (the prompt's Constraints).

One stream of 4,000 chat-like requests runs through a fresh cache that never runs short (no
eviction: every answer is fixed by the rules). The prompts start with one of 1,500 first
tokens and share short prefixes, so by the end the tree holds about 120k cached tokens in
some 8,000 nodes, 1,500 of them children of the root. The whole stream runs in one call
next to the implementation (graders/support/radix_cache.py: round trips would cost more than
the lookups); its CPU time is taken from outside the worker (graders.impl.measured_call) and
judged against the reference's on the same stream, in a worker of its own, never against
the submission's own time at another size, so slowing any call down can only lose.

Measured on 2 busy cores, in process: the blind alternative costs 0.7x the reference; a
cache that counts its evictable slots by walking the tree on every acquire (the mutant
evictable_walks_tree) 25x, and more as the tree grows. The limit is ``LIMIT`` (6) times the
reference: wide enough for a shared, noisy machine and plain code. A run is stopped at 1.5
times that, so a slow submission fails in seconds. No absolute time is ever compared with a
constant.
"""

from __future__ import annotations

import random
import secrets

import pytest

from graders.impl import OverBudget, isolated, kata_impl, measured_call
from graders.support import radix_cache as driver

rc = kata_impl("radix_cache")

REQUESTS, ROOTS, SLOTS, LIMIT = 4_000, 1_500, 200_000, 6.0
WINDOW = 80   # requests replayed call by call from the test's side


def _stream(n: int, seed: int = 17) -> list[tuple[list[int], list[int]]]:
    """(prompt, generated) pairs: a first token out of ROOTS, a second out of 3, then a
    random tail (fresh tokens, so every release adds a leaf and often splits an edge)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        head = [rng.randrange(ROOTS), rng.randrange(3)]
        tail = [rng.randrange(1 << 20) for _ in range(rng.randrange(10, 40))]
        out.append((head + tail, [rng.randrange(1 << 20) for _ in range(4)]))
    return out


def _expected(stream: list[tuple[list[int], list[int]]]) -> tuple[list[int], int]:
    """(num_cached of every acquire, cached slots at the end), from a plain trie of every
    released sequence: one cached slot per distinct prefix."""
    trie: dict[int, dict] = {}
    hits, cached = [], 0
    for prompt, generated in stream:
        node, n = trie, 0
        while n < len(prompt) - 1 and prompt[n] in node:
            node, n = node[prompt[n]], n + 1
        hits.append(n)
        node = trie
        for t in prompt + generated:
            if t not in node:
                node[t] = {}
                cached += 1
            node = node[t]
    return hits, cached


_reference_cpu: dict[bool, float] = {}


def _reference(stream: list[tuple[list[int], list[int]]], again: bool) -> float:
    if isolated() not in _reference_cpu or again:
        if isolated() not in _reference_cpu:
            measured_call("radix_cache", driver.serve, "RadixCache", SLOTS, stream[:200],
                          reference=True)   # warm-up
        used = measured_call("radix_cache", driver.serve, "RadixCache", SLOTS, stream,
                             reference=True)[1]
        _reference_cpu[isolated()] = min(used, _reference_cpu.get(isolated(), used))
    return _reference_cpu[isolated()]


def _answers_wrong(stream, hits: list[int], stats: dict[str, int]) -> str | None:
    want, cached = _expected(stream)
    if hits != want:
        k = next((i for i, (a, b) in enumerate(zip(hits, want)) if a != b), len(hits))
        return (f"request {k} of the timed stream: acquire reported num_cached="
                f"{hits[k] if k < len(hits) else None}, the longest cached prefix capped at "
                f"len(tokens) - 1 is {want[k] if k < len(want) else None}")
    if stats.get("cached") != cached or stats.get("free") != SLOTS - cached:
        return (f"after the timed stream, stats() = {stats}; {cached} distinct prefixes were "
                f"released, so cached must be {cached} and free {SLOTS - cached}")
    return None


def _same_window(stream, hits: list[int]) -> str | None:
    """The timed run's answers must be what the class itself gives, called from this side
    (the timed run is a driver inside the implementation's process; this ties it to it)."""
    cache = rc.RadixCache(SLOTS)
    for k, (prompt, generated) in enumerate(stream[:WINDOW]):
        lease, cached, _ = cache.acquire(prompt)
        cache.extend(lease, len(generated))
        cache.release(lease, prompt + generated)
        if cached != hits[k]:
            return (f"request {k}: acquire called from the test reported num_cached={cached}, "
                    f"the timed run {hits[k]}")
    return None


@pytest.mark.rubric("prefix_match")
def test_lookup_cost_does_not_grow_with_the_tree():
    # drawn afresh by every test process: no submission can answer it ahead of the timed
    # call from a seed it knows
    stream = _stream(REQUESTS, secrets.randbits(32))
    measured_call("radix_cache", driver.serve, "RadixCache", SLOTS, stream[:200],
                  check=lambda got: _answers_wrong(stream[:200], *got))   # a warm-up that counts
    notes = []
    for attempt in range(2):
        ref = _reference(stream, again=attempt > 0)
        bound = LIMIT * ref
        try:
            (hits, stats), used = measured_call(
                "radix_cache", driver.serve, "RadixCache", SLOTS, stream, budget=1.5 * bound,
                check=lambda got: None if len(got[0]) < REQUESTS else (
                    _answers_wrong(stream, *got) or _same_window(stream, got[0])))
        except OverBudget as exc:
            pytest.fail(f"{REQUESTS} requests through a cache growing to ~120k tokens were "
                        f"stopped after {exc.seconds:.2f} CPU seconds, past 1.5 x {LIMIT:g} "
                        f"times the reference's {ref:.3f} s: a lookup must cost O(length of "
                        "the prompt), not a walk over the tree, the root's children or the pool")
        if len(hits) < REQUESTS:
            pytest.fail(f"after {1.5 * bound:.2f} CPU seconds ({1.5 * LIMIT:g} times the "
                        f"reference's) only {len(hits)} of {REQUESTS} requests were served: a "
                        "lookup must cost O(length of the prompt)")
        if used <= bound:
            return
        notes.append(f"{used:.3f} CPU seconds, {used / ref:.1f} times the reference's "
                     f"{ref:.3f} s")
    pytest.fail(f"{REQUESTS} acquire/extend/release requests through a cache growing to "
                f"~120k tokens: {'; '.join(notes)} (limit {LIMIT:g}x): a lookup must cost "
                "O(length of the prompt), not a walk over the tree or the pool")
