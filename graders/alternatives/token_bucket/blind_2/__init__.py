"""Blind alternative (written from the prompt, the stub and the public tests only).

Design: GCRA-style "virtual time" instead of a stored balance. The bucket keeps one instant,
``_full_at``: the time at which it would be full again; the balance at time t is
``capacity - max(0, _full_at - t) * rate``. Every instant is an exact ``fractions.Fraction``
(floats convert exactly), so admission, refund and the wait answer are exact rationals and only
the returned numbers are rounded, the wait always upwards to the next float the caller can hit.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Integral, Real

_PROMPT = "see katas/token_bucket/README.md"


def _finite(name: str, v: object) -> Fraction:
    if isinstance(v, bool) or not isinstance(v, Real):
        raise TypeError(f"{name} must be a number, got {v!r}")
    if not math.isfinite(float(v)):
        raise ValueError(f"{name} must be finite, got {v!r}")
    return Fraction(v)


def _count(name: str, v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, Integral):
        raise TypeError(f"{name} must be an int, got {v!r}")
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {v!r}")
    return int(v)


def _ceil_float(q: Fraction) -> float:
    """The smallest float >= q."""
    f = float(q)
    if Fraction(f) < q:
        f = math.nextafter(f, math.inf)
    return f


class TokenBucket:
    """A token bucket that reserves each request's worst case and refunds the unused part."""

    def __init__(self, capacity: int, refill_per_s: float, start: float = 0.0) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, Integral):
            raise TypeError(f"capacity must be an int, got {capacity!r}")
        if capacity <= 0:
            raise ValueError(f"capacity must be positive, got {capacity!r}")
        rate = _finite("refill_per_s", refill_per_s)
        if rate <= 0:
            raise ValueError(f"refill_per_s must be positive, got {refill_per_s!r}")
        t0 = _finite("start", start)
        self._cap = int(capacity)
        self._rate = rate
        self._clock = t0
        self._full_at = t0                    # full at start
        self._live: dict[str, int] = {}       # id -> max_new_tokens

    # -- the balance as a function of time -------------------------------------------------

    def _balance_at(self, t: Fraction) -> Fraction:
        deficit_s = self._full_at - t
        if deficit_s <= 0:
            return Fraction(self._cap)
        return self._cap - deficit_s * self._rate

    def _effective(self, now: Fraction) -> Fraction:
        return now if now > self._clock else self._clock

    # -- API ---------------------------------------------------------------------------------

    def admit(self, request_id: str, prompt_tokens: int, max_new_tokens: int,
              now: float) -> tuple[str, float]:
        if not isinstance(request_id, str):
            raise TypeError(f"request_id must be a str, got {request_id!r}")
        p = _count("prompt_tokens", prompt_tokens)
        m = _count("max_new_tokens", max_new_tokens)
        t_now = _finite("now", now)
        if request_id in self._live:
            raise ValueError(f"request {request_id!r} is live")
        # every check passed: the call succeeds, whatever its outcome
        t = self._effective(t_now)
        self._clock = t
        need = p + m
        if need > self._cap:
            return ("rejected", math.inf)
        # the instant the balance reaches `need`: capacity - (full_at - T) * rate == need
        ready_at = self._full_at - (self._cap - need) / self._rate
        if ready_at <= t:
            self._full_at = max(self._full_at, t) + need / self._rate
            self._live[request_id] = m
            return ("admitted", 0.0)
        # the caller will come back at float(now + wait): make that float >= ready_at
        target = _ceil_float(ready_at)
        wait = _ceil_float(Fraction(target) - t_now)
        while Fraction(float(now) + wait) < ready_at:   # defensive; one step at most
            wait = math.nextafter(wait, math.inf)
        return ("wait", wait)

    def finish(self, request_id: str, generated_tokens: int, now: float) -> None:
        t_now = _finite("now", now)
        g = _count("generated_tokens", generated_tokens)
        if not isinstance(request_id, str) or request_id not in self._live:
            raise KeyError(request_id)
        m = self._live[request_id]
        if g > m:
            raise ValueError(f"generated_tokens {g} exceeds max_new_tokens {m}")
        t = self._effective(t_now)
        self._clock = t
        del self._live[request_id]
        refund_s = (m - g) / self._rate
        # moving full_at earlier refunds; it never goes before t (that would be over capacity)
        self._full_at = max(t, self._full_at - refund_s)

    def available(self, now: float) -> float:
        t = self._effective(_finite("now", now))
        self._clock = t
        return float(self._balance_at(t))
