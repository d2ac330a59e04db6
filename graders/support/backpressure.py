"""The fake inference engine that the backpressure kata's server drives.

Both sides import this module: the candidate's ``StreamServer`` receives a ``FakeEngine``
and calls ``add``, ``cancel``, ``step`` and ``busy``; the tests read its records
(``cancels``, ``emitted``, ``finished``) to see what the server asked of it. It is not part
of what the candidate writes.

The second half holds the server scenario and the workloads. The scenario's clients and
the engine always live in the trusted test process (``play_scenario``); only the server
runs next to the implementation: in the same process under practice, in the grader's
sandboxed worker when grading isolated, where it reaches the engine's state on the
trusted side through ``EngineLink`` / ``EngineHost`` (tests/backpressure/helpers.py wires
them up). The in-process memory and work drivers (``churn_sizes``, ``time_events``, ...)
measure an ``OutputBuffers`` from inside its own process, so they serve only trusted
in-process runs; isolated grading runs the workloads at the end of this file in the worker
and reads its memory and CPU time from the kernel (graders/outside.py). Every
expectation is in the tests.

The engine is deterministic: a prompt ``b"<name> <n_tokens> <token_bytes>"`` produces
``n_tokens`` tokens of ``token_bytes`` bytes each, one token per running generation per
``step()``. Like a real batched engine, a cancel takes effect after the step already in
flight: the next ``step()`` still emits one token (possibly the last one, with
``finished=True``) for a generation cancelled since the previous step. The server must
accept such late output.
"""

from __future__ import annotations

import asyncio
import base64
import gc
import hashlib
import json
import selectors
import socket
import struct
import sys
import threading
import time
import types
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


def parse_prompt(prompt: bytes) -> tuple[str, int, int]:
    """``(name, n_tokens, token_bytes)`` of a prompt; ValueError when it is malformed."""
    parts = prompt.split()
    if len(parts) != 3:
        raise ValueError(f"a prompt is b'<name> <n_tokens> <token_bytes>', got {prompt!r}")
    try:
        name, n, size = parts[0].decode("ascii"), int(parts[1]), int(parts[2])
    except (UnicodeDecodeError, ValueError):
        raise ValueError(f"a prompt is b'<name> <n_tokens> <token_bytes>', got {prompt!r}") from None
    if n < 1 or size < 1:
        raise ValueError(f"n_tokens and token_bytes must be positive, got {prompt!r}")
    return name, n, size


