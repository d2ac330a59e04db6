"""Models of the truth for the fair_share hidden tests: the prompt's formulas and its DRR.

Written from the prompt, independently of the reference.
"""

from __future__ import annotations

from typing import Any

MOE_KEYS = ("num_experts", "num_local_experts", "n_routed_experts")


def is_dense(cfg: dict[str, Any]) -> bool:
    return not any(cfg.get(k) for k in MOE_KEYS) and cfg.get("kv_lora_rank") is None


def weights(cfg: dict[str, Any], gpu: dict[str, Any], batch: int, ctx_len: int,
            weight_bytes: float, kv_bytes: float, dtype: str = "bf16") -> tuple[float, float]:
    """The prompt's token weights, term by term."""
    hidden = cfg["hidden_size"]
    layers = cfg["num_hidden_layers"]
    q = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or q
    d = cfg.get("head_dim") or hidden // q
    body = layers * (2 * hidden * d * (q + kv) + 3 * hidden * cfg["intermediate_size"])
    head = cfg["vocab_size"] * hidden
    peak = gpu["tensor_tflops"][dtype]["dense"] * 1e12
    bw = gpu["memory_bandwidth_gb_s"] * 1e9
    w_prefill = 2 * body / peak
    kv_read = batch * ctx_len * 2 * layers * kv * d * kv_bytes
    memory_share = ((body + head) * weight_bytes + kv_read) / bw / batch
    return w_prefill, max(2 * (body + head) / peak, memory_share)


class DRR:
    """The prompt's deficit round robin, spelled out step by step."""

    def __init__(self, quantum: int) -> None:
        self.quantum = quantum
        self.queues: dict[str, list[tuple[str, int]]] = {}
        self.deficit: dict[str, int] = {}
        self.served: dict[str, int] = {}
        self.round: list[str] = []
        self.visiting = False          # round[0] has had its quantum for this visit

    def enqueue(self, tenant: str, request_id: str, cost: int) -> None:
        queue = self.queues.setdefault(tenant, [])
        self.deficit.setdefault(tenant, 0)
        self.served.setdefault(tenant, 0)
        if not queue:
            self.round.append(tenant)
        queue.append((request_id, cost))

    def _rotate(self) -> None:
        self.round.append(self.round.pop(0))
        self.visiting = False

    def next_request(self) -> tuple[str, str, int] | None:
        while self.round:
            tenant = self.round[0]
            queue = self.queues[tenant]
            if not self.visiting:
                self.deficit[tenant] += self.quantum
                self.visiting = True
            if queue[0][1] > self.deficit[tenant]:
                self._rotate()
                continue
            request_id, cost = queue.pop(0)
            self.deficit[tenant] -= cost
            self.served[tenant] += cost
            if not queue:
                self.deficit[tenant] = 0
                self.round.pop(0)
                self.visiting = False
            elif queue[0][1] > self.deficit[tenant]:
                self._rotate()
            return tenant, request_id, cost
        return None

    def stats(self) -> dict[str, dict[str, int]]:
        return {t: {"deficit": self.deficit[t], "queued": len(q),
                    "backlog": sum(c for _, c in q), "served": self.served[t]}
                for t, q in self.queues.items()}


class Fairness:
    """Tracks, for every pair of tenants, the spread of served_i - served_j over the current
    run of calls in which both stay backlogged (before and after every call)."""

    def __init__(self) -> None:
        self.served: dict[str, int] = {}
        self.runs: dict[tuple[str, str], tuple[int, int]] = {}

    def before_call(self, backlogged: set[str]) -> None:
        for pair in list(self.runs):
            if not set(pair) <= backlogged:
                del self.runs[pair]
        names = sorted(backlogged)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                gap = self.served.get(a, 0) - self.served.get(b, 0)
                self.runs.setdefault((a, b), (gap, gap))

    def after_call(self, tenant: str | None, cost: int,
                   backlogged: set[str]) -> list[tuple[str, str, int]]:
        """Record a served cost; return (a, b, spread) of every run still open."""
        if tenant is not None:
            self.served[tenant] = self.served.get(tenant, 0) + cost
        out = []
        for (a, b), (lo, hi) in list(self.runs.items()):
            if not {a, b} <= backlogged:
                del self.runs[(a, b)]
                continue
            gap = self.served.get(a, 0) - self.served.get(b, 0)
            lo, hi = min(lo, gap), max(hi, gap)
            self.runs[(a, b)] = (lo, hi)
            out.append((a, b, hi - lo))
        return out
