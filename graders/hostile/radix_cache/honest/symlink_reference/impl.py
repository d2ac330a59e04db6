"""radix_cache: a radix-tree prefix cache over a pool of KV slots.

Fill in every method. The prompt is katas/radix_cache/README.md; run the public tests with
``nox -s kata -- radix_cache``.

One slot holds one token's KV. Every slot is in exactly one state at any time:
free, cached (held by the radix tree) or leased (held by a running request, not cached).
"""

from __future__ import annotations

_PROMPT = "see katas/radix_cache/README.md"


class OutOfSlots(RuntimeError):
    """Raised when a request needs more slots than are free plus evictable.

    The call that raises it changes nothing.
    """


class RadixCache:
    """A prefix cache: a radix tree whose edges are token runs, each token mapped to a slot."""

    def __init__(self, num_slots: int) -> None:
        """An empty cache over slots ``0 .. num_slots - 1``, all free.

        Raises ValueError unless ``num_slots`` is a positive int.
        """
        raise NotImplementedError(f"RadixCache.__init__ ({_PROMPT})")

    def acquire(self, tokens: list[int]) -> tuple[int, int, list[int]]:
        """Start a request for prompt ``tokens``; returns ``(lease_id, num_cached, slots)``.

        ``num_cached`` is the length of the longest cached prefix of ``tokens``, but at most
        ``len(tokens) - 1``. ``slots[i]`` is the slot of ``tokens[i]``: the tree's slots for
        the first ``num_cached`` tokens (pinned for this lease), fresh slots for the rest
        (evicting unpinned cached slots if the free pool is short).

        Raises ValueError for an empty prompt or a non-int token, OutOfSlots when the
        fresh slots cannot be found; either way nothing changes.
        """
        raise NotImplementedError(f"RadixCache.acquire ({_PROMPT})")

    def extend(self, lease_id: int, n: int) -> list[int]:
        """Append ``n`` fresh slots to the lease (for generated tokens); returns them.

        Evicts if the free pool is short. Raises KeyError for an unknown lease, ValueError
        for ``n < 0``, OutOfSlots when not enough slots can be found; nothing changes then.
        """
        raise NotImplementedError(f"RadixCache.extend ({_PROMPT})")

    def commit(self, lease_id: int, tokens: list[int]) -> list[int]:
        """Cache the lease's first ``len(tokens)`` positions, whose KV is computed.

        ``tokens`` are the token ids at those positions (the prompt, then generated
        tokens). Where the tree already caches a prefix of ``tokens`` (another request
        cached it meanwhile) the tree's slots are kept and the lease's duplicate slots are
        freed. The lease keeps every committed slot pinned. Returns the lease's slots for
        those positions after deduplication.

        Raises KeyError for an unknown lease, ValueError when ``tokens`` is longer than
        the lease's slots or disagrees with its prompt; nothing changes then.
        """
        raise NotImplementedError(f"RadixCache.commit ({_PROMPT})")

    def release(self, lease_id: int, tokens: list[int]) -> None:
        """The request finished: cache its first ``len(tokens)`` positions (as ``commit``),
        free its remaining uncached slots, unpin everything, end the lease.

        Raises as ``commit`` does; nothing changes then.
        """
        raise NotImplementedError(f"RadixCache.release ({_PROMPT})")

    def abort(self, lease_id: int) -> None:
        """The request was cancelled: unpin its cached slots, free its uncached slots, end
        the lease. What it committed stays cached. Raises KeyError for an unknown lease.
        """
        raise NotImplementedError(f"RadixCache.abort ({_PROMPT})")

    def evict(self, num_slots: int) -> int:
        """Free at least ``min(num_slots, evictable)`` unpinned cached slots, least recently
        used first; returns how many were freed (never more than were evictable).

        Raises ValueError for ``num_slots < 0``.
        """
        raise NotImplementedError(f"RadixCache.evict ({_PROMPT})")

    def stats(self) -> dict[str, int]:
        """``{"free", "cached", "pinned", "leased"}`` slot counts.

        free + cached + leased == num_slots; pinned (cached slots held by at least one
        live lease) <= cached.
        """
        raise NotImplementedError(f"RadixCache.stats ({_PROMPT})")
