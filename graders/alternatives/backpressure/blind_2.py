"""Blind alternative (written from the prompt, the stub and the public tests only).

Core: each stream is a byte *log* with three monotone offsets (produced, sent, acked)
instead of a queue length plus a pending count; queued = produced - sent, pending =
sent - acked, and the bytes live in a deque of the engine's own chunks plus a read offset
into the head chunk (no bytearray that is appended to and sliced off).
Server: asyncio *streams* (start_server, StreamReader/StreamWriter) with one writer
coroutine per connection woken by an asyncio.Event, instead of Protocol callbacks.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only a type here: the engine is handed in, never imported at run time
    from graders.support.backpressure import FakeEngine

Action = tuple[str, str]


class _Log:
    """One open stream: a log of produced bytes and how far it was sent and acknowledged."""

    __slots__ = ("chunks", "head", "produced", "sent", "acked", "finished")

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.head = 0          # bytes of chunks[0] already handed out
        self.produced = 0      # total bytes the engine produced
        self.sent = 0          # total bytes handed out by next_write
        self.acked = 0         # total bytes acknowledged by write_done
        self.finished = False  # on_finish seen


class OutputBuffers:
    """Per-stream output buffers under a byte budget (sans-IO)."""

    def __init__(self, budget_bytes: int) -> None:
        if not isinstance(budget_bytes, int) or isinstance(budget_bytes, bool) \
                or budget_bytes < 1:
            raise ValueError(f"budget_bytes must be a positive int, got {budget_bytes!r}")
        self._budget = budget_bytes
        self._logs: dict[str, _Log] = {}

    def open(self, stream_id: str) -> None:
        if stream_id in self._logs:
            raise ValueError(f"stream {stream_id!r} is already open")
        self._logs[stream_id] = _Log()

    def on_output(self, stream_id: str, data: bytes) -> list[Action]:
        log = self._logs.get(stream_id)
        if log is None:
            return []
        n = len(data)
        if log.produced - log.acked + n > self._budget:
            del self._logs[stream_id]
            if log.finished:  # cannot happen per the contract; never cancel a finished one
                return [("close", stream_id)]
            return [("cancel", stream_id), ("close", stream_id)]
        if n:
            log.chunks.append(bytes(data))
            log.produced += n
        return []

    def next_write(self, stream_id: str, max_bytes: int) -> bytes:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes!r}")
        log = self._logs.get(stream_id)
        if log is None or log.sent != log.acked:
            return b""
        need = min(max_bytes, log.produced - log.sent)
        if need <= 0:
            return b""
        take = need
        parts: list[bytes] = []
        chunks = log.chunks
        while need:
            first = chunks[0]
            left = len(first) - log.head
            if left <= need:
                parts.append(first[log.head:] if log.head else first)
                chunks.popleft()
                log.head = 0
                need -= left
            else:
                parts.append(first[log.head:log.head + need])
                log.head += need
                need = 0
        log.sent += take
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def write_done(self, stream_id: str, n: int) -> list[Action]:
        log = self._logs.get(stream_id)
        if log is None:
            return []
        if not 0 <= n <= log.sent - log.acked:
            raise ValueError(f"write_done: n={n!r} outside 0..{log.sent - log.acked}")
        log.acked += n
        return self._close_if_drained(stream_id, log)

    def on_finish(self, stream_id: str) -> list[Action]:
        log = self._logs.get(stream_id)
        if log is None:
            return []
        log.finished = True
        return self._close_if_drained(stream_id, log)

    def on_disconnect(self, stream_id: str) -> list[Action]:
        log = self._logs.pop(stream_id, None)
        if log is None:
            return []
        if log.finished:
            return [("close", stream_id)]
        return [("cancel", stream_id), ("close", stream_id)]

    def buffered(self, stream_id: str) -> int:
        log = self._logs.get(stream_id)
        return 0 if log is None else log.produced - log.acked

    def _close_if_drained(self, stream_id: str, log: _Log) -> list[Action]:
        if log.finished and log.acked == log.produced:
            del self._logs[stream_id]
            return [("close", stream_id)]
        return []


# -- the server ----------------------------------------------------------------------------

_CHUNK = 1 << 16


class _Conn:
    __slots__ = ("sid", "reader", "writer", "ready", "ended")

    def __init__(self, sid: str, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.sid = sid
        self.reader = reader
        self.writer = writer
        self.ready = asyncio.Event()  # something to write, or the stream ended
        self.ended = False


class StreamServer:
    """An asyncio TCP server: one connection per generation, one ``OutputBuffers`` for all."""

    def __init__(self, engine: FakeEngine, budget_bytes: int) -> None:
        self._core = OutputBuffers(budget_bytes)  # validates the budget
        self._engine = engine
        self._prefix = uuid.uuid4().hex[:12]
        self._ids = itertools.count()
        self._conns: dict[str, _Conn] = {}
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._server: asyncio.base_events.Server | None = None
        self._engine_task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._stopping = False

    async def start(self, host: str, port: int) -> int:
        self._wake = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, host, port)
        self._engine_task = asyncio.get_running_loop().create_task(self._engine_loop())
        return int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        self._stopping = True
        if self._server is not None:
            self._server.close()
        for sid in list(self._conns):
            self._carry_out(self._core.on_disconnect(sid))
        for w in list(self._writers):
            w.transport.abort()
        me = asyncio.current_task()
        tasks = [t for t in self._tasks if t is not me]
        if self._engine_task is not None:
            tasks.append(self._engine_task)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=2.0)
        if self._server is not None:
            await self._server.wait_closed()

    # -- actions -------------------------------------------------------------------------

    def _carry_out(self, actions: list[Action]) -> None:
        graceful = not any(kind == "cancel" for kind, _ in actions)
        for kind, sid in actions:
            if kind == "cancel":
                self._engine.cancel(sid)
        for kind, sid in actions:
            if kind != "close":
                continue
            conn = self._conns.pop(sid, None)
            if conn is None:
                continue
            conn.ended = True
            conn.ready.set()
            transport = conn.writer.transport
            if graceful and not transport.is_closing() \
                    and transport.get_write_buffer_size() == 0:
                conn.writer.close()
            else:
                transport.abort()

    # -- the engine loop -----------------------------------------------------------------

    async def _engine_loop(self) -> None:
        assert self._wake is not None
        engine, core = self._engine, self._core
        while not self._stopping:
            if not engine.busy():
                self._wake.clear()
                await self._wake.wait()
                continue
            for sid, data, finished in engine.step():
                self._carry_out(core.on_output(sid, data))
                if finished:
                    self._carry_out(core.on_finish(sid))
                conn = self._conns.get(sid)
                if conn is not None:
                    conn.ready.set()
            await asyncio.sleep(0)

    # -- one connection ------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        me = asyncio.current_task()
        if me is not None:
            self._tasks.add(me)
        self._writers.add(writer)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, OSError, ValueError, TypeError):
            pass  # a dropped client or a malformed prompt: drop the connection
        finally:
            self._writers.discard(writer)
            if me is not None:
                self._tasks.discard(me)
            if not writer.transport.is_closing():
                writer.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        line = await reader.readline()
        if self._stopping or not line.endswith(b"\n"):
            return
        sid = f"{self._prefix}-{next(self._ids)}"
        self._engine.add(sid, line[:-1])  # a malformed prompt raises: the connection drops
        self._core.open(sid)
        conn = _Conn(sid, reader, writer)
        self._conns[sid] = conn
        writer.transport.set_write_buffer_limits(high=0)  # pause while anything is buffered
        assert self._wake is not None
        self._wake.set()
        watcher = asyncio.get_running_loop().create_task(self._watch(conn))
        self._tasks.add(watcher)
        watcher.add_done_callback(self._tasks.discard)
        await self._write_loop(conn)
        await watcher

    async def _watch(self, conn: _Conn) -> None:
        """Read until EOF: the client closing its connection is a disconnect."""
        try:
            while await conn.reader.read(_CHUNK):
                pass  # nothing else is expected from the client
        except (ConnectionError, OSError):
            pass
        self._carry_out(self._core.on_disconnect(conn.sid))
        conn.ended = True
        conn.ready.set()

    async def _write_loop(self, conn: _Conn) -> None:
        core, sid = self._core, conn.sid
        transport = conn.writer.transport
        while not conn.ended:
            chunk = core.next_write(sid, _CHUNK)
            if not chunk:
                conn.ready.clear()
                if conn.ended:
                    break
                await conn.ready.wait()
                continue
            conn.writer.write(chunk)
            held = transport.get_write_buffer_size()
            self._carry_out(core.write_done(sid, len(chunk) - held))
            if held and not conn.ended:
                try:
                    await conn.writer.drain()  # returns once the transport's buffer is empty
                except (ConnectionError, OSError):
                    break
                self._carry_out(core.write_done(sid, held))
