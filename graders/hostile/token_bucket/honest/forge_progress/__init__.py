"""Honest baseline of forge_progress: the stub with an honest bound test that fails.

Class: candidate-tests
"""


import math


class TokenBucket:
    def __init__(self, capacity: int, refill_per_s: float, start: float = 0.0) -> None:
        raise NotImplementedError("TokenBucket: not written")

    def admit(self, request_id: str, prompt_tokens: int, max_new_tokens: int,
              now: float) -> tuple[str, float]:
        raise NotImplementedError("admit: not written")

    def finish(self, request_id: str, generated_tokens: int, now: float) -> None:
        raise NotImplementedError("finish: not written")

    def available(self, now: float) -> float:
        raise NotImplementedError("available: not written")


_ = math.inf
