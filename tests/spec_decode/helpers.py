"""Models of the truth for spec_decode, shared by the public and hidden tests.

- ``greedy_row``: greedy verification of one row, token by token, as the prompt states it.
- ``sampled_row``: rejection sampling of one row in exact rational arithmetic.
- ``Engine``: a simulated engine that runs greedy verification steps for a few requests,
  keeps the cumulative counters of the prompt, restarts (resetting them) on demand, and
  remembers the true values that the counters cannot show (verification steps, restarts).
"""

from __future__ import annotations

import copy
import random
from fractions import Fraction
from typing import Any

import numpy as np

EOS = 2


def greedy_row(draft: list[int], target: list[int], eos_id: int,
               remaining: int) -> dict[str, Any]:
    """One row of greedy verification, one position at a time (``draft`` holds only the
    row's real drafts, ``target`` at least ``len(draft) + 1`` tokens)."""
    n = len(draft)
    emitted: list[int] = []
    accepted = 0
    finish = None
    for i in range(n + 1):
        token = target[i]
        emitted.append(token)
        matched = i < n and draft[i] == token
        if matched:
            accepted += 1
        if token == eos_id:
            finish = "eos"
            break
        if len(emitted) == remaining:
            finish = "length"
            break
        if not matched:
            break
    return {"accepted": accepted, "emitted": emitted, "finish": finish,
            "computed": n + 1, "rollback": n - accepted}


def as_row(result: Any) -> dict[str, Any]:
    """A returned row as plain Python values (numpy ints compare equal but print oddly)."""
    assert isinstance(result, dict), f"each row must be a dict, got {type(result).__name__}"
    missing = {"accepted", "emitted", "finish", "computed", "rollback"} - set(result)
    assert not missing, f"row dict lacks keys {sorted(missing)}: {result}"
    return {"accepted": int(result["accepted"]),
            "emitted": [int(t) for t in result["emitted"]],
            "finish": result["finish"],
            "computed": int(result["computed"]),
            "rollback": int(result["rollback"])}


