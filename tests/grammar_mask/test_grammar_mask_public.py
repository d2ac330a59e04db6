"""Public tests for grammar_mask: the prompt's examples and the basic behaviours.

Run: nox -s kata -- grammar_mask
"""

import numpy as np
import pytest

from graders.impl import kata_impl
from graders.support.grammar_mask import compile_regex, longest_match
from tests.grammar_mask import helpers

gm = kata_impl("grammar_mask")

# The prompt's example: every single byte (ids 0-255), six longer tokens, EOS (262).
EXAMPLE = [bytes([b]) for b in range(256)] + [b'{"', b'ok', b'":', b' t', b'true', b'}', b"</s>"]
EOS = 262
OK_TABLE, OK_ACCEPTING = compile_regex(r'\{"ok": (true|false)\}')


def names(tokens, mask):
    return [tokens[i] for i in np.flatnonzero(np.asarray(mask))]


def state_after(table, data):
    return helpers.walk(table, 0, data)


@pytest.mark.rubric("mask")
def test_prompt_example_mask():
    """Rule: A token keeps the walk alive"""
    m = gm.GrammarMasker(EXAMPLE, EOS, OK_TABLE, OK_ACCEPTING)
    mask = np.asarray(m.allowed(0))
    assert mask.dtype == bool and mask.shape == (len(EXAMPLE),), (mask.dtype, mask.shape)
    assert names(EXAMPLE, mask) == [b"{", b'{"'], names(EXAMPLE, mask)
    s = state_after(OK_TABLE, b'{"ok": ')
    assert names(EXAMPLE, m.allowed(s)) == [b"f", b"t", b"true"], names(EXAMPLE, m.allowed(s))


@pytest.mark.rubric("mask")
def test_a_token_may_pass_an_accepting_state():
    """Rule: A token keeps the walk alive

    With [0-9]+ the walk accepts after one digit; '12' is still allowed at the start."""
    table, accepting = compile_regex("[0-9]+")
    tokens, eos = helpers.small_vocab([b"12", b"1a", b"123"])
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    got = names(tokens, m.allowed(0))
    assert got == [bytes([c]) for c in b"0123456789"] + [b"12", b"123"], got


@pytest.mark.rubric("mask")
def test_shipped_vocabulary_matches_brute_force():
    """Rule: A token keeps the walk alive"""
    tokens, eos = helpers.shipped_vocab()
    table, accepting = compile_regex(r'\{"name": "[a-z ]*", "n": (0|[1-9][0-9]*)\}')
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    for s in range(len(table)):
        want = helpers.mask(tokens, eos, table, accepting, s)
        got = np.asarray(m.allowed(s))
        bad = np.flatnonzero(got != want)[:5]
        assert not len(bad), (f"state {s}: tokens {[tokens[i] for i in bad]} are "
                              f"{got[bad].tolist()}, the brute force says {want[bad].tolist()}")


@pytest.mark.rubric("mask")
def test_the_mask_is_fresh():
    """Rule: The mask is fresh"""
    m = gm.GrammarMasker(EXAMPLE, EOS, OK_TABLE, OK_ACCEPTING)
    first = np.array(m.allowed(0), copy=True)
    mask = m.allowed(0)
    if mask.flags.writeable:
        mask[:] = True
    assert np.array_equal(np.asarray(m.allowed(0)), first), "changing a returned mask changed the next"


@pytest.mark.rubric("dead_states")
def test_a_token_ending_in_a_dead_state_is_refused():
    """Rule: Live states

    State 2 is a trap: it has transitions (to itself) but never accepts."""
    table = [[-1] * 256 for _ in range(3)]
    accepting = [False, True, False]
    table[0][ord("a")] = 1
    table[0][ord("b")] = 2
    table[2][ord("b")] = 2
    tokens, eos = helpers.small_vocab([b"ab", b"bb"])
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    assert names(tokens, m.allowed(0)) == [b"a"], names(tokens, m.allowed(0))
    assert not np.asarray(m.allowed(2)).any(), "nothing is allowed at a dead state"


@pytest.mark.rubric("eos")
def test_eos_where_the_state_accepts():
    """Rule: EOS where the state accepts"""
    m = gm.GrammarMasker(EXAMPLE, EOS, OK_TABLE, OK_ACCEPTING)
    for s in range(len(OK_TABLE)):
        assert bool(m.allowed(s)[EOS]) == OK_ACCEPTING[s], (s, OK_ACCEPTING[s])
    table, accepting = compile_regex("[0-9]+")
    tokens, eos = helpers.small_vocab([b"12"])
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    one = state_after(table, b"1")
    assert m.allowed(one)[eos] and not m.allowed(0)[eos]
    assert m.allowed(one)[tokens.index(b"12")], "digits may follow an accepting state"


