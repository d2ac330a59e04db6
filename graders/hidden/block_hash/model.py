"""A model of the truth for BlockPool under a collision-free hash.

It tracks content, not hashes: the cache maps each cached content (namespace + token
prefix) to the blocks holding it, in the order they were cached (a duplicate is a second
copy; a hit takes the first). Where the prompt fixes the answer (which blocks hit,
which cached blocks an eviction takes) the model gives it exactly; where it leaves a choice
(which empty block to hand out) the model accepts every allowed answer and then follows
the one the implementation made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.block_hash.helpers import Content, ceil_div


@dataclass
class ModelRequest:
    namespace: str
    tokens: list[int]
    table: list[int]
    done: int            # full blocks already cached
    hits: int = 0


@dataclass
class PoolModel:
    num_blocks: int
    bs: int
    ref: list[int] = field(default_factory=list)
    cached: dict[Content, list[int]] = field(default_factory=dict)  # first cached first
    content_of: dict[int, Content] = field(default_factory=dict)
    queue: list[int] = field(default_factory=list)     # cached free blocks, LRU first
    empty: set[int] = field(default_factory=set)
    requests: dict[str, ModelRequest] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.ref = [0] * self.num_blocks
        self.empty = set(range(self.num_blocks))

    # -- queries ---------------------------------------------------------------------
    def free_count(self) -> int:
        return len(self.empty) + len(self.queue)

    def lookup(self, tokens: list[int], namespace: str) -> list[int]:
        hits: list[int] = []
        for i in range((len(tokens) - 1) // self.bs):
            copies = self.cached.get((namespace, tuple(tokens[:(i + 1) * self.bs])))
            if not copies:
                break
            hits.append(copies[0])
        return hits

    def allocate_need(self, tokens: list[int], namespace: str) -> tuple[list[int], int, bool]:
        """(hits, fresh blocks needed, whether it fits)."""
        hits = self.lookup(tokens, namespace)
        need = ceil_div(len(tokens), self.bs) - len(hits)
        revived = sum(1 for b in hits if self.ref[b] == 0)
        return hits, need, need <= self.free_count() - revived

    def check_fresh(self, fresh: list[int], need: int, excluded: set[int]) -> str | None:
        """None if ``fresh`` is an allowed choice of ``need`` fresh blocks, else why not."""
        if len(fresh) != need or len(set(fresh)) != need:
            return f"expected {need} distinct fresh blocks, got {fresh}"
        empty = self.empty - excluded
        queue = [b for b in self.queue if b not in excluded]
        if need <= len(empty):
            bad = [b for b in fresh if b not in empty]
            if bad:
                return (f"fresh blocks must come from the empty free blocks {sorted(empty)} "
                        f"while there are enough of them, got {fresh} (blocks {bad} are not "
                        "empty: a cached block was evicted too early, or a held block reused)")
            return None
        want = empty | set(queue[:need - len(empty)])
        if set(fresh) != want:
            return (f"{need} fresh blocks needed: all empty blocks {sorted(empty)} then the "
                    f"least recently freed cached blocks {queue[:need - len(empty)]} "
                    f"(queue, oldest first: {queue}); got {fresh}")
        return None

    # -- transitions (with the implementation's choice of fresh blocks) -----------------
    def _take(self, fresh: list[int]) -> None:
        for b in fresh:
            if b in self.empty:
                self.empty.remove(b)
            else:
                self.queue.remove(b)
                content = self.content_of.pop(b)
                self.cached[content].remove(b)
                if not self.cached[content]:
                    del self.cached[content]
            self.ref[b] = 1

    def _cache_full(self, req: ModelRequest) -> None:
        full = len(req.tokens) // self.bs
        for i in range(req.done, full):
            content = (req.namespace, tuple(req.tokens[:(i + 1) * self.bs]))
            self.cached.setdefault(content, []).append(req.table[i])
            self.content_of[req.table[i]] = content
        req.done = max(req.done, full)

    def allocate(self, rid: str, tokens: list[int], namespace: str, hits: list[int],
                 fresh: list[int]) -> None:
        for b in hits:
            if self.ref[b] == 0:
                self.queue.remove(b)
            self.ref[b] += 1
        self._take(fresh)
        req = ModelRequest(namespace, list(tokens), hits + fresh, done=len(hits), hits=len(hits))
        self.requests[rid] = req
        self._cache_full(req)

    def append_need(self, rid: str, tokens: list[int]) -> int:
        req = self.requests[rid]
        return ceil_div(len(req.tokens) + len(tokens), self.bs) - len(req.table)

    def append(self, rid: str, tokens: list[int], fresh: list[int]) -> None:
        req = self.requests[rid]
        self._take(fresh)
        req.table += fresh
        req.tokens += tokens
        self._cache_full(req)

    def free(self, rid: str) -> None:
        req = self.requests.pop(rid)
        for b in reversed(req.table):
            self.ref[b] -= 1
            if self.ref[b] == 0:
                if b in self.content_of:
                    self.queue.append(b)
                else:
                    self.empty.add(b)
