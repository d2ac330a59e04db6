"""Helpers shared by the public and hidden tests of the backpressure kata.

The server under test runs in its own thread with its own event loop; the tests are plain
blocking code with deadlines, so a server that hangs fails a test instead of hanging it.
"""

from __future__ import annotations

import asyncio
import gc
import selectors
import socket
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from graders import impl
from graders.support.backpressure import FakeEngine

HOST = "127.0.0.1"


def require_in_process(what: str) -> None:
    """Skip when the implementation runs in the grader's sandboxed worker.

    The server tests need the submission's server and the test's clients on one loopback
    interface, and hand it a FakeEngine object; the leak and work tests look at the object
    itself. None of that crosses the sandbox (a private network namespace, plain data only),
    so those tests run only in-process (``nox -s kata``, ``grade --in-process``).
    """
    if impl.isolated():
        pytest.skip(f"{what}: runs only in-process (the sandboxed worker has no shared "
                    "loopback and passes plain data only)")


class ServerThread:
    """``StreamServer(engine, budget)`` started on 127.0.0.1 in a background event loop."""

    def __init__(self, module: Any, engine: FakeEngine, budget: int, timeout: float = 5.0) -> None:
        require_in_process("the asyncio server over loopback sockets")
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                       name="backpressure-server")
        self.thread.start()
        self.timeout = timeout

        async def make_and_start() -> tuple[Any, int]:
            server = module.StreamServer(engine, budget)
            port = await server.start(HOST, 0)
            return server, port

        try:
            self.server, self.port = self.run(make_and_start(), "StreamServer.start")
        except BaseException:
            self._shutdown_loop()
            raise
        if not isinstance(self.port, int) or not 0 < self.port < 65536:
            self._shutdown_loop()
            raise AssertionError(f"StreamServer.start must return the port, got {self.port!r}")

    def run(self, coro: Any, what: str) -> Any:
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return fut.result(self.timeout)
        except TimeoutError:
            fut.cancel()
            raise AssertionError(f"{what} did not return within {self.timeout} s") from None

    def stop(self) -> None:
        try:
            self.run(self.server.stop(), "StreamServer.stop")
        finally:
            self._shutdown_loop()

    def _shutdown_loop(self) -> None:
        async def cancel_rest() -> None:
            me = asyncio.current_task()
            rest = [t for t in asyncio.all_tasks() if t is not me]
            for t in rest:
                t.cancel()
            await asyncio.wait(rest, timeout=1.0) if rest else None

        try:
            asyncio.run_coroutine_threadsafe(cancel_rest(), self.loop).result(2.0)
        except Exception:  # noqa: BLE001 - best effort: the loop may be stuck
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(2.0)
        if not self.thread.is_alive():
            self.loop.close()


@contextmanager
def running_server(module: Any, engine: FakeEngine, budget: int) -> Iterator[ServerThread]:
    srv = ServerThread(module, engine, budget)
    ok = False
    try:
        yield srv
        ok = True
    finally:
        if ok:
            srv.stop()
        else:
            try:
                srv.stop()
            except BaseException:  # noqa: BLE001 - the test's own failure matters more
                pass


def connect(port: int, prompt: bytes, rcvbuf: int | None = None) -> socket.socket:
    """A client that connected and sent ``prompt`` plus the newline."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(5.0)
    s.connect((HOST, port))
    s.sendall(prompt + b"\n")
    return s


def read_until_closed(socks: dict[str, socket.socket], deadline: float,
                      stop_after: dict[str, int] | None = None) -> tuple[dict[str, bytes], set[str]]:
    """Read from every socket until the server closes it or ``deadline`` passes.

    Returns what each client received and the names whose connection was closed (EOF or
    reset). ``stop_after[name] = n``: stop reading that client once it holds ``n`` bytes.
    """
    got = {name: bytearray() for name in socks}
    closed: set[str] = set()
    sel = selectors.DefaultSelector()
    for name, s in socks.items():
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, name)
    try:
        while len(sel.get_map()) and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=max(0.0, min(0.05, deadline - time.monotonic()))):
                name = key.data
                try:
                    data = socks[name].recv(1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    closed.add(name)
                    sel.unregister(socks[name])
                    continue
                got[name] += data
                if stop_after and name in stop_after and len(got[name]) >= stop_after[name]:
                    sel.unregister(socks[name])
    finally:
        sel.close()
    return {k: bytes(v) for k, v in got.items()}, closed


def wait_for(cond: Callable[[], bool], timeout: float) -> bool:
    """Poll ``cond`` until it holds or ``timeout`` seconds pass; whether it held."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.005)
    return cond()


SLOW_RCVBUF = 4096


def kernel_buffer_bound() -> int:
    """An upper bound on what the kernel's buffers absorb for a client that never reads.

    The sender's buffer grows up to tcp_wmem's maximum; the client's receive buffer is
    pinned small (``SLOW_RCVBUF``), counted here as 1 MiB to be safe.
    """
    try:
        with open("/proc/sys/net/ipv4/tcp_wmem", encoding="ascii") as f:
            wmem = int(f.read().split()[2])
    except (OSError, ValueError, IndexError):
        wmem = 16 << 20
    return wmem + (1 << 20)


_SKIP = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
         types.MethodType, types.CodeType, types.FrameType)


def deep_size(root: object) -> int:
    """Bytes of every object reachable from ``root`` (classes, modules, functions aside)."""
    seen: set[int] = set()
    stack = [root]
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _SKIP):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total
