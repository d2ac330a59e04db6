"""Shared test helpers for mini_engine: the stats' shape and block invariants, and a driver
that runs an engine and collects what it streams."""

from __future__ import annotations

from typing import Any

GREEDY = {"temperature": 0.0, "top_p": 1.0, "seed": 0}


def seeded(seed: int, temperature: float = 1.0, top_p: float = 0.9) -> dict[str, Any]:
    return {"temperature": temperature, "top_p": top_p, "seed": seed}


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def block_problems(stats: Any, num_blocks: int, block_size: int) -> list[str]:
    """What is wrong with the block accounting in ``stats`` (empty when it is right)."""
    problems: list[str] = []
    if not isinstance(stats, dict) or set(stats) != {"free_blocks", "running", "waiting",
                                                     "requests"}:
        return [f"stats() must have the keys free_blocks, running, waiting, requests: {stats}"]
    held: list[int] = []
    for rid, r in stats["requests"].items():
        if not isinstance(r, dict) or set(r) != {"computed", "generated", "blocks"}:
            return [f"stats()['requests'][{rid!r}] must have the keys computed, generated, "
                    f"blocks: {r}"]
        want = ceil_div(r["computed"], block_size)
        if len(r["blocks"]) != want:
            problems.append(f"request {rid!r} has computed={r['computed']} so it must hold "
                            f"ceil({r['computed']} / {block_size}) = {want} blocks, but it "
                            f"holds {list(r['blocks'])}")
        held += list(r["blocks"])
    if len(set(held)) != len(held):
        problems.append(f"a block is held twice: {sorted(held)}")
    if not all(isinstance(b, int) and 0 <= b < num_blocks for b in held):
        problems.append(f"block ids outside 0..{num_blocks - 1}: {sorted(held)}")
    if stats["free_blocks"] + len(held) != num_blocks:
        problems.append(f"free_blocks={stats['free_blocks']} plus the {len(held)} blocks held "
                        f"must be num_blocks={num_blocks}")
    return problems


def run_to_end(engine: Any, max_steps: int = 500) -> tuple[dict[str, list[int]], int]:
    """Step until nothing is live; returns each request's stream and the steps taken."""
    streams: dict[str, list[int]] = {}
    for steps in range(1, max_steps + 1):
        record = engine.step()
        for rid, token, _ in record["outputs"]:
            streams.setdefault(rid, []).append(token)
        if not engine.stats()["requests"]:
            return streams, steps
    raise AssertionError(f"the engine did not drain in {max_steps} steps: {engine.stats()}")
