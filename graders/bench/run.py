"""``nox -s bench [-- KATA...] [--rounds N] [--out DIR] [--readme] [--alternatives] [--quick]``

Times each named kata's reference (as it is now in ``solutions/``) against the approach a
production engine takes and against the physical floor, on the same inputs, interleaved
over several rounds, and prints the ratios (median, min, max), plus a growth ratio where
the state grows (1k vs 100k cached tokens, or streamed tokens). Writes results.json,
results.md and results.png to --out (default docs/bench/); --readme also pastes the plot and
the table into docs/bench/README.md between its bench markers; --alternatives also times every kata's
independent solutions (graders/alternatives/KATA/; top_p's always). Ratios only: no time is compared with
a constant, so a noisy machine makes them wider, never wrong in kind.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from graders.bench import cases, report
from graders.bench.timing import measure

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "docs" / "bench"
DEFAULT_ROUNDS = 7
TOP_P_ROUNDS = 4     # one call of the slowest top_p contender takes seconds


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on this platform
        return None


def run(katas: list[str], rounds: int | None, quick: bool, command: str,
        log: Any = None, alts: bool = False) -> dict[str, Any]:
    """Measure ``katas`` and return the record (see report for its use)."""
    start = time.monotonic()
    record: dict[str, Any] = {
        "schema": 1,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "quick": quick,
        "clock": "CPU time of this process (time.process_time) per unit of work",
        "machine": {"cores": os.cpu_count(), "platform": platform.platform(terse=True),
                    "machine": platform.machine(), "python": platform.python_version(),
                    "loadavg_start": _loadavg()},
        "software": {m: _version(m) for m in ("numpy", "torch", "tokenizers", "matplotlib")},
        "cases": [], "skipped": {},
    }
    for kata in katas:
        say = log or (lambda _: None)
        say(f"{kata}: preparing")
        try:
            case = cases.BUILDERS[kata](quick, alts)
        except cases.Skipped as exc:
            record["skipped"][kata] = str(exc)
            say(f"{kata}: skipped: {exc}")
            continue
        n = rounds or case.rounds or (TOP_P_ROUNDS if kata == "top_p" else DEFAULT_ROUNDS)
        measured = measure(case, n, target=0.005 if quick else 0.05, progress=log)
        record["cases"].append(report.case_record(measured))
    record["machine"]["loadavg_end"] = _loadavg()
    record["elapsed_s"] = round(time.monotonic() - start, 1)
    return record


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="nox -s bench --", description=__doc__.split("\n\n")[1])
    ap.add_argument("katas", nargs="*", metavar="KATA",
                    help=f"any of {', '.join(cases.BUILDERS)} (default: all)")
    ap.add_argument("--rounds", type=int, default=None,
                    help=f"rounds per kata (default {DEFAULT_ROUNDS}, top_p {TOP_P_ROUNDS})")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help="folder for results.json, results.md and results.png")
    ap.add_argument("--readme", action="store_true",
                    help="also paste the plot and the table into docs/bench/README.md")
    ap.add_argument("--quick", action="store_true",
                    help="tiny sizes: checks the bench's plumbing, measures nothing useful")
    ap.add_argument("--alternatives", action="store_true",
                    help="also time every kata's independent solutions against its "
                         "reference (top_p's always are)")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG")
    args = ap.parse_args(argv)
    unknown = [k for k in args.katas if k not in cases.BUILDERS]
    if unknown:
        ap.error(f"no bench for {', '.join(unknown)}; the benched katas: "
                 f"{', '.join(cases.BUILDERS)}")
    if args.rounds is not None and args.rounds < 1:
        ap.error("--rounds must be >= 1")
    katas = args.katas or list(cases.BUILDERS)
    given = sys.argv[1:] if argv is None else argv
    shown = "nox -s bench" + (" -- " + shlex.join(given) if given else "")
    record = run(katas, args.rounds, args.quick, shown,
                 log=lambda msg: print(msg, file=sys.stderr, flush=True),
                 alts=args.alternatives)
    table = report.markdown(record)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    import json

    (out / "results.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    (out / "results.md").write_text(table, encoding="utf-8")
    wrote = [out / "results.json", out / "results.md"]
    if not args.no_plot:
        try:
            report.plot(record, out / "results.png")
            wrote.append(out / "results.png")
        except ImportError as exc:
            print(f"no plot: {exc} (`nox -s bench` installs matplotlib)", file=sys.stderr)
    if args.readme:
        page = ROOT / "docs" / "bench" / "README.md"
        try:
            image = os.path.relpath((out / "results.png").resolve(), page.parent)
        except ValueError:
            image = str((out / "results.png").resolve())
        report.update_readme(page, table, image)
        wrote.append(page)
    print(table)
    print("wrote " + ", ".join(str(p) for p in wrote), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
