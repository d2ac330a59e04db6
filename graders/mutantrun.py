"""Grade many mutants of one kata in one pytest process: the project's mutant check.

    python -m graders.mutantrun KATA [NAME...] [--profile grade]

Mutants are trusted code (the project wrote them), so they are graded in-process, on the
tests of the rubric item they name only, stopping at the first failure. A ``*`` mutant
(trivial answers) runs every item, each stopping at its own first failure. Starting pytest
and collecting a kata's tests costs about a second, far more than catching a typical
mutant, so one child process runs ``pytest.main`` once per mutant, reusing the imported test
modules (the tests reach the implementation only through ``graders.impl``, which each run
reconfigures).

A mutant is caught when its named item lost a test (every item that ran, for ``*``), and
the failure is not an import error. The few mutants listed in ``ISOLATED_ONLY`` are graded
one by one with ``graders.grade`` in a sandboxed worker instead.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graders import catalog, mutant

# Mutants graded isolated, one by one, as a submission is, for a bug an in-process check
# could miss. Empty: inputs reach the implementation read-only in both modes
# (graders/wire.py), so the in-place writers are caught in-process too.
ISOLATED_ONLY: dict[str, set[str]] = {}
BATCH_TIMEOUT_S = 900.0


@dataclass
class Verdict:
    """What grading one mutant showed."""
    name: str
    rubric: str
    lost: dict[str, str] = field(default_factory=dict)   # item -> first failure's message
    ran: list[str] = field(default_factory=list)         # items with a test that ran
    error: str = ""                                       # the run itself went wrong
    seconds: float = 0.0
    isolated: bool = False

    @property
    def caught(self) -> bool:
        if self.error or any("failed to import" in msg for msg in self.lost.values()):
            return False
        if self.rubric == "*":
            return bool(self.ran) and set(self.ran) <= set(self.lost)
        return self.rubric in self.lost

    def why_not(self) -> str:
        """A line saying why the mutant was not caught (empty when it was)."""
        if self.caught:
            return ""
        if self.error:
            return f"{self.name}: {self.error}"
        broken = [m for m in self.lost.values() if "failed to import" in m]
        if broken:
            return f"{self.name} does not even import:\n{broken[0][:800]}"
        if self.rubric == "*":
            kept = sorted(set(self.ran) - set(self.lost)) or ["(no test ran)"]
            return f"{self.name} (*) must lose every item; kept {kept}"
        return (f"{self.name} is not caught by any test of rubric item {self.rubric!r}"
                + (" (isolated)" if self.isolated else " (in-process)"))


# -- the child: one pytest.main per mutant ---------------------------------------------

class _Collector:
    """A pytest plugin object: keeps only the tests of ``items`` (None: every test), notes per
    rubric item whether a test ran and its first failure, and with ``item_first`` skips the
    rest of an item once the item has lost."""

    def __init__(self, items: set[str] | None, item_first: bool) -> None:
        self.items = items
        self.item_first = item_first
        self.rubric: dict[str, str] = {}
        self.lost: dict[str, str] = {}
        self.ran: set[str] = set()

    def pytest_collection_modifyitems(self, config: Any, items: list[Any]) -> None:
        from graders.plugin import rubric_of

        if self.items is not None:
            keep = [i for i in items if rubric_of(i) in self.items]
            config.hook.pytest_deselected(items=[i for i in items if i not in keep])
            items[:] = keep
        if self.item_first:
            # the cheap tests first: a mutant stops at its first failure, and most are caught
            # by a fixed case long before a property test or a state machine would run
            items.sort(key=_cost_rank)
        self.rubric = {i.nodeid: rubric_of(i) or "" for i in items}

    def pytest_runtest_setup(self, item: Any) -> None:
        if self.item_first and self.rubric.get(item.nodeid) in self.lost:
            import pytest

            pytest.skip("the item is already lost")

    def pytest_runtest_logreport(self, report: Any) -> None:
        item = self.rubric.get(report.nodeid, "")
        if report.failed:
            self.ran.add(item)
            self.lost.setdefault(item, report.longreprtext[:4000])
        elif report.when == "call" and report.passed:
            self.ran.add(item)


def _cost_rank(item: Any) -> int:
    """0: a plain test, 1: a Hypothesis property test, 2: a state machine."""
    if getattr(item, "name", "") == "runTest":
        return 2
    return 1 if getattr(getattr(item, "obj", None), "is_hypothesis_test", False) else 0


_FRESH = tuple(str(p) for p in (catalog.PUBLIC_TESTS_DIR, catalog.HIDDEN_TESTS_DIR,
                                 catalog.ROOT / "graders" / "support"))


def _forget_test_modules() -> None:
    """Drop the kata's test modules, their helpers and the support drivers from
    ``sys.modules``, so that each mutant's run imports them afresh: no cached fixture,
    module-level value or state machine class (which keeps the Hypothesis profile current
    when it was made) carries over from the mutant before. Only the interpreter and the
    third-party libraries are shared."""
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None) or ""
        if where.startswith(_FRESH) or name.startswith("_submission_"):
            del sys.modules[name]


def _child(kata: catalog.Kata, names: list[str], profile: str, out: Path) -> int:
    import pytest

    from graders.cli import PLUGINS

    folders = [str(p) for p in (kata.public_tests, kata.hidden_tests) if p.is_dir()]

    def run(log: Any, label: str, impl_spec: str, items: set[str] | None, hypothesis: str,
            stop: bool) -> None:
        log.write(json.dumps({"event": "start", "name": label}) + "\n")
        log.flush()
        start = time.monotonic()
        _forget_test_modules()
        collector = _Collector(items, item_first=stop)
        args = [*folders, "--impl", impl_spec, "--hypothesis-profile", hypothesis,
                "-q", "--no-header", "--no-rubric-summary", *PLUGINS,
                "-c", str(catalog.ROOT / "pyproject.toml"), "-W", "ignore::DeprecationWarning",
                "--timeout", "60", "--timeout-method", "signal"]
        if stop and items is not None and len(items) == 1:
            args.append("-x")
        code = int(pytest.main(args, plugins=[collector]))
        error = "" if code in (0, 1) else f"pytest ended with exit code {code}"
        log.write(json.dumps({"event": "result", "name": label, "lost": collector.lost,
                              "ran": sorted(collector.ran), "error": error,
                              "seconds": round(time.monotonic() - start, 3)}) + "\n")
        log.flush()

    with tempfile.TemporaryDirectory(prefix="kata-mutantrun-") as tmp, \
            open(out, "a", encoding="utf-8") as log:
        for name in names:
            m = mutant.load(kata.name, name)
            path = mutant.materialise(kata.name, name, Path(tmp))
            run(log, name, str(path), None if m.rubric == "*" else {m.rubric}, profile, True)
    return 0


# -- the parent ------------------------------------------------------------------------

def _child_env() -> dict[str, str]:
    from graders.grade import _child_env as grade_env

    return grade_env()


def grade_in_process(kata: str, names: list[str], profile: str = "grade",
                     timeout: float = BATCH_TIMEOUT_S) -> dict[str, Verdict]:
    """Grade ``names`` (mutants of ``kata``) in one child pytest process."""
    verdicts = {n: Verdict(n, mutant.load(kata, n).rubric) for n in names}
    if not names:
        return verdicts
    with tempfile.TemporaryDirectory(prefix="kata-mutantrun-") as tmp:
        out = Path(tmp) / "events.jsonl"
        log = Path(tmp) / "pytest.log"
        cmd = [sys.executable, "-m", "graders.mutantrun", kata, *names, "--profile", profile,
               "--child", str(out)]
        with open(log, "wb") as sink:
            try:
                child = subprocess.run(cmd, cwd=catalog.ROOT, env=_child_env(), stdout=sink,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       timeout=timeout, check=False)
                ended = f"exit code {child.returncode}"
            except subprocess.TimeoutExpired:
                ended = f"no end after {timeout:.0f} s (killed)"
        running = None
        events = out.read_text(encoding="utf-8").splitlines() if out.exists() else []
        for line in events:
            e = json.loads(line)
            if e["event"] == "start":
                running = e["name"]
            else:
                v = verdicts[e["name"]]
                v.lost, v.ran, v.error, v.seconds = e["lost"], e["ran"], e["error"], e["seconds"]
                running = None
        tail = log.read_text(errors="replace")[-2000:]
        for v in verdicts.values():
            if not v.lost and not v.ran and not v.error:
                v.error = (f"the batch process stopped ({ended}) while grading {running}"
                           if running else f"not graded: the batch process stopped ({ended})")
                v.error += f"\n{tail}"
    return verdicts


def grade_isolated(kata: str, name: str) -> Verdict:
    """Grade one mutant in a sandboxed worker, as a submission is graded."""
    from graders import grade

    m = mutant.load(kata, name)
    v = Verdict(name, m.rubric, isolated=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kata-mutantrun-") as tmp:
        path = mutant.materialise(kata, name, Path(tmp))
        if m.rubric == "*":
            g = grade.run(kata, str(path), profile="selftest")
        else:
            g = grade.run(kata, str(path), rubric=m.rubric, exitfirst=True)
    for t in g.tests:
        if t.outcome != "skipped":
            v.ran.append(t.rubric)
        if t.outcome in ("failed", "not run"):
            v.lost.setdefault(t.rubric, t.message)
    v.ran = sorted(set(v.ran))
    v.seconds = time.monotonic() - start
    return v


def grade_all(kata: str, profile: str = "grade") -> dict[str, Verdict]:
    """Every mutant of ``kata``: in-process in one batch, except ``ISOLATED_ONLY``."""
    names = mutant.names(kata)
    isolated = ISOLATED_ONLY.get(kata, set())
    verdicts = grade_in_process(kata, [n for n in names if n not in isolated], profile)
    for name in sorted(isolated & set(names)):
        verdicts[name] = grade_isolated(kata, name)
    return verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.mutantrun",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("kata")
    parser.add_argument("names", nargs="*", help="mutants (default: every one)")
    parser.add_argument("--profile", default="grade", help="hypothesis profile")
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    kata = catalog.load(args.kata)
    if args.child is not None:
        return _child(kata, args.names, args.profile, args.child)
    if args.names:
        verdicts = grade_in_process(kata.name, args.names, args.profile)
    else:
        verdicts = grade_all(kata.name, args.profile)
    missed = 0
    for v in verdicts.values():
        mode = "isolated" if v.isolated else "in-process"
        print(f"{v.name:<40} {v.rubric:<26} {'caught' if v.caught else 'MISSED'} "
              f"{v.seconds:6.2f} s {mode}")
        if not v.caught:
            missed += 1
            print("    " + v.why_not().replace("\n", "\n    ")[:1500])
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
