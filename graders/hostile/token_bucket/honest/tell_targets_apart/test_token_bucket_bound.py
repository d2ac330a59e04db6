"""A weak but honest bound test: it tests one behaviour."""

import pytest

from graders.impl import kata_impl

tb = kata_impl("token_bucket")


def test_a_second_finish_raises():
    """Genuine but weak: catches a double refund, nothing else."""
    b = tb.TokenBucket(100, 1.0, 0.0)
    assert tuple(b.admit("a", 10, 20, 0.0)) == ("admitted", 0.0)
    b.finish("a", 5, 1.0)
    with pytest.raises(KeyError):
        b.finish("a", 5, 2.0)

