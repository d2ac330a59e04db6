"""Written blind from the prompt, the stub and the public tests only (2026-12-02), by a helper
session.

How it is built (a design on purpose unlike "deque + running list + free list"):

- The KV accounting lives in one **block owner table**: ``owner[b]`` is ``None`` for a free
  block or ``(request_id, position)`` for the ``position``-th block of a request's sequence.
  Nothing else records blocks: a request's block list, its block count and the free count
  are all read off the table (the pools are tiny: 3 to 8 blocks), so the table cannot
  disagree with a second copy. A free block is handed out lowest id first.
- There is no queue object either. Every live request carries an ``order`` key and a
  ``running`` flag; the running list is the running requests sorted by key (the key is an
  admission stamp that only grows, so a re-admitted request is the newest), and the waiting
  queue is the waiting requests sorted by key: ``add`` takes the next key of a growing
  positive counter (the back), a preemption takes the next key of a falling negative counter
  (the front), so victims taken newest first end at the front in their admission order.
- A step is a pure plan (a dict request -> planned tokens) built from the derived decoding /
  prefilling state, then an allocation pass that may preempt, then admission, then compute.
"""

from __future__ import annotations

from typing import Any

from graders.support.mini_engine import EOS, VOCAB, check_sampling, model_logits, sample

__all__ = ["EOS", "VOCAB", "Engine", "check_sampling", "model_logits", "sample"]


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


class _Request:
    __slots__ = ("rid", "prompt", "max_tokens", "sampling", "generated", "computed",
                 "running", "order")

    def __init__(self, rid: str, prompt: list[int], max_tokens: int,
                 sampling: dict[str, Any], order: int) -> None:
        self.rid = rid
        self.prompt = prompt
        self.max_tokens = max_tokens
        self.sampling = sampling
        self.generated: list[int] = []
        self.computed = 0
        self.running = False
        self.order = order

    def seq_len(self) -> int:
        return len(self.prompt) + len(self.generated)

    def decoding(self) -> bool:
        return bool(self.generated) and self.computed == self.seq_len() - 1


