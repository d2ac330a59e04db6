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
import resource
import select
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from graders import catalog, launch, sandbox, warm
from graders.impl import SubmissionError, resolve_submission

PER_TEST_TIMEOUT_S = 60.0
GRACE_S = 15.0
COLLECT_S = 120.0
TRUSTED_MEMORY_BYTES = 4 << 30   # data memory (RLIMIT_DATA) of the trusted pytest
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
    # the hidden tests were asked for but are not here (a candidate bundle): the public
    # tests alone ran, and what they give is not a score
    public_only: bool = False

    @property
    def score(self) -> int:
        return sum(i.score for i in self.items)

    @property
    def max_score(self) -> int:
        return sum(i.item.points for i in self.items if i.status != "skipped")


def items_that_differ(a: Grade, b: Grade) -> dict[str, tuple[str, str | None]]:
    """Rubric items whose status differs between two grades of one submission (isolated
    and in-process, say): item -> (status in ``a``, status in ``b``)."""
    in_b = {r.item.id: r.status for r in b.items}
    return {r.item.id: (r.status, in_b.get(r.item.id)) for r in a.items
            if in_b.get(r.item.id) != r.status}


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


def run(kata_name: str, impl_spec: str = "katas", *, seed: int | None = None,
        rubric: str | None = None, exitfirst: bool = False, profile: str | None = None,
        per_test_timeout: float = PER_TEST_TIMEOUT_S, total_timeout: float | None = None,
        include_public: bool = True, include_hidden: bool = True,
        grace: float = GRACE_S, isolate: bool = True, log: Path | None = None,
        require_isolation: bool = False) -> Grade:
    """Run the tests of one kata against one implementation and score them.

    ``rubric`` names one rubric item, or several separated by commas. A submission that
    holds anything but plain files and folders (a link, a device, ...) runs no code: every
    test fails with the message that names the path. With ``require_isolation`` the grade
    refuses (GradeError) to run the submission with less than bubblewrap or the root
    namespaces around it."""
    kata = catalog.load(kata_name)
    if rubric:
        for item_id in rubric.split(","):
            try:
                if kata.item(item_id).graded_by != "tests":
                    raise GradeError(f"rubric item {item_id!r} is graded by the interviewer")
            except KeyError as exc:
                raise GradeError(str(exc.args[0])) from None
    sandbox_env = isolation_env(isolate, require_isolation)
    refused: str | None = None
    shown = impl_spec
    if impl_spec.startswith("mutant:"):
        try:   # a known-wrong solution of ours: it must build, or the grade cannot run
            impl_spec = shown = str(resolve_submission(kata_name, impl_spec))
        except SubmissionError as exc:
            raise GradeError(str(exc)) from None
    elif impl_spec not in ("katas", "solutions"):
        given = Path(impl_spec).expanduser()
        given = given if given.is_absolute() else Path.cwd() / given
        try:
            sandbox.copy_submission(resolve_submission(kata_name, impl_spec), None, given)
            impl_spec = shown = str(given)
        except SubmissionError:
            impl_spec = shown = str(Path(impl_spec).resolve())  # every test reports the problem
        except sandbox.UnsafeSubmission as exc:
            refused, impl_spec = str(exc), str(given)
            shown = impl_spec
    if profile is None:
        profile = "grade" if seed is None else "grade_seeded"
    folders = ([kata.public_tests] if include_public else []) + (
        [kata.hidden_tests] if include_hidden else [])
    paths = [str(p) for p in folders if p.is_dir()]
    if not paths:
        raise GradeError(f"kata {kata_name!r} has no tests")
    start = time.monotonic()
    deadline = start + total_timeout if total_timeout else None
    grade = Grade(kata, shown, seed, profile, [], rubric_filter=rubric,
                  public_only=include_hidden and not kata.hidden_tests.is_dir())
    by_id: dict[str, TestResult] = {}
    done: set[str] = set()

    with tempfile.TemporaryDirectory(prefix="kata-grade-") as tmp:
        tmpdir = Path(tmp)
        log_path = log or (tmpdir / "pytest.log")
        attempt = 0
        while True:
            attempt += 1
            skip = tmpdir / f"skip-{attempt}.txt"
            skip.write_text("\n".join(sorted(done)), encoding="utf-8")
            # The progress channel: a pipe whose write end only the trusted pytest holds
            # (passed by descriptor, never by path; the plugin makes it non-inheritable).
            read_fd, write_fd = os.pipe()
            cmd = [sys.executable, "-m", "pytest", *launch.pytest_args(
                paths, profile=profile, impl=impl_spec, timeout=per_test_timeout,
                extra=["--progress-fd", str(write_fd), "--skip-nodeids", str(skip)])]
            if seed is not None:
                cmd += ["--hypothesis-seed", str(seed)]
            if rubric:
                cmd += ["--rubric", rubric]
            if isolate:
                cmd += ["--isolate"]
            if exitfirst:
                cmd += ["-x"]
            if refused:
                cmd += ["--collect-only"]
            channel = Channel(read_fd, by_id if attempt > 1 else None, done)
            open_fds = [read_fd, write_fd]
            try:
                with open(log_path, "ab") as out:
                    child = _start(cmd, {**launch.test_env(), **sandbox_env}, out, write_fd)
                    open_fds.remove(write_fd)  # before closing: another thread of a batch
                    os.close(write_fd)         # may be handed this number right after
                    _limit_memory(child.pid)
                    killed_why = _watch(child, channel, per_test_timeout + grace, deadline)
            finally:
                for fd in open_fds:  # each closed exactly once
                    os.close(fd)
            if attempt == 1:
                if channel.collected is None:
                    tail = log_path.read_text(errors="replace")[-3000:]
                    why = channel.violation or killed_why or f"exit {child.returncode}"
                    raise GradeError(f"the tests of {kata_name!r} could not be collected "
                                     f"({why}):\n{tail}")
                for t in channel.collected:
                    res = TestResult(t["nodeid"], t["rubric"], t["visibility"])
                    by_id[res.nodeid] = res
                    grade.tests.append(res)
                channel.apply(by_id)
            if channel.sandbox is not None:
                grade.sandbox = channel.sandbox
            progressed = channel.accepted > 0
            if channel.violation is not None:
                killed_why = killed_why or channel.violation
            if refused:
                for res in grade.tests:
                    res.outcome, res.message = "failed", refused
                break
            finished = child.returncode in (0, 1, 5) and killed_why is None and (
                exitfirst or all(r.outcome != "not run" for r in grade.tests))
            if finished or (exitfirst and any(r.outcome == "failed" for r in grade.tests)):
                break
            why = killed_why or _describe_exit(child.returncode or 0)
            if channel.blame is not None and channel.blame in by_id:
                # the channel broke on this test's events: whatever it reported is void
                _fail(by_id[channel.blame], why, done)
                grade.restarts += 1
            elif channel.current is not None and channel.current in by_id and \
                    by_id[channel.current].outcome == "not run":
                _fail(by_id[channel.current], why, done)
                grade.restarts += 1
            elif progressed:
                grade.restarts += 1
            elif killed_why is None and child.returncode not in (0, 1, 5) and attempt == 1:
                tail = log_path.read_text(errors="replace")[-3000:]
                raise GradeError(f"pytest failed outside any test (exit {child.returncode}):\n{tail}")
            else:
                # Stopped or killed between tests with nothing to show for it: fail the
                # next test, so that every attempt moves the grade on.
                waiting = [r for r in grade.tests if r.outcome == "not run"]
                if waiting:
                    _fail(waiting[0], why + " (before this test reported its start)", done)
                    grade.restarts += 1
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


