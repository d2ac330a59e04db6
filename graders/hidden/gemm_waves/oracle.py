"""Independent oracles for gemm_waves: counting and simulating, never the ceil formulas.

Each function enumerates what the prompt describes (tile origins, CTAs handed to slots
wave by wave, work units, stream-K iteration ranges) so that the tests do not share a
formula with the implementation they check.
"""

from __future__ import annotations

from fractions import Fraction


def count_tiles(m: int, n: int, tile_m: int, tile_n: int) -> int:
    """Tiles by enumerating their top-left corners (fine for m, n up to a few thousand)."""
    return sum(1 for _ in range(0, m, tile_m) for _ in range(0, n, tile_n))


def count_tiles_fast(m: int, n: int, tile_m: int, tile_n: int) -> int:
    """Corners per axis as range lengths (for large shapes)."""
    return len(range(0, m, tile_m)) * len(range(0, n, tile_n))


def simulate_waves(tiles: int, slots: int) -> list[int]:
    """Hand CTAs to slots: each wave takes up to `slots` of the remaining; returns wave sizes."""
    sizes = []
    left = tiles
    while left > 0:
        take = min(slots, left)
        sizes.append(take)
        left -= take
    return sizes


def efficiency(tiles: int, slots: int) -> Fraction:
    sizes = simulate_waves(tiles, slots)
    return Fraction(sum(sizes), len(sizes) * slots)


def idle_slot_waves(tiles: int, slots: int) -> Fraction:
    """Idle slot-time over all waves, in units of whole waves (slots x t_wave)."""
    return sum((Fraction(slots - s, slots) for s in simulate_waves(tiles, slots)), Fraction(0))


def k_iterations(k: int, tile_k: int) -> int:
    return len(range(0, k, tile_k))


def split_units(k_iters: int, s: int) -> list[int]:
    """K-iterations of each of the s contiguous parts, as even as possible."""
    base, extra = divmod(k_iters, s)
    return [base + 1] * extra + [base] * (s - extra)


def split_k_time(tiles: int, k_iters: int, s: int, slots: int, t_iter: float,
                 t_partial: float) -> float:
    """Every wave is charged its longest unit; every wave has a unit of the longest length.

    The prompt charges ceil(k_iters / s) to every wave; simulate the units and charge the
    longest unit overall (the prompt's rule), counting waves by handing out units.
    """
    units = [u for _ in range(tiles) for u in split_units(k_iters, s)]
    longest = max(units)
    waves = len(simulate_waves(len(units), slots))
    return waves * longest * t_iter + (s * t_partial if s > 1 else 0.0)


def stream_k(tiles: int, k_iters: int, slots: int) -> tuple[int, int]:
    """(iterations of the busiest worker, tiles touched by more than one worker).

    Iterations are dealt out in order, each worker taking q = the smallest count that lets
    `slots` workers cover them all.
    """
    total = tiles * k_iters
    q = next(q for q in range(1, total + 1) if q * slots >= total)
    owners: dict[int, set[int]] = {}
    busiest = 0
    for w in range(slots):
        lo, hi = w * q, min((w + 1) * q, total)
        busiest = max(busiest, max(0, hi - lo))
        # tiles touched by [lo, hi)
        t = lo // k_iters
        while t * k_iters < hi and t < tiles:
            owners.setdefault(t, set()).add(w)
            t += 1
    split = sum(1 for ws in owners.values() if len(ws) > 1)
    return busiest, split


def trimmed_chunk(budget: int, n: int, tile_m: int, tile_n: int, slots: int) -> int:
    """Search down from the budget for the first chunk whose tiles fit the complete waves."""
    complete = count_tiles_fast(budget, n, tile_m, tile_n) // slots * slots
    for c in range(budget, 0, -1):
        if count_tiles_fast(c, n, tile_m, tile_n) <= complete:
            return c
    return budget
