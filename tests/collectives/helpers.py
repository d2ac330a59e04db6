"""Shared by the collectives tests: shipped configs, the exact model, and the simulated
cluster that drives ``SlowLinkSearch``.

Nothing here trusts the implementation: the cluster, the probe count and every check on a
probe live on the test's side; the search only ever sees the times it is given.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Protocol

from graders.support.shipped import ROOT, config, model_names

NOISE = 0.02                   # measured = model x a factor in [1 - NOISE, 1 + NOISE]
MAX_PROBE_BYTES = 2**53
ALGORITHMS = ("one_shot", "two_shot", "ring")

LLAMA_405B = "meta-llama--Meta-Llama-3.1-405B"
LLAMA_70B = "meta-llama--Meta-Llama-3.1-70B"


def coefficients(algo: str, n: int) -> tuple[int, Fraction]:
    """(steps, bytes per link per message byte) of the prompt's model."""
    return {"ring": (2 * (n - 1), Fraction(2 * (n - 1), n)),
            "one_shot": (1, Fraction(n - 1)),
            "two_shot": (2, Fraction(2 * (n - 1), n))}[algo]


def exact_time(algo: str, n: int, nbytes: int, alpha: Fraction | int | float,
               link: Fraction | int | float) -> Fraction:
    steps, per_byte = coefficients(algo, n)
    return steps * Fraction(alpha) + per_byte * nbytes / Fraction(link)


def ring_ns(k: int, nbytes: int, alpha: float, link: float) -> float:
    return float(exact_time("ring", k, nbytes, alpha, link))


def probe_bound(n: int) -> int:
    """ceil(log2(n)) for n >= 2."""
    return (n - 1).bit_length()


def check_probe(probe: Any, n: int) -> tuple[list[int], int]:
    """The probe as (gpus, nbytes) after checking it follows "The protocol"."""
    assert isinstance(probe, (list, tuple)) and len(probe) == 2, (
        f"next_probe() must return (gpus, nbytes) or None, got {probe!r}")
    gpus, nbytes = probe
    assert isinstance(gpus, (list, tuple)), f"probe gpus must be a list, got {gpus!r}"
    gpus = list(gpus)
    assert all(isinstance(g, int) and not isinstance(g, bool) for g in gpus), (
        f"probe gpus must be ints, got {gpus!r}")
    assert len(gpus) >= 2, \
        f"a probe needs at least two GPUs (a ring of one is no collective): {gpus!r}"
    assert gpus == sorted(set(gpus)), f"probe gpus must be distinct and increasing: {gpus!r}"
    assert 0 <= gpus[0] and gpus[-1] < n, f"probe gpus must be in 0..{n - 1}: {gpus!r}"
    assert isinstance(nbytes, int) and not isinstance(nbytes, bool) and \
        1 <= nbytes <= MAX_PROBE_BYTES, f"probe nbytes must be an int in 1..2**53, got {nbytes!r}"
    return gpus, nbytes


class Cluster(Protocol):
    n: int
    alpha: float
    link: float

    def measure(self, gpus: list[int], nbytes: int) -> float: ...


class HonestCluster:
    """One fixed slow GPU link at ``link / slowdown``; the noise factors cycle through
    ``noise`` (each in [0.98, 1.02])."""

    def __init__(self, n: int, alpha: float, link: float, slow_gpu: int, slowdown: float = 4.0,
                 noise: tuple[float, ...] = (1.0,)) -> None:
        assert slowdown >= 2 and all(1 - NOISE <= x <= 1 + NOISE for x in noise)
        self.n, self.alpha, self.link = n, alpha, link
        self.slow_gpu, self.slowdown, self.noise = slow_gpu, slowdown, noise
        self.calls = 0

    def measure(self, gpus: list[int], nbytes: int) -> float:
        rate = self.link / self.slowdown if self.slow_gpu in gpus else self.link
        factor = self.noise[self.calls % len(self.noise)]
        self.calls += 1
        return ring_ns(len(gpus), nbytes, self.alpha, rate) * factor


def run_search(m: Any, cluster: Cluster) -> tuple[int, list[tuple[list[int], int]]]:
    """Drive a search to its end on ``cluster``: (its culprit, the probes it made).

    Fails as soon as a probe breaks the protocol or the probe count passes ceil(log2 n).
    """
    search = m.SlowLinkSearch(cluster.n, cluster.alpha, cluster.link)
    bound = probe_bound(cluster.n)
    probes: list[tuple[list[int], int]] = []
    while True:
        probe = search.next_probe()
        if probe is None:
            break
        gpus, nbytes = check_probe(probe, cluster.n)
        probes.append((gpus, nbytes))
        assert len(probes) <= bound, (
            f"more than ceil(log2({cluster.n})) = {bound} probes: {probes}")
        search.record(cluster.measure(gpus, nbytes))
    assert search.next_probe() is None, "next_probe() must keep returning None once done"
    return search.culprit(), probes