def _start(cmd: list[str], env: dict[str, str], out: IO[bytes],
           write_fd: int) -> "subprocess.Popen[bytes] | warm.WarmProcess":
    """The test process: forked from a warm server (graders/warm.py: pytest and numpy
    already imported) where one can be had, else a fresh interpreter; the same either way."""
    if warm.enabled() and cmd[1:3] == ["-m", "pytest"]:
        try:
            return warm.spawn(cmd[3:], env, catalog.ROOT, out.fileno(), write_fd)
        except warm.Failed:
            pass
    return subprocess.Popen(cmd, cwd=catalog.ROOT, env=env, stdout=out,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, pass_fds=(write_fd,))


def isolation_env(isolate: bool, require: bool) -> dict[str, str]:
    """Choose the sandbox once, here, and pin it for the test process (KATA_SANDBOX), so
    that it runs under the same one or fails: never quietly under less. GradeError when
    ``require`` and only resource limits are available, or when KATA_SANDBOX names a
    sandbox that cannot run."""
    if not isolate:
        if require:
            raise GradeError("--require-isolation: the submission would run inside the test "
                             "process (--in-process); drop one of the two")
        return {}
    try:
        caps = sandbox.capabilities()
    except sandbox.SandboxUnavailable as exc:
        raise GradeError(str(exc)) from None
    if require and caps.backend == "limits":
        why = f" ({'; '.join(caps.notes)})" if caps.notes else ""
        raise GradeError(
            "--require-isolation: only resource limits are available here, no private root, "
            f"network or uid{why}. Install bubblewrap (README, 'Untrusted submissions') or "
            "grade as root.")
    return sandbox.probed_env(caps)


