"""Reference solution for the chunked_prefill kata: a step planner and the latency metrics."""

from __future__ import annotations

import math
from typing import Any

POLICIES = ("fcfs", "spf")


def _config(config: dict[str, Any]) -> tuple[str, int, bool, float | None]:
    policy, budget = config.get("policy"), config.get("budget")
    chunked, starve = config.get("chunked"), config.get("starvation_s")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget must be an int >= 1, got {budget!r}")
    if not isinstance(chunked, bool):
        raise ValueError(f"chunked must be a bool, got {chunked!r}")
    if starve is not None and (isinstance(starve, bool) or not isinstance(starve, (int, float))
                               or not starve >= 0):
        raise ValueError(f"starvation_s must be None or a number >= 0, got {starve!r}")
    return policy, budget, chunked, starve


def _fcfs(r: dict[str, Any]) -> tuple[float, str]:
    return r["arrival"], r["id"]


def plan_step(config: dict[str, Any], now: float, waiting: list[dict[str, Any]],
              decoding: list[dict[str, Any]]) -> tuple[list[tuple[str, int]], list[str]]:
    policy, budget, chunked, starve = _config(config)
    decodes = [d["id"] for d in sorted(decoding, key=_fcfs)[:budget]]
    left = budget - len(decodes)

    def order(r: dict[str, Any]) -> tuple[int, float | int, float, str]:
        if policy == "fcfs" or (starve is not None and now - r["arrival"] >= starve):
            return 0, r["arrival"], 0.0, r["id"]            # FCFS (the starving, under spf)
        return 1, r["prompt"] - r["prefilled"], r["arrival"], r["id"]

    chunks: list[tuple[str, int]] = []
    for r in sorted(waiting, key=order):
        rest = r["prompt"] - r["prefilled"]
        take = min(rest, left) if chunked else rest
        if take == 0 or take > left:
            break                                           # nothing overtakes the head
        chunks.append((r["id"], take))
        left -= take
    return chunks, decodes


def token_times(log: dict[str, Any]) -> dict[str, list[float]]:
    prompt = {r["id"]: r["prompt"] for r in log["requests"]}
    done = dict.fromkeys(prompt, 0)
    times: dict[str, list[float]] = {rid: [] for rid in prompt}
    for step in log["steps"]:
        for rid, n in step["prefill"]:
            done[rid] += n
            if done[rid] == prompt[rid]:
                times[rid].append(step["end"])
        for rid in step["decode"]:
            times[rid].append(step["end"])
    return times


def ttft(log: dict[str, Any]) -> dict[str, float]:
    times = token_times(log)
    return {r["id"]: times[r["id"]][0] - r["arrival"] for r in log["requests"]}


def itl(log: dict[str, Any]) -> dict[str, list[float]]:
    return {rid: [b - a for a, b in zip(t, t[1:])] for rid, t in token_times(log).items()}


def alone_time(log: dict[str, Any], request: dict[str, Any]) -> float:
    m: dict[str, float] = log["model"]
    cfg: dict[str, Any] = log["config"]
    p: int = request["prompt"]
    o: int = request["output"]
    prefill_steps = math.ceil(p / cfg["budget"]) if cfg["chunked"] else 1
    return prefill_steps * m["a"] + m["b"] * p + (o - 1) * (m["a"] + m["c"])


def slowdown(log: dict[str, Any]) -> dict[str, float]:
    times = token_times(log)
    return {r["id"]: (times[r["id"]][-1] - r["arrival"]) / alone_time(log, r)
            for r in log["requests"]}
