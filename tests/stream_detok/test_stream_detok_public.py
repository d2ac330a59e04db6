"""Public tests for stream_detok: the prompt's examples and the basic behaviours.

Run: nox -s kata -- stream_detok
"""

import pytest

from graders.impl import kata_impl
from tests.stream_detok import helpers, timing
from tests.stream_detok.vocab import corpus, greedy_encode, load_vocab

sd = kata_impl("stream_detok")

# The prompt's example vocabulary.
VOCAB = [b"Hello", b" wor", b"ld", b"<", b"/s", b">", b"\xe2\x82", b"\xac", b"!"]


def pushes(d, groups):
    return [d.push(g) for g in groups]


@pytest.mark.rubric("stream_equals_whole")
def test_prompt_example_stream():
    """Rules: The whole-output reference; Hold back as little as possible; After a stop"""
    d = sd.StreamDetokenizer(VOCAB, ["</s>"])
    got = pushes(d, [[0], [1, 2], [6], [7], [3], [4], [5]])
    assert got == ["Hello", " world", "", "€", "", "", ""], (
        f"pushes [0], [1, 2], [6], [7], [3], [4], [5] with stop ['</s>'] returned {got}")
    assert d.stopped and d.matched_stop == "</s>", (d.stopped, d.matched_stop)
    assert d.push([8]) == "", "nothing may be sent after a stop"
    assert d.finish() == ""


@pytest.mark.rubric("stream_equals_whole")
def test_finish_flushes_held_text_and_dangling_bytes():
    """Rule: The whole-output reference"""
    d = sd.StreamDetokenizer(VOCAB, ["</s>"])
    got = pushes(d, [[0, 3], [8], [6]])
    assert got == ["Hello", "<!", ""], f"pushes [0, 3], [8], [6] returned {got}"
    assert d.finish() == "\ufffd", (
        "at finish the lead bytes E2 82 of an unfinished euro sign decode to one U+FFFD, "
        "as bytes.decode(errors='replace') makes them")
    d = sd.StreamDetokenizer(VOCAB, ["</s>"])
    assert d.push([0, 3, 4]) == "Hello"
    assert d.finish() == "</s", "a stop that never completed is sent at finish"
    assert not d.stopped and d.matched_stop is None


@pytest.mark.rubric("stream_equals_whole")
def test_any_grouping_gives_the_whole_output():
    """Rule: The whole-output reference"""
    ids = [0, 1, 2, 6, 7, 8, 3, 4, 8, 3, 4, 5, 0]
    want = "Hello world€!</s!"
    for size in (1, 2, 3, len(ids)):
        groups = [ids[i:i + size] for i in range(0, len(ids), size)]
        trace = helpers.run(sd, VOCAB, groups, ["</s>"])
        assert trace.output == want, (
            f"pushing {groups}: got {trace.output!r}, expected {want!r}")


@pytest.mark.rubric("utf8_incremental")
def test_euro_sign_split_over_two_tokens():
    d = sd.StreamDetokenizer([b"\xe2\x82", b"\xac", b"5"])
    assert d.push([2, 0]) == "5", "the digit is complete, the euro sign's first two bytes are not"
    assert d.push([1]) == "€"
    assert d.finish() == ""


@pytest.mark.rubric("utf8_incremental")
def test_emoji_one_byte_per_token():
    emoji = "🙂".encode()  # F0 9F 99 82
    vocab = [bytes([b]) for b in emoji]
    d = sd.StreamDetokenizer(vocab)
    got = [d.push([i]) for i in range(4)]
    assert got == ["", "", "", "🙂"], f"four one-byte tokens of 🙂 returned {got}"


@pytest.mark.rubric("utf8_incremental")
def test_invalid_bytes_become_replacement_characters_at_once():
    d = sd.StreamDetokenizer([b"a", b"\xff", b"\x80", b"b"])
    assert d.push([0, 1]) == "a\ufffd", "FF can never start a character: U+FFFD right away"
    assert d.push([2, 3]) == "\ufffdb"


@pytest.mark.rubric("utf8_incremental")
def test_shipped_bpe_vocabulary_streams_the_corpus():
    vocab = load_vocab()
    text = corpus()[:1500]
    ids = greedy_encode(text)
    trace = helpers.run(sd, vocab, [[i] for i in ids])
    assert trace.output == text, "the corpus must come back unchanged"
    for k, step in enumerate(trace.steps):
        want = helpers.decode_so_far(step.data).std
        assert step.sent == want, (
            f"after token #{k} ({vocab[ids[k]]!r}) the stream sent {step.sent[-30:]!r} (last "
            f"30 chars), expected every complete character: ...{want[-30:]!r}")