def _fail(res: TestResult, message: str, done: set[str]) -> None:
    res.outcome, res.message = "failed", message
    done.add(res.nodeid)


def _limit_memory(pid: int) -> None:
    """Cap the trusted pytest's data memory (set as it starts, long before any reply
    arrives), so a reply that gets past the wire's budgets still cannot take the grading
    machine's memory: past the cap an allocation fails inside that one test. RLIMIT_DATA,
    not RLIMIT_AS: it counts what the process writes to (heap, anonymous maps), not the
    address space torch and CUDA reserve without using (torch's import alone maps about
    0.9 GB of address space on a CPU build, and CUDA reserves far more)."""
    try:
        resource.prlimit(pid, resource.RLIMIT_DATA,
                         (TRUSTED_MEMORY_BYTES, TRUSTED_MEMORY_BYTES))
    except (ProcessLookupError, PermissionError, ValueError, OSError):
        pass  # it has already ended, or a lower hard limit is already in place


class Channel:
    """The events of one trusted pytest, read from the progress pipe and checked.

    Accepted: at most one ``sandbox`` event and one ``collected`` event, then for each
    collected test a ``start`` followed by its one ``result``. Rejected (the channel is
    then treated as broken, the child killed and the test involved failed): a result with
    no matching start, a second result for a test, a start or result for a test that was
    not collected (or already graded), a malformed line, or more bytes than a line may
    hold."""

    LINE_BYTES = 8 << 20

    def __init__(self, fd: int, known: dict[str, TestResult] | None, done: set[str]) -> None:
        self.fd = fd
        self.known = known
        self.done = done
        self.buffer = b""
        self.eof = False
        self.sandbox: dict[str, Any] | None = None
        self.collected: list[dict[str, Any]] | None = None
        self.ids: set[str] = set()
        self.current: str | None = None
        self.started = time.monotonic()
        self.last_event = time.monotonic()
        self.violation: str | None = None
        self.blame: str | None = None
        self.results: dict[str, dict[str, Any]] = {}
        self.accepted = 0
        self.by_id: dict[str, TestResult] | None = known

    def pump(self, timeout: float) -> None:
        """Read what the pipe holds (waiting at most ``timeout`` s) and take its events."""
        if self.eof or self.violation is not None:
            time.sleep(timeout)
            return
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return
        try:
            chunk = os.read(self.fd, 1 << 20)
        except OSError:
            chunk = b""
        if not chunk:
            self.eof = True
            return
        self.buffer += chunk
        while b"\n" in self.buffer and self.violation is None:
            line, self.buffer = self.buffer.split(b"\n", 1)
            self._take(line)
        if len(self.buffer) > self.LINE_BYTES:
            self._reject("an event longer than the channel allows")

    def drain(self) -> None:
        while not self.eof and self.violation is None:
            ready, _, _ = select.select([self.fd], [], [], 0)
            if not ready:
                return
            self.pump(0)

    def _reject(self, why: str, nodeid: str | None = None) -> None:
        self.violation = f"the progress channel carried an invalid event: {why}"
        self.blame = nodeid if nodeid is not None else self.current

    def _take(self, line: bytes) -> None:
        try:
            e = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            self._reject("a line that is not JSON")
            return
        kind = e.get("event") if isinstance(e, dict) else None
        self.last_event = time.monotonic()
        if kind == "sandbox":
            if self.sandbox is not None or self.collected is not None or \
                    not isinstance(e.get("capabilities"), dict):
                self._reject("a second or late sandbox event")
                return
            self.sandbox = e["capabilities"]
        elif kind == "collected":
            self._collected(e)
        elif kind == "start":
            nodeid = e.get("nodeid")
            if self.collected is None or not isinstance(nodeid, str) or nodeid not in self.ids:
                self._reject(f"a start for a test that was not collected: {str(nodeid)[:200]}")
            elif self.current is not None:
                self._reject(f"a start for {nodeid} while {self.current} runs")
            elif nodeid in self.results or nodeid in self.done:
                self._reject(f"a second start for {nodeid}", nodeid)
            else:
                self.current, self.started = nodeid, time.monotonic()
        elif kind == "result":
            self._result(e)
        else:
            self._reject(f"an unknown event {str(kind)[:50]!r}")

    def _collected(self, e: dict[str, Any]) -> None:
        tests = e.get("tests")
        if self.collected is not None or not isinstance(tests, list):
            self._reject("a second collection")
            return
        ids: set[str] = set()
        for t in tests:
            if not (isinstance(t, dict) and isinstance(t.get("nodeid"), str)
                    and isinstance(t.get("rubric"), str)
                    and t.get("visibility") in ("public", "hidden")) or t["nodeid"] in ids:
                self._reject("a malformed collection")
                return
            if self.known is not None and (t["nodeid"] not in self.known
                                           or t["nodeid"] in self.done):
                self._reject(f"a collection naming an unknown or graded test {t['nodeid']}")
                return
            ids.add(t["nodeid"])
        self.collected, self.ids = tests, ids

    def _result(self, e: dict[str, Any]) -> None:
        nodeid = e.get("nodeid")
        if not isinstance(nodeid, str) or nodeid not in self.ids:
            self._reject(f"a result for a test that was not collected: {str(nodeid)[:200]}")
        elif nodeid in self.results or nodeid in self.done:
            self._reject(f"a second result for {nodeid}", nodeid)
        elif nodeid != self.current:
            self._reject(f"a result for {nodeid} with no matching start")
        elif e.get("outcome") not in ("passed", "failed", "skipped") or \
                not isinstance(e.get("message"), str) or \
                not isinstance(e.get("duration"), (int, float)):
            self._reject(f"a malformed result for {nodeid}")
        else:
            self.results[nodeid] = e
            self.current = None
            self.accepted += 1
            if self.by_id is not None:
                self._apply_one(e)

    def apply(self, by_id: dict[str, TestResult]) -> None:
        """Record every accepted result (the first attempt learns its tests from its own
        collection, so its results are applied once that is known)."""
        self.by_id = by_id
        for e in self.results.values():
            self._apply_one(e)

    def _apply_one(self, e: dict[str, Any]) -> None:
        assert self.by_id is not None
        res = self.by_id[e["nodeid"]]
        res.outcome, res.message = e["outcome"], e["message"]
        res.duration = float(e["duration"])
        self.done.add(res.nodeid)


