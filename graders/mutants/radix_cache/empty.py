"""Trivial answers: every call succeeds and returns something of the right shape.

Rubric: *
"""

from __future__ import annotations


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots: int) -> None:
        self.n = num_slots

    def acquire(self, tokens: list[int]) -> tuple[int, int, list[int]]:
        return 0, 0, list(range(len(tokens)))

    def extend(self, lease_id: int, n: int) -> list[int]:
        return list(range(n))

    def commit(self, lease_id: int, tokens: list[int]) -> list[int]:
        return list(range(len(tokens)))

    def release(self, lease_id: int, tokens: list[int]) -> None:
        return None

    def abort(self, lease_id: int) -> None:
        return None

    def evict(self, num_slots: int) -> int:
        return 0

    def stats(self) -> dict[str, int]:
        return {"free": self.n, "cached": 0, "pinned": 0, "leased": 0}
