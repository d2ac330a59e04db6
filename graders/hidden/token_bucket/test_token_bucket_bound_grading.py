"""Hidden grading of the candidate's own bound test (rubric item your_bound_test).

The candidate's test file is the one beside the implementation under test (see
tests.token_bucket.helpers.bound_test_file). It is candidate code: each target below runs
it in the sandbox (graders/candidate_tests.py), in a fresh scratch folder, with the target
handed over as the same neutral module whatever it is, under the grade profile without
shrinking. The targets come in an order drawn afresh in every test process, so only the
bucket's behaviour tells the file which one it has. The file must pass against the
reference and fail against every variant that breaks the bound; the item scores only if
all of these tests pass. Only the run's exit status counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graders import candidate_tests, impl
from graders.authoring import mutant
from tests.token_bucket.helpers import bound_test_file, run_bound_test, tail

REFERENCE = "reference"
# The mutants that break the prompt's bound, each with the way the prompt names it.
BOUND_BREAKERS = {
    "refund_twice": "a second finish of the same id refunds again instead of raising",
    "refund_above_capacity": "a refund can lift the balance past capacity",
    "reserve_prompt_only": "admission reserves the prompt only, not prompt + max_new",
    "backwards_clock_mints": "a call with an earlier now mints tokens",
    "fraction_carry_overflow": "the balance creeps above capacity over many small "
                               "refills while full",
}
PROFILE = "grade"      # always: the item is graded the same however the suite runs


def _target_file(name: str) -> Path:
    """The file holding target ``name``: the one place that maps a target to a file (a
    bound-breaking mutant is built from its patch into a scratch folder of this process)."""
    if name == REFERENCE:
        return impl.submission_file("token_bucket", "solutions")
    return mutant.scratch_file("token_bucket", name)


@pytest.mark.rubric("your_bound_test")
@pytest.mark.parametrize("target", candidate_tests.shuffled([REFERENCE, *BOUND_BREAKERS]))
def test_your_bound_test_on_target(target: str) -> None:
    """Rules: Write a property test; One file beside the bucket
    Rules: Passes on a correct bucket; Fails on every breaker
    """
    path = bound_test_file()
    assert path.is_file(), (
        f"no bound test found at {path}: the item your_bound_test needs your completed "
        f"{path.name} beside the implementation")
    # PROFILE is "grade" for the sandbox whatever the suite runs under: pass it as the parent
    run = run_bound_test(path, _target_file(target), PROFILE)
    if run.stub:
        raise NotImplementedError(f"{path} still raises NotImplementedError: write your "
                                  "property test")
    if target == REFERENCE:
        assert run.passed, (
            f"{path} must pass against a correct bucket (the reference), but it did not "
            f"({run.summary()}). A test that fails on a correct bucket is too strict: check "
            f"your tolerances (1e-6 tokens) and anything you assume beyond the prompt."
            f"\n{tail(run.output)}")
    else:
        assert run.caught, (
            f"{path} must fail against a bucket that breaks the bound (one where "
            f"{BOUND_BREAKERS[target]}), but no test failed ({run.summary()}; a collection "
            f"or usage error does not count).\n{tail(run.output)}")
