"""Public tests for kv_transfer: the prompt's examples and one check of each rule."""

from __future__ import annotations

from fractions import Fraction

import pytest

from graders.impl import kata_impl
from tests.kv_transfer.helpers import (DEEPSEEK_V3, H100, LLAMA_8B, LLAMA_70B, QWEN3_32B, Exact,
                                       close, config, gpu, gqa_config, peak_gpu)

m = kata_impl("kv_transfer")
A70, A8 = 70 * 10**9, 8 * 10**9


# ------------------------------------------------------------------ kv_bytes
@pytest.mark.rubric("kv_bytes")
def test_an_8k_prompt_on_a_70b_model_leaves_2_7_gb():
    """Rule: KV bytes per token"""
    per_token = m.kv_bytes_per_token(config(LLAMA_70B), 2)
    assert per_token == 327_680, "2 x 80 layers x 8 KV heads x 128 x 2 bytes"
    assert per_token * 8192 == 2_684_354_560
    assert m.kv_bytes_per_token(config(LLAMA_70B), 1) == 163_840, "an fp8 cache halves it"


@pytest.mark.rubric("kv_bytes")
def test_mla_and_explicit_head_dim():
    """Rule: KV bytes per token"""
    assert m.kv_bytes_per_token(config(DEEPSEEK_V3), 2) == 70_272, \
        "MLA: (512 + 64) x 61 layers x 2 bytes, whatever num_key_value_heads says"
    assert m.kv_bytes_per_token(config(QWEN3_32B), 2) == 2 * 64 * 8 * 128 * 2, \
        "Qwen3-32B's head_dim is 128, not 5120 / 64 = 80"


@pytest.mark.rubric("kv_bytes")
@pytest.mark.parametrize("name", ["google--gemma-3-27b-it", "openai--gpt-oss-20b"])
def test_sliding_windows_are_refused(name):
    """Rule: Sliding windows are refused"""
    with pytest.raises(ValueError):
        m.kv_bytes_per_token(config(name), 2)
    qwen = config("Qwen--Qwen2.5-72B")          # sliding_window set, use_sliding_window false
    assert m.kv_bytes_per_token(qwen, 2) == 2 * 80 * 8 * 128 * 2


# ------------------------------------------------------------------ recompute
@pytest.mark.rubric("recompute")
def test_recompute_flops_and_time():
    """Rules: Recompute FLOPs; Recompute time"""
    cfg = config(LLAMA_70B)
    assert m.recompute_flops(cfg, A70, 1000) == 2 * A70 * 1000 + 80 * 64 * 256 * 1000**2
    t = m.recompute_time_s(cfg, gpu(H100), A70, 8192, 0.5)
    close(t, Fraction(2 * A70 * 8192 + 80 * 64 * 256 * 8192**2) / (Fraction(989.4) * 10**12 / 2),
          "8,192 tokens on the dense bf16 peak at mfu 0.5")
    mla = config(DEEPSEEK_V3)
    assert m.recompute_flops(mla, 37 * 10**9, 10) == 2 * 37 * 10**9 * 10 + 61 * 128 * (192 + 128) * 100, \
        "MLA attention: d_qk = 128 + 64, d_v = 128"


# ------------------------------------------------------------------ crossover
@pytest.mark.rubric("crossover")
def test_fetch_time_and_the_break_even_rate():
    """Rules: Fetch time; One ratio"""
    cfg = config(LLAMA_70B)
    close(m.fetch_time_s(cfg, 2, 8192, 0.001, 25), Fraction(0.001) + Fraction(2_684_354_560, 25 * 10**9),
          "1 ms + 2.68 GB over 25 GB/s")
    close(m.break_even_gb_s(cfg, gpu(H100), A70, 2, 0.5),
          Fraction(327_680) * Fraction(989.4) * 10**12 / 2 / (2 * A70) / 10**9, "break-even link rate")


@pytest.mark.rubric("crossover")
def test_where_fetching_starts_to_win():
    """Rules: Fetching wins from; Where fetching loses"""
    cfg, h100 = config(LLAMA_70B), gpu(H100)
    assert m.fetch_wins_from(cfg, h100, A70, 2, 0.5, 0.001, 25) == 4, "latency decides"
    assert m.fetch_wins_from(cfg, h100, A70, 2, 0.5, 0.001, 1) == 16_886, \
        "below the break-even rate only the attention term pays"
    assert m.fetch_wins_from(cfg, h100, A70, 2, 0.5, 0.001, 0.1) is None, "not inside 131,072 tokens"
    assert m.fetch_wins_from(cfg, h100, A70, 2, 0.5, 0, 25) == 1, "no latency, fast link: from T = 1"


