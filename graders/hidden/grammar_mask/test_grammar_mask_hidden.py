"""Hidden tests for grammar_mask: every answer against the brute force of tests/grammar_mask/
helpers.py (a walk of every token, liveness as a fixpoint, the jump-forward rule step by step).

The items are kept apart: `mask` tests use tables whose states are all live and compare the
non-EOS entries only; `dead_states` tests use tables with dead states; `eos` tests compare
the EOS entry only.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from graders.hidden.grammar_mask import strategies as gs
from graders.impl import kata_impl
from graders.support.grammar_mask import compile_regex, longest_match
from tests.grammar_mask import helpers

gm = kata_impl("grammar_mask")


def _compare(m, tokens, eos, table, accepting, *, eos_only=False, skip_eos=True, states=None):
    live = helpers.live_states(table, accepting)
    for s in range(len(table)) if states is None else states:
        got = np.asarray(m.allowed(s), dtype=bool)
        want = helpers.mask(tokens, eos, table, accepting, s, live)
        assert got.shape == want.shape, f"allowed({s}) has shape {got.shape}, want {want.shape}"
        if eos_only:
            assert got[eos] == want[eos], (
                f"state {s} (accepting={accepting[s]}): allowed[eos_id={eos}] is {got[eos]}")
            continue
        idx = np.arange(len(tokens))
        keep = idx != eos if skip_eos else np.ones(len(tokens), dtype=bool)
        bad = idx[keep & (got != want)][:6]
        assert not len(bad), (
            f"table {table_text(table, accepting)}, state {s}: tokens "
            f"{[tokens[i] for i in bad]} are {got[bad].tolist()}, a walk of every token says "
            f"{want[bad].tolist()}")


def table_text(table, accepting):
    rows = []
    for s, row in enumerate(table):
        moves = {chr(b): t for b, t in enumerate(row) if t >= 0 and b < 128}
        rows.append(f"{s}{'*' if accepting[s] else ''}:{moves}")
        if len(rows) > 8:
            rows.append("...")
            break
    return "; ".join(rows)


# ---------------------------------------------------------------- mask

@pytest.mark.rubric("mask")
@given(gs.vocabularies(), gs.tables(all_live=True))
def test_mask_matches_a_walk_of_every_token(vocab, dfa):
    """Rule: A token keeps the walk alive"""
    tokens, eos = vocab
    table, accepting = dfa
    _compare(gm.GrammarMasker(tokens, eos, table, accepting), tokens, eos, table, accepting)


@pytest.mark.rubric("mask")
@given(gs.vocabularies(), gs.regex_patterns)
def test_mask_on_compiled_regexes(vocab, pattern):
    """Rule: A token keeps the walk alive"""
    tokens, eos = vocab
    table, accepting = compile_regex(pattern)
    _compare(gm.GrammarMasker(tokens, eos, table, accepting), tokens, eos, table, accepting)


@pytest.mark.rubric("mask")
def test_tokens_crossing_accepting_states_on_the_shipped_vocabulary():
    """Rule: A token keeps the walk alive

    Digits and spaces: the BPE vocabulary has multi-digit and ' x' tokens that pass an
    accepting state after their first byte."""
    tokens, eos = helpers.shipped_vocab()
    for pattern in ["[0-9]+", "( [a-z]+)+", "(a|ab|abc)(c|,)?", r'"[a-z]*"(, "[a-z]*")*']:
        table, accepting = compile_regex(pattern)
        _compare(gm.GrammarMasker(tokens, eos, table, accepting), tokens, eos, table, accepting)


@pytest.mark.rubric("mask")
def test_queries_in_any_order_and_repeated():
    """Rule: A token keeps the walk alive; The mask is fresh"""
    tokens, eos = helpers.shipped_vocab()
    table, accepting = compile_regex(r'\[("[a-z]+"(, "[a-z]+")*)?\]')
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    order = list(range(len(table))) * 3
    random.Random(3).shuffle(order)
    for s in order:
        got = m.allowed(s)
        want = helpers.mask(tokens, eos, table, accepting, s)
        assert np.array_equal(np.asarray(got, dtype=bool), want), f"state {s}, asked again"
        if isinstance(got, np.ndarray) and got.flags.writeable:
            got[:] = ~got                              # must not change the next answer


# ---------------------------------------------------------------- dead states

@pytest.mark.rubric("dead_states")
@given(gs.vocabularies(), gs.tables(all_live=False))
def test_tokens_ending_in_dead_states_are_refused(vocab, dfa):
    """Rule: Live states; A token keeps the walk alive"""
    tokens, eos = vocab
    table, accepting = dfa
    live = helpers.live_states(table, accepting)
    assume(not all(live))
    _compare(gm.GrammarMasker(tokens, eos, table, accepting), tokens, eos, table, accepting)


@pytest.mark.rubric("dead_states")
def test_a_branch_that_never_closes():
    """Rule: Live states

    State 1 ('a' read) leads only into a loop of states 2-3 that never accepts: 'a' has a
    transition but is refused, and so is every token that starts with it."""
    table = [[-1] * 256 for _ in range(5)]
    accepting = [False, False, False, False, True]
    table[0][ord("a")] = 1
    table[0][ord("b")] = 4
    table[1][ord("c")] = 2
    table[2][ord("c")] = 3
    table[3][ord("c")] = 2
    tokens, eos = helpers.small_vocab([b"ac", b"acc", b"b", b"ba"])
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    got = [tokens[i] for i in np.flatnonzero(np.asarray(m.allowed(0)))]
    assert got == [b"b", b"b"], f"only 'b' (and its duplicate) keeps the walk alive, got {got}"
    for s in (1, 2, 3):
        assert not np.asarray(m.allowed(s)).any(), f"state {s} is dead: nothing is allowed"


# ---------------------------------------------------------------- EOS

@pytest.mark.rubric("eos")
@given(gs.vocabularies(), gs.tables(all_live=False))
def test_eos_exactly_at_accepting_states(vocab, dfa):
    """Rule: EOS where the state accepts"""
    tokens, eos = vocab
    table, accepting = dfa
    _compare(gm.GrammarMasker(tokens, eos, table, accepting), tokens, eos, table, accepting,
             eos_only=True)


@pytest.mark.rubric("eos")
def test_eos_bytes_are_never_walked():
    """Rule: EOS where the state accepts

    The EOS token's bytes spell 'ab', which the grammar would accept: they mean nothing."""
    table, accepting = compile_regex("ab|abab")
    tokens, eos = helpers.small_vocab([])
    tokens[eos] = b"ab"
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    assert not m.allowed(0)[eos], "EOS at a state that does not accept"
    after = helpers.walk(table, 0, b"ab")
    assert m.allowed(after)[eos], "EOS at an accepting state"