def token(name: str, index: int, size: int, salt: bytes = b"") -> bytes:
    """Token ``index`` of generation ``name``: ``size`` bytes that name their position.

    With a ``salt`` (the grader's engine picks a secret one), the padding after the name
    is drawn from a keyed hash, so the only way to learn a token is ``engine.step()``;
    tokens shorter than their name are all keyed bytes then.
    """
    head = f"<{name}:{index}>".encode("ascii")
    if not salt:
        if size <= len(head):
            return head[:size]
        return head + b"." * (size - len(head) - 1) + b"\n"
    key = hashlib.blake2b(f"{name}:{index}".encode("ascii"), key=salt[:64],
                          digest_size=32).hexdigest().encode("ascii")
    if size <= len(head):
        return (key * (size // len(key) + 1))[:size]
    fill = size - len(head) - 1
    return head + (key * (fill // len(key) + 1))[:fill] + b"\n"


def expected_output(prompt: bytes, salt: bytes = b"") -> bytes:
    """Everything a generation for ``prompt`` produces when it runs to the end."""
    name, n, size = parse_prompt(prompt)
    return b"".join(token(name, i, size, salt) for i in range(n))


@dataclass
class _Generation:
    name: str
    n_tokens: int
    token_bytes: int
    produced: int = 0
    cancelling: bool = False


class FakeEngine:
    """A deterministic token generator standing in for the inference engine.

    Thread-safe: the server may run in another thread than the test that reads the records.
    """

    def __init__(self, salt: bytes = b"") -> None:
        self._salt = bytes(salt)
        self._lock = threading.Lock()
        self._running: dict[str, _Generation] = {}
        self.prompts: dict[str, bytes] = {}      # stream id -> prompt, for every add
        self.cancels: Counter[str] = Counter()   # stream id -> number of cancel calls
        self.emitted: Counter[str] = Counter()   # stream id -> bytes produced so far
        self.finished: set[str] = set()          # ids whose generation produced its last token
        self.steps = 0

    def add(self, stream_id: str, prompt: bytes) -> None:
        """Start generating for ``stream_id``.

        Raises ValueError for a malformed prompt or an id that was added before.
        """
        if not isinstance(stream_id, str):
            raise TypeError(f"a stream id is a str, got {type(stream_id).__name__}")
        name, n, size = parse_prompt(prompt)
        with self._lock:
            if stream_id in self.prompts:
                raise ValueError(f"stream id {stream_id!r} was already added")
            self.prompts[stream_id] = bytes(prompt)
            self._running[stream_id] = _Generation(name, n, size)

    def cancel(self, stream_id: str) -> None:
        """Stop the generation of ``stream_id`` and free its KV (after the step in flight).

        Every call is recorded, also for ids that are not running: the tests check that
        each stream is cancelled at most once and a finished one never.
        """
        with self._lock:
            self.cancels[stream_id] += 1
            gen = self._running.get(stream_id)
            if gen is not None:
                gen.cancelling = True

    def busy(self) -> bool:
        """Whether ``step()`` would produce anything."""
        with self._lock:
            return bool(self._running)

    def step(self) -> list[tuple[str, bytes, bool]]:
        """One decode step: ``(stream_id, token, finished)`` for every running generation."""
        out: list[tuple[str, bytes, bool]] = []
        with self._lock:
            self.steps += 1
            for sid, gen in list(self._running.items()):
                data = token(gen.name, gen.produced, gen.token_bytes, self._salt)
                gen.produced += 1
                done = gen.produced == gen.n_tokens
                out.append((sid, data, done))
                self.emitted[sid] += len(data)
                if done:
                    self.finished.add(sid)
                if done or gen.cancelling:
                    del self._running[sid]
        return out

    # -- for the tests --------------------------------------------------------------

    def stream_of(self, name: str) -> str | None:
        """The stream id whose prompt names generation ``name``, if it was added."""
        with self._lock:
            for sid, prompt in self.prompts.items():
                if prompt.split()[:1] == [name.encode("ascii")]:
                    return sid
        return None

    def expected(self, prompt: bytes) -> bytes:
        """Everything this engine produces for ``prompt`` when it runs to the end."""
        return expected_output(prompt, self._salt)

    def running(self, stream_id: str) -> bool:
        with self._lock:
            return stream_id in self._running

    def snapshot(self) -> tuple[dict[str, int], dict[str, int], set[str]]:
        """Copies of ``(cancels, emitted, finished)`` taken under the lock."""
        with self._lock:
            return dict(self.cancels), dict(self.emitted), set(self.finished)


# -- drivers: run next to the implementation, report plain data ---------------------------

HOST = "127.0.0.1"
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


class ServerThread:
    """``server_cls(engine, budget)`` started on 127.0.0.1 in a background event loop.

    The server runs in its own thread and event loop; the clients are plain blocking code
    with deadlines, so a server that hangs ends a scenario instead of hanging it.
    """

    def __init__(self, server_cls: Any, engine: FakeEngine, budget: int,
                 timeout: float = 5.0) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                       name="backpressure-server")
        self.thread.start()
        self.timeout = timeout
        self.link: Any = None  # the EngineLink a start_server driver opened

        async def make_and_start() -> tuple[Any, Any]:
            server = server_cls(engine, budget)
            port = await server.start(HOST, 0)
            return server, port

        try:
            self.server, self.port = self.run(make_and_start(), "StreamServer.start")
        except BaseException:
            self._shutdown_loop()
            raise
        if not isinstance(self.port, int) or not 0 < self.port < 65536:
            self._shutdown_loop()
            raise TypeError(f"StreamServer.start must return the port (an int), got {self.port!r}")

    def run(self, coro: Any, what: str) -> Any:
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return fut.result(self.timeout)
        except TimeoutError:
            fut.cancel()
            raise TimeoutError(f"{what} did not return within {self.timeout} s") from None

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
            if rest:
                await asyncio.wait(rest, timeout=1.0)

        try:
            asyncio.run_coroutine_threadsafe(cancel_rest(), self.loop).result(2.0)
        except Exception:  # noqa: BLE001 - best effort: the loop may be stuck
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(2.0)
        if not self.thread.is_alive():
            self.loop.close()


@contextmanager
def running_server(server_cls: Any, engine: FakeEngine, budget: int) -> Iterator[ServerThread]:
    """A started ``ServerThread``, stopped on the way out (a failing stop is re-raised only
    when the body succeeded)."""
    srv = ServerThread(server_cls, engine, budget)
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
            except BaseException:  # noqa: BLE001 - the body's own failure matters more
                pass


def connect(sock: socket.socket, port: int, prompt: bytes,
            rcvbuf: int | None = None) -> socket.socket:
    """``sock`` (a fresh TCP socket) connected to the server, the prompt line sent."""
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(5.0)
    sock.connect((HOST, port))
    sock.sendall(prompt + b"\n")
    return sock


def read_until_closed(socks: dict[str, socket.socket], deadline: float,
                      stop_after: dict[str, int] | None = None
                      ) -> tuple[dict[str, bytes], set[str]]:
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


def _records(engine: FakeEngine, sids: dict[str, str]) -> dict[str, Any]:
    cancels, emitted, finished = engine.snapshot()
    return {"sids": dict(sids), "cancels": cancels, "emitted": emitted,
            "finished": sorted(finished)}


def connects(steps: Sequence[Sequence[Any]]) -> int:
    """How many clients a scenario connects (one socket each)."""
    return sum(1 for step in steps if step and step[0] == "connect")


def play_scenario(engine: FakeEngine, port: int, sockets: Sequence[socket.socket],
                  steps: Sequence[Sequence[Any]], stop: Callable[[], str | None]
                  ) -> dict[str, Any]:
    """Play ``steps`` against a server listening on ``port`` that drives ``engine``, then
    ``stop()`` it, and report what was observed.

    This is the client side and the judge's view of the engine: it runs in the trusted
    test process (in-process and isolated alike); only the server runs next to the
    implementation. ``sockets`` are fresh TCP sockets, one per ``connect`` step, that can
    reach the server's loopback. They are closed, and ``stop`` is called, whatever
    happens; an exception of a step propagates after that (a failing ``stop`` is then
    ignored: the step's failure matters more).

    Clients are named by the generation name of their prompt (``b"alice 10 4"``: alice).
    Steps, each a list whose first element says what to do:

    - ``["connect", name, prompt, rcvbuf]``: connect a client (``rcvbuf``: its SO_RCVBUF,
      or None) and send the prompt line;
    - ``["await_stream", name, timeout]``: wait until the server called ``engine.add`` for
      the client; reports ``held``, ``sid`` and ``seconds``;
    - ``["read", names, seconds, stop_after]``: read those clients until the server closes
      them or ``seconds`` pass (``stop_after``: {name: bytes} to stop reading a client
      early, or None); reports ``got`` (name: bytes), ``closed`` (names) and ``seconds``;
    - ``["close", name]``: the client closes its connection;
    - ``["half_close", name]``: the client shuts down its sending side only (the server
      reads EOF; the client could still read);
    - ``["await_cancel", name, timeout]`` / ``["await_finished", name, timeout]``: wait
      until the engine recorded a cancel of / the last token of the client's stream;
      reports ``held`` and ``seconds``;
    - ``["sleep", seconds]``;
    - ``["records"]``: the engine's records now.

    Returns ``{"steps": [one report per step], "after_stop": records, "stop_error": str or
    None, "want": {name: the client's whole output}}``, where records are ``{"sids": {name:
    stream id}, "cancels": {sid: calls}, "emitted": {sid: bytes}, "finished": [sid,
    ...]}``.
    """
    socks: dict[str, socket.socket] = {}
    free = list(sockets)
    sids: dict[str, str] = {}
    want: dict[str, bytes] = {}
    reports: list[dict[str, Any]] = []

    def sid_of(name: str) -> str | None:
        if name not in sids:
            sid = engine.stream_of(name)
            if sid is None:
                return None
            sids[name] = sid
        return sids[name]

    def timed_wait(cond: Callable[[], bool], timeout: float) -> dict[str, Any]:
        t0 = time.monotonic()
        held = wait_for(cond, timeout)
        return {"held": held, "seconds": time.monotonic() - t0}

    try:
        for step in steps:
            op = step[0]
            if op == "connect":
                _, name, prompt, rcvbuf = step
                if not free:
                    raise ValueError("more connect steps than sockets")
                want[name] = engine.expected(bytes(prompt))
                socks[name] = connect(free.pop(0), port, bytes(prompt), rcvbuf)
                reports.append({})
            elif op == "await_stream":
                _, name, timeout = step
                report = timed_wait(lambda: sid_of(name) is not None, timeout)
                report["sid"] = sid_of(name)
                reports.append(report)
            elif op == "read":
                _, names, seconds, stop_after = step
                t0 = time.monotonic()
                got, closed = read_until_closed({n: socks[n] for n in names}, t0 + seconds,
                                                stop_after=stop_after)
                reports.append({"got": got, "closed": sorted(closed),
                                "seconds": time.monotonic() - t0})
            elif op == "close":
                socks[step[1]].close()
                reports.append({})
            elif op == "half_close":
                socks[step[1]].shutdown(socket.SHUT_WR)
                reports.append({})
            elif op in ("await_cancel", "await_finished"):
                _, name, timeout = step

                def happened(name: str = name, op: str = op) -> bool:
                    sid = sid_of(name)
                    if sid is None:
                        return False
                    cancels, _, finished = engine.snapshot()
                    return cancels.get(sid, 0) >= 1 if op == "await_cancel" else sid in finished

                reports.append(timed_wait(happened, timeout))
            elif op == "sleep":
                time.sleep(step[1])
                reports.append({})
            elif op == "records":
                reports.append(_records(engine, sids))
            else:
                raise ValueError(f"unknown scenario step {step!r}")
    except BaseException:
        try:
            stop()
        except BaseException:  # noqa: BLE001 - the step's own failure matters more
            pass
        raise
    finally:
        for s in list(sockets):
            s.close()
    stop_error = stop()
    for prompt in list(engine.prompts.values()):
        sid_of(parse_prompt(prompt)[0])
    return {"steps": reports, "after_stop": _records(engine, sids), "stop_error": stop_error,
            "want": want}


def run_server_scenario(server_cls: Any, budget: int,
                        steps: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The whole scenario in this process: start ``server_cls(FakeEngine(), budget)`` on
    127.0.0.1 in a background thread, ``play_scenario``, stop it. Used when the
    implementation runs in the test's own process (practice, and grading --in-process).
    An exception of the server's ``__init__`` or ``start`` (or a start that does not
    return in 5 s) propagates."""
    engine = FakeEngine()
    srv = ServerThread(server_cls, engine, budget)

    def stop() -> str | None:
        try:
            srv.stop()
        except Exception as exc:  # noqa: BLE001 - reported, judged by the test
            return f"{type(exc).__name__}: {exc}"
        return None

    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(connects(steps))]
    return play_scenario(engine, srv.port, socks, steps, stop)


# -- the engine across the sandbox: its state on the trusted side -------------------------
#
# When grading isolated, the engine's state and records live in the trusted test process
# (``EngineHost``); the server in the worker gets an ``EngineLink`` whose four methods are
# remote calls over a TCP connection on the worker's loopback. Replacing the link inside
# the worker gains nothing: all it can do is call the engine's API.

_MAX_ENGINE_MESSAGE = 1 << 16
_MAX_ENGINE_REPLY = 64 << 20


def _send_frame(sock: socket.socket, value: Any) -> None:
    data = json.dumps(value, separators=(",", ":")).encode("utf-8")
    sock.sendall(struct.pack("<I", len(data)) + data)


def _recv_exact(sock: socket.socket, n: int, alive: Callable[[], bool]) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except TimeoutError:
            if not alive():
                return None
            continue
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _recv_frame(sock: socket.socket, limit: int,
                alive: Callable[[], bool] = lambda: True) -> Any:
    head = _recv_exact(sock, 4, alive)
    if head is None:
        return None
    (size,) = struct.unpack("<I", head)
    if size > limit:
        raise ValueError(f"engine message of {size} bytes exceeds {limit}")
    body = _recv_exact(sock, size, alive)
    if body is None:
        return None
    return json.loads(body.decode("utf-8"))


class EngineLink:
    """The engine as the server in the worker sees it when the engine lives on the
    trusted side: ``add``, ``cancel``, ``busy`` and ``step``, each a remote call."""

    def __init__(self, port: int) -> None:
        self._sock = socket.create_connection((HOST, port), timeout=30.0)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._lock = threading.Lock()

    def _call(self, *request: Any) -> Any:
        with self._lock:
            _send_frame(self._sock, list(request))
            reply = _recv_frame(self._sock, _MAX_ENGINE_REPLY)
        if not isinstance(reply, dict):
            raise ConnectionError("the engine went away")
        if "error" in reply:
            kind = {"TypeError": TypeError}.get(str(reply.get("type")), ValueError)
            raise kind(str(reply["error"]))
        return reply.get("ok")

    def add(self, stream_id: str, prompt: bytes) -> None:
        if not isinstance(prompt, (bytes, bytearray)):
            raise TypeError(f"a prompt is bytes, got {type(prompt).__name__}")
        if not isinstance(stream_id, str):
            raise TypeError(f"a stream id is a str, got {type(stream_id).__name__}")
        self._call("add", stream_id, base64.b64encode(bytes(prompt)).decode("ascii"))

    def cancel(self, stream_id: str) -> None:
        if not isinstance(stream_id, str):
            raise TypeError(f"a stream id is a str, got {type(stream_id).__name__}")
        self._call("cancel", stream_id)

    def busy(self) -> bool:
        return bool(self._call("busy"))

    def step(self) -> list[tuple[str, bytes, bool]]:
        return [(str(sid), base64.b64decode(data), bool(done))
                for sid, data, done in self._call("step")]

    def close(self) -> None:
        self._sock.close()


class _Malformed(Exception):
    """A request that is not one of the engine's four calls: its connection is closed."""


class EngineHost:
    """Serves a ``FakeEngine`` to ``EngineLink`` connections (trusted side).

    ``listener`` is a fresh TCP socket that can reach the worker's loopback; it is bound
    to 127.0.0.1 on a free port (``self.port``). Requests are checked strictly: a
    malformed one closes its connection. ``close`` ends every thread it started.
    """

    MAX_CONNECTIONS = 8

    def __init__(self, engine: FakeEngine, listener: socket.socket) -> None:
        self.engine = engine
        self._listener = listener
        listener.bind((HOST, 0))
        listener.listen(8)
        listener.settimeout(0.1)
        self.port = int(listener.getsockname()[1])
        self._stopping = threading.Event()
        self._conns: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        accept = threading.Thread(target=self._accept, daemon=True, name="engine-host")
        self._threads.append(accept)
        accept.start()

    def _alive(self) -> bool:
        return not self._stopping.is_set()

    def _accept(self) -> None:
        while self._alive():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                if len(self._conns) >= self.MAX_CONNECTIONS or not self._alive():
                    conn.close()
                    continue
                self._conns.append(conn)
                conn.settimeout(0.1)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                t = threading.Thread(target=self._serve, args=(conn,), daemon=True,
                                     name="engine-host-conn")
                self._threads.append(t)
                t.start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            while self._alive():
                request = _recv_frame(conn, _MAX_ENGINE_MESSAGE, self._alive)
                if request is None:
                    return
                try:
                    reply = {"ok": self._dispatch(request)}
                except (TypeError, ValueError) as exc:  # the engine refused the call
                    reply = {"error": str(exc)[:500], "type": type(exc).__name__}
                conn.settimeout(30.0)
                _send_frame(conn, reply)
                conn.settimeout(0.1)
        except (OSError, ValueError, _Malformed):
            return
        finally:
            conn.close()

    def _dispatch(self, request: Any) -> Any:
        if not isinstance(request, list) or not request or not isinstance(request[0], str):
            raise _Malformed()
        op, args = request[0], request[1:]
        if op == "busy" and not args:
            return self.engine.busy()
        if op == "step" and not args:
            return [[sid, base64.b64encode(data).decode("ascii"), done]
                    for sid, data, done in self.engine.step()]
        if op == "cancel" and len(args) == 1 and isinstance(args[0], str) \
                and len(args[0]) <= 1000:
            self.engine.cancel(args[0])
            return None
        if op == "add" and len(args) == 2 and isinstance(args[0], str) \
                and len(args[0]) <= 1000 and isinstance(args[1], str):
            try:
                prompt = base64.b64decode(args[1], validate=True)
            except ValueError:
                raise _Malformed() from None
            self.engine.add(args[0], prompt)
            return None
        raise _Malformed()

    def close(self) -> None:
        self._stopping.set()
        self._listener.close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in self._threads:
            t.join(5.0)


def start_server(server_cls: Any, budget: int, engine_port: int) -> list[Any]:
    """Driver (runs in the worker): start ``server_cls(EngineLink(engine_port), budget)``
    in a background thread and event loop; ``[the ServerThread, its port]``. Exceptions of
    the server's ``__init__`` or ``start`` propagate."""
    link = EngineLink(engine_port)
    try:
        srv = ServerThread(server_cls, link, budget)  # type: ignore[arg-type]
    except BaseException:
        link.close()
        raise
    srv.link = link
    return [srv, srv.port]


def stop_server(srv: ServerThread) -> str | None:
    """Driver (runs in the worker): stop a server ``start_server`` started; the error
    ``StreamServer.stop`` raised, as text, or None."""
    try:
        srv.stop()
    except Exception as exc:  # noqa: BLE001 - reported, judged by the test
        return f"{type(exc).__name__}: {exc}"
    finally:
        link = getattr(srv, "link", None)
        if link is not None:
            link.close()
    return None


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


def size_of(buffers: Any) -> int:
    """``deep_size`` of an object after a garbage collection."""
    gc.collect()
    return deep_size(buffers)


def churn(buffers: Any, start: int, stop: int) -> None:
    """Streams ``stream-<start>`` .. ``stream-<stop - 1>``, four open at a time, each ending
    one of four ways (delivered, overflow, disconnect mid-generation, disconnect while a
    finished stream drains), followed by late events for each."""
    b = buffers
    for i in range(start, stop, 4):
        ids = [f"stream-{j}" for j in range(i, min(i + 4, stop))]
        for k, sid in enumerate(ids):
            b.open(sid)
            b.on_output(sid, b"abc")
            how = (i // 4 + k) % 4
            if how == 0:            # delivered and closed
                chunk = b.next_write(sid, 2)
                b.write_done(sid, len(chunk))
                b.on_finish(sid)
                chunk = b.next_write(sid, 8)
                b.write_done(sid, len(chunk))
            elif how == 1:          # overflow
                b.on_output(sid, b"x" * 100)
            elif how == 2:          # disconnect mid-generation
                b.next_write(sid, 1)
                b.on_disconnect(sid)
            else:                   # finished, then the client left while draining
                b.on_finish(sid)
                b.on_disconnect(sid)
        for sid in ids:
            b.on_output(sid, b"late")
            b.on_finish(sid)
            b.on_disconnect(sid)
            b.write_done(sid, 0)


def churn_sizes(buffers: Any, bounds: Sequence[Sequence[int]]) -> list[int]:
    """``size_of(buffers)`` before any churn, then after ``churn(buffers, start, stop)``
    for each ``(start, stop)`` in ``bounds``."""
    sizes = [size_of(buffers)]
    for start, stop in bounds:
        churn(buffers, start, stop)
        sizes.append(size_of(buffers))
    return sizes


def big_streams_sizes(buffers: Any, n_streams: int, first: int, second: int) -> list[int]:
    """``size_of(buffers)`` before, while and after ``n_streams`` streams are open that
    each received ``first`` bytes; then they end: odd ones by a disconnect, even ones by
    more output of ``second`` bytes."""
    before = size_of(buffers)
    ids = [f"big-{i}" for i in range(n_streams)]
    for sid in ids:
        buffers.open(sid)
        buffers.on_output(sid, b"z" * first)
    holding = size_of(buffers)
    for i, sid in enumerate(ids):
        if i % 2:
            buffers.on_disconnect(sid)
        else:
            buffers.on_output(sid, b"z" * second)
    return [before, holding, size_of(buffers)]


def disconnect_sizes(buffers: Any, n_streams: int) -> list[int]:
    """``size_of(buffers)`` before and after ``n_streams`` streams that each receive
    ``b"abc"``, disconnect, then receive late output."""
    before = size_of(buffers)
    for i in range(n_streams):
        sid = f"s{i}"
        buffers.open(sid)
        buffers.on_output(sid, b"abc")
        buffers.on_disconnect(sid)
        buffers.on_output(sid, b"late")
    return [before, size_of(buffers)]


def open_streams(buffers: Any, n_streams: int, data: bytes) -> None:
    """Open ``other-0`` .. ``other-<n_streams - 1>``, each holding ``data``."""
    for i in range(n_streams):
        buffers.open(f"other-{i}")
        buffers.on_output(f"other-{i}", data)


def time_events(buffers: Any, rounds: int, repeats: int = 1) -> list[float]:
    """Seconds (``time.perf_counter``) that ``rounds`` short streams take, ``repeats``
    times: each opens, gets two outputs, one write and its ack, finishes, disconnects and
    gets late output."""
    b = buffers
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for i in range(rounds):
            sid = f"probe-{i}"
            b.open(sid)
            b.on_output(sid, b"hello")
            b.on_output(sid, b"world")
            chunk = b.next_write(sid, 4)
            b.write_done(sid, len(chunk))
            b.buffered(sid)
            b.on_finish(sid)
            b.on_disconnect(sid)
            b.on_output(sid, b"late")
        times.append(time.perf_counter() - t0)
    return times


# -- workloads whose cost is measured from outside the worker -----------------------------
#
# When grading isolated, memory and CPU time are read from the kernel by the trusted side
# (graders/outside.py) around one call of these drivers. Each returns a digest of the
# answers it got, normalised so that every correct implementation gives the same digest;
# the trusted side compares it with the reference's, so a workload that was skipped or
# answered wrongly does not count as measured.


def _norm(actions: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(a) for a in actions)


def _end_stream(b: Any, sid: str, how: int, note: Callable[..., None]) -> None:
    """End open stream ``sid`` (holding ``b"abc"``) one of four ways, then send it late
    events; every answer goes to ``note``, normalised."""
    if how == 0:        # drained, then finished
        got = bytearray()
        acts: list[Any] = []
        for _ in range(8):
            chunk = b.next_write(sid, 8)
            if not chunk:
                break
            got += chunk
            acts += list(b.write_done(sid, len(chunk)))
        note("drained", bytes(got), _norm(acts), _norm(b.on_finish(sid)))
    elif how == 1:      # overflow
        note("overflow", _norm(b.on_output(sid, b"x" * 100)))
    elif how == 2:      # disconnect mid-generation
        note("disconnect", _norm(b.on_disconnect(sid)))
    else:               # finished, then the client left while it drained
        note("finished", _norm(b.on_finish(sid)), _norm(b.on_disconnect(sid)))
    note("late", _norm(b.on_output(sid, b"late")), _norm(b.on_finish(sid)),
         _norm(b.on_disconnect(sid)), _norm(b.write_done(sid, 0)), b.buffered(sid),
         b.next_write(sid, 4))


def churn_round(buffers: Any, tag: str, rnd: int, n_churn: int, n_carry: int) -> str:
    """One round of a budget-16 ``OutputBuffers``' life: end the ``n_carry`` streams
    ``<tag>-<rnd - 1>-c<i>`` the previous round left open; run ``n_churn`` short streams
    ``<tag>-<rnd>-<i>``, four open at a time, each ending one of four ways (drained and
    finished, overflow, disconnect mid-generation, finished then disconnected while
    draining) followed by late events; leave ``n_carry`` streams ``<tag>-<rnd>-c<i>`` open,
    each holding ``b"abc"``. The digest of the answers."""
    b = buffers
    h = hashlib.blake2b(digest_size=16)

    def note(*answer: Any) -> None:
        h.update(repr(answer).encode("utf-8", "backslashreplace"))

    if rnd > 0:
        for i in range(n_carry):
            _end_stream(b, f"{tag}-{rnd - 1}-c{i}", i % 4, note)
    for start in range(0, n_churn, 4):
        ids = [f"{tag}-{rnd}-{i}" for i in range(start, min(start + 4, n_churn))]
        for sid in ids:
            b.open(sid)
            note("open", _norm(b.on_output(sid, b"abc")))
        for k, sid in enumerate(ids):
            _end_stream(b, sid, (start // 4 + k) % 4, note)
    for i in range(n_carry):
        sid = f"{tag}-{rnd}-c{i}"
        b.open(sid)
        note("open", _norm(b.on_output(sid, b"abc")))
    gc.collect()
    return h.hexdigest()


def big_round(buffers: Any, tag: str, rnd: int, n_streams: int, first: int,
              second: int) -> str:
    """End the previous round's ``n_streams`` streams ``<tag>-<rnd - 1>-<i>`` (odd ones by
    a disconnect, even ones by more output of ``second`` bytes, which overflows), then
    open as many new ones that each receive ``first`` bytes. The digest of the answers."""
    b = buffers
    h = hashlib.blake2b(digest_size=16)
    if rnd > 0:
        more = b"z" * second
        for i in range(n_streams):
            sid = f"{tag}-{rnd - 1}-{i}"
            acts = b.on_disconnect(sid) if i % 2 else b.on_output(sid, more)
            h.update(repr((_norm(acts), b.buffered(sid))).encode())
        del more
    for i in range(n_streams):
        sid = f"{tag}-{rnd}-{i}"
        b.open(sid)
        h.update(repr((_norm(b.on_output(sid, b"z" * first)), b.buffered(sid))).encode())
    gc.collect()
    return h.hexdigest()


def run_events(buffers: Any, rounds: int) -> str:
    """``rounds`` short streams (as ``time_events``: open, two outputs, one write and its
    ack, finish, disconnect, late output); the digest of the answers."""
    b = buffers
    h = hashlib.blake2b(digest_size=16)
    for i in range(rounds):
        sid = f"probe-{i}"
        b.open(sid)
        first = b.on_output(sid, b"hello")
        second = b.on_output(sid, b"world")
        chunk = b.next_write(sid, 4)
        done = b.write_done(sid, len(chunk))
        left = b.buffered(sid)
        h.update(repr((_norm(first), _norm(second), 1 <= len(chunk) <= 4,
                       left + len(chunk), _norm(done), _norm(b.on_finish(sid)),
                       _norm(b.on_disconnect(sid)), _norm(b.on_output(sid, b"late"))
                       )).encode())
    return h.hexdigest()
