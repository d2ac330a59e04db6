"""Alternative correct solution: the bucket stored as the time at which it will be full.

Written for the project from the prompt and the stub only (by the kata's author, as a
different design from the reference): instead of a balance it keeps ``full_at``, the time
at which the bucket would be full if nothing happened (GCRA's "theoretical arrival time").
The balance at time t is ``capacity - max(0, full_at - t) * rate``; an admission pushes
``full_at`` later by ``need / rate``, a refund pulls it earlier (not before now). It refills
nothing explicitly, and its rounding differs from the reference's.
"""

from __future__ import annotations

import math


def _finite(x: object, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"{name}: expected a number, got {type(x).__name__}")
    if not math.isfinite(x):
        raise ValueError(f"{name}: expected a finite number, got {x}")
    return float(x)


def _size(x: object, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"{name}: expected an int, got {type(x).__name__}")
    if x < 0:
        raise ValueError(f"{name}: must not be negative, got {x}")
    return x


class TokenBucket:
    def __init__(self, capacity: int, refill_per_s: float, start: float = 0.0) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int):
            raise TypeError("capacity must be an int")
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        rate = _finite(refill_per_s, "refill_per_s")
        if rate <= 0:
            raise ValueError("refill_per_s must be positive")
        self.capacity, self.rate = capacity, rate
        self.clock = _finite(start, "start")
        self.full_at = self.clock            # full right away
        self.requests: dict[str, int] = {}

    def _level(self, t: float) -> float:
        return max(0.0, self.capacity - max(0.0, self.full_at - t) * self.rate)

    def available(self, now: float) -> float:
        self.clock = max(self.clock, _finite(now, "now"))
        return self._level(self.clock)

    def admit(self, request_id: str, prompt_tokens: int, max_new_tokens: int,
              now: float) -> tuple[str, float]:
        if not isinstance(request_id, str):
            raise TypeError("request_id must be a str")
        need = _size(prompt_tokens, "prompt_tokens") + _size(max_new_tokens, "max_new_tokens")
        now = _finite(now, "now")
        if request_id in self.requests:
            raise ValueError(f"{request_id!r} is already admitted")
        self.clock = max(self.clock, now)
        if need > self.capacity:
            return "rejected", math.inf
        t = self.clock
        if self._level(t) >= need:
            self.full_at = max(self.full_at, t) + need / self.rate
            self.requests[request_id] = max_new_tokens
            return "admitted", 0.0
        # level(x) >= need  <=>  full_at - x <= (capacity - need) / rate
        target = max(t, self.full_at - (self.capacity - need) / self.rate)
        while self._level(target) < need:
            target = math.nextafter(target, math.inf)
        wait = target - now
        while now + wait < target:
            wait += math.ulp(target)
        return "wait", wait

    def finish(self, request_id: str, generated_tokens: int, now: float) -> None:
        if request_id not in self.requests:
            raise KeyError(request_id)
        max_new = self.requests[request_id]
        generated = _size(generated_tokens, "generated_tokens")
        if generated > max_new:
            raise ValueError(f"generated {generated} > max_new_tokens {max_new}")
        now = _finite(now, "now")
        self.clock = max(self.clock, now)
        del self.requests[request_id]
        refund = max_new - generated
        self.full_at = max(self.clock, self.full_at - refund / self.rate)
