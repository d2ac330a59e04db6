"""A request whose need equals the balance exactly is told to wait 0 s instead of being admitted.

Rubric: wait_time

Written blind (from the prompt and the stub only), in a candidate's style: admission tests
``tokens > need`` where the rule is ``tokens >= need``, so an exact fit gets ("wait", 0.0),
and the caller who retries at now + 0 is told to wait again, forever.
"""

from __future__ import annotations

import math


class TokenBucket:
    def __init__(self, capacity: int, refill_per_s: float, start: float = 0.0) -> None:
        if type(capacity) is not int or capacity <= 0:
            raise ValueError("capacity must be a positive int")
        if type(refill_per_s) not in (int, float) or not math.isfinite(refill_per_s) \
                or refill_per_s <= 0:
            raise ValueError("refill_per_s must be a positive finite number")
        if type(start) not in (int, float) or not math.isfinite(start):
            raise ValueError("start must be finite")
        self.cap = capacity
        self.rate = float(refill_per_s)
        self.tokens = float(capacity)
        self.t = float(start)
        self.reqs: dict[str, int] = {}

    @staticmethod
    def _check_now(now: float) -> float:
        if type(now) not in (int, float) or not math.isfinite(now):
            raise ValueError(f"bad now: {now!r}")
        return float(now)

    def _sync(self, now: float) -> float:
        if now > self.t:
            self.tokens = min(self.cap, self.tokens + (now - self.t) * self.rate)
            self.t = now
        return self.t

    def admit(self, request_id: str, prompt_tokens: int, max_new_tokens: int,
              now: float) -> tuple[str, float]:
        if type(request_id) is not str:
            raise TypeError("request_id must be a str")
        for n in (prompt_tokens, max_new_tokens):
            if type(n) is not int or n < 0:
                raise ValueError("token counts must be non-negative ints")
        now = self._check_now(now)
        if request_id in self.reqs:
            raise ValueError("duplicate live request id")
        need = prompt_tokens + max_new_tokens
        t = self._sync(now)
        if need > self.cap:
            return ("rejected", math.inf)
        if self.tokens > need:
            self.tokens -= need
            self.reqs[request_id] = max_new_tokens
            return ("admitted", 0.0)
        wait = (t - now) + (need - self.tokens) / self.rate
        while min(self.cap, self.tokens + (now + wait - t) * self.rate) < need:
            wait = max(math.nextafter(wait, math.inf), wait + math.ulp(now + wait))
        return ("wait", wait)

    def finish(self, request_id: str, generated_tokens: int, now: float) -> None:
        if request_id not in self.reqs:
            raise KeyError(request_id)
        max_new = self.reqs[request_id]
        if type(generated_tokens) is not int or not 0 <= generated_tokens <= max_new:
            raise ValueError("generated_tokens must be an int in [0, max_new_tokens]")
        now = self._check_now(now)
        self._sync(now)
        del self.reqs[request_id]
        self.tokens = min(self.cap, self.tokens + max_new - generated_tokens)

    def available(self, now: float) -> float:
        self._sync(self._check_now(now))
        return self.tokens
