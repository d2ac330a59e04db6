"""Trivial answers: zeros and no errors.

Rubric: *
"""

from __future__ import annotations

from collections.abc import Sequence


def output_tiles(m: int, n: int, tile_m: int, tile_n: int) -> int:
    return 0


def wave_count(tiles: int, num_sms: int, ctas_per_sm: int = 1) -> int:
    return 0


def wave_efficiency(tiles: int, num_sms: int, ctas_per_sm: int = 1) -> float:
    return 0.0


def gemm_time_us(m: int, n: int, tile_m: int, tile_n: int, num_sms: int, t_wave_us: float,
                 ctas_per_sm: int = 1) -> float:
    return 0.0


def wave_waste_us(m: int, n: int, tile_m: int, tile_n: int, num_sms: int, t_wave_us: float,
                  ctas_per_sm: int = 1) -> float:
    return 0.0


def best_tile_shape(m: int, n: int, num_sms: int, candidates: Sequence[tuple[int, int, float]],
                    ctas_per_sm: int = 1) -> tuple[int, int, float]:
    return (0, 0, 0.0)


def split_k_time_us(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float, num_sms: int,
                    splits: int, t_partial_us: float, ctas_per_sm: int = 1) -> float:
    return 0.0


def best_split_k(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float, num_sms: int,
                 max_splits: int, t_partial_us: float, ctas_per_sm: int = 1) -> tuple[int, float]:
    return (0, 0.0)


def stream_k(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float, num_sms: int,
             t_fixup_us: float, ctas_per_sm: int = 1) -> tuple[int, int, float]:
    return (0, 0, 0.0)


def wave_trimmed_chunk(budget: int, n: int, tile_m: int, tile_n: int, num_sms: int,
                       ctas_per_sm: int = 1) -> int:
    return 0


def compare_fixes(m: int, n: int, k: int, num_sms: int, tile: tuple[int, int, int], t_iter_us: float,
                  candidates: Sequence[tuple[int, int, float]], max_splits: int, t_partial_us: float,
                  t_fixup_us: float, ctas_per_sm: int = 1) -> dict[str, tuple[int, float]]:
    return {}
