"""Shared by the public and hidden token_bucket tests: an exact model of the bucket, the
tolerances the prompt states, and the runner for the candidate's own bound test."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

from graders import catalog, impl
from tests.token_bucket.bound_profile import profile_for

TOK = 1e-6          # tokens: slack the prompt allows on balances and on the bound
LATE = 1e-6         # seconds: how late a "wait" answer may be
BOUND_TEST_FILE = "test_token_bucket_bound.py"
BOUND_TEST_TIMEOUT_S = 50       # below the harness's 60 s per test


class Model:
    """The bucket the prompt describes, in exact rational arithmetic."""

    def __init__(self, capacity: int, rate: float, start: float = 0.0) -> None:
        self.cap = Fraction(capacity)
        self.rate = Fraction(rate)
        self.start = Fraction(start)
        self.clock = self.start
        self.anchor = self.start
        self.bal = self.cap
        self.live: dict[str, tuple[int, int]] = {}   # id -> (prompt, max_new)

    def time_of(self, now: float) -> Fraction:
        return max(Fraction(now), self.clock)

    def balance(self, now: float) -> Fraction:
        t = self.time_of(now)
        return min(self.cap, self.bal + (t - self.anchor) * self.rate)

    def move(self, now: float) -> None:
        self.clock = self.time_of(now)

    def admit(self, rid: str, prompt: int, max_new: int, now: float) -> None:
        b = self.balance(now)
        self.move(now)
        self.anchor, self.bal = self.clock, b - (prompt + max_new)
        self.live[rid] = (prompt, max_new)

    def finish(self, rid: str, generated: int, now: float) -> None:
        b = self.balance(now)
        self.move(now)
        _, max_new = self.live.pop(rid)
        self.anchor, self.bal = self.clock, min(self.cap, b + (max_new - generated))

    def wait(self, need: int, now: float) -> Fraction:
        """Exact seconds from ``now`` until the balance reaches ``need``."""
        t = self.time_of(now)
        return (t - Fraction(now)) + (need - self.balance(now)) / self.rate


def outcome(result: object) -> tuple[str, float]:
    """Unpack an ``admit`` answer, failing clearly on a malformed one."""
    assert isinstance(result, (tuple, list)) and len(result) == 2, (
        f"admit must return a (status, seconds) pair, got {result!r}")
    status, seconds = result
    assert status in ("admitted", "wait", "rejected"), (
        f"admit's status must be 'admitted', 'wait' or 'rejected', got {status!r}")
    assert isinstance(seconds, (int, float)) and not isinstance(seconds, bool), (
        f"admit's seconds must be a number, got {seconds!r}")
    if status == "admitted":
        assert seconds == 0.0, f"an admission answers ('admitted', 0.0), got {result!r}"
    elif status == "rejected":
        assert seconds == math.inf, f"a rejection answers ('rejected', math.inf), got {result!r}"
    else:
        assert 0.0 < seconds < math.inf, f"a wait must be positive and finite, got {result!r}"
    return str(status), float(seconds)


def drain(bucket: object, capacity: int, now: float, rate: float) -> float:
    """Empty a full bucket in admissions smaller than capacity (so that a wrong rule at
    exactly capacity, which fail_fast grades, does not fail other items). Returns the time
    at which it is empty: a piece that is a rounding hair short of fitting (within the 1e-6
    token tolerance) is told to wait a moment, and is admitted after that moment."""
    pieces = [capacity] if capacity == 1 else [capacity - 1, 1]
    for i, n in enumerate(pieces):
        status, wait = outcome(bucket.admit(f"drain-{i}", n, 0, now))  # type: ignore[attr-defined]
        if status == "wait" and wait <= 2 * TOK / rate:
            now = now + wait
            status, wait = outcome(bucket.admit(f"drain-{i}", n, 0, now))  # type: ignore[attr-defined]
        assert status == "admitted", f"a full bucket of {capacity} must admit {n} (draining it)"
    return now


def history(log: list[str], last: int = 25) -> str:
    lines = log[-last:]
    skipped = len(log) - len(lines)
    head = [f"... ({skipped} earlier calls)"] if skipped else []
    return "\n    ".join(["calls so far:"] + head + lines)


# ----------------------------------------------------------------------------------------
# The candidate's own bound test: where it lives, and how it is run (never in-process).

def bound_test_file() -> Path:
    """The bound test that goes with the implementation under test (``--impl``).

    katas -> katas/token_bucket/test_token_bucket_bound.py; solutions -> the reference's
    own, solutions/token_bucket/test_token_bucket_bound.py; a folder -> the file beside
    the implementation found in it. A single .py submission has no bound test.
    """
    spec = impl.current_spec()
    if spec == "katas":
        return catalog.KATAS_DIR / "token_bucket" / BOUND_TEST_FILE
    if spec == "solutions":
        return catalog.SOLUTIONS_DIR / "token_bucket" / BOUND_TEST_FILE
    path = Path(spec).expanduser()
    if path.is_file() and path.name == "__init__.py":
        return path.parent / BOUND_TEST_FILE       # a folder, as the grade driver passes it
    if path.is_file():
        raise AssertionError(
            f"the submission {spec} is a single .py file, so it has no bound test: submit the "
            f"kata folder, with your {BOUND_TEST_FILE} beside its __init__.py")
    found = impl.resolve_submission("token_bucket", spec)
    return found.parent / BOUND_TEST_FILE


class BoundRun:
    """The outcome of one run of a bound test file."""

    def __init__(self, rc: int, output: str, outcomes: dict[str, str]) -> None:
        self.rc, self.output, self.outcomes = rc, output, outcomes

    @property
    def stub(self) -> bool:
        return "not implemented yet" in self.output

    @property
    def passed(self) -> bool:
        """Every collected test passed (and there was at least one)."""
        return (self.rc == 0 and bool(self.outcomes)
                and all(o in ("passed", "skipped") for o in self.outcomes.values())
                and any(o == "passed" for o in self.outcomes.values()))

    @property
    def caught(self) -> bool:
        """At least one test ran and failed (not a collection or usage error)."""
        return self.rc == 1 and any(o == "failed" for o in self.outcomes.values())

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for o in self.outcomes.values():
            counts[o] = counts.get(o, 0) + 1
        got = ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or "no test ran"
        return f"pytest exit code {self.rc}; {got}"


def run_bound_test(test_file: Path, impl_spec: str, parent_profile: str | None) -> BoundRun:
    """Run ``test_file`` with pytest in a subprocess against ``impl_spec``, under the parent
    run's Hypothesis profile without shrinking (tests/token_bucket/bound_profile.py)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "COV_", "HYPOTHESIS_", "KATA_"))}
    env["PYTHONPATH"] = str(catalog.ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["HF_HUB_OFFLINE"] = "1"
    with tempfile.TemporaryDirectory(prefix="bound-test-") as tmp:
        progress = Path(tmp) / "progress.jsonl"
        cmd = [sys.executable, "-m", "pytest", str(test_file), "--impl", impl_spec,
               "-c", str(catalog.ROOT / "pyproject.toml"), "--rootdir", str(catalog.ROOT),
               "--import-mode=importlib", "-q", "-x", "--no-header", "--no-rubric-summary",
               "--progress", str(progress)]
        cmd += ["-p", "tests.token_bucket.bound_profile",
                "--hypothesis-profile", profile_for(parent_profile)]
        try:
            done = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True,
                                  timeout=BOUND_TEST_TIMEOUT_S, check=False)
            rc, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as exc:
            text = exc.stdout if isinstance(exc.stdout, str) else ""
            rc, output = -1, f"timed out after {BOUND_TEST_TIMEOUT_S} s\n{text}"
        outcomes: dict[str, str] = {}
        if progress.is_file():
            for line in progress.read_text(encoding="utf-8").splitlines():
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if event.get("event") == "result":
                    outcomes[str(event.get("nodeid"))] = str(event.get("outcome"))
    return BoundRun(rc, output, outcomes)


def tail(text: str, chars: int = 2500) -> str:
    return text if len(text) <= chars else "...\n" + text[-chars:]
