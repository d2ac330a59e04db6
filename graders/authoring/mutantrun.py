"""Grade many mutants of one kata in one pytest process: the project's mutant check.

    python -m graders.authoring.mutantrun KATA [NAME...] [--profile grade] [--record]
    python -m graders.authoring.mutantrun KATA --solutions [--profile grade]   (nox -s deep)

Mutants are trusted code (the project wrote them), so they are graded in-process, on the
tests of the rubric item they name only, stopping at the first failure. A ``*`` mutant
(trivial answers) runs every item, each stopping at its own first failure. Starting pytest
and collecting a kata's tests costs about a second, far more than catching a typical
mutant, so one child process starts pytest and collects the kata's tests once, then forks
one process per mutant from the collected session: each mutant starts from the same state
(no module global, cached fixture or Hypothesis setting of another mutant's run reaches
it), and pays a fork instead of a start. The tests reach the implementation only through
``graders.impl``, which each forked process points at its mutant. The suite's in-process
full-marks check of the independent solutions (``grade_specs``) runs the same way.

A mutant is caught when its named item lost a test (every item that ran, for ``*``), and
the failure is not an import error. Inputs reach the implementation read-only in both modes
(graders/wire.py), so even an in-place writer is caught in-process.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graders import catalog, launch
from graders.authoring import mutant

if TYPE_CHECKING:
    from graders import grade

BATCH_TIMEOUT_S = 900.0
# jobs at a time: a few mutants wait on real timeouts (a stalled client, a slow reader),
# and a second job uses the processor meanwhile
PARALLEL = 2


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
    catchers: list[str] = field(default_factory=list)     # the first failing test per item

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


# -- the child: one collection, one fork per job --------------------------------------

@dataclass
class Job:
    """One implementation to run against the collected tests: ``items`` limits the run to
    those rubric items (None: every item); with ``stop`` each item stops at its first
    failure, and the tests in ``first`` (the ones that caught this mutant last time,
    ``CATCHERS``) run before the others, then the cheap tests."""
    label: str
    spec: str
    items: list[str] | None
    stop: bool
    first: list[str] = field(default_factory=list)   # nodeids to run before the others


def _cost_rank(item: Any) -> int:
    """0: a plain test, 1: a Hypothesis property test, 2: a state machine."""
    if getattr(item, "name", "") == "runTest":
        return 2
    return 1 if getattr(getattr(item, "obj", None), "is_hypothesis_test", False) else 0


def _run_job(session: Any, job: Job) -> dict[str, Any]:
    """In a forked child: point graders.impl at the job's implementation and run its
    tests through pytest's own protocol (fixtures, timeouts, the grading plugin)."""
    from graders import impl, plugin

    impl.configure(job.spec)
    items = [i for i in session.items
             if job.items is None or plugin.rubric_of(i) in job.items]
    if job.stop:
        # the tests that caught this mutant last time, then the cheap ones: most wrong
        # solutions fail a fixed case long before a property test or a state machine would
        # run. The order decides only how soon an item's first failure comes, never
        # whether it comes: a test that no longer fails just runs with the others.
        first = set(job.first)
        items.sort(key=lambda i: (i.nodeid not in first, _cost_rank(i)))
    lost: dict[str, str] = {}
    tests: list[list[str]] = []
    for n, item in enumerate(items):
        rubric = plugin.rubric_of(item) or ""
        if job.stop and rubric in lost:
            continue
        nextitem = items[n + 1] if n + 1 < len(items) else None
        item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        outcome, message = plugin._State.results.get(
            item.nodeid, ("failed", "the test produced no result"))
        tests.append([item.nodeid, rubric, outcome, message[:4000]])
        if outcome == "failed":
            lost.setdefault(rubric, message)
            if job.stop and job.items is not None and len(job.items) == 1:
                break
    return {"tests": tests}