def pack(rows: list[tuple[list[int], list[int]]], K: int, pad: int = -1,
         target_pad: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(drafts, target) per row -> padded ``draft`` (B, K), ``num_draft`` (B,), ``target``
    (B, K + 1). Padding is ``pad`` (``target_pad`` for the target, default ``pad``)."""
    B = len(rows)
    draft = np.full((B, K), pad, dtype=np.int64)
    target = np.full((B, K + 1), pad if target_pad is None else target_pad, dtype=np.int64)
    num = np.zeros(B, dtype=np.int64)
    for b, (d, t) in enumerate(rows):
        draft[b, :len(d)] = d
        target[b, :len(t)] = t
        num[b] = len(d)
    return draft, num, target


def draw(weights: list[Fraction], u: Fraction) -> int:
    """The prompt's inverse-CDF draw, exactly."""
    total = sum(weights, Fraction(0))
    c = Fraction(0)
    for t, w in enumerate(weights):
        c += w
        if u * total < c:
            return t
    raise AssertionError("no token drawn: weights sum to zero")


def sampled_row(draft: list[int], q: list[list[Fraction]], p: list[list[Fraction]],
                u_accept: list[Fraction], u_sample: Fraction) -> tuple[int, list[int]]:
    """One row of rejection sampling, exactly (``q`` has ``len(draft)`` rows, ``p`` one
    more)."""
    n = len(draft)
    for i, d in enumerate(draft):
        if not u_accept[i] * q[i][d] < p[i][d]:
            residual = [max(a - b, Fraction(0)) for a, b in zip(p[i], q[i])]
            if sum(residual) == 0:
                residual = list(p[i])
            return i, list(draft[:i]) + [draw(residual, u_sample)]
    return n, list(draft) + [draw(p[n], u_sample)]


def near_tie(draft: list[int], q: list[list[Fraction]], p: list[list[Fraction]],
             u_accept: list[Fraction], u_sample: Fraction, eps: float = 1e-9) -> bool:
    """True when a floating-point implementation could reasonably decide this row either
    way (a uniform within ``eps`` of a decision boundary)."""
    def close(a: Fraction, b: Fraction) -> bool:
        return abs(a - b) <= eps * max(abs(a), abs(b), Fraction(1, 10**12))

    def draw_close(w: list[Fraction], u: Fraction) -> bool:
        total = sum(w, Fraction(0))
        c = Fraction(0)
        for x in w:
            c += x
            if close(u * total, c):
                return True
        return False

    for i, d in enumerate(draft):
        if close(u_accept[i] * q[i][d], p[i][d]) and p[i][d] > 0:
            return True
    rows = [[max(a - b, Fraction(0)) for a, b in zip(p[i], q[i])] for i in range(len(draft))]
    return any(draw_close(w, u_sample) for w in rows + [p[i] for i in range(len(p))] if sum(w))


# ---------------------------------------------------------------------------------------
# A simulated engine for the metrics tests.

COUNTER_KEYS = ("drafts", "draft_tokens", "accepted", "emitted", "finished")


class Engine:
    """Requests decoding with greedy speculative steps; counters as the prompt defines them.

    ``step(zero_drafts=...)`` runs one verification step for every request. The true values
    since the last snapshot (``truth``) are kept apart from the counters, so a restart, which
    zeroes the counters, does not touch them.
    """

    def __init__(self, K: int, num_requests: int, seed: int, t0: float = 100.0) -> None:
        self.K = K
        self.rng = random.Random(seed)
        self.time = t0
        self.counters = self._zero()
        self.budgets = [self._new_budget() for _ in range(num_requests)]
        self.truth = self._zero_truth()

    def _zero(self) -> dict[str, Any]:
        c: dict[str, Any] = {k: 0 for k in COUNTER_KEYS}
        c["accepted_per_pos"] = [0] * self.K
        return c

    @staticmethod
    def _zero_truth() -> dict[str, Any]:
        return {"steps": 0, "restarts": 0, "finished": 0}

    def _new_budget(self) -> int:
        return self.rng.randint(1, 3 * self.K + 4)

    def _outcome(self, n: int, remaining: int) -> dict[str, Any]:
        rng = self.rng
        draft = [rng.choice([5, 6, 7, 8]) for _ in range(n)]
        a = min(n, int(rng.expovariate(0.6))) if rng.random() < 0.8 else n
        target = draft[:a] + [rng.choice([5, 6, 7, 8, 9])] * (n + 1 - a)
        if a < n and target[a] == draft[a]:
            target[a] = 9
        if rng.random() < 0.15:                      # an EOS somewhere in what is emitted
            target[rng.randint(0, a)] = EOS
            draft = [EOS if i < len(draft) and target[i] == EOS and i < a else x
                     for i, x in enumerate(draft)]
        return greedy_row(draft, target, EOS, remaining)

    def step(self, zero_drafts: bool = False) -> None:
        c = self.counters
        for r, budget in enumerate(self.budgets):
            n = 0 if zero_drafts else self.rng.randint(0, self.K)
            out = self._outcome(n, budget)
            self.truth["steps"] += 1
            if n > 0:
                c["drafts"] += 1
                c["draft_tokens"] += n
                c["accepted"] += out["accepted"]
                for i in range(out["accepted"]):
                    c["accepted_per_pos"][i] += 1
            c["emitted"] += len(out["emitted"])
            if out["finish"] is not None:
                c["finished"] += 1
                self.truth["finished"] += 1
                self.budgets[r] = self._new_budget()
            else:
                self.budgets[r] = budget - len(out["emitted"])
        self.time += self.rng.uniform(0.01, 2.0)

    def restart(self) -> None:
        self.counters = self._zero()
        self.truth["restarts"] += 1
        self.time += self.rng.uniform(0.5, 5.0)

    def snapshot(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The counters now, and the truth since the previous snapshot (then reset)."""
        snap = copy.deepcopy(self.counters)
        snap["time"] = self.time
        truth, self.truth = self.truth, self._zero_truth()
        self.time += 1e-3
        return snap, truth


def snapshot(time: float, drafts: int = 0, draft_tokens: int = 0, accepted: int = 0,
             per_pos: list[int] | None = None, emitted: int = 0,
             finished: int = 0) -> dict[str, Any]:
    return {"time": time, "drafts": drafts, "draft_tokens": draft_tokens, "accepted": accepted,
            "accepted_per_pos": list(per_pos if per_pos is not None else [0, 0, 0]),
            "emitted": emitted, "finished": finished}
