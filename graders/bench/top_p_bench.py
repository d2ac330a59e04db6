"""Benchmark (not a test): the top_p reference against a plain sort + cumsum numpy baseline.

    python -m graders.bench.top_p_bench [--batch 64] [--vocab 131072] [--repeats 7] [--bf16]
                                        [--impl solutions|PATH]

Both compute the (B, V) kept mask for top_p = 0.9 at T = 1 on the same random logits. The
baseline is the usual engine recipe: float32 softmax, argsort descending, cumsum, keep the
positions whose preceding mass is below p, scatter back. It splits ties by sort order and
handles neither p = 1 nor T = 0; it is here as the speed yardstick a vectorised answer is
measured against. Prints the median wall and CPU time of each over --repeats runs
(after one warm-up) and their ratios. Numbers depend on the machine and its load: quote them with the
command and the machine.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from typing import Any, Callable

import numpy as np

from graders import impl


def baseline_mask(logits: np.ndarray, temperature: np.ndarray, top_p: np.ndarray) -> np.ndarray:
    """Sort + cumsum top-p in float32 (no tie handling, no special cases)."""
    z = logits / temperature[:, None].astype(np.float32)
    z = z - z.max(axis=1, keepdims=True)
    probs = np.exp(z)
    probs /= probs.sum(axis=1, keepdims=True)
    order = np.argsort(-probs, axis=1)
    sorted_probs = np.take_along_axis(probs, order, axis=1)
    mass = np.cumsum(sorted_probs, axis=1)
    keep_sorted = (mass - sorted_probs) < top_p[:, None].astype(np.float32)
    keep = np.empty_like(keep_sorted)
    np.put_along_axis(keep, order, keep_sorted, axis=1)
    out: np.ndarray = keep
    return out


def bf16_round(x: np.ndarray) -> np.ndarray:
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out: np.ndarray = rounded.view(np.float32)
    return out


def median_time(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """Median wall time and median CPU time of this process (less sensitive to other load
    on a shared machine, for single-threaded numpy)."""
    fn()                                        # warm-up
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=131072)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--bf16", action="store_true", help="round the logits to bf16 (many ties)")
    ap.add_argument("--impl", default="solutions", help="solutions (default), katas or a path")
    args = ap.parse_args(argv)

    impl.configure(args.impl)
    tp = impl.load("top_p")
    rng = np.random.default_rng(0)
    logits = (rng.standard_normal((args.batch, args.vocab)) * 3).astype(np.float32)
    if args.bf16:
        logits = bf16_round(logits)
    t = np.ones(args.batch)
    p = np.full(args.batch, 0.9)

    ref = median_time(lambda: tp.kept_mask(logits, t, p), args.repeats)
    base = median_time(lambda: baseline_mask(logits, t, p), args.repeats)
    kept = np.asarray(tp.kept_mask(logits, t, p)).sum(axis=1)
    print(f"machine: {platform.processor() or platform.machine()}, numpy {np.__version__}")
    print(f"logits: {args.batch} x {args.vocab} {'bf16-rounded' if args.bf16 else 'float32'}, "
          f"T=1, top_p=0.9; kept per row: median {int(np.median(kept))}")
    print(f"kept_mask ({args.impl}): median wall {ref[0] * 1e3:8.1f} ms, "
          f"cpu {ref[1] * 1e3:8.1f} ms over {args.repeats} runs")
    print(f"sort+cumsum baseline:    median wall {base[0] * 1e3:8.1f} ms, "
          f"cpu {base[1] * 1e3:8.1f} ms over {args.repeats} runs")
    print(f"ratio implementation / baseline: wall {ref[0] / base[0]:.2f}, "
          f"cpu {ref[1] / base[1]:.2f}")


if __name__ == "__main__":
    main()
