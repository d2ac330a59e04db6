"""A model of the mini_engine rules, over counts only (no block ids).

``expect_step`` takes the engine's observable state before a step (its stats, plus what the
tests know: each live request's prompt, max_tokens, sampling and streamed tokens) and returns
the record and the state the rules require after the step. The tests start it from the
implementation's own stats before every step, so a bug costs the rule it breaks, not every
check after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graders.support.mini_engine import EOS, model_logits, sample


@dataclass
class Req:
    prompt: list[int]
    max_tokens: int
    sampling: dict[str, Any]
    stream: list[int] = field(default_factory=list)

    @property
    def length(self) -> int:
        return len(self.prompt) + len(self.stream)


@dataclass
class Config:
    num_blocks: int
    block_size: int
    max_batched_tokens: int
    max_running: int

    def blocks(self, tokens: int) -> int:
        return -(-tokens // self.block_size)


@dataclass
class State:
    free: int
    running: list[str]
    waiting: list[str]
    computed: dict[str, int]
    held: dict[str, int]


@dataclass
class Expected:
    decodes: list[str]
    prefills: list[tuple[str, int]]
    preempted: list[str]
    outputs: list[tuple[str, int, bool]]
    after: State


def state_of(stats: dict[str, Any]) -> State:
    reqs = stats["requests"]
    return State(int(stats["free_blocks"]), list(stats["running"]), list(stats["waiting"]),
                 {k: int(v["computed"]) for k, v in reqs.items()},
                 {k: len(v["blocks"]) for k, v in reqs.items()})


def next_token(req: Req) -> tuple[int, bool]:
    """The request's next token and whether it finishes the request."""
    k = len(req.stream)
    token = sample(model_logits(req.prompt + req.stream), req.sampling, k)
    return token, token == EOS or k + 1 == req.max_tokens


def expect_step(cfg: Config, reqs: dict[str, Req], before: State) -> Expected:
    s = State(before.free, list(before.running), list(before.waiting), dict(before.computed),
              dict(before.held))

    def decoding(rid: str) -> bool:
        return bool(reqs[rid].stream) and s.computed[rid] == reqs[rid].length - 1

    def need(rid: str, n: int) -> int:
        return max(0, cfg.blocks(s.computed[rid] + n) - s.held[rid])

    budget = cfg.max_batched_tokens
    plan: dict[str, int] = {}
    for rid in s.running:
        if decoding(rid):
            plan[rid] = 1
            budget -= 1
    for rid in s.running:
        if not decoding(rid) and budget > 0:
            plan[rid] = max(0, min(reqs[rid].length - s.computed[rid], budget))
            budget -= plan[rid]
    preempted: list[str] = []
    for rid in list(s.running):
        if rid not in plan:
            continue
        while need(rid, plan[rid]) > s.free:
            victim = s.running.pop()
            s.free += s.held[victim]
            s.held[victim] = s.computed[victim] = 0
            s.waiting.insert(0, victim)
            preempted.append(victim)
            plan.pop(victim, None)
            if victim == rid:
                break
        if rid in plan:
            got = need(rid, plan[rid])
            s.free -= got
            s.held[rid] += got
    while (not preempted and s.waiting and budget > 0 and len(s.running) < cfg.max_running):
        rid = s.waiting[0]
        n = min(reqs[rid].length - s.computed[rid], budget)
        if need(rid, n) > s.free:
            break
        got = need(rid, n)
        s.free -= got
        s.held[rid] += got
        s.running.append(s.waiting.pop(0))
        plan[rid] = n
        budget -= n
    decodes = [r for r in s.running if r in plan and decoding(r)]
    prefills = [(r, plan[r]) for r in s.running if r in plan and not decoding(r)]
    outputs = []
    for rid in decodes + [r for r, _ in prefills]:
        s.computed[rid] += plan[rid]
        if s.computed[rid] >= reqs[rid].length:
            token, finished = next_token(reqs[rid])
            outputs.append((rid, token, finished))
            if finished:
                s.running.remove(rid)
                s.free += s.held.pop(rid)
                del s.computed[rid]
    return Expected(decodes, prefills, preempted, outputs, s)
