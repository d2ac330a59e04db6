"""Traces and checks shared by the step_trace tests. Nothing here calls the implementation."""

from __future__ import annotations

import copy
import numbers
from fractions import Fraction
from typing import Any

_EXAMPLE: list[dict[str, Any]] = [
    {"kind": "step", "name": "ProfilerStep#0", "step": 0, "start": 0, "end": 100},
    {"kind": "host", "name": "engine_step", "start": 0, "end": 100},
    {"kind": "host", "name": "python:schedule", "start": 0, "end": 20},
    {"kind": "runtime", "name": "cudaLaunchKernel", "start": 20, "end": 25, "correlation": 1},
    {"kind": "kernel", "name": "gemm", "stream": 7, "start": 25, "end": 60, "correlation": 1},
    {"kind": "runtime", "name": "cudaLaunchKernel", "start": 26, "end": 28, "correlation": 2},
    {"kind": "kernel", "name": "attn", "stream": 8, "start": 40, "end": 70, "correlation": 2},
    {"kind": "runtime", "name": "cudaMemcpyAsync", "start": 28, "end": 30, "correlation": 3},
    {"kind": "memcpy", "name": "DtoH", "stream": 7, "start": 70, "end": 74, "correlation": 3},
    {"kind": "runtime", "name": "cudaStreamSynchronize", "start": 30, "end": 72},
    {"kind": "host", "name": "python:sample", "start": 72, "end": 95},
    {"kind": "step", "name": "ProfilerStep#1", "step": 1, "start": 100, "end": 200},
    {"kind": "host", "name": "python:step", "start": 100, "end": 180},
    {"kind": "runtime", "name": "cudaMemcpy", "start": 110, "end": 150, "correlation": 5},
    {"kind": "memcpy", "name": "HtoD", "stream": 7, "start": 140, "end": 150, "correlation": 5},
    {"kind": "runtime", "name": "cudaLaunchKernel", "start": 152, "end": 155, "correlation": 6},
    {"kind": "kernel", "name": "decode", "stream": 7, "start": 160, "end": 190, "correlation": 6},
    {"kind": "kernel", "name": "late", "stream": 9, "start": 250, "end": 260},
]

EXAMPLE_BUSY = {0: 49, 1: 40}
EXAMPLE_IDLE = {0: {"python:schedule": 20, "cudaLaunchKernel": 5, "python:sample": 21,
                    "engine_step": 5},
                1: {"python:step": 17, "cudaMemcpy": 30, "cudaLaunchKernel": 3,
                    "unattributed": 10}}

_HANDOFF: list[dict[str, Any]] = [
    {"kind": "host", "name": "arrive", "request": 7, "start": 0, "end": 0},
    {"kind": "runtime", "name": "cudaLaunchKernel", "request": 7, "phase": "prefill",
     "correlation": 10, "start": 2, "end": 4},
    {"kind": "kernel", "name": "prefill_attn", "stream": 1, "correlation": 10, "start": 5,
     "end": 40},
    {"kind": "runtime", "name": "cudaLaunchKernel", "request": 7, "phase": "prefill",
     "correlation": 11, "start": 4, "end": 6},
    {"kind": "kernel", "name": "prefill_sample", "stream": 1, "correlation": 11, "start": 40,
     "end": 45},
    {"kind": "runtime", "name": "cudaMemcpyAsync", "request": 7, "phase": "transfer",
     "correlation": 12, "start": 20, "end": 21},
    {"kind": "memcpy", "name": "kv_push", "stream": 2, "correlation": 12, "start": 22, "end": 38},
    {"kind": "runtime", "name": "cudaMemcpyAsync", "request": 7, "phase": "transfer",
     "correlation": 13, "start": 41, "end": 42},
    {"kind": "memcpy", "name": "kv_push", "stream": 2, "correlation": 13, "start": 44, "end": 60},
    {"kind": "runtime", "name": "cudaLaunchKernel", "request": 7, "phase": "decode",
     "correlation": 14, "start": 70, "end": 72},
    {"kind": "kernel", "name": "decode", "stream": 3, "correlation": 14, "start": 75, "end": 90},
    {"kind": "kernel", "name": "orphan", "stream": 3, "correlation": 99, "start": 95, "end": 120},
]

HANDOFF_WANT = {"ttft_via_prefill": 45, "ttft_via_decode": 75, "transfer_hidden": 17,
                "transfer_exposed": 15, "admission_wait": 15, "first_itl_via_prefill": 45}

# Llama-3.1-8B's decode bytes as the spec_policy kata counts them (every layer + the LM head),
# bf16; H100 SXM's datasheet bandwidth (data/gpus/nvidia-h100-sxm-80gb.json: 3350 GB/s).
LLAMA8_WEIGHT_BYTES = 2 * 7_504_658_432
H100_SXM_BANDWIDTH = 3350 * 10**9


def example() -> list[dict[str, Any]]:
    """A fresh copy of the prompt's two-step trace."""
    return copy.deepcopy(_EXAMPLE)


def handoff_trace() -> list[dict[str, Any]]:
    """A fresh copy of the prompt's handoff trace."""
    return copy.deepcopy(_HANDOFF)


def step(sid: int, start: int, end: int) -> dict[str, Any]:
    return {"kind": "step", "name": f"ProfilerStep#{sid}", "step": sid, "start": start,
            "end": end}


def gpu(start: int, end: int, stream: int = 0, kind: str = "kernel", name: str = "k",
        **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "name": name, "stream": stream, "start": start, "end": end, **extra}


def cause(kind: str, name: str, start: int, end: int, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "name": name, "start": start, "end": end, **extra}


def as_fraction(got: Any, what: str) -> Fraction:
    """An exact value returned as a (numerator, denominator) pair, checked and converted."""
    ok = (isinstance(got, (tuple, list)) and len(got) == 2
          and all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in got)
          and got[1] > 0)
    assert ok, (f"{what}: an exact value is a pair (numerator, denominator) of ints with "
                f"denominator > 0, got {got!r}")
    return Fraction(int(got[0]), int(got[1]))


def exact(got: Any, want: Fraction, what: str) -> None:
    value = as_fraction(got, what)
    assert value == want, f"{what}: want {want} = {float(want)!r}, got {value} = {float(value)!r}"
