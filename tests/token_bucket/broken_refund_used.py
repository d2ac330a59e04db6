"""A deliberately broken bucket for the public check of your bound test.

Its bug: ``finish`` refunds the whole ``max_new_tokens``, including the tokens the request
did generate, so every finished request mints ``generated_tokens`` tokens. Your bound test
must fail against it (it breaks bound 2 and bound 3 of the prompt).
"""

from __future__ import annotations

import math


class TokenBucket:
    def __init__(self, capacity: int, refill_per_s: float, start: float = 0.0) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity <= 0:
            raise ValueError("capacity must be a positive int")
        if not isinstance(refill_per_s, (int, float)) or not math.isfinite(refill_per_s) \
                or refill_per_s <= 0:
            raise ValueError("refill_per_s must be a positive finite number")
        self.capacity = capacity
        self.rate = float(refill_per_s)
        self.clock = float(start)
        self.anchor = self.clock
        self.balance = float(capacity)
        self.live: dict[str, int] = {}

    def _at(self, now: float) -> float:
        if not isinstance(now, (int, float)) or isinstance(now, bool) or not math.isfinite(now):
            raise ValueError(f"bad time {now!r}")
        self.clock = max(self.clock, float(now))
        return min(float(self.capacity), self.balance + (self.clock - self.anchor) * self.rate)

    def admit(self, request_id: str, prompt_tokens: int, max_new_tokens: int,
              now: float) -> tuple[str, float]:
        for v in (prompt_tokens, max_new_tokens):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError("sizes must be non-negative ints")
        if not isinstance(request_id, str) or request_id in self.live:
            raise ValueError("bad or live request id")
        need = prompt_tokens + max_new_tokens
        b = self._at(now)
        if need > self.capacity:
            return ("rejected", math.inf)
        if b >= need:
            self.anchor, self.balance = self.clock, b - need
            self.live[request_id] = max_new_tokens
            return ("admitted", 0.0)
        wait = (self.clock - now) + (need - b) / self.rate
        step = math.ulp(now + wait)
        while min(float(self.capacity),
                  self.balance + (now + wait - self.anchor) * self.rate) < need:
            wait += step
            step *= 2
        return ("wait", wait)

    def finish(self, request_id: str, generated_tokens: int, now: float) -> None:
        max_new = self.live[request_id]
        if not isinstance(generated_tokens, int) or not 0 <= generated_tokens <= max_new:
            raise ValueError("bad generated_tokens")
        b = self._at(now)
        del self.live[request_id]
        self.anchor, self.balance = self.clock, min(float(self.capacity), b + max_new)  # BUG

    def available(self, now: float) -> float:
        return self._at(now)
