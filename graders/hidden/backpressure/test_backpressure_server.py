"""Hidden tests for backpressure's asyncio server, over real loopback sockets.

Each test plays a scenario with ``serve`` (tests/backpressure/helpers.py): the candidate's
StreamServer runs next to the implementation in its own thread and event loop (so a stuck
server ends the scenario instead of hanging it); the clients (blocking sockets on the
server's 127.0.0.1, under deadlines) and the engine's records live in this process, also
when grading isolated. Every judgement is made here. Traffic is bounded:
the slow client's generation is sized from the kernel's socket buffer limit; the other
generations are a few hundred kB at most.
"""

from __future__ import annotations

import pytest

from graders.impl import kata_impl
from graders.support.backpressure import SLOW_RCVBUF, kernel_buffer_bound
from tests.backpressure.helpers import Plan, cancels_of, serve

bp = kata_impl("backpressure")

BUDGET = 64 * 1024
FAST_DEADLINE = 5.0     # seconds; a correct server needs well under one
CANCEL_DEADLINE = 5.0


def _stream_started(report: dict, name: str) -> str:
    assert report["held"] and report["sid"] is not None, (
        f"the server never called engine.add for client {name!r}")
    return str(report["sid"])


def _stopped(obs: dict) -> None:
    assert obs["stop_error"] is None, f"StreamServer.stop failed: {obs['stop_error']}"


@pytest.mark.rubric("slow_client_isolation")
def test_client_that_stops_reading_is_cancelled_while_fast_clients_finish():
    """Rules: The engine loop never waits on a client; One engine loop; Late tokens"""
    slow_tokens = (2 * kernel_buffer_bound() + 8 * BUDGET) // 16384 + 1
    slow_prompt = f"slow {slow_tokens} 16384".encode()
    fast_prompts = {
        "fast0": b"fast0 300 100",
        "fast1": b"fast1 200 257",
        "fast2": b"fast2 500 33",
        # more than the budget in all, but read at once: must not be cancelled
        "fast3": b"fast3 400 1024",
    }
    plan = Plan()
    plan.add("connect", "slow", slow_prompt, SLOW_RCVBUF)
    started = plan.add("await_stream", "slow", 3.0)
    for name, p in fast_prompts.items():
        plan.add("connect", name, p, None)
    fast_read = plan.add("read", list(fast_prompts), FAST_DEADLINE, None)
    for name in fast_prompts:
        plan.add("close", name)
    cancel = plan.add("await_cancel", "slow", CANCEL_DEADLINE)
    at_cancel = plan.add("records")
    # its connection is closed: reading drains what the kernel held, then EOF/reset
    slow_read = plan.add("read", ["slow"], 5.0, None)
    plan.add("close", "slow")
    plan.add("sleep", 0.05)  # late output and the connection_lost of the slow client
    final = plan.add("records")
    obs = serve(bp, BUDGET, plan.steps)
    steps = obs["steps"]

    slow_sid = _stream_started(steps[started], "slow")
    got, closed = steps[fast_read]["got"], set(steps[fast_read]["closed"])
    elapsed = steps[fast_read]["seconds"]
    for name, p in fast_prompts.items():
        want = obs["want"][name]
        assert got[name] == want and name in closed, (
            f"fast client {name} ({p!r}) must receive all {len(want)} bytes and then "
            f"see the connection closed while a client that never reads is connected; "
            f"after {elapsed:.1f} s it had {len(got[name])} bytes "
            f"({'closed' if name in closed else 'still open'}). Does the engine loop "
            "wait on the slow client?")
    records = steps[at_cancel]
    assert steps[cancel]["held"], (
        f"the slow client never read its {slow_tokens * 16384} bytes; with a budget of "
        f"{BUDGET} its generation must be cancelled, yet after "
        f"{records['emitted'].get(slow_sid, 0)} bytes it was not. Is the pending write the "
        "transport's write buffer?")
    assert slow_sid not in records["finished"], "the slow generation ran to the end"
    assert "slow" in steps[slow_read]["closed"], (
        "the server must close the slow client's connection")
    assert obs["want"]["slow"].startswith(steps[slow_read]["got"]["slow"]), (
        "what the slow client received must be a prefix of its output")
    records = steps[final]
    assert cancels_of(records, "slow") == 1, (
        f"the slow stream must be cancelled exactly once, got {cancels_of(records, 'slow')}")
    for name in fast_prompts:
        assert not cancels_of(records, name), (
            f"fast client {name} (stream {records['sids'].get(name)}) was cancelled")
    _stopped(obs)


