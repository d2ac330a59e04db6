"""The engine simulator of the chunked_prefill kata (shipped to candidates; no expectations).

A deterministic discrete-event simulator of one serving engine. Each step it asks a
scheduling policy (the candidate's ``plan_step``) which prefill chunks and which decodes
to run, checks that the decision can be executed, advances the clock by the step-time
model and writes the step to a log. The policy sees plain data only; the simulator, its
clock and its log belong to the caller (the trusted test process when grading).

Requests are dicts ``{"id": str, "arrival": float, "prompt": int, "output": int}``:
``prompt`` tokens to prefill, ``output`` tokens to generate (the first comes out of the
step that completes the prefill, each later one out of one decode step). The policy is
never told ``output``: it is the half of the job the engine does not know.

The log (plain data) is ``{"model", "config", "requests", "steps"}``; each step is
``{"start": float, "end": float, "prefill": [[id, tokens], ...], "decode": [id, ...]}``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

# The step-time model, t = a + b x prefill_tokens + c x decode_seqs, from the roofline
# kata's H100 SXM datasheet figures and Llama-3.1-8B in bf16 (floors, not measurements).
H100_SXM_BANDWIDTH = 3350e9            # bytes/s (decimal)
H100_SXM_BF16_DENSE = 989.4e12         # FLOP/s, dense
LLAMA_8B_PARAMS_READ = 7_504_658_432   # layers + LM head (the input embedding is a lookup)
LLAMA_8B_ACTIVE = 6_979_321_856        # layers only: the matrices one prompt token multiplies
LLAMA_8B_KV_BYTES_PER_TOKEN = 131_072  # 2 x 32 layers x 8 KV heads x 128 x 2 bytes
DECODE_CONTEXT = 2048                  # the context each decode sequence reads, stated

H100_LLAMA_8B: dict[str, float] = {
    "a": LLAMA_8B_PARAMS_READ * 2 / H100_SXM_BANDWIDTH,
    "b": 2 * LLAMA_8B_ACTIVE / H100_SXM_BF16_DENSE,
    "c": DECODE_CONTEXT * LLAMA_8B_KV_BYTES_PER_TOKEN / H100_SXM_BANDWIDTH,
}

Plan = Callable[[dict[str, Any], float, list[dict[str, Any]], list[dict[str, Any]]], Any]


def step_time(model: dict[str, float], prefill_tokens: int, decode_seqs: int) -> float:
    """Seconds one step takes: ``a + b * prefill_tokens + c * decode_seqs``."""
    return model["a"] + model["b"] * prefill_tokens + model["c"] * decode_seqs


def _check_requests(requests: Sequence[dict[str, Any]], config: dict[str, Any]) -> None:
    ids = set()
    for r in requests:
        rid, arrival, prompt, output = r["id"], r["arrival"], r["prompt"], r["output"]
        if not isinstance(rid, str) or rid in ids:
            raise ValueError(f"request ids must be distinct strings, got {rid!r}")
        ids.add(rid)
        if isinstance(arrival, bool) or not isinstance(arrival, (int, float)) \
                or not math.isfinite(arrival) or arrival < 0:
            raise ValueError(f"{rid}: arrival must be a finite time >= 0, got {arrival!r}")
        for name, v in (("prompt", prompt), ("output", output)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{rid}: {name} must be an int >= 1, got {v!r}")
        if not config["chunked"] and prompt > config["budget"]:
            raise ValueError(f"{rid}: without chunking a prompt of {prompt} tokens never fits "
                             f"the budget of {config['budget']}")


def _decision(raw: Any, waiting: dict[str, int], decoding: set[str],
              now: float) -> tuple[list[list[Any]], list[str]]:
    """The policy's answer as ``(chunks, decodes)``; ValueError if it cannot be executed."""
    where = f"step at t={now!r}"
    if not isinstance(raw, (list, tuple)) or len(raw) != 2:
        raise ValueError(f"{where}: plan_step must return (chunks, decodes), got {raw!r}")
    chunks_raw, decodes_raw = raw
    if not isinstance(chunks_raw, (list, tuple)) or not isinstance(decodes_raw, (list, tuple)):
        raise ValueError(f"{where}: chunks and decodes must be lists, got {raw!r}")
    chunks: list[list[Any]] = []
    seen: set[str] = set()
    for c in chunks_raw:
        if not isinstance(c, (list, tuple)) or len(c) != 2:
            raise ValueError(f"{where}: a chunk is (request_id, tokens), got {c!r}")
        rid, n = c
        if not isinstance(rid, str) or rid not in waiting or rid in seen:
            raise ValueError(f"{where}: chunk for {rid!r}, which is not a waiting request "
                             f"(or appears twice)")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= waiting[rid]:
            raise ValueError(f"{where}: chunk of {n!r} tokens for {rid!r}, which has "
                             f"{waiting[rid]} prompt tokens left")
        seen.add(rid)
        chunks.append([rid, n])
    decodes: list[str] = []
    for rid in decodes_raw:
        if not isinstance(rid, str) or rid not in decoding or rid in decodes:
            raise ValueError(f"{where}: decode of {rid!r}, which is not a decoding request "
                             f"(or appears twice)")
        decodes.append(rid)
    if not chunks and not decodes:
        raise ValueError(f"{where}: an empty step while requests wait or decode")
    return chunks, decodes


