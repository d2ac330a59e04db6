"""A pytest plugin for the project's suite: a pretend GPU with a made-up clock.

``-p selftest.fake_gpu`` makes ``graders.hardware.live`` report a usable 132-SM GPU whose
timings come from a formula chosen by ``FAKE_GPU_MODE``:
- ``flat``: every split count and every GEMM costs the same per unit of work, so any
  valid choice has zero regret (a correct submission must pass);
- ``punish``: the count or chunk the reference solution would choose costs twice as much as
  every other one (the reference must fail: the hardware tests can fail). For gemm_waves the
  chunk is the one the reference chooses without a sweep (its wave model); with the sweep it
  avoids it, so the suite checks that the mutant ignoring the sweep fails.
Nothing here is a measurement; it exists to run the hardware tests' live path on a CPU.
"""

from __future__ import annotations

import functools
import os

from graders.hardware import live

SMS = 132


@functools.lru_cache(maxsize=None)
def _reference_choice_split(batch: int, q_heads: int, kv_heads: int, context: int) -> int:
    from solutions import split_kv

    return split_kv.plan_splits(batch, q_heads, kv_heads, context, SMS)


@functools.lru_cache(maxsize=None)
def _reference_chunks(n: int, k: int) -> set[int]:
    from graders.hidden.gemm_waves import hw_check
    from solutions import gemm_waves

    return {gemm_waves.plan_chunk(b, n, k, SMS) for b in hw_check.BUDGETS}


def split_time(batch: int, q_heads: int, kv_heads: int, context: int, head_dim: int,
               num_splits: int) -> float:
    if os.environ.get("FAKE_GPU_MODE") == "punish" and \
            num_splits == _reference_choice_split(batch, q_heads, kv_heads, context):
        return 100.0
    return 50.0


def gemm_time(m: int, n: int, k: int) -> float:
    per_token = 0.01
    if os.environ.get("FAKE_GPU_MODE") == "punish" and m in _reference_chunks(n, k):
        per_token *= 2
    return m * per_token


def pytest_configure(config: object) -> None:
    live.gpu_reason = lambda: None  # type: ignore[method-assign]
    live.device_sms = lambda: SMS
    live.time_split_kv_decode = split_time
    live.time_gemm = gemm_time
