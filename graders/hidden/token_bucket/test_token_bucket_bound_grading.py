"""Hidden grading of the candidate's own bound test (rubric item your_bound_test).

The candidate's test file is the one beside the implementation under test (see
tests.token_bucket.helpers.bound_test_file). It is candidate code, so it never runs in this
process: each target below runs it with pytest in a subprocess, under the grade profile
without shrinking (tests/token_bucket/bound_profile.py). It must pass against the reference
and fail against every mutant that breaks the bound; the item scores only if all of these
tests pass.
"""

from __future__ import annotations

import pytest

from graders import mutant
from tests.token_bucket.helpers import BoundRun, bound_test_file, run_bound_test, tail

# The mutants that break the prompt's bound (each named in the prompt's list of ways).
BOUND_BREAKERS = [
    "refund_twice",
    "refund_above_capacity",
    "reserve_prompt_only",
    "backwards_clock_mints",
    "fraction_carry_overflow",
]
PROFILE = "grade"      # always: the item is graded the same however the suite runs


def _run(target: str) -> tuple[BoundRun, str]:
    path = bound_test_file()
    assert path.is_file(), (
        f"no bound test found at {path}: the item your_bound_test needs your completed "
        f"{path.name} beside the implementation")
    run = run_bound_test(path, target, PROFILE)
    if run.stub:
        raise NotImplementedError(f"{path} is still the stub: write your property test")
    return run, str(path)


@pytest.mark.rubric("your_bound_test")
def test_your_bound_test_passes_on_the_reference():
    run, path = _run("solutions")
    assert run.passed, (
        f"{path} must pass against a correct bucket (the reference), but it did not "
        f"({run.summary()}). A test that fails on a correct bucket is too strict: check your "
        f"tolerances (1e-6 tokens) and anything you assume beyond the prompt.\n{tail(run.output)}")


@pytest.mark.rubric("your_bound_test")
@pytest.mark.parametrize("name", BOUND_BREAKERS)
def test_your_bound_test_fails_on_a_bound_breaking_bucket(name):
    run, path = _run(str(_target_file(name)))
    assert run.caught, (
        f"{path} must fail against a bucket that breaks the bound (one where "
        f"{_bug_of(name)}), but no test failed ({run.summary()}; a collection or usage "
        f"error does not count).\n{tail(run.output)}")


def _target_file(name):
    """The bound-breaking mutant ``name``, built from its patch into a scratch folder."""
    return mutant.scratch_file("token_bucket", name)


def _bug_of(name) -> str:
    bug = mutant.load("token_bucket", name).bug
    return bug[0].lower() + bug[1:].rstrip(".")
