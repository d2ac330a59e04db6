"""Grade one implementation of one kata: public + hidden tests, a score per rubric item.

    python -m graders.grade NAME [--impl katas|solutions|PATH] [--out DIR] [--seed N]

The tests run in a child pytest process that streams one JSON line per event to a progress
file. This driver survives whatever the submission does to that process: an exit, a crash,
a hang. The test that was running is failed with a message that says what happened, and
a fresh child resumes with the tests not yet run. So the grade always finishes within its
time bound and always writes a valid results.json (Gradescope's autograder schema) and
junit.xml; what did not run scores nothing.

Scoring: a rubric item scores its points when every one of its tests passed. Hypothesis is
derandomized (or seeded with --seed), tests run in a fixed order: the same submission gets
the same score every time.
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
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graders import catalog, mutant
from graders.cli import PLUGINS
from graders.impl import SubmissionError, resolve_submission

PER_TEST_TIMEOUT_S = 60.0
GRACE_S = 15.0
MESSAGE_CHARS = 2000


class GradeError(RuntimeError):
    """The grader itself could not run (a broken kata or harness, not the submission)."""


@dataclass
class TestResult:
    nodeid: str
    rubric: str
    visibility: str
    outcome: str = "not run"          # passed | failed | skipped | not run
    message: str = ""
    duration: float = 0.0


@dataclass
class ItemResult:
    item: catalog.RubricItem
    status: str                        # passed | failed | skipped | no tests
    score: int
    tests: list[TestResult]
    message: str = ""


@dataclass
class Grade:
    kata: catalog.Kata
    impl: str
    seed: int | None
    profile: str
    tests: list[TestResult]
    items: list[ItemResult] = field(default_factory=list)
    restarts: int = 0
    seconds: float = 0.0
    sandbox: dict[str, Any] | None = None
    rubric_filter: str | None = None

    @property
    def score(self) -> int:
        return sum(i.score for i in self.items)

    @property
    def max_score(self) -> int:
        return sum(i.item.points for i in self.items if i.status != "skipped")


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = {"SIGSEGV": " (a crash: a recursion bomb or a native fault?)",
                "SIGKILL": " (killed: out of time or memory?)"}.get(name, "")
        return f"the test process died of {name}{hint} during this test"
    return (f"the test process exited with code {code} during this test "
            "(sys.exit / os._exit in the implementation?)")


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode caching keeps pytest startup fast
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only the plugins named on the command line
    env["PYTHONPATH"] = str(catalog.ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run(kata_name: str, impl_spec: str = "katas", *, seed: int | None = None,
        rubric: str | None = None, exitfirst: bool = False, profile: str | None = None,
        per_test_timeout: float = PER_TEST_TIMEOUT_S, total_timeout: float | None = None,
        include_public: bool = True, include_hidden: bool = True,
        grace: float = GRACE_S, isolate: bool = True, log: Path | None = None) -> Grade:
    """Run the tests of one kata against one implementation and score them."""
    kata = catalog.load(kata_name)
    shown = impl_spec
    if impl_spec.startswith(mutant.SPEC_PREFIX):
        try:   # a known-wrong solution of ours: it must build, or the grade cannot run
            impl_spec = str(mutant.scratch_file(kata_name, impl_spec[len(mutant.SPEC_PREFIX):]))
        except mutant.MutantError as exc:
            raise GradeError(str(exc)) from None
    elif impl_spec not in ("katas", "solutions"):
        try:
            impl_spec = shown = str(resolve_submission(kata_name, impl_spec))
        except SubmissionError:
            impl_spec = shown = str(Path(impl_spec).resolve())  # every test reports the problem
    if profile is None:
        profile = "grade" if seed is None else "grade_seeded"
    folders = ([kata.public_tests] if include_public else []) + (
        [kata.hidden_tests] if include_hidden else [])
    paths = [str(p) for p in folders if p.is_dir()]
    if not paths:
        raise GradeError(f"kata {kata_name!r} has no tests")
    start = time.monotonic()
    deadline = start + total_timeout if total_timeout else None
    grade = Grade(kata, shown, seed, profile, [], rubric_filter=rubric)
    by_id: dict[str, TestResult] = {}
    done: list[str] = []

    with tempfile.TemporaryDirectory(prefix="kata-grade-") as tmp:
        tmpdir = Path(tmp)
        log_path = log or (tmpdir / "pytest.log")
        attempt = 0
        while True:
            attempt += 1
            progress = tmpdir / f"progress-{attempt}.jsonl"
            skip = tmpdir / f"skip-{attempt}.txt"
            skip.write_text("\n".join(done), encoding="utf-8")
            cmd = [sys.executable, "-m", "pytest", *paths,
                   "--impl", impl_spec, "--hypothesis-profile", profile,
                   "--progress", str(progress), "--skip-nodeids", str(skip),
                   "--timeout", str(per_test_timeout), "--timeout-method", "signal",
                   "-q", "--no-header", "--no-rubric-summary", *PLUGINS,
                   "-c", str(catalog.ROOT / "pyproject.toml"), "-W", "ignore::DeprecationWarning"]
            if seed is not None:
                cmd += ["--hypothesis-seed", str(seed)]
            if rubric:
                cmd += ["--rubric", rubric]
            if isolate:
                cmd += ["--isolate"]
            if exitfirst:
                cmd += ["-x"]
            with open(log_path, "ab") as out:
                child = subprocess.Popen(cmd, cwd=catalog.ROOT, env=_child_env(),
                                         stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
                current, killed_why = _watch(child, progress, per_test_timeout + grace, deadline)
            events = _read_events(progress)
            collected = [e for e in events if e["event"] == "collected"]
            if attempt == 1:
                if not collected:
                    tail = log_path.read_text(errors="replace")[-3000:]
                    raise GradeError(f"the tests of {kata_name!r} could not be collected:\n{tail}")
                for t in collected[0]["tests"]:
                    res = TestResult(t["nodeid"], t["rubric"], t["visibility"])
                    by_id[res.nodeid] = res
                    grade.tests.append(res)
            for e in events:
                if e["event"] == "sandbox":
                    grade.sandbox = e["capabilities"]
                if e["event"] == "result" and e["nodeid"] in by_id:
                    res = by_id[e["nodeid"]]
                    res.outcome, res.message, res.duration = e["outcome"], e["message"], e["duration"]
                    done.append(res.nodeid)
            finished = child.returncode in (0, 1, 5) and killed_why is None and (
                exitfirst or all(r.outcome != "not run" for r in grade.tests))
            if finished or (exitfirst and any(r.outcome == "failed" for r in grade.tests)):
                break
            if current is not None and current in by_id and by_id[current].outcome == "not run":
                res = by_id[current]
                res.outcome = "failed"
                res.message = killed_why or _describe_exit(child.returncode or 0)
                done.append(current)
                grade.restarts += 1
            elif killed_why is None and child.returncode not in (0, 1, 5):
                tail = log_path.read_text(errors="replace")[-3000:]
                raise GradeError(f"pytest failed outside any test (exit {child.returncode}):\n{tail}")
            if deadline is not None and time.monotonic() >= deadline:
                for r in grade.tests:
                    if r.outcome == "not run":
                        r.outcome, r.message = "failed", "not run: the grade's time bound was reached"
                break
            if all(r.outcome != "not run" for r in grade.tests):
                break
    grade.seconds = time.monotonic() - start
    _score(grade)
    return grade


def _watch(child: subprocess.Popen[bytes], progress: Path, per_test: float,
           deadline: float | None) -> tuple[str | None, str | None]:
    # per_test includes the grace period past pytest-timeout's own limit
    """Wait for the child; kill it if one test runs past its bound. Returns the test that
    was running when it stopped (if any) and why it was killed (None if it ended itself)."""
    current: str | None = None
    started = time.monotonic()
    offset = 0
    while True:
        try:
            child.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            pass
        if progress.exists():
            with open(progress, encoding="utf-8", errors="replace") as fh:
                fh.seek(offset)
                chunk = fh.read()
            complete = chunk[:chunk.rfind("\n") + 1]
            offset += len(complete.encode("utf-8"))
            for line in complete.splitlines():
                try:
                    e = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if e.get("event") == "start":
                    current, started = e["nodeid"], time.monotonic()
                elif e.get("event") == "result" and e.get("nodeid") == current:
                    current = None
        if child.returncode is not None:
            return current, None
        now = time.monotonic()
        why = None
        if current is not None and now - started > per_test:
            why = (f"timed out: no result after {per_test:.0f} s "
                   "(an infinite loop, or a call that ignores signals); the test process was killed")
        elif deadline is not None and now > deadline:
            why = "timed out: the grade's total time bound was reached; the test process was killed"
        if why is not None:
            _kill(child)
            return current, why


def _kill(child: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        child.kill()
    child.wait()


def _read_events(progress: Path) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    if not progress.exists():
        return events
    for line in progress.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line cut by a crash
    return events


def _score(grade: Grade) -> None:
    items = grade.kata.tested_items
    if grade.rubric_filter:
        items = tuple(i for i in items if i.id == grade.rubric_filter)
    for item in items:
        tests = [t for t in grade.tests if t.rubric == item.id]
        failed = [t for t in tests if t.outcome in ("failed", "not run")]
        ran = [t for t in tests if t.outcome == "passed"]
        if not tests:
            status, message = "no tests", "no test scores this item"
        elif failed:
            first = failed[0]
            status = "failed"
            message = (f"{len(failed)} of {len(tests)} tests failed; first: {first.nodeid}\n"
                       + first.message[:MESSAGE_CHARS])
        elif not ran:
            status, message = "skipped", tests[0].message[:MESSAGE_CHARS]
        else:
            status, message = "passed", f"{len(tests)} tests passed"
        score = item.points if status == "passed" else 0
        grade.items.append(ItemResult(item, status, score, tests, message))


# -- reports ---------------------------------------------------------------------------

def table(grade: Grade) -> str:
    kata = grade.kata
    seed = "derandomized" if grade.seed is None else str(grade.seed)
    lines = [f"{kata.title} ({kata.name})",
             f"implementation: {grade.impl}   hypothesis: {grade.profile}, seed {seed}",
             "",
             f"  {'rubric item':<26}{'points':>8}  {'status':<8} {'tests':>7}  first failure"]
    for r in grade.items:
        passed = sum(t.outcome == "passed" for t in r.tests)
        first = ""
        if r.status == "failed":
            bad = next(t for t in r.tests if t.outcome in ("failed", "not run"))
            msg = " ".join(_headline(bad.message).split())[:90]
            first = f"{bad.nodeid.split('::')[-1]}: {msg}"
        elif r.status in ("skipped", "no tests"):
            first = " ".join(r.message.split())[:70]
        lines.append(f"  {r.item.id:<26}{r.score:>4}/{r.item.points:<3}  {r.status.upper():<8} "
                     f"{passed:>3}/{len(r.tests):<3}  {first}")
    for item in kata.rubric:
        if item.graded_by == "interviewer":
            lines.append(f"  {item.id:<26}{'-':>4}/{item.points:<3}  {'--':<8} {'':>7}  "
                         "graded by the interviewer")
    if grade.sandbox is not None:
        s = grade.sandbox
        parts = ["worker process"] + [label for key, label in (
            ("separate_uid", "own uid"), ("no_network", "no network"),
            ("hidden_repository", "repository hidden")) if s.get(key)]
        lines += ["", "  isolation: " + ", ".join(parts)
                  + "".join(f"\n    note: {n}" for n in s.get("notes", []))]
    lines += ["", f"  score: {grade.score}/{grade.max_score}"
              f"   ({len(grade.tests)} tests, {grade.seconds:.1f} s"
              + (f", {grade.restarts} test-process restarts" if grade.restarts else "") + ")"]
    return "\n".join(lines)


def _headline(message: str) -> str:
    """The line of a pytest failure that says what went wrong (its first 'E' line)."""
    for line in message.splitlines():
        if line.startswith("E "):
            return line[1:].strip()
    return message.strip().splitlines()[0] if message.strip() else ""


def results_json(grade: Grade) -> dict[str, Any]:
    """The Gradescope autograder schema: one entry per rubric item (carrying the points),
    then one per test (no points; hidden tests hidden from students)."""
    tests: list[dict[str, Any]] = []
    for n, r in enumerate(grade.items, 1):
        tests.append({"name": f"rubric: {r.item.id}", "number": str(n), "score": r.score,
                      "max_score": r.item.points if r.status != "skipped" else 0,
                      "status": "passed" if r.status in ("passed", "skipped") else "failed",
                      "output": f"{r.item.description}\n{r.message}",
                      "visibility": "visible", "tags": ["rubric", r.item.id]})
    for t in grade.tests:
        tests.append({"name": t.nodeid, "score": 0, "max_score": 0,
                      "status": "passed" if t.outcome in ("passed", "skipped") else "failed",
                      "output": t.message[:MESSAGE_CHARS],
                      "visibility": "hidden" if t.visibility == "hidden" else "visible",
                      "tags": [t.rubric, t.visibility, t.outcome]})
    return {
        "score": grade.score,
        "max_score": grade.max_score,
        "execution_time": round(grade.seconds, 2),
        "output": table(grade),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "kata": grade.kata.name,
            "implementation": grade.impl,
            "hypothesis_profile": grade.profile,
            "seed": grade.seed,
            "restarts": grade.restarts,
            "isolation": grade.sandbox or {"process": False,
                                           "notes": ["in-process: the submission ran inside "
                                                     "the test process (--in-process)"]},
            "rubric": {r.item.id: {"status": r.status, "score": r.score,
                                   "max_score": r.item.points} for r in grade.items},
            "interviewer_items": [i.id for i in grade.kata.rubric if i.graded_by == "interviewer"],
        },
    }


def junit_xml(grade: Grade) -> ET.ElementTree[ET.Element]:
    failures = sum(t.outcome in ("failed", "not run") for t in grade.tests)
    skipped = sum(t.outcome == "skipped" for t in grade.tests)
    total_time = f"{sum(t.duration for t in grade.tests):.3f}"
    root = ET.Element("testsuites", name="inference-katas", tests=str(len(grade.tests)),
                      failures=str(failures), errors="0", time=total_time)
    suite = ET.SubElement(root, "testsuite", name=grade.kata.name, tests=str(len(grade.tests)),
                          failures=str(failures), errors="0", skipped=str(skipped),
                          time=total_time)
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="score", value=str(grade.score))
    ET.SubElement(props, "property", name="max_score", value=str(grade.max_score))
    ET.SubElement(props, "property", name="seed",
                  value="derandomized" if grade.seed is None else str(grade.seed))
    for r in grade.items:
        ET.SubElement(props, "property", name=f"rubric.{r.item.id}",
                      value=f"{r.status} {r.score}/{r.item.points}")
    for t in grade.tests:
        case = ET.SubElement(suite, "testcase", classname=f"{grade.kata.name}.{t.rubric}",
                             name=t.nodeid, time=f"{t.duration:.3f}")
        if t.outcome in ("failed", "not run"):
            first = t.message.strip().splitlines()[-1][:200] if t.message.strip() else t.outcome
            fail = ET.SubElement(case, "failure", message=first)
            fail.text = t.message[:MESSAGE_CHARS]
        elif t.outcome == "skipped":
            ET.SubElement(case, "skipped", message=t.message[:200])
    return ET.ElementTree(root)


def write_reports(grade: Grade, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "results.json.tmp"
    tmp.write_text(json.dumps(results_json(grade), indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / "results.json")
    junit_xml(grade).write(out / "junit.xml", encoding="utf-8", xml_declaration=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nox -s grade --", description=__doc__.split("\n")[0])
    parser.add_argument("kata", help="kata name (nox -s list shows them)")
    parser.add_argument("--impl", default="katas",
                        help="katas (default), solutions, mutant:NAME (one of the kata's "
                             "known-wrong solutions), or a submission file/folder")
    parser.add_argument("--out", type=Path, default=None,
                        help="write results.json and junit.xml here")
    parser.add_argument("--seed", type=int, default=None,
                        help="hypothesis seed (default: derandomized)")
    parser.add_argument("--rubric", default=None, help="grade only this rubric item")
    parser.add_argument("--timeout", type=float, default=PER_TEST_TIMEOUT_S,
                        help="seconds per test (default %(default)s)")
    parser.add_argument("--in-process", action="store_true",
                        help="run the submission inside the test process (faster, unsafe "
                             "for untrusted code; the default isolates it in a worker)")
    parser.add_argument("--fail-under", type=float, default=None,
                        help="exit 1 when the score is below this")
    parser.add_argument("--jobs", type=int, default=1,
                        help="a folder of submissions: grade N at a time")
    parser.add_argument("--shard", default=None, metavar="I/K",
                        help="a folder of submissions: grade only shard I of K")
    args = parser.parse_args(argv)
    from graders import batch

    if batch.is_batch(args.kata, Path(args.impl)) and args.impl not in ("katas", "solutions"):
        try:
            catalog.load(args.kata)
            shard = batch.parse_shard(args.shard)
        except (catalog.CatalogError, ValueError) as exc:
            print(f"grade: {exc}", file=sys.stderr)
            return 2
        out = args.out or Path("grade-out")
        print(f"grading every submission in {args.impl} ({args.jobs} at a time)")
        rows = batch.grade_folder(args.kata, Path(args.impl), out, args.jobs, shard,
                                  seed=args.seed, per_test_timeout=args.timeout,
                                  isolate=not args.in_process)
        print(f"\n  {len(rows)} submissions; summary: {out / 'summary.csv'}")
        return 0
    try:
        grade = run(args.kata, args.impl, seed=args.seed, rubric=args.rubric,
                    per_test_timeout=args.timeout, isolate=not args.in_process)
    except (catalog.CatalogError, GradeError) as exc:
        print(f"grade: {exc}", file=sys.stderr)
        return 2
    print(table(grade))
    if args.out:
        write_reports(grade, args.out)
        print(f"\n  reports: {args.out / 'results.json'}, {args.out / 'junit.xml'}")
    if args.fail_under is not None and grade.score < args.fail_under:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
