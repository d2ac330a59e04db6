"""split_count_on_hardware: the candidate's split count against decode timings per split count.

Two sources, graded the same way (graders/hidden/split_kv/regret.py):
- recorded: measured fixtures of sweep "split_kv_decode" in hardware_fixtures/ (rows
  {batch, q_heads, kv_heads, context, head_dim, num_splits, kv_blocks, median_us, ...}),
  one table per shape, every count 1 .. min(64, kv_blocks) timed;
- live: on a CUDA GPU, the lead's reference split-KV decode (graders/hardware) timed at
  every eligible split count of a shape and at the candidate's count, one shape per test.
The candidate's count is ``plan_splits(batch, q_heads, kv_heads, context, sms)`` (their
own decision for this kernel on a real GPU); a shape passes when its regret is at most ``MAX_REGRET``. Each test
skips, with the reason, when its source is missing; with neither the item is skipped.
"""

from __future__ import annotations

import pytest

from graders.hidden.split_kv import regret as rg
from graders.impl import kata_impl

sk = kata_impl("split_kv")

# (batch, q_heads, kv_heads, context, head_dim): batch-1 long context (Llama-70B per GPU at
# TP8, Llama-3.1-8B) and a batch whose grid already fills the GPU. Sized so that timing
# every eligible count stays well inside one test's time limit.
LIVE_SHAPES = [
    (1, 8, 1, 65536, 128),
    (1, 32, 8, 16384, 128),
    (16, 32, 8, 2048, 128),
]


def _hardware():
    try:
        from graders.hardware import fixtures, kernels, live, sweeps
    except ImportError as exc:  # pragma: no cover - graders/hardware/ is part of the project
        pytest.skip(f"graders.hardware is not available ({exc}): no fixture or GPU access")
    assert (kernels.BLOCK_N, sweeps.MAX_SPLITS) == (rg.BLOCK_N, rg.MAX_SPLITS), (
        "regret.py's BLOCK_N / MAX_SPLITS must follow graders/hardware")
    return fixtures, live


def _chosen(shape: rg.Shape) -> int:
    sms, batch, q_heads, kv_heads, context, _head_dim, kv_blocks = shape
    chosen = sk.plan_splits(batch, q_heads, kv_heads, context, sms)
    assert type(chosen) is int and 1 <= chosen <= min(rg.MAX_SPLITS, kv_blocks), (
        f"plan_splits({batch}, {q_heads}, {kv_heads}, {context}, {sms}) must return an int "
        f"in 1..{min(rg.MAX_SPLITS, kv_blocks)}, got {chosen!r}")
    return chosen


@pytest.mark.rubric("split_count_on_hardware")
def test_regret_on_recorded_timings():
    fixtures, live = _hardware()
    tables = rg.split_tables(fixtures.find("split_kv_decode", kind="measured"))
    if not tables:
        reason = live.gpu_reason()
        where = f"and no GPU: {reason}" if reason else "(the live tests grade this GPU)"
        pytest.skip(f"no measured split_kv_decode fixture in hardware_fixtures/ {where}")
    regrets, untimed = {}, []
    for shape, times in tables.items():
        chosen = _chosen(shape)
        if chosen in times:
            regrets[shape] = rg.regret(times, chosen)
        else:
            untimed.append((shape, chosen))
    assert not untimed, f"the recorded sweeps lack the chosen counts (an incomplete recording?): {untimed}"
    problem = rg.verdict(regrets)
    assert problem is None, f"split counts vs recorded split_kv_decode timings: {problem}"


@pytest.mark.rubric("split_count_on_hardware")
@pytest.mark.parametrize("batch, q_heads, kv_heads, context, head_dim", LIVE_SHAPES)
def test_regret_on_live_gpu(batch, q_heads, kv_heads, context, head_dim):
    _fixtures, live = _hardware()
    reason = live.gpu_reason()
    if reason is not None:
        pytest.skip(f"no GPU for the live check: {reason}")
    shape = rg.shape_of(live.device_sms(), batch, q_heads, kv_heads, context, head_dim)
    chosen = _chosen(shape)
    nb = shape[-1]
    counts = sorted(set(rg.eligible_counts(nb, min(rg.MAX_SPLITS, nb))) | {chosen})
    times = {s: live.time_split_kv_decode(batch, q_heads, kv_heads, context, head_dim, s)
             for s in counts}
    problem = rg.verdict({shape: rg.regret(times, chosen)})
    assert problem is None, (f"split count {chosen} vs live split-KV decode timings "
                             f"{ {s: round(t, 1) for s, t in times.items()} }: {problem}")
