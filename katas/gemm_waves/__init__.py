"""gemm_waves: tiles, waves and the price of a partial wave.

Fill in every function. The prompt, with every rule and the cost models, is
katas/gemm_waves/README.md; run the public tests with ``nox -s kata -- gemm_waves``.

``slots = num_sms * ctas_per_sm`` is the number of CTAs the GPU runs at once. Times are
microseconds. ``tile`` is ``(tile_m, tile_n, tile_k)``. Non-int counts raise TypeError,
out-of-range values ValueError (see the README's "Input checking").
"""

from __future__ import annotations

from collections.abc import Sequence

_PROMPT = "see katas/gemm_waves/README.md"


def output_tiles(m: int, n: int, tile_m: int, tile_n: int) -> int:
    """Output tiles of an M x N result: ``ceil(m / tile_m) * ceil(n / tile_n)``."""
    raise NotImplementedError(f"output_tiles ({_PROMPT})")


def wave_count(tiles: int, num_sms: int, ctas_per_sm: int = 1) -> int:
    """Waves needed to run ``tiles`` CTAs on ``slots`` at a time: ``ceil(tiles / slots)``."""
    raise NotImplementedError(f"wave_count ({_PROMPT})")


def wave_efficiency(tiles: int, num_sms: int, ctas_per_sm: int = 1) -> float:
    """``tiles / (waves * slots)``: in (0, 1], exactly 1.0 iff tiles is a multiple of slots."""
    raise NotImplementedError(f"wave_efficiency ({_PROMPT})")


def gemm_time_us(m: int, n: int, tile_m: int, tile_n: int, num_sms: int, t_wave_us: float,
                 ctas_per_sm: int = 1) -> float:
    """``waves * t_wave_us``: every wave costs the same, full or not."""
    raise NotImplementedError(f"gemm_time_us ({_PROMPT})")


def wave_waste_us(m: int, n: int, tile_m: int, tile_n: int, num_sms: int, t_wave_us: float,
                  ctas_per_sm: int = 1) -> float:
    """``(waves - tiles / slots) * t_wave_us``: the idle part of the last wave, in µs."""
    raise NotImplementedError(f"wave_waste_us ({_PROMPT})")


def best_tile_shape(m: int, n: int, num_sms: int, candidates: Sequence[tuple[int, int, float]],
                    ctas_per_sm: int = 1) -> tuple[int, int, float]:
    """The ``(tile_m, tile_n, t_wave_us)`` candidate with the least ``gemm_time_us``.

    Returns ``(tile_m, tile_n, time_us)``; on a tie, the candidate listed first.
    """
    raise NotImplementedError(f"best_tile_shape ({_PROMPT})")


def split_k_time_us(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float,
                    num_sms: int, splits: int, t_partial_us: float, ctas_per_sm: int = 1) -> float:
    """Split-K time: ``ceil(tiles*s/slots) * ceil(k_iters/s) * t_iter_us`` plus the reduction.

    The reduction is ``s * t_partial_us`` when ``s > 1``, else 0. ``k_iters = ceil(k / tile_k)``;
    ``1 <= splits <= k_iters``.
    """
    raise NotImplementedError(f"split_k_time_us ({_PROMPT})")


def best_split_k(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float,
                 num_sms: int, max_splits: int, t_partial_us: float,
                 ctas_per_sm: int = 1) -> tuple[int, float]:
    """``(s, time_us)`` minimising ``split_k_time_us`` over ``s`` in 1 .. min(max_splits, k_iters).

    On a tie, the smallest ``s``.
    """
    raise NotImplementedError(f"best_split_k ({_PROMPT})")


def stream_k(m: int, n: int, k: int, tile: tuple[int, int, int], t_iter_us: float,
             num_sms: int, t_fixup_us: float, ctas_per_sm: int = 1) -> tuple[int, int, float]:
    """Stream-K: ``(q, split_tiles, time_us)``.

    ``q = ceil(tiles * k_iters / slots)`` K-iterations per worker, worker ``w`` taking
    ``[w*q, (w+1)*q)`` of the tiles' iterations laid end to end; ``split_tiles`` counts the
    tiles with a multiple of ``q`` strictly inside their range; time is
    ``q * t_iter_us`` plus ``t_fixup_us`` if any tile is split.
    """
    raise NotImplementedError(f"stream_k ({_PROMPT})")


def wave_trimmed_chunk(budget: int, n: int, tile_m: int, tile_n: int, num_sms: int,
                       ctas_per_sm: int = 1) -> int:
    """The largest chunk ``c <= budget`` whose tiles fit in the budget's complete waves.

    ``output_tiles(c, ...) <= floor(output_tiles(budget, ...) / slots) * slots``; when no
    chunk of at least one token fits, ``budget`` unchanged.
    """
    raise NotImplementedError(f"wave_trimmed_chunk ({_PROMPT})")


def compare_fixes(m: int, n: int, k: int, num_sms: int, tile: tuple[int, int, int],
                  t_iter_us: float, candidates: Sequence[tuple[int, int, float]],
                  max_splits: int, t_partial_us: float, t_fixup_us: float,
                  ctas_per_sm: int = 1) -> dict[str, tuple[int, float]]:
    """``{"baseline", "tile_shape", "split_k", "stream_k", "scheduler"} -> (tokens, time_us)``.

    ``candidates`` here are ``(tile_m, tile_n, t_iter_us)`` with ``tile``'s ``tile_k``.
    """
    raise NotImplementedError(f"compare_fixes ({_PROMPT})")


def plan_chunk(budget: int, n: int, k: int, num_sms: int,
               measured: dict[int, float] | None = None) -> int:
    """Your prefill chunk for a real GPU: the token count M for a ``[M, K] @ [K, N]`` GEMM.

    A multiple of 16 with ``16 <= M <= budget`` (``budget >= 16``), chosen so that the
    GEMM through cuBLAS on a GPU with ``num_sms`` SMs spends the least time per token.
    ``measured``, when given, maps token counts to this GEMM's measured time in µs on that
    GPU (README, "Your call on hardware": what to return then, and what is bad input).
    Without it, decide how yourself.
    """
    raise NotImplementedError(f"plan_chunk ({_PROMPT})")
