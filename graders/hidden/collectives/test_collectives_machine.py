"""A state machine over SlowLinkSearch's protocol: any interleaving of next_probe(),
record() with good and bad times, and culprit(), checked after every call against a model
of what the prompt allows (a pending probe repeats, a refused call changes nothing, the
count stays within ceil(log2 n), the answer is the slow GPU)."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from graders.impl import kata_impl
from tests.collectives.helpers import NOISE, HonestCluster, check_probe, probe_bound

m = kata_impl("collectives")


class SearchProtocol(RuleBasedStateMachine):
    """Rules: The protocol; Out of order; Logarithmic probes"""

    @initialize(n=st.sampled_from([3, 4, 5, 8, 13, 64]), data=st.data())
    def start(self, n, data):
        slow = data.draw(st.integers(0, n - 1), label="slow GPU")
        noise = tuple(data.draw(st.lists(st.sampled_from([1 - NOISE, 1.0, 1 + NOISE]),
                                         min_size=1, max_size=3), label="noise"))
        self.cluster = HonestCluster(n, 3000, 450, slow, data.draw(st.sampled_from([2.0, 4.0])),
                                     noise)
        self.search = m.SlowLinkSearch(n, 3000, 450)
        self.pending = None          # the probe handed out and not yet answered
        self.done = False
        self.probes = 0

    @rule()
    def ask(self):
        probe = self.search.next_probe()
        if self.done:
            assert probe is None, "next_probe() keeps returning None once done"
            return
        if probe is None:
            assert self.pending is None, "next_probe() returned None with a probe pending"
            self.done = True
            return
        probe = check_probe(probe, self.cluster.n)
        if self.pending is not None:
            assert probe == self.pending, "asked again before record(): the same probe"
        self.pending = probe

    @rule()
    def answer(self):
        if self.pending is None:
            with pytest.raises(RuntimeError):
                self.search.record(1000.0)
            return
        self.search.record(self.cluster.measure(*self.pending))
        self.pending = None
        self.probes += 1

    @rule(bad=st.sampled_from([0, -1.0, float("nan"), float("inf"), True, None]))
    def answer_badly(self, bad):
        with pytest.raises((ValueError, RuntimeError) if self.pending is None else ValueError):
            self.search.record(bad)

    @rule()
    def ask_culprit(self):
        if self.done:
            assert self.search.culprit() == self.cluster.slow_gpu, \
                f"GPU {self.cluster.slow_gpu} is slow"
        else:
            try:
                answer = self.search.culprit()
            except RuntimeError:
                return
            # an answer is allowed only once the search is done: next_probe() must say so
            assert self.pending is None and self.search.next_probe() is None, (
                f"culprit() answered {answer!r} while the search still has probes to make")
            self.done = True
            assert answer == self.cluster.slow_gpu, f"GPU {self.cluster.slow_gpu} is slow"

    @precondition(lambda self: self.pending is not None)
    @rule()
    def ask_twice(self):
        assert check_probe(self.search.next_probe(), self.cluster.n) == self.pending

    @invariant()
    def within_the_bound(self):
        if hasattr(self, "probes"):
            assert self.probes <= probe_bound(self.cluster.n), \
                f"more than ceil(log2 {self.cluster.n}) probes"


SearchProtocol.TestCase.settings = settings(
    max_examples=max(10, settings.default.max_examples // 3), stateful_step_count=30,
    deadline=None)
TestSearchProtocol = pytest.mark.rubric("slow_link")(SearchProtocol.TestCase)