@pytest.mark.rubric("stop_across_tokens")
def test_stop_string_in_three_tokens_is_dropped():
    d = sd.StreamDetokenizer(VOCAB, ["</s>"])
    out = d.push([0]) + d.push([3]) + d.push([4]) + d.push([5, 8]) + d.finish()
    assert out == "Hello", f"'</s>' arrived as '<', '/s', '>': expected 'Hello', got {out!r}"
    assert d.stopped and d.matched_stop == "</s>"


@pytest.mark.rubric("stop_across_tokens")
def test_stop_with_multibyte_characters_split_across_tokens():
    stop = "€€"
    data = ("price: 5" + stop + " tail").encode()
    vocab = [bytes([b]) for b in data]
    trace = helpers.run(sd, vocab, [[i] for i in range(len(data))], [stop])
    assert trace.output == "price: 5", f"got {trace.output!r}"


@pytest.mark.rubric("minimal_holdback")
def test_only_a_possible_stop_start_is_held():
    """Rule: Hold back as little as possible"""
    d = sd.StreamDetokenizer(VOCAB, ["</s>"])
    assert d.push([0, 3]) == "Hello", "'<' may begin '</s>': hold it, send the rest"
    assert d.push([8]) == "<!", "'<!' cannot begin '</s>' any more: send it at once"


@pytest.mark.rubric("minimal_holdback")
def test_no_fixed_window_holdback():
    """Rule: Hold back as little as possible"""
    d = sd.StreamDetokenizer([b"abc", b"de"], ["\n\nUser:"])
    assert d.push([0]) == "abc", (
        "nothing in 'abc' can begin the stop '\\n\\nUser:': hold back nothing "
        "(a fixed window of len(stop) - 1 characters is not minimal)")


@pytest.mark.rubric("minimal_holdback")
def test_include_stop_holds_nothing_back():
    """Rule: Hold back as little as possible"""
    d = sd.StreamDetokenizer(VOCAB, ["</s>"], include_stop=True)
    assert d.push([0, 3]) == "Hello<", "with include_stop=True the stop is sent anyway"


@pytest.mark.rubric("earliest_stop")
def test_earliest_completion_wins_over_list_order():
    d = sd.StreamDetokenizer([b"hello world"], ["world", "lo"])
    assert d.push([0]) == "hel", "'lo' completes at index 5, before 'world' (11)"
    assert d.matched_stop == "lo"


@pytest.mark.rubric("earliest_stop")
def test_equal_end_longer_stop_wins():
    d = sd.StreamDetokenizer([b"xabc"], ["bc", "abc"])
    assert d.push([0]) == "x", "'bc' and 'abc' end together; 'abc' starts first"
    assert d.matched_stop == "abc"


@pytest.mark.rubric("earliest_stop")
def test_include_stop_keeps_the_stop():
    d = sd.StreamDetokenizer(VOCAB, ["</s>"], include_stop=True)
    out = d.push([0, 3, 4, 5, 8]) + d.finish()
    assert out == "Hello</s>", f"got {out!r}"
    assert d.matched_stop == "</s>"


@pytest.mark.rubric("errors")
def test_empty_stop_string_is_rejected():
    """Rule: Errors"""
    with pytest.raises(ValueError):
        sd.StreamDetokenizer(VOCAB, ["</s>", ""])


@pytest.mark.rubric("errors")
@pytest.mark.parametrize("bad", [9, -1, 100])
def test_bad_token_id_raises_and_changes_nothing(bad):
    """Rule: Errors"""
    d = sd.StreamDetokenizer(VOCAB, ["</s>"])
    out = d.push([0, 6])
    with pytest.raises(ValueError):
        d.push([7, bad])
    out += d.push([7]) + d.finish()
    assert out == "Hello€", (
        f"push([7, {bad}]) raised, so it must have changed nothing: pushing [0, 6], then [7] "
        f"must still give 'Hello€', got {out!r}")


@pytest.mark.rubric("errors")
def test_push_after_finish_raises():
    """Rule: Errors"""
    d = sd.StreamDetokenizer(VOCAB)
    d.push([0])
    d.finish()
    with pytest.raises(RuntimeError):
        d.push([1])
    with pytest.raises(RuntimeError):
        d.finish()


@pytest.mark.rubric("linear_time")
def test_fifty_thousand_tokens_stream_in_linear_time():
    """Rule: Linear time"""
    ok, what = timing.growth()
    assert ok, (f"pushing 50k tokens one at a time must take at most {timing.LIMIT:g} times "
                f"the reference's CPU time on the same stream (linear time): {what}")