@pytest.mark.rubric("slow_client_isolation")
def test_disconnect_in_the_middle_cancels_once():
    """Rules: Disconnects and closes; Late tokens"""
    big_budget = 256 << 20   # overflow cannot be what cancels it
    plan = Plan()
    plan.add("connect", "other", b"other 300 64", None)
    plan.add("connect", "gone", b"gone 200000 64", None)   # 12.8 MB if nobody cancels it
    started = plan.add("await_stream", "gone", 3.0)
    first = plan.add("read", ["gone"], 3.0, {"gone": 4096})
    plan.add("close", "gone")
    cancel = plan.add("await_cancel", "gone", CANCEL_DEADLINE)
    at_cancel = plan.add("records")
    other_read = plan.add("read", ["other"], FAST_DEADLINE, None)
    plan.add("close", "other")
    plan.add("sleep", 0.05)
    final = plan.add("records")
    obs = serve(bp, big_budget, plan.steps)
    steps = obs["steps"]

    sid = _stream_started(steps[started], "gone")
    assert len(steps[first]["got"]["gone"]) >= 4096, "the stream should have started"
    records = steps[at_cancel]
    assert steps[cancel]["held"] and sid not in records["finished"], (
        "a client that closes its connection in the middle of a stream must get its "
        f"generation cancelled; {steps[cancel]['seconds']:.1f} s later it was not "
        f"({records['emitted'].get(sid, 0)} bytes generated)")
    got, closed = steps[other_read]["got"], steps[other_read]["closed"]
    assert got["other"] == obs["want"]["other"] and "other" in closed, (
        "the other client must still receive its whole output")
    records = steps[final]
    assert cancels_of(records, "gone") == 1, (
        f"the disconnect must cancel exactly once, got {cancels_of(records, 'gone')}")
    assert not cancels_of(records, "other"), "the other client was cancelled"
    _stopped(obs)


@pytest.mark.rubric("slow_client_isolation")
def test_half_close_is_a_disconnect():
    """Rule: Disconnects and closes"""
    # The prompt: a client that shuts down only its sending side (EOF on the server's read
    # side) has disconnected, like one that closes.
    big_budget = 256 << 20   # overflow cannot be what cancels it
    plan = Plan()
    plan.add("connect", "half", b"half 200000 64", None)   # 12.8 MB if nobody cancels it
    started = plan.add("await_stream", "half", 3.0)
    first = plan.add("read", ["half"], 3.0, {"half": 4096})
    plan.add("half_close", "half")
    cancel = plan.add("await_cancel", "half", CANCEL_DEADLINE)
    plan.add("close", "half")
    plan.add("sleep", 0.05)
    final = plan.add("records")
    obs = serve(bp, big_budget, plan.steps)
    steps = obs["steps"]

    sid = _stream_started(steps[started], "half")
    assert len(steps[first]["got"]["half"]) >= 4096, "the stream should have started"
    assert steps[cancel]["held"], (
        "a client that shuts down its sending side (a half-close: the server reads EOF) "
        "has disconnected and its generation must be cancelled; "
        f"{steps[cancel]['seconds']:.1f} s later it was not")
    records = steps[final]
    assert sid not in records["finished"], "the half-closed client's generation ran to the end"
    assert cancels_of(records, "half") == 1, (
        f"the half-close must cancel exactly once, got {cancels_of(records, 'half')}")
    _stopped(obs)


@pytest.mark.rubric("slow_client_isolation")
def test_disconnect_after_the_generation_finished_does_not_cancel():
    """Rule: Disconnects and closes"""
    total = 2 * kernel_buffer_bound()
    tokens = total // 65536 + 1
    prompt = f"done {tokens} 65536".encode()
    plan = Plan()
    plan.add("connect", "done", prompt, SLOW_RCVBUF)
    started = plan.add("await_stream", "done", 3.0)
    finished = plan.add("await_finished", "done", 5.0)
    plan.add("close", "done")   # most of the output is still buffered in the server
    plan.add("sleep", 0.2)
    final = plan.add("records")
    obs = serve(bp, 4 * total, plan.steps)
    steps = obs["steps"]

    _stream_started(steps[started], "done")
    assert steps[finished]["held"], "the generation should finish: its output fits the budget"
    n = cancels_of(steps[final], "done")
    assert not n, (
        "the generation had finished when the client left with its output still draining: "
        f"nothing to cancel, yet engine.cancel was called {n} time(s)")
    _stopped(obs)


@pytest.mark.rubric("slow_client_isolation")
def test_many_clients_in_parallel_get_exact_output():
    """Rules: One line, one stream; One engine loop; Disconnects and closes"""
    prompts = {f"c{i}": f"c{i} {50 + 37 * i} {1 + (i * 29) % 300}".encode() for i in range(12)}
    plan = Plan()
    for name, p in prompts.items():
        plan.add("connect", name, p, None)
    read = plan.add("read", list(prompts), FAST_DEADLINE, None)
    for name in prompts:
        plan.add("close", name)
    final = plan.add("records")
    obs = serve(bp, 4096, plan.steps)
    steps = obs["steps"]

    got, closed = steps[read]["got"], steps[read]["closed"]
    for name, p in prompts.items():
        want = obs["want"][name]
        assert got[name] == want and name in closed, (
            f"client {name} ({p!r}) got {len(got[name])} of {len(want)} bytes "
            f"({'closed' if name in closed else 'not closed'}); first difference at byte "
            f"{next((i for i, (x, y) in enumerate(zip(got[name], want)) if x != y), min(len(got[name]), len(want)))}")
    cancels = steps[final]["cancels"]
    assert not any(cancels.values()), f"nothing should be cancelled, got {cancels}"
    _stopped(obs)
