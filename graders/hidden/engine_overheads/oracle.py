"""An independent oracle for engine_overheads, written from the prompt's rules.

Deliberately built another way than the reference: the capture ladder as a membership test,
padding by brute minimum, the LoRA steps from each adapter's first appearance (group =
rank // max_loras) rather than a scan, adapter bytes from the shapes of A and B, the image
grid by adding windows until the side is covered.
"""

from __future__ import annotations

from typing import Any

MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def default_top(seqs: int, budget: int, spec: int = 0, given: int | None = None) -> int:
    top = given if given is not None else min(512, 2 * seqs * (spec + 1))
    return min(top, budget)


def ladder(top: int) -> list[int]:
    return [s for s in range(1, top + 1)
            if s in (1, 2, 4) or (s < 256 and s % 8 == 0) or (s >= 256 and s % 16 == 0)]


def padded(n: int, sizes: list[int]) -> int | None:
    fits = [s for s in sizes if s >= n]
    return min(fits) if fits else None


def waste(hist: dict[int, int], sizes: list[int]) -> dict[str, int]:
    steps = sum(hist.values())
    graph = sum(c for n, c in hist.items() if padded(n, sizes) is not None)
    real = sum(n * c for n, c in hist.items())
    pad = 0
    for n, c in hist.items():
        p = padded(n, sizes)
        if p is not None:
            pad += (p - n) * c
    return {"steps": steps, "graph_steps": graph, "real_tokens": real, "padding_tokens": pad}


def ledger(policies: dict[str, list[int]], graph: dict[int, int], pool: dict[int, int],
           kv: int, page: int) -> dict[str, dict[str, int]]:
    out = {}
    for name, sizes in policies.items():
        uniq = sorted(set(sizes))
        cost = sum(graph[s] for s in uniq) + (max(pool[s] for s in uniq) if uniq else 0)
        pages = (kv - cost) // page
        out[name] = {"graph_bytes": cost, "kv_pages": pages,
                     "kv_pages_lost": kv // page - pages}
    return out


def lora_steps(adapters: list[str | None], max_loras: int) -> list[list[int]]:
    if not adapters:
        return []
    order: list[str] = []
    for a in adapters:
        if a is not None and a not in order:
            order.append(a)
    n_steps = max(1, -(-len(order) // max_loras))
    steps: list[list[int]] = [[] for _ in range(n_steps)]
    for i, a in enumerate(adapters):
        steps[0 if a is None else order.index(a) // max_loras].append(i)
    return steps


def lora_cost(adapters: list[str | None], tokens: list[int], max_loras: int, base: int,
              per_adapter: int, per_token: int) -> int:
    total = 0
    for step in lora_steps(adapters, max_loras):
        names = {adapters[i] for i in step if adapters[i] is not None}
        total += base + per_adapter * len(names)
        total += per_token * sum(tokens[i] for i in step if adapters[i] is not None)
    return total


def shapes(cfg: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """(out, in) of each module's weight."""
    h, q = cfg["hidden_size"], cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or q
    d = cfg.get("head_dim") or h // q
    i = cfg["intermediate_size"]
    return {"q_proj": (q * d, h), "k_proj": (kv * d, h), "v_proj": (kv * d, h),
            "o_proj": (h, q * d), "gate_proj": (i, h), "up_proj": (i, h), "down_proj": (h, i)}


def lora_bytes(cfg: dict[str, Any], rank: int, targets: list[str] | tuple[str, ...],
               dtype_bytes: int) -> int:
    sh = shapes(cfg)
    per_layer = 0
    for m in targets:
        out, inp = sh[m]
        per_layer += rank * inp + out * rank     # A is rank x in, B is out x rank
    return per_layer * cfg["num_hidden_layers"] * dtype_bytes


def lora_memory(cfg: dict[str, Any], dtype_bytes: int, ranks: list[int], targets: list[str],
                max_loras: int, max_rank: int) -> dict[str, Any]:
    slot = lora_bytes(cfg, max_rank, MODULES, dtype_bytes)
    return {"adapter_bytes": [lora_bytes(cfg, r, targets, dtype_bytes) for r in ranks],
            "slot_bytes": slot, "gpu_bytes": max_loras * slot}


def grid_side(pixels: int, patch: int, merge: int) -> int:
    """Patches along one side: whole windows of merge patches until the side is covered."""
    windows = 0
    while windows * patch * merge < pixels:
        windows += 1
    return windows * merge


def mm(images: list[tuple[int, int]], patch: int, merge: int, text: int, new: int, kv_tok: int,
       page: int, emb: int, enc: int) -> dict[str, Any]:
    patches = [grid_side(h, patch, merge) * grid_side(w, patch, merge) for h, w in images]
    tokens = [p // (merge * merge) for p in patches]
    prompt = text + sum(tokens)

    def kv_bytes(n: int) -> int:
        pages = (n + page - 1) // page
        return pages * page * kv_tok

    encode = [kv_bytes(prompt) + sum(tokens[:j]) * emb + patches[j] * enc
              for j in range(len(images))]
    phases = [("encode", max(encode, default=0)),
              ("prefill", kv_bytes(prompt) + sum(tokens) * emb),
              ("decode", kv_bytes(prompt + new))]
    peak = max(v for _, v in phases)
    return {"image_tokens": tokens, "prompt_tokens": prompt,
            "kv_pages": (prompt + new + page - 1) // page, "embed_bytes": sum(tokens) * emb,
            "encode_bytes": phases[0][1], "prefill_bytes": phases[1][1],
            "decode_bytes": phases[2][1], "peak_bytes": peak,
            "peak_phase": [k for k, v in phases if v == peak][0]}


def vllm_style_table(sizes: list[int]) -> list[int]:
    """vLLM's padding lookup, re-written: for each gap (previous size, size], every count in it
    maps to the size's upper end, a count equal to a size to itself; the table stops at the
    largest size (`CudagraphDispatcher._compute_bs_to_padded_graph_size`)."""
    ordered = sorted(set(sizes))
    top = ordered[-1]
    table = [0] * (top + 1)
    for start, end in zip([0] + ordered, ordered + [top + 1]):
        for count in range(start, end):
            table[count] = start if count == start else end
    return table
