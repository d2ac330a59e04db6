"""Independent correct solution: everything keyed by (request_id, generation) tuples.

Written by the kata's author from the prompt and the stub only, in a different design from
the reference: no incarnation objects. A global generation counter tags each incarnation;
steps store (id, generation) keys; in-flight counts and held pages live in dicts keyed by
that tuple; the free pool is a min-heap (lowest page first), and step ids are random-looking
but unique (a counter mixed with an offset), which the prompt allows.
"""

from __future__ import annotations

import heapq

Key = tuple[str, int]


class OutOfPages(RuntimeError):
    """Not enough free pages."""


class Reclaimer:
    def __init__(self, num_pages: int) -> None:
        if type(num_pages) is not int or num_pages < 1:
            raise ValueError("num_pages must be a positive int")
        self.heap = list(range(num_pages))
        self.gen_of: dict[str, int] = {}          # live id -> its generation
        self.pages: dict[Key, list[int]] = {}     # live or waiting incarnation -> pages
        self.busy: dict[Key, int] = {}            # incarnation -> steps in flight (absent: 0)
        self.steps: dict[int, list[Key]] = {}
        self.next_gen = 100
        self.launched = 0

    def _grab(self, n: int) -> list[int]:
        if len(self.heap) < n:
            raise OutOfPages(f"want {n}, have {len(self.heap)}")
        return [heapq.heappop(self.heap) for _ in range(n)]

    def add(self, request_id: str, num_pages: int) -> int:
        if request_id in self.gen_of:
            raise ValueError(f"{request_id!r} is live")
        if type(num_pages) is not int or num_pages < 1:
            raise ValueError("num_pages must be a positive int")
        got = self._grab(num_pages)
        self.next_gen += 1
        self.gen_of[request_id] = self.next_gen
        self.pages[(request_id, self.next_gen)] = got
        return self.next_gen

    def _key(self, request_id: str) -> Key:
        if request_id not in self.gen_of:
            raise KeyError(request_id)
        return (request_id, self.gen_of[request_id])

    def grow(self, request_id: str, n: int) -> list[int]:
        key = self._key(request_id)
        if type(n) is not int or n < 0:
            raise ValueError("n must be >= 0")
        got = self._grab(n)
        self.pages[key] += got
        return got

    def launch(self, request_ids: list[str]) -> int:
        if len(request_ids) == 0 or len(set(request_ids)) < len(request_ids):
            raise ValueError("need distinct ids")
        keys = [self._key(rid) for rid in request_ids]
        for key in keys:
            self.busy[key] = self.busy.get(key, 0) + 1
        self.launched += 1
        sid = 7 * self.launched + 3
        self.steps[sid] = keys
        return sid

    def _release(self, key: Key) -> None:
        for p in self.pages.pop(key):
            heapq.heappush(self.heap, p)

    def complete(self, step_id: int, tokens: dict[str, int]) -> list[tuple[str, int]]:
        try:
            keys = self.steps.pop(step_id)
        except (KeyError, TypeError):
            return []
        emitted = []
        for rid, gen in keys:
            key = (rid, gen)
            self.busy[key] -= 1
            if self.busy[key] == 0:
                del self.busy[key]
            if self.gen_of.get(rid) == gen:
                if rid in tokens:
                    emitted.append((rid, tokens[rid]))
            elif key not in self.busy:
                self._release(key)
        return emitted

    def _end(self, request_id: str) -> None:
        gen = self.gen_of.pop(request_id, None)
        if gen is not None and (request_id, gen) not in self.busy:
            self._release((request_id, gen))

    def abort(self, request_id: str) -> None:
        self._end(request_id)

    def finish(self, request_id: str) -> None:
        self._end(request_id)

    def pages_of(self, request_id: str) -> list[int]:
        return self.pages[self._key(request_id)][:]

    def free_pages(self) -> int:
        return len(self.heap)
