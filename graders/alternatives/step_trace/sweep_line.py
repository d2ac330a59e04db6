"""A second correct step_trace solution, written from the prompt, the stub and the public
tests only.

Written by the kata's author (no helper agent was available in this session), in a different
style from the reference: one sweep over every event boundary of the whole trace keeps the
set of running GPU events and covering causes, so busy time, idle labels and step
membership all come from the same elementary segments (no interval merging, no clipping);
the attribution compares candidates by explicit rules rather than one sort key; the period
is the smallest shift at which the slow/not-slow list matches itself; the periodic exposure
marks, for each stalled residue, the n phases that reach it; exact values are integer pairs
built by hand, not reduced (the prompt accepts any equal pair), and no fractions.Fraction.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

BLOCKING = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
            "cudaMemcpy"}


def _bad(msg: str) -> ValueError:
    return ValueError(msg)


def _nat(x: Any, low: int = 0) -> bool:
    return type(x) is int and x >= low


def _validate(trace: Any) -> list[dict[str, Any]]:
    if not isinstance(trace, (list, tuple)):
        raise _bad("trace must be a list")
    out = []
    for ev in trace:
        if not isinstance(ev, dict):
            raise _bad("event must be a dict")
        kind = ev.get("kind")
        if kind not in ("kernel", "memcpy", "runtime", "host", "step"):
            raise _bad("kind")
        if type(ev.get("name")) is not str:
            raise _bad("name")
        if not (_nat(ev.get("start")) and _nat(ev.get("end")) and ev["start"] <= ev["end"]):
            raise _bad("start/end")
        if kind in ("kernel", "memcpy") and not _nat(ev.get("stream")):
            raise _bad("stream")
        if kind == "step" and not _nat(ev.get("step")):
            raise _bad("step id")
        for key in ("correlation", "request"):
            if ev.get(key) is not None and not _nat(ev[key]):
                raise _bad(key)
        if kind == "runtime" and ev.get("phase") not in (None, "prefill", "transfer", "decode"):
            raise _bad("phase")
        out.append(ev)
    steps = [e for e in out if e["kind"] == "step"]
    ids = [e["step"] for e in steps]
    if len(ids) != len(set(ids)):
        raise _bad("duplicate step id")
    for i, a in enumerate(steps):
        for b in steps[i + 1:]:
            if a["start"] < b["end"] and b["start"] < a["end"]:
                raise _bad("steps overlap")
    seen: set[int] = set()
    for e in out:
        if e["kind"] == "runtime" and e.get("correlation") is not None:
            if e["correlation"] in seen:
                raise _bad("duplicate correlation")
            seen.add(e["correlation"])
    return out


def _better(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Does cause a outrank cause b?"""
    def cls(e: dict[str, Any]) -> int:
        if e["kind"] == "host":
            return 2
        return 0 if e["name"] in BLOCKING else 1
    if cls(a) != cls(b):
        return cls(a) < cls(b)
    if a["start"] != b["start"]:
        return a["start"] > b["start"]
    if a["end"] != b["end"]:
        return a["end"] < b["end"]
    return bool(a["name"] < b["name"])


def _sweep(events: list[dict[str, Any]]):
    """Yield (x, y, gpu_running, covering causes, step id or None) per elementary segment."""
    points = sorted({t for e in events for t in (e["start"], e["end"])})
    for x, y in zip(points, points[1:]):
        running = any(e["kind"] in ("kernel", "memcpy") and e["start"] <= x and y <= e["end"]
                      for e in events)
        causes = [e for e in events if e["kind"] in ("runtime", "host")
                  and e["start"] <= x and y <= e["end"]]
        owner = None
        for e in events:
            if e["kind"] == "step" and e["start"] <= x and y <= e["end"]:
                owner = e["step"]
        yield x, y, running, causes, owner


def gpu_busy(trace):
    events = _validate(trace)
    result = {e["step"]: 0 for e in events if e["kind"] == "step"}
    for x, y, running, _, owner in _sweep(events):
        if owner is not None and running:
            result[owner] += y - x
    return result


