"""Timings on the GPU present, for tests that grade against the live device.

``gpu_reason()`` is None when torch with a usable CUDA device is importable, otherwise
the reason in words (tests skip with it). Nothing here imports torch until asked.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from typing import Any

from graders.hardware import kernels, timing

WARMUP = 5
REPETITIONS = 20


@functools.lru_cache(maxsize=1)
def gpu_reason() -> str | None:
    if sys.platform.startswith("linux") and not any(
            os.path.exists(p) for p in ("/dev/nvidiactl", "/proc/driver/nvidia", "/dev/dxg")):
        # no NVIDIA driver (nor WSL's GPU bridge): say so without importing torch (a second)
        return "no NVIDIA driver here (no /dev/nvidiactl, /proc/driver/nvidia or /dev/dxg)"
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed, so no GPU can be used"
    import torch

    if not torch.cuda.is_available():
        return f"torch {torch.__version__} sees no CUDA device"
    if importlib.util.find_spec("triton") is None:
        return "triton is not installed (the split-KV reference decode is a Triton kernel)"
    return None


def _torch() -> Any:
    reason = gpu_reason()
    if reason is not None:
        raise RuntimeError(f"no GPU: {reason}")
    import torch

    return torch


@functools.lru_cache(maxsize=1)
def backend() -> timing.CudaBackend:
    return timing.CudaBackend(_torch())


def device_sms() -> int:
    return int(_torch().cuda.get_device_properties(0).multi_processor_count)


def device_info() -> dict[str, Any]:
    """The GPU and software fields of a fixture, as the runtime reports them."""
    torch = _torch()
    props = torch.cuda.get_device_properties(0)
    import triton  # type: ignore[import-untyped, import-not-found, unused-ignore]

    gpu = {"name": props.name, "id": None, "sms": int(props.multi_processor_count),
           "memory_gb": round(props.total_memory / 1e9, 2),
           "l2_bytes": int(getattr(props, "L2_cache_size", 0) or 0) or None,
           "compute_capability": f"{props.major}.{props.minor}", "clocks": None}
    software = {"driver": None, "cuda": torch.version.cuda, "torch": torch.__version__,
                "triton": triton.__version__}
    smi = _nvidia_smi()
    if smi:
        gpu["clocks"] = {"sm_max_mhz": smi.get("clocks.max.sm"),
                         "memory_max_mhz": smi.get("clocks.max.memory"),
                         "sm_at_start_mhz": smi.get("clocks.sm")}
        gpu["power_limit_w"] = smi.get("power.limit")
        software["driver"] = smi.get("driver_version")
    gpu["unknown"] = [k for k, v in gpu.items() if v is None]
    software["unknown"] = [k for k, v in software.items() if v is None]
    return {"gpu": gpu, "software": software}


def _nvidia_smi() -> dict[str, str]:
    import shutil
    import subprocess

    fields = ["driver_version", "clocks.max.sm", "clocks.max.memory", "clocks.sm", "power.limit"]
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return {}
    try:
        out = subprocess.run([exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits",
                              "-i", "0"], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    values = [v.strip() for v in out.strip().split(",")]
    return dict(zip(fields, values)) if len(values) == len(fields) else {}


def measure_split_kv_decode(batch: int, q_heads: int, kv_heads: int, context: int,
                            head_dim: int, num_splits: int) -> timing.Measurement:
    q, k, v = kernels.make_decode_inputs(batch, q_heads, kv_heads, context, head_dim, "cuda")
    return timing.measure(lambda: kernels.split_kv_decode(q, k, v, num_splits), backend(),
                          warmup=WARMUP, repetitions=REPETITIONS)


def measure_gemm(m: int, n: int, k: int) -> timing.Measurement:
    torch = _torch()
    a, b = kernels.make_gemm_inputs(m, n, k, "cuda")
    return timing.measure(lambda: torch.matmul(a, b), backend(), warmup=WARMUP,
                          repetitions=REPETITIONS)


def time_split_kv_decode(batch: int, q_heads: int, kv_heads: int, context: int,
                         head_dim: int, num_splits: int) -> float:
    """Median microseconds of the reference split-KV decode at ``num_splits``."""
    return measure_split_kv_decode(batch, q_heads, kv_heads, context, head_dim,
                                   num_splits).median_us


def time_gemm(m: int, n: int, k: int) -> float:
    """Median microseconds of a bf16 ``[m, k] @ [k, n]`` (torch.matmul, cuBLAS)."""
    return measure_gemm(m, n, k).median_us
