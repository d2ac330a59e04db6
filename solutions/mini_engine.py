"""Reference solution for the mini_engine kata: the scheduling loop of a serving engine.

The KV accounting lives in one place: each request's block table. A request holds exactly
``ceil(computed / block_size)`` blocks between steps; blocks come from one free list and go
back to it when the request finishes, is aborted or is preempted. A step plans first (every
decode one token, then prefill chunks in admission order under the token budget), then
allocates in admission order; a request that cannot get its blocks preempts the most
recently admitted running request until it can (or until it is that request itself). The
model is a pure function of the token sequence, so "computing" a chunk is bookkeeping, and a
request whose computed tokens reach its sequence length samples its next token.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from graders.support.mini_engine import EOS, VOCAB, check_sampling, model_logits, sample


@dataclass(eq=False)
class _Request:
    id: str
    prompt: list[int]
    max_tokens: int
    sampling: dict[str, Any]
    output: list[int] = field(default_factory=list)
    computed: int = 0                        # tokens of prompt + output whose KV is held
    blocks: list[int] = field(default_factory=list)

    @property
    def length(self) -> int:
        return len(self.prompt) + len(self.output)

    @property
    def decoding(self) -> bool:
        return bool(self.output) and self.computed == self.length - 1


def _positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


class Engine:
    def __init__(self, num_blocks: int, block_size: int, max_batched_tokens: int,
                 max_running: int) -> None:
        self.num_blocks = _positive("num_blocks", num_blocks)
        self.block_size = _positive("block_size", block_size)
        self.budget = _positive("max_batched_tokens", max_batched_tokens)
        self.max_running = _positive("max_running", max_running)
        if max_batched_tokens < max_running:
            raise ValueError(f"max_batched_tokens={max_batched_tokens} must be at least "
                             f"max_running={max_running}: every decode must fit in a step")
        self.free: deque[int] = deque(range(num_blocks))
        self.requests: dict[str, _Request] = {}
        self.running: list[_Request] = []        # admission order, oldest first
        self.waiting: deque[_Request] = deque()

    def _blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.block_size)

    def add(self, request_id: str, prompt: list[int], max_tokens: int,
            sampling: dict[str, Any]) -> None:
        if not isinstance(request_id, str):
            raise ValueError(f"request_id must be a str, got {request_id!r}")
        if request_id in self.requests:
            raise ValueError(f"request {request_id!r} is already waiting or running")
        if not isinstance(prompt, list) or not prompt or not all(
                type(t) is int and 0 <= t < VOCAB for t in prompt):
            raise ValueError(f"prompt must be a non-empty list of token ids in [0, {VOCAB})")
        _positive("max_tokens", max_tokens)
        check_sampling(sampling)
        need = self._blocks_for(len(prompt) + max_tokens)
        if need > self.num_blocks:
            raise ValueError(f"request {request_id!r} needs ceil((len(prompt) + max_tokens) / "
                             f"block_size) = {need} blocks, more than the pool's "
                             f"{self.num_blocks}")
        req = _Request(request_id, list(prompt), max_tokens, dict(sampling))
        self.requests[request_id] = req
        self.waiting.append(req)

    def abort(self, request_id: str) -> None:
        req = self.requests.pop(request_id)       # KeyError: unknown, finished or aborted
        if req in self.running:
            self.running.remove(req)
        else:
            self.waiting.remove(req)
        self._release(req)

    def _release(self, req: _Request) -> None:
        self.free.extend(req.blocks)
        req.blocks = []
        req.computed = 0

    def _grow(self, req: _Request, n: int) -> bool:
        """Give ``req`` the blocks for ``n`` more tokens, if the free list has them."""
        extra = self._blocks_for(req.computed + n) - len(req.blocks)
        if extra > len(self.free):
            return False
        req.blocks += [self.free.popleft() for _ in range(extra)]
        return True

    def step(self) -> dict[str, list[Any]]:
        budget = self.budget
        plan: dict[str, int] = {}
        for req in self.running:                  # 1. every decode, one token each
            if req.decoding:
                plan[req.id] = 1
                budget -= 1
        for req in self.running:                  # 2. prefill chunks, admission order
            if not req.decoding and budget > 0:
                plan[req.id] = min(req.length - req.computed, budget)
                budget -= plan[req.id]
        preempted: list[str] = []
        for req in list(self.running):            # 3. blocks, oldest first
            if req.id not in plan:                # preempted for an older request
                continue
            while not self._grow(req, plan[req.id]):
                victim = self.running.pop()       # the most recently admitted
                self._release(victim)
                self.waiting.appendleft(victim)
                preempted.append(victim.id)
                plan.pop(victim.id, None)
                if victim is req:
                    break
        while (not preempted and self.waiting and budget > 0       # 4. admit, FCFS
               and len(self.running) < self.max_running):
            req = self.waiting[0]
            n = min(req.length, budget)
            if not self._grow(req, n):
                break
            self.running.append(self.waiting.popleft())
            plan[req.id] = n
            budget -= n
        decodes = [r.id for r in self.running if r.id in plan and r.decoding]
        prefills = [(r.id, plan[r.id]) for r in self.running if r.id in plan and not r.decoding]
        outputs = []
        for rid in decodes + [rid for rid, _ in prefills]:   # 5. compute and sample
            req = self.requests[rid]
            req.computed += plan[rid]
            if req.computed < req.length:
                continue
            token = sample(model_logits(req.prompt + req.output), req.sampling, len(req.output))
            req.output.append(token)
            finished = token == EOS or len(req.output) == req.max_tokens
            outputs.append((rid, token, finished))
            if finished:
                self.running.remove(req)
                del self.requests[rid]
                self._release(req)
        return {"decodes": decodes, "prefills": prefills, "preempted": preempted,
                "outputs": outputs}

    def stats(self) -> dict[str, Any]:
        return {"free_blocks": len(self.free),
                "running": [r.id for r in self.running],
                "waiting": [r.id for r in self.waiting],
                "requests": {r.id: {"computed": r.computed, "generated": len(r.output),
                                    "blocks": list(r.blocks)}
                             for r in self.requests.values()}}
