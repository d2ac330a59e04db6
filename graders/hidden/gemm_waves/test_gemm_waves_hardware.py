"""chunk_on_hardware: the candidate's plan_chunk, given a measured GEMM sweep over M, scored
on that sweep.

Data, the first that exists: every ``measured`` ``gemm_m_sweep`` fixture in hardware_fixtures/
(this project's recorder: bf16, rows {m, n, k, dtype, median_us}, fixture["gpu"]["sms"]); the
live GPU (graders.hardware.live); the ``published`` ``gemm_m_sweep`` fixtures (microsoft/vidur's
H100 profiles, fp16: graded series and budgets by the prompt's rule, hw_check.published_series
and PUBLISHED_BUDGETS). Without any, the test skips and the item is not counted. For each
series and budget, ``plan_chunk(budget, n, k, sms, sweep)`` gets the sweep as {M: median_us}
and its chunk's time per token is compared with the best chunk up to the budget
(``hw_check.chunk_regret``). The test records what graded it (``graded_on``), which the grade
report shows beside the item. Also here, under ``waves`` (CPU, always): the candidate's waves
on a synthetic staircase through the same fitting code the project's suite uses to check the
kata's premise on measured sweeps.
"""

from __future__ import annotations

from typing import Any

import pytest

from graders.hidden.gemm_waves import hw_check
from graders.impl import kata_impl

gw = kata_impl("gemm_waves")

# (where, SMs, {series name: (n, k, series)}, budgets, what graded it)
Data = tuple[str, int, dict[str, tuple[int, int, hw_check.Series]], tuple[int, ...], str]
PUBLISHED_NOTE = "graded on published H100 measurements (microsoft/vidur, 2024, fp16)"
MEASURED_NOTE = "graded on this project's recorded measurements ({gpu}, {date}, bf16)"
LIVE_NOTE = "graded on this machine's GPU ({sms} SMs, bf16, timed now)"


def _waves_fn(slots: int) -> hw_check.WavesFn:
    def waves(m: int, n: int, tm: int, tn: int) -> int:
        return gw.wave_count(gw.output_tiles(m, n, tm, tn), slots)
    return waves


def _fixtures(kind: str) -> list[dict[str, Any]]:
    try:
        from graders.hardware import fixtures
    except ImportError:   # the hardware package is not on this branch yet
        return []
    return [fx for fx in fixtures.find("gemm_m_sweep", kind=kind)
            if isinstance(fx["gpu"], dict) and fx["gpu"].get("sms")]


def _measured() -> list[Data]:
    out = []
    for fx in _fixtures("measured"):
        series = {f"N={n} K={k} {dtype}": (n, k, s)
                  for (n, k, dtype), s in hw_check.series_from_rows(fx.get("rows", [])).items()}
        if series:
            note = MEASURED_NOTE.format(gpu=fx["gpu"]["name"], date=fx["provenance"]["date"])
            out.append((fx.get("_path", fx["name"]), int(fx["gpu"]["sms"]), series,
                        hw_check.BUDGETS, note))
    return out


def _published() -> list[Data]:
    out = []
    for fx in _fixtures("published"):
        series = hw_check.published_series(fx)
        if series:
            out.append((fx.get("_path", fx["name"]), int(fx["gpu"]["sms"]), series,
                        hw_check.PUBLISHED_BUDGETS, PUBLISHED_NOTE))
    return out


def _live() -> list[Data]:
    from graders.hardware import live
    n, k = hw_check.LIVE_N, hw_check.LIVE_K
    series = [(m, live.time_gemm(m, n, k)) for m in hw_check.LIVE_M]
    sms = live.device_sms()
    return [("live GPU", sms, {f"N={n} K={k} bf16": (n, k, series)},
             hw_check.BUDGETS, LIVE_NOTE.format(sms=sms))]


def _data() -> list[Data]:
    measured = _measured()
    if measured:
        return measured
    try:
        from graders.hardware import live
        reason = live.gpu_reason()
    except ImportError as exc:
        reason = f"graders.hardware is not importable ({exc})"
    if reason is None:
        return _live()
    published = _published()
    if published:
        return published
    pytest.skip(f"not counted (no data): no gemm_m_sweep fixture in hardware_fixtures/ and no "
                f"GPU: {reason}")


@pytest.mark.rubric("chunk_on_hardware")
def test_chunk_regret_on_measured_sweep(record_property):
    """Rules: Chunk contract; Measured sweep; Chunk regret"""
    failures, graded, notes = [], 0, []
    for where, sms, all_series, budgets, note in _data():
        notes.append(note)
        for name, (n, k, series) in all_series.items():
            sweep = dict(series)
            for budget in budgets:
                if budget > series[-1][0]:
                    continue
                chosen = gw.plan_chunk(budget, n, k, sms, dict(sweep))
                assert type(chosen) is int and chosen % 16 == 0 and 16 <= chosen <= budget, (
                    f"plan_chunk({budget}, {n}, {k}, {sms}, sweep) must return a multiple of 16 "
                    f"in 16..{budget}, got {chosen!r}")
                regret = hw_check.chunk_regret(series, chosen, budget)
                graded += 1
                if regret > hw_check.MAX_CHUNK_REGRET:
                    failures.append(f"{where}: {name} (N={n} K={k}) on {sms} SMs, budget "
                                    f"{budget}: chunk {chosen} costs {regret:.1%} more per token "
                                    "than the best")
    record_property("graded_on", "; ".join(dict.fromkeys(notes)))
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