# ---------------------------------------------------------------- forced bytes

@pytest.mark.rubric("forced")
@given(gs.vocabularies(max_extra=0), gs.tables(all_live=False))
def test_forced_bytes_on_tables_with_dead_states(vocab, dfa):
    """Rule: Forced bytes; Live states"""
    tokens, eos = vocab
    table, accepting = dfa
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    for s in range(len(table)):
        want = helpers.forced(table, accepting, s)
        got = m.forced_bytes(s)
        assert got == want, f"table {table_text(table, accepting)}: forced_bytes({s}) is {got!r}, want {want!r}"


@pytest.mark.rubric("forced")
@given(gs.regex_patterns)
def test_forced_bytes_on_compiled_regexes(pattern):
    """Rule: Forced bytes"""
    table, accepting = compile_regex(pattern)
    tokens, eos = helpers.small_vocab([])
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    for s in range(len(table)):
        want = helpers.forced(table, accepting, s)
        assert m.forced_bytes(s) == want, f"{pattern!r}: forced_bytes({s}) is {m.forced_bytes(s)!r}, want {want!r}"


@pytest.mark.rubric("forced")
def test_forced_bytes_skip_a_dead_alternative():
    """Rule: Forced bytes

    From the start, 'x' leads to a dead state and 'a' to the only way on: 'a' is forced,
    then 'b' (accepting) ends it."""
    table = [[-1] * 256 for _ in range(4)]
    accepting = [False, False, True, False]
    table[0][ord("a")] = 1
    table[0][ord("x")] = 3
    table[1][ord("b")] = 2
    table[2][ord("c")] = 2
    tokens, eos = helpers.small_vocab([])
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    assert m.forced_bytes(0) == b"ab"
    assert m.forced_bytes(2) == b"", "an accepting state forces nothing"
    assert m.forced_bytes(3) == b"", "a dead state forces nothing"


# ---------------------------------------------------------------- jump-forward

def _random_ids(tokens, eos, table, accepting, rng, steps):
    """A token sequence the grammar allows, drawn token by token from the brute-force mask."""
    ids = []
    state = 0
    live = helpers.live_states(table, accepting)
    for _ in range(steps):
        allowed = [i for i in np.flatnonzero(helpers.mask(tokens, eos, table, accepting, state,
                                                          live)) if i != eos]
        if not allowed:
            break
        t = rng.choice(allowed)
        ids.append(int(t))
        state = helpers.walk(table, state, tokens[t])
    return ids


