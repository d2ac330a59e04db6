"""The shipped data that tests and oracles read: model configs (``data/models``, each a
model's ``config.json`` under ``"config"``) and GPU datasheet entries (``data/gpus``).

Every call returns a fresh copy, so a test may change what it got (to build a bad input)
without touching another test's; each file is read from disk once per process.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "data" / "models"
GPUS = ROOT / "data" / "gpus"


@lru_cache(maxsize=None)
def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def model_entry(name: str) -> dict[str, Any]:
    """A fresh copy of a shipped model's whole entry (its config and where it came from)."""
    return json.loads(_text(MODELS / f"{name}.json"))  # type: ignore[no-any-return]


def config(name: str) -> dict[str, Any]:
    """A fresh copy of a shipped model's config.json fields."""
    return model_entry(name)["config"]  # type: ignore[no-any-return]


def gpu(gpu_id: str) -> dict[str, Any]:
    """A fresh copy of a shipped GPU datasheet entry."""
    return json.loads(_text(GPUS / f"{gpu_id}.json"))  # type: ignore[no-any-return]


def model_names() -> list[str]:
    """Every shipped model, by file stem (``meta-llama--Meta-Llama-3.1-8B``), sorted."""
    return sorted(p.stem for p in MODELS.glob("*.json"))


def gpu_ids() -> list[str]:
    """Every shipped GPU datasheet entry, by file stem, sorted."""
    return sorted(p.stem for p in GPUS.glob("*.json"))
