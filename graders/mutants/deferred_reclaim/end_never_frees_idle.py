"""abort/finish only mark the request ended: pages are freed by a completion, so a request with no step in flight leaks them.

Rubric: deferred_free
"""

from __future__ import annotations

import itertools
from collections import defaultdict


class OutOfPages(RuntimeError):
    """Raised when add or grow asks for more pages than are free."""


class _Incarnation:
    __slots__ = ("request_id", "generation", "pages", "in_flight", "ended")

    def __init__(self, request_id: str, generation: int, pages: list[int]) -> None:
        self.request_id = request_id
        self.generation = generation
        self.pages = pages
        self.in_flight = 0   # launched steps not completed yet
        self.ended = False


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Reclaimer:
    def __init__(self, num_pages: int) -> None:
        if not _is_count(num_pages) or num_pages <= 0:
            raise ValueError(f"num_pages must be a positive int, got {num_pages!r}")
        self._free = list(range(num_pages - 1, -1, -1))
        self._live: dict[str, _Incarnation] = {}
        self._steps: dict[int, list[_Incarnation]] = {}
        self._step_ids = itertools.count()
        self._generations: defaultdict[str, int] = defaultdict(int)

    def _take(self, n: int) -> list[int]:
        if n > len(self._free):
            raise OutOfPages(f"{n} pages wanted, {len(self._free)} free")
        taken = self._free[len(self._free) - n:][::-1]
        del self._free[len(self._free) - n:]
        return taken

    def add(self, request_id: str, num_pages: int) -> int:
        if request_id in self._live:
            raise ValueError(f"request {request_id!r} is live; end it before reusing the id")
        if not _is_count(num_pages) or num_pages <= 0:
            raise ValueError(f"num_pages must be a positive int, got {num_pages!r}")
        pages = self._take(num_pages)
        self._generations[request_id] += 1
        generation = self._generations[request_id]
        self._live[request_id] = _Incarnation(request_id, generation, pages)
        return generation

    def grow(self, request_id: str, n: int) -> list[int]:
        inc = self._live[request_id]  # KeyError: not live
        if not _is_count(n) or n < 0:
            raise ValueError(f"n must be a non-negative int, got {n!r}")
        pages = self._take(n)
        inc.pages.extend(pages)
        return pages

    def launch(self, request_ids: list[str]) -> int:
        if not request_ids:
            raise ValueError("a step needs at least one request")
        if len(set(request_ids)) != len(request_ids):
            raise ValueError(f"repeated request id in {request_ids!r}")
        for rid in request_ids:
            if rid not in self._live:
                raise KeyError(f"request {rid!r} is not live")
        batch = [self._live[rid] for rid in request_ids]
        for inc in batch:
            inc.in_flight += 1
        step_id = next(self._step_ids)
        self._steps[step_id] = batch
        return step_id

    def complete(self, step_id: int, tokens: dict[str, int]) -> list[tuple[str, int]]:
        batch = self._steps.pop(step_id, None) if isinstance(step_id, int) else None
        if batch is None:
            return []  # unknown or duplicate completion
        out: list[tuple[str, int]] = []
        for inc in batch:
            inc.in_flight -= 1
            if inc.ended:
                self._reclaim_if_idle(inc)
            elif inc.request_id in tokens:
                out.append((inc.request_id, tokens[inc.request_id]))
        return out

    def abort(self, request_id: str) -> None:
        inc = self._live.pop(request_id, None)
        if inc is None:
            return  # already ended or never added: disconnects race with completions
        inc.ended = True  # the next completion of its step reclaims the pages

    def finish(self, request_id: str) -> None:
        self.abort(request_id)

    def _reclaim_if_idle(self, inc: _Incarnation) -> None:
        if inc.in_flight == 0:
            self._free.extend(inc.pages)
            inc.pages = []

    def pages_of(self, request_id: str) -> list[int]:
        return list(self._live[request_id].pages)

    def free_pages(self) -> int:
        return len(self._free)
