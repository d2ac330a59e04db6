"""The hardware items end to end, on the CPU, with a made-up clock.

A recording is made by the real recorder code (``record.run`` and ``build_fixture``) with
timings from a formula, written to a temporary folder (never to hardware_fixtures/), and
the katas' hidden hardware tests are run against it with the reference solution; then the
same with a pretend live GPU (selftest/fake_gpu.py). Each path is run twice: with timings
under which any valid choice is optimal (the reference passes), and with timings that
punish exactly the reference's choice (the reference fails). gemm_waves' reference picks
from the sweep it is given, so no timing punishes it; there the punished choice is its wave
model's (the choice without a sweep), and the submission that fails is the mutant that
ignores the sweep (``sweep_ignored``). So the recorded and live paths both run, and both can
fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from graders.hardware import fixtures, record, timing
from selftest import fake_gpu

ROOT = Path(__file__).resolve().parents[1]
HARDWARE_TESTS = {
    "split_kv": ("graders/hidden/split_kv/test_split_kv_hardware.py", "split_count_on_hardware"),
    "gemm_waves": ("graders/hidden/gemm_waves/test_gemm_waves_hardware.py", "chunk_on_hardware"),
}
INFO = {"gpu": {"name": "FAKE GPU (selftest)", "id": None, "sms": fake_gpu.SMS, "memory_gb": None,
                "clocks": None, "unknown": ["id", "memory_gb", "clocks"]},
        "software": {"driver": None, "cuda": None, "torch": None,
                     "unknown": ["driver", "cuda", "torch"]}}


class _Constant:
    def __init__(self, us: float) -> None:
        self.us = us

    def flush(self) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def timed(self, fn: Any) -> float:
        return self.us


def _fake_recording(name: str, folder: Path) -> None:
    def measure(spec: dict[str, Any]) -> timing.Measurement:
        if name == "split_kv":
            us = fake_gpu.split_time(spec["batch"], spec["q_heads"], spec["kv_heads"],
                                     spec["context"], spec["head_dim"], spec["num_splits"])
        else:
            us = fake_gpu.gemm_time(spec["m"], spec["n"], spec["k"])
        return timing.measure(lambda: None, _Constant(us), warmup=0, repetitions=3)

    rows = record.run(name, measure, progress=lambda line: None)
    doc = record.build_fixture(name, INFO, rows, "2026-12-01", f"nox -s record -- {name}")
    assert fixtures.validate(doc) == []
    (folder / f"{name}_fake_measured.json").write_text(json.dumps(doc), encoding="utf-8")


# Who must fail under "punish": the reference, except where it reads the data it is given.
PUNISHED_IMPL = {"split_kv": "solutions", "gemm_waves": "mutant:sweep_ignored"}


def _run(kata: str, env: dict[str, str], plugin: bool) -> dict[str, str]:
    path, item = HARDWARE_TESTS[kata]
    report = Path(env["REPORT"])
    impl = PUNISHED_IMPL[kata] if env.get("FAKE_GPU_MODE") == "punish" else "solutions"
    args = [sys.executable, "-m", "pytest", path, "--impl", impl, "-q", "-p", "no:randomly",
            "--junitxml", str(report), "-o", "junit_family=xunit2"]
    if plugin:
        args += ["-p", "selftest.fake_gpu"]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})
    out: dict[str, str] = {}
    for case in ET.parse(report).iter("testcase"):
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                state = "failed"
            elif child.tag == "skipped":
                state = "skipped"
        out[case.get("name", "")] = state
    assert out, proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


@pytest.mark.parametrize("kata", sorted(HARDWARE_TESTS))
@pytest.mark.parametrize("mode", ["flat", "punish"])
def test_recorded_path(kata: str, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GPU_MODE", mode)
    _fake_recording(kata, tmp_path)
    outcomes = _run(kata, {"INFERENCE_KATAS_FIXTURES": str(tmp_path), "FAKE_GPU_MODE": mode,
                           "REPORT": str(tmp_path / "r.xml")}, plugin=False)
    graded = [s for name, s in outcomes.items() if "recorded" in name or "measured" in name]
    assert graded and "skipped" not in graded, outcomes
    assert set(graded) == ({"passed"} if mode == "flat" else {"failed"}), outcomes


@pytest.mark.parametrize("kata", sorted(HARDWARE_TESTS))
@pytest.mark.parametrize("mode", ["flat", "punish"])
def test_live_path(kata: str, mode: str, tmp_path: Path) -> None:
    empty = tmp_path / "fixtures"
    empty.mkdir()
    outcomes = _run(kata, {"INFERENCE_KATAS_FIXTURES": str(empty), "FAKE_GPU_MODE": mode,
                           "REPORT": str(tmp_path / "r.xml")}, plugin=True)
    graded = [s for name, s in outcomes.items() if "live" in name or "measured" in name]
    assert graded and "skipped" not in graded, outcomes
    if mode == "flat":
        assert set(graded) == {"passed"}, outcomes
    else:
        assert "failed" in graded, outcomes
