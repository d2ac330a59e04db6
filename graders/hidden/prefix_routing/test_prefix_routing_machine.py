"""Stateful tests of Router: random sequences of route / on_eviction / on_report calls made
directly (not through the replica simulator, so notices and reports can be as late, stale,
repeated or out of order as the prompt allows), checked after every step against the
log-based model in graders/hidden/prefix_routing/model.py.

Prompts come from a few shared prefixes over a 2-token alphabet with block sizes 1-3, so
chains share blocks, differ in early blocks, and end exactly on block boundaries.
"""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from graders.hidden.prefix_routing.model import ModelRouter
from graders.impl import kata_impl
from graders.support.prefix_routing import block_hashes

m = kata_impl("prefix_routing")

PREFIXES = [[0, 0, 0, 0, 0, 0], [0, 0, 1, 1, 0, 1], [1, 0, 1, 0], [0, 0, 0, 1]]


@st.composite
def prompts(draw: st.DrawFn) -> list[int]:
    base = draw(st.sampled_from(PREFIXES))
    cut = draw(st.integers(0, len(base)))
    tail = draw(st.lists(st.integers(0, 2), max_size=4))
    toks = base[:cut] + tail
    return toks or [2]


class RouterMachine(RuleBasedStateMachine):
    """Rules: Blocks; The view; Matched blocks; Eviction notices; Reservations; Load reports
    Rules: Affinity; Predicted finish"""

    ITEM = "view"
    POLICY = "round_robin"
    NOTICES = False
    REPORTS = False

    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []
        self.now = 0
        self.count = 0
        self.routed: dict[int, list[str]] = {}
        self.seen: list[list[int]] = []

    @initialize(n=st.integers(1, 3), bs=st.integers(1, 3), cap=st.integers(0, 12))
    def setup(self, n: int, bs: int, cap: int) -> None:
        self.n, self.bs = n, bs
        self.router = m.Router(n, bs, self.POLICY, cap)
        self.model = ModelRouter(n, bs, self.POLICY, cap)
        self.routed = {r: [] for r in range(n)}
        self.log.append(f"Router({n}, {bs}, {self.POLICY!r}, load_cap={cap})")

    def ctx(self) -> str:
        return "after:\n  " + "\n  ".join(self.log[-25:])

    @rule(tokens=prompts(), gap=st.integers(1, 3))
    def route(self, tokens: list[int], gap: int) -> None:
        self.now += gap
        rid = f"q{self.count}"
        self.count += 1
        self.log.append(f"route({rid!r}, {tokens}, {self.now})")
        got = self.router.route(rid, tokens, self.now)
        want = self.model.route(rid, tokens, self.now)
        if self.ITEM in ("affinity", "predicted_finish"):
            assert got == want, f"route chose {got}, the prompt's rule chooses {want}; {self.ctx()}"
        else:
            assert type(got) is int and 0 <= got < self.n, f"route returned {got!r}"
            if got != want:   # follow the implementation so the view stays comparable
                self.model.log[-1].replica = got
                self.model.log[-1].reservation = (
                    len(tokens) - self.bs * self._matched_before(got, tokens))
        self.routed[got].append(rid)
        self.seen.append(tokens)

    def _matched_before(self, r: int, tokens: list[int]) -> int:
        last = self.model.log.pop()
        try:
            return self.model.matched(r, tokens)
        finally:
            self.model.log.append(last)

    @precondition(lambda self: self.NOTICES and self.seen)
    @rule(data=st.data())
    def evict(self, data: st.DataObject) -> None:
        r = data.draw(st.integers(0, self.n - 1))
        src = data.draw(st.sampled_from(self.seen))
        hs = block_hashes(src, self.bs)
        if not hs:
            return
        pick = data.draw(st.lists(st.sampled_from(hs), min_size=1, max_size=len(hs), unique=True))
        at = data.draw(st.integers(max(0, self.now - 6), self.now))
        self.log.append(f"on_eviction({r}, <blocks {[hs.index(h) for h in pick]} of {src}>, {at})")
        self.router.on_eviction(r, pick, at)
        self.model.on_eviction(r, pick, at)

    @precondition(lambda self: self.REPORTS)
    @rule(data=st.data())
    def report(self, data: st.DataObject) -> None:
        r = data.draw(st.integers(0, self.n - 1))
        ids = self.routed[r]
        last = data.draw(st.sampled_from([None] + ids[-4:]))
        tokens = data.draw(st.integers(0, 15))
        self.log.append(f"on_report({r}, {tokens}, {last!r})")
        self.router.on_report(r, tokens, last)
        self.model.on_report(r, tokens, last)

    @invariant()
    def view_matches_the_model(self) -> None:
        if not hasattr(self, "router") or self.ITEM not in ("view", "late_notices"):
            return
        for toks in self.seen[-2:] + [PREFIXES[1] + [2]]:
            for r in range(self.n):
                got = self.router.matched_blocks(r, toks)
                want = self.model.matched_blocks(r, toks)
                assert got == want, (
                    f"matched_blocks({r}, {toks}) = {got}, expected {want}; {self.ctx()}")

    @invariant()
    def load_matches_the_model(self) -> None:
        if not hasattr(self, "router") or self.ITEM != "load_estimate":
            return
        for r in range(self.n):
            got, want = self.router.estimated_load(r), self.model.estimated_load(r)
            assert got == want, f"estimated_load({r}) = {got}, expected {want}; {self.ctx()}"


def _machine(item: str, policy: str, notices: bool, reports: bool) -> type:
    cls = type(f"Router_{item}", (RouterMachine,),
               {"ITEM": item, "POLICY": policy, "NOTICES": notices, "REPORTS": reports})
    case = cls.TestCase
    case.settings = settings(max_examples=max(8, settings.default.max_examples // 4),
                             stateful_step_count=16, deadline=None)
    return pytest.mark.rubric(item)(case)


TestMachineView = _machine("view", "round_robin", False, False)
TestMachineNotices = _machine("late_notices", "affinity", True, False)
TestMachineLoad = _machine("load_estimate", "predicted_finish", True, True)
TestMachineAffinity = _machine("affinity", "affinity", True, True)
TestMachineFinish = _machine("predicted_finish", "predicted_finish", True, True)
