"""Data and checks shared by the fair_share tests: shipped configs, GPU entries, the seed.

Nothing here calls the implementation under test except through the object it is given.
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

LLAMA8 = "meta-llama--Meta-Llama-3.1-8B"
H100_SXM = "nvidia-h100-sxm-80gb"

# The seed's scenario (the prompt's example).
SEED_BATCH, SEED_CTX = 64, 2048
SEED_REQUESTS = {"docs": (32_000, 500), "chat": (400, 100)}


@lru_cache(maxsize=None)
def _load(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def config(name: str) -> dict[str, Any]:
    """A fresh copy of a shipped model's config.json fields."""
    return json.loads(_load(MODELS / f"{name}.json"))["config"]  # type: ignore[no-any-return]


def gpu(gpu_id: str) -> dict[str, Any]:
    """A fresh copy of a shipped GPU datasheet entry."""
    return json.loads(_load(GPUS / f"{gpu_id}.json"))  # type: ignore[no-any-return]


def model_names() -> list[str]:
    return sorted(p.stem for p in MODELS.glob("*.json"))


def gpu_ids() -> list[str]:
    return sorted(p.stem for p in GPUS.glob("*.json"))


def close(got: Any, want: float, what: str, rel: float = 1e-12) -> None:
    assert isinstance(got, (int, float)) and not isinstance(got, bool), \
        f"{what}: expected a number, got {got!r}"
    assert got == pytest.approx(want, rel=rel, abs=0.0), f"{what}: expected {want!r}, got {got!r}"


def drain(fs: Any, limit: int = 10_000) -> list[tuple[str, str, int]]:
    """Call next_request until it returns None; the served records, as tuples."""
    out: list[tuple[str, str, int]] = []
    for _ in range(limit):
        got = fs.next_request()
        if got is None:
            return out
        out.append(tuple(got))  # type: ignore[arg-type]
    raise AssertionError(f"next_request still serving after {limit} calls: {out[-5:]}")