class Engine:
    """Admits requests, schedules decodes and prefill chunks under a token budget, keeps the
    KV block accounting, preempts by recompute when the pool runs dry, samples and streams.
    """

    def __init__(self, num_blocks: int, block_size: int, max_batched_tokens: int,
                 max_running: int) -> None:
        params = (num_blocks, block_size, max_batched_tokens, max_running)
        if not all(_is_int(p) and p > 0 for p in params):
            raise ValueError(f"engine parameters must be positive ints, got {params}")
        if max_batched_tokens < max_running:
            raise ValueError(f"max_batched_tokens={max_batched_tokens} must be at least "
                             f"max_running={max_running}")
        self._num_blocks = num_blocks
        self._block_size = block_size
        self._budget = max_batched_tokens
        self._max_running = max_running
        self._owner: list[tuple[str, int] | None] = [None] * num_blocks
        self._live: dict[str, _Request] = {}
        self._back = 0          # next waiting key at the back grows: 1, 2, 3, ...
        self._front = 0         # next waiting key at the front falls: -1, -2, ...
        self._stamp = 0         # admission stamps grow

    # ---- the block owner table ---------------------------------------------------------

    def _blocks_of(self, rid: str) -> list[int]:
        mine = [(owner[1], b) for b, owner in enumerate(self._owner)
                if owner is not None and owner[0] == rid]
        return [b for _, b in sorted(mine)]

    def _free_count(self) -> int:
        return sum(1 for owner in self._owner if owner is None)

    def _grow(self, req: _Request, total: int) -> None:
        """Give ``req`` free blocks until it holds ``total`` (the caller checked they exist)."""
        held = len(self._blocks_of(req.rid))
        for b in range(self._num_blocks):
            if held >= total:
                break
            if self._owner[b] is None:
                self._owner[b] = (req.rid, held)
                held += 1

    def _release(self, rid: str) -> None:
        for b, owner in enumerate(self._owner):
            if owner is not None and owner[0] == rid:
                self._owner[b] = None

    # ---- the queues, derived from the keys ---------------------------------------------

    def _running(self) -> list[_Request]:
        return sorted((r for r in self._live.values() if r.running), key=lambda r: r.order)

    def _waiting(self) -> list[_Request]:
        return sorted((r for r in self._live.values() if not r.running), key=lambda r: r.order)

    def _preempt(self, req: _Request) -> None:
        self._release(req.rid)
        req.computed = 0
        req.running = False
        self._front -= 1
        req.order = self._front

    # ---- the API -----------------------------------------------------------------------

    def add(self, request_id: str, prompt: list[int], max_tokens: int,
            sampling: dict[str, Any]) -> None:
        """Queue a request at the back of the waiting queue; it computes nothing yet."""
        if not isinstance(request_id, str):
            raise ValueError(f"request_id must be a str, got {request_id!r}")
        if request_id in self._live:
            raise ValueError(f"request {request_id!r} is already live")
        if not isinstance(prompt, list) or not prompt:
            raise ValueError(f"prompt must be a non-empty list of token ids, got {prompt!r}")
        if not all(_is_int(t) and 0 <= t < VOCAB for t in prompt):
            raise ValueError(f"prompt tokens must be ints in [0, {VOCAB}), got {prompt!r}")
        if not _is_int(max_tokens) or max_tokens <= 0:
            raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
        check_sampling(sampling)
        need = _cdiv(len(prompt) + max_tokens, self._block_size)
        if need > self._num_blocks:
            raise ValueError(f"the request needs {need} blocks, more than the whole pool "
                             f"of {self._num_blocks}")
        self._back += 1
        self._live[request_id] = _Request(request_id, [int(t) for t in prompt], max_tokens,
                                          dict(sampling), self._back)

    def abort(self, request_id: str) -> None:
        """Cancel a live request (waiting or running) and free every block it holds."""
        if not isinstance(request_id, str) or request_id not in self._live:
            raise KeyError(request_id)
        self._release(request_id)
        del self._live[request_id]

    def step(self) -> dict[str, list[Any]]:
        """Run one engine step and return its record (see the stub for the shapes)."""
        running = self._running()
        plan: dict[str, int] = {}
        # 1. decodes
        for r in running:
            if r.decoding():
                plan[r.rid] = 1
        left = self._budget - len(plan)
        # 2. prefill chunks, first come first served
        for r in running:
            if left == 0:
                break
            if not r.decoding():
                n = min(r.seq_len() - r.computed, left)
                plan[r.rid] = n
                left -= n
        # 3. allocate oldest first; victims come off the newest end
        preempted: list[str] = []
        alive = list(running)
        i = 0
        while i < len(alive):
            r = alive[i]
            n = plan.get(r.rid, 0)
            if n:
                total = _cdiv(r.computed + n, self._block_size)
                short = total - len(self._blocks_of(r.rid)) - self._free_count()
                self_victim = False
                while short > 0:
                    victim = alive.pop()
                    self._preempt(victim)
                    plan.pop(victim.rid, None)
                    preempted.append(victim.rid)
                    if victim is r:
                        self_victim = True
                        break
                    short = total - len(self._blocks_of(r.rid)) - self._free_count()
                if self_victim:
                    break
                self._grow(r, total)
            i += 1
        admitted: list[_Request] = []
        # 4. admit, only in a step that preempted nothing
        if not preempted:
            left = self._budget - sum(plan.values())
            queue = self._waiting()
            n_running = len(alive)
            for w in queue:
                if n_running >= self._max_running or left <= 0:
                    break
                n = min(w.seq_len(), left)
                need = _cdiv(n, self._block_size)
                if need > self._free_count():
                    break
                self._stamp += 1
                w.running = True
                w.order = self._stamp
                self._grow(w, need)
                plan[w.rid] = n
                left -= n
                n_running += 1
                admitted.append(w)
        # 5. compute and sample, decodes then prefills (admission order, new ones last)
        decodes = [r for r in alive if r.rid in plan and r.decoding()]
        prefills = [r for r in alive if r.rid in plan and not r.decoding()] + admitted
        outputs: list[tuple[str, int, bool]] = []
        for r in decodes + prefills:
            r.computed += plan[r.rid]
            if r.computed < r.seq_len():
                continue
            k = len(r.generated)
            token = sample(model_logits(r.prompt + r.generated), r.sampling, k)
            r.generated.append(token)
            finished = token == EOS or len(r.generated) == r.max_tokens
            outputs.append((r.rid, token, finished))
            if finished:
                self._release(r.rid)
                del self._live[r.rid]
        return {"decodes": [r.rid for r in decodes],
                "prefills": [(r.rid, plan[r.rid]) for r in prefills],
                "preempted": preempted,
                "outputs": outputs}

    def stats(self) -> dict[str, Any]:
        """The engine's state as plain data (see the stub for the shape)."""
        return {
            "free_blocks": self._free_count(),
            "running": [r.rid for r in self._running()],
            "waiting": [r.rid for r in self._waiting()],
            "requests": {rid: {"computed": r.computed, "generated": len(r.generated),
                               "blocks": self._blocks_of(rid)}
                         for rid, r in self._live.items()},
        }
