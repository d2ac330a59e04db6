"""split_count_on_hardware: the candidate's split count against decode timings per split count.

Two sources, each graded the same way (graders/hidden/split_kv/regret.py):
- recorded: measured fixtures of sweep "split_kv_decode" in hardware_fixtures/ (rows
  {batch, q_heads, kv_heads, context, head_dim, num_splits, median_us}), one table per shape;
- live: on a CUDA GPU, the lead's reference split-KV decode timed at every eligible split
  count of each shape and at the candidate's count.
The candidate's count is ``choose_num_splits(batch, q_heads, ceil(context / 128), sms)``.
Each test skips, with the reason, when its source is missing; the item is then skipped.
"""

from __future__ import annotations

import pytest

from graders.hidden.split_kv import regret as rg
from graders.impl import kata_impl

sk = kata_impl("split_kv")

# (batch, q_heads, kv_heads, context, head_dim): long-context batch-1 decode down to a batch
# whose grid already fills the GPU.
LIVE_SHAPES = [
    (1, 8, 8, 65536, 128),
    (1, 32, 8, 32768, 128),
    (2, 32, 8, 16384, 128),
    (8, 32, 8, 8192, 128),
    (32, 32, 8, 4096, 128),
]


def _hardware():
    try:
        from graders.hardware import fixtures, live
    except ImportError as exc:  # pragma: no cover - graders/hardware/ comes from main
        pytest.skip(f"graders.hardware is not available ({exc}): no fixture or GPU access")
    return fixtures, live


def _chosen(shape: rg.Shape) -> int:
    sms, batch, q_heads, _kv_heads, context, _head_dim = shape
    return sk.choose_num_splits(batch, q_heads, rg.num_kv_blocks(context), sms)


@pytest.mark.rubric("split_count_on_hardware")
def test_regret_on_recorded_timings():
    fixtures, live = _hardware()
    tables = rg.split_tables(fixtures.find("split_kv_decode", kind="measured"))
    if not tables:
        reason = live.gpu_reason()
        where = f"no GPU: {reason}" if reason else "the live test grades this GPU"
        pytest.skip(f"no measured split_kv_decode fixture in hardware_fixtures/ ({where})")
    regrets, untimed = {}, []
    for shape, times in tables.items():
        chosen = _chosen(shape)
        if chosen in times:
            regrets[shape] = rg.regret(times, chosen)
        else:
            untimed.append((shape, chosen))
    if not regrets:
        pytest.skip(f"the recorded sweeps did not time the chosen counts: {untimed}")
    problem = rg.verdict(regrets)
    assert problem is None, f"split counts vs recorded split_kv_decode timings: {problem}"


@pytest.mark.rubric("split_count_on_hardware")
def test_regret_on_live_gpu():
    _fixtures, live = _hardware()
    reason = live.gpu_reason()
    if reason is not None:
        pytest.skip(f"no GPU for the live check: {reason}")
    sms = live.device_sms()
    regrets = {}
    for batch, q_heads, kv_heads, context, head_dim in LIVE_SHAPES:
        shape: rg.Shape = (sms, batch, q_heads, kv_heads, context, head_dim)
        chosen = _chosen(shape)
        nb = rg.num_kv_blocks(context)
        counts = sorted(set(rg.eligible_counts(nb, min(128, sms, nb))) | {chosen})
        times = {s: live.time_split_kv_decode(batch, q_heads, kv_heads, context, head_dim, s)
                 for s in counts}
        regrets[shape] = rg.regret(times, chosen)
    problem = rg.verdict(regrets)
    assert problem is None, f"split counts vs live split-KV decode timings on {sms} SMs: {problem}"
