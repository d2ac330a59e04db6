"""mini_engine: the scheduling loop of a serving engine around a toy model.

Fill in every method. The prompt is katas/mini_engine/README.md; run the public tests with
``nox -s kata -- mini_engine``.

The model and the sampler are given, in graders/support/mini_engine.py (do not edit it):
``model_logits(tokens)`` is the model's forward pass (a pure function of the token
sequence), ``sample(logits, sampling, index)`` picks a token (``index``: how many tokens the
request generated before this one), ``check_sampling(sampling)`` validates sampling
parameters, ``EOS`` ends a generation and token ids lie in ``0 .. VOCAB - 1``.

Words used below. A request's *sequence* is its prompt followed by the tokens it generated;
*computed* is how many of the sequence's leading tokens have their KV in the request's
blocks. A running request is *decoding* when it has generated at least one token and every
token of its sequence but the last is computed; every other running request is
*prefilling* (its first prefill, or its recompute after a preemption).
"""

from __future__ import annotations

from typing import Any

from graders.support.mini_engine import EOS, VOCAB, check_sampling, model_logits, sample

__all__ = ["EOS", "VOCAB", "Engine", "check_sampling", "model_logits", "sample"]

_PROMPT = "see katas/mini_engine/README.md"


class Engine:
    """Admits requests, schedules decodes and prefill chunks under a token budget, keeps the
    KV block accounting, preempts by recompute when the pool runs dry, samples and streams.
    """

    def __init__(self, num_blocks: int, block_size: int, max_batched_tokens: int,
                 max_running: int) -> None:
        """An idle engine over a pool of ``num_blocks`` KV blocks of ``block_size`` tokens.

        ``max_batched_tokens`` caps the tokens computed in one step (decodes and prefill
        chunks together); ``max_running`` caps the running requests.

        Raises ValueError unless all four are positive ints and
        ``max_batched_tokens >= max_running`` (so every decode fits in a step).
        """
        raise NotImplementedError(f"Engine.__init__ ({_PROMPT})")

    def add(self, request_id: str, prompt: list[int], max_tokens: int,
            sampling: dict[str, Any]) -> None:
        """Queue a request at the back of the waiting queue; it computes nothing yet.

        ``sampling`` is ``{"temperature": float, "top_p": float, "seed": int}``
        (temperature 0 is greedy). The request generates at most ``max_tokens`` tokens and
        stops early after EOS.

        Raises ValueError, and changes nothing, when: ``request_id`` is not a str or names a
        live request (waiting or running; the id of a finished or aborted request may be used
        again); ``prompt`` is not a non-empty ``list`` of ints in ``[0, VOCAB)`` (a tuple or a
        numpy array is not a list; a bool or a numpy integer is not an int);
        ``max_tokens`` is not a positive int; ``check_sampling(sampling)`` raises; or the
        request could not fit in the whole pool alone:
        ``ceil((len(prompt) + max_tokens) / block_size) > num_blocks``.
        """
        raise NotImplementedError(f"Engine.add ({_PROMPT})")

    def abort(self, request_id: str) -> None:
        """Cancel a live request (waiting or running): every block it holds returns to the
        free pool, it leaves its queue, and no later step or stats mentions it.

        Raises KeyError, and changes nothing, for an id that is not live (never added,
        finished or aborted).
        """
        raise NotImplementedError(f"Engine.abort ({_PROMPT})")

    def step(self) -> dict[str, list[Any]]:
        """Run one engine step (the procedure in the prompt's "One step" section) and return
        its record, a dict of four lists:

        - ``"decodes"``: ids of the requests that computed one decode token, in admission
          order;
        - ``"prefills"``: ``(request_id, chunk_length)`` tuples, in admission order (the
          running prefills first, then the requests admitted in this step, in queue order);
        - ``"preempted"``: ids of the requests preempted in this step, in the order they were
          preempted (newest first);
        - ``"outputs"``: ``(request_id, token, finished)`` tuples, one per request whose
          computed tokens reached its sequence length in this step, in the order of
          ``decodes`` then ``prefills``; ``finished`` is True when the token is EOS or the
          request's ``max_tokens``-th token.

        Requests preempted in this step appear only in ``preempted``. A step with nothing to
        do returns four empty lists.
        """
        raise NotImplementedError(f"Engine.step ({_PROMPT})")

    def stats(self) -> dict[str, Any]:
        """The engine's state as plain data:

        ``{"free_blocks": int, "running": [ids, admission order, oldest first],
        "waiting": [ids, queue order, front first], "requests": {id: {"computed": int,
        "generated": int, "blocks": [block ids]}}}``

        ``requests`` holds every live request (waiting or running): its computed tokens,
        how many tokens it has generated (streamed) so far, and the ids (in
        ``0 .. num_blocks - 1``) of the blocks it holds, in sequence order. Between steps
        a request holds exactly ``ceil(computed / block_size)`` blocks (a waiting request
        holds none), no block is held twice, and
        ``free_blocks + sum of blocks held == num_blocks``.
        """
        raise NotImplementedError(f"Engine.stats ({_PROMPT})")
