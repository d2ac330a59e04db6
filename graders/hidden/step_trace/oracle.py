"""Independent oracles for step_trace: brute force, one time unit at a time.

Times in the generated traces are small, so every instant of every window is visited and
labelled on its own; nothing here shares code with the reference.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import hypothesis.strategies as st

BLOCKING = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
            "cudaMemcpy")
RUNTIME_NAMES = BLOCKING + ("cudaLaunchKernel", "cudaMemcpyAsync", "cudaGraphLaunch")
HOST_NAMES = ("py", "sched", "a", "b")


def windows(trace: list[dict[str, Any]]) -> dict[int, tuple[int, int]]:
    return {e["step"]: (e["start"], e["end"]) for e in trace if e["kind"] == "step"}


def covers(e: dict[str, Any], t: int) -> bool:
    return e["start"] <= t < e["end"]


def gpu_at(trace: list[dict[str, Any]], t: int) -> bool:
    return any(e["kind"] in ("kernel", "memcpy") and covers(e, t) for e in trace)


def busy(trace: list[dict[str, Any]]) -> dict[int, int]:
    return {sid: sum(1 for t in range(lo, hi) if gpu_at(trace, t))
            for sid, (lo, hi) in windows(trace).items()}


def label_at(trace: list[dict[str, Any]], t: int) -> str:
    best: tuple[Any, ...] | None = None
    for e in trace:
        if e["kind"] not in ("runtime", "host") or not covers(e, t):
            continue
        cls = (0 if e["name"] in BLOCKING else 1) if e["kind"] == "runtime" else 2
        key = (cls, -e["start"], e["end"], e["name"])
        if best is None or key < best:
            best = key
    return "unattributed" if best is None else str(best[3])


def idle(trace: list[dict[str, Any]]) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    for sid, (lo, hi) in windows(trace).items():
        counts: dict[str, int] = {}
        for t in range(lo, hi):
            if not gpu_at(trace, t):
                name = label_at(trace, t)
                counts[name] = counts.get(name, 0) + 1
        out[sid] = counts
    return out


def period(durations: list[int], threshold: int) -> tuple[int, list[int]] | None:
    slow = [d > threshold for d in durations]
    if True not in slow:
        return None
    for p in range(1, len(slow) // 2 + 1):
        # the literal definition: step i is slow exactly when step i + p is
        if all(slow[i] is slow[i + p] for i in range(len(slow)) if i + p < len(slow)):
            return p, sorted({i % p for i, s in enumerate(slow) if s})
    return None


def exposure(period_: int, residues: list[int], n: int) -> dict[str, Fraction]:
    miss = Fraction(1)
    for _ in range(n):
        miss *= 1 - Fraction(len(residues), period_)
    met = sum(1 for s in range(period_)
              if any((s + j) % period_ in residues for j in range(n)))
    return {"independent": 1 - miss, "periodic": Fraction(met, period_)}


def handoff(trace: list[dict[str, Any]], request: int) -> dict[str, int]:
    """The chain, walked from each GPU event to its runtime call."""
    calls = {e["correlation"]: e for e in trace
             if e["kind"] == "runtime" and e.get("correlation") is not None}
    arrive = [e["start"] for e in trace
              if e["kind"] == "host" and e["name"] == "arrive" and e.get("request") == request]
    phase: dict[str, list[dict[str, Any]]] = {"prefill": [], "transfer": [], "decode": []}
    for e in trace:
        if e["kind"] not in ("kernel", "memcpy") or e.get("correlation") not in calls:
            continue
        call = calls[e["correlation"]]
        if call.get("request") != request or call.get("phase") is None:
            continue
        if (e["kind"] == "memcpy") == (call["phase"] == "transfer"):
            phase[call["phase"]].append(e)
    (a,) = arrive
    f = max(e["end"] for e in phase["prefill"])
    k = max(e["end"] for e in phase["transfer"])
    d = min(e["start"] for e in phase["decode"])
    end = max(e["end"] for e in phase["decode"])
    hidden = sum(1 for t in range(0, f) if any(covers(e, t) for e in phase["transfer"]))
    return {"ttft_via_prefill": f - a, "ttft_via_decode": d - a, "transfer_hidden": hidden,
            "transfer_exposed": max(f, k) - f, "admission_wait": d - max(f, k),
            "first_itl_via_prefill": end - f}


# ------------------------------------------------------------------ strategies
@st.composite
def traces(draw: Any, horizon: int = 40, max_gpu: int = 8, max_causes: int = 8) -> list[Any]:
    """Steps with gaps between them, GPU work on a few streams (overlaps, touching ends,
    zero lengths, events across step edges and outside every step), runtime calls and host
    spans with colliding starts, ends and names; shuffled."""
    cuts = sorted(draw(st.sets(st.integers(0, horizon), min_size=2, max_size=8)))
    trace: list[dict[str, Any]] = []
    sid_pool = draw(st.permutations(list(range(10))))
    i = 0
    while i + 1 < len(cuts):
        if draw(st.booleans()) or i == 0:
            trace.append({"kind": "step", "name": f"ProfilerStep#{sid_pool[len(trace)]}",
                          "step": sid_pool[len(trace)], "start": cuts[i], "end": cuts[i + 1]})
        i += draw(st.sampled_from([1, 1, 2]))
    if draw(st.booleans()):  # a zero-length step at a free instant
        used = [(e["start"], e["end"]) for e in trace]
        t = draw(st.integers(0, horizon + 5))
        if all(not (s < t < e) for s, e in used) and len(trace) < 10:
            trace.append({"kind": "step", "name": "empty", "step": sid_pool[len(trace)],
                          "start": t, "end": t})
    interval = st.tuples(st.integers(0, horizon + 5), st.integers(0, 15)).map(
        lambda p: (p[0], p[0] + p[1] if p[1] < 13 else p[0]))
    for s, e in draw(st.lists(interval, max_size=max_gpu)):
        trace.append({"kind": draw(st.sampled_from(["kernel", "kernel", "memcpy"])),
                      "name": "g", "stream": draw(st.integers(0, 3)), "start": s, "end": e})
    corr = 0
    for s, e in draw(st.lists(interval, max_size=max_causes)):
        if draw(st.booleans()):
            corr += 1
            trace.append({"kind": "runtime", "name": draw(st.sampled_from(RUNTIME_NAMES)),
                          "start": s, "end": e, "correlation": corr})
        else:
            trace.append({"kind": "host", "name": draw(st.sampled_from(HOST_NAMES)),
                          "start": s, "end": e})
    if draw(st.booleans()) and len(trace) > 1:  # an exact duplicate span
        causes = [e for e in trace if e["kind"] == "host"]
        if causes:
            trace.append(dict(draw(st.sampled_from(causes))))
    return draw(st.permutations(trace))
