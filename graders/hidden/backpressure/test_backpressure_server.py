"""Hidden tests for backpressure's asyncio server, over real loopback sockets.

Each test starts the candidate's StreamServer in its own thread and event loop (so a stuck
server fails a test instead of hanging it), talks to it with blocking sockets on 127.0.0.1,
and stops it. Traffic is bounded: the slow client's generation is sized from the kernel's
socket buffer limit; the other generations are a few hundred kB at most.
"""

from __future__ import annotations

import time

import pytest

from graders.impl import kata_impl
from graders.support.backpressure import FakeEngine, expected_output
from tests.backpressure.helpers import (SLOW_RCVBUF, connect, kernel_buffer_bound,
                                        read_until_closed, running_server, wait_for)

bp = kata_impl("backpressure")

BUDGET = 64 * 1024
FAST_DEADLINE = 5.0     # seconds; a correct server needs well under one
CANCEL_DEADLINE = 5.0


def _sid(engine: FakeEngine, name: str) -> str:
    assert wait_for(lambda: engine.stream_of(name) is not None, 3.0), (
        f"the server never called engine.add for client {name!r}")
    sid = engine.stream_of(name)
    assert sid is not None
    return sid


@pytest.mark.rubric("slow_client_isolation")
def test_client_that_stops_reading_is_cancelled_while_fast_clients_finish():
    engine = FakeEngine()
    slow_tokens = (2 * kernel_buffer_bound() + 8 * BUDGET) // 16384 + 1
    slow_prompt = f"slow {slow_tokens} 16384".encode()
    fast_prompts = {
        "fast0": b"fast0 300 100",
        "fast1": b"fast1 200 257",
        "fast2": b"fast2 500 33",
        # more than the budget in all, but read at once: must not be cancelled
        "fast3": b"fast3 400 1024",
    }
    with running_server(bp, engine, BUDGET) as srv:
        slow = connect(srv.port, slow_prompt, rcvbuf=SLOW_RCVBUF)
        try:
            slow_sid = _sid(engine, "slow")
            fast = {name: connect(srv.port, p) for name, p in fast_prompts.items()}
            try:
                t0 = time.monotonic()
                got, closed = read_until_closed(fast, t0 + FAST_DEADLINE)
                elapsed = time.monotonic() - t0
            finally:
                for s in fast.values():
                    s.close()
            for name, p in fast_prompts.items():
                want = expected_output(p)
                assert got[name] == want and name in closed, (
                    f"fast client {name} ({p!r}) must receive all {len(want)} bytes and then "
                    f"see the connection closed while a client that never reads is connected; "
                    f"after {elapsed:.1f} s it had {len(got[name])} bytes "
                    f"({'closed' if name in closed else 'still open'}). Does the engine loop "
                    "wait on the slow client?")
            cancelled = wait_for(lambda: engine.snapshot()[0].get(slow_sid, 0) >= 1,
                                 CANCEL_DEADLINE)
            cancels, emitted, finished = engine.snapshot()
            assert cancelled, (
                f"the slow client never read its {slow_tokens * 16384} bytes; with a budget of "
                f"{BUDGET} its generation must be cancelled, yet after {emitted.get(slow_sid, 0)} "
                "bytes it was not. Is the pending write the transport's write buffer?")
            assert slow_sid not in finished, "the slow generation ran to the end"
            # its connection is closed: reading drains what the kernel held, then EOF/reset
            got_slow, closed_slow = read_until_closed({"slow": slow}, time.monotonic() + 5.0)
            assert "slow" in closed_slow, "the server must close the slow client's connection"
            assert expected_output(slow_prompt).startswith(got_slow["slow"]), (
                "what the slow client received must be a prefix of its output")
        finally:
            slow.close()
        time.sleep(0.05)  # late output and the connection_lost of the slow client
        cancels, _, _ = engine.snapshot()
    assert cancels.get(slow_sid) == 1, (
        f"the slow stream must be cancelled exactly once, got {cancels.get(slow_sid)}")
    for name in fast_prompts:
        sid = engine.stream_of(name)
        assert not cancels.get(sid), f"fast client {name} (stream {sid}) was cancelled"


