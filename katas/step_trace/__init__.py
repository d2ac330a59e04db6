"""step_trace: what a step's timeline says.

Fill in every function. The prompt is katas/step_trace/README.md; run the public tests with
``nox -s kata -- step_trace``.

A *trace* is a list of event dicts (any order). Every event has ``kind`` (one of "kernel",
"memcpy", "runtime", "host", "step"), ``name`` (str), ``start`` and ``end`` (ints, 0 <= start
<= end, one time unit: microseconds where a bandwidth is involved). Kernels and memcpys are GPU
work and carry ``stream`` (int >= 0); a step event carries ``step`` (its int id) and is the
step's window; kernels, memcpys and runtime calls may carry ``correlation`` (int); runtime
and host events may carry ``request`` (int) and runtime calls ``phase`` ("prefill",
"transfer" or "decode"). Other keys are ignored. Intervals are half-open: [start, end).
Bad input (see the prompt's "Bad input") raises ValueError; ints are never bools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_PROMPT = "see katas/step_trace/README.md"


def gpu_busy(trace: Sequence[dict[str, Any]]) -> dict[int, int]:
    """For every step id: the time inside the step's window during which at least one kernel
    or memcpy runs, on any stream (overlaps counted once)."""
    raise NotImplementedError(f"gpu_busy ({_PROMPT})")


def idle_breakdown(trace: Sequence[dict[str, Any]]) -> dict[int, dict[str, int]]:
    """For every step id: the GPU's idle time inside the window, by the name of the event the
    prompt's attribution rule picks, or "unattributed". Labels with zero time are left out."""
    raise NotImplementedError(f"idle_breakdown ({_PROMPT})")


def decode_mbu(trace: Sequence[dict[str, Any]], step: int, weight_bytes: int, kv_bytes: int,
               bandwidth: int) -> dict[str, tuple[int, int]]:
    """The step's floor from bytes and its bandwidth utilisation, each exact value as a pair
    (numerator, denominator) of ints with denominator > 0:
    {"floor_us": (weight_bytes + kv_bytes) / bandwidth in microseconds (bandwidth in bytes/s),
    "mbu": floor_us / the step window's length, "busy_mbu": floor_us / the step's GPU busy
    time}. Raises ValueError for an unknown step or a step with no GPU work."""
    raise NotImplementedError(f"decode_mbu ({_PROMPT})")


def stall_period(durations: Sequence[int], threshold: int) -> tuple[int, list[int]] | None:
    """Steps are slow when their duration exceeds ``threshold``. The smallest period p <=
    len(durations) // 2 of the slow/not-slow sequence and the residues r < p of the slow
    steps, or None when no step is slow or no such p exists."""
    raise NotImplementedError(f"stall_period ({_PROMPT})")


def stall_exposure(period: int, residues: Sequence[int], n: int) -> dict[str, tuple[int, int]]:
    """The chance that a request of ``n`` consecutive steps meets at least one stall, each as
    a pair (numerator, denominator) of ints with denominator > 0:
    {"independent": 1 - (1 - q)^n with q = len(residues) / period, "periodic": the share of
    the ``period`` start phases whose n steps include a stalled residue}."""
    raise NotImplementedError(f"stall_exposure ({_PROMPT})")


def handoff(trace: Sequence[dict[str, Any]], request: int) -> dict[str, int]:
    """The prefill/decode handoff of one request, reconstructed through correlation ids:
    {"ttft_via_prefill", "ttft_via_decode", "transfer_hidden", "transfer_exposed",
    "admission_wait", "first_itl_via_prefill"} as the prompt's "Handoff" rules define."""
    raise NotImplementedError(f"handoff ({_PROMPT})")
