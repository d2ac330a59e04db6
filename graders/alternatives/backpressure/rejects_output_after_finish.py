"""A correct solution that refuses an input the prompt rules out: output reported for a
stream after its generation finished raises RuntimeError.

The prompt says the engine never reports output after ``on_finish`` for the same stream
(and ``on_finish`` at most once), so a solution may reject such a call. The hidden tests
must drive only inputs the prompt allows; this solution scores full marks exactly when
they do. Otherwise the reference's code.
"""
from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only a type here: the engine is handed in, never imported at run time
    from graders.support.backpressure import FakeEngine

Action = tuple[str, str]


@dataclass
class _Stream:
    queue: bytearray = field(default_factory=bytearray)  # produced, not handed out yet
    pending: int = 0                                     # handed out, not acknowledged yet
    finished: bool = False


class OutputBuffers:
    """Per-stream output buffers under a byte budget (sans-IO). See the stub for the contract."""

    def __init__(self, budget_bytes: int) -> None:
        if type(budget_bytes) is not int or budget_bytes < 1:
            raise ValueError(f"budget_bytes must be a positive int, got {budget_bytes!r}")
        self._budget = budget_bytes
        self._streams: dict[str, _Stream] = {}

    def open(self, stream_id: str) -> None:
        if stream_id in self._streams:
            raise ValueError(f"stream {stream_id!r} is already open")
        self._streams[stream_id] = _Stream()

    def on_output(self, stream_id: str, data: bytes) -> list[Action]:
        s = self._streams.get(stream_id)
        if s is None:
            return []  # late output for a stream that has ended
        if s.finished:  # the prompt rules this out: the engine never outputs after a finish
            raise RuntimeError(f"output for {stream_id!r} after its generation finished")
        if len(s.queue) + s.pending + len(data) > self._budget:
            del self._streams[stream_id]
            return [("cancel", stream_id), ("close", stream_id)]
        s.queue += data
        return []

    def next_write(self, stream_id: str, max_bytes: int) -> bytes:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes}")
        s = self._streams.get(stream_id)
        if s is None or s.pending:
            return b""
        chunk = bytes(s.queue[:max_bytes])
        del s.queue[:max_bytes]
        s.pending = len(chunk)
        return chunk

    def write_done(self, stream_id: str, n: int) -> list[Action]:
        s = self._streams.get(stream_id)
        if s is None:
            return []
        if not 0 <= n <= s.pending:
            raise ValueError(f"write_done({stream_id!r}, {n}): only {s.pending} bytes are pending")
        s.pending -= n
        return self._close_if_drained(stream_id, s)

    def on_finish(self, stream_id: str) -> list[Action]:
        s = self._streams.get(stream_id)
        if s is None:
            return []  # a finish that raced a cancel
        s.finished = True
        return self._close_if_drained(stream_id, s)

    def on_disconnect(self, stream_id: str) -> list[Action]:
        s = self._streams.pop(stream_id, None)
        if s is None:
            return []
        if s.finished:
            return [("close", stream_id)]
        return [("cancel", stream_id), ("close", stream_id)]

    def buffered(self, stream_id: str) -> int:
        s = self._streams.get(stream_id)
        return 0 if s is None else len(s.queue) + s.pending

    def _close_if_drained(self, stream_id: str, s: _Stream) -> list[Action]:
        if s.finished and not s.queue and not s.pending:
            del self._streams[stream_id]
            return [("close", stream_id)]
        return []


CHUNK_BYTES = 64 * 1024


class _Connection(asyncio.Protocol):
    """One client: reads the prompt line, then only writes. Flow control drives the acks."""

    def __init__(self, server: StreamServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.stream_id: str | None = None
        self.prompt = bytearray()
        self.held = 0          # bytes of the pending chunk still in the transport's buffer
        self.paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        # Pause as soon as the transport holds anything: resume_writing then means "empty".
        transport.set_write_buffer_limits(high=0)
        self.server._connections.add(self)

    def data_received(self, data: bytes) -> None:
        if self.stream_id is None and b"\n" not in self.prompt:
            self.prompt += data
            if b"\n" in self.prompt:
                self.server._start_stream(self, bytes(self.prompt.split(b"\n", 1)[0]))

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        if self.stream_id is not None:
            n, self.held = self.held, 0
            self.server._apply(self.server.core.write_done(self.stream_id, n))
            self.server._pump(self.stream_id)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server._connections.discard(self)
        if self.stream_id is not None:
            self.server._by_stream.pop(self.stream_id, None)
            self.server._apply(self.server.core.on_disconnect(self.stream_id))


class StreamServer:
    """The asyncio server around ``OutputBuffers``. See the stub for the protocol."""

    def __init__(self, engine: FakeEngine, budget_bytes: int) -> None:
        self.core = OutputBuffers(budget_bytes)
        self._engine = engine
        self._ids = itertools.count()
        self._by_stream: dict[str, _Connection] = {}
        self._connections: set[_Connection] = set()
        self._server: asyncio.Server | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._work: asyncio.Event | None = None

    async def start(self, host: str, port: int) -> int:
        self._work = asyncio.Event()
        self._server = await asyncio.get_running_loop().create_server(
            lambda: _Connection(self), host, port)
        self._loop_task = asyncio.create_task(self._engine_loop(self._work))
        return int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in list(self._connections):
            assert conn.transport is not None
            conn.transport.abort()
        if self._loop_task is not None:
            self._loop_task.cancel()
            try:
                await self._loop_task
            except asyncio.CancelledError:
                pass
        if self._server is not None:
            await self._server.wait_closed()

    def _start_stream(self, conn: _Connection, prompt: bytes) -> None:
        assert conn.transport is not None and self._work is not None
        sid = f"s{next(self._ids)}"
        try:
            self._engine.add(sid, prompt)
        except ValueError:
            conn.transport.close()  # a malformed prompt gets no answer
            return
        conn.stream_id = sid
        self.core.open(sid)
        self._by_stream[sid] = conn
        self._work.set()

    async def _engine_loop(self, work: asyncio.Event) -> None:
        while True:
            if not self._engine.busy():
                work.clear()
                await work.wait()
            for sid, data, finished in self._engine.step():
                self._apply(self.core.on_output(sid, data))
                if finished:
                    self._apply(self.core.on_finish(sid))
                self._pump(sid)
            await asyncio.sleep(0)  # let the sockets and new clients in between steps

    def _pump(self, sid: str) -> None:
        """Hand the transport one chunk at a time for as long as it sends them at once."""
        conn = self._by_stream.get(sid)
        while conn is not None and not conn.paused and conn.transport is not None:
            chunk = self.core.next_write(sid, CHUNK_BYTES)
            if not chunk:
                return
            conn.transport.write(chunk)
            conn.held = conn.transport.get_write_buffer_size()
            self._apply(self.core.write_done(sid, len(chunk) - conn.held))
            conn = self._by_stream.get(sid)

    def _apply(self, actions: list[Action]) -> None:
        for kind, sid in actions:
            if kind == "cancel":
                self._engine.cancel(sid)
            elif kind == "close":
                conn = self._by_stream.pop(sid, None)
                if conn is not None and conn.transport is not None:
                    if conn.transport.get_write_buffer_size():
                        conn.transport.abort()  # overflow: drop what the transport holds
                    else:
                        conn.transport.close()
