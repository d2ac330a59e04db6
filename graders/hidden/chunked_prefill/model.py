"""An independent model of the chunked_prefill rules, written from the prompt.

``plan`` builds the decision in separate passes (the decode set, then the starving and
the other waiting requests as two queues), unlike the reference's single sort key; the
metrics walk the log per request rather than per step.
"""

from __future__ import annotations

import math
from typing import Any


def plan(config: dict[str, Any], now: float, waiting: list[dict[str, Any]],
         decoding: list[dict[str, Any]]) -> tuple[list[tuple[str, int]], list[str]]:
    budget = config["budget"]
    by_arrival = sorted(decoding, key=lambda d: d["id"])
    by_arrival.sort(key=lambda d: d["arrival"])           # stable: id breaks arrival ties
    decodes = [d["id"] for d in by_arrival][:budget]
    left = budget - len(decodes)

    fifo = sorted(waiting, key=lambda r: r["id"])
    fifo.sort(key=lambda r: r["arrival"])
    if config["policy"] == "fcfs":
        queue = fifo
    else:
        w = config["starvation_s"]
        starving = [r for r in fifo if w is not None and now - r["arrival"] >= w]
        rest = [r for r in fifo if r not in starving]
        rest.sort(key=lambda r: r["prompt"] - r["prefilled"])   # stable: FCFS breaks ties
        queue = starving + rest

    chunks: list[tuple[str, int]] = []
    for r in queue:
        need = r["prompt"] - r["prefilled"]
        if left <= 0:
            break
        if config["chunked"]:
            n = min(need, left)
        elif need <= left:
            n = need
        else:
            break
        chunks.append((r["id"], n))
        left -= n
    return chunks, decodes


def token_times(log: dict[str, Any]) -> dict[str, list[float]]:
    out = {}
    for r in log["requests"]:
        rid, seen, times = r["id"], 0, []
        for s in log["steps"]:
            n = sum(k for i, k in s["prefill"] if i == rid)
            if n and seen < r["prompt"] <= seen + n:
                times.append(s["end"])
            seen += n
            if rid in s["decode"]:
                times.append(s["end"])
        out[rid] = times
    return out


def ttft(log: dict[str, Any]) -> dict[str, float]:
    t = token_times(log)
    return {r["id"]: t[r["id"]][0] - r["arrival"] for r in log["requests"]}


def itl(log: dict[str, Any]) -> dict[str, list[float]]:
    t = token_times(log)
    return {rid: [ts[i + 1] - ts[i] for i in range(len(ts) - 1)] for rid, ts in t.items()}


def alone(model: dict[str, float], config: dict[str, Any], prompt: int, output: int) -> float:
    """Simulated step by step, alone on an idle engine."""
    total, left = 0.0, prompt
    while left:
        n = min(left, config["budget"]) if config["chunked"] else left
        total += model["a"] + model["b"] * n
        left -= n
    return total + (output - 1) * (model["a"] + model["c"])


def slowdown(log: dict[str, Any]) -> dict[str, float]:
    t = token_times(log)
    return {r["id"]: (t[r["id"]][-1] - r["arrival"])
            / alone(log["model"], log["config"], r["prompt"], r["output"])
            for r in log["requests"]}


def bound(log: dict[str, Any], rid: str, w: float) -> float:
    """The prompt's starvation bound for request ``rid`` of the log."""
    m, budget = log["model"], log["config"]["budget"]
    r = next(q for q in log["requests"] if q["id"] == rid)
    owed = sum(q["output"] - 1 for q in log["requests"]
               if q["id"] != rid and q["arrival"] <= r["arrival"] + w)
    t_max = m["a"] + max(m["b"], m["c"]) * budget
    return r["arrival"] + w + t_max * (1 + math.ceil((r["prompt"] + owed) / budget))
