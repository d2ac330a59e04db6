"""An independent correct engine_overheads solution in the engines' own style.

Written by the kata's author after the reference, from the prompt and the stub; not blind.
It mirrors how the engines do the work rather than the closed forms:

- padding through a lookup table from every token count to its padded size, built like
  vLLM's ``bs_to_padded_graph_size`` (walk the gaps between consecutive sizes);
- the capture list from three chained ``range`` objects filtered by a predicate;
- LoRA steps by simulating a scheduler: a ``deque`` of waiting requests, a skipped queue put
  back at the head after each step;
- the multimodal ledger with ``divmod`` ceilings and an explicit phase table.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def _whole(x: Any, minimum: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(f"not an int: {x!r}")
    if x < minimum:
        raise ValueError(f"{x} < {minimum}")
    return x


def _seq(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return list(x)
    raise ValueError(f"not a list: {x!r}")


def _up(a: int, b: int) -> int:
    q, r = divmod(a, b)
    return q + (1 if r else 0)


def vllm_capture_sizes(max_num_seqs: int, max_num_batched_tokens: int,
                       num_speculative_tokens: int = 0,
                       max_capture_size: int | None = None) -> list[int]:
    seqs, budget = _whole(max_num_seqs, 1), _whole(max_num_batched_tokens, 1)
    spec = _whole(num_speculative_tokens, 0)
    top = (_whole(max_capture_size, 1) if max_capture_size is not None
           else min(seqs * (1 + spec) * 2, 512))
    top = min(top, budget)
    candidates = chain((1, 2, 4), range(8, 256, 8), range(256, 513 if top <= 512 else top + 1, 16))
    return [s for s in candidates if s <= top]


def _table(capture_sizes: Any) -> list[int]:
    sizes = sorted({_whole(s, 1) for s in _seq(capture_sizes)})
    if not sizes:
        raise ValueError("no capture sizes")
    table = [0] * (sizes[-1] + 1)
    for lo, hi in zip([0] + sizes, sizes):
        for n in range(lo + 1, hi + 1):
            table[n] = hi
    return table


def padded_size(num_tokens: int, capture_sizes: Sequence[int]) -> int | None:
    n = _whole(num_tokens, 1)
    table = _table(capture_sizes)
    return table[n] if n < len(table) else None


def padding_waste(step_counts: Mapping[int, int],
                  capture_sizes: Sequence[int]) -> dict[str, int]:
    if not isinstance(step_counts, Mapping):
        raise ValueError("step_counts is a dict")
    table = _table(capture_sizes)
    totals = dict.fromkeys(("steps", "graph_steps", "real_tokens", "padding_tokens"), 0)
    for n, k in step_counts.items():
        n, k = _whole(n, 1), _whole(k, 0)
        totals["steps"] += k
        totals["real_tokens"] += n * k
        if n < len(table):
            totals["graph_steps"] += k
            totals["padding_tokens"] += (table[n] - n) * k
    return totals


def capture_ledger(policies: Mapping[str, Sequence[int]], graph_bytes: Mapping[int, int],
                   pool_bytes: Mapping[int, int], kv_bytes: int,
                   page_bytes: int) -> dict[str, dict[str, int]]:
    if not (isinstance(policies, Mapping) and isinstance(graph_bytes, Mapping)
            and isinstance(pool_bytes, Mapping)) or not policies:
        raise ValueError("policies, graph_bytes and pool_bytes are dicts; policies non-empty")
    kv, page = _whole(kv_bytes, 0), _whole(page_bytes, 1)
    full_pages = kv // page
    out = {}
    for name, sizes in policies.items():
        if not isinstance(name, str):
            raise ValueError("a policy name is a str")
        chosen = sorted({_whole(s, 1) for s in _seq(sizes)})
        missing = [s for s in chosen if s not in graph_bytes or s not in pool_bytes]
        if missing:
            raise ValueError(f"no figures for sizes {missing}")
        private = [_whole(graph_bytes[s], 0) for s in chosen]
        pools = [_whole(pool_bytes[s], 0) for s in chosen]
        spent = sum(private) + (max(pools) if pools else 0)
        if spent > kv:
            raise ValueError(f"{name} does not fit")
        pages = (kv - spent) // page
        out[name] = {"graph_bytes": spent, "kv_pages": pages, "kv_pages_lost": full_pages - pages}
    return out


def _requests(adapters: Any) -> list[str | None]:
    reqs = _seq(adapters)
    for a in reqs:
        if not (a is None or isinstance(a, str)):
            raise ValueError(f"bad adapter {a!r}")
    return reqs


def _schedule(reqs: list[str | None], max_loras: int) -> list[list[int]]:
    waiting = deque(range(len(reqs)))
    steps = []
    while waiting:
        loaded: list[str] = []
        taken: list[int] = []
        skipped: deque[int] = deque()
        while waiting:
            i = waiting.popleft()
            a = reqs[i]
            if a is not None and a not in loaded and len(loaded) == max_loras:
                skipped.append(i)
                continue
            if a is not None and a not in loaded:
                loaded.append(a)
            taken.append(i)
        steps.append(taken)
        waiting = skipped
    return steps


def lora_sub_batches(adapters: Sequence[str | None], max_loras: int) -> list[list[int]]:
    reqs = _requests(adapters)
    return _schedule(reqs, _whole(max_loras, 1))


def lora_step_cost(adapters: Sequence[str | None], tokens: Sequence[int], max_loras: int,
                   base_cost: int, adapter_cost: int, token_cost: int) -> int:
    reqs = _requests(adapters)
    toks = [_whole(t, 1) for t in _seq(tokens)]
    if len(toks) != len(reqs):
        raise ValueError("tokens and adapters differ in length")
    slots = _whole(max_loras, 1)
    b, a, t = _whole(base_cost, 0), _whole(adapter_cost, 0), _whole(token_cost, 0)
    return sum(b + a * len({reqs[i] for i in step if reqs[i] is not None})
               + t * sum(toks[i] for i in step if reqs[i] is not None)
               for step in _schedule(reqs, slots))


def lora_memory(cfg: Mapping[str, Any], dtype_bytes: int, adapter_ranks: Sequence[int],
                adapter_targets: Sequence[str], max_loras: int,
                max_lora_rank: int) -> dict[str, Any]:
    if not isinstance(cfg, Mapping):
        raise ValueError("cfg is a dict")
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        if cfg.get(key):
            raise ValueError("MoE")
    try:
        hidden = _whole(cfg["hidden_size"], 1)
        ffn = _whole(cfg["intermediate_size"], 1)
        heads = _whole(cfg["num_attention_heads"], 1)
        layers = _whole(cfg["num_hidden_layers"], 1)
    except KeyError:
        raise ValueError("config key missing") from None
    kvh = cfg.get("num_key_value_heads")
    kvh = heads if kvh is None else _whole(kvh, 1)
    hd = cfg.get("head_dim")
    hd = hidden // heads if hd is None else _whole(hd, 1)
    nbytes = _whole(dtype_bytes, 1)
    ranks = [_whole(r, 1) for r in _seq(adapter_ranks)]
    targets = _seq(adapter_targets)
    if not targets or sorted(set(targets)) != sorted(targets) or \
            any(t not in MODULES for t in targets):
        raise ValueError("bad targets")
    slots, cap = _whole(max_loras, 1), _whole(max_lora_rank, 1)
    if any(r > cap for r in ranks):
        raise ValueError("rank above max_lora_rank")
    io = {"q_proj": hidden + heads * hd, "k_proj": hidden + kvh * hd,
          "v_proj": hidden + kvh * hd, "o_proj": heads * hd + hidden,
          "gate_proj": hidden + ffn, "up_proj": hidden + ffn, "down_proj": ffn + hidden}
    one_rank_targets = layers * nbytes * sum(io[t] for t in targets)
    one_rank_all = layers * nbytes * sum(io.values())
    return {"adapter_bytes": [r * one_rank_targets for r in ranks],
            "slot_bytes": cap * one_rank_all, "gpu_bytes": slots * cap * one_rank_all}


def mm_ledger(images: Sequence[Sequence[int]], patch_size: int, merge_size: int,
              text_tokens: int, max_new_tokens: int, kv_bytes_per_token: int,
              page_tokens: int, embed_bytes_per_token: int,
              encoder_bytes_per_patch: int) -> dict[str, Any]:
    pics = _seq(images)
    p, m = _whole(patch_size, 1), _whole(merge_size, 1)
    text, new = _whole(text_tokens, 0), _whole(max_new_tokens, 0)
    kvt, page = _whole(kv_bytes_per_token, 0), _whole(page_tokens, 1)
    emb, enc = _whole(embed_bytes_per_token, 0), _whole(encoder_bytes_per_patch, 0)
    grids = []
    for pic in pics:
        hw = _seq(pic)
        if len(hw) != 2:
            raise ValueError("an image is (height, width)")
        h, w = _whole(hw[0], 1), _whole(hw[1], 1)
        grids.append((_up(h, p * m) * m, _up(w, p * m) * m))
    tokens = [gh * gw // (m * m) for gh, gw in grids]
    prompt = text + sum(tokens)
    if prompt <= 0:
        raise ValueError("empty prompt")
    prompt_kv = _up(prompt, page) * page * kvt
    phases: list[tuple[str, int]] = []
    held = 0
    worst_encode = 0
    for (gh, gw), t in zip(grids, tokens):
        worst_encode = max(worst_encode, prompt_kv + held + gh * gw * enc)
        held += t * emb
    phases.append(("encode", worst_encode))
    phases.append(("prefill", prompt_kv + held))
    pages = _up(prompt + new, page)
    phases.append(("decode", pages * page * kvt))
    best = phases[0]
    for ph in phases[1:]:
        if ph[1] > best[1]:
            best = ph
    return {"image_tokens": tokens, "prompt_tokens": prompt, "kv_pages": pages,
            "embed_bytes": held, "encode_bytes": phases[0][1], "prefill_bytes": phases[1][1],
            "decode_bytes": phases[2][1], "peak_bytes": best[1], "peak_phase": best[0]}
