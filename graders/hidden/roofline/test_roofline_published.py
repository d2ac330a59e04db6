"""Sanity checks against published H100 measurements (hardware_fixtures/roofline_h100_published.json).

These check that the candidate's operands give physically sensible answers on real
measurements: achieved bandwidth of decode attention kernels, achievable dense matmul
throughput. Every number comes from the fixture, with its citation.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import pytest

from graders.impl import kata_impl
from tests.roofline.helpers import ROOT, gpu

rf = kata_impl("roofline")
FIXTURE = ROOT / "hardware_fixtures" / "roofline_h100_published.json"


@lru_cache(maxsize=None)
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def attention_only(row: dict[str, Any]) -> dict[str, Any]:
    """One attention layer with the kernel's head geometry; its weights are not counted."""
    q, kv, d = row["q_heads"], row["kv_heads"], row["head_dim"]
    return {"hidden_size": q * d, "num_attention_heads": q, "num_key_value_heads": kv,
            "head_dim": d, "num_hidden_layers": 1, "vocab_size": 1, "intermediate_size": 1}


@pytest.mark.rubric("mbu_operands")
@pytest.mark.parametrize("row", fixture()["tables"]["decode_attention_bandwidth"], ids=lambda r: r["id"])
def test_decode_attention_kernels(row):
    g = gpu(row["gpu"])
    ctx = [row["seqlen_k"]] * row["batch"]
    got = rf.mbu(attention_only(row), g, ctx, row["time_us"] * 1e-6, 1, 0.0, row["dtype_bytes"])
    want = row["achieved_gb_s"] / g["memory_bandwidth_gb_s"]
    assert got == pytest.approx(want, rel=0.015), (
        f"{row['id']} ({row['source']}): the kernel read the KV of {row['batch']} x "
        f"{row['seqlen_k']} tokens in {row['time_us']} us = {row['achieved_gb_s']} GB/s of "
        f"{g['memory_bandwidth_gb_s']} GB/s, MBU {want:.3f}; got {got!r}")
    assert 0 < got < 1, "a measured kernel cannot beat the datasheet bandwidth"


@pytest.mark.rubric("ridge")
@pytest.mark.parametrize("row", fixture()["tables"]["achievable_matmul_tflops"],
                         ids=lambda r: f"{r['gpu']}-{r['dtype']}")
def test_achievable_matmul_below_dense_peak(row):
    g = gpu(row["gpu"])
    peak_tflops = rf.ridge_point(g, row["dtype"]) * g["memory_bandwidth_gb_s"] * 1e9 / 1e12
    ratio = peak_tflops / row["tflops"]
    assert 1.0 < ratio < 1.5, (
        f"a measured {row['dtype']} matmul reached {row['tflops']} TFLOP/s on {row['gpu']} "
        f"({row['source']}); the ridge point implies a peak of {peak_tflops:.1f}, "
        f"{ratio:.2f}x that: the dense peak is 1.1-1.4x what matmuls reach, the sparse one 2x more")


@pytest.mark.rubric("units")
@pytest.mark.parametrize("row", fixture()["tables"]["stream_read_gb_s"], ids=lambda r: r["gpu"])
def test_stream_read_close_to_datasheet(row):
    # A pure read of W bytes at the measured STREAM rate has MBU = measured / datasheet (~0.97).
    g = gpu(row["gpu"])
    cfg = {"hidden_size": 8192, "num_attention_heads": 64, "num_key_value_heads": 8,
           "num_hidden_layers": 80, "vocab_size": 128256, "intermediate_size": 28672}
    bytes_ = rf.weight_bytes_read(cfg, 1, 2.0)
    t = bytes_ / (row["read_gb_s"] * 1e9)
    got = rf.mbu(cfg, g, [1], t, 1, 2.0, 0.0)
    want = row["read_gb_s"] / g["memory_bandwidth_gb_s"]
    assert got == pytest.approx(want, rel=1e-6), (
        f"{row['source']}: reading at {row['read_gb_s']} GB/s on a {g['memory_bandwidth_gb_s']} GB/s "
        f"part is MBU {want:.3f}; got {got!r}")
