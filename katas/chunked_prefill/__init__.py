"""chunked_prefill: a step planner for prefill and decode, and the latency metrics.

Fill in every function. The prompt is katas/chunked_prefill/README.md; run the public
tests with ``nox -s kata -- chunked_prefill``.

The engine simulator is ``graders.support.chunked_prefill`` (do not edit it): it calls
``plan_step`` once per step and writes the log that the metric functions read. Plain data
only: dicts, lists, str, int, float, bool, None. Times are seconds.
"""

from __future__ import annotations

from typing import Any

_PROMPT = "see katas/chunked_prefill/README.md"


def plan_step(config: dict[str, Any], now: float, waiting: list[dict[str, Any]],
              decoding: list[dict[str, Any]]) -> tuple[list[tuple[str, int]], list[str]]:
    """Decide one engine step: ``(chunks, decodes)``.

    ``config``: ``{"policy": "fcfs" | "spf", "budget": int >= 1, "chunked": bool,
    "starvation_s": float >= 0 or None}`` (other keys are ignored; a missing key is a bad
    value, except ``starvation_s``, whose absence means None). ``now``: the step's
    start time. ``waiting``: the arrived requests whose prefill is not complete, each
    ``{"id", "arrival", "prompt", "prefilled"}``; ``decoding``: the arrived requests whose
    prefill is complete and output is not, each ``{"id", "arrival", "generated"}``. Both
    lists come in no particular order.

    Returns ``chunks``, a list of ``(request_id, tokens)`` prefill chunks, and ``decodes``,
    the ids that decode one token this step, following the prompt's rules (decode first,
    the token budget, the policy's prefill order, chunking or whole prompts, the
    anti-starvation rule). The order within each list is free. Raises ValueError for an
    unknown policy, a budget that is not an int >= 1, a ``chunked`` that is not a bool, or
    a ``starvation_s`` that is neither None nor a number >= 0.
    """
    raise NotImplementedError(f"plan_step ({_PROMPT})")


def token_times(log: dict[str, Any]) -> dict[str, list[float]]:
    """For each request of the log, the times its output tokens came out, in order.

    The first token comes out at the end of the step whose chunk completes the prompt;
    each later one at the end of a step that decodes the request. Every request of the
    log is a key (the log is of a completed run, so each list has ``output`` entries).
    """
    raise NotImplementedError(f"token_times ({_PROMPT})")


def ttft(log: dict[str, Any]) -> dict[str, float]:
    """Time to first token per request: first token time minus arrival."""
    raise NotImplementedError(f"ttft ({_PROMPT})")


def itl(log: dict[str, Any]) -> dict[str, list[float]]:
    """Inter-token latency series per request: the gaps between consecutive output tokens
    (``output - 1`` of them; empty for a one-token output). TTFT is not one of them."""
    raise NotImplementedError(f"itl ({_PROMPT})")


def slowdown(log: dict[str, Any]) -> dict[str, float]:
    """Per-request slowdown: (last token time - arrival) / the time the request takes
    alone on an idle engine with the log's model and config (see the prompt)."""
    raise NotImplementedError(f"slowdown ({_PROMPT})")
