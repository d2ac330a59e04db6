"""Blind alternative (written from the prompt, the stub and the public tests only).

No incarnation objects: every incarnation is just its generation number (a global
counter), and flat tables keyed by generation hold its pages, its count of steps in
flight and whether it ended. Steps remember (request_id, generation) pairs. The free pool
is lazy: a high-water mark over never-used pages plus a stack of recycled ones, so no
call costs O(num_pages).
"""

from __future__ import annotations

from collections.abc import Mapping


class OutOfPages(RuntimeError):
    """Raised when ``add`` or ``grow`` asks for more pages than are free."""


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


class Reclaimer:
    def __init__(self, num_pages: int) -> None:
        if not _is_int(num_pages) or num_pages <= 0:
            raise ValueError(f"num_pages must be a positive int, got {num_pages!r}")
        self._num_pages = num_pages
        self._fresh = 0                 # pages fresh .. num_pages-1 were never handed out
        self._recycled: list[int] = []  # freed pages, ready to hand out again
        self._next_gen = 0
        self._next_step = 0
        self._live: dict[str, int] = {}          # request id -> generation of live incarnation
        self._pages: dict[int, list[int]] = {}   # generation -> pages (held or waiting)
        self._readers: dict[int, int] = {}       # generation -> steps in flight reading it
        self._ended: set[int] = set()            # generations ended, pages still waiting
        self._steps: dict[int, tuple[tuple[str, int], ...]] = {}  # step -> (rid, gen) pairs

    # -- pool ---------------------------------------------------------------------------
    def _available(self) -> int:
        return len(self._recycled) + (self._num_pages - self._fresh)

    def _take(self, n: int) -> list[int]:
        # Caller has checked n <= self._available(); this cannot fail halfway.
        out: list[int] = []
        k = min(n, len(self._recycled))
        if k:
            out.extend(self._recycled[-k:])
            del self._recycled[-k:]
        rest = n - k
        if rest:
            out.extend(range(self._fresh, self._fresh + rest))
            self._fresh += rest
        return out

    def _release(self, gen: int) -> None:
        self._recycled.extend(self._pages.pop(gen))
        self._readers.pop(gen, None)
        self._ended.discard(gen)

    # -- API ----------------------------------------------------------------------------
    def add(self, request_id: str, num_pages: int) -> int:
        if request_id in self._live:
            raise ValueError(f"request {request_id!r} is live")
        if not _is_int(num_pages) or num_pages <= 0:
            raise ValueError(f"num_pages must be a positive int, got {num_pages!r}")
        if num_pages > self._available():
            raise OutOfPages(f"{num_pages} pages asked, {self._available()} free")
        gen = self._next_gen
        self._next_gen += 1
        self._pages[gen] = self._take(num_pages)
        self._readers[gen] = 0
        self._live[request_id] = gen
        return gen

    def grow(self, request_id: str, n: int) -> list[int]:
        if request_id not in self._live:
            raise KeyError(request_id)
        if not _is_int(n) or n < 0:
            raise ValueError(f"n must be a non-negative int, got {n!r}")
        if n > self._available():
            raise OutOfPages(f"{n} pages asked, {self._available()} free")
        new = self._take(n)
        self._pages[self._live[request_id]].extend(new)
        return list(new)

    def launch(self, request_ids: list[str]) -> int:
        ids = list(request_ids)
        if not ids:
            raise ValueError("a step needs at least one request")
        if len(set(ids)) != len(ids):
            raise ValueError(f"repeated request id in {ids!r}")
        for rid in ids:
            if rid not in self._live:
                raise KeyError(rid)
        members = tuple((rid, self._live[rid]) for rid in ids)
        for _, gen in members:
            self._readers[gen] += 1
        step = self._next_step
        self._next_step += 1
        self._steps[step] = members
        return step

    def complete(self, step_id: int, tokens: dict[str, int]) -> list[tuple[str, int]]:
        if isinstance(step_id, bool):
            return []
        try:
            members = self._steps.pop(step_id)
        except (KeyError, TypeError):
            return []
        if not isinstance(tokens, Mapping):
            tokens = {}
        out: list[tuple[str, int]] = []
        for rid, gen in members:
            self._readers[gen] -= 1
            if self._live.get(rid) == gen:
                if rid in tokens:
                    out.append((rid, tokens[rid]))
            elif gen in self._ended and self._readers[gen] == 0:
                self._release(gen)
        return out

    def _end(self, request_id: str) -> None:
        try:
            gen = self._live.pop(request_id)
        except (KeyError, TypeError):
            return
        if self._readers[gen] == 0:
            self._release(gen)
        else:
            self._ended.add(gen)

    def abort(self, request_id: str) -> None:
        self._end(request_id)

    def finish(self, request_id: str) -> None:
        self._end(request_id)

    def pages_of(self, request_id: str) -> list[int]:
        if request_id not in self._live:
            raise KeyError(request_id)
        return list(self._pages[self._live[request_id]])

    def free_pages(self) -> int:
        return self._available()
