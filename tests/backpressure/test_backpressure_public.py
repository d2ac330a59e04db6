"""Public tests for backpressure: the prompt's example and the basic behaviours.

Run: nox -s kata -- backpressure
"""

import pytest

from graders.impl import isolated, kata_impl
from graders.support import backpressure as support
from tests.backpressure.helpers import Plan, measure, memory_over_rounds, serve

bp = kata_impl("backpressure")


def acts(actions):
    """Actions as a sorted list (their order inside one answer is free)."""
    return sorted(tuple(a) for a in actions)


CANCEL_CLOSE = [("cancel", "a"), ("close", "a")]
CLOSE = [("close", "a")]


@pytest.mark.rubric("budget_includes_pending")
def test_readme_example():
    """Rules: The budget includes the pending write; One chunk pending at a time; Overflow"""
    b = bp.OutputBuffers(10)
    b.open("a")
    assert acts(b.on_output("a", b"hello")) == []
    assert b.next_write("a", 3) == b"hel"
    assert b.buffered("a") == 5, "the pending chunk b'hel' still counts: queued 2 + pending 3"
    assert b.next_write("a", 3) == b"", "a chunk is pending: next_write must return b''"
    assert acts(b.write_done("a", 1)) == []
    assert b.buffered("a") == 4, "after acknowledging 1 byte: queued 2 + pending 2"
    assert acts(b.on_output("a", b"world")) == [], "2 + 2 + 5 = 9 fits in the budget of 10"
    assert acts(b.on_output("a", b"!!")) == CANCEL_CLOSE, "9 + 2 > 10 must overflow"
    assert acts(b.on_output("a", b"late")) == [], "late output for an ended stream is dropped"
    assert acts(b.on_disconnect("a")) == [], "the stream was already cancelled once"
    assert b.buffered("a") == 0


@pytest.mark.rubric("budget_includes_pending")
def test_output_that_fills_the_budget_exactly_does_not_overflow():
    """Rule: The budget includes the pending write"""
    b = bp.OutputBuffers(8)
    b.open("a")
    assert acts(b.on_output("a", b"12345")) == []
    assert acts(b.on_output("a", b"678")) == [], "5 + 3 == 8 reaches the budget exactly: no overflow"
    assert b.buffered("a") == 8
    assert acts(b.on_output("a", b"9")) == CANCEL_CLOSE, "8 + 1 > 8 must overflow"


@pytest.mark.rubric("budget_includes_pending")
def test_pending_write_counts_against_the_budget():
    """Rule: The budget includes the pending write"""
    b = bp.OutputBuffers(8)
    b.open("a")
    b.on_output("a", b"abcdef")
    assert b.next_write("a", 100) == b"abcdef"
    assert b.buffered("a") == 6, "handed to the socket but not acknowledged: still buffered"
    assert acts(b.on_output("a", b"xyz")) == CANCEL_CLOSE, (
        "queued 0 + pending 6 + 3 > 8: the pending write is part of the budget")


@pytest.mark.rubric("budget_includes_pending")
def test_acknowledged_bytes_free_the_budget():
    b = bp.OutputBuffers(8)
    b.open("a")
    b.on_output("a", b"abcdef")
    b.next_write("a", 100)
    b.write_done("a", 6)
    assert b.buffered("a") == 0
    assert acts(b.on_output("a", b"12345678")) == [], "all acknowledged: the whole budget is free"


@pytest.mark.rubric("budget_includes_pending")
def test_bad_input_raises_value_error():
    """Rule: Bad input"""
    for budget in (0, -1, 2.5, "10"):
        with pytest.raises(ValueError):
            bp.OutputBuffers(budget)
    b = bp.OutputBuffers(8)
    b.open("a")
    with pytest.raises(ValueError):
        b.open("a")
    b.on_output("a", b"abc")
    with pytest.raises(ValueError):
        b.next_write("a", 0)
    assert b.next_write("a", 2) == b"ab"
    with pytest.raises(ValueError):
        b.write_done("a", 3)
    with pytest.raises(ValueError):
        b.write_done("a", -1)
    assert b.buffered("a") == 3, "failed calls must change nothing"


@pytest.mark.rubric("overflow_cancels")
def test_output_larger_than_the_budget_overflows_at_once():
    """Rule: Overflow"""
    b = bp.OutputBuffers(4)
    b.open("a")
    assert acts(b.on_output("a", b"12345")) == CANCEL_CLOSE
    assert b.buffered("a") == 0, "an overflowed stream holds nothing"
    assert b.next_write("a", 10) == b"", "an overflowed stream has nothing to send"


@pytest.mark.rubric("overflow_cancels")
def test_overflow_touches_only_its_own_stream():
    b = bp.OutputBuffers(4)
    b.open("a")
    b.open("b")
    b.on_output("b", b"xy")
    assert acts(b.on_output("a", b"12345")) == CANCEL_CLOSE
    assert b.buffered("b") == 2 and b.next_write("b", 10) == b"xy"


@pytest.mark.rubric("cancel_once")
def test_disconnect_cancels_an_unfinished_stream():
    """Rule: Exactly one cancel per stream, ever"""
    b = bp.OutputBuffers(16)
    b.open("a")
    b.on_output("a", b"abc")
    assert acts(b.on_disconnect("a")) == CANCEL_CLOSE
    assert acts(b.on_disconnect("a")) == [], "a second disconnect must not cancel again"


@pytest.mark.rubric("cancel_once")
def test_disconnect_while_a_finished_stream_drains_does_not_cancel():
    """Rule: Exactly one cancel per stream, ever"""
    b = bp.OutputBuffers(16)
    b.open("a")
    b.on_output("a", b"abc")
    assert acts(b.on_finish("a")) == []
    assert acts(b.on_disconnect("a")) == CLOSE, (
        "the generation already finished: nothing to cancel, only the connection to close")


