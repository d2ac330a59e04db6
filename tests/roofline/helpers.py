"""Data shared by the roofline tests: shipped model configs and GPU datasheet entries.

Nothing here calls the implementation under test.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "data" / "models"
GPUS = ROOT / "data" / "gpus"
GIB = 2**30

H100_SXM = "nvidia-h100-sxm-80gb"
H100_PCIE = "nvidia-h100-pcie-80gb"


@lru_cache(maxsize=None)
def _load(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def config(name: str) -> dict[str, Any]:
    """A fresh copy of a shipped model's config.json fields."""
    return json.loads(_load(MODELS / f"{name}.json"))["config"]  # type: ignore[no-any-return]


def gpu(gpu_id: str) -> dict[str, Any]:
    """A fresh copy of a shipped GPU datasheet entry."""
    return json.loads(_load(GPUS / f"{gpu_id}.json"))  # type: ignore[no-any-return]


def gpu_ids() -> list[str]:
    return sorted(p.stem for p in GPUS.glob("*.json"))


def close(got: float, want: float, what: str, rel: float = 1e-9) -> None:
    assert isinstance(got, (int, float)) and not isinstance(got, bool), \
        f"{what}: expected a number, got {got!r}"
    assert got == pytest.approx(want, rel=rel, abs=0.0), f"{what}: expected {want!r}, got {got!r}"
