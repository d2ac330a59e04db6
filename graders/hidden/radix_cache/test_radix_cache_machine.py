"""Hidden stateful tests for radix_cache.

A hypothesis state machine drives acquire / extend / commit / release / abort / evict with a
small alphabet (so prefixes collide and edges split all the time) and a small pool (so the
cache evicts and runs short). After every step it checks the implementation against a
model of the truth:

- the KV-content model (tests/radix_cache/helpers.py): every slot handed out as a hit holds
  exactly the prefix requested at its position, and no live request's KV is overwritten;
- the slot accounting: free + cached + leased == num_slots, and ``leased`` and ``pinned``
  equal what the model derives from the live leases;
- the bounds on eviction and on failure (fail exactly when the pool cannot supply).

The same machine runs once per rubric item; each run enforces the checks of its item, so
a bug costs the item whose rule it breaks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import assume, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from graders.impl import kata_impl
from tests.radix_cache.helpers import KV

rc = kata_impl("radix_cache")

ALPHABET = st.integers(0, 2)


@dataclass
class LeaseModel:
    tokens: list[int]             # the whole sequence so far (prompt, then generated)
    slots: list[int]              # one per position
    prompt_len: int
    cached: int                   # positions 0..cached-1 hold tree slots


@dataclass
class Checks:
    item: str
    failures: list[str] = field(default_factory=list)

    def __call__(self, items: set[str], ok: bool, message: str) -> None:
        if not ok and self.item in items:
            raise AssertionError(message)


class RadixMachine(RuleBasedStateMachine):
    """Random interleavings of every call against the KV-content model and the accounting.

    Rules: Slot states; Acquire; Edge splits; Pinning; Commit; Release and abort
    Rules: Eviction; Failure is atomic; Bad input
    """

    ITEM = ""

    def __init__(self) -> None:
        super().__init__()
        self.check = Checks(self.ITEM)
        self.kv = KV()
        self.leases: dict[int, LeaseModel] = {}
        self.known: dict[tuple[int, ...], int] = {}   # surely cached prefix -> its slot
        self.seen: list[list[int]] = []
        self.n = 0
        self.cache: object = None

    # -- model ---------------------------------------------------------------------
    def model_leased(self) -> int:
        return sum(len(lm.slots) - lm.cached for lm in self.leases.values())

    def model_pinned(self) -> int:
        return len({lm.slots[i] for lm in self.leases.values() for i in range(lm.cached)})

    def live_uncached(self) -> set[int]:
        return {lm.slots[i] for lm in self.leases.values() for i in range(lm.cached, len(lm.slots))}

    def live_cached(self) -> set[int]:
        return {lm.slots[i] for lm in self.leases.values() for i in range(lm.cached)}

    def forget_unpinned(self) -> None:
        pinned = {tuple(lm.tokens[: i + 1]) for lm in self.leases.values()
                  for i in range(lm.cached)}
        self.known = {p: s for p, s in self.known.items() if p in pinned}

    def longest_known(self, tokens: list[int], cap: int) -> int:
        best = 0
        for i in range(1, cap + 1):
            if tuple(tokens[:i]) in self.known:
                best = i
        return best

    def stats(self) -> dict[str, int]:
        s = self.cache.stats()  # type: ignore[attr-defined]
        c = self.check
        everything = {"slot_accounting", "pinning", "eviction", "atomic_failure", "dedup",
                      "prefix_match", "edge_split"}
        c(everything, set(s) == {"free", "cached", "pinned", "leased"}, f"stats keys: {s}")
        c(everything, s["free"] + s["cached"] + s["leased"] == self.n,
          f"free + cached + leased must be num_slots={self.n}: {s}")
        return dict(s)

    def check_fresh(self, slots: list[int], what: str) -> None:
        c = self.check
        taken = self.live_uncached() | self.live_cached() | set(self.known.values())
        c({"slot_accounting"}, len(set(slots)) == len(slots),
          f"{what}: the fresh slots {slots} repeat a slot")
        c({"slot_accounting"}, all(isinstance(x, int) and 0 <= x < self.n for x in slots),
          f"{what}: fresh slots {slots} outside 0..{self.n - 1}")
        clash = sorted(set(slots) & taken)
        c({"slot_accounting", "pinning"}, not clash,
          f"{what}: fresh slots {clash} are still held (by a live request or the cache)")

    # -- rules ---------------------------------------------------------------------
    @initialize(n=st.integers(3, 14))
    def start(self, n: int) -> None:
        self.n = n
        self.cache = rc.RadixCache(n)

    @rule(data=st.data())
    def acquire(self, data: st.DataObject) -> None:
        c = self.check
        if self.seen and data.draw(st.booleans(), label="reuse"):
            base = data.draw(st.sampled_from(self.seen), label="base")
            cut = data.draw(st.integers(0, len(base)), label="cut")
            tail = data.draw(st.lists(ALPHABET, min_size=0 if cut else 1, max_size=4),
                             label="tail")
            tokens = base[:cut] + tail
        else:
            tokens = data.draw(st.lists(ALPHABET, min_size=1, max_size=7), label="tokens")
        assume(tokens)
        before = self.stats()
        known_before = self.longest_known(tokens, len(tokens) - 1)
        try:
            lease, m, slots = self.cache.acquire(list(tokens))  # type: ignore[attr-defined]
        except rc.OutOfSlots:
            after = self.stats()
            c({"atomic_failure"}, after == before,
              f"acquire({tokens}) raised OutOfSlots but changed the stats: {before} -> {after}")
            spare = before["free"] + before["cached"] - before["pinned"] - (len(tokens) - 1)
            c({"eviction"}, len(tokens) - known_before > max(before["free"], spare),
              f"acquire({tokens}) raised OutOfSlots, yet it needs at most "
              f"{len(tokens) - known_before} fresh slots and the pool could supply them: {before}")
            return
        c({"prefix_match"}, isinstance(m, int) and 0 <= m <= len(tokens) - 1,
          f"acquire({tokens}): num_cached={m} must lie in 0..{len(tokens) - 1}")
        c({"prefix_match", "slot_accounting"}, len(slots) == len(tokens),
          f"acquire({tokens}) returned {len(slots)} slots")
        if self.ITEM in ("prefix_match", "edge_split"):
            self.kv.check_hit(slots, tokens, m, f"acquire({tokens})")
        c({"prefix_match"}, m >= known_before,
          f"acquire({tokens}): the first {known_before} tokens are cached (and pinned by a "
          f"live request), yet num_cached={m}")
        if before["free"] < len(tokens) - m:
            self.forget_unpinned()  # it evicted: unpinned prefixes may be gone
        self.check_fresh(slots[m:], f"acquire({tokens})")
        for i in range(m, len(tokens)):
            self.kv.write(slots[i], tokens[: i + 1])
        self.leases[lease] = LeaseModel(list(tokens), list(slots), len(tokens), m)
        for i in range(m):
            self.known[tuple(tokens[: i + 1])] = slots[i]
        self.seen.append(list(tokens))

    @precondition(lambda self: self.leases)
    @rule(data=st.data(), k=st.integers(0, 3))
    def extend(self, data: st.DataObject, k: int) -> None:
        c = self.check
        lease = data.draw(st.sampled_from(sorted(self.leases)), label="lease")
        lm = self.leases[lease]
        new_tokens = data.draw(st.lists(ALPHABET, min_size=k, max_size=k), label="generated")
        before = self.stats()
        evictable = before["cached"] - before["pinned"]
        try:
            fresh = self.cache.extend(lease, k)  # type: ignore[attr-defined]
        except rc.OutOfSlots:
            after = self.stats()
            c({"atomic_failure"}, after == before,
              f"extend({k}) raised OutOfSlots but changed the stats: {before} -> {after}")
            c({"eviction"}, k > before["free"] + evictable,
              f"extend({k}) raised OutOfSlots although {before['free']} slots are free and "
              f"{evictable} cached slots are unpinned: {before}")
            return
        c({"pinning", "slot_accounting"}, k <= before["free"] + evictable,
          f"extend({k}) succeeded with only {before['free']} free and {evictable} evictable "
          f"slots: it must have taken a pinned or leased slot ({before})")
        c({"slot_accounting"}, len(fresh) == k, f"extend({k}) returned {fresh}")
        if before["free"] < k:
            self.forget_unpinned()
        self.check_fresh(list(fresh), f"extend({k})")
        for tok, slot in zip(new_tokens, fresh):
            lm.tokens.append(tok)
            lm.slots.append(slot)
            self.kv.write(slot, lm.tokens)

    def _cache_tokens(self, lease: int, upto: int, release: bool) -> None:
        c = self.check
        lm = self.leases[lease]
        tokens = lm.tokens[:upto]
        what = f"{'release' if release else 'commit'}(lease, {tokens})"
        expected_tree = {i: self.known[tuple(tokens[: i + 1])] for i in range(upto)
                         if tuple(tokens[: i + 1]) in self.known}
        if release:
            self.cache.release(lease, list(tokens))  # type: ignore[attr-defined]
            ret = None
        else:
            ret = self.cache.commit(lease, list(tokens))  # type: ignore[attr-defined]
            c({"dedup", "slot_accounting"}, len(ret) == upto, f"{what} returned {ret}")
            if self.ITEM == "dedup":
                self.kv.check_hit(ret, tokens, upto, what)
            for i, slot in expected_tree.items():
                c({"dedup"}, ret[i] == slot,
                  f"{what}: the cache already holds {tokens[: i + 1]} in slot {slot}; the "
                  f"lease must adopt it, but commit returned slot {ret[i]}")
            for i in range(min(lm.cached, upto)):
                c({"dedup"}, ret[i] == lm.slots[i],
                  f"{what}: position {i} was already a cached slot {lm.slots[i]}, "
                  f"but commit returned {ret[i]}")
        if release:
            # The lease's slots are gone (cached or freed); which of its positions the
            # cache kept from the tree is not observable here, so record nothing new.
            del self.leases[lease]
        elif upto > lm.cached:
            assert ret is not None
            lm.slots[:upto] = list(ret)
            lm.cached = upto
            for i in range(upto):
                self.known.setdefault(tuple(tokens[: i + 1]), lm.slots[i])
        self.seen.append(list(tokens))

    @precondition(lambda self: self.leases)
    @rule(data=st.data())
    def commit(self, data: st.DataObject) -> None:
        lease = data.draw(st.sampled_from(sorted(self.leases)), label="lease")
        lm = self.leases[lease]
        upto = data.draw(st.integers(lm.cached, len(lm.slots)), label="upto")
        self._cache_tokens(lease, upto, release=False)

    @precondition(lambda self: self.leases)
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        lease = data.draw(st.sampled_from(sorted(self.leases)), label="lease")
        lm = self.leases[lease]
        upto = data.draw(st.integers(lm.cached, len(lm.slots)), label="upto")
        self._cache_tokens(lease, upto, release=True)

    @precondition(lambda self: self.leases)
    @rule(data=st.data())
    def abort(self, data: st.DataObject) -> None:
        lease = data.draw(st.sampled_from(sorted(self.leases)), label="lease")
        self.cache.abort(lease)  # type: ignore[attr-defined]
        del self.leases[lease]

    @precondition(lambda self: self.leases)
    @rule(data=st.data())
    def bad_commit(self, data: st.DataObject) -> None:
        """A commit that disagrees with the prompt, or is too long, changes nothing."""
        c = self.check
        lease = data.draw(st.sampled_from(sorted(self.leases)), label="lease")
        lm = self.leases[lease]
        if data.draw(st.booleans(), label="too_long"):
            tokens = lm.tokens + [0]
        else:
            i = data.draw(st.integers(0, lm.prompt_len - 1), label="pos")
            tokens = list(lm.tokens)
            tokens[i] = 3  # never in the alphabet: disagrees with the prompt
        before = self.stats()
        try:
            self.cache.commit(lease, tokens)  # type: ignore[attr-defined]
        except ValueError:
            pass
        else:
            c({"atomic_failure"}, False, f"commit({tokens}) of a lease whose sequence is "
              f"{lm.tokens} must raise ValueError")
        c({"atomic_failure"}, self.stats() == before, f"a rejected commit changed the stats")

    @rule(k=st.integers(0, 16))
    def evict(self, k: int) -> None:
        c = self.check
        before = self.stats()
        evictable = before["cached"] - before["pinned"]
        freed = self.cache.evict(k)  # type: ignore[attr-defined]
        after = self.stats()
        c({"eviction"}, isinstance(freed, int) and freed >= min(k, evictable),
          f"evict({k}) freed {freed}, but {evictable} cached slots were unpinned: it must "
          f"free at least {min(k, evictable)} (parents that become leaves go too) {before}")
        c({"pinning", "eviction"}, freed <= evictable,
          f"evict({k}) freed {freed} slots with only {evictable} unpinned: {before}")
        c({"eviction", "slot_accounting"},
          after["cached"] == before["cached"] - freed and after["free"] == before["free"] + freed,
          f"evict({k}) returned {freed} but the stats went {before} -> {after}")
        if freed:
            self.forget_unpinned()

    # -- invariants ----------------------------------------------------------------
    @invariant()
    def accounting(self) -> None:
        if self.cache is None:
            return
        c = self.check
        s = self.stats()
        c({"slot_accounting", "dedup"}, s["leased"] == self.model_leased(),
          f"stats()['leased']={s['leased']}, but the live requests hold "
          f"{self.model_leased()} uncached slots: {s}")
        c({"pinning", "edge_split"}, s["pinned"] == self.model_pinned(),
          f"stats()['pinned']={s['pinned']}, but the live requests hold "
          f"{self.model_pinned()} distinct cached slots: {s}")
        c({"slot_accounting"}, s["cached"] >= len(set(self.known.values())),
          f"stats()['cached']={s['cached']} is below the {len(set(self.known.values()))} "
          "slots known to be cached")

    @invariant()
    def live_kv_intact(self) -> None:
        """No slot a live request holds was handed to anyone else (its KV is intact)."""
        if self.ITEM not in ("slot_accounting", "pinning", "edge_split", "dedup"):
            return
        for lm in self.leases.values():
            self.kv.check_hit(lm.slots, lm.tokens, len(lm.tokens),
                              "a live request's KV was overwritten")


def _machine(item: str) -> type:
    cls = type(f"Radix_{item}", (RadixMachine,), {"ITEM": item})
    case = cls.TestCase
    case.settings = settings(stateful_step_count=30)
    return pytest.mark.rubric(item)(case)


TestMachinePrefixMatch = _machine("prefix_match")
TestMachineEdgeSplit = _machine("edge_split")
TestMachinePinning = _machine("pinning")
TestMachineEviction = _machine("eviction")
TestMachineSlotAccounting = _machine("slot_accounting")
TestMachineAtomicFailure = _machine("atomic_failure")
TestMachineDedup = _machine("dedup")
