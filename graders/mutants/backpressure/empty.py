"""Trivial answers: every call accepts everything and does nothing.

Rubric: *
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only a type here: the engine is handed in, never imported at run time
    from graders.support.backpressure import FakeEngine

Action = tuple[str, str]


class OutputBuffers:
    def __init__(self, budget_bytes: int) -> None:
        pass

    def open(self, stream_id: str) -> None:
        pass

    def on_output(self, stream_id: str, data: bytes) -> list[Action]:
        return []

    def next_write(self, stream_id: str, max_bytes: int) -> bytes:
        return b""

    def write_done(self, stream_id: str, n: int) -> list[Action]:
        return []

    def on_finish(self, stream_id: str) -> list[Action]:
        return []

    def on_disconnect(self, stream_id: str) -> list[Action]:
        return []

    def buffered(self, stream_id: str) -> int:
        return 0


class StreamServer:
    def __init__(self, engine: FakeEngine, budget_bytes: int) -> None:
        pass

    async def start(self, host: str, port: int) -> int:
        return 0

    async def stop(self) -> None:
        pass
