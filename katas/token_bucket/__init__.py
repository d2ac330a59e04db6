"""token_bucket: token-bucket admission control with reservation and refund.

Fill in every method. The prompt is katas/token_bucket/README.md; run the public tests with
``nox -s kata -- token_bucket``. You also complete the property test in
katas/token_bucket/test_token_bucket_bound.py (graded: see the prompt).

The bucket holds a balance of tokens between 0 and ``capacity``; it refills at
``refill_per_s`` tokens per second of the bucket's clock. Admitting a request reserves its
worst case, ``prompt_tokens + max_new_tokens``; finishing it refunds what it did not use,
``max_new_tokens - generated_tokens``, exactly once. Time is passed in by the caller: the bucket's clock is the latest ``now``
that any successful call has passed, and a call with an earlier ``now`` is handled at the
clock's time (time never runs backwards, so an earlier ``now`` mints nothing).
"""

from __future__ import annotations

_PROMPT = "see katas/token_bucket/README.md"


class TokenBucket:
    """A token bucket that reserves each request's worst case and refunds the unused part."""

    def __init__(self, capacity: int, refill_per_s: float, start: float = 0.0) -> None:
        """A full bucket (balance = ``capacity``) whose clock reads ``start``.

        Raises TypeError or ValueError unless ``capacity`` is a positive int,
        ``refill_per_s`` a positive finite number and ``start`` a finite number
        (bools are not numbers here).
        """
        raise NotImplementedError(f"TokenBucket.__init__ ({_PROMPT})")

    def admit(self, request_id: str, prompt_tokens: int, max_new_tokens: int,
              now: float) -> tuple[str, float]:
        """Try to admit a request at time ``now``. Returns one of

        - ``("admitted", 0.0)``: ``prompt_tokens + max_new_tokens`` tokens are now reserved
          for ``request_id``, which stays live until ``finish``;
        - ``("wait", seconds)``: not enough tokens now; ``seconds > 0`` is the exact time
          until this same call would be admitted if nothing else happened (never early, at
          most 1e-6 s late). Nothing is reserved;
        - ``("rejected", math.inf)``: the worst case exceeds ``capacity``, so the request
          can never fit. Nothing is reserved.

        Raises (changing nothing, not even the clock): TypeError or ValueError for a
        non-str id, non-int or negative sizes, a non-finite ``now``; ValueError when
        ``request_id`` is already live.
        """
        raise NotImplementedError(f"TokenBucket.admit ({_PROMPT})")

    def finish(self, request_id: str, generated_tokens: int, now: float) -> None:
        """The live request ended (completed or aborted) after generating
        ``generated_tokens``: refund ``max_new_tokens - generated_tokens`` (the balance
        stays at most ``capacity``) and forget the request.

        Raises (changing nothing, not even the clock): KeyError when ``request_id`` is not
        live (unknown, or already finished); TypeError or ValueError for a non-int
        ``generated_tokens``, one below 0 or above the request's ``max_new_tokens``, or a
        non-finite ``now``.
        """
        raise NotImplementedError(f"TokenBucket.finish ({_PROMPT})")

    def available(self, now: float) -> float:
        """The balance at time ``now``: always between 0 and ``capacity``.

        Raises TypeError or ValueError for a non-finite ``now`` (changing nothing).
        """
        raise NotImplementedError(f"TokenBucket.available ({_PROMPT})")