class _ForkEach:
    """A pytest plugin: collect once, then run each job in a child forked from the
    collected session, so that no job sees another's state (module globals, fixtures,
    caches) and none pays for pytest's start and collection again."""

    def __init__(self, jobs: list[Job], log: Any, job_timeout: float, parallel: int) -> None:
        self.jobs = jobs
        self.log = log
        self.job_timeout = job_timeout
        self.parallel = max(1, parallel)

    def pytest_runtestloop(self, session: Any) -> bool:
        pending = list(self.jobs)
        running: dict[int, tuple[Job, float, str]] = {}
        while pending or running:
            while pending and len(running) < self.parallel:
                job = pending.pop(0)
                self._write({"event": "start", "name": job.label})
                pid, result_path = self._start(session, job)
                running[pid] = (job, time.monotonic(), result_path)
            for pid, (job, start, result_path) in list(running.items()):
                error = self._ended(pid, start)
                if error is None:
                    continue
                del running[pid]
                try:
                    result = json.loads(Path(result_path).read_text(encoding="utf-8") or "{}")
                except (OSError, ValueError):
                    result = {}
                finally:
                    Path(result_path).unlink(missing_ok=True)
                if not error and "tests" not in result:
                    error = "the job left no result"
                self._write({"event": "result", "name": job.label,
                             "tests": result.get("tests", []), "error": error,
                             "seconds": round(time.monotonic() - start, 3)})
            time.sleep(0.005)
        return True

    @staticmethod
    def _start(session: Any, job: Job) -> tuple[int, str]:
        with tempfile.NamedTemporaryFile(prefix="kata-job-", suffix=".json",
                                         delete=False) as fh:
            result_path = fh.name
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:   # the child: run the job, leave its result, never return
            code = 0
            try:
                os.setpgid(0, 0)
                result = _run_job(session, job)
                with open(result_path, "w", encoding="utf-8") as out:
                    json.dump(result, out)
            except BaseException:   # noqa: BLE001 - reported by the parent
                import traceback

                traceback.print_exc()
                code = 70
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        return pid, result_path

    def _ended(self, pid: int, start: float) -> str | None:
        """None while the job runs; then "" (it ended well) or what went wrong."""
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(status):
                return f"the job's process ended by signal {os.WTERMSIG(status)}"
            code = os.WEXITSTATUS(status)
            return "" if code == 0 else f"the job's process exited with code {code}"
        if time.monotonic() - start > self.job_timeout:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            os.waitpid(pid, 0)
            return f"no end after {self.job_timeout:.0f} s (killed)"
        return None

    def _write(self, event: dict[str, Any]) -> None:
        self.log.write(json.dumps(event) + "\n")
        self.log.flush()


def _child(kata: catalog.Kata, jobs: list[Job], profile: str, out: Path,
           job_timeout: float, parallel: int) -> int:
    import pytest

    folders = [str(p) for p in (kata.public_tests, kata.hidden_tests) if p.is_dir()]
    # a job's failures are read for their message only: Python's own traceback, not
    # pytest's with source lines (a fifth of what the mutant check cost)
    args = launch.pytest_args(folders, profile=profile, impl="katas", timeout=60,
                              extra=["--tb=native"])
    with open(out, "a", encoding="utf-8") as log:
        code = int(pytest.main(args, plugins=[_ForkEach(jobs, log, job_timeout, parallel)]))
    return 0 if code in (0, 1, 5) else code


# -- the parent ------------------------------------------------------------------------

@dataclass
class JobResult:
    """What one job's run showed: (nodeid, rubric item, outcome, message) per test run."""
    tests: list[tuple[str, str, str, str]] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0


def run_jobs(kata: str, jobs: list[Job], profile: str, timeout: float = BATCH_TIMEOUT_S,
             parallel: int = PARALLEL) -> dict[str, JobResult]:
    """Run ``jobs`` against the tests of ``kata`` in one child pytest process (collected
    once, one fork per job, ``parallel`` of them at a time); a job that did not finish says
    why."""
    results = {j.label: JobResult() for j in jobs}
    if not jobs:
        return results
    with tempfile.TemporaryDirectory(prefix="kata-mutantrun-") as tmp:
        out = Path(tmp) / "events.jsonl"
        log = Path(tmp) / "pytest.log"
        spec = Path(tmp) / "jobs.json"
        spec.write_text(json.dumps([j.__dict__ for j in jobs]), encoding="utf-8")
        cmd = [sys.executable, "-m", "graders.authoring.mutantrun", kata, "--profile", profile,
               "--child", str(out), "--jobs", str(spec), "--job-timeout", str(timeout),
               "--parallel", str(parallel)]
        with open(log, "wb") as sink:
            try:
                child = subprocess.run(cmd, cwd=catalog.ROOT, env=launch.test_env(), stdout=sink,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       timeout=timeout * 2 + 60 * len(jobs), check=False)
                ended = f"exit code {child.returncode}"
            except subprocess.TimeoutExpired:
                ended = "no end in time (killed)"
        running: set[str] = set()
        finished: set[str] = set()
        events = out.read_text(encoding="utf-8").splitlines() if out.exists() else []
        for line in events:
            e = json.loads(line)
            if e["event"] == "start":
                running.add(e["name"])
                continue
            r = results[e["name"]]
            r.tests = [tuple(t) for t in e["tests"]]
            r.error, r.seconds = e["error"], e["seconds"]
            if r.error:
                r.error += "\n" + log.read_text(errors="replace")[-2000:]
            finished.add(e["name"])
            running.discard(e["name"])
        tail = log.read_text(errors="replace")[-2000:]
        for label, r in results.items():
            if label not in finished:
                r.error = (f"the batch process stopped ({ended}) while running {label}"
                           if label in running else
                           f"not run: the batch process stopped ({ended})") + f"\n{tail}"
    return results


