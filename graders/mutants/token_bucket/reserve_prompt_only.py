"""Admit reserves only the prompt tokens, not the worst case prompt + max_new.

Rubric: reserve_refund
"""

from __future__ import annotations

import math

_Number = (int, float)


def _check_time(now: object, what: str = "now") -> float:
    if not isinstance(now, _Number) or isinstance(now, bool):
        raise TypeError(f"{what} must be a number, got {now!r}")
    if not math.isfinite(now):
        raise ValueError(f"{what} must be finite, got {now!r}")
    return float(now)


def _check_count(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{what} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be >= 0, got {value}")
    return value


class TokenBucket:
    def __init__(self, capacity: int, refill_per_s: float, start: float = 0.0) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity <= 0:
            raise ValueError(f"capacity must be a positive int, got {capacity!r}")
        rate = _check_time(refill_per_s, "refill_per_s")
        if rate <= 0:
            raise ValueError(f"refill_per_s must be positive, got {refill_per_s!r}")
        self._capacity = capacity
        self._rate = rate
        self._clock = _check_time(start, "start")
        self._anchor = self._clock
        self._balance = float(capacity)
        self._live: dict[str, int] = {}  # request id -> its max_new_tokens

    def _balance_at(self, t: float) -> float:
        """The balance at time ``t >= self._anchor`` if nothing else happens."""
        return min(float(self._capacity), self._balance + (t - self._anchor) * self._rate)

    def _move_to(self, now: float) -> float:
        """Advance the clock to ``now`` (never back); returns the time the call acts at."""
        self._clock = max(self._clock, now)
        return self._clock

    def _set_balance(self, t: float, balance: float) -> None:
        self._anchor, self._balance = t, balance

    def admit(self, request_id: str, prompt_tokens: int, max_new_tokens: int,
              now: float) -> tuple[str, float]:
        if not isinstance(request_id, str):
            raise TypeError(f"request_id must be a str, got {request_id!r}")
        need = (_check_count(prompt_tokens, "prompt_tokens")
                + _check_count(max_new_tokens, "max_new_tokens"))
        now = _check_time(now)
        if request_id in self._live:
            raise ValueError(f"request {request_id!r} is already live")
        t = self._move_to(now)
        if need > self._capacity:
            return ("rejected", math.inf)
        balance = self._balance_at(t)
        if balance >= need:
            self._set_balance(t, balance - prompt_tokens)
            self._live[request_id] = max_new_tokens
            return ("admitted", 0.0)
        # The caller will come back at now + wait, computed in floats: make sure that time
        # really is late enough, whatever the rounding did.
        # Steps start at one ulp of the time the caller will compute and double, so the
        # loop ends fast even when the balance's own ulp is coarse.
        wait = (t - now) + (need - balance) / self._rate
        step = math.ulp(now + wait)
        while self._balance_at(now + wait) < need:
            wait += step
            step *= 2
        return ("wait", wait)

    def finish(self, request_id: str, generated_tokens: int, now: float) -> None:
        if request_id not in self._live:
            raise KeyError(f"request {request_id!r} is not live (unknown or already finished)")
        max_new = self._live[request_id]
        generated = _check_count(generated_tokens, "generated_tokens")
        if generated > max_new:
            raise ValueError(
                f"generated_tokens={generated} exceeds the request's max_new_tokens={max_new}")
        now = _check_time(now)
        t = self._move_to(now)
        del self._live[request_id]
        self._set_balance(t, min(float(self._capacity), self._balance_at(t) + (max_new - generated)))

    def available(self, now: float) -> float:
        return self._balance_at(self._move_to(_check_time(now)))
