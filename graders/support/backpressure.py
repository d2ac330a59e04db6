"""The fake inference engine that the backpressure kata's server drives.

Both sides import this module: the candidate's ``StreamServer`` receives a ``FakeEngine``
and calls ``add``, ``cancel``, ``step`` and ``busy``; the tests read its records
(``cancels``, ``emitted``, ``finished``) to see what the server asked of it. It is not part
of what the candidate writes.

The engine is deterministic: a prompt ``b"<name> <n_tokens> <token_bytes>"`` produces
``n_tokens`` tokens of ``token_bytes`` bytes each, one token per running generation per
``step()``. Like a real batched engine, a cancel takes effect after the step already in
flight: the next ``step()`` still emits one token (possibly the last one, with
``finished=True``) for a generation cancelled since the previous step. The server must
accept such late output.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass


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


def token(name: str, index: int, size: int) -> bytes:
    """Token ``index`` of generation ``name``: ``size`` bytes that name their position."""
    head = f"<{name}:{index}>".encode("ascii")
    if size <= len(head):
        return head[:size]
    return head + b"." * (size - len(head) - 1) + b"\n"


def expected_output(prompt: bytes) -> bytes:
    """Everything a generation for ``prompt`` produces when it runs to the end."""
    name, n, size = parse_prompt(prompt)
    return b"".join(token(name, i, size) for i in range(n))


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

    def __init__(self) -> None:
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
                data = token(gen.name, gen.produced, gen.token_bytes)
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

    def running(self, stream_id: str) -> bool:
        with self._lock:
            return stream_id in self._running

    def snapshot(self) -> tuple[dict[str, int], dict[str, int], set[str]]:
        """Copies of ``(cancels, emitted, finished)`` taken under the lock."""
        with self._lock:
            return dict(self.cancels), dict(self.emitted), set(self.finished)
