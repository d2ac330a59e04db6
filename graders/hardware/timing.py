"""The measurement protocol, independent of the device.

One measurement of a workload ``fn``:
1. ``warmup`` untimed calls (compilation, autotuning, clocks ramping up);
2. ``repetitions`` timed calls, each preceded by an L2 flush (writing a buffer twice the
   size of the L2 cache) and timed with device events around ``fn`` alone, so that neither
   the flush nor the host's launch latency of the previous call is counted;
3. the median of the repetitions is the figure; min, max and every sample are kept.

The backend supplies the device: ``flush()``, ``timed(fn) -> microseconds`` and
``synchronize()``. ``CudaBackend`` uses CUDA events; the CPU suite uses a fake backend.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Callable, Protocol

MIN_REPETITIONS = 3


class Backend(Protocol):
    def flush(self) -> None: ...
    def timed(self, fn: Callable[[], object]) -> float: ...
    def synchronize(self) -> None: ...


@dataclass(frozen=True)
class Measurement:
    median_us: float
    min_us: float
    max_us: float
    repetitions: int
    warmup: int
    samples_us: tuple[float, ...]

    def as_row(self) -> dict[str, object]:
        return {"median_us": self.median_us, "min_us": self.min_us, "max_us": self.max_us,
                "repetitions": self.repetitions, "warmup": self.warmup,
                "samples_us": list(self.samples_us)}


def measure(fn: Callable[[], object], backend: Backend, *, warmup: int = 5,
            repetitions: int = 20) -> Measurement:
    """Time ``fn`` on ``backend`` with the protocol above."""
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be an int >= 0, got {warmup!r}")
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) \
            or repetitions < MIN_REPETITIONS:
        raise ValueError(f"repetitions must be an int >= {MIN_REPETITIONS}, got {repetitions!r}")
    for _ in range(warmup):
        fn()
    backend.synchronize()
    samples = []
    for _ in range(repetitions):
        backend.flush()
        t = backend.timed(fn)
        if not t > 0.0:
            raise RuntimeError(f"the backend returned a non-positive time: {t!r}")
        samples.append(float(t))
    return Measurement(median_us=statistics.median(samples), min_us=min(samples),
                       max_us=max(samples), repetitions=repetitions, warmup=warmup,
                       samples_us=tuple(samples))


def flush_bytes(l2_bytes: int) -> int:
    """Size of the buffer written between runs: twice the L2, at least 1 MiB."""
    if l2_bytes < 0:
        raise ValueError("l2_bytes must be >= 0")
    return max(2 * l2_bytes, 1 << 20)


class CudaBackend:
    """CUDA events around the call; an int8 buffer twice the L2 zeroed before each run."""

    def __init__(self, torch: Any, device: int = 0) -> None:
        self.torch = torch
        props = torch.cuda.get_device_properties(device)
        l2 = int(getattr(props, "L2_cache_size", 0) or 0)
        self.buffer = torch.empty(flush_bytes(l2), dtype=torch.int8, device=f"cuda:{device}")

    def flush(self) -> None:
        self.buffer.zero_()

    def timed(self, fn: Callable[[], object]) -> float:
        cuda = self.torch.cuda
        start, stop = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        return float(start.elapsed_time(stop)) * 1000.0  # ms -> us

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()