def _watch(child: "subprocess.Popen[bytes] | warm.WarmProcess", channel: Channel, per_test: float,
           deadline: float | None) -> str | None:
    """Follow the child's events until it ends; kill it when one test runs past its bound
    (``per_test`` includes the grace past pytest-timeout's own limit), when it falls
    silent that long between tests (stopped or hung), when the grade's time is up, or when
    the channel carries an invalid event. Returns why it was killed (None if it ended)."""
    while True:
        channel.pump(0.05)
        if child.poll() is not None:
            channel.drain()
            return None
        if channel.violation is not None:
            _kill(child)
            return channel.violation
        now = time.monotonic()
        why = None
        if channel.current is not None and now - channel.started > per_test:
            why = (f"timed out: no result after {per_test:.0f} s (an infinite loop, a call "
                   "that ignores signals, or a stopped test process); the test process "
                   "was killed")
        elif channel.current is None and channel.collected is not None and \
                now - channel.last_event > per_test:
            why = (f"the test process went silent for {per_test:.0f} s between tests "
                   "(stopped or hung); it was killed")
        elif channel.collected is None and now - channel.last_event > max(per_test, COLLECT_S):
            why = "the test process did not finish collecting the tests in time; it was killed"
        elif deadline is not None and now > deadline:
            why = "timed out: the grade's total time bound was reached; the test process was killed"
        if why is not None:
            _kill(child)
            channel.drain()
            return why


