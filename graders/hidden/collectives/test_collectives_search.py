"""Hidden tests for SlowLinkSearch.

The cluster lives here, on the trusted side. Two kinds:
- an honest cluster with one fixed slow GPU (every GPU, several sizes, noise patterns);
- an adversary that decides which GPU is slow as late as it can: each probe is answered so
  that as many GPUs as possible stay consistent with every time reported so far, with the
  worst noise the rules allow, and a probe whose slow and healthy times could overlap
  (the message too small for the bandwidth term to show) is answered with a time both
  could have produced. At the end the search's answer must be the only GPU left.
The probe count and every probe's validity are counted here, never taken from the search.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graders.impl import kata_impl
from tests.collectives.helpers import NOISE, HonestCluster, check_probe, probe_bound, ring_ns

m = kata_impl("collectives")

LO, HI = 1 - NOISE, 1 + NOISE


class Adversary:
    """A cluster whose slow GPU is any one still consistent with what it reported."""

    def __init__(self, n, alpha, link, slowdowns, noise, prefer_slow):
        self.n, self.alpha, self.link = n, alpha, link
        self.slowdowns, self.noise, self.prefer_slow = slowdowns, noise, prefer_slow
        self.consistent = set(range(n))
        self.calls = 0

    def measure(self, gpus, nbytes):
        i, self.calls = self.calls, self.calls + 1
        k = len(gpus)
        healthy = ring_ns(k, nbytes, self.alpha, self.link)
        halved = ring_ns(k, nbytes, self.alpha, self.link / 2)
        if halved * LO <= healthy * HI:
            return healthy * HI                       # both worlds could have produced it
        inside = self.consistent & set(gpus)
        outside = self.consistent - inside
        slow = len(inside) > len(outside) or (len(inside) == len(outside) and self.prefer_slow)
        if not inside:
            slow = False
        if not outside:
            slow = True
        self.consistent = inside if slow else outside
        factor = self.noise[i % len(self.noise)]
        if slow:
            f = self.slowdowns[i % len(self.slowdowns)]
            return ring_ns(k, nbytes, self.alpha, self.link / f) * factor
        return healthy * factor


def drive(cluster):
    """Run a search on ``cluster`` to its end: (answer, probes), with every check on the way."""
    search = m.SlowLinkSearch(cluster.n, cluster.alpha, cluster.link)
    bound = probe_bound(cluster.n)
    probes = []
    while True:
        probe = search.next_probe()
        if probe is None:
            break
        gpus, nbytes = check_probe(probe, cluster.n)
        again = search.next_probe()
        assert again is not None and check_probe(again, cluster.n) == (gpus, nbytes), \
            "next_probe() called twice before record() must return the same probe"
        probes.append((gpus, nbytes))
        assert len(probes) <= bound, (
            f"n_gpus={cluster.n}: more than ceil(log2 n) = {bound} probes: "
            f"{[(g if len(g) < 12 else f'{len(g)} GPUs', b) for g, b in probes]}")
        search.record(cluster.measure(gpus, nbytes))
    assert search.next_probe() is None, "next_probe() keeps returning None once done"
    return search.culprit(), probes


def describe(probes):
    return [(g if len(g) < 12 else f"{len(g)} GPUs", b) for g, b in probes]


noise_patterns = st.lists(st.sampled_from([LO, HI, 1.0, 0.99, 1.01]), min_size=1, max_size=4)
slowdown_patterns = st.lists(st.one_of(st.just(2.0), st.floats(2, 16)), min_size=1, max_size=3)
sizes = st.one_of(st.sampled_from([3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 72, 100]),
                  st.integers(3, 600))
alphas = st.one_of(st.sampled_from([0, 1, 3000, 10**6]), st.floats(0, 1e6))
links = st.one_of(st.sampled_from([1, 25, 450, 10**4]), st.floats(1, 1e4))


@pytest.mark.rubric("slow_link")
@given(n=sizes, alpha=alphas, link=links, slowdowns=slowdown_patterns, noise=noise_patterns,
       prefer_slow=st.booleans())
@settings(max_examples=min(60, settings.default.max_examples))
def test_against_the_adversary(n, alpha, link, slowdowns, noise, prefer_slow):
    """Rules: Logarithmic probes; Noise; A probe; The cluster"""
    adv = Adversary(n, alpha, link, slowdowns, noise, prefer_slow)
    answer, probes = drive(adv)
    assert isinstance(answer, int) and not isinstance(answer, bool), f"culprit() gave {answer!r}"
    assert answer in adv.consistent and len(adv.consistent) == 1, (
        f"n_gpus={n}, alpha={alpha}, link={link}: after {describe(probes)} the GPUs still "
        f"consistent with every reported time are {sorted(adv.consistent)[:10]}"
        f"{' ...' if len(adv.consistent) > 10 else ''}; culprit() said {answer}")


@pytest.mark.rubric("slow_link")
@pytest.mark.parametrize("n", [3, 4, 5, 7, 8, 9, 16, 17])
def test_every_gpu_of_small_clusters(n):
    """Rules: The cluster; Logarithmic probes"""
    patterns = (((HI, LO), 2.0), ((LO,), 2.0), ((HI,), 2.0), ((1.0,), 4.0))
    for slow in range(n):
        for noise, f in patterns if n < 9 else patterns[:2]:
            answer, probes = drive(HonestCluster(n, 3000, 450, slow, f, noise))
            assert answer == slow, (
                f"n_gpus={n}: GPU {slow}'s link is {f}x slow (noise {noise}); culprit() said "
                f"{answer} after probes {probes}")


@pytest.mark.rubric("slow_link")
@pytest.mark.parametrize("alpha,link", [(10**6, 1), (10**6, 10**4), (0, 1), (0, 10**4), (0.5, 3.7)])
def test_extreme_clusters(alpha, link):
    """Rules: A probe; Noise"""
    for n in (3, 4096):
        for slow in (0, n // 2, n - 1):
            answer, probes = drive(HonestCluster(n, alpha, link, slow, 2.0, (HI, LO)))
            assert answer == slow, \
                f"n={n}, alpha={alpha}, link={link}: slow GPU {slow}, got {answer}"


@pytest.mark.rubric("slow_link")
def test_small_messages_hide_the_link():
    """Rule: A probe

    With 3 us of latency per step a 2x slow link adds under 1% to a 1 KB ring: the
    adversary answers such a probe with a time that fits both, so it teaches nothing.
    """
    adv = Adversary(64, 3000, 450, [2.0], [LO, HI], True)
    answer, probes = drive(adv)
    assert len(adv.consistent) == 1 and answer in adv.consistent, (
        f"probes {describe(probes)} left {len(adv.consistent)} GPUs possible")


@pytest.mark.rubric("slow_link")
def test_protocol_errors_change_nothing():
    """Rules: Out of order; The protocol; Bad input"""
    for args in [(2, 3000, 450), (0, 3000, 450), (True, 3000, 450), (8.0, 3000, 450),
                 (8, -1, 450), (8, 3000, 0), (8, float("nan"), 450), (8, 3000, float("inf"))]:
        with pytest.raises(ValueError):
            m.SlowLinkSearch(*args)
    s = m.SlowLinkSearch(5, 3000, 450)
    with pytest.raises(RuntimeError):
        s.record(1.0)
    with pytest.raises(RuntimeError):
        s.culprit()
    first = check_probe(s.next_probe(), 5)
    for bad in (0, -5.0, float("nan"), float("inf"), True, None, "1e6"):
        with pytest.raises(ValueError):
            s.record(bad)
        assert check_probe(s.next_probe(), 5) == first, "a refused time leaves the probe pending"
    cluster = HonestCluster(5, 3000, 450, 4, 3.0)
    s.record(cluster.measure(*first))
    with pytest.raises(RuntimeError):
        s.record(cluster.measure(*first))            # the probe was already answered
    while (p := s.next_probe()) is not None:
        gpus, nbytes = check_probe(p, 5)
        s.record(cluster.measure(gpus, nbytes))
    assert s.culprit() == 4
    assert s.culprit() == 4, "culprit() may be asked twice"
    with pytest.raises(RuntimeError):
        s.record(1000.0)                              # done: nothing pending
    assert s.next_probe() is None and s.culprit() == 4


@pytest.mark.rubric("slow_link")
def test_two_searches_are_independent():
    """Rule: The protocol"""
    a, b = m.SlowLinkSearch(8, 3000, 450), m.SlowLinkSearch(8, 3000, 450)
    ca, cb = HonestCluster(8, 3000, 450, 1), HonestCluster(8, 3000, 450, 6)
    while True:
        pa, pb = a.next_probe(), b.next_probe()
        if pa is None and pb is None:
            break
        if pa is not None:
            a.record(ca.measure(*check_probe(pa, 8)))
        if pb is not None:
            b.record(cb.measure(*check_probe(pb, 8)))
    assert (a.culprit(), b.culprit()) == (1, 6)
