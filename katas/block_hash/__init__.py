"""block_hash: paged prefix caching with chained block hashes.

Fill in every function and method. The prompt is katas/block_hash/README.md; run the
public tests with ``nox -s kata -- block_hash``.

KV memory is a pool of blocks ``0 .. num_blocks - 1``, each holding the KV of
``block_size`` consecutive tokens. A full block's *content* is its namespace plus every
token from position 0 through the block's end. Each block is at any time: free and empty,
free and cached (its content is still there and can be hit), or held by one or more
running requests (cached or not).

``hash_fn`` is a module-level function ``bytes -> bytes`` (see
graders/support/block_hash.py: ``sha256`` is the default; the tests also pass
collision-free, 2-bit and constant ones).
"""

from __future__ import annotations

from graders.support.block_hash import HashFn, sha256

_PROMPT = "see katas/block_hash/README.md"


class OutOfBlocks(RuntimeError):
    """Raised when a call needs more blocks than are free (empty or cached).

    The call that raises it changes nothing.
    """


def block_hashes(tokens: list[int], block_size: int, namespace: str = "",
                 hash_fn: HashFn = sha256) -> list[bytes]:
    """The chained hashes of the full blocks of ``tokens`` (a trailing partial block has none).

    Block i's hash is ``hash_fn(data_i)`` where ``data_i`` encodes block i-1's hash (or
    "no parent" for block 0), the namespace and block i's tokens, such that two different
    (parent, namespace, tokens) triples never encode to the same bytes. So with a
    collision-free ``hash_fn``, two sequences get the same hash for block i exactly when
    they have the same namespace and the same tokens in blocks 0..i.

    Token ids are ints in ``[0, 2**32)``. Raises ValueError for a block_size below 1, a
    token outside that range, or a namespace that is not a str.
    """
    raise NotImplementedError(f"block_hashes ({_PROMPT})")


class BlockPool:
    """A pool of KV blocks with a prefix cache keyed by chained block hashes."""

    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn = sha256) -> None:
        """``num_blocks`` empty free blocks of ``block_size`` tokens each.

        Raises ValueError unless both are positive ints.
        """
        raise NotImplementedError(f"BlockPool.__init__ ({_PROMPT})")

    def allocate(self, request_id: str, tokens: list[int],
                 namespace: str = "") -> tuple[list[int], int]:
        """Start request ``request_id`` with prompt ``tokens``; returns
        ``(block_table, num_computed_tokens)``.

        ``block_table`` holds ``ceil(len(tokens) / block_size)`` block ids, one per block
        of the prompt. Its first ``num_computed_tokens // block_size`` entries are cache
        hits: cached blocks whose content is exactly this prompt's (same namespace, same
        tokens from position 0); where several cached blocks hold a content, the one
        cached first. ``num_computed_tokens`` is the longest such run of
        blocks times ``block_size``, but at most ``len(tokens) - 1``: the last prompt
        token is always computed. The other entries are fresh blocks: empty free blocks
        first; only when none is left, evict cached free blocks, least recently freed
        first. The caller writes the KV of the prompt's other tokens before its next
        call, so once the blocks are secured, the prompt's new full blocks become cached,
        each of them, even one whose content another block holds already (a duplicate).

        Raises ValueError for a request_id already running, an empty prompt or a bad
        token; OutOfBlocks when there are too few free blocks. Nothing changes then.
        """
        raise NotImplementedError(f"BlockPool.allocate ({_PROMPT})")

    def append(self, request_id: str, tokens: list[int]) -> list[int]:
        """Add generated ``tokens`` (KV written by the caller) to a running request;
        returns the ids of the blocks added to its table, in order (maybe none).

        First secures the new blocks it needs (as allocate does), then caches every
        block of the request that became full (a duplicate too).

        Raises KeyError for an unknown request, ValueError for a bad token, OutOfBlocks
        when there are too few free blocks. Nothing changes then.
        """
        raise NotImplementedError(f"BlockPool.append ({_PROMPT})")

    def free(self, request_id: str) -> None:
        """The request finished or was cancelled: release its blocks, last block first.

        A block whose last holder lets go becomes free: empty if it was not cached,
        otherwise cached and hittable, at the back of the eviction queue. Raises KeyError
        for a request that is not running (unknown or already freed); nothing changes then.
        """
        raise NotImplementedError(f"BlockPool.free ({_PROMPT})")

    def num_free_blocks(self) -> int:
        """How many blocks no running request holds (empty or cached)."""
        raise NotImplementedError(f"BlockPool.num_free_blocks ({_PROMPT})")

    def cached_blocks(self) -> list[int]:
        """The ids of every cached block (free or held, duplicates included), sorted."""
        raise NotImplementedError(f"BlockPool.cached_blocks ({_PROMPT})")
