"""Stateful tests of BlockPool: random schedules of allocate / append / free, checked after
every step against the KV-content record and, for collision-free hashes, the model.

Strategies are built to collide: a 2-3 token alphabet, prompts built by extending earlier
prompts, two namespaces, pools of 3-8 blocks so that eviction happens all the time.
"""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from graders.hidden.block_hash.model import PoolModel
from graders.impl import kata_impl
from graders.support import block_hash as hashes
from tests.block_hash.helpers import KVRecord, ceil_div, describe

bh = kata_impl("block_hash")

RIDS = ["r0", "r1", "r2", "r3"]
NAMESPACES = ["", "x"]
small_tokens = st.lists(st.integers(0, 2), min_size=0, max_size=6)


class PoolMachine(RuleBasedStateMachine):
    """``exact_model``: compare with PoolModel (collision-free hashes only).

    Rules: Content; Allocate; Fresh blocks and eviction; Caching; Free and lazy eviction
    Rules: Collisions; Errors
    """

    hash_fn = staticmethod(hashes.sha256)
    exact_model = True

    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []

    @initialize(num_blocks=st.integers(3, 8), bs=st.integers(1, 3))
    def setup(self, num_blocks: int, bs: int) -> None:
        self.n, self.bs = num_blocks, bs
        self.pool = bh.BlockPool(num_blocks, bs, self.hash_fn)
        self.model = PoolModel(num_blocks, bs)
        self.kv = KVRecord(bs)
        self.history: list[list[int]] = [[0, 1, 2, 0, 1, 2]]
        self.live: dict[str, tuple[str, list[int], list[int]]] = {}  # rid -> (ns, tokens, table)
        self.log.append(f"BlockPool(num_blocks={num_blocks}, block_size={bs}, "
                        f"hash_fn={self.hash_fn.__name__})")

    # -- helpers ---------------------------------------------------------------------
    def ctx(self) -> str:
        return "after:\n  " + "\n  ".join(self.log[-25:]) + "\n"

    def held(self) -> set[int]:
        return {b for _, _, table in self.live.values() for b in table}

    def snapshot(self) -> tuple[int, list[int]]:
        return self.pool.num_free_blocks(), sorted(self.pool.cached_blocks())

    # -- rules -----------------------------------------------------------------------
    @rule(rid=st.sampled_from(RIDS), ns=st.sampled_from(NAMESPACES), data=st.data(),
          suffix=small_tokens)
    def allocate(self, rid: str, ns: str, data: st.DataObject, suffix: list[int]) -> None:
        base = data.draw(st.sampled_from(self.history), label="base")
        cut = data.draw(st.integers(0, len(base)), label="cut")
        tokens = base[:cut] + suffix
        if not tokens:
            tokens = [0]
        self.log.append(f"allocate({rid!r}, {tokens}, namespace={ns!r})")
        before = self.snapshot()
        if rid in self.live:
            self.log[-1] += f" -> ValueError ({rid!r} is running)"
            with pytest.raises(ValueError):
                self.pool.allocate(rid, tokens, ns)
            assert self.snapshot() == before, f"{self.ctx()}a failed allocate changed the pool"
            return
        hits, need, fits = self.model.allocate_need(tokens, ns)
        total = ceil_div(len(tokens), self.bs)
        if self.exact_model and not fits:
            self.log[-1] += " -> OutOfBlocks"
            with pytest.raises(bh.OutOfBlocks):
                self.pool.allocate(rid, tokens, ns)
            assert self.snapshot() == before, f"{self.ctx()}a failed allocate changed the pool"
            return
        if not self.exact_model:
            free = self.n - len(self.held())
            try:
                table, computed = self.pool.allocate(rid, tokens, ns)
            except bh.OutOfBlocks:
                assert total > free, (
                    f"{self.ctx()}OutOfBlocks although all {total} blocks fit in the {free} "
                    "free ones")
                assert self.snapshot() == before, f"{self.ctx()}a failed allocate changed the pool"
                return
        else:
            table, computed = self.pool.allocate(rid, tokens, ns)
        table = list(table)
        self.log[-1] += f" -> ({table}, {computed})"
        cap = (len(tokens) - 1) // self.bs * self.bs if self.exact_model else len(tokens)
        assert computed % self.bs == 0 and 0 <= computed <= cap, (
            f"{self.ctx()}num_computed_tokens={computed} must be a multiple of {self.bs} and "
            f"at most {cap} for a {len(tokens)}-token prompt")
        assert len(table) == total and len(set(table)) == total, (
            f"{self.ctx()}expected {total} distinct block ids, got {table}")
        assert all(0 <= b < self.n for b in table), f"{self.ctx()}block ids out of range"
        h = computed // self.bs
        self.kv.check_hits(table, h, ns, tokens, self.ctx())
        reused = [b for b in table[h:] if b in self.held()]
        assert not reused, (f"{self.ctx()}fresh blocks {reused} are still held by a running "
                            "request")
        if self.exact_model:
            assert table[:h] == hits, (
                f"{self.ctx()}expected cache hits {hits} (num_computed_tokens="
                f"{len(hits) * self.bs}), got {table[:h]}")
            err = self.model.check_fresh(table[h:], need, set(hits))
            assert err is None, self.ctx() + err
            self.model.allocate(rid, tokens, ns, hits, table[h:])
        self.kv.write(table, h, ns, tokens)
        self.live[rid] = (ns, list(tokens), table)
        self.history.append(list(tokens))
        if len(self.history) > 12:
            self.history.pop(1)

    @rule(rid=st.sampled_from(RIDS), tokens=st.lists(st.integers(0, 2), max_size=4))
    def append(self, rid: str, tokens: list[int]) -> None:
        self.log.append(f"append({rid!r}, {tokens})")
        before = self.snapshot()
        if rid not in self.live:
            self.log[-1] += " -> KeyError"
            with pytest.raises(KeyError):
                self.pool.append(rid, tokens)
            assert self.snapshot() == before, f"{self.ctx()}a failed append changed the pool"
            return
        ns, toks, table = self.live[rid]
        need = ceil_div(len(toks) + len(tokens), self.bs) - len(table)
        free = self.n - len(self.held())
        if need > free:
            self.log[-1] += " -> OutOfBlocks"
            with pytest.raises(bh.OutOfBlocks):
                self.pool.append(rid, tokens)
            assert self.snapshot() == before, f"{self.ctx()}a failed append changed the pool"
            return
        new = list(self.pool.append(rid, tokens))
        self.log[-1] += f" -> {new}"
        assert len(new) == need and len(set(new)) == need, (
            f"{self.ctx()}expected {need} new distinct blocks, got {new}")
        reused = [b for b in new if b in self.held()]
        assert not reused, f"{self.ctx()}new blocks {reused} are still held by a running request"
        if self.exact_model:
            err = self.model.check_fresh(new, need, set())
            assert err is None, self.ctx() + err
            self.model.append(rid, tokens, new)
        first = len(toks) // self.bs
        table = table + new
        toks = toks + tokens
        self.kv.write(table, first, ns, toks)
        self.live[rid] = (ns, toks, table)
        self.history.append(list(toks))
        if len(self.history) > 12:
            self.history.pop(1)

    @rule(rid=st.sampled_from(RIDS))
    def free(self, rid: str) -> None:
        self.log.append(f"free({rid!r})")
        before = self.snapshot()
        if rid not in self.live:
            self.log[-1] += " -> KeyError"
            with pytest.raises(KeyError):
                self.pool.free(rid)
            assert self.snapshot() == before, f"{self.ctx()}a failed free changed the pool"
            return
        self.pool.free(rid)
        del self.live[rid]
        if self.exact_model:
            self.model.free(rid)

    # -- invariants --------------------------------------------------------------------
    @invariant()
    def accounting(self) -> None:
        if not hasattr(self, "pool"):
            return
        free = self.n - len(self.held())
        got = self.pool.num_free_blocks()
        assert got == free, (f"{self.ctx()}num_free_blocks()={got}, but running requests hold "
                             f"{sorted(self.held())} of {self.n} blocks")

    @invariant()
    def cache_contents(self) -> None:
        if not hasattr(self, "pool"):
            return
        cached = sorted(self.pool.cached_blocks())
        assert len(set(cached)) == len(cached), f"{self.ctx()}cached_blocks() repeats: {cached}"
        contents: dict = {}    # content -> its cached copies (duplicates are cached too)
        for b in cached:
            assert self.kv.is_full(b), (
                f"{self.ctx()}block {b} is reported cached but holds {describe(self.kv.kv.get(b))}"
                " (only full blocks are cached)")
            contents.setdefault(self.kv.kv[b], []).append(b)
        if not self.exact_model:
            return
        want = sorted(self.model.content_of)
        if cached != want:
            lost = {b: describe(self.model.content_of[b]) for b in set(want) - set(cached)}
            extra = {b: describe(self.kv.kv.get(b)) for b in set(cached) - set(want)}
            raise AssertionError(
                f"{self.ctx()}cached blocks should be {want}, got {cached}; should still be "
                f"cached: {lost}; should not be: {extra}")
        # No stranding: every cached block's parent content is cached too.
        for c, b in contents.items():    # b: the copies of c
            ns, toks = c
            if len(toks) > self.bs:
                parent = (ns, toks[:len(toks) - self.bs])
                assert parent in contents, (
                    f"{self.ctx()}block {b} ({describe(c)}) is cached but its parent content "
                    f"{describe(parent)} is not: it can never be hit again (stranded)")


