"""Data and checks shared by the fair_share tests: shipped configs, GPU entries, the seed.

Nothing here calls the implementation under test except through the object it is given.
"""

from __future__ import annotations

from typing import Any

import pytest

from graders.support.shipped import config, gpu, gpu_ids, model_names

LLAMA8 = "meta-llama--Meta-Llama-3.1-8B"
H100_SXM = "nvidia-h100-sxm-80gb"

# The seed's scenario (the prompt's example).
SEED_BATCH, SEED_CTX = 64, 2048
SEED_REQUESTS = {"docs": (32_000, 500), "chat": (400, 100)}


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
