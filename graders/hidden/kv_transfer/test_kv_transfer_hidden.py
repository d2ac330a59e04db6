"""Hidden tests for kv_transfer, checked against the prompt's model in exact rationals
(tests/kv_transfer/helpers.py: per-token coefficients and a layer-by-layer timeline, not the
reference's code) on inputs built for the traps: exact ties at a chosen length, windows that
end one token early, MLA configs whose num_key_value_heads misleads, links either side of
the break-even rate, and the hand-off's two regimes."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from graders.hidden.kv_transfer.strategies import (actives, configs, exact_ties, gpus_and_dtypes,
                                                   gqa_configs, kv_bytes, latencies, lengths,
                                                   links, mfus, mla_configs)
from graders.impl import kata_impl
from tests.kv_transfer.helpers import (DEEPSEEK_V3, GB, H100, LLAMA_8B, LLAMA_70B, Exact, close,
                                       config, full_attention_models, gpu, gpu_ids,
                                       model_names, peak_gpu, uses_sliding_window)

m = kata_impl("kv_transfer")


def first_win(ex: Exact, latency, link) -> int | None:
    """The definition, searched exactly on the test's side (no closed form shared with the
    reference): the set of winning lengths is an interval up to infinity."""
    window = ex.window
    if not ex.wins(window, latency, link):
        return None
    lo, hi = 0, window
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ex.wins(mid, latency, link) else (mid, hi)
    return hi


def check_first_win(got, ex: Exact, latency, link, what: str) -> None:
    assert got is None or (isinstance(got, int) and not isinstance(got, bool)), \
        f"{what}: expected an int or None, got {got!r}"
    want = first_win(ex, latency, link)
    if want is None:
        assert got is None, (f"{what}: fetching is not faster even at the window "
                             f"T = {ex.window}, so the answer is None, got {got}")
        return
    assert got is not None, f"{what}: fetching wins from T = {want} inside the window, got None"
    assert got == want, (
        f"{what}: expected T = {want}, got {got}. At T = {got}: recompute "
        f"{ex.recompute(got)} s, fetch {ex.fetch(got, latency, link)} s "
        "(fetch must be strictly faster, and not at T - 1)")


# =====================================================================================
# kv_bytes
# =====================================================================================
@pytest.mark.rubric("kv_bytes")
@pytest.mark.parametrize("name", full_attention_models())
@pytest.mark.parametrize("b", [1, 2, 4])
def test_kv_bytes_of_every_shipped_model(name, b):
    """Rule: KV bytes per token"""
    cfg = config(name)
    assert m.kv_bytes_per_token(cfg, b) == Exact(cfg, peak_gpu(1), 1, b, 1).per_token, \
        f"kv_bytes_per_token({name}, {b})"


@pytest.mark.rubric("kv_bytes")
@given(cfg=gqa_configs(), b=kv_bytes)
def test_kv_bytes_gqa_defaults(cfg, b):
    """Rule: KV bytes per token"""
    want = Exact(cfg, peak_gpu(1), 1, b, 1).per_token
    got = m.kv_bytes_per_token(cfg, b)
    assert got == want and isinstance(got, int) and not isinstance(got, bool), \
        f"kv_bytes_per_token({cfg}, {b}): expected the int {want}, got {got!r}"


@pytest.mark.rubric("kv_bytes")
@given(cfg=mla_configs(), b=kv_bytes)
def test_kv_bytes_mla_latent(cfg, b):
    """Rule: KV bytes per token"""
    want = (cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]) * cfg["num_hidden_layers"] * b
    assert m.kv_bytes_per_token(cfg, b) == want, \
        f"MLA caches one latent per layer: kv_bytes_per_token({cfg}, {b}) = {want}"


def _cfg_calls(cfg):
    h100, a = gpu(H100), 10**9
    return [lambda: m.kv_bytes_per_token(cfg, 2), lambda: m.recompute_flops(cfg, a, 8),
            lambda: m.recompute_time_s(cfg, h100, a, 8, 0.5),
            lambda: m.fetch_time_s(cfg, 2, 8, 0, 25),
            lambda: m.break_even_gb_s(cfg, h100, a, 2, 0.5),
            lambda: m.fetch_wins_from(cfg, h100, a, 2, 0.5, 0, 25),
            lambda: m.pd_link_gb_s(cfg, h100, a, 2, 0.5, 8),
            lambda: m.links_too_slow({"x": (cfg, a)}, {"h": h100}, {"l": 25}, 2, 0.5),
            lambda: m.handoff_ttft_s(cfg, h100, a, 2, 0.5, 8, 0, 25),
            lambda: m.tier_values(cfg, h100, a, 2, 0.5, 8, [("t", 0, 25)])]


SLIDING = [n for n in model_names() if uses_sliding_window(config(n))]


@pytest.mark.rubric("kv_bytes")
@pytest.mark.parametrize("case", SLIDING + ["layer_types", "window_no_flag", "window_flag_true",
                                  "window_zero", "window_flag_zero"])
def test_sliding_windows_are_refused_everywhere(case):
    """Rule: Sliding windows are refused"""
    base = {"num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 64, "hidden_size": 256, "max_position_embeddings": 4096}
    cfg = {"layer_types": ["full_attention", "sliding_attention"] * 2, "sliding_window": 128,
           **base} if case == "layer_types" else \
        {**base, "sliding_window": 128} if case == "window_no_flag" else \
        {**base, "sliding_window": 128, "use_sliding_window": True} if case == "window_flag_true" \
        else {**base, "sliding_window": 0} if case == "window_zero" \
        else {**base, "sliding_window": 128, "use_sliding_window": 0} if case == "window_flag_zero" \
        else config(case)
    for i, call in enumerate(_cfg_calls(cfg)):
        with pytest.raises(ValueError):
            call()
            pytest.fail(f"call #{i} accepted the sliding-window config {case!r}")


@pytest.mark.rubric("kv_bytes")
def test_full_attention_configs_with_a_window_field_are_accepted():
    """Rule: Sliding windows are refused"""
    base = {"num_hidden_layers": 2, "num_attention_heads": 2, "head_dim": 4, "hidden_size": 8,
            "max_position_embeddings": 64}
    for extra in [{"sliding_window": 4096, "use_sliding_window": False},
                  {"sliding_window": None}, {"layer_types": ["full_attention"] * 2},
                  {"layer_types": None}]:
        assert m.kv_bytes_per_token({**base, **extra}, 1) == 2 * 2 * 2 * 4, \
            f"{extra} is a full-attention config"


# =====================================================================================
# recompute
# =====================================================================================
@pytest.mark.rubric("recompute")
@given(cfg=configs(), a=actives, t=st.one_of(lengths, st.integers(10**6, 10**7)))
def test_recompute_flops(cfg, a, t):
    """Prefixes up to the 10^7 tokens the constraints allow: the int stays exact.

    Rules: Recompute FLOPs; Exact arithmetic"""
    want = Exact(cfg, peak_gpu(1), a, 1, 1).flops(t)
    got = m.recompute_flops(cfg, a, t)
    assert got == want and isinstance(got, int) and not isinstance(got, bool), \
        f"recompute_flops(active={a}, T={t}) on {cfg}: expected the int {want}, got {got!r}"


@pytest.mark.rubric("recompute")
@given(cfg=configs(), g=gpus_and_dtypes(), a=actives, t=lengths, mfu=mfus)
def test_recompute_time_on_the_dense_peak(cfg, g, a, t, mfu):
    """Rule: Recompute time"""
    entry, dtype = g
    ex = Exact(cfg, entry, a, 1, mfu, dtype)
    close(m.recompute_time_s(cfg, entry, a, t, mfu, dtype), ex.recompute(t),
          f"recompute_time_s(T={t}, mfu={mfu}, dtype={dtype}, dense={entry['tensor_tflops'][dtype]['dense']})")


@pytest.mark.rubric("recompute")
def test_recompute_time_default_dtype_is_bf16():
    """Rule: Recompute time"""
    cfg, entry = config(LLAMA_70B), gpu(H100)
    close(m.recompute_time_s(cfg, entry, 70 * 10**9, 4096, 0.4),
          Exact(cfg, entry, 70 * 10**9, 2, 0.4, "bf16").recompute(4096), "dtype defaults to bf16")
    close(m.recompute_time_s(cfg, entry, 70 * 10**9, 4096, 0.4, "fp8"),
          Exact(cfg, entry, 70 * 10**9, 2, 0.4, "fp8").recompute(4096), "the fp8 dense peak")


# =====================================================================================
# crossover
# =====================================================================================
@pytest.mark.rubric("crossover")
@given(tie=exact_ties())
def test_a_tie_is_not_a_win(tie):
    """Rules: Fetching wins from; Exact arithmetic"""
    ex = Exact(tie["cfg"], tie["gpu"], tie["active"], tie["kv_bytes"], tie["mfu"])
    t0, lat, link = tie["t0"], tie["latency"], tie["link"]
    gap = ex.recompute(t0) - ex.fetch(t0, lat, link)
    assert gap == (2 * t0 / ex.flops_s if tie["hair"] else 0)    # the strategy's promise
    assert first_win(ex, lat, link) == tie["want"]
    got = m.fetch_wins_from(tie["cfg"], tie["gpu"], tie["active"], tie["kv_bytes"], tie["mfu"],
                            lat, link)
    how = (f"fetching wins at T = {t0} by {float(gap):.3g} s exactly" if tie["hair"] else
           f"recompute and fetch are exactly equal at T = {t0} (a tie is not a win)")
    assert got == tie["want"], (
        f"{how}; window {ex.window}: expected {tie['want']}, got {got!r} "
        f"(active={tie['active']}, latency={lat}, link={link}, mfu={tie['mfu']}, "
        f"dense TFLOP/s={tie['gpu']['tensor_tflops']['bf16']['dense']}, cfg={tie['cfg']})")


@pytest.mark.rubric("crossover")
@given(cfg=configs(), b=kv_bytes, t=lengths, lat=latencies, link=links)
def test_fetch_time(cfg, b, t, lat, link):
    """Rule: Fetch time"""
    ex = Exact(cfg, peak_gpu(1), 1, b, 1)
    close(m.fetch_time_s(cfg, b, t, lat, link), ex.fetch(t, lat, link),
          f"fetch_time_s(T={t}, latency={lat}, link={link})")


@pytest.mark.rubric("crossover")
@given(cfg=configs(), g=gpus_and_dtypes(), a=actives, b=kv_bytes, mfu=mfus)
def test_break_even_rate(cfg, g, a, b, mfu):
    """Rule: One ratio"""
    entry, dtype = g
    ex = Exact(cfg, entry, a, b, mfu, dtype)
    close(m.break_even_gb_s(cfg, entry, a, b, mfu, dtype), ex.break_even(),
          f"break_even_gb_s(active={a}, bytes={b}, mfu={mfu})")


@pytest.mark.rubric("crossover")
@given(cfg=configs(), g=gpus_and_dtypes(), a=actives, b=kv_bytes, mfu=mfus, lat=latencies,
       link=links)
def test_fetch_wins_from_matches_the_definition(cfg, g, a, b, mfu, lat, link):
    """Rules: Fetching wins from; Where fetching loses"""
    assume(cfg.get("max_position_embeddings") is not None)
    entry, dtype = g
    ex = Exact(cfg, entry, a, b, mfu, dtype)
    check_first_win(m.fetch_wins_from(cfg, entry, a, b, mfu, lat, link, dtype), ex, lat, link,
                    f"fetch_wins_from(active={a}, bytes={b}, mfu={mfu}, latency={lat}, "
                    f"link={link}, dtype={dtype}, window={ex.window})")


@pytest.mark.rubric("crossover")
@given(cfg=configs(window=st.sampled_from([10**6, 10**7])), a=actives, b=kv_bytes,
       lat=st.sampled_from([0, 1e-3, 0.5, 30.0]), ratio=st.sampled_from([1e-4, 0.01, 0.5, 0.99]))
def test_slow_links_need_long_prefixes(cfg, a, b, lat, ratio):
    """Rules: Where fetching loses; Fetching wins from"""
    entry = gpu(H100)
    ex = Exact(cfg, entry, a, b, 0.5)
    link = float(ex.break_even()) * ratio                 # below the break-even rate
    got = m.fetch_wins_from(cfg, entry, a, b, 0.5, lat, link)
    check_first_win(got, ex, lat, link, f"link at {ratio} x the break-even rate")


@pytest.mark.rubric("crossover")
@pytest.mark.parametrize("name", [LLAMA_70B, LLAMA_8B, DEEPSEEK_V3])
def test_three_ways_to_lose(name):
    """Rule: Where fetching loses"""
    cfg, entry = config(name), gpu(H100)
    a = {LLAMA_70B: 70 * 10**9, LLAMA_8B: 8 * 10**9, DEEPSEEK_V3: 37 * 10**9}[name]
    ex = Exact(cfg, entry, a, 2, 0.5)
    fast = float(ex.break_even()) * 4
    # 1. latency: no latency on a fast link wins from one token; latency pushes it out
    answers = [m.fetch_wins_from(cfg, entry, a, 2, 0.5, lat, fast)
               for lat in (0, 1e-4, 1e-3, 1e-2, 0.1)]
    assert answers[0] == 1, "no latency and a link above the break-even rate: T = 1 wins"
    assert all(x is not None for x in answers) and answers == sorted(answers) and \
        answers[-1] > answers[0], f"more latency must need a longer prefix: {answers}"
    for lat, got in zip((0, 1e-4, 1e-3, 1e-2, 0.1), answers):
        check_first_win(got, ex, lat, fast, f"{name}, latency {lat}, link {fast}")
    # 2. a link below the break-even rate: even with no latency, short prefixes lose
    slow = float(ex.break_even()) / 4
    got = m.fetch_wins_from(cfg, entry, a, 2, 0.5, 0, slow)
    assert got is None or got > 1, "below the break-even rate one token never wins"
    check_first_win(got, ex, 0, slow, f"{name} at a quarter of the break-even rate")
    # 3. past the window: far enough below it, not inside max_position_embeddings
    crawl = float(ex.break_even()) / 10**4
    assert m.fetch_wins_from(cfg, entry, a, 2, 0.5, 0, crawl) is None, \
        "at 1/10,000 of the break-even rate the first winning length is past the window"


# =====================================================================================
# pd_link
# =====================================================================================
@pytest.mark.rubric("pd_link")
@given(cfg=configs(), g=gpus_and_dtypes(), a=actives, b=kv_bytes, mfu=mfus, t=lengths)
def test_pd_link_and_its_bound(cfg, g, a, b, mfu, t):
    """Rule: The P/D link"""
    entry, dtype = g
    ex = Exact(cfg, entry, a, b, mfu, dtype)
    got = m.pd_link_gb_s(cfg, entry, a, b, mfu, t, dtype)
    close(got, ex.pd(t), f"pd_link_gb_s(T={t}, active={a}, mfu={mfu})")
    assert Fraction(got) <= ex.break_even() * (1 + Fraction(1, 10**9)), \
        "no prompt length asks for more than the break-even rate"


@pytest.mark.rubric("pd_link")
def test_a_link_at_exactly_the_need_carries_it():
    """Rule: Links too slow"""
    # 1 layer, 1 head of 1, 1-byte KV: 2 bytes per token; active 1000 at 1000 TFLOP/s x 0.5
    # prefills 2.5e11 tokens/s: the need is exactly 500 GB/s
    cfg = {"num_hidden_layers": 1, "num_attention_heads": 1, "head_dim": 1, "hidden_size": 1,
           "max_position_embeddings": 10}
    g = peak_gpu(1000)
    assert Exact(cfg, g, 1000, 1, 0.5).break_even() == 500
    got = m.links_too_slow({"tiny": (cfg, 1000)}, {"g": g}, {"a": 500, "b": 499.99, "c": 500.0}, 1, 0.5)
    assert [tuple(x) for x in got] == [("tiny", "g", "b")], f"equal carries it: got {got}"
    assert m.links_too_slow({}, {"g": g}, {"a": 1}, 1, 0.5) == []
    # several of each, listed out of order: the answer is sorted by (model, gpu, link)
    models = {"zeta": (cfg, 1000), "alpha": (cfg, 4000)}      # needs 500 and 125 GB/s
    gpus = {"slow": peak_gpu(500), "fast": g}                 # halves or keeps the need
    got = m.links_too_slow(models, gpus, {"z": 100, "m": 300, "a": 10}, 1, 0.5)
    want = sorted([("zeta", "fast", "z"), ("zeta", "fast", "m"), ("zeta", "fast", "a"),
                   ("zeta", "slow", "z"), ("zeta", "slow", "a"), ("alpha", "fast", "z"),
                   ("alpha", "fast", "a"), ("alpha", "slow", "a")])
    assert [tuple(x) for x in got] == want, f"expected every slow triple, sorted: {want}, got {got}"


@st.composite
def link_tables(draw):
    names = draw(st.lists(st.sampled_from([LLAMA_70B, LLAMA_8B, DEEPSEEK_V3, "Qwen--Qwen3-30B-A3B",
                                           "Qwen--Qwen3-8B"]), min_size=0, max_size=4, unique=True))
    models = {f"m{draw(st.integers(0, 99))}-{n[-6:]}": (config(n), draw(actives)) for n in names}
    gnames = draw(st.lists(st.sampled_from(gpu_ids()), min_size=0, max_size=3, unique=True))
    gpus = {n.split("-")[1] + n[-4:]: gpu(n) for n in gnames}
    mfu = draw(mfus)
    needs = [Exact(c, g, a, 2, mfu).break_even() for c, a in models.values() for g in gpus.values()]
    rates = [draw(links) for _ in range(draw(st.integers(0, 4)))]
    for need in needs[:2]:                     # a link exactly at a pair's need carries it
        if float(need) == need:
            rates.append(float(need))
    link_names = {f"L{i}{'abc'[i % 3]}": r for i, r in enumerate(rates)}
    if draw(st.booleans()):                    # dict order is not sorted order
        link_names = dict(reversed(list(link_names.items())))
    return models, gpus, link_names, mfu


@pytest.mark.rubric("pd_link")
@given(tables=link_tables())
def test_links_too_slow(tables):
    """Rule: Links too slow"""
    models, gpus, links_, mfu = tables
    want = sorted((mn, gn, ln) for mn, (c, a) in models.items() for gn, g in gpus.items()
                  for ln, r in links_.items() if Exact(c, g, a, 2, mfu).break_even() > Fraction(r))
    got = m.links_too_slow(models, gpus, links_, 2, mfu)
    assert isinstance(got, list), f"expected a list, got {got!r}"
    assert [tuple(x) for x in got] == want, f"links_too_slow: expected {want}, got {got}"


# =====================================================================================
# handoff
# =====================================================================================
@pytest.mark.rubric("handoff")
@given(cfg=configs(), g=gpus_and_dtypes(), a=actives, b=kv_bytes, mfu=mfus, t=lengths,
       lat=latencies, ratio=st.sampled_from([0.01, 0.5, 0.99, 1, 1.01, 2, 100]))
def test_handoff_both_regimes(cfg, g, a, b, mfu, t, lat, ratio):
    """Rule: Hand-off time"""
    entry, dtype = g
    ex = Exact(cfg, entry, a, b, mfu, dtype)
    # the link rate at which one layer's transfer takes exactly one layer's compute, scaled
    link = float(Fraction(ex.per_token * t) / ex.recompute(t) / GB * Fraction(ratio))
    assume(link > 0)
    got = m.handoff_ttft_s(cfg, entry, a, b, mfu, t, lat, link, dtype)
    assert isinstance(got, (tuple, list)) and len(got) == 2, f"expected (whole, layerwise), got {got!r}"
    whole, layerwise = ex.handoff(t, lat, link)
    what = f"handoff_ttft_s(T={t}, L={ex.layers}, latency={lat}, link={link} ({ratio} x the layers' pace))"
    close(got[0], whole, what + "[0] (whole after prefill)")
    close(got[1], layerwise, what + "[1] (layer by layer)")


@pytest.mark.rubric("handoff")
def test_handoff_one_layer_and_latency_once():
    """Rule: Hand-off time"""
    cfg = {"num_hidden_layers": 1, "num_attention_heads": 2, "head_dim": 8, "hidden_size": 16,
           "max_position_embeddings": 100}
    whole, layerwise = m.handoff_ttft_s(cfg, peak_gpu(1), 10**6, 2, 1, 50, 0.25, 0.001)
    assert whole == pytest.approx(layerwise, rel=1e-12), "one layer: nothing to pipeline"
    cfg = config(LLAMA_70B)
    w, lw = m.handoff_ttft_s(cfg, gpu(H100), 70 * 10**9, 2, 0.5, 1, 2.0, 1000)
    assert 2.0 < lw < 2.0 + 1e-6 and 2.0 < w < 2.0 + 1e-3, "the latency is paid once, not per layer"


# =====================================================================================
# tiers
# =====================================================================================
_tier = st.tuples(st.sampled_from(["hbm", "dram", "ssd", "remote", "dram"]), latencies, links)
# a tier is a triple, tuple or list, and tiers a list or a tuple (Bad input)
tier_lists = st.lists(st.one_of(_tier, _tier.map(list)), min_size=0, max_size=5).flatmap(
    lambda xs: st.sampled_from([xs, tuple(xs)]))


@pytest.mark.rubric("tiers")
@given(cfg=configs(), g=gpus_and_dtypes(), a=actives, b=kv_bytes, mfu=mfus, t=lengths,
       tiers=tier_lists)
def test_tier_values(cfg, g, a, b, mfu, t, tiers):
    """Rule: Tier value"""
    entry, dtype = g
    ex = Exact(cfg, entry, a, b, mfu, dtype)
    got = m.tier_values(cfg, entry, a, b, mfu, t, tiers, dtype)
    assert isinstance(got, list) and len(got) == len(tiers), f"one value per tier, got {got!r}"
    for i, ((name, lat, link), pair) in enumerate(zip(tiers, got)):
        assert isinstance(pair, (tuple, list)) and len(pair) == 2 and pair[0] == name, \
            f"tier #{i}: expected ({name!r}, value) in the order given, got {pair!r}"
        close(pair[1], ex.tier_value(t, lat, link), f"value of tier #{i} {name} at T={t}",
              scale=(ex.recompute(t) + ex.fetch(t, lat, link)) / t)


@pytest.mark.rubric("tiers")
@given(dwpd=st.one_of(st.sampled_from([0.3, 1, 3]), st.floats(0.01, 100)),
       cap=st.one_of(st.sampled_from([1.92, 3.84, 7.68, 15.36, 30.72]), st.floats(0.1, 200)),
       years=st.one_of(st.sampled_from([3, 5]), st.floats(0.5, 10)),
       rate=st.one_of(st.sampled_from([1, 6.8, 10, 25]), st.floats(0.001, 1000)))
def test_ssd_endurance_and_days(dwpd, cap, years, rate):
    """Rule: SSD endurance"""
    tb = Fraction(dwpd) * Fraction(cap) * 365 * Fraction(years)
    close(m.ssd_endurance_tb(dwpd, cap, years), tb, f"ssd_endurance_tb({dwpd}, {cap}, {years})")
    close(m.ssd_days(cap, rate), Fraction(cap) * 10**12 / (Fraction(rate) * GB) / 86400,
          f"ssd_days({cap}, {rate})")


# =====================================================================================
# bad_input
# =====================================================================================
BAD_COUNTS = [0, -1, True, 1.0, 2.5, None, "8"]
BAD_REALS = [float("nan"), float("inf"), float("-inf"), True, None, "1", -1]


def _good():
    return config(LLAMA_70B), gpu(H100), 70 * 10**9


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_bad_counts(bad):
    """Rule: Bad input"""
    cfg, g, a = _good()
    calls = {"kv_dtype_bytes": lambda: m.kv_bytes_per_token(cfg, bad),
             "active_params": lambda: m.recompute_flops(cfg, bad, 8),
             "prefix_len": lambda: m.recompute_flops(cfg, a, bad),
             "prefix_len (fetch)": lambda: m.fetch_time_s(cfg, 2, bad, 0, 1),
             "prompt_len": lambda: m.pd_link_gb_s(cfg, g, a, 2, 0.5, bad),
             "prompt_len (handoff)": lambda: m.handoff_ttft_s(cfg, g, a, 2, 0.5, bad, 0, 1),
             "prefix_len (tiers)": lambda: m.tier_values(cfg, g, a, 2, 0.5, bad, []),
             "active_params (break-even)": lambda: m.break_even_gb_s(cfg, g, bad, 2, 0.5)}
    for what, call in calls.items():
        with pytest.raises(ValueError):
            call()
            pytest.fail(f"{what} = {bad!r} was accepted")


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("bad", BAD_REALS + [0, 0.0, 1.0000001, 2])
def test_bad_mfu(bad):
    """Rule: Bad input"""
    cfg, g, a = _good()
    for call in [lambda: m.recompute_time_s(cfg, g, a, 8, bad),
                 lambda: m.break_even_gb_s(cfg, g, a, 2, bad),
                 lambda: m.fetch_wins_from(cfg, g, a, 2, bad, 0, 1),
                 lambda: m.links_too_slow({"x": (cfg, a)}, {"g": g}, {"l": 1}, 2, bad)]:
        with pytest.raises(ValueError):
            call()
            pytest.fail(f"mfu = {bad!r} was accepted")


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("bad", BAD_REALS + [0, 0.0])
def test_bad_rates(bad):
    """Rule: Bad input"""
    cfg, g, a = _good()
    for what, call in {"link_gb_s": lambda: m.fetch_time_s(cfg, 2, 8, 0, bad),
                       "link_gb_s (wins)": lambda: m.fetch_wins_from(cfg, g, a, 2, 0.5, 0, bad),
                       "link_gb_s (handoff)": lambda: m.handoff_ttft_s(cfg, g, a, 2, 0.5, 8, 0, bad),
                       "link (table)": lambda: m.links_too_slow({"x": (cfg, a)}, {"g": g}, {"l": bad}, 2, 0.5),
                       "tier link": lambda: m.tier_values(cfg, g, a, 2, 0.5, 8, [("t", 0, bad)]),
                       "dwpd": lambda: m.ssd_endurance_tb(bad, 1, 1),
                       "capacity_tb": lambda: m.ssd_endurance_tb(1, bad, 1),
                       "years": lambda: m.ssd_endurance_tb(1, 1, bad),
                       "endurance_tb": lambda: m.ssd_days(bad, 1),
                       "write_gb_s": lambda: m.ssd_days(1, bad)}.items():
        with pytest.raises(ValueError):
            call()
            pytest.fail(f"{what} = {bad!r} was accepted")


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("bad", BAD_REALS[:-1] + [-1e-9])
def test_bad_latency(bad):
    """Rule: Bad input"""
    cfg, g, a = _good()
    for call in [lambda: m.fetch_time_s(cfg, 2, 8, bad, 1),
                 lambda: m.fetch_wins_from(cfg, g, a, 2, 0.5, bad, 1),
                 lambda: m.handoff_ttft_s(cfg, g, a, 2, 0.5, 8, bad, 1),
                 lambda: m.tier_values(cfg, g, a, 2, 0.5, 8, [("t", bad, 1)])]:
        with pytest.raises(ValueError):
            call()
            pytest.fail(f"latency_s = {bad!r} was accepted")


@pytest.mark.rubric("bad_input")
def test_bad_configs_gpus_and_tables():
    """Rule: Bad input"""
    cfg, g, a = _good()
    broken_cfgs = [{k: v for k, v in cfg.items() if k != "num_hidden_layers"},
                   {**cfg, "num_hidden_layers": 0}, {**cfg, "num_attention_heads": True},
                   {**cfg, "head_dim": 0}, {**cfg, "num_key_value_heads": 2.0},
                   {**config(DEEPSEEK_V3), "qk_rope_head_dim": None}]
    for bad in broken_cfgs:
        with pytest.raises(ValueError):
            m.kv_bytes_per_token(bad, 2)
            pytest.fail(f"config {bad} was accepted")
    for bad in [{**cfg, "max_position_embeddings": None}, {**cfg, "max_position_embeddings": 0},
                {k: v for k, v in cfg.items() if k != "max_position_embeddings"}]:
        with pytest.raises(ValueError):
            m.fetch_wins_from(bad, g, a, 2, 0.5, 0, 25)
            pytest.fail("fetch_wins_from needs max_position_embeddings")
    for bad_gpu, dtype in [({"id": "x"}, "bf16"), (g, "fp4"),
                           ({"tensor_tflops": {"bf16": {"dense": 0}}}, "bf16"),
                           ({"tensor_tflops": {"bf16": {"dense": "989.4"}}}, "bf16"),
                           ({"tensor_tflops": {"bf16": {"dense": True}}}, "bf16"),
                           ({"tensor_tflops": {"bf16": {"dense": float("nan")}}}, "bf16"),
                           ({"tensor_tflops": {"bf16": {"dense": float("inf")}}}, "bf16")]:
        with pytest.raises(ValueError):
            m.recompute_time_s(cfg, bad_gpu, a, 8, 0.5, dtype)
            pytest.fail(f"gpu {bad_gpu} / {dtype} was accepted")
    for tiers in [[("t", 0)], [(1, 0, 1)], [("t", 0, 1, 2)], ["t"], "t", None]:
        with pytest.raises(ValueError):
            m.tier_values(cfg, g, a, 2, 0.5, 8, tiers)
            pytest.fail(f"tiers {tiers!r} was accepted")
    for models, gpus, links_ in [({"x": cfg}, {"g": g}, {"l": 1}), ({"x": (cfg,)}, {"g": g}, {"l": 1}),
                                 ({1: (cfg, a)}, {"g": g}, {"l": 1}), ([(cfg, a)], {"g": g}, {"l": 1}),
                                 ({"x": (cfg, a)}, [g], {"l": 1}), ({"x": (cfg, a)}, {"g": g}, [1]),
                                 ({"x": (cfg, True)}, {"g": g}, {"l": 1})]:
        with pytest.raises(ValueError):
            m.links_too_slow(models, gpus, links_, 2, 0.5)
            pytest.fail(f"links_too_slow({models!r:.60}, ...) was accepted")


def _mla(**change):
    cfg = {"num_hidden_layers": 3, "num_attention_heads": 4, "kv_lora_rank": 16,
           "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 8,
           "max_position_embeddings": 4096, **change}
    return {k: v for k, v in cfg.items() if v is not _DROP}


def _gqa(**change):
    cfg = {"num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
           "head_dim": 8, "hidden_size": 32, "max_position_embeddings": 4096, **change}
    return {k: v for k, v in cfg.items() if v is not _DROP}


_DROP = object()


@pytest.mark.rubric("bad_input")
@pytest.mark.parametrize("case", ["mla no v_head_dim", "mla no qk_nope_head_dim", "mla v_head_dim 0",
                                  "mla kv_lora_rank 0", "gqa no heads", "gqa heads True",
                                  "gqa kv heads null", "gqa kv heads 0", "gqa head_dim 0",
                                  "derived head_dim 0", "derived, no hidden_size"])
def test_the_config_is_checked_whole(case):
    """Every function that takes a cfg refuses a config with a bad field the rules read for
    that kind of config, even a field its own formula does not use (kv_bytes_per_token and
    fetch_time_s never use v_head_dim, qk_nope_head_dim or, beside an explicit head_dim,
    num_attention_heads).

    Rule: The config is checked whole"""
    cfg = {"mla no v_head_dim": _mla(v_head_dim=_DROP),
           "mla no qk_nope_head_dim": _mla(qk_nope_head_dim=_DROP),
           "mla v_head_dim 0": _mla(v_head_dim=0),
           "mla kv_lora_rank 0": _mla(kv_lora_rank=0),
           "gqa no heads": _gqa(num_attention_heads=_DROP),
           "gqa heads True": _gqa(num_attention_heads=True),
           "gqa kv heads null": _gqa(num_key_value_heads=None),
           "gqa kv heads 0": _gqa(num_key_value_heads=0),
           "gqa head_dim 0": _gqa(head_dim=0),
           "derived head_dim 0": _gqa(head_dim=None, hidden_size=3),
           "derived, no hidden_size": _gqa(head_dim=_DROP, hidden_size=_DROP)}[case]
    for i, call in enumerate(_cfg_calls(cfg)):
        with pytest.raises(ValueError):
            call()
            pytest.fail(f"call #{i} accepted the config {cfg} ({case})")


@pytest.mark.rubric("bad_input")
def test_fields_the_rules_do_not_read_are_not_checked():
    """An MLA config's num_key_value_heads, head_dim and hidden_size, a hidden_size beside an
    explicit head_dim, and (outside fetch_wins_from) max_position_embeddings are not read:
    whatever they hold, every function answers as for the clean config, and a prefix longer
    than the window is priced like any other.

    Rule: The config is checked whole"""
    h100, a = gpu(H100), 10**9
    cases = [(_mla(), _mla(num_key_value_heads="x", head_dim=0, hidden_size=None)),
             (_gqa(), _gqa(hidden_size=_DROP)), (_gqa(), _gqa(hidden_size="x"))]
    for clean, noisy in cases:
        for i, (want, got) in enumerate(zip(_cfg_calls(clean), _cfg_calls(noisy))):
            assert got() == want(), f"call #{i}: {noisy} must answer as {clean} does"
    for clean in (_mla(), _gqa()):
        short = {**clean, "max_position_embeddings": 4}
        windowless = {k: v for k, v in clean.items() if k != "max_position_embeddings"}
        for cfg in (short, windowless):
            assert m.kv_bytes_per_token(cfg, 2) == m.kv_bytes_per_token(clean, 2)
            assert m.recompute_flops(cfg, a, 100) == Exact(clean, h100, a, 2, 0.5).flops(100), \
                "a prefix longer than max_position_embeddings is priced like any other"
            for f, args in [(m.recompute_time_s, (h100, a, 100, 0.5)), (m.fetch_time_s, (2, 100, 0, 25)),
                            (m.break_even_gb_s, (h100, a, 2, 0.5)), (m.pd_link_gb_s, (h100, a, 2, 0.5, 100)),
                            (m.handoff_ttft_s, (h100, a, 2, 0.5, 100, 0, 25)),
                            (m.tier_values, (h100, a, 2, 0.5, 100, [("t", 0, 25)]))]:
                assert f(cfg, *args) == f(clean, *args), \
                    f"{f.__name__} does not read max_position_embeddings ({cfg})"
            assert m.links_too_slow({"x": (cfg, a)}, {"h": h100}, {"l": 1}, 2, 0.5) == \
                m.links_too_slow({"x": (clean, a)}, {"h": h100}, {"l": 1}, 2, 0.5)


@pytest.mark.rubric("bad_input")
def test_links_too_slow_checks_every_entry():
    """Every entry of the three tables, and kv_dtype_bytes and mfu, are checked even when an
    empty table leaves no triple to price.

    Rule: Bad input"""
    cfg, g, a = _good()
    sliding = config("google--gemma-3-27b-it")
    for models, gpus, links_, b, mfu in [
            ({"x": ({}, a)}, {}, {"l": 1}, 2, 0.5), ({"x": (sliding, a)}, {}, {"l": 1}, 2, 0.5),
            ({"x": (cfg, 0)}, {}, {}, 2, 0.5), ({"x": (cfg,)}, {}, {}, 2, 0.5),
            ({}, {"g": {"id": "x"}}, {"l": 1}, 2, 0.5), ({}, {"g": g}, {"l": -1}, 2, 0.5),
            ({}, {"g": g}, {"l": float("nan")}, 2, 0.5), ({}, {}, {}, 0, 0.5), ({}, {}, {}, 2, 1.5),
            ({"x": (cfg, a)}, {}, {}, True, 0.5), ({}, {"g": g}, {}, 2, 0)]:
        with pytest.raises(ValueError):
            m.links_too_slow(models, gpus, links_, b, mfu)
            pytest.fail(f"links_too_slow({models!r:.60}, {gpus!r:.40}, {links_!r}, {b!r}, {mfu!r}) "
                        "was accepted: an empty table does not excuse the others")
    assert m.links_too_slow({}, {}, {}, 2, 0.5) == [], "nothing to price: no triple"


@pytest.mark.rubric("bad_input")
def test_pairs_and_triples_may_be_lists():
    """A models value and a tier may be a tuple or a list; tiers a list or a tuple.

    Rule: Bad input"""
    cfg, g, a = _good()
    want = m.tier_values(cfg, g, a, 2, 0.5, 64, [("dram", 1e-5, 25), ("ssd", 1e-4, 1)])
    for tiers in [(("dram", 1e-5, 25), ("ssd", 1e-4, 1)), [["dram", 1e-5, 25], ["ssd", 1e-4, 1]]]:
        got = m.tier_values(cfg, g, a, 2, 0.5, 64, tiers)
        assert [tuple(x) for x in got] == [tuple(x) for x in want], f"tiers given as {tiers!r}"
    assert [tuple(x) for x in m.links_too_slow({"x": [cfg, a]}, {"g": g}, {"l": 1}, 2, 0.5)] == \
        [("x", "g", "l")], "a (cfg, active_params) pair given as a list"
