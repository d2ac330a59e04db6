"""Trivial answers: no hashing, no cache, every call returns the least it can.

Rubric: *
"""

from __future__ import annotations

from graders.support.block_hash import HashFn, sha256


class OutOfBlocks(RuntimeError):
    pass


def block_hashes(tokens: list[int], block_size: int, namespace: str = "",
                 hash_fn: HashFn = sha256) -> list[bytes]:
    return []


class BlockPool:
    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn = sha256) -> None:
        pass

    def allocate(self, request_id: str, tokens: list[int],
                 namespace: str = "") -> tuple[list[int], int]:
        return [], 0

    def append(self, request_id: str, tokens: list[int]) -> list[int]:
        return []

    def free(self, request_id: str) -> None:
        pass

    def num_free_blocks(self) -> int:
        return 0

    def cached_blocks(self) -> list[int]:
        return []
