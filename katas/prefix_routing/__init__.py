"""prefix_routing: a burst replayed through three routers over replicas with prefix caches.

Fill in every function and method. The prompt is katas/prefix_routing/README.md; run the
public tests with ``nox -s kata -- prefix_routing``.

The tests simulate the replicas and the clock; you write the router and the router's view
of each replica: which blocks it believes each replica has cached (from its own routing
decisions and from eviction notices that may arrive late) and how much prefill work it
believes each replica has queued (from load reports and its own reservations).

Block hashes come from ``block_hashes`` (graders/support/prefix_routing.py): one 32-byte
hash per full block, chained, the same hashes the replicas put in eviction notices.
"""

from __future__ import annotations

from graders.support.prefix_routing import block_hashes

__all__ = ["POLICIES", "Router", "block_hashes", "prefix_boundary"]

_PROMPT = "see katas/prefix_routing/README.md"

POLICIES = ("round_robin", "affinity", "predicted_finish")


def prefix_boundary(old: list[int], new: list[int],
                    block_size: int) -> tuple[int, int, int, int]:
    """Where ``new`` stops sharing a cached prefix with ``old``.

    Returns ``(first_diff, first_diff_block, reused_blocks, lost_blocks)``:
    ``first_diff`` is the length of the longest common prefix of the two token lists;
    ``first_diff_block = first_diff // block_size`` (the first block the two prompts do not
    share; it can lie past either prompt's last full block); ``reused_blocks`` is how many blocks ``new``
    hits in a cache that holds old's full blocks (capped so that new's last token is
    computed: at most ``(len(new) - 1) // block_size``); ``lost_blocks`` is how many of
    old's full blocks ``new`` cannot reuse (``len(old) // block_size - first_diff_block``).

    Raises ValueError unless both are non-empty lists (a tuple is not) of ints in
    ``[0, 2**32)`` and ``block_size`` is a positive int (bools are not ints).
    """
    raise NotImplementedError(f"prefix_boundary ({_PROMPT})")


class Router:
    """Routes requests to ``num_replicas`` replicas under one of ``POLICIES``."""

    def __init__(self, num_replicas: int, block_size: int, policy: str,
                 load_cap: int = 0) -> None:
        """A router with an empty view: no blocks cached, no load, no reports.

        ``load_cap`` (tokens) is used by the ``affinity`` policy only. Raises ValueError
        unless ``num_replicas`` and ``block_size`` are positive ints, ``policy`` is one of
        ``POLICIES`` and ``load_cap`` is an int >= 0, whatever the policy (bools are not ints).
        """
        raise NotImplementedError(f"Router.__init__ ({_PROMPT})")

    def route(self, request_id: str, tokens: list[int], now: int) -> int:
        """Choose the replica for a request arriving at time ``now``, record the decision
        in the view (its blocks, stamped ``now``, and its reservation) and return the
        replica's index.

        Raises ValueError for a ``request_id`` that is not a str or was routed before,
        ``tokens`` that are not a non-empty list (a tuple is not) of ints in
        ``[0, 2**32)``, or a ``now`` that is not an int greater than every earlier
        successful ``route`` call's ``now`` (and >= 0). A call that raises changes nothing.
        With several bad arguments it may raise for any of them.
        """
        raise NotImplementedError(f"Router.route ({_PROMPT})")

    def on_eviction(self, replica: int, hashes: list[bytes], evicted_at: int) -> None:
        """Replica ``replica`` evicted the blocks ``hashes`` at time ``evicted_at``.

        For each hash, the view forgets it for that replica unless the router has routed
        to that replica, at a time later than ``evicted_at``, a request that has the
        block among its full blocks (the replica holds it again). A hash the view does not
        hold is ignored. Raises ValueError for a replica index out of range, hashes that
        are not a list of ``bytes`` objects (of any length), or an ``evicted_at`` that is not an int >= 0; a call
        that raises changes nothing.
        """
        raise NotImplementedError(f"Router.on_eviction ({_PROMPT})")

    def on_report(self, replica: int, outstanding_tokens: int,
                  last_request_id: str | None) -> None:
        """A load report from ``replica``: it still had ``outstanding_tokens`` prefill
        tokens to compute when the report was taken, counting every request it had
        received up to ``last_request_id`` (the last request routed to it before the
        report; None if none had been). It replaces the replica's previous report, even one
        that covered later requests.

        Raises ValueError for a replica index out of range or an ``outstanding_tokens``
        that is not an int >= 0, and KeyError for a ``last_request_id`` that is not None
        and names no request routed to that replica, whatever its type. With several bad
        arguments it may raise for any of them. A call that raises changes nothing.
        """
        raise NotImplementedError(f"Router.on_report ({_PROMPT})")

    def matched_blocks(self, replica: int, tokens: list[int]) -> int:
        """How many leading full blocks of ``tokens`` the view holds for ``replica``,
        stopping at the first it lacks, capped at ``(len(tokens) - 1) // block_size``.

        Raises ValueError as ``route`` does for the tokens, and for a replica index out
        of range.
        """
        raise NotImplementedError(f"Router.matched_blocks ({_PROMPT})")

    def estimated_load(self, replica: int) -> int:
        """The replica's latest reported outstanding tokens (0 before any report) plus
        the reservations of the requests routed to it after that report's
        ``last_request_id``. Raises ValueError for a replica index out of range.
        """
        raise NotImplementedError(f"Router.estimated_load ({_PROMPT})")