@pytest.mark.rubric("late_output")
def test_late_output_and_finish_after_a_disconnect_are_dropped():
    """Rule: Late events are dropped silently"""
    b = bp.OutputBuffers(16)
    b.open("a")
    b.on_disconnect("a")
    assert acts(b.on_output("a", b"late")) == []
    assert acts(b.on_finish("a")) == []
    assert b.buffered("a") == 0 and b.next_write("a", 4) == b""


@pytest.mark.rubric("ordered_delivery")
def test_bytes_come_out_in_order_across_chunks():
    """Rule: In order, nothing lost, nothing duplicated"""
    b = bp.OutputBuffers(100)
    b.open("a")
    for part in (b"The ", b"quick ", b"brown ", b"fox"):
        b.on_output("a", part)
    out = b""
    while True:
        chunk = b.next_write("a", 4)
        if not chunk:
            break
        assert 1 <= len(chunk) <= 4, f"next_write('a', 4) returned {chunk!r}"
        out += chunk
        b.write_done("a", len(chunk))
    assert out == b"The quick brown fox"


@pytest.mark.rubric("ordered_delivery")
def test_partial_acknowledgement_does_not_resend():
    """Rules: Partial acknowledgements; One chunk pending at a time"""
    b = bp.OutputBuffers(100)
    b.open("a")
    b.on_output("a", b"0123456789")
    assert b.next_write("a", 10) == b"0123456789"
    b.write_done("a", 4)
    assert b.next_write("a", 10) == b"", "the socket still holds b'456789': nothing new to send"
    b.write_done("a", 6)
    b.on_output("a", b"AB")
    assert b.next_write("a", 10) == b"AB", "after the full acknowledgement the next bytes follow"


@pytest.mark.rubric("close_after_drain")
def test_finished_stream_closes_when_the_last_byte_is_acknowledged():
    """Rule: Close after drain"""
    b = bp.OutputBuffers(100)
    b.open("a")
    b.on_output("a", b"abcdef")
    assert acts(b.on_finish("a")) == [], "6 bytes are still queued: do not close yet"
    assert b.next_write("a", 10) == b"abcdef"
    assert acts(b.write_done("a", 5)) == [], "1 byte is still pending: do not close yet"
    assert acts(b.write_done("a", 1)) == CLOSE
    assert b.buffered("a") == 0


@pytest.mark.rubric("close_after_drain")
def test_finish_of_a_drained_stream_closes_at_once():
    """Rule: Close after drain"""
    b = bp.OutputBuffers(100)
    b.open("a")
    assert acts(b.on_finish("a")) == CLOSE


@pytest.mark.rubric("late_output")
def test_ended_stream_id_can_be_opened_again():
    """Rule: Every stream ends with exactly one close"""
    b = bp.OutputBuffers(10)
    b.open("a")
    b.on_output("a", b"old")
    b.on_disconnect("a")
    b.open("a")
    assert b.buffered("a") == 0, "a reopened id is a new, empty stream"
    b.on_output("a", b"new")
    assert b.next_write("a", 10) == b"new"


@pytest.mark.rubric("slow_client_isolation")
def test_server_streams_to_two_clients():
    """Rules: One line, one stream; One engine loop; Disconnects and closes"""
    prompts = {"alice": b"alice 50 32", "bob": b"bob 80 17"}
    # The scenario (graders/support/backpressure.py: play_scenario) starts StreamServer on
    # 127.0.0.1, plays these steps as the clients and reports what they saw.
    plan = Plan()
    for name, p in prompts.items():
        plan.add("connect", name, p, None)
    read = plan.add("read", list(prompts), 5.0, None)
    for name in prompts:
        plan.add("close", name)
    obs = serve(bp, 4096, plan.steps)
    got, closed = obs["steps"][read]["got"], obs["steps"][read]["closed"]
    for name, p in prompts.items():
        want = obs["want"][name]
        assert got[name] == want, (
            f"client {name} (prompt {p!r}) received {len(got[name])} bytes, expected all "
            f"{len(want)}; first 60 received: {got[name][:60]!r}")
        assert name in closed, f"the server must close {name}'s connection after the last byte"
    cancels = obs["after_stop"]["cancels"]
    assert not any(cancels.values()), f"no generation should be cancelled, got {cancels}"
    assert obs["stop_error"] is None, f"StreamServer.stop failed: {obs['stop_error']}"


@pytest.mark.rubric("no_leak")
def test_closed_streams_leave_nothing_behind():
    """Rule: Every stream ends with exactly one close"""
    b = bp.OutputBuffers(8)
    if not isolated():
        # measured next to your implementation: deep size before and after 2000 ended streams
        before, after = measure(support.disconnect_sizes, b, 2000)
        assert after <= before + 16384, (
            f"2000 streams that ended left {after - before} bytes behind in the buffers "
            "object: keep nothing for ended streams")
        return
    # graded isolated: the grader reads the worker's memory from outside while rounds of
    # short streams end (tests/backpressure/helpers.py)
    seen = memory_over_rounds(b, 8, support.churn_round, 4, 2500, 16,
                              carried=("{tag}-{rnd}-c{i}", 16, 3))
    assert seen["wrong"] is None, f"the workload got wrong answers: {seen['wrong']}"
    growth = seen["memory"][-1] - seen["memory"][1]
    assert growth <= 512 << 10, (
        f"the worker's memory grew by {growth >> 10} KiB while 7500 more streams ended: "
        "keep nothing for ended streams")
