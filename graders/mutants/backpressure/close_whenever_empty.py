"""write_done closes any stream whose buffers run empty, finished or not.

Rubric: close_after_drain
A candidate-style bug planted in the independent solution (chunk deque, streams server).
"""

from __future__ import annotations

import asyncio
from collections import deque

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only a type here: the engine is handed in, never imported at run time
    from graders.support.backpressure import FakeEngine

Action = tuple[str, str]


class _Out:
    __slots__ = ("chunks", "queued", "inflight", "done")

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.queued = 0
        self.inflight = 0
        self.done = False


class OutputBuffers:
    def __init__(self, budget_bytes: int) -> None:
        if isinstance(budget_bytes, bool) or not isinstance(budget_bytes, int) or budget_bytes <= 0:
            raise ValueError("budget_bytes must be a positive int")
        self.budget = budget_bytes
        self.outs: dict[str, _Out] = {}

    def open(self, stream_id: str) -> None:
        if stream_id in self.outs:
            raise ValueError(f"{stream_id!r} is open")
        self.outs[stream_id] = _Out()

    def _end(self, stream_id: str, cancel: bool) -> list[Action]:
        del self.outs[stream_id]
        return ([("cancel", stream_id)] if cancel else []) + [("close", stream_id)]

    def on_output(self, stream_id: str, data: bytes) -> list[Action]:
        o = self.outs.get(stream_id)
        if o is None:
            return []
        if o.queued + o.inflight + len(data) > self.budget:
            return self._end(stream_id, cancel=True)
        if data:
            o.chunks.append(bytes(data))
            o.queued += len(data)
        return []

    def next_write(self, stream_id: str, max_bytes: int) -> bytes:
        if max_bytes < 1:
            raise ValueError("max_bytes must be >= 1")
        o = self.outs.get(stream_id)
        if o is None or o.inflight or not o.chunks:
            return b""
        head = o.chunks.popleft()
        if len(head) > max_bytes:
            o.chunks.appendleft(head[max_bytes:])
            head = head[:max_bytes]
        o.queued -= len(head)
        o.inflight = len(head)
        return head

    def write_done(self, stream_id: str, n: int) -> list[Action]:
        o = self.outs.get(stream_id)
        if o is None:
            return []
        if n < 0 or n > o.inflight:
            raise ValueError(f"n={n} outside 0..{o.inflight}")
        o.inflight -= n
        if o.queued == 0 and o.inflight == 0 and (o.done or n > 0):
            return self._end(stream_id, cancel=False)
        return []

    def on_finish(self, stream_id: str) -> list[Action]:
        o = self.outs.get(stream_id)
        if o is None:
            return []
        o.done = True
        return self.write_done(stream_id, 0)

    def on_disconnect(self, stream_id: str) -> list[Action]:
        o = self.outs.get(stream_id)
        if o is None:
            return []
        return self._end(stream_id, cancel=not o.done)

    def buffered(self, stream_id: str) -> int:
        o = self.outs.get(stream_id)
        return o.queued + o.inflight if o else 0


class StreamServer:
    def __init__(self, engine: FakeEngine, budget_bytes: int) -> None:
        self.engine = engine
        self.bufs = OutputBuffers(budget_bytes)
        self.writers: dict[str, asyncio.StreamWriter] = {}
        self.kick: dict[str, asyncio.Event] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.counter = 0
        self.srv: asyncio.Server | None = None
        self.loop_task: asyncio.Task[None] | None = None

    async def start(self, host: str, port: int) -> int:
        self.srv = await asyncio.start_server(self._client, host, port)
        self.loop_task = asyncio.ensure_future(self._run_engine())
        return self.srv.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self.srv is not None and self.loop_task is not None
        self.srv.close()
        for w in list(self.writers.values()):
            w.transport.abort()
        for t in list(self.tasks) + [self.loop_task]:
            t.cancel()
        await asyncio.gather(*self.tasks, self.loop_task, return_exceptions=True)
        await self.srv.wait_closed()

    def _do(self, actions: list[Action]) -> None:
        for what, sid in actions:
            if what == "cancel":
                self.engine.cancel(sid)
                continue
            w = self.writers.pop(sid, None)
            ev = self.kick.pop(sid, None)
            if ev is not None:
                ev.set()
            if w is not None:
                if w.transport.get_write_buffer_size() > 0:
                    w.transport.abort()
                else:
                    w.close()

    async def _run_engine(self) -> None:
        while True:
            if not self.engine.busy():
                await asyncio.sleep(0.002)
                continue
            for sid, tok, last in self.engine.step():
                self._do(self.bufs.on_output(sid, tok))
                if last:
                    self._do(self.bufs.on_finish(sid))
                ev = self.kick.get(sid)
                if ev is not None:
                    ev.set()
            await asyncio.sleep(0)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        me = asyncio.current_task()
        assert me is not None
        self.tasks.add(me)
        try:
            try:
                line = await reader.readline()
            except (ConnectionError, asyncio.LimitOverrunError, ValueError):
                writer.transport.abort()
                return
            if not line.endswith(b"\n"):
                writer.close()
                return
            self.counter += 1
            sid = f"conn{self.counter}"
            try:
                self.engine.add(sid, line[:-1])
            except ValueError:
                writer.close()
                return
            self.bufs.open(sid)
            self.writers[sid] = writer
            self.kick[sid] = asyncio.Event()
            writer.transport.set_write_buffer_limits(high=0, low=0)
            watcher = asyncio.ensure_future(reader.read())  # b"" or an error: the client left
            pump = asyncio.ensure_future(self._pump(sid, writer))
            await asyncio.wait({watcher, pump}, return_when=asyncio.FIRST_COMPLETED)
            if sid in self.writers:   # the client left before the stream ended
                self._do(self.bufs.on_disconnect(sid))
            for t in (watcher, pump):
                t.cancel()
            await asyncio.gather(watcher, pump, return_exceptions=True)
        finally:
            self.tasks.discard(me)

    async def _pump(self, sid: str, writer: asyncio.StreamWriter) -> None:
        while sid in self.writers:
            data = self.bufs.next_write(sid, 32768)
            if not data:
                ev = self.kick.get(sid)
                if ev is None:
                    return
                ev.clear()
                await ev.wait()
                continue
            writer.write(data)
            left = writer.transport.get_write_buffer_size()
            self._do(self.bufs.write_done(sid, len(data) - left))
            if left and sid in self.writers:
                try:
                    await writer.drain()
                except ConnectionError:
                    return
                self._do(self.bufs.write_done(sid, left))
