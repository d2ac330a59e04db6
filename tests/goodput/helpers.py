"""Data shared by the goodput tests: shipped model configs and GPU datasheet entries.

Nothing here calls the implementation under test.
"""

from __future__ import annotations

from typing import Any

import pytest

from graders.support.shipped import config, gpu

H100_SXM = "nvidia-h100-sxm-80gb"
H200_SXM = "nvidia-h200-sxm-141gb"
LLAMA8 = "meta-llama--Meta-Llama-3.1-8B"
LLAMA70 = "meta-llama--Llama-3.3-70B-Instruct"
REL = 1e-12


def close(got: Any, want: float, what: str, rel: float = REL) -> None:
    assert isinstance(got, (int, float)) and not isinstance(got, bool), \
        f"{what}: expected a number, got {got!r}"
    assert got == pytest.approx(want, rel=rel, abs=0.0), f"{what}: expected {want!r}, got {got!r}"


def as_pair(got: Any, what: str) -> tuple[int, int]:
    """A (numerator, denominator) answer, checked for shape (not for lowest terms)."""
    assert isinstance(got, (tuple, list)) and len(got) == 2, \
        f"{what}: expected (numerator, denominator), got {got!r}"
    num, den = got
    assert all(isinstance(x, int) and not isinstance(x, bool) for x in (num, den)), \
        f"{what}: numerator and denominator must be ints, got {got!r}"
    return num, den