class ExactSha256Machine(PoolMachine):
    hash_fn = staticmethod(hashes.sha256)


class ExactIdentityMachine(PoolMachine):
    hash_fn = staticmethod(hashes.exact)


class TinyHashMachine(PoolMachine):
    hash_fn = staticmethod(hashes.tiny)
    exact_model = False


class ConstantHashMachine(PoolMachine):
    hash_fn = staticmethod(hashes.constant)
    exact_model = False


# A third of the profile's examples, 20 steps each: enough to reach the traps (the pools are
# tiny), and short enough to replay. Each failure message lists the steps that led to it.
_settings = settings(max_examples=max(8, settings.default.max_examples // 3),
                     stateful_step_count=20)
for _machine in (ExactSha256Machine, ExactIdentityMachine, TinyHashMachine, ConstantHashMachine):
    _machine.TestCase.settings = _settings

TestModelSha256 = pytest.mark.rubric("eviction_order")(ExactSha256Machine.TestCase)
TestModelExactHash = pytest.mark.rubric("lazy_eviction")(ExactIdentityMachine.TestCase)
TestTinyHash = pytest.mark.rubric("collision_safety")(TinyHashMachine.TestCase)
TestConstantHash = pytest.mark.rubric("collision_safety")(ConstantHashMachine.TestCase)