def _kill(child: "subprocess.Popen[bytes] | warm.WarmProcess") -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        child.kill()
    child.wait()


def _score(grade: Grade) -> None:
    items = grade.kata.tested_items
    if grade.rubric_filter:
        wanted = set(grade.rubric_filter.split(","))
        items = tuple(i for i in items if i.id in wanted)
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

def table(grade: Grade, candidate: bool = False) -> str:
    """The terminal table. ``candidate``: the version safe to show a candidate, in which
    a failed item names only its first failing public test (never a hidden one)."""
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
            bad = next((t for t in r.tests if t.outcome in ("failed", "not run")
                        and (not candidate or t.visibility != "hidden")), None)
            if bad is None:
                first = "failed by hidden tests"
            else:
                msg = " ".join(_headline(bad.message).split())
                first = _clip(f"{bad.nodeid.split('::')[-1]}: {msg}", FIRST_COLUMN)
        elif r.status in ("skipped", "no tests"):
            first = _clip(" ".join((_candidate_message(r) if candidate else r.message).split()),
                          FIRST_COLUMN)
        lines.append(f"  {r.item.id:<26}{r.score:>4}/{r.item.points:<3}  {r.status.upper():<8} "
                     f"{passed:>3}/{len(r.tests):<3}  {first}")
    for item in kata.rubric:
        if item.graded_by == "interviewer":
            lines.append(f"  {item.id:<26}{'-':>4}/{item.points:<3}  {'--':<8} {'':>7}  "
                         "graded by the interviewer")
    if grade.sandbox is not None:
        s = grade.sandbox
        parts = [label for key, label in (
            ("separate_uid", "own uid"), ("no_network", "no network"),
            ("hidden_repository", "repository hidden"), ("pid_namespace", "own pids"),
            ("seccomp", "seccomp")) if s.get(key)]
        lines += ["", f"  isolation: {s.get('backend', 'worker process')}"
                  + (f" ({', '.join(parts)})" if parts else "")
                  + "".join(f"\n    lacks {n}" for n in s.get("lacks", []))
                  + "".join(f"\n    note: {n}" for n in s.get("notes", []))]
    counts = (f"({len(grade.tests)} tests, {grade.seconds:.1f} s"
              + (f", {grade.restarts} test-process restarts" if grade.restarts else "") + ")")
    if grade.public_only:
        lines += ["", f"  public tests only: {grade.score}/{grade.max_score} rubric points pass "
                  f"them   {counts}",
                  "  NOT A SCORE: the hidden tests that decide a grade are not here "
                  "(a candidate bundle)."]
    else:
        lines += ["", f"  score: {grade.score}/{grade.max_score}   {counts}"]
    details = failure_details(grade, candidate)
    if details:
        lines += ["", "  first failure of each failed item, in full:", *details]
    return "\n".join(lines)


DETAIL_LINES = 60


def failure_details(grade: Grade, candidate: bool = False) -> list[str]:
    """Below the table: each failed rubric item's first failure, whole (the table's column
    holds only its opening words). ``candidate``: public tests only; an item failed by
    hidden tests alone says so and nothing more (their names, sources and messages stay
    in junit.xml and results.json's hidden entries)."""
    lines: list[str] = []
    for r in grade.items:
        if r.status != "failed":
            continue
        bad = next((t for t in r.tests if t.outcome in ("failed", "not run")
                    and (not candidate or t.visibility != "hidden")), None)
        lines.append("")
        if bad is None:
            lines.append(f"  {r.item.id}: failed by hidden tests (their detail is not shown)")
            continue
        where = bad.nodeid if not candidate or bad.visibility != "hidden" else ""
        lines.append(f"  {r.item.id}: {where}")
        body = _explanation(bad.message).splitlines() or [bad.outcome]
        if len(body) > DETAIL_LINES:
            rest = len(body) - DETAIL_LINES
            body = body[:DETAIL_LINES] + [f"... {rest} more lines"
                                          + ("" if candidate else " in junit.xml")]
        lines += [f"    {line}".rstrip() for line in body]
    return lines


