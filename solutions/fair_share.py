"""Reference solution for the fair_share kata: roofline token weights, deficit round robin."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any


def _int(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def _num(name: str, value: Any, *, positive: bool = True) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if not ok or (value <= 0 if positive else value < 0):
        raise ValueError(f"{name} must be a {'positive' if positive else 'non-negative'} "
                         f"finite number, got {value!r}")
    return float(value)


def token_weights(cfg: dict[str, Any], gpu: dict[str, Any], batch: int, ctx_len: int,
                  weight_bytes: float, kv_bytes: float,
                  dtype: str = "bf16") -> tuple[float, float]:
    if any(cfg.get(k) for k in ("num_experts", "num_local_experts", "n_routed_experts")) \
            or cfg.get("kv_lora_rank") is not None:
        raise ValueError("only dense, non-MLA models are covered")
    h = _int("hidden_size", cfg.get("hidden_size"))
    layers = _int("num_hidden_layers", cfg.get("num_hidden_layers"))
    q = _int("num_attention_heads", cfg.get("num_attention_heads"))
    kv = _int("num_key_value_heads", cfg.get("num_key_value_heads", q))
    d = _int("head_dim", cfg.get("head_dim") or h // q)
    body = layers * (2 * h * d * (q + kv) + 3 * h * _int("intermediate_size",
                                                         cfg.get("intermediate_size")))
    head = _int("vocab_size", cfg.get("vocab_size")) * h
    try:
        peak = _num("dense TFLOP/s", gpu["tensor_tflops"][dtype]["dense"]) * 1e12
    except (KeyError, TypeError):
        raise ValueError(f"the GPU entry gives no dense {dtype!r} figure") from None
    bandwidth = _num("memory_bandwidth_gb_s", gpu.get("memory_bandwidth_gb_s")) * 1e9
    b, ctx = _int("batch", batch), _int("ctx_len", ctx_len, 0)
    wb = _num("weight_bytes", weight_bytes, positive=False)
    kvb = _num("kv_bytes", kv_bytes, positive=False)

    w_prefill = 2.0 * body / peak
    step_bytes = (body + head) * wb + b * ctx * 2 * layers * kv * d * kvb
    w_decode = max(2.0 * (body + head) / peak, step_bytes / bandwidth / b)
    return w_prefill, w_decode


def request_fair_share(w_prefill: float, w_decode: float,
                       requests: dict[str, tuple[int, int]]) -> dict[str, float]:
    wp, wd = _num("w_prefill", w_prefill), _num("w_decode", w_decode)
    if not isinstance(requests, dict) or not requests:
        raise ValueError("requests must be a non-empty dict")
    cost = {}
    for tenant, tokens in requests.items():
        if not isinstance(tokens, (tuple, list)) or len(tokens) != 2:
            raise ValueError(f"{tenant!r}: expected (prefill_tokens, decode_tokens), got {tokens!r}")
        cost[tenant] = _request_cost(wp, wd, *tokens)
    total = sum(cost.values())
    return {tenant: c / total for tenant, c in cost.items()}


def _request_cost(wp: Any, wd: Any, prefill: Any, decode: Any) -> Any:
    p = _int("prefill_tokens", prefill, 0)
    n = _int("decode_tokens", decode, 0)
    if p + n == 0:
        raise ValueError("a request needs at least one token")
    return wp * p + wd * n


@dataclass
class _Tenant:
    queue: deque[tuple[str, int]] = field(default_factory=deque)
    deficit: int = 0
    served: int = 0
    backlog: int = 0


class FairShare:
    """Deficit round robin over tenants, in integer cost units."""

    def __init__(self, w_prefill: int, w_decode: int, quantum: int) -> None:
        self._wp = _int("w_prefill", w_prefill)
        self._wd = _int("w_decode", w_decode)
        self._quantum = _int("quantum", quantum)
        self._tenants: dict[str, _Tenant] = {}
        self._round: deque[str] = deque()       # backlogged tenants; the head is being visited
        self._in_visit = False                  # the head has had its quantum for this visit
        self._waiting: set[str] = set()

    def enqueue(self, tenant: str, request_id: str, prefill_tokens: int,
                decode_tokens: int) -> int:
        if not isinstance(tenant, str) or not tenant:
            raise ValueError(f"tenant must be a non-empty str, got {tenant!r}")
        if not isinstance(request_id, str) or request_id in self._waiting:
            raise ValueError(f"request_id {request_id!r} is not a str or is already waiting")
        cost: int = _request_cost(self._wp, self._wd, prefill_tokens, decode_tokens)
        t = self._tenants.setdefault(tenant, _Tenant())
        if not t.queue:
            self._round.append(tenant)          # joins the tail, deficit 0
        t.queue.append((request_id, cost))
        t.backlog += cost
        self._waiting.add(request_id)
        return cost

    def next_request(self) -> tuple[str, str, int] | None:
        while self._round:
            name = self._round[0]
            t = self._tenants[name]
            if not self._in_visit:
                t.deficit += self._quantum
                self._in_visit = True
            request_id, cost = t.queue[0]
            if cost > t.deficit:                # cannot happen mid-visit; ends a fresh one
                self._end_visit()
                continue
            t.queue.popleft()
            t.deficit -= cost
            t.served += cost
            t.backlog -= cost
            self._waiting.discard(request_id)
            if not t.queue:
                t.deficit = 0                   # no banking: an idle tenant keeps no credit
                self._end_visit()
            elif t.queue[0][1] > t.deficit:
                self._end_visit()
            return name, request_id, cost
        return None

    def _end_visit(self) -> None:
        name = self._round.popleft()
        if self._tenants[name].queue:
            self._round.append(name)
        self._in_visit = False

    def stats(self) -> dict[str, dict[str, int]]:
        return {name: {"deficit": t.deficit, "queued": len(t.queue), "backlog": t.backlog,
                       "served": t.served}
                for name, t in self._tenants.items()}