def grade_in_process(kata: str, names: list[str], profile: str = "grade",
                     timeout: float = BATCH_TIMEOUT_S) -> dict[str, Verdict]:
    """Grade ``names`` (mutants of ``kata``) in-process: each on the item it names (every
    item for ``*``), stopping at the item's first failure."""
    verdicts = {n: Verdict(n, mutant.load(kata, n).rubric) for n in names}
    known = mutant.catchers(kata)
    with tempfile.TemporaryDirectory(prefix="kata-mutants-") as tmp:
        jobs = [Job(n, str(mutant.materialise(kata, n, Path(tmp))),
                    None if v.rubric == "*" else [v.rubric], True, known.get(n, []))
                for n, v in verdicts.items()]
        results = run_jobs(kata, jobs, profile, timeout)
    for name, v in verdicts.items():
        r = results[name]
        v.error, v.seconds = r.error, r.seconds
        for nodeid, rubric, outcome, message in r.tests:
            if outcome in ("passed", "failed"):
                v.ran.append(rubric)
            if outcome == "failed" and rubric not in v.lost:
                v.lost[rubric] = message
                v.catchers.append(nodeid)
        v.ran = sorted(set(v.ran))
    return verdicts


def grade_specs(kata: str, specs: list[str], profile: str = "selftest",
                timeout: float = BATCH_TIMEOUT_S) -> dict[str, "grade.Grade"]:
    """Grade whole implementations (paths) in-process on every test, as ``grade.run(...,
    isolate=False)`` would score them, in one collection: the suite's full-marks check of
    the independent solutions. A job that did not finish fails every test it did not run."""
    from graders import grade

    loaded = catalog.load(kata)
    results = run_jobs(kata, [Job(s, s, None, False) for s in specs], profile, timeout)
    grades = {}
    for spec, r in results.items():
        g = grade.Grade(loaded, spec, None, profile, [])
        for nodeid, rubric, outcome, message in r.tests:
            where = catalog.ROOT / nodeid.split("::")[0]
            g.tests.append(grade.TestResult(nodeid, rubric,
                                            catalog.visibility_of_test_path(where), outcome,
                                            message))
        if r.error:
            g.tests.append(grade.TestResult("(the run)", "", "public", "failed", r.error))
            g.restarts = 1
        g.seconds = r.seconds
        grade.score(g)
        grades[spec] = g
    return grades


def grade_all(kata: str, profile: str = "grade") -> dict[str, Verdict]:
    """Every mutant of ``kata``, in-process in one batch."""
    return grade_in_process(kata, mutant.names(kata), profile)


def _solutions(kata: str, profile: str) -> int:
    """The reference and every independent solution: full marks in-process (one
    collection), then each alternative isolated too, item by item as in-process (the
    suite grades one blind alternative per kata isolated)."""
    from graders import grade
    specs = ["solutions", *mutant.alternative_specs(kata)]
    wrong = 0
    for spec, g in grade_specs(kata, specs, profile).items():
        label = spec if spec == "solutions" else str(Path(spec).relative_to(catalog.ROOT))
        grades = [("in-process", g)]
        if spec != "solutions":
            grades.append(("isolated", grade.run(kata, spec, profile=profile)))
        for mode, got in grades:
            lost = [r for r in got.items if r.status == "failed"]
            print(f"{kata:<18} {label:<60} {got.score:>4}/{got.max_score:<4} "
                  f"{got.seconds:6.1f} s {mode}")
            for r in lost:
                print(f"    lost {r.item.id}: " + r.message.replace("\n", "\n    ")[:1500])
            wrong += bool(lost) or got.score != got.max_score
        differ = grade.items_that_differ(g, grades[-1][1])
        if differ:
            print(f"    the modes differ (in-process, isolated): {differ}")
            wrong += 1
    return 1 if wrong else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.authoring.mutantrun",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("kata")
    parser.add_argument("names", nargs="*", help="mutants (default: every one)")
    parser.add_argument("--profile", default="grade", help="hypothesis profile")
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--jobs", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--solutions", action="store_true",
                        help="grade the reference and every independent correct solution "
                             "instead (each must score full marks)")
    parser.add_argument("--record", action="store_true",
                        help="write which test caught each mutant to its kata's "
                             f"{mutant.CATCHERS} (the check runs those first)")
    parser.add_argument("--parallel", type=int, default=PARALLEL, help=argparse.SUPPRESS)
    parser.add_argument("--job-timeout", type=float, default=BATCH_TIMEOUT_S,
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    kata = catalog.load(args.kata)
    if args.child is not None:
        jobs = [Job(**j) for j in json.loads(args.jobs.read_text(encoding="utf-8"))]
        return _child(kata, jobs, args.profile, args.child, args.job_timeout, args.parallel)
    if args.solutions:
        return _solutions(kata.name, args.profile)
    if args.names:
        verdicts = grade_in_process(kata.name, args.names, args.profile)
    else:
        verdicts = grade_all(kata.name, args.profile)
    if args.record:
        path = mutant.write_catchers(kata.name, {v.name: v.catchers for v in verdicts.values()
                                                 if v.caught})
        print(f"wrote {path.relative_to(catalog.ROOT)}")
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
