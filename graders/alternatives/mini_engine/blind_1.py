"""mini_engine: the scheduling loop of a serving engine around a toy model.

Written blind from the prompt, the stub and the public tests only (2026-12-02), by a helper
session.

How it is built (deliberately unlike a deque-and-free-list engine):

- The free pool is one Python int used as a bitmap (bit ``i`` set: block ``i`` is free).
  Allocation takes the lowest set bits; freeing ORs the bits back in, after asserting none
  of them was set already (a double free would fail loudly). The free count is a popcount.
- Every live request lives in one dict, keyed by id, holding its prompt, generated tokens,
  computed count and block table. The two queues are orders over that dict, not lists:
  a running request carries an admission stamp (a counter that only grows, so the newest
  has the largest), a waiting request a queue key (``add`` takes a key above every other,
  a preemption one below every other). The running order and the waiting order are the
  live requests sorted by those keys.
- Decoding and prefilling are derived from (generated, computed, sequence length) each
  step, never stored. A step plans into a dict ``id -> tokens`` (decodes first, then the
  prefill chunks), allocates oldest first with victims taken from the newest stamp, admits
  only when nothing was preempted, then computes and samples with ``index = len(generated)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graders.support.mini_engine import EOS, VOCAB, check_sampling, model_logits, sample

__all__ = ["EOS", "VOCAB", "Engine", "check_sampling", "model_logits", "sample"]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass
class _Request:
    rid: str
    prompt: list[int]
    max_tokens: int
    sampling: dict[str, Any]
    generated: list[int] = field(default_factory=list)
    computed: int = 0
    blocks: list[int] = field(default_factory=list)
    stamp: int | None = None       # admission stamp while running, else None
    queue_key: int | None = None   # position key while waiting, else None

    def seq_len(self) -> int:
        return len(self.prompt) + len(self.generated)

    def is_decoding(self) -> bool:
        return len(self.generated) >= 1 and self.computed == self.seq_len() - 1


class Engine:
    """Admits requests, schedules decodes and prefill chunks under a token budget, keeps the
    KV block accounting, preempts by recompute when the pool runs dry, samples and streams.
    """

    def __init__(self, num_blocks: int, block_size: int, max_batched_tokens: int,
                 max_running: int) -> None:
        for name, value in (("num_blocks", num_blocks), ("block_size", block_size),
                            ("max_batched_tokens", max_batched_tokens),
                            ("max_running", max_running)):
            if not _is_int(value) or value <= 0:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if max_batched_tokens < max_running:
            raise ValueError(f"max_batched_tokens={max_batched_tokens} must be at least "
                             f"max_running={max_running}")
        self._num_blocks = num_blocks
        self._block_size = block_size
        self._max_batched = max_batched_tokens
        self._max_running = max_running
        self._free_bits = (1 << num_blocks) - 1
        self._live: dict[str, _Request] = {}
        self._next_stamp = 0
        self._back_key = 0     # the next key at the back of the waiting queue
        self._front_key = -1   # the next key at the front of the waiting queue

    # ----------------------------------------------------------------- the block bitmap
    def _free_count(self) -> int:
        return self._free_bits.bit_count()

    def _take(self, n: int) -> list[int]:
        assert n <= self._free_count()
        taken: list[int] = []
        bits = self._free_bits
        while len(taken) < n:
            low = bits & -bits
            taken.append(low.bit_length() - 1)
            bits ^= low
        self._free_bits = bits
        return taken

    def _give_back(self, blocks: list[int]) -> None:
        for b in blocks:
            mask = 1 << b
            assert not self._free_bits & mask, f"block {b} freed twice"
            self._free_bits |= mask
        blocks.clear()

    # ----------------------------------------------------------------- the two orders
    def _running(self) -> list[_Request]:
        reqs = [r for r in self._live.values() if r.stamp is not None]
        return sorted(reqs, key=lambda r: r.stamp if r.stamp is not None else 0)

    def _waiting(self) -> list[_Request]:
        reqs = [r for r in self._live.values() if r.queue_key is not None]
        return sorted(reqs, key=lambda r: r.queue_key if r.queue_key is not None else 0)

    def _admit(self, req: _Request) -> None:
        req.queue_key = None
        req.stamp = self._next_stamp
        self._next_stamp += 1

    def _preempt(self, req: _Request) -> None:
        self._give_back(req.blocks)
        req.computed = 0
        req.stamp = None
        req.queue_key = self._front_key
        self._front_key -= 1

    # ----------------------------------------------------------------- the API
    def add(self, request_id: str, prompt: list[int], max_tokens: int,
            sampling: dict[str, Any]) -> None:
        if not isinstance(request_id, str):
            raise ValueError(f"request_id must be a str, got {request_id!r}")
        if request_id in self._live:
            raise ValueError(f"request {request_id!r} is already live")
        if not isinstance(prompt, list) or not prompt:
            raise ValueError(f"prompt must be a non-empty list of ints, got {prompt!r}")
        for t in prompt:
            if not _is_int(t) or not 0 <= t < VOCAB:
                raise ValueError(f"prompt tokens must be ints in [0, {VOCAB}), got {t!r}")
        if not _is_int(max_tokens) or max_tokens <= 0:
            raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
        check_sampling(sampling)
        need = _ceil_div(len(prompt) + max_tokens, self._block_size)
        if need > self._num_blocks:
            raise ValueError(f"the request needs {need} blocks, more than the whole pool "
                             f"of {self._num_blocks}")
        req = _Request(request_id, list(prompt), max_tokens, dict(sampling))
        req.queue_key = self._back_key
        self._back_key += 1
        self._live[request_id] = req

    def abort(self, request_id: str) -> None:
        req = self._live.get(request_id) if isinstance(request_id, str) else None
        if req is None:
            raise KeyError(request_id)
        self._give_back(req.blocks)
        del self._live[request_id]

    def step(self) -> dict[str, list[Any]]:
        running = self._running()
        plan: dict[str, int] = {}
        # 1. decodes
        decoding = [r for r in running if r.is_decoding()]
        for r in decoding:
            plan[r.rid] = 1
        budget = self._max_batched - len(decoding)
        # 2. prefill chunks, first come first served
        for r in running:
            if budget <= 0:
                break
            if r.rid in plan:
                continue
            n = min(r.seq_len() - r.computed, budget)
            if n > 0:
                plan[r.rid] = n
                budget -= n
        # 3. allocate, oldest first; victims from the newest end
        preempted: list[str] = []
        i = 0
        while i < len(running):
            r = running[i]
            n = plan.get(r.rid, 0)
            if n == 0:
                i += 1
                continue
            need = _ceil_div(r.computed + n, self._block_size) - len(r.blocks)
            stop = False
            while need > self._free_count():
                victim = running.pop()
                plan.pop(victim.rid, None)
                self._preempt(victim)
                preempted.append(victim.rid)
                if victim is r:
                    stop = True
                    break
            if stop:
                break
            if need > 0:
                r.blocks.extend(self._take(need))
            i += 1
        # 4. admit, only when nothing was preempted
        if not preempted:
            budget = self._max_batched - sum(plan.values())
            for w in self._waiting():
                if len(running) >= self._max_running or budget <= 0:
                    break
                n = min(w.seq_len(), budget)
                need = _ceil_div(n, self._block_size)
                if need > self._free_count():
                    break
                w.blocks.extend(self._take(need))
                self._admit(w)
                running.append(w)
                plan[w.rid] = n
                budget -= n
        # 5. compute and sample
        decode_ids = [r.rid for r in decoding if r.rid in plan]
        prefill_reqs = [r for r in running if r.rid in plan and r.rid not in decode_ids]
        outputs: list[tuple[str, int, bool]] = []
        for r in [self._live[d] for d in decode_ids] + prefill_reqs:
            r.computed += plan[r.rid]
            if r.computed == r.seq_len():
                seq = r.prompt + r.generated
                token = sample(model_logits(seq), r.sampling, len(r.generated))
                r.generated.append(token)
                finished = token == EOS or len(r.generated) == r.max_tokens
                outputs.append((r.rid, token, finished))
                if finished:
                    self._give_back(r.blocks)
                    del self._live[r.rid]
        return {
            "decodes": decode_ids,
            "prefills": [(r.rid, plan[r.rid]) for r in prefill_reqs],
            "preempted": preempted,
            "outputs": outputs,
        }

    def stats(self) -> dict[str, Any]:
        return {
            "free_blocks": self._free_count(),
            "running": [r.rid for r in self._running()],
            "waiting": [r.rid for r in self._waiting()],
            "requests": {rid: {"computed": r.computed, "generated": len(r.generated),
                               "blocks": list(r.blocks)}
                         for rid, r in self._live.items()},
        }
