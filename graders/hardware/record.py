"""``nox -s record -- NAME``: run a sweep on the CUDA GPU present and write the fixture.

NAME is ``split_kv`` or ``gemm_waves`` (see ``graders.hardware.sweeps``). The fixture goes
to ``hardware_fixtures/<NAME>_<gpu>_measured.json`` (or ``--out``), with the GPU and
software as the runtime reports them, every row's median/min/max/samples, and a
``measured`` provenance (device, date, the command, the recorder's git revision). Without a
usable GPU it says why and exits with status 2, writing nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from graders.hardware import fixtures, live, sweeps, timing

EXIT_NO_GPU = 2


def _revision() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=fixtures.ROOT,
                             capture_output=True, text=True, timeout=30, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "graders/hardware"],
                               cwd=fixtures.ROOT, capture_output=True, text=True, timeout=30)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def build_fixture(name: str, info: dict[str, Any],
                  rows: list[tuple[dict[str, object], timing.Measurement]],
                  date: str, command: str) -> dict[str, Any]:
    """The fixture document for a finished recording (pure: the CPU suite tests it)."""
    device = info["gpu"]["name"]
    conditions: dict[str, Any] = {"warmup": live.WARMUP, "repetitions": live.REPETITIONS,
                                  "l2_flush": "an int8 buffer of twice the L2 zeroed before each run",
                                  "timer": "CUDA events around the workload alone; median reported"}
    if name == "split_kv":
        conditions.update(dtype="bf16 q/k/v, fp32 accumulation and output",
                          kernel="graders/hardware/kernels.py split_kv_decode (Triton, 2 kernels)",
                          shapes=[vars(s) for s in sweeps.DECODE_SHAPES])
    else:
        conditions.update(dtype="bf16 inputs and output", kernel="torch.matmul (cuBLAS)",
                          shapes=[vars(g) for g in sweeps.GEMM_SHAPES])
    return {
        "schema": fixtures.SCHEMA,
        "name": f"{name} sweep on {device}",
        "sweep": sweeps.SWEEP_OF[name],
        "description": sweeps.DESCRIPTION[name],
        "gpu": info["gpu"],
        "software": info["software"],
        "conditions": conditions,
        "rows": [{**spec, **m.as_row()} for spec, m in rows],
        "provenance": {"kind": "measured", "device": device, "date": date, "command": command,
                       "recorder": f"graders/hardware/record.py @ {_revision()}"},
    }


def run(name: str, measure_row: Callable[[dict[str, object]], timing.Measurement],
        progress: Callable[[str], None] = print) -> list[tuple[dict[str, object], timing.Measurement]]:
    """Measure every row of the plan, in order."""
    plan = sweeps.plan(name)
    out = []
    for i, spec in enumerate(plan):
        m = measure_row(spec)
        out.append((spec, m))
        if i % 50 == 0 or i == len(plan) - 1:
            progress(f"{name}: {i + 1}/{len(plan)} {spec} -> {m.median_us:.2f} us")
    return out


def _measure(name: str) -> Callable[[dict[str, object]], timing.Measurement]:
    def split_kv(spec: dict[str, Any]) -> timing.Measurement:
        return live.measure_split_kv_decode(spec["batch"], spec["q_heads"], spec["kv_heads"],
                                            spec["context"], spec["head_dim"], spec["num_splits"])

    def gemm(spec: dict[str, Any]) -> timing.Measurement:
        return live.measure_gemm(spec["m"], spec["n"], spec["k"])

    return split_kv if name == "split_kv" else gemm


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nox -s record --", description=__doc__.split("\n")[0])
    parser.add_argument("name", choices=sweeps.NAMES)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    reason = live.gpu_reason()
    if reason is not None:
        print(f"record: no CUDA GPU here ({reason}); nothing was recorded. Run this on a "
              "machine with an NVIDIA GPU and a CUDA build of torch with triton.", file=sys.stderr)
        return EXIT_NO_GPU
    info = live.device_info()
    rows = run(args.name, _measure(args.name))
    doc = build_fixture(args.name, info, rows, dt.date.today().isoformat(),
                        f"nox -s record -- {args.name}")
    errors = fixtures.validate(doc)
    if errors:
        print("record: the fixture does not validate: " + "; ".join(errors), file=sys.stderr)
        return 1
    slug = re.sub(r"[^a-z0-9]+", "-", info["gpu"]["name"].lower()).strip("-")
    out = args.out or fixtures.FIXTURES_DIR / f"{args.name}_{slug}_measured.json"
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"record: wrote {len(rows)} rows to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
