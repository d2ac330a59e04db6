"""Your property test of the token bucket's conservation bound (graded: item your_bound_test).

Complete this file. The grader runs it with pytest in a separate process, under the
``grade`` Hypothesis profile, once against the reference solution (every test here must
pass) and once against each of several broken buckets that break the bound (this file must
fail on each of them). See "Your bound test" in katas/token_bucket/README.md.

Reach the bucket under test only through ``tb`` (never import katas.* or solutions.*):
``tb.TokenBucket(capacity, refill_per_s, start)``. Run it against your own bucket with
``python -m pytest katas/token_bucket/test_token_bucket_bound.py``.
"""

from graders.impl import kata_impl

tb = kata_impl("token_bucket")


def test_conservation_bound() -> None:
    # Replace this with your property test: schedules of admit / finish / available calls
    # over time, checking the bound after every step against your own ledger.
    raise NotImplementedError(
        "test_conservation_bound: write your property test of the bound "
        "(see katas/token_bucket/README.md, 'Your bound test')")
