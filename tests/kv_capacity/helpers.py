"""Data shared by the kv_capacity tests: shipped model configs and the recorded vLLM logs.

Nothing here calls the implementation under test.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "data" / "models"
FIXTURE = ROOT / "hardware_fixtures" / "vllm_startup_h100_80gb.json"
GIB = 2**30
HALF_ULP_GIB = 0.005          # the logs print GiB with two decimals


@lru_cache(maxsize=None)
def model_entry(name: str) -> dict[str, Any]:
    return json.loads((MODELS / f"{name}.json").read_text(encoding="utf-8"))


def config(name: str) -> dict[str, Any]:
    """A fresh copy of a shipped model's config.json fields (tests may edit it)."""
    return json.loads(json.dumps(model_entry(name)["config"]))


@lru_cache(maxsize=None)
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def row(row_id: str) -> dict[str, Any]:
    for r in fixture()["rows"]:
        if r["id"] == row_id:
            return r
    raise KeyError(row_id)


def kv_dtype_bytes(r: dict[str, Any]) -> int:
    """vLLM's kv_cache_dtype: fp8 is one byte; auto follows the model dtype."""
    if r["kv_cache_dtype"] == "fp8":
        return 1
    return {"bfloat16": 2, "float16": 2, "float32": 4}[r["dtype"]]


# Which shipped config gives each covered row's architecture. Quantized checkpoints keep
# the architecture of the model they were quantized from (the KV cache is not quantized
# unless kv_cache_dtype says so).
ROW_MODEL = {
    "V2": "Qwen--Qwen2.5-72B-Instruct",
    **{f"V{i}": "Qwen--Qwen2.5-7B-Instruct" for i in (3, 4, 5, 6, 7, 8, 9, 10, 11, 20, 21)},
    "V12": "Qwen--Qwen3-30B-A3B",
    "V13": "Qwen--Qwen3-8B",
    **{f"V{i}": "meta-llama--Llama-3.3-70B-Instruct" for i in (14, 15, 59)},
    **{f"V{i}": "meta-llama--Meta-Llama-3.1-8B"
       for i in (16, 17, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 47, 48)},
    "V24": "google--gemma-2-27b-it",
    "V26": "google--gemma-2-9b-it",
    "V27": "google--gemma-3-12b-it",
}
# Rows whose model mixes sliding and full layers: vLLM 0.19 reports their tokens as
# full-length tokens over all layers, but its concurrency line reserves windows differently.
HYBRID_ROWS = {"V24", "V26", "V27"}


def budget_rows() -> list[str]:
    """Rows that print every term of the budget: requested memory and the three deductions."""
    keys = {"weights_memory_gib", "torch_peak_increase_gib", "non_torch_increase_gib",
            "available_kv_cache_memory_gib", "total_memory_gib"}
    return [r["id"] for r in fixture()["rows"] if keys <= set(r["logged"])]
