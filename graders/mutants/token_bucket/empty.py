"""Trivial answers: admits everything, refunds nothing, reports a constant balance.

Rubric: *
"""

from __future__ import annotations


class TokenBucket:
    def __init__(self, capacity: int, refill_per_s: float, start: float = 0.0) -> None:
        pass

    def admit(self, request_id: str, prompt_tokens: int, max_new_tokens: int,
              now: float) -> tuple[str, float]:
        return ("admitted", 0.0)

    def finish(self, request_id: str, generated_tokens: int, now: float) -> None:
        return None

    def available(self, now: float) -> float:
        return 0.0
