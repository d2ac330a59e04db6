"""The model against published figures (published.json): DeepEP's low-latency benchmark bytes,
and the two-batch-overlap defaults SGLang and vLLM ship. What each check shows and does not
show: graders/hidden/moe_dispatch/PUBLISHED.md."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from graders.impl import kata_impl
from tests.moe_dispatch.helpers import config

m = kata_impl("moe_dispatch")
HERE = Path(__file__).resolve().parent
TOLERANCE = 0.025


@lru_cache(maxsize=None)
def published() -> dict[str, Any]:
    text = (HERE / "published.json").read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def ll_copies(ep: int, tokens: int, top_k: int) -> int:
    """Per-expert copies of ``tokens`` tokens on GPU 0, each routed to ``top_k`` experts on
    other GPUs (experts spread one per GPU over the other ep - 1 ranks, round robin)."""
    expert_gpu = [1 + e % (ep - 1) for e in range(max(top_k, ep - 1))]
    routes = [[(t + j) % len(expert_gpu) for j in range(top_k)] for t in range(tokens)]
    nvlink, nic = m.link_copies(routes, [0] * tokens, expert_gpu, 8, "per_expert")
    return int(nvlink) + int(nic)


@pytest.mark.rubric("published")
def test_deepep_bytes_per_selection():
    """Rules: FP8 dispatch; BF16 combine"""
    ll = published()["deepep_low_latency"]
    cfg = config()
    h = ll["hidden"]
    assert cfg["hidden_size"] == h
    assert m.dispatch_bytes_per_copy(cfg) + ll["header_bytes"] == h + h // 128 * 4 + 16, \
        "DeepEP's benchmark: hidden + hidden / 128 x 4 + 16 bytes per selected expert"
    assert m.combine_bytes_per_copy(cfg) == h * 2


@pytest.mark.rubric("published")
@pytest.mark.parametrize("row", published()["deepep_low_latency"]["rows"],
                         ids=lambda r: f"ep{r['ep']}")
def test_deepep_low_latency_bandwidth(row):
    """Rules: Three schemes; FP8 dispatch; BF16 combine"""
    ll = published()["deepep_low_latency"]
    cfg = config()
    copies = ll_copies(row["ep"], ll["tokens_per_rank"], ll["top_k"])
    assert copies == ll["tokens_per_rank"] * ll["top_k"], "per_expert: one copy per expert"
    for what, per_copy in (("dispatch", m.dispatch_bytes_per_copy(cfg) + ll["header_bytes"]),
                           ("combine", m.combine_bytes_per_copy(cfg))):
        printed = row[f"{what}_gb_s"]
        devs = [(copies - masked) * per_copy / (row[f"{what}_us"] * 1e3) / printed - 1
                for masked in range(ll["masked_selections_max"] + 1)]
        best = min(devs, key=abs)
        assert abs(best) <= TOLERANCE, (
            f"EP {row['ep']} {what}: {copies} copies x {per_copy} B in {row[f'{what}_us']} us "
            f"is {printed * (1 + devs[0]):.1f} GB/s; DeepEP prints {printed}")


@pytest.mark.rubric("published")
def test_sglang_splits_batches_the_model_says_lose():
    """Rules: Two micro-batches; When splitting pays"""
    sg = published()["sglang_tbo"]
    assert sg["min_decode_batch"] == 1 and not sg["enabled_by_default"]
    assert 0 < sg["tbo_token_distribution_threshold"] <= 0.5, "a token share, not a batch size"
    step = published()["illustrative_step"]
    args = (step["layers"], step["compute_fixed_ns"], step["compute_per_token_ns"],
            step["comm_fixed_ns"], step["comm_bytes_per_token"], step["link_gb_s"])
    one, two = m.tbo_step_ns(1, *args)
    assert two > one, "SGLang would split a batch of 1: A is empty and pays the fixed costs"
    for fixed in ((1, 0), (0, 1), (500, 500)):
        got = m.tbo_min_batch(4, fixed[0], 10, fixed[1], 100, 10, 64)
        assert got is not None and got >= 2, \
            f"with fixed costs {fixed} the smallest batches lose; got {got!r}"


@pytest.mark.rubric("published")
def test_vllm_decode_threshold():
    """Rules: When splitting pays; A tie does not pay"""
    v = published()["vllm_dbo"]
    assert v["first_split_decode_batch"] == v["decode_token_threshold"] + 1
    step = published()["illustrative_step"]
    args = (step["layers"], step["compute_fixed_ns"], step["compute_per_token_ns"],
            step["comm_fixed_ns"], step["comm_bytes_per_token"], step["link_gb_s"])
    assert m.tbo_min_batch(*args, 48) == v["first_split_decode_batch"]
    one, two = m.tbo_step_ns(v["decode_token_threshold"], *args)
    assert two >= one, "at vLLM's threshold itself the model does not split"
