"""Alternative correct solution: exact rational arithmetic.

Written for the project from the prompt and the stub only (by the kata's author, as a
different design from the reference): the balance, the clock and the rate are Fractions,
so there is no rounding inside the bucket at all; only the wait answer is converted to a
float, rounded up, then checked against the exact balance at the float time the caller
will compute. Slower than floats, but every call is still O(1).
"""

from __future__ import annotations

import math
from fractions import Fraction


def _time(x: object) -> Fraction:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"a time must be a number, not {x!r}")
    if not math.isfinite(x):
        raise ValueError(f"a time must be finite, not {x!r}")
    return Fraction(x)


def _count(x: object) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"a token count must be an int, not {x!r}")
    if x < 0:
        raise ValueError(f"a token count must be >= 0, not {x!r}")
    return x


class TokenBucket:
    def __init__(self, capacity: int, refill_per_s: float, start: float = 0.0) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"capacity must be a positive int, not {capacity!r}")
        rate = _time(refill_per_s)
        if rate <= 0:
            raise ValueError(f"refill_per_s must be positive, not {refill_per_s!r}")
        self._cap = Fraction(capacity)
        self._rate = rate
        self._now = _time(start)     # the clock; the balance below is as of this time
        self._tokens = self._cap
        self._max_new: dict[str, int] = {}

    def _advance(self, now: Fraction) -> None:
        if now > self._now:
            self._tokens = min(self._cap, self._tokens + (now - self._now) * self._rate)
            self._now = now

    def _tokens_at(self, t: Fraction) -> Fraction:
        if t <= self._now:
            return self._tokens
        return min(self._cap, self._tokens + (t - self._now) * self._rate)

    def available(self, now: float) -> float:
        self._advance(_time(now))
        return float(self._tokens)

    def admit(self, request_id: str, prompt_tokens: int, max_new_tokens: int,
              now: float) -> tuple[str, float]:
        if not isinstance(request_id, str):
            raise TypeError("request_id must be a str")
        need = _count(prompt_tokens) + _count(max_new_tokens)
        t = _time(now)
        if request_id in self._max_new:
            raise ValueError(f"request {request_id!r} is live already")
        self._advance(t)
        if need > self._cap:
            return ("rejected", math.inf)
        if self._tokens >= need:
            self._tokens -= need
            self._max_new[request_id] = max_new_tokens
            return ("admitted", 0.0)
        ready = self._now + (need - self._tokens) / self._rate     # exact
        # The caller computes now + wait in floats: step the float time it will land on
        # (one ulp of the sum at a time), not wait alone, whose ulp may be far finer.
        wait = float(ready - t)
        while self._tokens_at(Fraction(float(now) + wait)) < need:
            wait += math.ulp(float(now) + wait)
        return ("wait", wait)

    def finish(self, request_id: str, generated_tokens: int, now: float) -> None:
        if request_id not in self._max_new:
            raise KeyError(f"request {request_id!r} is not live")
        max_new = self._max_new[request_id]
        generated = _count(generated_tokens)
        if generated > max_new:
            raise ValueError(f"generated_tokens {generated} > max_new_tokens {max_new}")
        t = _time(now)
        self._advance(t)
        del self._max_new[request_id]
        self._tokens = min(self._cap, self._tokens + (max_new - generated))
