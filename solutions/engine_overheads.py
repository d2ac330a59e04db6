"""Reference solution for the engine_overheads kata: the costs an engine pays outside the kernels.

Every answer is an integer closed form: CUDA-graph capture sizes and padding, the capture
memory ledger, multi-LoRA sub-batches and adapter memory, and a multimodal memory ledger.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
MOE_KEYS = ("num_experts", "num_local_experts", "n_routed_experts")
PHASES = ("encode", "prefill", "decode")


# ------------------------------------------------------------------ checks
def _int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def _ints(name: str, values: Any, low: int, *, empty: bool = False) -> list[int]:
    if not isinstance(values, (list, tuple)) or (not values and not empty):
        raise ValueError(f"{name} must be a {'' if empty else 'non-empty '}list of ints")
    return [_int(name, v, low) for v in values]


def _sizes(capture_sizes: Any) -> list[int]:
    return sorted(set(_ints("capture_sizes", capture_sizes, 1)))


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# ------------------------------------------------------------------ CUDA graphs
def vllm_capture_sizes(max_num_seqs: int, max_num_batched_tokens: int,
                       num_speculative_tokens: int = 0,
                       max_capture_size: int | None = None) -> list[int]:
    seqs = _int("max_num_seqs", max_num_seqs, 1)
    budget = _int("max_num_batched_tokens", max_num_batched_tokens, 1)
    spec = _int("num_speculative_tokens", num_speculative_tokens, 0)
    if max_capture_size is None:
        top = min(seqs * (1 + spec) * 2, 512)
    else:
        top = _int("max_capture_size", max_capture_size, 1)
    top = min(top, budget)
    sizes = [s for s in (1, 2, 4) if s <= top]
    sizes += range(8, min(top + 1, 256), 8)
    sizes += range(256, top + 1, 16)
    return sizes


def padded_size(num_tokens: int, capture_sizes: Sequence[int]) -> int | None:
    n = _int("num_tokens", num_tokens, 1)
    return next((s for s in _sizes(capture_sizes) if s >= n), None)


def padding_waste(step_counts: Mapping[int, int],
                  capture_sizes: Sequence[int]) -> dict[str, int]:
    if not isinstance(step_counts, Mapping):
        raise ValueError("step_counts must be a dict {num_tokens: steps}")
    sizes = _sizes(capture_sizes)
    counts = {_int("num_tokens", n, 1): _int("steps", c, 0) for n, c in step_counts.items()}
    out = {"steps": 0, "graph_steps": 0, "real_tokens": 0, "padding_tokens": 0}
    for n, c in counts.items():
        pad = next((s for s in sizes if s >= n), None)
        out["steps"] += c
        out["real_tokens"] += c * n
        if pad is not None:
            out["graph_steps"] += c
            out["padding_tokens"] += c * (pad - n)
    return out


def capture_ledger(policies: Mapping[str, Sequence[int]], graph_bytes: Mapping[int, int],
                   pool_bytes: Mapping[int, int], kv_bytes: int,
                   page_bytes: int) -> dict[str, dict[str, int]]:
    if not isinstance(policies, Mapping) or not policies:
        raise ValueError("policies must be a non-empty dict {name: capture sizes}")
    if not isinstance(graph_bytes, Mapping) or not isinstance(pool_bytes, Mapping):
        raise ValueError("graph_bytes and pool_bytes must be dicts {size: bytes}")
    kv = _int("kv_bytes", kv_bytes, 0)
    page = _int("page_bytes", page_bytes, 1)
    out: dict[str, dict[str, int]] = {}
    for name, sizes in policies.items():
        if not isinstance(name, str):
            raise ValueError(f"policy names are str, got {name!r}")
        distinct = set(_ints("capture sizes", sizes, 1, empty=True))
        for s in distinct:
            if s not in graph_bytes or s not in pool_bytes:
                raise ValueError(f"no graph_bytes or pool_bytes entry for size {s}")
        private = sum(_int("graph_bytes", graph_bytes[s], 0) for s in distinct)
        pool = max((_int("pool_bytes", pool_bytes[s], 0) for s in distinct), default=0)
        total = private + pool
        if total > kv:
            raise ValueError(f"policy {name!r} needs {total} bytes of graphs, more than the "
                             f"{kv} bytes the KV cache would have")
        pages = (kv - total) // page
        out[name] = {"graph_bytes": total, "kv_pages": pages,
                     "kv_pages_lost": kv // page - pages}
    return out


# ------------------------------------------------------------------ multi-LoRA
def _adapters(adapters: Any) -> list[str | None]:
    if not isinstance(adapters, (list, tuple)):
        raise ValueError("adapters must be a list of adapter names (str) or None")
    for a in adapters:
        if a is not None and not isinstance(a, str):
            raise ValueError(f"an adapter is a str or None, got {a!r}")
    return list(adapters)


def _sub_batches(adapters: list[str | None], max_loras: int) -> list[list[int]]:
    waiting = list(range(len(adapters)))
    steps: list[list[int]] = []
    while waiting:
        active: set[str] = set()
        step: list[int] = []
        skipped: list[int] = []
        for i in waiting:
            a = adapters[i]
            if a is None or a in active or len(active) < max_loras:
                if a is not None:
                    active.add(a)
                step.append(i)
            else:
                skipped.append(i)
        steps.append(step)
        waiting = skipped
    return steps


def lora_sub_batches(adapters: Sequence[str | None], max_loras: int) -> list[list[int]]:
    reqs = _adapters(adapters)
    return _sub_batches(reqs, _int("max_loras", max_loras, 1))


def lora_step_cost(adapters: Sequence[str | None], tokens: Sequence[int], max_loras: int,
                   base_cost: int, adapter_cost: int, token_cost: int) -> int:
    reqs = _adapters(adapters)
    toks = _ints("tokens", tokens, 1, empty=True)
    if len(toks) != len(reqs):
        raise ValueError("tokens must hold one count per request")
    loras = _int("max_loras", max_loras, 1)
    base = _int("base_cost", base_cost, 0)
    per_adapter = _int("adapter_cost", adapter_cost, 0)
    per_token = _int("token_cost", token_cost, 0)
    total = 0
    for step in _sub_batches(reqs, loras):
        distinct = {reqs[i] for i in step} - {None}
        lora_tokens = sum(toks[i] for i in step if reqs[i] is not None)
        total += base + per_adapter * len(distinct) + per_token * lora_tokens
    return total


def _module_dims(cfg: Any) -> dict[str, tuple[int, int]]:
    if not isinstance(cfg, Mapping):
        raise ValueError("cfg must be a config dict")
    if any(cfg.get(k) for k in MOE_KEYS):
        raise ValueError("MoE configs are not covered: their experts have LoRA layers of "
                         "their own")
    try:
        h = _int("hidden_size", cfg["hidden_size"], 1)
        inter = _int("intermediate_size", cfg["intermediate_size"], 1)
        q = _int("num_attention_heads", cfg["num_attention_heads"], 1)
        _int("num_hidden_layers", cfg["num_hidden_layers"], 1)
    except KeyError as e:
        raise ValueError(f"cfg lacks {e}") from None
    kv = cfg.get("num_key_value_heads")
    kv = q if kv is None else _int("num_key_value_heads", kv, 1)
    d = cfg.get("head_dim")
    d = h // q if d is None else _int("head_dim", d, 1)
    return {"q_proj": (h, q * d), "k_proj": (h, kv * d), "v_proj": (h, kv * d),
            "o_proj": (q * d, h), "gate_proj": (h, inter), "up_proj": (h, inter),
            "down_proj": (inter, h)}


def lora_memory(cfg: Mapping[str, Any], dtype_bytes: int, adapter_ranks: Sequence[int],
                adapter_targets: Sequence[str], max_loras: int,
                max_lora_rank: int) -> dict[str, Any]:
    dims = _module_dims(cfg)
    layers: int = cfg["num_hidden_layers"]
    dbytes = _int("dtype_bytes", dtype_bytes, 1)
    ranks = _ints("adapter_ranks", adapter_ranks, 1, empty=True)
    slots = _int("max_loras", max_loras, 1)
    top = _int("max_lora_rank", max_lora_rank, 1)
    if not isinstance(adapter_targets, (list, tuple)) or not adapter_targets:
        raise ValueError(f"adapter_targets must be a non-empty list of {MODULES}")
    if any(t not in MODULES for t in adapter_targets) \
            or len(set(adapter_targets)) != len(adapter_targets):
        raise ValueError(f"adapter_targets must be distinct names from {MODULES}")
    if any(r > top for r in ranks):
        raise ValueError(f"an adapter rank exceeds max_lora_rank={top}")

    def per_rank(modules: Sequence[str]) -> int:
        return layers * sum(sum(dims[m]) for m in modules) * dbytes

    targeted = per_rank(adapter_targets)
    slot = top * per_rank(MODULES)
    return {"adapter_bytes": [r * targeted for r in ranks], "slot_bytes": slot,
            "gpu_bytes": slots * slot}


# ------------------------------------------------------------------ multimodal
def mm_ledger(images: Sequence[Sequence[int]], patch_size: int, merge_size: int,
              text_tokens: int, max_new_tokens: int, kv_bytes_per_token: int,
              page_tokens: int, embed_bytes_per_token: int,
              encoder_bytes_per_patch: int) -> dict[str, Any]:
    if not isinstance(images, (list, tuple)):
        raise ValueError("images must be a list of (height, width) pairs")
    p = _int("patch_size", patch_size, 1)
    m = _int("merge_size", merge_size, 1)
    text = _int("text_tokens", text_tokens, 0)
    new = _int("max_new_tokens", max_new_tokens, 0)
    kv_tok = _int("kv_bytes_per_token", kv_bytes_per_token, 0)
    page = _int("page_tokens", page_tokens, 1)
    emb = _int("embed_bytes_per_token", embed_bytes_per_token, 0)
    enc = _int("encoder_bytes_per_patch", encoder_bytes_per_patch, 0)
    tokens: list[int] = []
    for img in images:
        if not isinstance(img, (list, tuple)) or len(img) != 2:
            raise ValueError(f"an image is a (height, width) pair, got {img!r}")
        h, w = (_int("image side", s, 1) for s in img)
        tokens.append(_ceil_div(h, p * m) * _ceil_div(w, p * m))
    prompt = text + sum(tokens)
    if prompt == 0:
        raise ValueError("a prompt holds at least one token")

    def kv(n: int) -> int:
        return _ceil_div(n, page) * page * kv_tok

    encode, done = 0, 0
    for t in tokens:
        encode = max(encode, kv(prompt) + done * emb + t * m * m * enc)
        done += t
    phase = {"encode": encode, "prefill": kv(prompt) + done * emb,
             "decode": kv(prompt + new)}
    peak = max(phase.values())
    return {"image_tokens": tokens, "prompt_tokens": prompt,
            "kv_pages": _ceil_div(prompt + new, page), "embed_bytes": done * emb,
            "encode_bytes": phase["encode"], "prefill_bytes": phase["prefill"],
            "decode_bytes": phase["decode"], "peak_bytes": peak,
            "peak_phase": next(k for k in PHASES if phase[k] == peak)}
