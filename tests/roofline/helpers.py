"""Data shared by the roofline tests: shipped model configs and GPU datasheet entries.

Nothing here calls the implementation under test.
"""

from __future__ import annotations

from typing import Any

import pytest

from graders.support.shipped import ROOT, config, gpu, gpu_ids

GIB = 2**30

H100_SXM = "nvidia-h100-sxm-80gb"
H100_PCIE = "nvidia-h100-pcie-80gb"


def close(got: float, want: float, what: str, rel: float = 1e-9) -> None:
    assert isinstance(got, (int, float)) and not isinstance(got, bool), \
        f"{what}: expected a number, got {got!r}"
    assert got == pytest.approx(want, rel=rel, abs=0.0), f"{what}: expected {want!r}, got {got!r}"
