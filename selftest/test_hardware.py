"""The hardware side: fixture schema, the timing protocol, sweeps, the recorder, the kernels.

Everything here runs on the CPU. The Triton split-KV kernels run in Triton's interpreter
(a subprocess with TRITON_INTERPRET=1) against a float64 numpy attention; the checks that
need a CUDA GPU are skipped without one, with the reason.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from graders.hardware import fixtures, kernels, live, record, sweeps, timing

ROOT = Path(__file__).resolve().parents[1]


# -- fixtures --------------------------------------------------------------------------

@pytest.mark.parametrize("path", fixtures.paths(), ids=lambda p: p.name)
def test_every_fixture_validates(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert fixtures.validate(doc) == []
    assert fixtures.load(path)["sweep"] == doc["sweep"]


def test_fixture_folder_is_not_empty_and_kinds_are_known() -> None:
    docs = fixtures.load_all()
    assert docs, "hardware_fixtures/ holds no fixture"
    assert {d["provenance"]["kind"] for d in docs} <= set(fixtures.KINDS)


def _measured() -> dict[str, Any]:
    return {
        "schema": fixtures.SCHEMA, "name": "x", "sweep": "gemm_m_sweep", "description": "d",
        "gpu": {"name": "NVIDIA H200", "id": "nvidia-h200-sxm-141gb", "sms": 132,
                "memory_gb": 150.0, "clocks": None, "unknown": ["clocks"]},
        "software": {"driver": "570.1", "cuda": "12.8", "torch": "2.13.0", "unknown": []},
        "conditions": {"dtype": "bf16"},
        "rows": [{"m": 16, "n": 4096, "k": 4096, "median_us": 10.0, "min_us": 9.0,
                  "max_us": 12.0, "repetitions": 20}],
        "provenance": {"kind": "measured", "device": "NVIDIA H200", "date": "2026-12-01",
                       "command": "nox -s record -- gemm_waves", "recorder": "r@abc"},
    }


def _published() -> dict[str, Any]:
    doc = _measured()
    doc["rows"] = [{"gpu": "nvidia-h100-sxm-80gb", "time_us": 27.6}]
    doc["gpu"] = "per-row"
    doc["provenance"] = {"kind": "published",
                         "sources": [{"source": "https://example.org/x", "table": "Table 2"}]}
    return doc


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if value is _DELETE:
            del node[last]
        else:
            node[int(last) if isinstance(node, list) else last] = value
    return apply


_DELETE = object()

BROKEN_MEASURED = {
    "wrong schema": (_set("schema", "v0"), "schema"),
    "no sweep": (_set("sweep", _DELETE), "sweep"),
    "undeclared null": (_set("gpu.sms", None), "gpu.sms is null"),
    "missing software field": (_set("software.cuda", _DELETE), "software.cuda is missing"),
    "unknown with a value": (_set("software.unknown", ["torch"]), "has a value"),
    "bool sms": (_set("gpu.sms", True), "gpu.sms"),
    "gpu id not in data": (_set("gpu.id", "nvidia-h900"), "names no data/gpus entry"),
    "no rows": (_set("rows", []), "rows must be a non-empty list"),
    "kind": (_set("provenance.kind", "guessed"), "provenance.kind"),
    "no command": (_set("provenance.command", _DELETE), "provenance.command"),
    "not the recorder": (_set("provenance.command", "python bench.py"), "recorder's"),
    "bad date": (_set("provenance.date", "1 Dec 2026"), "YYYY-MM-DD"),
    "measured cites sources": (_set("provenance.sources", [{"source": "a", "table": "b"}]),
                               "cites no sources"),
    "few repetitions": (_set("rows.0.repetitions", 2), "repetitions"),
    "no median": (_set("rows.0.median_us", _DELETE), "median_us"),
    "median outside": (_set("rows.0.median_us", 13.0), "min <= median <= max"),
    "interpolated row": (_set("rows.0.interpolated", True), "interpolated"),
    "synthetic nested": (_set("conditions.synthetic", "yes"), "synthetic"),
}

BROKEN_PUBLISHED = {
    "no sources": (_set("provenance.sources", []), "provenance.sources"),
    "source without table": (_set("provenance.sources.0.table", ""), "table"),
    "per-row gpu missing": (_set("rows.0.gpu", _DELETE), "has no gpu"),
    "estimated": (_set("rows.0.estimated", 1.0), "estimated"),
}


def test_valid_documents_are_accepted() -> None:
    assert fixtures.validate(_measured()) == []
    assert fixtures.validate(_published()) == []


@pytest.mark.parametrize("case", sorted(BROKEN_MEASURED))
def test_validator_rejects_broken_measured(case: str) -> None:
    doc = _measured()
    mutate, expect = BROKEN_MEASURED[case]
    mutate(doc)
    errors = fixtures.validate(doc)
    assert any(expect in e for e in errors), errors


@pytest.mark.parametrize("case", sorted(BROKEN_PUBLISHED))
def test_validator_rejects_broken_published(case: str) -> None:
    doc = _published()
    mutate, expect = BROKEN_PUBLISHED[case]
    mutate(doc)
    errors = fixtures.validate(doc)
    assert any(expect in e for e in errors), errors


def test_load_names_the_file_and_every_problem(tmp_path: Path) -> None:
    doc = _measured()
    doc["schema"] = "v0"
    doc["rows"][0]["repetitions"] = 1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(fixtures.FixtureError) as info:
        fixtures.load(path)
    assert "bad.json" in str(info.value) and "schema" in str(info.value) \
        and "repetitions" in str(info.value)
    path.write_text("{not json")
    with pytest.raises(fixtures.FixtureError, match="cannot read"):
        fixtures.load(path)


def test_find_filters_by_sweep_and_kind() -> None:
    roofline = fixtures.find("roofline_published")
    assert [d["_path"] for d in roofline] == ["hardware_fixtures/roofline_h100_published.json"]
    assert fixtures.find("roofline_published", kind="measured") == []
    assert fixtures.find("no_such_sweep") == []
    with pytest.raises(ValueError, match="kind"):
        fixtures.find("roofline_published", kind="recorded")


# -- timing ------------------------------------------------------------------------------

class FakeBackend:
    """Records the order of calls; each timed run lasts the next value of ``times``."""

    def __init__(self, times: list[float]) -> None:
        self.times = list(times)
        self.log: list[str] = []

    def flush(self) -> None:
        self.log.append("flush")

    def synchronize(self) -> None:
        self.log.append("sync")

    def timed(self, fn: Callable[[], object]) -> float:
        self.log.append("start")
        fn()
        self.log.append("stop")
        return self.times.pop(0)


def test_measure_protocol_order_and_median() -> None:
    calls: list[str] = []
    backend = FakeBackend([5.0, 1.0, 4.0, 2.0, 3.0])
    m = timing.measure(lambda: calls.append("run") or backend.log.append("run"), backend,
                       warmup=2, repetitions=5)
    # warm-up untimed, then flush before every timed run, each run inside its own timer
    assert backend.log[:3] == ["run", "run", "sync"]
    assert backend.log[3:] == ["flush", "start", "run", "stop"] * 5
    assert len(calls) == 7
    assert (m.median_us, m.min_us, m.max_us, m.repetitions, m.warmup) == (3.0, 1.0, 5.0, 5, 2)
    assert m.samples_us == (5.0, 1.0, 4.0, 2.0, 3.0)


def test_measure_median_of_even_count_and_row() -> None:
    m = timing.measure(lambda: None, FakeBackend([4.0, 1.0, 3.0, 2.0]), warmup=0,
                       repetitions=4)
    assert m.median_us == 2.5
    row = m.as_row()
    assert row["median_us"] == 2.5 and row["repetitions"] == 4 and row["samples_us"] == [4.0, 1.0, 3.0, 2.0]


@pytest.mark.parametrize("kwargs", [{"repetitions": 2}, {"repetitions": True}, {"warmup": -1},
                                    {"warmup": 1.5}])
def test_measure_rejects_bad_settings_before_running(kwargs: dict[str, Any]) -> None:
    ran: list[int] = []
    with pytest.raises(ValueError):
        timing.measure(lambda: ran.append(1), FakeBackend([1.0] * 5), **kwargs)
    assert ran == []


def test_measure_rejects_a_non_positive_time() -> None:
    with pytest.raises(RuntimeError, match="non-positive"):
        timing.measure(lambda: None, FakeBackend([1.0, 0.0, 1.0]), warmup=0, repetitions=3)


def test_flush_buffer_is_twice_the_l2() -> None:
    assert timing.flush_bytes(50 * 2**20) == 100 * 2**20
    assert timing.flush_bytes(0) == 2**20
    with pytest.raises(ValueError):
        timing.flush_bytes(-1)


# -- sweeps -----------------------------------------------------------------------------

def test_split_kv_plan_covers_every_count_up_to_the_blocks() -> None:
    rows = sweeps.plan("split_kv")
    for shape in sweeps.DECODE_SHAPES:
        counts = [r["num_splits"] for r in rows if r["batch"] == shape.batch
                  and r["q_heads"] == shape.q_heads and r["context"] == shape.context]
        blocks = kernels.kv_blocks(shape.context)
        assert counts == list(range(1, min(sweeps.MAX_SPLITS, blocks) + 1))
    grids = [s.batch * s.q_heads for s in sweeps.DECODE_SHAPES]
    # both regimes of the rule: grids far below 132 SMs and grids that already fill them
    assert min(grids) <= 12 and max(grids) >= 0.8 * 132


def test_gemm_plan_crosses_wave_boundaries() -> None:
    rows = sweeps.plan("gemm_waves")
    for g in sweeps.GEMM_SHAPES:
        ms = [r["m"] for r in rows if r["n"] == g.n and r["k"] == g.k]
        assert ms == sorted(set(ms)) and all(m % 16 == 0 for m in ms)
        waves = {-(-(-(-m // 128) * -(-g.n // 256)) // 132) for m in ms}
        assert len(waves) >= 3, (g, waves)


def test_unknown_recording_is_refused() -> None:
    with pytest.raises(ValueError, match="split_kv, gemm_waves"):
        sweeps.plan("roofline")


def test_split_ranges_are_whole_blocks_with_empty_tails() -> None:
    assert kernels.split_ranges(9 * 64, 4) == [(0, 192), (192, 384), (384, 576), (576, 576)]
    assert kernels.split_ranges(100, 1) == [(0, 100)]
    assert kernels.split_ranges(130, 3) == [(0, 64), (64, 128), (128, 130)]
    with pytest.raises(ValueError):
        kernels.split_ranges(0, 1)


# -- recorder ---------------------------------------------------------------------------

def test_recorder_builds_a_valid_measured_fixture() -> None:
    info = {"gpu": {"name": "NVIDIA H200", "id": None, "sms": 132, "memory_gb": 150.0,
                    "clocks": None, "unknown": ["id", "clocks"]},
            "software": {"driver": None, "cuda": "12.8", "torch": "2.13.0", "unknown": ["driver"]}}
    backend = FakeBackend([3.0] * 10**4)
    rows = record.run("gemm_waves", lambda spec: timing.measure(lambda: None, backend, warmup=0,
                                                                repetitions=3),
                      progress=lambda line: None)
    doc = record.build_fixture("gemm_waves", info, rows, "2026-12-01", "nox -s record -- gemm_waves")
    assert fixtures.validate(doc) == []
    assert len(doc["rows"]) == len(sweeps.plan("gemm_waves"))
    assert doc["provenance"]["kind"] == "measured" and doc["sweep"] == "gemm_m_sweep"
    assert doc["rows"][0]["median_us"] == 3.0


def test_recorder_without_a_gpu_says_so_and_writes_nothing(tmp_path: Path) -> None:
    if live.gpu_reason() is None:
        pytest.skip("a GPU is present: the recorder would record")
    before = sorted(p.name for p in fixtures.FIXTURES_DIR.iterdir())
    out = tmp_path / "x.json"
    proc = subprocess.run([sys.executable, "-m", "graders.hardware.record", "split_kv",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == record.EXIT_NO_GPU
    assert "no CUDA GPU here" in proc.stderr and live.gpu_reason() in proc.stderr  # type: ignore[operator]
    assert not out.exists()
    assert sorted(p.name for p in fixtures.FIXTURES_DIR.iterdir()) == before


def test_live_timings_refuse_without_a_gpu() -> None:
    if live.gpu_reason() is None:
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="no GPU"):
        live.time_gemm(16, 16, 16)


# -- the kernels: Triton interpreter on the CPU, the real thing on a GPU --------------------

KERNEL_CASES = [  # (batch, q_heads, kv_heads, context, head_dim, num_splits, q_scale)
    (1, 4, 4, 200, 16, 1, 1.0),        # one split, context not a multiple of the block
    (2, 4, 1, 200, 16, 3, 1.0),        # GQA 4:1, ragged last split
    (1, 2, 2, 9 * 64, 16, 4, 1.0),     # 9 blocks over 4 splits: the last split is empty
    (1, 2, 1, 65, 32, 2, 1.0),         # a split of one key
    (1, 2, 2, 256, 16, 4, 60.0),       # large logits: the online softmax must stay finite
]

_KERNEL_SCRIPT = r"""
import json, sys
import numpy as np, torch
from graders.hardware import kernels
device = sys.argv[1]
errors = []
for (b, hq, hkv, L, d, s, scale) in json.loads(sys.argv[2]):
    q, k, v = kernels.make_decode_inputs(b, hq, hkv, L, d, "cpu", dtype=torch.float32, seed=L + s)
    q = q * scale
    out = kernels.split_kv_decode(q.to(device), k.to(device), v.to(device), s).cpu().double().numpy()
    qn, kn, vn = q.double().numpy(), k.double().numpy(), v.double().numpy()
    want = np.zeros_like(out)
    for i in range(b):
        for h in range(hq):
            sc = kn[i, h // (hq // hkv)] @ qn[i, h] / np.sqrt(d)
            p = np.exp(sc - sc.max())
            want[i, h] = (p / p.sum()) @ vn[i, h // (hq // hkv)]
    errors.append(float(np.abs(out - want).max()) if np.isfinite(out).all() else float("inf"))
print(json.dumps(errors))
"""


def _run_kernels(device: str, env: dict[str, str]) -> list[float]:
    proc = subprocess.run([sys.executable, "-c", _KERNEL_SCRIPT, device, json.dumps(KERNEL_CASES)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None
                    or importlib.util.find_spec("triton") is None,
                    reason="torch and triton are not installed (nox -s tests installs them)")
def test_split_kv_kernel_matches_attention_in_the_interpreter() -> None:
    errors = _run_kernels("cpu", {"TRITON_INTERPRET": "1"})
    assert all(e < 1e-5 for e in errors), errors


@pytest.mark.skipif(live.gpu_reason() is not None, reason=f"no GPU: {live.gpu_reason()}")
def test_split_kv_kernel_matches_attention_on_the_gpu() -> None:
    errors = _run_kernels("cuda", {})
    assert all(e < 1e-4 for e in errors), errors


# -- the rubric flag ---------------------------------------------------------------------

@pytest.mark.parametrize(("line", "ok"), [("hardware = true", True), ("hardware = 1", False),
                                          ("hardware = true\ngraded_by = \"interviewer\"", False)])
def test_hardware_flag_in_kata_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    line: str, ok: bool) -> None:
    from graders import catalog

    text = (catalog.KATAS_DIR / "roofline" / "kata.toml").read_text(encoding="utf-8")
    first = text.index("[[rubric]]")
    head, tail = text[:first], text[first:]
    tail = tail.replace("\n", f"\n{line}\n", 1)
    (tmp_path / "roofline").mkdir()
    (tmp_path / "roofline" / "kata.toml").write_text(head + tail, encoding="utf-8")
    monkeypatch.setattr(catalog, "KATAS_DIR", tmp_path)
    if ok:
        kata = catalog.load("roofline")
        assert kata.rubric[0].hardware and not kata.rubric[1].hardware
    else:
        with pytest.raises(catalog.CatalogError, match="hardware must be true or false"):
            catalog.load("roofline")


@pytest.mark.parametrize("path", sorted(fixtures.GPUS_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_gpu_datasheet_entries_validate(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert fixtures.validate_gpu_entry(doc) == []
    assert doc["id"] == path.stem


def test_gpu_entry_validator_rejects_an_uncited_figure() -> None:
    doc = json.loads((fixtures.GPUS_DIR / "nvidia-h100-sxm-80gb.json").read_text())
    for mutate, expect in [(lambda d: d.update(provenance="measured"), "datasheet"),
                           (lambda d: d.update(sources=[]), "sources"),
                           (lambda d: d.update(sm_count=True), "sm_count"),
                           (lambda d: d["tensor_tflops"]["bf16"].clear(), "cite its source"),
                           (lambda d: d.update(interpolated=True), "interpolated")]:
        broken = copy.deepcopy(doc)
        mutate(broken)
        assert any(expect in e for e in fixtures.validate_gpu_entry(broken)), expect


# -- the katas' hardware scoring (plain functions; the data here is made up in the test) ---

def test_split_kv_regret_and_verdict() -> None:
    from graders.hidden.split_kv import regret as rg

    times = {1: 100.0, 2: 60.0, 4: 50.0, 8: 55.0}
    assert rg.regret(times, 4) == 0.0
    assert rg.regret(times, 2) == pytest.approx(0.2)
    assert rg.regret(times, 1) == pytest.approx(1.0)
    with pytest.raises(KeyError):
        rg.regret(times, 3)
    shape = rg.shape_of(132, 1, 8, 1, 65536, 128)
    assert shape[-1] == 1024 and rg.verdict({shape: 0.25}) is None
    assert "over" in (rg.verdict({shape: 0.2501}) or "")
    rows = [{"batch": 1, "q_heads": 8, "kv_heads": 1, "context": 4096, "head_dim": 128,
             "num_splits": s, "median_us": t} for s, t in times.items()]
    tables = rg.split_tables([{"gpu": {"sms": 132}, "rows": rows}])
    assert tables == {rg.shape_of(132, 1, 8, 1, 4096, 128): times}
    with pytest.raises(ValueError, match="twice"):
        rg.split_tables([{"gpu": {"sms": 132}, "rows": rows + rows[:1]}])


def test_split_kv_constants_follow_the_recorder() -> None:
    from graders.hidden.split_kv import regret as rg

    assert (rg.BLOCK_N, rg.MAX_SPLITS) == (kernels.BLOCK_N, sweeps.MAX_SPLITS)


def test_gemm_chunk_regret() -> None:
    from graders.hidden.gemm_waves import hw_check

    # per-token times: M=32 is cheapest (1.0/token); M=48 costs 1.5/token
    series = [(16, 32.0), (32, 32.0), (48, 72.0), (64, 80.0)]
    assert hw_check.chunk_regret(series, 32, 48) == 0.0
    assert hw_check.chunk_regret(series, 48, 48) == pytest.approx(0.5)
    assert hw_check.chunk_regret(series, 16, 64) == pytest.approx(1.0)
    assert hw_check.chunk_regret(series, 64, 64) == pytest.approx(0.25)
    with pytest.raises(KeyError):
        hw_check.chunk_regret(series, 40, 64)
    with pytest.raises(KeyError):
        hw_check.chunk_regret(series, 64, 48)       # past the budget
    with pytest.raises(ValueError, match="lacks"):
        hw_check.chunk_regret(series[:2], 32, 64)


def test_gemm_sweep_plan_covers_the_graded_budgets() -> None:
    from graders.hidden.gemm_waves import hw_check

    for g in sweeps.GEMM_SHAPES:
        ms = set(g.ms())
        for budget in hw_check.BUDGETS:
            assert set(range(hw_check.CHUNK_STEP, budget + 1, hw_check.CHUNK_STEP)) <= ms


def test_gemm_wave_fit_tells_a_staircase_from_a_line() -> None:
    from graders.hidden.gemm_waves import hw_check
    from solutions import gemm_waves as ref

    def waves(m: int, n: int, tm: int, tn: int) -> int:
        return ref.wave_count(ref.output_tiles(m, n, tm, tn), 132)

    stairs = hw_check.synthetic_sweep(14336, 132, (128, 256), 30.0, hw_check.LIVE_M)
    ok, msg = hw_check.verdict(hw_check.score_series(stairs, 14336, 132, waves))
    assert ok, msg
    line = [(m, 0.01 * m + 5.0) for m in hw_check.LIVE_M]   # no steps at all
    ok, msg = hw_check.verdict(hw_check.score_series(line, 14336, 132, waves))
    assert not ok, msg


@pytest.mark.parametrize("doc", fixtures.find("gemm_m_sweep", kind="measured") or [None],
                         ids=lambda d: d["_path"] if d else "none")
def test_measured_gemm_sweeps_show_wave_steps(doc: dict[str, Any] | None) -> None:
    """The kata's premise on real data: the reference's waves explain a measured sweep."""
    if doc is None:
        pytest.skip("no measured gemm_m_sweep fixture yet (nox -s record -- gemm_waves on a GPU)")
    from graders.hidden.gemm_waves import hw_check
    from solutions import gemm_waves as ref

    sms = doc["gpu"]["sms"]

    def waves(m: int, n: int, tm: int, tn: int) -> int:
        return ref.wave_count(ref.output_tiles(m, n, tm, tn), sms)

    for (n, _k, _dtype), series in hw_check.series_from_rows(doc["rows"]).items():
        ok, msg = hw_check.verdict(hw_check.score_series(series, n, sms, waves))
        assert ok, f"{doc['_path']} N={n}: {msg}"
