"""fair_share: token-weighted deficit round robin between tenants (blind alternative).

Written blind from the prompt, the stub and the public tests only (2026-12-02), by a helper
session.

How it is built:
- ``token_weights`` counts parameters in exact integers (body P, LM head V x H, the KV bytes
  of one token per layer) and divides by the datasheet's dense peak and bandwidth once.
- ``request_fair_share`` is cost_t / sum of costs.
- ``FairShare`` does not walk the round one empty visit at a time. When the head of the round
  is not mid-visit, every backlogged tenant i (in round order, i = 0 at the head) needs
  k_i = ceil((cost_i - deficit_i) / quantum) >= 1 more visits before its head request fits;
  the tenant served is the one with the smallest (k_i, i). Every tenant before it in the
  round gets k_i quanta, every tenant after it k_i - 1, and the round is rotated so that it
  stands at the head: exactly the state that k_i - 1 full empty rounds plus i empty visits
  would leave, in O(tenants) per call whatever the costs. Per-tenant queues are lists with
  a head index (compacted when half consumed); the round is a deque of tenant names.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, TypeGuard

_MOE_KEYS = ("num_experts", "num_local_experts", "n_routed_experts")


def _is_int(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_real(x: object) -> TypeGuard[int | float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _pos_int_field(cfg: dict[str, Any], key: str) -> int:
    val = cfg.get(key)
    if not _is_int(val) or val < 1:
        raise ValueError(f"config field {key!r} must be an int >= 1, got {val!r}")
    return val


def token_weights(cfg: dict[str, Any], gpu: dict[str, Any], batch: int, ctx_len: int,
                  weight_bytes: float, kv_bytes: float,
                  dtype: str = "bf16") -> tuple[float, float]:
    """(seconds per prefill token, seconds per decode token) by the prompt's roofline."""
    if not isinstance(cfg, dict):
        raise ValueError("cfg must be a dict (a config.json)")
    for key in _MOE_KEYS:
        if cfg.get(key) not in (None, 0):   # issue 29 (maintainer): 0 experts is dense
            raise ValueError(f"mixture-of-experts config ({key}={cfg[key]!r}): dense only")
    if cfg.get("kv_lora_rank") is not None:
        raise ValueError("MLA config (kv_lora_rank set): dense attention only")
    if not _is_int(batch) or batch < 1:
        raise ValueError(f"batch must be an int >= 1, got {batch!r}")
    if not _is_int(ctx_len) or ctx_len < 0:
        raise ValueError(f"ctx_len must be an int >= 0, got {ctx_len!r}")
    for name, val in (("weight_bytes", weight_bytes), ("kv_bytes", kv_bytes)):
        if not _is_real(val) or val < 0:
            raise ValueError(f"{name} must be a number >= 0, got {val!r}")

    hidden = _pos_int_field(cfg, "hidden_size")
    layers = _pos_int_field(cfg, "num_hidden_layers")
    q_heads = _pos_int_field(cfg, "num_attention_heads")
    kv_heads = q_heads if cfg.get("num_key_value_heads") is None \
        else _pos_int_field(cfg, "num_key_value_heads")
    head_dim = hidden // q_heads if cfg.get("head_dim") is None \
        else _pos_int_field(cfg, "head_dim")
    inter = _pos_int_field(cfg, "intermediate_size")
    vocab = _pos_int_field(cfg, "vocab_size")

    try:
        dense = gpu["tensor_tflops"][dtype]["dense"]
    except (KeyError, TypeError):
        raise ValueError(f"no dense {dtype!r} tensor figure in this GPU entry") from None
    if not _is_real(dense) or dense <= 0:
        raise ValueError(f"no usable dense {dtype!r} figure: {dense!r}")
    bw_gb = gpu.get("memory_bandwidth_gb_s") if isinstance(gpu, dict) else None
    if not _is_real(bw_gb) or bw_gb <= 0:
        raise ValueError(f"no usable memory bandwidth: {bw_gb!r}")
    peak = float(dense) * 1e12
    bandwidth = float(bw_gb) * 1e9

    body = layers * (2 * hidden * head_dim * (q_heads + kv_heads) + 3 * hidden * inter)
    every = body + vocab * hidden
    kv_elems_per_token = 2 * layers * kv_heads * head_dim

    w_prefill = 2 * body / peak
    step_bytes = every * weight_bytes + batch * ctx_len * kv_elems_per_token * kv_bytes
    w_decode = max(2 * every / peak, step_bytes / bandwidth / batch)
    return w_prefill, w_decode


def _check_tokens(prefill: object, decode: object) -> tuple[int, int]:
    if not _is_int(prefill) or not _is_int(decode):
        raise ValueError(f"token counts must be ints, got {prefill!r}, {decode!r}")
    if prefill < 0 or decode < 0:
        raise ValueError(f"token counts must be >= 0, got {prefill}, {decode}")
    if prefill == 0 and decode == 0:
        raise ValueError("a request with no tokens at all")
    return prefill, decode