def _explanation(message: str) -> str:
    """What a pytest failure says went wrong: its 'E' lines (the assertion's message, the
    comparison, Hypothesis's failing example) and the line that closes them (file:line:
    exception), without the test's source. A message with no 'E' lines (not implemented
    yet, the harness's own verdicts) is whole already."""
    lines = message.splitlines()
    picked: list[str] = []
    closing = ""
    for n, line in enumerate(lines):
        if line.startswith("E ") or line == "E":
            picked.append(line[2:])
        elif line.startswith("... [") and line.endswith("characters cut] ..."):
            picked.append(line)   # the plugin's cut of an overlong message, kept visible
        elif picked and not closing and line.strip() and not line.startswith(" ") \
                and ": " in line and (n == 0 or not lines[n - 1].strip()
                                      or lines[n - 1].startswith("E")):
            closing = line   # "path.py:64: AssertionError" after the block
    if not picked:
        return message.strip()
    return "\n".join([textwrap.dedent("\n".join(picked)).strip(), closing]).strip()


FIRST_COLUMN = 90   # characters of the table's "first failure" column; the rest is below


def _clip(text: str, width: int) -> str:
    """``text`` within ``width`` characters; a cut one ends in "..." (read on below)."""
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def _headline(message: str) -> str:
    """The line of a pytest failure that says what went wrong (its first 'E' line)."""
    for line in message.splitlines():
        if line.startswith("E "):
            return line[1:].strip()
    return message.strip().splitlines()[0] if message.strip() else ""


HIDDEN_VISIBILITIES = ("hidden", "after_published")


def _candidate_message(r: ItemResult) -> str:
    """What a candidate may read about one rubric item: pass or fail, and the failures of
    public tests only. A hidden test's name, path, source or message never appears."""
    public = [t for t in r.tests if t.visibility != "hidden"]
    failed = [t for t in public if t.outcome in ("failed", "not run")]
    hidden_failed = any(t.outcome in ("failed", "not run") for t in r.tests
                        if t.visibility == "hidden")
    if r.status == "passed":
        return f"{len(r.tests)} tests passed"
    if r.status == "no tests":
        return r.message
    if r.status == "skipped":
        return "skipped: no data to grade it on this machine"
    lines = []
    if failed:
        first = failed[0]
        lines.append(f"{len(failed)} of {len(public)} public tests failed; first: {first.nodeid}\n"
                     + first.message[:MESSAGE_CHARS])
    if hidden_failed:
        lines.append("hidden tests failed (their detail is not shown)")
    return "\n".join(lines)


