"""Scoring of the hardware_sweep item: do the candidate's waves explain a measured sweep?

Plain functions on plain data (no torch, no implementation import), so that they can be
unit-tested on the CPU with synthetic sweeps (see ``synthetic_sweep``).

A *series* is a list of ``(m, median_us)`` at fixed N, K and dtype, sorted by M. For each
tile shape in ``TILE_SHAPES`` the candidate's waves give a prediction ``waves(m) * t_wave``;
``t_wave`` is fitted by least squares through the origin. The best shape (least median
relative error) must beat the ideal model ``tiles(m) / slots * t_wave`` (also fitted) and
stay within ``MAX_MEDIAN_REL_ERR``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import Any

TILE_SHAPES: tuple[tuple[int, int], ...] = ((128, 128), (128, 256), (256, 128))
MAX_MEDIAN_REL_ERR = 0.15
MIN_POINTS = 8
# The live sweep: Llama-3.1-8B MLP up-projection (N = intermediate, K = hidden), M in
# steps of 64 tokens across several wave boundaries of 128-row tiles on 108-148 SMs.
LIVE_N, LIVE_K = 14336, 4096
LIVE_M = tuple(range(64, 4096 + 1, 64))

Series = list[tuple[int, float]]
WavesFn = Callable[[int, int, int, int], int]   # (m, n, tile_m, tile_n) -> waves


def fit_scale(times: Sequence[float], model: Sequence[float]) -> float:
    """Least-squares c minimising sum (times - c * model)^2."""
    den = sum(x * x for x in model)
    if den <= 0:
        raise ValueError("the model predicts zero everywhere")
    return sum(t * x for t, x in zip(times, model, strict=True)) / den


def median_rel_error(times: Sequence[float], predicted: Sequence[float]) -> float:
    return statistics.median(abs(p - t) / t for t, p in zip(times, predicted, strict=True))


def fit_error(times: Sequence[float], model: Sequence[float]) -> tuple[float, float]:
    """(fitted scale, median relative error of scale * model against times)."""
    c = fit_scale(times, model)
    return c, median_rel_error(times, [c * x for x in model])


def series_from_rows(rows: Iterable[dict[str, Any]]) -> dict[tuple[int, int, str], Series]:
    """Group ``gemm_m_sweep`` rows by (n, k, dtype); keep series with MIN_POINTS distinct M."""
    out: dict[tuple[int, int, str], dict[int, float]] = {}
    for r in rows:
        key = (int(r["n"]), int(r["k"]), str(r.get("dtype", "bf16")))
        out.setdefault(key, {})[int(r["m"])] = float(r["median_us"])
    return {k: sorted(v.items()) for k, v in out.items() if len(v) >= MIN_POINTS}


def score_series(series: Series, n: int, slots: int, waves_fn: WavesFn) -> dict[str, Any]:
    """Fit every tile shape's wave model and the ideal model; report the best shape."""
    times = [t for _, t in series]
    shapes = {}
    for tm, tn in TILE_SHAPES:
        waves = [float(waves_fn(m, n, tm, tn)) for m, _ in series]
        tiles = [(-(-m // tm)) * (-(-n // tn)) for m, _ in series]
        t_wave, err = fit_error(times, waves)
        _, ideal_err = fit_error(times, [x / slots for x in tiles])
        shapes[(tm, tn)] = {"t_wave_us": t_wave, "median_rel_err": err, "ideal_err": ideal_err}
    best = min(shapes, key=lambda s: shapes[s]["median_rel_err"])
    return {"best_tile": best, **shapes[best], "shapes": shapes}


def verdict(score: dict[str, Any]) -> tuple[bool, str]:
    """Pass when the best shape's waves beat the ideal model and fit within the tolerance."""
    err, ideal = score["median_rel_err"], score["ideal_err"]
    msg = (f"best tile {score['best_tile']}: waves x {score['t_wave_us']:.2f} us fits with median "
           f"relative error {err:.3f}; the no-partial-wave ideal fits with {ideal:.3f}")
    if err >= ideal:
        return False, msg + ": the waves do not explain the measured steps better than the ideal"
    if err > MAX_MEDIAN_REL_ERR:
        return False, msg + f": above the {MAX_MEDIAN_REL_ERR} tolerance"
    return True, msg


def synthetic_sweep(n: int, slots: int, tile: tuple[int, int], t_wave_us: float,
                    ms: Sequence[int], noise: Sequence[float] = ()) -> Series:
    """A perfect wave staircase (times a per-point noise factor) for unit tests of the scoring."""
    tm, tn = tile
    out = []
    for i, m in enumerate(ms):
        waves = -(-((-(-m // tm)) * (-(-n // tn))) // slots)
        f = noise[i % len(noise)] if noise else 1.0
        out.append((m, waves * t_wave_us * f))
    return out