@pytest.mark.rubric("jump_forward")
@given(gs.vocabularies(max_extra=16), gs.regex_patterns, st.integers(0, 2**32 - 1),
       st.integers(0, 4))
def test_jump_forward_matches_the_rule(vocab, pattern, seed, steps):
    """Rule: Jump-forward; The tokenizer"""
    tokens, eos = vocab
    table, accepting = compile_regex(pattern)
    ids = _random_ids(tokens, eos, table, accepting, random.Random(seed), steps)
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    want = helpers.jump(tokens, eos, table, accepting, ids)
    got = [int(i) for i in m.jump_forward(ids)]
    assert got == want, (f"{pattern!r}, ids {helpers.describe(tokens, ids)}: got "
                         f"{helpers.describe(tokens, got)}, want {helpers.describe(tokens, want)}")


JSONISH = r'\{"(id|ident)": [0-9]+, "tag": "[a-z]*"(, "more": (true|false))?\}'
JSON_TOKENS = [b'{"', b'{"id', b'id', b'ident', b'":', b'": ', b' 1', b'12', b', "', b',',
               b'", "', b'"tag', b'tag', b'": "', b'"}', b'"', b'true', b'tr', b'ue}', b'}',
               b'more', b', "more": ', b'ab', b'a']


@pytest.mark.rubric("jump_forward")
@given(st.integers(0, 2**32 - 1), st.integers(0, 12))
def test_jump_forward_on_a_json_like_grammar(seed, steps):
    """Rule: Jump-forward

    Tokens that merge a quote with a key, a colon with a space, a value with a brace: the
    boundary token usually changes when retokenized, and the last forced token is often open."""
    tokens, eos = helpers.small_vocab(JSON_TOKENS)
    table, accepting = compile_regex(JSONISH)
    ids = _random_ids(tokens, eos, table, accepting, random.Random(seed), steps)
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    want = helpers.jump(tokens, eos, table, accepting, ids)
    got = [int(i) for i in m.jump_forward(ids)]
    assert got == want, (f"ids {helpers.describe(tokens, ids)}: got "
                         f"{helpers.describe(tokens, got)}, want {helpers.describe(tokens, want)}")


@pytest.mark.rubric("jump_forward")
def test_an_open_token_is_judged_by_the_grammar():
    """Rule: Jump-forward

    Forced ':' after 'k'; the token ':x' starts with ':' but 'x' is not allowed after it,
    so ':' is closed and emitted. With ':1' allowed, ':' is open and kept back."""
    table, accepting = compile_regex("k:[0-9]")
    tokens, eos = helpers.small_vocab([b":x"])
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    got = [tokens[i] for i in m.jump_forward([ord("k")])]
    assert got == [b"k", b":"], got
    tokens, eos = helpers.small_vocab([b":1"])
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    got = [tokens[i] for i in m.jump_forward([ord("k")])]
    assert got == [b"k"], f"':' may still become ':1': nothing to jump, got {got}"


@pytest.mark.rubric("jump_forward")
def test_an_open_token_before_the_last():
    """Rule: Jump-forward

    'ab' is forced and retokenizes to 'a', 'b' (there is no token 'ab'), but 'abX' is a token
    and 'X' may follow: the first token 'a' is open (its remaining text 'ab' could still
    become 'abX'), so nothing is kept, although the last token 'b' is closed."""
    table, accepting = compile_regex("ab(X|Y)")
    tokens, eos = helpers.small_vocab([b"abX"])
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    got = [tokens[i] for i in m.jump_forward([])]
    assert got == [], f"'a' could still become 'abX': nothing to jump, got {got}"
    table, accepting = compile_regex("cab(X|Y)")
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    got = [tokens[i] for i in m.jump_forward([ord("c")])]
    assert got == [b"c"], f"'a' could still become 'abX': nothing to jump, got {got}"


@pytest.mark.rubric("jump_forward")
def test_no_gain_returns_the_ids_unchanged():
    """Rule: Jump-forward

    The model wrote 'ab'; 'c' is forced, but 'abc' could still become 'abcd' (allowed), so
    the kept tokens do not reach past 'ab': the ids come back as they were."""
    table, accepting = compile_regex("abc(d|e)?")
    tokens, eos = helpers.small_vocab([b"ab", b"abc", b"abcd"])
    ab = tokens.index(b"ab")
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    assert [int(i) for i in m.jump_forward([ab])] == [ab]
    # at 'a', 'bc' is forced: 'abc' could become 'abcd' as well
    assert [int(i) for i in m.jump_forward([ord("a")])] == [ord("a")]