def simulate(requests: Sequence[dict[str, Any]], config: dict[str, Any],
             model: dict[str, float], plan: Plan, max_steps: int = 100_000) -> dict[str, Any]:
    """Run ``requests`` to completion under ``plan`` and return the log.

    Each step starts at ``now``. The policy sees the requests that have arrived by then
    (``arrival <= now``): ``waiting`` (prefill not complete: id, arrival, prompt,
    prefilled) and ``decoding`` (prefill complete, output not: id, arrival, generated), in
    the order of ``requests``. It is called as ``plan(config, now, waiting, decoding)``
    and returns ``(chunks, decodes)``: ``[(id, tokens), ...]`` and ``[id, ...]``. The step
    takes ``step_time(model, sum of chunk tokens, len(decodes))`` seconds; its tokens come
    out at its end. With nothing arrived to run, the clock jumps to the next arrival.
    """
    _check_requests(requests, config)
    reqs = [dict(r) for r in requests]
    prefilled = {r["id"]: 0 for r in reqs}
    generated = {r["id"]: 0 for r in reqs}
    steps: list[dict[str, Any]] = []
    now = 0.0
    while any(generated[r["id"]] < r["output"] for r in reqs):
        if len(steps) >= max_steps:
            raise RuntimeError(f"no completion after {max_steps} steps")
        here = [r for r in reqs if r["arrival"] <= now and generated[r["id"]] < r["output"]]
        waiting = [{"id": r["id"], "arrival": r["arrival"], "prompt": r["prompt"],
                    "prefilled": prefilled[r["id"]]}
                   for r in here if prefilled[r["id"]] < r["prompt"]]
        decoding = [{"id": r["id"], "arrival": r["arrival"], "generated": generated[r["id"]]}
                    for r in here if prefilled[r["id"]] == r["prompt"]]
        if not here:
            now = min(float(r["arrival"]) for r in reqs if r["arrival"] > now)
            continue
        chunks, decodes = _decision(
            plan(dict(config), now, waiting, decoding),
            {w["id"]: w["prompt"] - w["prefilled"] for w in waiting},
            {d["id"] for d in decoding}, now)
        end = now + step_time(model, sum(n for _, n in chunks), len(decodes))
        for rid, n in chunks:
            prefilled[rid] += n
        prompt_done = {r["id"] for r in reqs if prefilled[r["id"]] == r["prompt"]}
        for rid, _ in chunks:
            if rid in prompt_done:
                generated[rid] = 1
        for rid in decodes:
            generated[rid] += 1
        steps.append({"start": now, "end": end, "prefill": chunks, "decode": decodes})
        now = end
    return {"model": dict(model), "config": dict(config), "requests": reqs, "steps": steps}


def scenario_head_of_line() -> list[dict[str, Any]]:
    """The prompt's scenario: one 32K prompt just ahead of ten short ones."""
    reqs = [{"id": "long", "arrival": 0.0, "prompt": 32_768, "output": 128}]
    reqs += [{"id": f"s{k:02d}", "arrival": k / 1000, "prompt": 512, "output": 128}
             for k in range(1, 11)]
    return reqs
