"""An independent correct engine_overheads solution, built differently from the reference.

Written by the kata's author after the reference, from the prompt and the stub, without
copying from the reference; not blind (no blind helper was available in this session), so it
guards against tests that pin the reference's style rather than against the author's own
reading of the prompt. It differs from the reference:

- the default ladder is built by walking a size upward with a step that changes at 8 and 256;
- padding uses ``bisect`` on the sorted distinct sizes; the waste is accumulated per size
  bucket of the histogram;
- LoRA sub-batches come from each adapter's first appearance: the adapters ranked by first
  appearance, adapter k goes to step k // max_loras, base-model requests to the first step;
- adapter bytes count the elements of A (r x in) and B (out x r) per module in a table;
- the image grid uses ``math.ceil`` on a ``Fraction``; the encode peak uses prefix sums.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from itertools import accumulate
from typing import Any

MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def _check_int(value: Any, low: int, what: str) -> int:
    if type(value) is not int or value < low:
        raise ValueError(f"{what}: expected an int >= {low}, got {value!r}")
    return value


def _check_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{what}: expected a list")
    return list(value)


def _sorted_sizes(capture_sizes: Any) -> list[int]:
    sizes = _check_list(capture_sizes, "capture_sizes")
    if not sizes:
        raise ValueError("capture_sizes is empty")
    return sorted({_check_int(s, 1, "capture size") for s in sizes})


def vllm_capture_sizes(max_num_seqs: int, max_num_batched_tokens: int,
                       num_speculative_tokens: int = 0,
                       max_capture_size: int | None = None) -> list[int]:
    seqs = _check_int(max_num_seqs, 1, "max_num_seqs")
    budget = _check_int(max_num_batched_tokens, 1, "max_num_batched_tokens")
    spec = _check_int(num_speculative_tokens, 0, "num_speculative_tokens")
    if max_capture_size is not None:
        top = _check_int(max_capture_size, 1, "max_capture_size")
    else:
        top = min(512, 2 * seqs * (spec + 1))
    top = min(top, budget)
    out: list[int] = []
    size = 1
    while size <= top:
        out.append(size)
        size = {1: 2, 2: 4, 4: 8}.get(size, size + (8 if size < 256 else 16))
    return out


def padded_size(num_tokens: int, capture_sizes: Sequence[int]) -> int | None:
    n = _check_int(num_tokens, 1, "num_tokens")
    sizes = _sorted_sizes(capture_sizes)
    i = bisect.bisect_left(sizes, n)
    return sizes[i] if i < len(sizes) else None


def padding_waste(step_counts: Mapping[int, int],
                  capture_sizes: Sequence[int]) -> dict[str, int]:
    if not isinstance(step_counts, dict):
        raise ValueError("step_counts: expected a dict")
    sizes = _sorted_sizes(capture_sizes)
    steps = graph_steps = real = padding = 0
    for n, count in step_counts.items():
        _check_int(n, 1, "tokens in a step")
        _check_int(count, 0, "step count")
        steps += count
        real += n * count
        i = bisect.bisect_left(sizes, n)
        if i < len(sizes):
            graph_steps += count
            padding += (sizes[i] - n) * count
    return {"steps": steps, "graph_steps": graph_steps, "real_tokens": real,
            "padding_tokens": padding}


def capture_ledger(policies: Mapping[str, Sequence[int]], graph_bytes: Mapping[int, int],
                   pool_bytes: Mapping[int, int], kv_bytes: int,
                   page_bytes: int) -> dict[str, dict[str, int]]:
    if not isinstance(policies, dict) or not policies:
        raise ValueError("policies: expected a non-empty dict")
    if not isinstance(graph_bytes, dict) or not isinstance(pool_bytes, dict):
        raise ValueError("graph_bytes, pool_bytes: expected dicts")
    kv = _check_int(kv_bytes, 0, "kv_bytes")
    page = _check_int(page_bytes, 1, "page_bytes")
    result = {}
    for name in policies:
        if not isinstance(name, str):
            raise ValueError("policy names are strings")
        uniq = {_check_int(s, 1, "capture size") for s in _check_list(policies[name], name)}
        cost = 0
        biggest_pool = 0
        for s in uniq:
            if s not in graph_bytes or s not in pool_bytes:
                raise ValueError(f"size {s} has no memory figures")
            cost += _check_int(graph_bytes[s], 0, "graph bytes")
            biggest_pool = max(biggest_pool, _check_int(pool_bytes[s], 0, "pool bytes"))
        cost += biggest_pool
        if cost > kv:
            raise ValueError(f"{name}: graphs do not fit")
        left = (kv - cost) // page
        result[name] = {"graph_bytes": cost, "kv_pages": left,
                        "kv_pages_lost": kv // page - left}
    return result


def _check_adapters(adapters: Any) -> list[str | None]:
    reqs = _check_list(adapters, "adapters")
    if any(a is not None and type(a) is not str for a in reqs):
        raise ValueError("an adapter is a str or None")
    return reqs


def _groups(reqs: list[str | None], max_loras: int) -> list[list[int]]:
    if not reqs:
        return []
    rank: dict[str, int] = {}
    for a in reqs:
        if a is not None and a not in rank:
            rank[a] = len(rank)
    out: list[list[int]] = [[] for _ in range(max(1, math.ceil(len(rank) / max_loras)))]
    for i, a in enumerate(reqs):
        out[0 if a is None else rank[a] // max_loras].append(i)
    return out


def lora_sub_batches(adapters: Sequence[str | None], max_loras: int) -> list[list[int]]:
    reqs = _check_adapters(adapters)
    return _groups(reqs, _check_int(max_loras, 1, "max_loras"))


def lora_step_cost(adapters: Sequence[str | None], tokens: Sequence[int], max_loras: int,
                   base_cost: int, adapter_cost: int, token_cost: int) -> int:
    reqs = _check_adapters(adapters)
    toks = [_check_int(t, 1, "tokens") for t in _check_list(tokens, "tokens")]
    if len(toks) != len(reqs):
        raise ValueError("one token count per request")
    loras = _check_int(max_loras, 1, "max_loras")
    base, adapter, token = (_check_int(v, 0, "cost")
                            for v in (base_cost, adapter_cost, token_cost))
    cost = 0
    for step in _groups(reqs, loras):
        users = [i for i in step if reqs[i] is not None]
        cost += base + adapter * len({reqs[i] for i in users}) + token * sum(toks[i] for i in users)
    return cost


def lora_memory(cfg: Mapping[str, Any], dtype_bytes: int, adapter_ranks: Sequence[int],
                adapter_targets: Sequence[str], max_loras: int,
                max_lora_rank: int) -> dict[str, Any]:
    if not isinstance(cfg, dict):
        raise ValueError("cfg: expected a dict")
    if cfg.get("num_experts") or cfg.get("num_local_experts") or cfg.get("n_routed_experts"):
        raise ValueError("MoE configs are not supported")
    needed = ("hidden_size", "intermediate_size", "num_attention_heads", "num_hidden_layers")
    if any(k not in cfg for k in needed):
        raise ValueError("cfg lacks a key")
    hidden, inter, heads, layers = (_check_int(cfg[k], 1, k) for k in needed)
    kv_heads = heads if cfg.get("num_key_value_heads") is None else \
        _check_int(cfg["num_key_value_heads"], 1, "num_key_value_heads")
    head = hidden // heads if cfg.get("head_dim") is None else \
        _check_int(cfg["head_dim"], 1, "head_dim")
    width = _check_int(dtype_bytes, 1, "dtype_bytes")
    ranks = [_check_int(r, 1, "rank") for r in _check_list(adapter_ranks, "adapter_ranks")]
    targets = _check_list(adapter_targets, "adapter_targets")
    if not targets or len(set(targets)) != len(targets) or not set(targets) <= set(MODULES):
        raise ValueError("adapter_targets: distinct module names from MODULES")
    slots = _check_int(max_loras, 1, "max_loras")
    cap = _check_int(max_lora_rank, 1, "max_lora_rank")
    if ranks and max(ranks) > cap:
        raise ValueError("an adapter rank is above max_lora_rank")
    # (rows, cols) of A and of B for rank 1; elements scale with the rank
    table = {"q_proj": (hidden, heads * head), "k_proj": (hidden, kv_heads * head),
             "v_proj": (hidden, kv_heads * head), "o_proj": (heads * head, hidden),
             "gate_proj": (hidden, inter), "up_proj": (hidden, inter),
             "down_proj": (inter, hidden)}

    def bytes_at(rank: int, modules: Sequence[str]) -> int:
        elements = sum(rank * table[m][0] + table[m][1] * rank for m in modules)
        return elements * layers * width

    slot = bytes_at(cap, MODULES)
    return {"adapter_bytes": [bytes_at(r, targets) for r in ranks], "slot_bytes": slot,
            "gpu_bytes": slot * slots}


def mm_ledger(images: Sequence[Sequence[int]], patch_size: int, merge_size: int,
              text_tokens: int, max_new_tokens: int, kv_bytes_per_token: int,
              page_tokens: int, embed_bytes_per_token: int,
              encoder_bytes_per_patch: int) -> dict[str, Any]:
    imgs = _check_list(images, "images")
    patch = _check_int(patch_size, 1, "patch_size")
    merge = _check_int(merge_size, 1, "merge_size")
    text = _check_int(text_tokens, 0, "text_tokens")
    new = _check_int(max_new_tokens, 0, "max_new_tokens")
    per_tok = _check_int(kv_bytes_per_token, 0, "kv_bytes_per_token")
    page = _check_int(page_tokens, 1, "page_tokens")
    emb = _check_int(embed_bytes_per_token, 0, "embed_bytes_per_token")
    enc = _check_int(encoder_bytes_per_patch, 0, "encoder_bytes_per_patch")
    windows = []
    for img in imgs:
        pair = _check_list(img, "image")
        if len(pair) != 2:
            raise ValueError("an image is (height, width)")
        h, w = (_check_int(v, 1, "image side") for v in pair)
        windows.append(math.ceil(Fraction(h, patch * merge)) * math.ceil(Fraction(w, patch * merge)))
    prompt = text + sum(windows)
    if prompt < 1:
        raise ValueError("empty prompt")
    page_bytes = page * per_tok
    prompt_kv = math.ceil(Fraction(prompt, page)) * page_bytes
    pages = math.ceil(Fraction(prompt + new, page))
    before = [0, *accumulate(windows)]
    encode = max((prompt_kv + before[j] * emb + windows[j] * merge * merge * enc
                  for j in range(len(windows))), default=0)
    prefill = prompt_kv + before[-1] * emb
    decode = pages * page_bytes
    peak = max(encode, prefill, decode)
    phase = "encode" if encode == peak else "prefill" if prefill == peak else "decode"
    return {"image_tokens": windows, "prompt_tokens": prompt, "kv_pages": pages,
            "embed_bytes": before[-1] * emb, "encode_bytes": encode, "prefill_bytes": prefill,
            "decode_bytes": decode, "peak_bytes": peak, "peak_phase": phase}