def results_json(grade: Grade, hidden_visibility: str = "hidden") -> dict[str, Any]:
    """The Gradescope autograder schema: one entry per rubric item (carrying the points),
    then one per test (no points).

    Safe to show a candidate as it is: every entry with visibility "visible" (and the
    top-level "output") carries only the rubric item, its points, pass or fail, and the
    failures of public tests. Hidden tests' names, paths, sources and messages appear only
    in their own entries, with ``hidden_visibility`` ("hidden", or "after_published" for
    teams that show them once grades are published)."""
    if hidden_visibility not in HIDDEN_VISIBILITIES:
        raise ValueError(f"hidden_visibility must be one of {HIDDEN_VISIBILITIES}")
    tests: list[dict[str, Any]] = []
    for n, r in enumerate(grade.items, 1):
        tests.append({"name": f"rubric: {r.item.id}", "number": str(n), "score": r.score,
                      "max_score": r.item.points if r.status != "skipped" else 0,
                      "status": "passed" if r.status in ("passed", "skipped") else "failed",
                      "output": f"{r.item.description}\n{_candidate_message(r)}",
                      "visibility": "visible", "tags": ["rubric", r.item.id]})
    for t in grade.tests:
        hidden = t.visibility == "hidden"
        tests.append({"name": t.nodeid, "score": 0, "max_score": 0,
                      "status": "passed" if t.outcome in ("passed", "skipped") else "failed",
                      "output": t.message[:MESSAGE_CHARS],
                      "visibility": hidden_visibility if hidden else "visible",
                      "tags": [t.rubric, t.visibility, t.outcome]})
    return {
        "score": grade.score,
        "max_score": grade.max_score,
        "execution_time": round(grade.seconds, 2),
        "output": table(grade, candidate=True),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "kata": grade.kata.name,
            "implementation": grade.impl,
            "hypothesis_profile": grade.profile,
            "seed": grade.seed,
            "restarts": grade.restarts,
            "public_only": grade.public_only,
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


def write_reports(grade: Grade, out: Path, hidden_visibility: str = "hidden") -> None:
    """results.json (safe to show a candidate) and junit.xml (full detail, for the
    hiring team only) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    data = results_json(grade, hidden_visibility)
    tmp = out / "results.json.tmp"
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
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
    parser.add_argument("--rubric", default=None,
                        help="grade only this rubric item (or several: a,b,c)")
    parser.add_argument("--timeout", type=float, default=PER_TEST_TIMEOUT_S,
                        help="seconds per test (default %(default)s)")
    parser.add_argument("--in-process", action="store_true",
                        help="run the submission inside the test process (faster, unsafe "
                             "for untrusted code; the default isolates it in a worker)")
    parser.add_argument("--require-isolation", action="store_true",
                        help="fail (exit 2) rather than run the submission with less than "
                             "bubblewrap or the root namespaces around it")
    parser.add_argument("--profile", default=None, choices=launch.GRADE_PROFILES,
                        help="hypothesis profile (default: grade, or grade_seeded with --seed)")
    parser.add_argument("--fail-under", type=float, default=None,
                        help="exit 1 when the score is below this")
    parser.add_argument("--jobs", type=int, default=1,
                        help="a folder of submissions: grade N at a time")
    parser.add_argument("--shard", default=None, metavar="I/K",
                        help="a folder of submissions: grade only shard I of K")
    parser.add_argument("--hidden-visibility", default="hidden", choices=HIDDEN_VISIBILITIES,
                        help="results.json visibility of the hidden tests' own entries "
                             "(default hidden; after_published shows them to a candidate "
                             "once grades are published)")
    args = parser.parse_args(argv)
    from graders import batch

    if batch.is_batch(args.kata, Path(args.impl)) and args.impl not in ("katas", "solutions"):
        try:
            catalog.load(args.kata)
            shard = batch.parse_shard(args.shard)
            isolation_env(not args.in_process, args.require_isolation)
        except (catalog.CatalogError, ValueError, GradeError) as exc:
            print(f"grade: {exc}", file=sys.stderr)
            return 2
        out = args.out or Path("grade-out")
        print(f"grading every submission in {args.impl} ({args.jobs} at a time)")
        try:
            rows = batch.grade_folder(args.kata, Path(args.impl), out, args.jobs, shard,
                                      seed=args.seed, per_test_timeout=args.timeout,
                                      isolate=not args.in_process,
                                      hidden_visibility=args.hidden_visibility,
                                      rubric=args.rubric,
                                      require_isolation=args.require_isolation,
                                      profile=args.profile)
        except batch.BatchError as exc:
            print(f"grade: {exc}", file=sys.stderr)
            return 2
        print(f"\n  {len(rows)} submissions; summary: {out / 'summary.csv'}")
        return 0
    try:
        grade = run(args.kata, args.impl, seed=args.seed, rubric=args.rubric,
                    profile=args.profile,
                    per_test_timeout=args.timeout, isolate=not args.in_process,
                    require_isolation=args.require_isolation)
    except (catalog.CatalogError, GradeError) as exc:
        print(f"grade: {exc}", file=sys.stderr)
        return 2
    print(table(grade))
    if args.out:
        write_reports(grade, args.out, args.hidden_visibility)
        print(f"\n  reports: {args.out / 'results.json'}, {args.out / 'junit.xml'}")
    if args.fail_under is not None and grade.score < args.fail_under:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
