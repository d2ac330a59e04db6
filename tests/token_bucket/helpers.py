"""Shared by the public and hidden token_bucket tests: an exact model of the bucket, the
tolerances the prompt states, and the runner for the candidate's own bound test."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

from graders import candidate_tests, catalog, impl

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
# The candidate's own bound test: where it lives, and how it is run (never in-process;
# under grading only in the sandbox: graders/candidate_tests.py).

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


def run_bound_test(test_file: Path, target: Path, parent_profile: str | None) -> candidate_tests.Run:
    """Run the candidate's ``test_file`` against the bucket in ``target`` (a file), handed
    over as the neutral module that ``kata_impl("token_bucket")`` returns there, under the
    parent run's Hypothesis profile without shrinking. In the sandbox, except in practice."""
    return candidate_tests.run(
        "token_bucket", test_file, target, profile=candidate_tests.profile_for(parent_profile),
        sandboxed=candidate_tests.needs_sandbox(parent_profile, impl.isolated()),
        timeout=BOUND_TEST_TIMEOUT_S)


def tail(text: str, chars: int = 2500) -> str:
    return text if len(text) <= chars else "...\n" + text[-chars:]
