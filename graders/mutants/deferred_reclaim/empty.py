"""Trivial answers: every call succeeds and nothing is tracked.

Rubric: *
"""

from __future__ import annotations


class OutOfPages(RuntimeError):
    pass


class Reclaimer:
    def __init__(self, num_pages: int) -> None:
        pass

    def add(self, request_id: str, num_pages: int) -> int:
        return 0

    def grow(self, request_id: str, n: int) -> list[int]:
        return []

    def launch(self, request_ids: list[str]) -> int:
        return 0

    def complete(self, step_id: int, tokens: dict[str, int]) -> list[tuple[str, int]]:
        return []

    def abort(self, request_id: str) -> None:
        pass

    def finish(self, request_id: str) -> None:
        pass

    def pages_of(self, request_id: str) -> list[int]:
        return []

    def free_pages(self) -> int:
        return 0
