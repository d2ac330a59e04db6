"""Whole tokens are capped at capacity but the fractional carry keeps growing while full, so the balance creeps above capacity.

Rubric: conservation
"""

from __future__ import annotations

import math


def _time(now: object) -> float:
    if not isinstance(now, (int, float)) or isinstance(now, bool) or not math.isfinite(now):
        raise ValueError(f"time must be a finite number, got {now!r}")
    return float(now)


def _count(n: object, what: str) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"{what} must be a non-negative int, got {n!r}")
    return n


class TokenBucket:
    """Incremental style: ``tokens`` is brought up to date at every call."""

    def __init__(self, capacity: int, refill_per_s: float, start: float = 0.0) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity <= 0:
            raise ValueError("capacity must be a positive int")
        rate = _time(refill_per_s)
        if rate <= 0:
            raise ValueError("refill_per_s must be positive")
        self.capacity = capacity
        self.rate = rate
        self.tokens = float(capacity)
        self.carry = 0.0
        self.last = _time(start)
        self.live: dict[str, int] = {}

    def _refill(self, now: float) -> None:
        # Whole tokens and a fractional carry, to keep the token count integral.
        if now > self.last:
            self.carry += (now - self.last) * self.rate
            whole = math.floor(self.carry)
            self.carry -= whole
            self.tokens = min(float(self.capacity), self.tokens + whole)
            self.last = now

    def _tokens_at(self, t: float) -> float:
        return min(float(self.capacity), self.tokens + self.carry + max(0.0, t - self.last) * self.rate)

    def admit(self, request_id: str, prompt_tokens: int, max_new_tokens: int,
              now: float) -> tuple[str, float]:
        if not isinstance(request_id, str):
            raise TypeError("request_id must be a str")
        need = _count(prompt_tokens, "prompt_tokens") + _count(max_new_tokens, "max_new_tokens")
        now = _time(now)
        if request_id in self.live:
            raise ValueError(f"{request_id!r} is live")
        self._refill(now)
        if need > self.capacity:
            return ("rejected", math.inf)
        if self.tokens + self.carry >= need:
            self.tokens -= need
            self.live[request_id] = max_new_tokens
            return ("admitted", 0.0)
        wait = (self.last - now) + (need - self.tokens - self.carry) / self.rate
        step = math.ulp(now + wait)
        while self._tokens_at(now + wait) < need:
            wait += step
            step *= 2
        return ("wait", wait)

    def finish(self, request_id: str, generated_tokens: int, now: float) -> None:
        max_new = self.live[request_id]
        generated = _count(generated_tokens, "generated_tokens")
        if generated > max_new:
            raise ValueError("generated_tokens exceeds max_new_tokens")
        now = _time(now)
        self._refill(now)
        del self.live[request_id]
        self.tokens = min(float(self.capacity), self.tokens + (max_new - generated))

    def available(self, now: float) -> float:
        self._refill(_time(now))
        return self.tokens + self.carry