def idle_breakdown(trace):
    events = _validate(trace)
    result: dict[int, dict[str, int]] = {e["step"]: {} for e in events if e["kind"] == "step"}
    for x, y, running, causes, owner in _sweep(events):
        if owner is None or running:
            continue
        best = None
        for c in causes:
            if best is None or _better(c, best):
                best = c
        label = "unattributed" if best is None else best["name"]
        result[owner][label] = result[owner].get(label, 0) + (y - x)
    return result


def _pair(num: int, den: int) -> tuple[int, int]:
    return num, den


def decode_mbu(trace, step, weight_bytes, kv_bytes, bandwidth):
    events = _validate(trace)
    if not (_nat(step) and _nat(weight_bytes) and _nat(kv_bytes) and _nat(bandwidth, 1)):
        raise _bad("arguments")
    window = [e for e in events if e["kind"] == "step" and e["step"] == step]
    if not window:
        raise _bad("unknown step")
    busy = gpu_busy(events)[step]
    if busy == 0:
        raise _bad("no GPU work")
    length = window[0]["end"] - window[0]["start"]
    num = (weight_bytes + kv_bytes) * 10**6
    return {"floor_us": _pair(num, bandwidth), "mbu": _pair(num, bandwidth * length),
            "busy_mbu": _pair(num, bandwidth * busy)}


def stall_period(durations, threshold):
    if not isinstance(durations, (list, tuple)) or not all(_nat(d) for d in durations):
        raise _bad("durations")
    if not _nat(threshold):
        raise _bad("threshold")
    slow = [d > threshold for d in durations]
    if not any(slow):
        return None
    for p in range(1, len(slow) // 2 + 1):
        if slow[p:] == slow[:-p]:
            return (p, [r for r in range(p) if slow[r]])
    return None


def stall_exposure(period, residues, n):
    if not _nat(period, 1) or not _nat(n) or not isinstance(residues, (list, tuple)):
        raise _bad("arguments")
    if not all(_nat(r) and r < period for r in residues) or len(set(residues)) != len(residues):
        raise _bad("residues")
    k = len(residues)
    # 1 - ((period - k) / period)^n, kept as integers
    den = period ** n
    num = den - (period - k) ** n
    phases = set()
    for r in residues:
        for j in range(min(n, period)):
            phases.add((r - j) % period)
    return {"independent": _pair(num, den), "periodic": _pair(len(phases), period)}


def handoff(trace, request):
    events = _validate(trace)
    if not _nat(request):
        raise _bad("request")
    arrivals = [e for e in events if e["kind"] == "host" and e["name"] == "arrive"
                and e.get("request") == request]
    if len(arrivals) != 1:
        raise _bad("arrive")
    a = arrivals[0]["start"]
    by_corr: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        if e["kind"] in ("kernel", "memcpy") and e.get("correlation") is not None:
            by_corr[e["correlation"]].append(e)
    groups: dict[str, list[dict[str, Any]]] = {"prefill": [], "transfer": [], "decode": []}
    for call in events:
        if call["kind"] != "runtime" or call.get("request") != request:
            continue
        phase = call.get("phase")
        if phase is None or call.get("correlation") is None:
            continue
        want = "memcpy" if phase == "transfer" else "kernel"
        groups[phase] += [g for g in by_corr[call["correlation"]] if g["kind"] == want]
    if not all(groups.values()):
        raise _bad("missing phase")
    if min(e["start"] for e in groups["prefill"]) < a:
        raise _bad("prefill before arrival")
    f = max(e["end"] for e in groups["prefill"])
    k = max(e["end"] for e in groups["transfer"])
    d = min(e["start"] for e in groups["decode"])
    e2 = max(e["end"] for e in groups["decode"])
    ready = f if f > k else k
    if d < ready:
        raise _bad("decode before ready")
    # hidden transfer: sweep the copies' boundaries below f
    pts = sorted({t for e in groups["transfer"] for t in (e["start"], e["end"])} | {f})
    hidden = sum(y - x for x, y in zip(pts, pts[1:]) if y <= f
                 and any(e["start"] <= x and y <= e["end"] for e in groups["transfer"]))
    return {"ttft_via_prefill": f - a, "ttft_via_decode": d - a, "transfer_hidden": hidden,
            "transfer_exposed": ready - f, "admission_wait": d - ready,
            "first_itl_via_prefill": e2 - f}
