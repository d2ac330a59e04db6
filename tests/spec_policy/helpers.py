"""Data shared by the spec_policy tests: shipped configs, GPU entries, stages.

Nothing here calls the implementation under test.
"""

from __future__ import annotations

from typing import Any

import pytest

from graders.support.shipped import config, gpu

H100_SXM = "nvidia-h100-sxm-80gb"
LLAMA70 = "meta-llama--Llama-3.3-70B-Instruct"
LLAMA8 = "meta-llama--Meta-Llama-3.1-8B"
KEYS = ("weight_bytes", "flops_per_token", "kv_bytes_per_token", "bandwidth", "peak_flops",
        "overhead_s")


def stage(weight_bytes: float, flops_per_token: float, kv_bytes_per_token: float = 0.0,
          bandwidth: float = 1.0, peak_flops: float = 1.0, overhead_s: float = 0.0
          ) -> dict[str, float]:
    return dict(zip(KEYS, (weight_bytes, flops_per_token, kv_bytes_per_token, bandwidth,
                           peak_flops, overhead_s)))


def llama70_stage() -> dict[str, float]:
    """Llama-3.3-70B bf16 on 8 x H100 SXM, by the prompt's template (the test's own numbers)."""
    params = 69_501_714_432
    return stage(params * 2 / 8, 2 * params / 8, 40_960.0, 3350e9, 989.4e12)


def llama8_stage() -> dict[str, float]:
    """Llama-3.1-8B bf16 on the same 8 GPUs."""
    params = 7_504_658_432
    return stage(params * 2 / 8, 2 * params / 8, 16_384.0, 3350e9, 989.4e12)


NGRAM = stage(0.0, 0.0, 0.0, 1e12, 1e15, 5e-5)


def close(got: Any, want: float, what: str, rel: float = 1e-9) -> None:
    assert isinstance(got, (int, float)) and not isinstance(got, bool), \
        f"{what}: expected a number, got {got!r}"
    assert got == pytest.approx(want, rel=rel, abs=1e-300), \
        f"{what}: expected {want!r}, got {got!r}"
