"""Hidden tests for stream_detok: adversarial properties, exhaustive splits, corner cases."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from graders.hidden.stream_detok import strategies as S
from graders.impl import kata_impl
from tests.stream_detok import helpers, timing
from tests.stream_detok.vocab import TOKENIZER_JSON, corpus, greedy_encode, load_vocab

sd = kata_impl("stream_detok")


def run_case(case: S.Case) -> helpers.Trace:
    return helpers.run(sd, case.vocab, case.groups, case.stops, case.include)


def all_splits(data: bytes):
    """Every way to cut ``data`` into tokens (2 ** (len - 1) of them). Past 64 of them, under
    the project's quicker profiles (its own suite, practice) only an even spread that always
    holds the uncut and the fully cut text; under the grading profile every one."""
    masks = list(itertools.product([False, True], repeat=max(0, len(data) - 1)))
    step = 1 if len(masks) <= 64 else max(1, 150 // settings.default.max_examples)
    for n, mask in enumerate(masks):
        if n % step and n != len(masks) - 1:
            continue
        pieces, start = [], 0
        for k, cut in enumerate(mask, start=1):
            if cut:
                pieces.append(data[start:k])
                start = k
        pieces.append(data[start:])
        vocab = list(dict.fromkeys(pieces))
        yield vocab, [vocab.index(p) for p in pieces]


# -- utf8_incremental ------------------------------------------------------------------

@pytest.mark.rubric("utf8_incremental")
@pytest.mark.parametrize("raw", [
    "é€".encode(), "🙂a".encode(), "a中b".encode(), b"\xe2\x82a\xac", b"\xf0\x9f\x99\xff",
    b"\xed\xa0\x80a", b"\xc3\xc3\xa9", b"\xf4\x90\x80\x80", b"\xe0\x80\xaf",
    b"\xef\xbf\xbd\x80",
], ids=lambda b: b.hex())
def test_every_split_of_tricky_bytes(raw):
    """Rules: The whole-output reference; Hold back as little as possible"""
    want = raw.decode("utf-8", errors="replace")
    for vocab, ids in all_splits(raw):
        trace = helpers.run(sd, vocab, [[i] for i in ids])
        helpers.check_holdback(trace)
        assert trace.output == want, (
            f"bytes {raw!r} cut into tokens {[vocab[i] for i in ids]!r}: got {trace.output!r}, "
            f"the whole decode is {want!r}")


@pytest.mark.rubric("utf8_incremental")
def test_agrees_with_tokenizers_decode_stream():
    """Rule: The whole-output reference"""
    tokenizers = pytest.importorskip(
        "tokenizers", reason="the differential check against tokenizers' DecodeStream needs "
        "the tokenizers library (pip install tokenizers)")
    decoders = pytest.importorskip("tokenizers.decoders")
    if not hasattr(decoders, "DecodeStream"):
        pytest.skip("this tokenizers version has no DecodeStream (added in 0.21)")
    tok = tokenizers.Tokenizer.from_file(str(TOKENIZER_JSON))
    vocab = load_vocab()
    text = corpus()
    # BPE's own encoding of the corpus, and of windows of it cut at odd places
    samples = [text] + [text[i:i + 300] for i in range(0, len(text), 377)]
    for sample in samples:
        ids = tok.encode(sample).ids
        stream = decoders.DecodeStream(skip_special_tokens=False)
        d = sd.StreamDetokenizer(list(vocab))
        theirs = ours = ""
        for k, t in enumerate(ids):
            chunk = stream.step(tok, t)
            theirs += chunk or ""
            ours += d.push([t])
            assert ours.startswith(theirs), (
                f"after token #{k} ({vocab[t]!r}) tokenizers' DecodeStream has produced "
                f"...{theirs[-20:]!r}, this stream only ...{ours[-20:]!r}")
            if chunk is not None:
                assert ours == theirs, (
                    f"after token #{k} ({vocab[t]!r}) DecodeStream has flushed everything "
                    f"(...{theirs[-20:]!r}) but this stream has ...{ours[-20:]!r}")
        ours += d.finish()
        assert ours == tok.decode(ids) == sample


@pytest.mark.rubric("utf8_incremental")
@given(case=S.cases(with_stops=False))
def test_text_without_stops_is_every_complete_character(case):
    """Rules: The whole-output reference; Hold back as little as possible"""
    trace = run_case(case)
    helpers.check_holdback(trace)
    helpers.check_equals_whole(trace)


@pytest.mark.rubric("utf8_incremental")
@given(case=S.bpe_cases(with_stops=False))
def test_random_bpe_ids_decode_like_the_whole_output(case):
    """Rules: The whole-output reference; Hold back as little as possible"""
    trace = run_case(case)
    helpers.check_holdback(trace)
    helpers.check_equals_whole(trace)

# -- stop_across_tokens ----------------------------------------------------------------

@pytest.mark.rubric("stop_across_tokens")
@pytest.mark.parametrize("text,stops", [
    ("ab</s>cd", ["</s>"]),
    ("x€</€>y", ["</€>"]),
    ("aaab", ["aab"]),
    ("ab🙂c", ["b🙂"]),
    ("<<</s", ["</s>", "<<<!"]),
], ids=["ascii", "euro_inside", "repeated_prefix", "emoji", "never_completes"])
def test_every_split_with_a_stop(text, stops):
    """Rule: The whole-output reference"""
    raw = text.encode()
    for include in (False, True):
        for vocab, ids in all_splits(raw):
            for groups in ([[i] for i in ids], [ids[:2], ids[2:]]):
                helpers.check_equals_whole(
                    helpers.run(sd, vocab, groups, stops, include, flags=False))


@pytest.mark.rubric("stop_across_tokens")
def test_stop_longer_than_any_token_across_many_pushes():
    """Rule: The whole-output reference"""
    stop = "\n\nUser:"
    text = "Sure.\n\nUse it\n\nUser: more"
    vocab = [bytes([b]) for b in text.encode()]
    trace = helpers.run(sd, vocab, [[i] for i in range(len(vocab))], [stop])
    helpers.check_equals_whole(trace)


@pytest.mark.rubric("stop_across_tokens")
@given(case=S.cases(plant_stop=True, bad_bytes=False))
def test_planted_stop_split_anywhere_is_cut(case):
    """Rule: The whole-output reference"""
    helpers.check_equals_whole(run_case(case))


@pytest.mark.rubric("stop_across_tokens")
@given(case=S.bpe_cases())
def test_random_bpe_ids_with_stops(case):
    """Rule: The whole-output reference"""
    helpers.check_equals_whole(run_case(case))

# -- minimal_holdback ------------------------------------------------------------------

@pytest.mark.rubric("minimal_holdback")
@pytest.mark.parametrize("text,stops,sent", [
    ("xaa", ["aab"], "x"),                # the longest end that begins a stop, not the shortest
    ("xab", ["abc", "bd"], "x"),          # two stops, the longer held end wins
    ("hello <", ["</s>", "<|im_end|>"], "hello "),
    ("aXY", ["XYZW", "Q"], "a"),
    ("abcde", ["xyz", "ez"], "abcd"),     # only the last character could begin a stop
    ("abc", ["c", "cd"], "ab"),           # a stop completed: cut before it
    ("ab€", ["€x", "b"], "a"),
], ids=["longest", "two_stops", "chat", "middle", "one_char", "completed", "euro"])
def test_hold_back_the_longest_stop_prefix(text, stops, sent):
    """Rule: Hold back as little as possible"""
    d = sd.StreamDetokenizer([text.encode()], stops)
    got = d.push([0])
    assert got == sent, f"text {text!r}, stops {stops}: expected {sent!r} sent, got {got!r}"


@pytest.mark.rubric("minimal_holdback")
@given(case=S.cases())
def test_after_every_push_exactly_the_safe_text_is_sent(case):
    """Rules: Hold back as little as possible; Nothing is taken back"""
    helpers.check_holdback(run_case(case))


@pytest.mark.rubric("minimal_holdback")
@given(case=S.cases(include=True))
def test_include_stop_holds_back_only_unfinished_characters(case):
    """Rule: Hold back as little as possible"""
    helpers.check_holdback(run_case(case))


@pytest.mark.rubric("minimal_holdback")
@given(case=S.bpe_cases())
def test_bpe_holdback(case):
    """Rules: Hold back as little as possible; Nothing is taken back"""
    helpers.check_holdback(run_case(case))

# -- earliest_stop ---------------------------------------------------------------------

@pytest.mark.rubric("earliest_stop")
@pytest.mark.parametrize("text,stops,include,out,matched", [
    ("hello world", ["world", "lo"], False, "hel", "lo"),
    ("abcd", ["abcd", "bc"], False, "a", "bc"),      # earliest end, not earliest start
    ("abcd", ["abcd", "bc"], True, "abc", "bc"),
    ("xabc", ["bc", "abc"], False, "x", "abc"),      # equal end: the earlier start
    ("xabc", ["abc", "bc"], True, "xabc", "abc"),
    ("ab", ["b", "ab", "b"], False, "", "ab"),
    ("a€b€", ["€b€", "b"], False, "a€", "b"),
], ids=["list_order", "end_not_start", "end_not_start_incl", "tie", "tie_incl", "dups",
        "euro"])
def test_which_stop_wins(text, stops, include, out, matched):
    """Rules: The whole-output reference; After a stop"""
    for vocab, ids in ([[text.encode()], [0]], [[bytes([b]) for b in text.encode()], None]):
        ids = ids if ids is not None else list(range(len(vocab)))
        d = sd.StreamDetokenizer(vocab, stops, include)
        got = d.push(ids) + d.finish()
        assert (got, d.matched_stop) == (out, matched), (
            f"text {text!r} pushed at once as tokens {vocab[:4]!r}..., stops {stops}, "
            f"include_stop={include}: expected output {out!r} matching {matched!r}, "
            f"got {got!r} matching {d.matched_stop!r}")
        assert d.stopped


@pytest.mark.rubric("earliest_stop")
@given(case=S.nested_stop_cases())
def test_nested_stops_first_to_complete_wins(case):
    """Rule: The whole-output reference"""
    helpers.check_equals_whole(run_case(case))


@pytest.mark.rubric("earliest_stop")
@given(case=S.cases(plant_stop=True, bad_bytes=False,
                    text=S.texts(max_size=16, chars=["a", "b", "c", "€"])))
def test_first_to_complete_wins_in_any_grouping(case):
    """Rule: The whole-output reference"""
    trace = run_case(case)
    helpers.check_equals_whole(trace)

# -- stream_equals_whole ---------------------------------------------------------------

@pytest.mark.rubric("stream_equals_whole")
def test_stop_completed_by_the_finish_flush():
    """Rules: The whole-output reference; After a stop"""
    d = sd.StreamDetokenizer([b"a", b"\xe2\x82"], ["a\ufffd"])
    assert d.push([0, 1]) == ""
    assert d.finish() == "", "the flushed U+FFFD completes the stop 'a\\ufffd'"
    assert d.matched_stop == "a\ufffd"


@pytest.mark.rubric("stream_equals_whole")
def test_finish_returns_the_held_stop_prefix_and_pending_bytes():
    """Rule: The whole-output reference"""
    d = sd.StreamDetokenizer([b"ok </", b"\xf0\x9f\x99"], ["</s>"])
    first = d.push([0])
    mid = d.push([1])
    rest = d.finish()
    assert first + mid + rest == "ok </\ufffd", (
        f"pushes returned {first!r}, {mid!r}, finish {rest!r}: the held '</' and one U+FFFD "
        "for the unfinished emoji must come out at the latest at finish")


@pytest.mark.rubric("stream_equals_whole")
def test_long_bpe_stream_with_chat_stops():
    """Rule: The whole-output reference"""
    text = corpus()
    ids = greedy_encode(text)
    vocab = load_vocab()
    for stops in (["<|im_end|>"], ["\n\nUser:", "###"], ["</s>", "Assistant: D'"]):
        for include in (False, True):
            groups = [ids[i:i + 3] for i in range(0, len(ids), 3)]
            helpers.check_equals_whole(
                helpers.run(sd, vocab, groups, stops, include, flags=False))


@pytest.mark.rubric("stream_equals_whole")
@given(case=S.cases())
def test_stream_equals_whole_output(case):
    """Rule: The whole-output reference"""
    helpers.check_equals_whole(run_case(case))


@pytest.mark.rubric("stream_equals_whole")
@given(case=S.cases(plant_stop=True, bad_bytes=False), extra=st.lists(st.integers(0, 2), max_size=3))
def test_nothing_after_a_stop(case, extra):
    """Rule: After a stop"""
    d = sd.StreamDetokenizer(case.vocab, case.stops, case.include)
    got = "".join(d.push(g) for g in case.groups)
    assert d.stopped, f"a stop was planted in {case!r}"
    for e in extra:
        after = d.push([e % len(case.vocab)])
        assert after == "", f"push after the stop returned {after!r}; {case!r}"
    tail = d.finish()
    assert tail == "", f"finish after the stop returned {tail!r}; {case!r}"
    want, _ = helpers.reference(case.vocab, case.ids, case.stops, case.include)
    assert got == want, f"got {got!r}, expected {want!r}; {case!r}"


class StreamMachine(RuleBasedStateMachine):
    """Push token groups over a fixed splitting vocabulary; after every step the text sent is
    a prefix of what every continuation must produce, and at the end equals the reference.

    Rules: Nothing is taken back; The whole-output reference
    """

    VOCAB = [b"<", b"/s", b">", b"a", b"</", b"s><", b"\xe2", b"\x82\xac", b"\xe2\x82", b"\xac<",
             b"\xff", b"\xf0\x9f", b"\x99\x82", b"b\xe2"]

    def __init__(self) -> None:
        super().__init__()
        self.stops: list[str] | None = None
        self.d = None
        self.data = b""
        self.sent = ""
        self.ids: list[int] = []

    @precondition(lambda self: self.d is None)
    @rule(stops=st.lists(st.sampled_from(["</s>", "<", "s>", "€<", "a€", "\ufffd", "€€€"]),
                         min_size=0, max_size=3),
          include=st.booleans())
    def start(self, stops, include):
        self.stops, self.include = stops, include
        self.d = sd.StreamDetokenizer(self.VOCAB, stops, include)

    @precondition(lambda self: self.d is not None)
    @rule(ids=st.lists(st.integers(0, len(VOCAB) - 1), max_size=4))
    def push(self, ids):
        self.sent += self.d.push(ids)
        self.ids += ids
        self.data += b"".join(self.VOCAB[i] for i in ids)

    @invariant()
    def sent_is_certain(self):
        if self.d is None:
            return
        b = helpers.bounds(self.data, self.stops, self.include)
        assert b.hi.startswith(self.sent), (
            f"stops {self.stops}, include_stop={self.include}, bytes pushed {self.data!r}: "
            f"sent {self.sent!r}, but only {b.hi!r} is certain")

    def teardown(self):
        if self.d is None:
            return
        self.sent += self.d.finish()
        want, _ = helpers.reference(self.VOCAB, self.ids, self.stops, self.include)
        assert self.sent == want, (
            f"stops {self.stops}, include_stop={self.include}, bytes {self.data!r}: the stream "
            f"gave {self.sent!r}, the whole-output reference is {want!r}")


TestStreamMachine = pytest.mark.rubric("stream_equals_whole")(StreamMachine.TestCase)


# -- errors ----------------------------------------------------------------------------

@pytest.mark.rubric("errors")
@pytest.mark.parametrize("stops", [[""], ["</s>", ""], ["", "a"]])
def test_empty_stop_rejected(stops):
    """Rule: Errors"""
    with pytest.raises(ValueError):
        sd.StreamDetokenizer([b"a"], stops)


@pytest.mark.rubric("errors")
def test_calls_after_finish_raise_even_after_a_stop():
    """Rule: Errors"""
    d = sd.StreamDetokenizer([b"a", b"b"], ["b"])
    assert d.push([0, 1]) == "a"
    assert d.finish() == ""
    with pytest.raises(RuntimeError):
        d.push([0])
    with pytest.raises(RuntimeError):
        d.finish()


@pytest.mark.rubric("errors")
def test_errors_come_first_in_a_fixed_order():
    """Rule 5: push after finish is a RuntimeError whatever its ids; before finish a bad id
    is a ValueError even after a stop (and changes nothing).

    Rule: Errors
    """
    d = sd.StreamDetokenizer([b"a", b"b"], ["b"])
    assert d.push([0, 1]) == "a" and d.stopped
    with pytest.raises(ValueError):
        d.push([2])
    assert d.push([0]) == "" and d.finish() == ""
    with pytest.raises(RuntimeError):
        d.push([2])


@pytest.mark.rubric("errors")
@given(case=S.cases(), where=st.integers(0, 50), bad=st.sampled_from([-1, -2, 0, 10**6]),
       pos=st.integers(0, 5))
def test_bad_push_changes_nothing(case, where, bad, pos):
    """Rule: Errors"""
    bad = len(case.vocab) if bad == 0 else bad
    where = min(where, len(case.groups))
    d = sd.StreamDetokenizer(case.vocab, case.stops, case.include)
    out = "".join(d.push(g) for g in case.groups[:where])
    good = case.groups[where] if where < len(case.groups) else []
    poisoned = list(good)
    poisoned.insert(min(pos, len(poisoned)), bad)
    with pytest.raises(ValueError):
        d.push(poisoned)
    out += "".join(d.push(g) for g in case.groups[where:]) + d.finish()
    # The same implementation without the bad push: only the failed call may differ.
    twin = sd.StreamDetokenizer(case.vocab, case.stops, case.include)
    want = "".join(twin.push(g) for g in case.groups) + twin.finish()
    assert out == want, (
        f"push({poisoned}) raised but changed the stream: got {out!r}, the same pushes "
        f"without it give {want!r}; {case!r}")

# -- linear_time -----------------------------------------------------------------------

@pytest.mark.rubric("linear_time")
def test_linear_time_with_long_stops_and_multi_token_pushes():
    """Rule: Linear time"""
    # the public workload with long stop strings that are often half-matched
    stops = ["<|" + "Use" * 8 + "|>", "\n\n" + "ab" * 10 + "!"]

    ok, what = timing.growth(stops, window=41_000)
    assert ok, (f"with stops {stops!r}, pushing 50k tokens one at a time must take at most "
                f"{timing.LIMIT:g} times the reference's CPU time (linear time): {what}")
