"""gemm_waves: reference solution (see katas/gemm_waves/README.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence

TileCandidate = tuple[int, int, float]
Tile = tuple[int, int, int]


def _int(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _time(name: str, value: object, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of microseconds, got {type(value).__name__}")
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'} and finite, got {value}")
    return float(value)


def _tile(value: object) -> Tile:
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise TypeError("tile must be a (tile_m, tile_n, tile_k) tuple")
    return (_int("tile_m", value[0]), _int("tile_n", value[1]), _int("tile_k", value[2]))


def _candidates(value: object, time_name: str) -> list[TileCandidate]:
    if not isinstance(value, (tuple, list)):
        raise TypeError("candidates must be a list of (tile_m, tile_n, time) tuples")
    if not value:
        raise ValueError("candidates must not be empty")
    out: list[TileCandidate] = []
    for c in value:
        if not isinstance(c, (tuple, list)) or len(c) != 3:
            raise TypeError("candidates must hold (tile_m, tile_n, time) tuples")
        out.append((_int("candidate tile_m", c[0]), _int("candidate tile_n", c[1]),
                    _time(f"candidate {time_name}", c[2])))
    return out


def _slots(num_sms: int, ctas_per_sm: int) -> int:
    return _int("num_sms", num_sms) * _int("ctas_per_sm", ctas_per_sm)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def output_tiles(m: int, n: int, tile_m: int, tile_n: int) -> int:
    _int("m", m), _int("n", n), _int("tile_m", tile_m), _int("tile_n", tile_n)
    return _ceil_div(m, tile_m) * _ceil_div(n, tile_n)


def wave_count(tiles: int, num_sms: int, ctas_per_sm: int = 1) -> int:
    _int("tiles", tiles)
    return _ceil_div(tiles, _slots(num_sms, ctas_per_sm))


def wave_efficiency(tiles: int, num_sms: int, ctas_per_sm: int = 1) -> float:
    waves = wave_count(tiles, num_sms, ctas_per_sm)
    return tiles / (waves * num_sms * ctas_per_sm)


def gemm_time_us(m: int, n: int, tile_m: int, tile_n: int, num_sms: int, t_wave_us: float,
                 ctas_per_sm: int = 1) -> float:
    tiles = output_tiles(m, n, tile_m, tile_n)
    t = _time("t_wave_us", t_wave_us)
    return wave_count(tiles, num_sms, ctas_per_sm) * t


def wave_waste_us(m: int, n: int, tile_m: int, tile_n: int, num_sms: int, t_wave_us: float,
                  ctas_per_sm: int = 1) -> float:
    tiles = output_tiles(m, n, tile_m, tile_n)
    t = _time("t_wave_us", t_wave_us)
    slots = _slots(num_sms, ctas_per_sm)
    idle = wave_count(tiles, num_sms, ctas_per_sm) * slots - tiles
    return idle * t / slots


def best_tile_shape(m: int, n: int, num_sms: int, candidates: Sequence[tuple[int, int, float]],
                    ctas_per_sm: int = 1) -> tuple[int, int, float]:
    _int("m", m), _int("n", n), _slots(num_sms, ctas_per_sm)
    best: tuple[int, int, float] | None = None
    for tm, tn, t_wave in _candidates(candidates, "t_wave_us"):
        t = wave_count(output_tiles(m, n, tm, tn), num_sms, ctas_per_sm) * t_wave
        if best is None or t < best[2]:
            best = (tm, tn, t)
    assert best is not None
    return best


def _k_iters(k: int, tile_k: int) -> int:
    return _ceil_div(_int("k", k), tile_k)


def split_k_time_us(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float, num_sms: int,
                    splits: int, t_partial_us: float, ctas_per_sm: int = 1) -> float:
    tm, tn, tk = _tile(tile)
    tiles = output_tiles(m, n, tm, tn)
    iters = _k_iters(k, tk)
    t_iter = _time("t_iter_us", t_iter_us)
    t_partial = _time("t_partial_us", t_partial_us, positive=False)
    s = _int("splits", splits)
    if s > iters:
        raise ValueError(f"splits must be <= the {iters} K-iterations, got {s}")
    waves = wave_count(tiles * s, num_sms, ctas_per_sm)
    main = waves * _ceil_div(iters, s) * t_iter
    return main + (s * t_partial if s > 1 else 0.0)


def best_split_k(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float, num_sms: int,
                 max_splits: int, t_partial_us: float, ctas_per_sm: int = 1) -> tuple[int, float]:
    tm, tn, tk = _tile(tile)
    top = min(_int("max_splits", max_splits), _k_iters(k, tk))
    best: tuple[int, float] | None = None
    for s in range(1, top + 1):
        t = split_k_time_us(m, n, k, tile, t_iter_us, num_sms, s, t_partial_us, ctas_per_sm)
        if best is None or t < best[1]:
            best = (s, t)
    assert best is not None
    return best


def stream_k(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float, num_sms: int,
             t_fixup_us: float, ctas_per_sm: int = 1) -> tuple[int, int, float]:
    tm, tn, tk = _tile(tile)
    tiles = output_tiles(m, n, tm, tn)
    iters = _k_iters(k, tk)
    t_iter = _time("t_iter_us", t_iter_us)
    t_fixup = _time("t_fixup_us", t_fixup_us, positive=False)
    slots = _slots(num_sms, ctas_per_sm)
    total = tiles * iters
    q = _ceil_div(total, slots)
    # Tile t spans [t*iters, (t+1)*iters); it is split when a worker boundary j*q lies
    # strictly inside. The first boundary above t*iters is the next multiple of q.
    split = 0
    for t in range(tiles):
        start = t * iters
        nxt = (start // q + 1) * q
        if nxt < start + iters:
            split += 1
    return q, split, q * t_iter + (t_fixup if split else 0.0)


def wave_trimmed_chunk(budget: int, n: int, tile_m: int, tile_n: int, num_sms: int,
                       ctas_per_sm: int = 1) -> int:
    _int("budget", budget)
    slots = _slots(num_sms, ctas_per_sm)
    n_tiles = _ceil_div(_int("n", n), _int("tile_n", tile_n))
    full = output_tiles(budget, n, tile_m, tile_n) // slots * slots
    rows = full // n_tiles
    if rows == 0:
        return budget
    return min(budget, rows * tile_m)


def compare_fixes(m: int, n: int, k: int, num_sms: int, tile: tuple[int, int, int], t_iter_us: float,
                  candidates: Sequence[tuple[int, int, float]], max_splits: int, t_partial_us: float,
                  t_fixup_us: float, ctas_per_sm: int = 1) -> dict[str, tuple[int, float]]:
    tm, tn, tk = _tile(tile)
    iters = _k_iters(k, tk)
    t_iter = _time("t_iter_us", t_iter_us)
    cands = _candidates(candidates, "t_iter_us")
    t_wave = iters * t_iter
    base = gemm_time_us(m, n, tm, tn, num_sms, t_wave, ctas_per_sm)
    options = [(tm, tn, t_wave)] + [(a, b, iters * c) for a, b, c in cands]
    _, _, t_tile = best_tile_shape(m, n, num_sms, options, ctas_per_sm)
    _, t_split = best_split_k(m, n, k, tile, t_iter, num_sms, max_splits, t_partial_us, ctas_per_sm)
    _, _, t_stream = stream_k(m, n, k, tile, t_iter, num_sms, t_fixup_us, ctas_per_sm)
    chunk = wave_trimmed_chunk(m, n, tm, tn, num_sms, ctas_per_sm)
    t_chunk = gemm_time_us(chunk, n, tm, tn, num_sms, t_wave, ctas_per_sm)
    return {
        "baseline": (m, base),
        "tile_shape": (m, t_tile),
        "split_k": (m, t_split),
        "stream_k": (m, t_stream),
        "scheduler": (chunk, t_chunk),
    }


ASSUMED_TILE = (128, 256)   # a common Hopper bf16 cuBLAS/CUTLASS tile; not measured here
CHUNK_STEP = 16


def _measured(value: object) -> dict[int, float]:
    if not isinstance(value, dict):
        raise TypeError(f"measured must be a dict of token count -> microseconds, got "
                        f"{type(value).__name__}")
    out: dict[int, float] = {}
    for m, t in value.items():
        if isinstance(m, bool) or not isinstance(m, int):
            raise TypeError(f"measured: token count {m!r} is not an int")
        if m < 1:
            raise ValueError(f"measured: token count {m} is below 1")
        out[m] = _time(f"measured[{m}]", t)
    return out


def plan_chunk(budget: int, n: int, k: int, num_sms: int,
               measured: dict[int, float] | None = None) -> int:
    """The prefill chunk, a multiple of 16 in 16..budget, with the least time per token.

    With ``measured`` (token count -> measured µs of this GEMM on this GPU): the measured
    multiple of 16 within the budget with the least measured time per token, the larger on a
    tie; profile-guided, as autotuners choose, since the measured sweep shows effects the wave
    model does not (kernel switches). Without it, or when it holds no such chunk: the wave
    model with one assumed tile shape, where a wave costs the same whatever its fill, so time
    per token is ``waves(M) / M`` times a constant; K scales every wave alike and drops out.
    """
    _int("budget", budget, CHUNK_STEP)
    _int("n", n)
    _int("k", k)
    _int("num_sms", num_sms)
    times = {} if measured is None else _measured(measured)
    chunks = range(CHUNK_STEP, budget + 1, CHUNK_STEP)
    timed = [m for m in chunks if m in times]
    if timed:
        return min(timed, key=lambda m: (times[m] / m, -m))
    tm, tn = ASSUMED_TILE
    best, best_cost = CHUNK_STEP, None
    for m in chunks:
        waves = wave_count(output_tiles(m, n, tm, tn), num_sms)
        if best_cost is None or waves * best <= best_cost * m:   # waves/m <= best ratio
            best, best_cost = m, waves
    return best