def request_fair_share(w_prefill: float, w_decode: float,
                       requests: dict[str, tuple[int, int]]) -> dict[str, float]:
    """Each tenant's share of the weighted GPU time under per-request round robin."""
    for name, w in (("w_prefill", w_prefill), ("w_decode", w_decode)):
        if not _is_real(w) or w <= 0:
            raise ValueError(f"{name} must be a number > 0, got {w!r}")
    if not isinstance(requests, dict) or not requests:
        raise ValueError("requests must be a non-empty dict")
    costs: dict[str, float] = {}
    for tenant, kind in requests.items():
        try:
            prefill, decode = kind
        except (TypeError, ValueError):
            raise ValueError(f"{tenant!r}: expected (prefill_tokens, decode_tokens), "
                             f"got {kind!r}") from None
        p, d = _check_tokens(prefill, decode)
        costs[tenant] = w_prefill * p + w_decode * d
    total = sum(costs.values())
    return {tenant: cost / total for tenant, cost in costs.items()}


class _Tenant:
    """One tenant: its FIFO (a list read from ``head``), deficit and totals."""

    __slots__ = ("items", "head", "deficit", "backlog", "served")

    def __init__(self) -> None:
        self.items: list[tuple[str, int]] = []
        self.head = 0
        self.deficit = 0
        self.backlog = 0
        self.served = 0

    def waiting(self) -> int:
        return len(self.items) - self.head

    def peek_cost(self) -> int:
        return self.items[self.head][1]

    def pop(self) -> tuple[str, int]:
        item = self.items[self.head]
        self.head += 1
        if self.head == len(self.items):
            self.items.clear()
            self.head = 0
        elif self.head * 2 >= len(self.items):
            del self.items[:self.head]
            self.head = 0
        self.backlog -= item[1]
        return item


class FairShare:
    """Deficit round robin over tenants; a request's cost is token-weighted."""

    def __init__(self, w_prefill: int, w_decode: int, quantum: int) -> None:
        for name, val in (("w_prefill", w_prefill), ("w_decode", w_decode),
                          ("quantum", quantum)):
            if not _is_int(val) or val < 1:
                raise ValueError(f"{name} must be an int >= 1, got {val!r}")
        self._wp = w_prefill
        self._wd = w_decode
        self._quantum = quantum
        self._tenants: dict[str, _Tenant] = {}
        self._round: deque[str] = deque()
        self._in_visit = False        # the head of the round has had its quantum already
        self._waiting_ids: set[str] = set()

    def enqueue(self, tenant: str, request_id: str, prefill_tokens: int,
                decode_tokens: int) -> int:
        """Queue a request for ``tenant``; return its cost."""
        if not isinstance(tenant, str) or not tenant:
            raise ValueError(f"tenant must be a non-empty str, got {tenant!r}")
        if not isinstance(request_id, str):
            raise ValueError(f"request_id must be a str, got {request_id!r}")
        if request_id in self._waiting_ids:
            raise ValueError(f"request {request_id!r} is already waiting")
        p, d = _check_tokens(prefill_tokens, decode_tokens)
        cost = self._wp * p + self._wd * d
        state = self._tenants.get(tenant)
        if state is None:
            state = self._tenants[tenant] = _Tenant()
        if state.waiting() == 0:      # (re)joins the tail with no credit
            state.deficit = 0
            self._round.append(tenant)
        state.items.append((request_id, cost))
        state.backlog += cost
        self._waiting_ids.add(request_id)
        return cost

    def _bring_payable_to_head(self) -> None:
        """Run, in one step, every empty visit before the first one that can serve."""
        quantum = self._quantum
        best_k = 0
        best_i = -1
        for i, name in enumerate(self._round):
            st = self._tenants[name]
            need = st.peek_cost() - st.deficit          # > 0 for every waiting tenant
            k = max(1, -(-need // quantum))
            if best_i < 0 or k < best_k:
                best_k, best_i = k, i
                if k == 1:
                    break
        for i, name in enumerate(self._round):
            self._tenants[name].deficit += quantum * (best_k if i <= best_i else best_k - 1)
        self._round.rotate(-best_i)
        self._in_visit = True

    def next_request(self) -> tuple[str, str, int] | None:
        """Serve one request by the DRR rules: (tenant, request_id, cost)."""
        if not self._round:
            return None
        if not self._in_visit:
            self._bring_payable_to_head()
        name = self._round[0]
        st = self._tenants[name]
        request_id, cost = st.pop()
        st.deficit -= cost
        st.served += cost
        self._waiting_ids.discard(request_id)
        if st.waiting() == 0:                 # no banking: leave the round with nothing
            st.deficit = 0
            self._round.popleft()
            self._in_visit = False
        elif st.peek_cost() > st.deficit:     # the visit ends now, not at the next call
            self._round.rotate(-1)
            self._in_visit = False
        return name, request_id, cost

    def stats(self) -> dict[str, dict[str, int]]:
        """For every tenant ever seen: {"deficit", "queued", "backlog", "served"}."""
        return {name: {"deficit": st.deficit, "queued": st.waiting(),
                       "backlog": st.backlog, "served": st.served}
                for name, st in self._tenants.items()}
