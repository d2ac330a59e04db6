"""collectives: all-reduce algorithms, tensor-parallel cost, and the slow link.

Fill in every function and the class. The prompt is katas/collectives/README.md; run the
public tests with ``nox -s kata -- collectives``.

Units: bytes, nanoseconds and GB/s (10^9 bytes per second, which is exactly one byte per
ns, so ``nbytes / link_gb_s`` is a time in ns). ``cfg`` is a model's Hugging Face
``config.json`` as a dict (``data/models/*.json`` hold real ones under ``"config"``).
Algorithm names are ``"one_shot"``, ``"two_shot"`` and ``"ring"``. Bad input raises
ValueError (a bool is neither an int nor a number; NaN and infinities are not numbers);
calling the search out of order raises RuntimeError.
"""

from __future__ import annotations

from typing import Any

_PROMPT = "see katas/collectives/README.md"


def allreduce_time_ns(algo: str, n: int, nbytes: int, alpha_ns: float,
                      link_gb_s: float) -> float:
    """Time of one all-reduce of ``nbytes`` bytes on ``n`` >= 2 GPUs with ``algo``.

    The latency-bandwidth model of the prompt: steps x alpha_ns plus the bytes one GPU's
    link carries in one direction / link_gb_s.
    """
    raise NotImplementedError(f"allreduce_time_ns ({_PROMPT})")


def bus_bandwidth_gb_s(n: int, nbytes: int, time_ns: float) -> float:
    """nccl-tests' bus bandwidth of an all-reduce of ``nbytes`` on ``n`` GPUs in ``time_ns``."""
    raise NotImplementedError(f"bus_bandwidth_gb_s ({_PROMPT})")


def crossover_bytes(small_algo: str, large_algo: str, n: int, alpha_ns: int,
                    link_gb_s: int) -> int | None:
    """The smallest message size from which ``large_algo`` is strictly faster, for good.

    The smallest int S >= 1 such that ``large_algo`` is strictly faster than ``small_algo``
    at every size >= S; None when there is no such S. Computed exactly: ``alpha_ns`` and
    ``link_gb_s`` are ints.
    """
    raise NotImplementedError(f"crossover_bytes ({_PROMPT})")


def best_allreduce(n: int, nbytes: int, alpha_ns: int, link_gb_s: int) -> str:
    """The fastest algorithm for this message, compared exactly; ties go to the fewer steps
    (one_shot, then two_shot, then ring)."""
    raise NotImplementedError(f"best_allreduce ({_PROMPT})")


def allreduces_per_token(cfg: dict[str, Any], tp: int) -> int:
    """All-reduces one forward pass makes under Megatron tensor parallelism of degree ``tp``."""
    raise NotImplementedError(f"allreduces_per_token ({_PROMPT})")


def allreduce_bytes(cfg: dict[str, Any], batch: int, act_bytes: int = 2) -> int:
    """The message size of each of those all-reduces for a decode step of ``batch`` sequences."""
    raise NotImplementedError(f"allreduce_bytes ({_PROMPT})")


def step_time_ns(cfg: dict[str, Any], batch: int, tp: int, pp: int, step_bytes: float,
                 hbm_gb_s: float, alpha_ns: float, link_gb_s: float,
                 act_bytes: int = 2) -> float:
    """One decode step of ``batch`` sequences on ``tp`` x ``pp`` GPUs (the prompt's step model).

    ``step_bytes`` is what the whole model's step reads from HBM (weights and KV).
    """
    raise NotImplementedError(f"step_time_ns ({_PROMPT})")


def best_layout(cfg: dict[str, Any], batch: int, layouts: list[tuple[int, int]],
                step_bytes: float, hbm_gb_s: float, alpha_ns: float, link_gb_s: float,
                act_bytes: int = 2) -> tuple[int, int]:
    """The (tp, pp) of ``layouts`` with the shortest step; a tie goes to the earliest listed."""
    raise NotImplementedError(f"best_layout ({_PROMPT})")


def step_slowdown(comm_share: float, link_slowdown: float) -> float:
    """How many times longer a step gets when the part of it that moves bytes over the
    links (``comm_share`` of the step, in [0, 1]) runs ``link_slowdown`` (>= 1) times slower."""
    raise NotImplementedError(f"step_slowdown ({_PROMPT})")


class SlowLinkSearch:
    """Finds the one slow link of an ``n_gpus``-GPU cluster by timing ring all-reduces on
    subsets of the GPUs, in at most ceil(log2(n_gpus)) probes.

    The test drives it: ``next_probe()`` says what to measure, the test runs that ring
    all-reduce on its simulated cluster and passes the time to ``record()``, until
    ``next_probe()`` returns None; then ``culprit()`` names the GPU whose link is slow.
    ``n_gpus`` >= 3, ``alpha_ns`` >= 0 and ``link_gb_s`` > 0 describe the cluster's
    healthy links (the prompt's model).
    """

    def __init__(self, n_gpus: int, alpha_ns: float, link_gb_s: float) -> None:
        raise NotImplementedError(f"SlowLinkSearch ({_PROMPT})")

    def next_probe(self) -> tuple[list[int], int] | None:
        """The next probe, ``(gpus, nbytes)``: at least two distinct GPU ids in increasing
        order, and a message of 1 .. 2**53 bytes; or None once the culprit is known.

        Called again before ``record()``, it returns the same probe.
        """
        raise NotImplementedError(f"SlowLinkSearch.next_probe ({_PROMPT})")

    def record(self, measured_ns: float) -> None:
        """The measured time of the pending probe (a positive finite number).

        RuntimeError when no probe is pending; ValueError for a bad time (the probe stays
        pending).
        """
        raise NotImplementedError(f"SlowLinkSearch.record ({_PROMPT})")

    def culprit(self) -> int:
        """The GPU whose link is slow; RuntimeError while ``next_probe()`` would not return None."""
        raise NotImplementedError(f"SlowLinkSearch.culprit ({_PROMPT})")
