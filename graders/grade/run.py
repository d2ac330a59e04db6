"""run(): start the trusted pytest of one kata against one implementation, watch it through
its progress channel, and resume it after whatever the submission did to it.

The tests run in a child pytest process that streams one JSON line per event over a pipe.
This driver survives whatever the submission does to that process: an exit, a crash, a
hang. The test that was running is failed with a message that says what happened, and a
fresh child resumes with the tests not yet run. So the grade always finishes within its
time bound; what did not run scores nothing.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING

from graders import catalog, launch, sandbox
from graders.grade.channel import Channel
from graders.grade.model import (LOAD_POINTER, MISSING_POINTER, Grade, GradeError,
                                 TestResult)
from graders.grade.scoring import score
from graders.impl import SubmissionError, resolve_submission, submission_file

if TYPE_CHECKING:   # imported when first used: python -m graders.grade.warm must not find
    from graders.grade import warm   # itself imported by its package already


PER_TEST_TIMEOUT_S = 60.0


GRACE_S = 15.0


COLLECT_S = 120.0


TRUSTED_MEMORY_BYTES = 4 << 30   # data memory (RLIMIT_DATA) of the trusted pytest


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
    unloadable: str | None = None     # the submission cannot be found or copied
    shown = impl_spec
    uploaded = ""                     # the submission's file as the candidate named it
    if impl_spec.startswith("mutant:"):
        try:   # a known-wrong solution of ours: it must build, or the grade cannot run
            impl_spec = shown = str(resolve_submission(kata_name, impl_spec))
        except SubmissionError as exc:
            raise GradeError(str(exc)) from None
    elif impl_spec not in ("katas", "solutions"):
        given = Path(impl_spec).expanduser()
        given = given if given.is_absolute() else Path.cwd() / given
        try:
            loaded = resolve_submission(kata_name, impl_spec)
            uploaded = loaded.name if given.is_file() else str(loaded.relative_to(given))
            sandbox.copy_submission(loaded, None, given)
            impl_spec = shown = str(given)
        except sandbox.UnsafeSubmission as exc:
            refused, impl_spec = str(exc), str(given)
            shown = impl_spec
        except SubmissionError as exc:
            unloadable = refused = str(exc)
            impl_spec = shown = str(Path(impl_spec).resolve())
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
                    res = TestResult(t["nodeid"], t["rubric"], t["visibility"],
                                     rules=tuple(t.get("rules", ())))
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
                if unloadable:
                    grade.load_error = unloadable
                    for res in grade.tests:
                        res.message = LOAD_POINTER
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
    if grade.load_error is None:
        _find_load_error(grade, uploaded or _spec_file(kata_name, impl_spec))
    score(grade)
    return grade


_IMPORT_FAILED = re.compile(r"the submission (?:for '[^']*' \(.*?\) )?failed to import: ")
_EXITED = re.compile(r"the submission (?:for '[^']*' )?called exit\((.*?)\) while being "
                     r"imported(?:: (File \"[^\n]*))?")
_MISSING = re.compile(r"the implementation of '[^']*' (?:\(.*?\) )?defines no '([^']+)'")
_SCRATCH = re.compile(r'"[^"\n]*?/kata-worker-[^/"\n]+/(?:submission\.py|submission/([^"\n]*))"')


def _spec_file(kata_name: str, spec: str) -> str:
    """How a grade names the file of katas/solutions/mutant implementations."""
    try:
        path = submission_file(kata_name, spec)
    except SubmissionError:
        return spec
    try:
        return str(path.relative_to(catalog.ROOT))
    except ValueError:
        return path.name


def _error_lines(message: str) -> str:
    """A pytest failure's 'E' lines (the exception and its text), dedented."""
    picked = [line[2:] for line in message.splitlines() if line.startswith("E ") or line == "E"]
    return textwrap.dedent("\n".join(picked)).strip() if picked else message.strip()


def _find_load_error(grade: Grade, uploaded: str) -> None:
    """A submission that failed to import, or lacks a name its stub declares, fails its
    tests with one message: say it once (``grade.load_error``, naming the file as
    uploaded, with the line), and let each test it failed point to it."""
    import_error: str | None = None
    missing: list[str] = []
    # public tests first: their text is the candidate's to read
    for res in sorted(grade.tests, key=lambda t: t.visibility == "hidden"):
        if res.outcome not in ("failed", "not run"):
            continue
        text = _error_lines(res.message)
        hit = _IMPORT_FAILED.search(text)
        exited = _EXITED.search(text)
        absent = _MISSING.search(text)
        if hit or exited:
            if import_error is None:
                if hit:
                    body = text[hit.end():]
                    body = body.split("\n\n")[0]
                else:
                    assert exited is not None
                    body = f"it called exit({exited.group(1)}) while being imported" + (
                        f"\n{exited.group(2)}" if exited.group(2) else "")
                import_error = body
            res.message = LOAD_POINTER
        elif absent:
            if absent.group(1) not in missing:
                missing.append(absent.group(1))
            res.message = MISSING_POINTER

    def as_uploaded(m: re.Match[str]) -> str:
        if m.group(1) is None:            # the worker's copy of a one-file submission
            return f'"{uploaded}"'
        folder = uploaded.rsplit("/", 1)[0] + "/" if "/" in uploaded else ""
        return f'"{folder}{m.group(1)}"'  # a file of a package submission

    def named(text: str) -> str:   # no path of the grader's or the sandbox's, only the upload's
        text = _SCRATCH.sub(as_uploaded, text)
        if not Path(grade.impl).is_absolute():    # katas, solutions: the project's own
            return text.replace(str(catalog.ROOT) + "/", "")
        if Path(grade.impl).is_file():
            return text.replace(f'"{grade.impl}"', f'"{uploaded}"')
        return text.replace(grade.impl.rstrip("/") + "/", "")

    if import_error is not None:
        lines = named(import_error).strip().splitlines()
        grade.load_error = (f"{uploaded} could not be loaded, so no test could use it:\n"
                            + "\n".join(f"  {line}" for line in lines))
    elif missing:
        names = ", ".join(repr(n) for n in missing)
        grade.load_error = (f"{uploaded} defines no {names}, which the stub "
                            f"(katas/{grade.kata.name}/__init__.py) declares: every test "
                            "that uses it failed")


def _start(cmd: list[str], env: dict[str, str], out: IO[bytes],
           write_fd: int) -> "subprocess.Popen[bytes] | warm.WarmProcess":
    """The test process: forked from a warm server (graders/grade/warm.py: pytest and numpy
    already imported) where one can be had, else a fresh interpreter; the same either way."""
    from graders.grade import warm

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
            f"network or uid{why}. Install bubblewrap (docs/SECURITY.md) or "
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
