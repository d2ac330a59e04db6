"""chunk_on_hardware: the candidate's plan_chunk against a measured bf16 GEMM sweep over M.

Data: every measured ``gemm_m_sweep`` fixture in hardware_fixtures/ (rows {m, n, k, dtype,
median_us}, fixture["gpu"]["sms"]); without one, the live GPU (graders.hardware.live);
without either, the test skips and the item is not counted. For each series and each
budget in ``hw_check.BUDGETS`` the chunk's time per token is compared with the best chunk
up to the budget (``hw_check.chunk_regret``). Also here, under ``waves`` (CPU, always): the
candidate's waves on a synthetic staircase through the same fitting code the project's
suite uses to check the kata's premise on measured sweeps.
"""

from __future__ import annotations

from typing import Any

import pytest

from graders.hidden.gemm_waves import hw_check
from graders.impl import kata_impl

gw = kata_impl("gemm_waves")


def _waves_fn(slots: int) -> hw_check.WavesFn:
    def waves(m: int, n: int, tm: int, tn: int) -> int:
        return gw.wave_count(gw.output_tiles(m, n, tm, tn), slots)
    return waves


def _measured() -> list[tuple[str, int, dict[tuple[int, int, str], hw_check.Series]]]:
    try:
        from graders.hardware import fixtures
    except ImportError:   # the hardware package is not on this branch yet
        return []
    out = []
    for fx in fixtures.find("gemm_m_sweep", kind="measured"):
        gpu: Any = fx["gpu"]
        if not isinstance(gpu, dict) or not gpu.get("sms"):
            continue
        series = hw_check.series_from_rows(fx.get("rows", []))
        if series:
            out.append((fx.get("_path", fx["name"]), int(gpu["sms"]), series))
    return out


def _live() -> list[tuple[str, int, dict[tuple[int, int, str], hw_check.Series]]]:
    from graders.hardware import live
    n, k = hw_check.LIVE_N, hw_check.LIVE_K
    series = [(m, live.time_gemm(m, n, k)) for m in hw_check.LIVE_M]
    return [("live GPU", live.device_sms(), {(n, k, "bf16"): series})]


def _data() -> list[tuple[str, int, dict[tuple[int, int, str], hw_check.Series]]]:
    measured = _measured()
    if measured:
        return measured
    try:
        from graders.hardware import live
    except ImportError as exc:
        pytest.skip(f"no measured gemm_m_sweep fixture in hardware_fixtures/ and no GPU: "
                    f"graders.hardware is not importable ({exc})")
    reason = live.gpu_reason()
    if reason is not None:
        pytest.skip(f"no measured gemm_m_sweep fixture in hardware_fixtures/ and no GPU: {reason}")
    return _live()


@pytest.mark.rubric("chunk_on_hardware")
def test_chunk_regret_on_measured_sweep():
    failures, graded = [], 0
    for where, sms, all_series in _data():
        for (n, k, dtype), series in all_series.items():
            for budget in hw_check.BUDGETS:
                if budget > series[-1][0]:
                    continue
                chosen = gw.plan_chunk(budget, n, k, sms)
                assert type(chosen) is int and chosen % 16 == 0 and 16 <= chosen <= budget, (
                    f"plan_chunk({budget}, {n}, {k}, {sms}) must return a multiple of 16 in "
                    f"16..{budget}, got {chosen!r}")
                regret = hw_check.chunk_regret(series, chosen, budget)
                graded += 1
                if regret > hw_check.MAX_CHUNK_REGRET:
                    failures.append(f"{where}: N={n} K={k} {dtype} on {sms} SMs, budget {budget}: "
                                    f"chunk {chosen} costs {regret:.1%} more per token than the best")
    assert graded, "no series covered any budget"
    assert not failures, "\n".join(failures)


@pytest.mark.rubric("waves")
@pytest.mark.parametrize("slots,tile", [(132, (128, 256)), (108, (128, 128)), (132, (256, 128))])
def test_waves_explain_a_synthetic_staircase(slots, tile):
    """The hardware scoring on a perfect wave staircase (3% noise): the candidate's waves
    must pass it and the no-partial-wave ideal must not. Runs on the CPU, always."""
    n = hw_check.LIVE_N
    series = hw_check.synthetic_sweep(n, slots, tile, 30.0, hw_check.LIVE_M,
                                      noise=(1.0, 1.03, 0.98, 1.01))
    ok, msg = hw_check.verdict(hw_check.score_series(series, n, slots, _waves_fn(slots)))
    assert ok, f"a staircase of {tile} tiles on {slots} SMs: {msg}"

    def ideal(m: int, n_: int, tm: int, tn: int) -> float:
        return (-(-m // tm)) * (-(-n_ // tn)) / slots

    bad, _ = hw_check.verdict(hw_check.score_series(series, n, slots, ideal))  # type: ignore[arg-type]
    assert not bad, "the scoring must reject the no-partial-wave model on a staircase"
