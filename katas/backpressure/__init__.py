"""backpressure: a byte budget per output stream, connected to engine cancellation.

Fill in every method. The prompt is katas/backpressure/README.md; run the public tests with
``nox -s kata -- backpressure``.

Two parts:
- ``OutputBuffers``, a sans-IO core: it never touches a socket or a clock. The driver tells
  it what happened (the engine produced bytes, the socket took bytes, the generation
  finished, the client left) and it answers with actions for the driver to carry out.
- ``StreamServer``, a thin asyncio server that drives one ``OutputBuffers`` with real
  sockets and the engine ``graders.support.backpressure.FakeEngine``.

Actions are ``("cancel", stream_id)``: stop the generation in the engine and free its KV,
and ``("close", stream_id)``: close the client's connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only a type here: the engine is handed in, never imported at run time
    from graders.support.backpressure import FakeEngine

_PROMPT = "see katas/backpressure/README.md"

Action = tuple[str, str]


class OutputBuffers:
    """Per-stream output buffers under a byte budget (sans-IO).

    For each open stream: ``queued`` bytes the engine produced that no ``next_write`` has
    handed out yet, and ``pending`` bytes handed out by ``next_write`` that the socket has
    not yet acknowledged with ``write_done``. At most one chunk is pending at a time.

    Invariants:
    - ``queued + pending <= budget_bytes`` for every open stream;
    - every stream ends with exactly one ``("close", id)``; it gets at most one
      ``("cancel", id)``, and none when its generation finished normally;
    - once a stream has ended (closed), nothing about it is kept.

    Events for an id that is not open (never opened, or already ended) are ignored:
    ``on_output``, ``write_done``, ``on_finish`` and ``on_disconnect`` return ``[]``,
    ``next_write`` returns ``b""`` and ``buffered`` returns 0.
    """

    def __init__(self, budget_bytes: int) -> None:
        """Buffers with a budget of ``budget_bytes`` per stream, no stream open.

        Raises ValueError unless ``budget_bytes`` is a positive int (not a bool).
        """
        raise NotImplementedError(f"OutputBuffers.__init__ ({_PROMPT})")

    def open(self, stream_id: str) -> None:
        """Start stream ``stream_id`` with nothing buffered.

        An id whose stream has ended may be opened again: it is a new stream.
        Raises ValueError when ``stream_id`` is already open (nothing changes).
        """
        raise NotImplementedError(f"OutputBuffers.open ({_PROMPT})")

    def on_output(self, stream_id: str, data: bytes) -> list[Action]:
        """The engine produced ``data`` for the stream; returns the actions to carry out.

        If ``queued + pending + len(data)`` fits in the budget, ``data`` is queued and the
        answer is ``[]``. Otherwise the stream overflows: the answer holds one cancel and
        one close for it, its buffered bytes are dropped and it has ended.
        Output for an id that is not open is late output: dropped, ``[]``.
        The engine never reports output after ``on_finish`` for the same stream.
        """
        raise NotImplementedError(f"OutputBuffers.on_output ({_PROMPT})")

    def next_write(self, stream_id: str, max_bytes: int) -> bytes:
        """The socket can take data: the next bytes to send, in order (``b""`` if none).

        Returns ``b""`` while a chunk is pending (not fully acknowledged). Otherwise returns
        between 1 and ``max_bytes`` of the oldest queued bytes when any are queued; those
        bytes become the pending chunk: they still count against the budget until
        ``write_done`` acknowledges them.
        Raises ValueError when ``max_bytes < 1`` (nothing changes).
        """
        raise NotImplementedError(f"OutputBuffers.next_write ({_PROMPT})")

    def write_done(self, stream_id: str, n: int) -> list[Action]:
        """The socket took ``n`` more bytes of the pending chunk (``0 <= n <= pending``).

        The rest of the chunk, if any, is still held by the socket: it stays pending and is
        never handed out again. Returns ``[("close", id)]`` when this completes the
        delivery of a finished stream, else ``[]``.
        Raises ValueError unless ``0 <= n <= pending`` (nothing changes).
        """
        raise NotImplementedError(f"OutputBuffers.write_done ({_PROMPT})")

    def on_finish(self, stream_id: str) -> list[Action]:
        """The generation finished normally; the connection closes once all is delivered.

        Returns ``[("close", id)]`` if nothing is queued or pending, else ``[]`` (the
        close then comes from the ``write_done`` that completes the delivery).
        Reported at most once per stream while it is open.
        """
        raise NotImplementedError(f"OutputBuffers.on_finish ({_PROMPT})")

    def on_disconnect(self, stream_id: str) -> list[Action]:
        """The client is gone: the stream ends and its buffered bytes are dropped.

        Returns a cancel (unless the generation already finished) and a close.
        """
        raise NotImplementedError(f"OutputBuffers.on_disconnect ({_PROMPT})")

    def buffered(self, stream_id: str) -> int:
        """``queued + pending`` bytes of the stream; 0 for an id that is not open."""
        raise NotImplementedError(f"OutputBuffers.buffered ({_PROMPT})")


class StreamServer:
    """An asyncio TCP server: one connection per generation, one ``OutputBuffers`` for all.

    Protocol: the client connects and sends one line, the prompt, ending in ``b"\\n"``
    (e.g. ``b"alice 100 64\\n"``). The server opens a stream under a new id of its choosing,
    calls ``engine.add(stream_id, prompt)`` with the line's ``b"\\n"`` stripped, and sends
    the generated bytes back over the connection; it closes the connection once everything
    was delivered. Nothing else is sent either way.

    One engine loop calls ``engine.step()`` repeatedly while ``engine.busy()``, yielding to
    the event loop between steps, and feeds every token to the buffers. It never waits on
    a client: writing goes through the buffers and the transports' flow control. The
    pending write is what a connection's transport holds in its write buffer (not what the
    kernel's socket buffer holds). Overflow and disconnects cancel the generation through
    ``engine.cancel``; late output from the engine is accepted and dropped. A client that
    closes its connection, or only shuts down its sending side (a half-close: the server
    reads EOF), has disconnected. The engine's calls are synchronous (no ``await``); in
    isolated grading each one blocks for a loopback round trip.
    """

    def __init__(self, engine: FakeEngine, budget_bytes: int) -> None:
        """A server (not started yet) over ``engine`` with ``budget_bytes`` per stream.

        Raises ValueError unless ``budget_bytes`` is a positive int.
        """
        raise NotImplementedError(f"StreamServer.__init__ ({_PROMPT})")

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (``port`` 0: any free port), start the engine loop,
        return the port listened on."""
        raise NotImplementedError(f"StreamServer.start ({_PROMPT})")

    async def stop(self) -> None:
        """Stop listening, close every connection, stop the engine loop; returns when done."""
        raise NotImplementedError(f"StreamServer.stop ({_PROMPT})")
