"""Shared by the moe_dispatch tests: the shipped config, and oracles written apart from any
solution: a copy counter that walks every (token, expert) pair, and the two-batch schedule
as a longest path through its dependency graph, in exact rationals."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from graders.support import shipped

V3 = "deepseek-ai--DeepSeek-V3"
MODES = ("per_expert", "per_gpu", "per_node")
KEYS = ("dispatch_nvlink", "dispatch_nic", "combine_nvlink", "combine_nic")


def config(name: str = V3) -> dict[str, Any]:
    """A fresh copy of a shipped model's config.json fields (DeepSeek-V3 by default)."""
    return shipped.config(name)


def block_placement(experts: int = 256, per_gpu: int = 4) -> list[int]:
    """Expert e on GPU e // per_gpu (DeepSeek-V3 on 64 GPUs: 4 per GPU, 32 per node)."""
    return [e // per_gpu for e in range(experts)]


def count_copies(routes: list[list[int]], homes: list[int], expert_gpu: list[int],
                 gpus_per_node: int, mode: str) -> tuple[int, int]:
    """(NVLink, NIC) copies, counted link by link: every copy is a (source GPU, destination
    GPU) pair, and a pair is counted once per token under the deduplicating schemes."""
    nvlink = nic = 0
    for route, home in zip(routes, homes):
        sends: list[tuple[int, int]] = []
        if mode == "per_expert":
            sends = [(home, expert_gpu[e]) for e in route]
        elif mode == "per_gpu":
            sends = sorted({(home, expert_gpu[e]) for e in route})
        else:
            hops: set[tuple[int, int]] = set()
            for e in route:
                dst = expert_gpu[e]
                if dst // gpus_per_node == home // gpus_per_node:
                    hops.add((home, dst))
                else:
                    relay = dst // gpus_per_node * gpus_per_node + home % gpus_per_node
                    hops.add((home, relay))
                    hops.add((relay, dst))
            sends = sorted(hops)
        for src, dst in sends:
            if src == dst:
                continue
            if src // gpus_per_node == dst // gpus_per_node:
                nvlink += 1
            else:
                nic += 1
    return nvlink, nic


def exact_times(batch: int, layers: int, c0: int, c1: int, m0: int, m_bytes: int,
                link: int) -> tuple[Fraction, Fraction]:
    """(one batch, two micro-batches): the second as the longest path of the schedule's
    dependency graph (stream order and data dependencies), in exact rationals."""
    def compute(n: int) -> Fraction:
        return Fraction(c0 + c1 * n)

    def comm(n: int) -> Fraction:
        return Fraction(m0) + Fraction(n * m_bytes, link)

    one = layers * (compute(batch) + comm(batch))
    sizes = {"A": batch // 2, "B": batch - batch // 2}
    # nodes: (layer, kind, micro-batch); the streams run A then B in every layer
    order = [(layer, kind, mb) for layer in range(layers) for kind in ("C", "M")
             for mb in ("A", "B")]
    cost = {n: (compute if n[1] == "C" else comm)(sizes[n[2]]) for n in order}
    preds: dict[tuple[int, str, str], list[tuple[int, str, str]]] = {n: [] for n in order}
    for layer in range(layers):
        for kind in ("C", "M"):
            preds[(layer, kind, "B")].append((layer, kind, "A"))          # stream order
            if layer:
                preds[(layer, kind, "A")].append((layer - 1, kind, "B"))
        for mb in ("A", "B"):
            preds[(layer, "M", mb)].append((layer, "C", mb))             # comm needs compute
            if layer:
                preds[(layer, "C", mb)].append((layer - 1, "M", mb))     # next layer needs comm
    finish: dict[tuple[int, str, str], Fraction] = {}
    for n in sorted(order, key=lambda n: (n[0], n[1] == "M", n[2])):
        finish[n] = max((finish[p] for p in preds[n]), default=Fraction(0)) + cost[n]
    return one, max(finish.values())


def true_min_batch(layers: int, c0: int, c1: int, m0: int, m_bytes: int, link: int,
                   max_batch: int) -> int | None:
    """By definition: the smallest B with two < one at every batch from B to max_batch."""
    helps = []
    for b in range(1, max_batch + 1):
        one, two = exact_times(b, layers, c0, c1, m0, m_bytes, link)
        helps.append(two < one)
    if not helps[-1]:
        return None
    b = max_batch
    while b > 1 and helps[b - 2]:
        b -= 1
    return b
