"""Reference solution for step_trace: what a step's timeline says.

Everything is exact: times are ints, measures are sums of int interval lengths, ratios and
probabilities are Fractions, returned as (numerator, denominator) pairs. Intervals are
half-open [start, end): touching intervals never overlap, a zero-length event covers nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

KINDS = ("kernel", "memcpy", "runtime", "host", "step")
GPU_KINDS = ("kernel", "memcpy")
BLOCKING_CALLS = frozenset({"cudaDeviceSynchronize", "cudaStreamSynchronize",
                            "cudaEventSynchronize", "cudaMemcpy"})
PHASES = ("prefill", "transfer", "decode")
UNATTRIBUTED = "unattributed"

Interval = tuple[int, int]
Ratio = tuple[int, int]


def _ratio(x: Fraction) -> Ratio:
    """An exact value as (numerator, denominator) in lowest terms: plain data."""
    return x.numerator, x.denominator


# ------------------------------------------------------------------ validation
def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _int(x: object, what: str, lo: int = 0) -> int:
    if not _is_int(x) or x < lo:  # type: ignore[operator]
        raise ValueError(f"{what} must be an int >= {lo}, got {x!r}")
    return x  # type: ignore[return-value]


def _checked(trace: object) -> list[dict[str, Any]]:
    """The trace's events after every check the prompt's "Bad input" lists."""
    if not isinstance(trace, (list, tuple)):
        raise ValueError(f"a trace is a list of event dicts, got {type(trace).__name__}")
    events: list[dict[str, Any]] = []
    for i, ev in enumerate(trace):
        if not isinstance(ev, dict):
            raise ValueError(f"event {i} is not a dict: {ev!r}")
        kind = ev.get("kind")
        if kind not in KINDS:
            raise ValueError(f"event {i}: unknown kind {kind!r}")
        if not isinstance(ev.get("name"), str):
            raise ValueError(f"event {i}: name must be a str")
        start = _int(ev.get("start"), f"event {i} start")
        end = _int(ev.get("end"), f"event {i} end")
        if end < start:
            raise ValueError(f"event {i} ends before it starts: [{start}, {end})")
        if kind in GPU_KINDS:
            _int(ev.get("stream"), f"event {i} stream")
        if kind == "step":
            _int(ev.get("step"), f"event {i} step id")
        for key in ("correlation", "request"):
            if key in ev and ev[key] is not None:
                _int(ev[key], f"event {i} {key}")
        if kind == "runtime" and ev.get("phase") is not None and ev["phase"] not in PHASES:
            raise ValueError(f"event {i}: phase must be one of {PHASES}, got {ev['phase']!r}")
        events.append(ev)
    steps = sorted((e["start"], e["end"], e["step"]) for e in events if e["kind"] == "step")
    if len({s[2] for s in steps}) != len(steps):
        raise ValueError("two step events share a step id")
    for (_, end0, id0), (start1, _, id1) in zip(steps, steps[1:]):
        if start1 < end0:
            raise ValueError(f"steps {id0} and {id1} overlap")
    corr = [e["correlation"] for e in events
            if e["kind"] == "runtime" and e.get("correlation") is not None]
    if len(set(corr)) != len(corr):
        raise ValueError("two runtime events share a correlation id")
    return events


# ------------------------------------------------------------------ intervals
def _union(intervals: Iterable[Interval]) -> list[Interval]:
    """Disjoint, sorted, non-empty intervals covering the same instants."""
    merged: list[Interval] = []
    for start, end in sorted(iv for iv in intervals if iv[1] > iv[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _clip(intervals: Iterable[Interval], lo: int, hi: int) -> list[Interval]:
    return [(max(s, lo), min(e, hi)) for s, e in intervals if min(e, hi) > max(s, lo)]


def _measure(intervals: Iterable[Interval]) -> int:
    return sum(e - s for s, e in intervals)


def _steps(events: list[dict[str, Any]]) -> dict[int, Interval]:
    return {e["step"]: (e["start"], e["end"]) for e in events if e["kind"] == "step"}


def _gpu_union(events: list[dict[str, Any]]) -> list[Interval]:
    return _union((e["start"], e["end"]) for e in events if e["kind"] in GPU_KINDS)


# ------------------------------------------------------------------ busy and idle
def gpu_busy(trace: Sequence[dict[str, Any]]) -> dict[int, int]:
    events = _checked(trace)
    busy = _gpu_union(events)
    return {sid: _measure(_clip(busy, lo, hi)) for sid, (lo, hi) in _steps(events).items()}


def _rank(ev: dict[str, Any]) -> tuple[int, int, int, str]:
    """Smaller wins: blocking runtime calls, other runtime calls, host spans; then the
    innermost (latest start, then earliest end), then the smallest name."""
    if ev["kind"] == "runtime":
        cls = 0 if ev["name"] in BLOCKING_CALLS else 1
    else:
        cls = 2
    return (cls, -ev["start"], ev["end"], ev["name"])


def idle_breakdown(trace: Sequence[dict[str, Any]]) -> dict[int, dict[str, int]]:
    events = _checked(trace)
    busy = _gpu_union(events)
    causes = [e for e in events if e["kind"] in ("runtime", "host") and e["end"] > e["start"]]
    out: dict[int, dict[str, int]] = {}
    for sid, (lo, hi) in _steps(events).items():
        idle: list[Interval] = []
        t = lo
        for s, e in _clip(busy, lo, hi):
            if s > t:
                idle.append((t, s))
            t = e
        if hi > t:
            idle.append((t, hi))
        result: dict[str, int] = {}
        for a, b in idle:
            cuts = sorted({a, b} | {x for c in causes for x in (c["start"], c["end"]) if a < x < b})
            for x, y in zip(cuts, cuts[1:]):
                covering = [c for c in causes if c["start"] <= x and c["end"] >= y]
                label = min(covering, key=_rank)["name"] if covering else UNATTRIBUTED
                result[label] = result.get(label, 0) + (y - x)
        out[sid] = result
    return out


# ------------------------------------------------------------------ MBU
def decode_mbu(trace: Sequence[dict[str, Any]], step: int, weight_bytes: int, kv_bytes: int,
               bandwidth: int) -> dict[str, Ratio]:
    events = _checked(trace)
    _int(step, "step")
    _int(weight_bytes, "weight_bytes")
    _int(kv_bytes, "kv_bytes")
    _int(bandwidth, "bandwidth", lo=1)
    windows = _steps(events)
    if step not in windows:
        raise ValueError(f"no step {step} in the trace")
    lo, hi = windows[step]
    busy = _measure(_clip(_gpu_union(events), lo, hi))
    if busy == 0:
        raise ValueError(f"step {step} has no GPU work")
    floor = Fraction((weight_bytes + kv_bytes) * 1_000_000, bandwidth)
    return {"floor_us": _ratio(floor), "mbu": _ratio(floor / (hi - lo)),
            "busy_mbu": _ratio(floor / busy)}


# ------------------------------------------------------------------ periodic stalls
def stall_period(durations: Sequence[int], threshold: int) -> tuple[int, list[int]] | None:
    if not isinstance(durations, (list, tuple)):
        raise ValueError("durations must be a list of ints")
    for d in durations:
        _int(d, "a duration")
    _int(threshold, "threshold")
    slow = [d > threshold for d in durations]
    if not any(slow):
        return None
    n = len(slow)
    for p in range(1, n // 2 + 1):
        if all(slow[i] == slow[i + p] for i in range(n - p)):
            return p, [r for r in range(p) if slow[r]]
    return None


def stall_exposure(period: int, residues: Sequence[int], n: int) -> dict[str, Ratio]:
    _int(period, "period", lo=1)
    _int(n, "n")
    if not isinstance(residues, (list, tuple)):
        raise ValueError("residues must be a list of ints")
    for r in residues:
        _int(r, "a residue")
        if r >= period:
            raise ValueError(f"residue {r} is not below the period {period}")
    stalls = set(residues)
    if len(stalls) != len(residues):
        raise ValueError("residues repeat")
    q = Fraction(len(stalls), period)
    reach = range(min(n, period))
    hit = sum(1 for s in range(period) if any((s + j) % period in stalls for j in reach))
    return {"independent": _ratio(1 - (1 - q) ** n), "periodic": _ratio(Fraction(hit, period))}


# ------------------------------------------------------------------ handoff
def handoff(trace: Sequence[dict[str, Any]], request: int) -> dict[str, int]:
    events = _checked(trace)
    _int(request, "request")
    arrivals = [e for e in events
                if e["kind"] == "host" and e["name"] == "arrive" and e.get("request") == request]
    if len(arrivals) != 1:
        raise ValueError(f"request {request} needs exactly one 'arrive' host event")
    arrive = arrivals[0]["start"]
    phase_of = {e["correlation"]: e["phase"] for e in events
                if e["kind"] == "runtime" and e.get("request") == request
                and e.get("phase") is not None and e.get("correlation") is not None}
    wanted = {"prefill": "kernel", "transfer": "memcpy", "decode": "kernel"}
    spans: dict[str, list[Interval]] = {p: [] for p in PHASES}
    for e in events:
        phase = phase_of.get(e.get("correlation")) if e["kind"] in GPU_KINDS else None
        if phase is not None and e["kind"] == wanted[phase]:
            spans[phase].append((e["start"], e["end"]))
    for p in PHASES:
        if not spans[p]:
            raise ValueError(f"request {request} has no {p} {wanted[p]}")
    prefill_end = max(e for _, e in spans["prefill"])
    kv_ready = max(e for _, e in spans["transfer"])
    decode_start = min(s for s, _ in spans["decode"])
    decode_end = max(e for _, e in spans["decode"])
    ready = max(prefill_end, kv_ready)
    if decode_start < ready:
        raise ValueError(f"request {request}'s decode starts before its prefill and KV are done")
    if min(s for s, _ in spans["prefill"]) < arrive:
        raise ValueError(f"request {request}'s prefill starts before it arrives")
    hidden = _measure(_clip(_union(spans["transfer"]), 0, prefill_end))
    return {
        "ttft_via_prefill": prefill_end - arrive,
        "ttft_via_decode": decode_start - arrive,
        "transfer_hidden": hidden,
        "transfer_exposed": ready - prefill_end,
        "admission_wait": decode_start - ready,
        "first_itl_via_prefill": decode_end - prefill_end,
    }
