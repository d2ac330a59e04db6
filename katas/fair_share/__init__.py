"""fair_share: token-weighted deficit round robin between tenants.

Fill in every function and method. The prompt is katas/fair_share/README.md; run the public
tests with ``nox -s kata -- fair_share``.

Plain data only: ``cfg`` is a model's Hugging Face ``config.json`` as a dict; ``gpu`` is a
datasheet entry as shipped in ``data/gpus/*.json``. The scheduler works in integer cost
units: a request costs ``w_prefill * prefill_tokens + w_decode * decode_tokens``. Bad input
raises ValueError and changes nothing.
"""

from __future__ import annotations

from typing import Any

_PROMPT = "see katas/fair_share/README.md"


def token_weights(cfg: dict[str, Any], gpu: dict[str, Any], batch: int, ctx_len: int,
                  weight_bytes: float, kv_bytes: float,
                  dtype: str = "bf16") -> tuple[float, float]:
    """(seconds per prefill token, seconds per decode token) by the prompt's roofline.

    w_prefill = 2 x P / peak (P: the body's parameters, no LM head);
    w_decode = max(2 x (P + V x H) / peak, step_bytes / bandwidth / batch), where a decode
    step of ``batch`` sequences reads the weights (LM head included) once and each
    sequence's ``ctx_len`` tokens of KV. Dense models only: ValueError for experts or MLA,
    a dtype without a dense figure, batch < 1, ctx_len < 0, negative byte sizes.
    """
    raise NotImplementedError(f"token_weights ({_PROMPT})")


def request_fair_share(w_prefill: float, w_decode: float,
                       requests: dict[str, tuple[int, int]]) -> dict[str, float]:
    """Each tenant's share of the weighted GPU time under per-request round robin.

    ``requests[tenant] = (prefill_tokens, decode_tokens)`` of the one kind of request the
    tenant sends; every tenant is always backlogged. Share = cost_t / sum of the costs.
    ValueError for a weight <= 0, an empty dict or bad token counts.
    """
    raise NotImplementedError(f"request_fair_share ({_PROMPT})")


class FairShare:
    """Deficit round robin over tenants; a request's cost is token-weighted.

    Backlogged tenants stand in a FIFO round. The head's visit starts by adding ``quantum``
    to its deficit, then serves its head request while its cost <= deficit (one per call).
    The visit ends, within the call that served, when the queue is empty (deficit reset to
    0, the tenant leaves the round) or the next head costs more than the deficit (the tenant
    keeps its deficit and moves to the tail). A tenant joins the tail with deficit 0 when a
    request reaches its empty queue.
    """

    def __init__(self, w_prefill: int, w_decode: int, quantum: int) -> None:
        """Integer weights (cost units per token) and quantum, each >= 1 (ValueError)."""
        raise NotImplementedError(f"FairShare.__init__ ({_PROMPT})")

    def enqueue(self, tenant: str, request_id: str, prefill_tokens: int,
                decode_tokens: int) -> int:
        """Queue a request for ``tenant``; return its cost.

        ValueError (nothing changes) for an empty or non-str tenant, a request_id that is
        not a str or is already waiting, token counts that are not ints >= 0 or are both 0.
        """
        raise NotImplementedError(f"FairShare.enqueue ({_PROMPT})")

    def next_request(self) -> tuple[str, str, int] | None:
        """Serve one request by the DRR rules: (tenant, request_id, cost).

        None only when no request is waiting.
        """
        raise NotImplementedError(f"FairShare.next_request ({_PROMPT})")

    def stats(self) -> dict[str, dict[str, int]]:
        """For every tenant ever seen: {"deficit", "queued", "backlog", "served"}.

        Its deficit now, its waiting requests, their total cost, total cost served so far.
        """
        raise NotImplementedError(f"FairShare.stats ({_PROMPT})")