@pytest.mark.rubric("crossover")
def test_a_tie_is_not_a_win():
    """Rule: Fetching wins from"""
    # 1 layer, 1 head, head_dim 1, 1-byte KV: 2 bytes and 2 T FLOPs of attention per token.
    # 1000 TFLOP/s at mfu 0.5 against 500 GB/s: a byte costs what 1000 FLOPs cost, so with
    # no latency fetching wins when 2 x active + 2 T > 2 x 1000: at T = 3 for active = 997
    # the two are equal, and only T = 4 wins.
    cfg, g = gqa_config(1, 1, 1, 1), peak_gpu(1000)
    model = Exact(cfg, g, 997, 1, 0.5)
    assert model.recompute(3) == model.fetch(3, 0, 500) and model.wins(4, 0, 500)
    assert m.fetch_wins_from(cfg, g, 997, 1, 0.5, 0, 500) == 4


# ------------------------------------------------------------------ pd_link
@pytest.mark.rubric("pd_link")
def test_the_prompt_length_cancels():
    """Rule: The P/D link"""
    cfg, h100 = config(LLAMA_70B), gpu(H100)
    bound = Fraction(m.break_even_gb_s(cfg, h100, A70, 2, 0.5))
    needs = [Fraction(m.pd_link_gb_s(cfg, h100, A70, 2, 0.5, t)) for t in (1, 1024, 8192, 65536)]
    assert all(n < bound for n in needs), "the attention term only lowers the requirement"
    assert needs == sorted(needs, reverse=True), "longer prompts need less"
    close(needs[0], Exact(cfg, h100, A70, 2, 0.5).pd(1), "pd_link_gb_s at one token")


@pytest.mark.rubric("pd_link")
def test_which_links_break():
    """Rule: Links too slow"""
    models = {"70b": (config(LLAMA_70B), A70), "8b": (config(LLAMA_8B), A8)}
    got = m.links_too_slow(models, {"h100": gpu(H100)}, {"25g": 3.125, "400g": 50}, 2, 0.5)
    assert [tuple(x) for x in got] == [("8b", "h100", "25g")], \
        "a 25 Gbit/s NIC carries the 70B model's hand-off (1.16 GB/s) but not the 8B's (4.05)"


# ------------------------------------------------------------------ handoff
@pytest.mark.rubric("handoff")
def test_whole_and_layerwise_handoff():
    """Rule: Hand-off time"""
    cfg, h100 = config(LLAMA_70B), gpu(H100)
    whole, layerwise = m.handoff_ttft_s(cfg, h100, A70, 2, 0.5, 8192, 1e-5, 50)
    send = Fraction(2_684_354_560, 50 * 10**9)
    close(whole, Fraction(1e-5) + send, "whole: latency + S")
    close(layerwise, Fraction(1e-5) + send / 80, "the link keeps up: one layer's share is exposed")
    slow = m.handoff_ttft_s(cfg, h100, A70, 2, 0.5, 8192, 0, 0.5)[1]
    close(slow, Exact(cfg, h100, A70, 2, 0.5).handoff(8192, 0, 0.5)[1],
          "a slow link: its backlog is exposed")


# ------------------------------------------------------------------ tiers
@pytest.mark.rubric("tiers")
def test_tier_values_and_ssd_days():
    """Rules: Tier value; SSD endurance"""
    cfg, h100 = config(LLAMA_8B), gpu(H100)
    tiers = [("dram", 1e-5, 25), ("ssd", 1e-4, 1)]
    got = m.tier_values(cfg, h100, A8, 2, 0.5, 1024, tiers)
    ex = Exact(cfg, h100, A8, 2, 0.5)
    assert [name for name, _ in got] == ["dram", "ssd"]
    for (name, value), (_, lat, link) in zip(got, tiers):
        close(value, ex.tier_value(1024, lat, link), f"value of {name}",
              scale=(ex.recompute(1024) + ex.fetch(1024, lat, link)) / 1024)
    assert got[0][1] > 0 > got[1][1], "an SSD at 1 GB/s loses against recomputing an 8B model"
    close(m.ssd_endurance_tb(1, 7.68, 5), Fraction(7.68) * 365 * 5, "1 DWPD x 7.68 TB x 5 years")
    close(m.ssd_days(14016, 10), Fraction(14016 * 10**12, 10 * 10**9 * 86400), "days at 10 GB/s")


# ------------------------------------------------------------------ bad_input
@pytest.mark.rubric("bad_input")
def test_bad_input_is_refused():
    """Rule: Bad input"""
    cfg, h100 = config(LLAMA_70B), gpu(H100)
    for call in [lambda: m.kv_bytes_per_token(cfg, True), lambda: m.kv_bytes_per_token(cfg, 0),
                 lambda: m.recompute_time_s(cfg, h100, A70, 10, 1.5),
                 lambda: m.recompute_time_s(cfg, h100, A70, 10, float("nan")),
                 lambda: m.fetch_time_s(cfg, 2, 10, -1, 25),
                 lambda: m.fetch_time_s(cfg, 2, 10, 0, 0),
                 lambda: m.ssd_days(100, float("inf"))]:
        with pytest.raises(ValueError):
            call()