@pytest.mark.rubric("jump_forward")
def test_the_whole_tail_is_emitted_when_nothing_could_merge():
    """Rule: Jump-forward"""
    table, accepting = compile_regex("abc")
    tokens, eos = helpers.small_vocab([b"ab", b"bc"])
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    got = [tokens[i] for i in m.jump_forward([ord("a")])]
    assert got == [b"ab", b"c"], f"'a' + 'bc' retokenizes to 'ab', 'c': got {got}"
    got = [tokens[i] for i in m.jump_forward([])]
    assert got == [b"ab", b"c"], got


# ---------------------------------------------------------------- errors

def _good():
    table, accepting = compile_regex("a[bc]+")
    tokens, eos = helpers.small_vocab([b"ab", b"bc"])
    return tokens, eos, table, accepting


def _bad_constructions():
    tokens, eos, table, accepting = _good()
    yield "a str token", [t.decode("latin-1") if i == 256 else t for i, t in enumerate(tokens)], eos, table, accepting
    yield "an empty token", tokens[:-1] + [b"", b"<eos>"], eos + 1, table, accepting
    yield "byte 0x41 missing", [b"AA" if t == b"A" else t for t in tokens], eos, table, accepting
    yield "eos_id a bool", tokens, True, table, accepting
    yield "eos_id out of range", tokens, len(tokens), table, accepting
    yield "eos_id negative", tokens, -1, table, accepting
    yield "eos_id a float", tokens, float(eos), table, accepting
    yield "no states", tokens, eos, [], []
    yield "a short row", tokens, eos, [table[0][:255]] + table[1:], accepting
    yield "a long row", tokens, eos, [table[0] + [-1]] + table[1:], accepting
    yield "a target past the last state", tokens, eos, [[len(table)] * 256] + table[1:], accepting
    yield "a target below -1", tokens, eos, [[-2] * 256] + table[1:], accepting
    yield "a bool target", tokens, eos, [[True] + table[0][1:]] + table[1:], accepting
    yield "a float target", tokens, eos, [[0.0] + table[0][1:]] + table[1:], accepting
    yield "too few flags", tokens, eos, table, accepting[:-1]
    yield "an int flag", tokens, eos, table, [1] + accepting[1:]


@pytest.mark.rubric("errors")
@pytest.mark.parametrize("case", range(16))
def test_bad_construction_raises(case):
    """Rule: Bad input"""
    what, *args = list(_bad_constructions())[case]
    with pytest.raises((ValueError, TypeError)):
        gm.GrammarMasker(*args)
        pytest.fail(f"GrammarMasker accepted {what}")


@pytest.mark.rubric("errors")
def test_bad_calls_raise_and_change_nothing():
    """Rule: Bad input"""
    tokens, eos, table, accepting = _good()
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    for bad in (-1, len(table), True, 1.0, "0", None):
        with pytest.raises((ValueError, TypeError)):
            m.allowed(bad)
            pytest.fail(f"allowed({bad!r}) did not raise")
        with pytest.raises((ValueError, TypeError)):
            m.forced_bytes(bad)
            pytest.fail(f"forced_bytes({bad!r}) did not raise")
    a, b = ord("a"), ord("b")
    for bad in ([b], [a, a], [eos], [a, len(tokens)], [a, -1], [True], [a, 1.0], [a, ord("d")]):
        with pytest.raises((ValueError, TypeError)):
            m.jump_forward(bad)
            pytest.fail(f"jump_forward({bad!r}) did not raise")
    for s in range(len(table)):
        assert np.array_equal(np.asarray(m.allowed(s), dtype=bool),
                              helpers.mask(tokens, eos, table, accepting, s)), s
    assert [int(i) for i in m.jump_forward([a, b])] == [a, b]


@pytest.mark.rubric("errors")
def test_a_token_that_kills_the_walk_midway_is_rejected():
    """Rule: Bad input

    'bc' is a token, but after 'a', 'b', 'x' the walk is dead: the ids are not a valid
    output, even though each token but the last was allowed."""
    tokens, eos, table, accepting = _good()
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    with pytest.raises(ValueError):
        m.jump_forward([ord("a"), ord("b"), ord("x")])
    assert [int(i) for i in m.jump_forward([ord("a"), tokens.index(b"bc")])] == \
        [ord("a"), tokens.index(b"bc")]
