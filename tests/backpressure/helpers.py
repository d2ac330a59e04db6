"""Helpers shared by the public and hidden tests of the backpressure kata.

The server scenario: the clients and the engine always live in the test's own process;
only the ``StreamServer`` runs next to the implementation. Under ``nox -s kata``
everything runs in this process. When grading isolated, the server runs inside the
grader's sandboxed worker, the clients are sockets this process creates inside the
worker's network namespace (graders/outside.py), and the engine's state stays here: the
server reaches it over the worker's loopback (``support.EngineHost``). What the clients
receive and what the engine records are observed here, never reported by the worker.

Memory and work (the ``no_leak`` item): in this process they are measured on the object
itself (``support.size_of``, ``time.perf_counter``). When isolated, the worker runs a
workload (a driver of graders/support/backpressure.py) and this process reads the
worker's memory and CPU time from the kernel around it, and checks the workload's answers
against the reference's.
"""

from __future__ import annotations

import importlib
import secrets
import time
from typing import Any

from graders import impl, outside
from graders.measure import memory_bytes
from graders.impl import run_support
from graders.support import backpressure as support

KATA = "backpressure"


def serve(module: Any, budget: int, steps: list[list[Any]]) -> dict[str, Any]:
    """Play a server scenario (see ``support.play_scenario``) against the
    implementation's ``StreamServer``."""
    if not impl.isolated():
        return support.run_server_scenario(module.StreamServer, budget, steps)
    pid, _ = impl.worker_process(KATA)
    socks = outside.sockets_in_netns(pid, support.connects(steps) + 1)
    engine = support.FakeEngine(salt=secrets.token_bytes(16))
    try:
        host = support.EngineHost(engine, socks[0])
    except BaseException:
        for s in socks:
            s.close()
        raise
    try:
        try:
            started = run_support(KATA, support.start_server, module.StreamServer, budget,
                                  host.port)
            if not (isinstance(started, list) and len(started) == 2
                    and type(started[1]) is int and 0 < started[1] < 65536):
                raise TypeError(f"StreamServer.start must return the port (an int), "
                                f"got {started!r}")
        except BaseException:
            for s in socks[1:]:
                s.close()
            raise
        server, port = started

        def stop() -> str | None:
            error = run_support(KATA, support.stop_server, server)
            return None if error is None else str(error)[:2000]

        return support.play_scenario(engine, port, socks[1:], steps, stop)
    finally:
        host.close()


def measure(fn: Any, *args: Any) -> Any:
    """Run the driver ``fn`` of graders/support/backpressure.py next to the implementation
    (arguments: plain data or objects the implementation returned)."""
    return run_support(KATA, fn, *args)


def cancels_of(records: dict[str, Any], name: str) -> int:
    """How many times the engine was asked to cancel client ``name``'s stream."""
    sid = records["sids"].get(name)
    return 0 if sid is None else int(records["cancels"].get(sid, 0))


class Plan:
    """The steps of a server scenario (see ``support.play_scenario``); ``add`` returns the
    index of the step's report."""

    def __init__(self) -> None:
        self.steps: list[list[Any]] = []

    def add(self, *step: Any) -> int:
        self.steps.append(list(step))
        return len(self.steps) - 1


# -- measurements from outside the worker (isolated grading only) --------------------------


def reference() -> Any:
    """The reference implementation (trusted code, run in this process): the answers a
    workload must get, and the baseline its CPU time is compared with. Skipped with the
    reason in a candidate bundle, which does not hold it."""
    impl.require_reference(KATA)
    return importlib.import_module("solutions.backpressure")


def worker_memory() -> int:
    """The worker's resident + swapped memory in bytes, read from /proc."""
    pid, uid = impl.worker_process(KATA)
    return memory_bytes(pid, uid)


def worker_cpu() -> float:
    """The CPU seconds the worker's sandbox has used so far, read from the kernel (its
    cgroup, or /proc where there is none)."""
    return impl.worker_cpu_seconds(KATA)


def memory_over_rounds(buffers: Any, budget: int, driver: Any, rounds: int, *args: Any,
                       carried: tuple[str, int, int] | None = None) -> dict[str, Any]:
    """Run ``driver(buffers, tag, rnd, *args)`` (``churn_round``, ``big_round``) for
    ``rnd`` in ``0..rounds-1`` in the worker, reading the worker's memory before the first
    round and after each one. The same rounds run on a reference ``OutputBuffers(budget)``
    here; ``wrong`` tells the first round whose answers differ (None when all agree).

    ``carried = (pattern, count, held)``: after each round, three streams picked here at
    random among ``pattern.format(tag=tag, rnd=rnd, i=i)`` for ``i < count`` must report
    ``buffered == held`` over the wire (the streams a round leaves open live in
    ``buffers``, not in some other object).
    Returns ``{"memory": [before, after round 0, ...], "wrong": str | None}``."""
    ref = reference().OutputBuffers(budget)
    tag = "t" + secrets.token_hex(4)
    pick = secrets.SystemRandom()
    memory = [worker_memory()]
    wrong: str | None = None
    for rnd in range(rounds):
        got = measure(driver, buffers, tag, rnd, *args)
        want = driver(ref, tag, rnd, *args)
        if got != want and wrong is None:
            wrong = f"round {rnd}: the answers differ from the reference's"
        if carried is not None and wrong is None:
            pattern, count, held = carried
            for i in pick.sample(range(count), min(3, count)):
                sid = pattern.format(tag=tag, rnd=rnd, i=i)
                have = buffers.buffered(sid)
                if have != held:
                    wrong = (f"round {rnd}: stream {sid!r} was left open holding {held} "
                             f"bytes, yet buffered() says {have!r}")
                    break
        memory.append(worker_memory())
    return {"memory": memory, "wrong": wrong}


def cpu_of_events(buffers: Any, rounds: int, want: str) -> tuple[float, bool]:
    """The worker's CPU seconds for ``support.run_events(buffers, rounds)`` and whether
    its answers matched ``want`` (the reference's digest)."""
    before = worker_cpu()
    got = measure(support.run_events, buffers, rounds)
    return worker_cpu() - before, got == want


def reference_cpu_of_events(buffers: Any, rounds: int, repeats: int = 3) -> tuple[float, str]:
    """The best of ``repeats`` CPU times of ``support.run_events`` on a reference object
    in this process (this thread's CPU time), and its digest."""
    best = float("inf")
    digest = ""
    for _ in range(repeats):
        t0 = time.thread_time()
        digest = support.run_events(buffers, rounds)
        best = min(best, time.thread_time() - t0)
    return best, digest
