"""spec_decode: speculative decoding's verification step, its counts, and its metrics.

Fill in the three functions. The prompt is katas/spec_decode/README.md; run the public tests
with ``nox -s kata -- spec_decode``.

A batch is ragged: row ``b`` carries ``num_draft[b]`` draft tokens, stored left-aligned in
arrays padded to width ``K``. Entries past a row's count are padding: they may hold any value
and must never influence the result.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_PROMPT = "see katas/spec_decode/README.md"


def verify_greedy(draft: np.ndarray, num_draft: np.ndarray, target: np.ndarray,
                  eos_id: int, remaining: np.ndarray) -> list[dict[str, Any]]:
    """Verify a batch of drafts at temperature zero.

    ``draft`` (B, K) int: draft token ids, row ``b`` valid in ``[:num_draft[b]]``.
    ``num_draft`` (B,) int: drafts per row, ``0 <= num_draft[b] <= K``.
    ``target`` (B, K + 1) int: the target model's argmax at each verified position; position
    ``i`` is the target's token after the row's input and its first ``i`` drafts. Row ``b`` is
    valid in ``[:num_draft[b] + 1]``.
    ``eos_id``: the end-of-sequence token.
    ``remaining`` (B,) int: how many more tokens each request may emit (``>= 1``).

    Returns one dict per row, with keys:
      ``"accepted"``: drafts accepted by verification that are also in ``emitted`` (the
      leading drafts equal to the target's token at the same position, minus any cut off by
      EOS or the budget);
      ``"emitted"``: list of token ids appended to the output this step: the target's tokens
      at positions ``0 .. accepted_by_verification``, cut just after the first EOS, then to
      ``remaining``;
      ``"finish"``: ``"eos"`` if the last emitted token is EOS, else ``"length"`` if the row
      emitted ``remaining`` tokens, else ``None``;
      ``"computed"``: positions this forward pass computed (the row's last input token and its
      drafts): ``num_draft + 1``;
      ``"rollback"``: computed positions whose KV does not belong to the output sequence and
      must be discarded.

    Raises ValueError for arrays of the wrong shape, ``num_draft`` outside ``0..K``, or
    ``remaining < 1``.
    """
    raise NotImplementedError(f"verify_greedy ({_PROMPT})")


def verify_sampled(draft: np.ndarray, num_draft: np.ndarray, draft_probs: np.ndarray,
                   target_probs: np.ndarray, u_accept: np.ndarray,
                   u_sample: np.ndarray) -> list[tuple[int, list[int]]]:
    """Verify a batch of sampled drafts by rejection sampling; returns ``(accepted, emitted)``
    per row.

    ``draft`` (B, K) int and ``num_draft`` (B,) int as in ``verify_greedy``.
    ``draft_probs`` (B, K, V): ``q``, the draft distribution each draft was sampled from.
    ``target_probs`` (B, K + 1, V): ``p``, the target distribution at each position (position
    ``num_draft[b]`` is the bonus position).
    ``u_accept`` (B, K): uniforms in [0, 1) for the accept tests, ``u_sample`` (B,): one
    uniform in [0, 1) per row for the final draw.

    Draft ``d`` at position ``i`` is accepted when ``u_accept[b, i] * q(d) < p(d)``; the first
    rejection ends the row, which then emits a token drawn from ``max(p - q, 0)`` at that
    position (from ``p`` if that is all zero); after full acceptance the row emits a bonus
    token drawn from ``p`` at position ``num_draft[b]``. A draw from weights ``w`` with uniform
    ``u`` returns the smallest token ``t`` with ``u * S < C[t]``, where ``C`` is the
    cumulative sum of ``w`` in token-id order and ``S = C[V - 1]``.

    ``accepted`` is the number of accepted drafts; ``emitted`` is the accepted drafts then the
    drawn token.

    Raises ValueError for arrays of the wrong shape, ``num_draft`` outside ``0..K``, a draft
    token outside ``0..V-1`` within a row's count, a negative probability, or a uniform
    outside [0, 1).
    """
    raise NotImplementedError(f"verify_sampled ({_PROMPT})")


def acceptance_report(snapshots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-window acceptance metrics from cumulative counter snapshots.

    Each snapshot is a dict: ``"time"`` (float, seconds), and the cumulative counters
    ``"drafts"`` (verification steps that carried at least one draft token),
    ``"draft_tokens"``, ``"accepted"`` (accepted draft tokens that were emitted),
    ``"accepted_per_pos"`` (list of K ints: steps whose emitted accepted drafts reached
    position ``i``), ``"emitted"`` (output tokens) and ``"finished"`` (requests finished).

    Returns one dict per pair of consecutive snapshots (``len(snapshots) - 1`` windows), with
    keys ``"start"``, ``"end"`` (the two times), ``"valid"``, ``"acceptance_rate"``,
    ``"mean_acceptance_length"``, ``"per_position"`` (list of K floats) and ``"steps"`` (a
    ``(low, high)`` pair of ints). See the prompt for the formulas. A window in which any
    counter decreases spans a restart: ``valid`` is False and every metric is None. A valid
    window without drafts has ``None`` for the three draft rates.

    Raises ValueError when times do not strictly increase, a counter is negative, a key is
    missing, or the ``accepted_per_pos`` lists differ in length.
    """
    raise NotImplementedError(f"acceptance_report ({_PROMPT})")
