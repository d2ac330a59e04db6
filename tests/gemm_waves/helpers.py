"""Data shared by the gemm_waves tests: shipped model configs and GPU SM counts.

Nothing here calls the implementation under test.
"""

from __future__ import annotations

import math
from typing import Any

from graders.support.shipped import ROOT, config, gpu

H100_SXM = "nvidia-h100-sxm-80gb"
H200 = "nvidia-h200-sxm-141gb"
A100 = "nvidia-a100-sxm-80gb"
LLAMA8 = "meta-llama--Meta-Llama-3.1-8B"
LLAMA70 = "meta-llama--Meta-Llama-3.1-70B"
QWEN7 = "Qwen--Qwen2.5-7B"

REL = 1e-9


def sms(gpu_id: str) -> int:
    """The SM count of a shipped GPU datasheet entry."""
    return int(gpu(gpu_id)["sm_count"])


def close(got: Any, want: float, what: str, rel: float = REL) -> None:
    assert isinstance(got, (int, float)) and not isinstance(got, bool), (
        f"{what}: expected a number, got {got!r}")
    assert math.isclose(got, want, rel_tol=rel, abs_tol=1e-12), f"{what}: got {got!r}, want {want!r}"


def exact_int(got: Any, want: int, what: str) -> None:
    assert isinstance(got, int) and not isinstance(got, bool), (
        f"{what}: expected an int, got {got!r} ({type(got).__name__})")
    assert got == want, f"{what}: got {got}, want {want}"
