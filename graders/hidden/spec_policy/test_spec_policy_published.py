"""DeepSeek-V3's reported MTP speedup against the kata's step model (published.json).

The report gives an acceptance rate of 85-90% for its one-token MTP draft and 1.8x the tokens
per second. Under the prompt's model at batch 1 both passes are memory-bound, so the speedup
is (1 + a) x W_target / (W_target + W_mtp): the weights each pass reads. The weights come from
the shipped config by the counting below (MLA attention, the routed experts a token uses, the
shared expert, the router, the LM head; the input embedding is a lookup), which gives the
report's 37B activated (36.6B without the embedding) and 11.6B MTP-unique parameters.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from graders.hidden.spec_policy import oracle
from graders.impl import kata_impl
from tests.spec_policy.helpers import H100_SXM, close, config, gpu

sp = kata_impl("spec_policy")
HERE = Path(__file__).resolve().parent
TOLERANCE = 0.03


@lru_cache(maxsize=None)
def published() -> dict[str, Any]:
    text = (HERE / "published.json").read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def deepseek_weights() -> tuple[int, int]:
    """(parameters the main model reads per token, parameters the MTP module reads per token)."""
    c = config("deepseek-ai--DeepSeek-V3")
    h, q = c["hidden_size"], c["num_attention_heads"]
    nope, rope, vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    attn = (h * c["q_lora_rank"] + c["q_lora_rank"] * q * (nope + rope)     # q down, q up
            + h * (c["kv_lora_rank"] + rope)                               # kv down + rope key
            + c["kv_lora_rank"] * q * (nope + vd) + q * vd * h)            # kv up, output
    moe = ((c["num_experts_per_tok"] + c["n_shared_experts"]) * 3 * h * c["moe_intermediate_size"]
           + h * c["n_routed_experts"])
    dense = 3 * h * c["intermediate_size"]
    head = c["vocab_size"] * h
    layers, n_dense = c["num_hidden_layers"], c["first_k_dense_replace"]
    main = layers * attn + n_dense * dense + (layers - n_dense) * moe + head
    mtp = attn + moe + 2 * h * h + head        # one MoE block, the projection, the shared head
    return main, mtp


def stages() -> tuple[dict[str, float], dict[str, float]]:
    g = gpu(H100_SXM)
    bw, peak = g["memory_bandwidth_gb_s"] * 1e9, g["tensor_tflops"]["fp8"]["dense"] * 1e12
    main, mtp = deepseek_weights()
    make = lambda p: {"weight_bytes": float(p), "flops_per_token": 2.0 * p,  # noqa: E731
                      "kv_bytes_per_token": 0.0, "bandwidth": bw, "peak_flops": peak,
                      "overhead_s": 0.0}
    return make(main), make(mtp)


@pytest.mark.rubric("speedup")
def test_deepseek_weights_match_the_stated_sizes():
    """Rules: Verification step; Speedup"""
    main, mtp = deepseek_weights()
    c = config("deepseek-ai--DeepSeek-V3")
    with_embedding = main + c["vocab_size"] * c["hidden_size"]
    assert abs(with_embedding / 37e9 - 1) < 0.02, "the report's 37B activated, embedding included"
    assert abs(main / 36.6e9 - 1) < 0.005, \
        "36.6B activated without the embedding (data/models notes)"
    assert 0.04 < mtp / main < 0.05, "the MTP module reads about 4.4% of the main model's weights"


@pytest.mark.rubric("speedup")
@pytest.mark.parametrize("end", ["acceptance_low", "acceptance_high"])
def test_deepseek_mtp_reported_speedup(end):
    """Rules: Verification step; Speedup"""
    fix = published()
    a, reported = fix["mtp"][end], fix["mtp"]["reported_speedup"]
    target, mtp = stages()
    got = sp.speedup(target, mtp, [a], fix["mtp"]["drafts_per_step"], fix["model"]["batch"],
                     fix["model"]["ctx_len"])
    want = oracle.speedup(target, mtp, [a], 1, 1, 0)
    close(got, float(want),
          f"DeepSeek-V3 MTP at acceptance {a}, batch 1: (1 + a) x W / (W + W_mtp)")
    assert abs(got / reported - 1) <= TOLERANCE, (
        f"{fix['provenance']['source']}: acceptance {a} gives {reported}x reported; the model "
        f"predicts {got!r}, more than {TOLERANCE:.0%} away")


@pytest.mark.rubric("speedup")
def test_deepseek_reported_speedup_lies_between_the_ends():
    """Rule: Speedup"""
    fix = published()
    target, mtp = stages()
    low = sp.speedup(target, mtp, [fix["mtp"]["acceptance_low"]], 1, 1, 0)
    high = sp.speedup(target, mtp, [fix["mtp"]["acceptance_high"]], 1, 1, 0)
    assert low < fix["mtp"]["reported_speedup"] < high, (
        f"85% acceptance gives {low!r}, 90% gives {high!r}: the reported 1.8x lies between")