@pytest.mark.rubric("slow_client_isolation")
def test_disconnect_in_the_middle_cancels_once():
    engine = FakeEngine()
    big_budget = 256 << 20   # overflow cannot be what cancels it
    with running_server(bp, engine, big_budget) as srv:
        other = connect(srv.port, b"other 300 64")
        gone = connect(srv.port, b"gone 200000 64")   # 12.8 MB if nobody cancels it
        try:
            sid = _sid(engine, "gone")
            got, _ = read_until_closed({"gone": gone}, time.monotonic() + 3.0,
                                       stop_after={"gone": 4096})
            assert len(got["gone"]) >= 4096, "the stream should have started"
        finally:
            gone.close()
        try:
            t0 = time.monotonic()
            cancelled = wait_for(lambda: engine.snapshot()[0].get(sid, 0) >= 1, CANCEL_DEADLINE)
            _, emitted, finished = engine.snapshot()
            assert cancelled and sid not in finished, (
                "a client that closes its connection in the middle of a stream must get its "
                f"generation cancelled; {time.monotonic() - t0:.1f} s later it was not "
                f"({emitted.get(sid, 0)} bytes generated)")
            got, closed = read_until_closed({"other": other}, time.monotonic() + FAST_DEADLINE)
            assert got["other"] == expected_output(b"other 300 64") and "other" in closed, (
                "the other client must still receive its whole output")
        finally:
            other.close()
        time.sleep(0.05)
        cancels, _, _ = engine.snapshot()
    assert cancels.get(sid) == 1, f"the disconnect must cancel exactly once, got {cancels.get(sid)}"
    assert not cancels.get(engine.stream_of("other")), "the other client was cancelled"


@pytest.mark.rubric("slow_client_isolation")
def test_disconnect_after_the_generation_finished_does_not_cancel():
    engine = FakeEngine()
    total = 2 * kernel_buffer_bound()
    tokens = total // 65536 + 1
    prompt = f"done {tokens} 65536".encode()
    with running_server(bp, engine, 4 * total) as srv:
        client = connect(srv.port, prompt, rcvbuf=SLOW_RCVBUF)
        try:
            sid = _sid(engine, "done")
            assert wait_for(lambda: sid in engine.snapshot()[2], 5.0), (
                "the generation should finish: its output fits the budget")
        finally:
            client.close()   # most of the output is still buffered in the server
        time.sleep(0.2)
        cancels, _, _ = engine.snapshot()
    assert not cancels.get(sid), (
        "the generation had finished when the client left with its output still draining: "
        f"nothing to cancel, yet engine.cancel was called {cancels.get(sid)} time(s)")


@pytest.mark.rubric("slow_client_isolation")
def test_many_clients_in_parallel_get_exact_output():
    engine = FakeEngine()
    prompts = {f"c{i}": f"c{i} {50 + 37 * i} {1 + (i * 29) % 300}".encode() for i in range(12)}
    with running_server(bp, engine, 4096) as srv:
        socks = {name: connect(srv.port, p) for name, p in prompts.items()}
        try:
            got, closed = read_until_closed(socks, time.monotonic() + FAST_DEADLINE)
        finally:
            for s in socks.values():
                s.close()
        cancels, _, _ = engine.snapshot()
    for name, p in prompts.items():
        want = expected_output(p)
        assert got[name] == want and name in closed, (
            f"client {name} ({p!r}) got {len(got[name])} of {len(want)} bytes "
            f"({'closed' if name in closed else 'not closed'}); first difference at byte "
            f"{next((i for i, (x, y) in enumerate(zip(got[name], want)) if x != y), min(len(got[name]), len(want)))}")
    assert not any(cancels.values()), f"nothing should be cancelled, got {cancels}"
