"""Shared test helpers for radix_cache: the KV-content model.

The test plays the GPU: whenever the cache hands out a fresh slot for position i of a
sequence, the test "writes" the KV of that prefix (``seq[:i+1]``) into it. A slot the
cache later hands back as a cache hit must hold exactly the prefix requested there.
"""

from __future__ import annotations


class KV:
    """What each slot holds, as the tuple of tokens whose KV was written into it."""

    def __init__(self) -> None:
        self.content: dict[int, tuple[int, ...]] = {}

    def write(self, slot: int, prefix: list[int] | tuple[int, ...]) -> None:
        self.content[slot] = tuple(prefix)

    def check_hit(self, slots: list[int], tokens: list[int], upto: int, what: str) -> None:
        for i in range(upto):
            want = tuple(tokens[: i + 1])
            got = self.content.get(slots[i])
            assert got == want, (
                f"{what}: position {i} got slot {slots[i]}, which holds the KV of {got}, "
                f"but the request needs the KV of {want} (tokens={tokens})")


def stats_ok(cache: object, num_slots: int) -> dict[str, int]:
    s = cache.stats()  # type: ignore[attr-defined]
    assert set(s) == {"free", "cached", "pinned", "leased"}, f"stats keys: {sorted(s)}"
    assert all(isinstance(v, int) and v >= 0 for v in s.values()), f"stats: {s}"
    assert s["free"] + s["cached"] + s["leased"] == num_slots, (
        f"free + cached + leased must equal num_slots={num_slots}: {s}")
    assert s["pinned"] <= s["cached"], f"pinned must be within cached: {s}"
    return dict(s)