@pytest.mark.rubric("forced")
def test_forced_bytes():
    """Rule: Forced bytes"""
    m = gm.GrammarMasker(EXAMPLE, EOS, OK_TABLE, OK_ACCEPTING)
    assert m.forced_bytes(0) == b'{"ok": '
    assert m.forced_bytes(state_after(OK_TABLE, b'{"ok": t')) == b"rue}"
    assert m.forced_bytes(state_after(OK_TABLE, b'{"ok": true}')) == b"", "accepting: nothing forced"
    table, accepting = compile_regex("ab(c|d)")
    tokens, eos = helpers.small_vocab([])
    assert gm.GrammarMasker(tokens, eos, table, accepting).forced_bytes(0) == b"ab"


@pytest.mark.rubric("forced")
def test_forced_bytes_stop_at_an_accepting_state():
    """Rule: Forced bytes"""
    table, accepting = compile_regex("ab(cd)?")
    tokens, eos = helpers.small_vocab([])
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    assert m.forced_bytes(0) == b"ab", "'ab' is accepted, so 'cd' is not forced"


@pytest.mark.rubric("jump_forward")
def test_prompt_example_jump_forward():
    """Rule: Jump-forward

    From the start, the forced bytes are '{"ok": '; the last one, ' ', is open because the
    token ' t' could still follow, so it is left to the model."""
    m = gm.GrammarMasker(EXAMPLE, EOS, OK_TABLE, OK_ACCEPTING)
    got = m.jump_forward([])
    assert [EXAMPLE[i] for i in got] == [b'{"', b"ok", b'":'], [EXAMPLE[i] for i in got]


@pytest.mark.rubric("jump_forward")
def test_jump_forward_rolls_back_the_last_token():
    """Rule: Jump-forward

    The model wrote ' ' and 't'; 'rue}' is forced. Appending 'r','u','e','}' (or even the
    tokens of 'rue}') would leave the split 't' + 'rue' the tokenizer never makes: roll back
    't' and retokenize 'true}'."""
    m = gm.GrammarMasker(EXAMPLE, EOS, OK_TABLE, OK_ACCEPTING)
    ids = [256, 257, 258, ord(" "), ord("t")]
    got = m.jump_forward(ids)
    assert [EXAMPLE[i] for i in got] == [b'{"', b"ok", b'":', b" ", b"true", b"}"], (
        [EXAMPLE[i] for i in got])


@pytest.mark.rubric("jump_forward")
def test_jump_forward_with_nothing_forced_returns_ids():
    """Rule: Jump-forward"""
    m = gm.GrammarMasker(EXAMPLE, EOS, OK_TABLE, OK_ACCEPTING)
    ids = [256, 257, 258, ord(" ")]
    assert list(m.jump_forward(ids)) == ids, "at a choice (t or f) nothing is forced"


@pytest.mark.rubric("jump_forward")
def test_jump_forward_on_the_shipped_vocabulary():
    """Rule: Jump-forward"""
    tokens, eos = helpers.shipped_vocab()
    table, accepting = compile_regex(r'\{"name": "[a-z ]*", "n": (0|[1-9][0-9]*)\}')
    m = gm.GrammarMasker(tokens, eos, table, accepting)
    for text in [b"", b'{"name": "bob', b'{"name": "bob"', b'{"name": "bob", "n": 1', b'{"na']:
        ids = longest_match(tokens, eos, text)
        want = helpers.jump(tokens, eos, table, accepting, ids)
        got = list(m.jump_forward(ids))
        assert got == want, (f"after {text!r} tokenized as {helpers.describe(tokens, ids)}: "
                             f"got {helpers.describe(tokens, got)}, want "
                             f"{helpers.describe(tokens, want)}")


@pytest.mark.rubric("errors")
def test_bad_input_raises():
    """Rule: Bad input"""
    with pytest.raises((ValueError, TypeError)):
        gm.GrammarMasker(EXAMPLE[1:], EOS - 1, OK_TABLE, OK_ACCEPTING)    # byte 0 missing
    with pytest.raises((ValueError, TypeError)):
        gm.GrammarMasker(EXAMPLE, True, OK_TABLE, OK_ACCEPTING)
    with pytest.raises((ValueError, TypeError)):
        gm.GrammarMasker(EXAMPLE, EOS, [row[:255] for row in OK_TABLE], OK_ACCEPTING)
    with pytest.raises((ValueError, TypeError)):
        gm.GrammarMasker(EXAMPLE, EOS, OK_TABLE, OK_ACCEPTING[:-1])
    m = gm.GrammarMasker(EXAMPLE, EOS, OK_TABLE, OK_ACCEPTING)
    with pytest.raises(ValueError):
        m.allowed(len(OK_TABLE))
    with pytest.raises(ValueError):
        m.forced_bytes(-1)
    with pytest.raises(ValueError):
        m.jump_forward([ord("x")])
    with pytest.raises(ValueError):
        m.jump_forward([EOS])
    assert names(EXAMPLE, m.allowed(0)) == [b"{", b'{"'], "a failed call changed the masker"
