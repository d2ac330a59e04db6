"""load_shedding: queues under a spike.

Fill in every function and the class. The prompt is katas/load_shedding/README.md; run the
public tests with ``nox -s kata -- load_shedding``.

Plain data only. Times are seconds, rates are requests per second. Numbers are Python ints or
floats (a bool is not a number), finite; counts are ints. Bad input raises ValueError and a
failed call changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_PROMPT = "see katas/load_shedding/README.md"


def service_stats(prompt_lengths: Sequence[int], probabilities: Sequence[float], fixed_s: float,
                  per_token_s: float) -> tuple[float, float]:
    """(mean, squared coefficient of variation) of the service time
    ``fixed_s + per_token_s x length`` when the prompt length is ``prompt_lengths[i]`` with
    probability ``probabilities[i]`` (two non-empty lists or tuples of equal length;
    probabilities >= 0 whose sum is within 1e-9 of 1; every length an int >= 0)."""
    raise NotImplementedError(f"service_stats ({_PROMPT})")


def p99_latency_s(arrival_rate: float, mean_service_s: float, scv: float,
                  quantile: float = 0.99) -> float:
    """The prompt's latency quantile: ln(1 / (1 - quantile)) x (S + W), W the
    Pollaczek-Khinchine mean wait of an M/G/1 queue with service mean S and squared coefficient
    of variation ``scv``. ``math.inf`` when the utilisation rho = arrival_rate x
    mean_service_s is 1 or more (no test passes an exact product in [1 - 1e-6, 1))."""
    raise NotImplementedError(f"p99_latency_s ({_PROMPT})")


def utilisation_ceiling(mean_service_s: float, scv: float, target_s: float,
                        quantile: float = 0.99) -> float:
    """The largest utilisation rho in [0, 1) whose ``p99_latency_s`` stays within ``target_s``;
    0.0 when even an idle server misses the target."""
    raise NotImplementedError(f"utilisation_ceiling ({_PROMPT})")


def spike_fluid(service_rate: float, base_rate: float, spike_rate: float, spike_s: float,
                timeout_s: float) -> dict[str, float]:
    """The fluid model of a spike: keys ``backlog`` (requests queued when the spike ends),
    ``drain_s`` (seconds after the spike until the queue is empty) and ``dead_window_s``
    (seconds after the spike during which the server still starts requests whose clients
    waited longer than ``timeout_s``). ``base_rate`` must be below ``service_rate``;
    ``timeout_s`` must be > 0; ``spike_rate`` may be below ``base_rate`` and ``spike_s`` 0."""
    raise NotImplementedError(f"spike_fluid ({_PROMPT})")


class AdmissionController:
    """Admission by predicted finish for ``servers`` identical FIFO slots.

    The controller sees every request of the server, in arrival order, and knows each one's
    service time. It keeps its own model of the slots from the requests it admitted.
    """

    def __init__(self, servers: int) -> None:
        """``servers``: an int >= 1 (a bool is not an int)."""
        raise NotImplementedError(f"AdmissionController ({_PROMPT})")

    def offer(self, now: float, service_s: float, timeout_s: float) -> tuple[bool, int | None]:
        """A request arrives at ``now`` (never earlier than the ``now`` of the last offer that
        returned, admitted or rejected; a call that raised does not count), needs ``service_s``
        > 0 seconds of a slot, and its client gives up ``timeout_s`` > 0 seconds after ``now``.
        Returns ``(True, None)`` when admitted (it will finish in time), else
        ``(False, retry_after)``: the whole seconds to wait (an int >= 1, rounded up) before the
        same request would be admitted if nothing else arrived; ``None`` when it can never be
        (its service alone exceeds its timeout). A rejected request changes nothing but the
        clock."""
        raise NotImplementedError(f"AdmissionController.offer ({_PROMPT})")


def replay(arrivals: Sequence[Sequence[float]], servers: int, shed: bool,
           spike_end: float) -> dict[str, Any]:
    """Replay ``arrivals`` (a list or tuple, possibly empty, of ``(time, service_s, timeout_s)``
    lists or tuples, each valid as an offer's arguments whatever ``shed`` is, times
    non-decreasing; every argument is checked, even when ``arrivals`` is empty) through ``servers`` FIFO slots, admitting every request (``shed`` False) or
    deciding each by an ``AdmissionController`` (``shed`` True). ``spike_end`` is a time (>= 0).
    Returns the dict the prompt's "Replay" describes: ``accepted``, ``retry_after``,
    ``finish``, ``dead_work_s``, ``goodput``, ``recovery_s``."""
    raise NotImplementedError(f"replay ({_PROMPT})")
