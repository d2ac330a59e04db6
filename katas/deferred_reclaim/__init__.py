"""deferred_reclaim: free a request's KV pages only when no in-flight step can still touch them.

Fill in every method. The prompt is katas/deferred_reclaim/README.md; run the public tests
with ``nox -s kata -- deferred_reclaim``.

Every page is in exactly one state at any time: free, held by one live request, or
waiting (its request has ended but a launched step that read it has not completed yet).
"""

from __future__ import annotations

_PROMPT = "see katas/deferred_reclaim/README.md"


class OutOfPages(RuntimeError):
    """Raised when ``add`` or ``grow`` asks for more pages than are free.

    The call that raises it changes nothing.
    """


class Reclaimer:
    """Page ownership across asynchronous forward steps, disconnects and reused request ids."""

    def __init__(self, num_pages: int) -> None:
        """A pool of pages ``0 .. num_pages - 1``, all free, no request, no step.

        Raises ValueError unless ``num_pages`` is a positive int.
        """
        raise NotImplementedError(f"Reclaimer.__init__ ({_PROMPT})")

    def add(self, request_id: str, num_pages: int) -> int:
        """Admit a new incarnation of ``request_id`` holding ``num_pages`` free pages.

        Returns the incarnation's generation: an int that no earlier incarnation of the same
        id got. An id may be added again as soon as its previous incarnation has ended, even
        while that incarnation's pages are still waiting.

        Raises ValueError if ``request_id`` is live or ``num_pages`` is not a positive int,
        OutOfPages if fewer than ``num_pages`` pages are free; nothing changes then.
        """
        raise NotImplementedError(f"Reclaimer.add ({_PROMPT})")

    def grow(self, request_id: str, n: int) -> list[int]:
        """Give the live request ``n`` more free pages (``n == 0`` is allowed); returns them.

        They go to the end of ``pages_of(request_id)``. Raises KeyError if ``request_id`` is
        not live, ValueError if ``n`` is negative, OutOfPages if fewer than ``n`` pages are
        free; nothing changes then (all ``n`` pages or none).
        """
        raise NotImplementedError(f"Reclaimer.grow ({_PROMPT})")

    def launch(self, request_ids: list[str]) -> int:
        """Launch a forward step over these live requests; returns a new step id.

        The step reads (and writes) every page its requests hold. Step ids are never reused,
        not even after the step completed. A request may be in several steps in flight.

        Raises ValueError for an empty list or a repeated id, KeyError if an id is not live;
        nothing changes then (no step is launched).
        """
        raise NotImplementedError(f"Reclaimer.launch ({_PROMPT})")

    def complete(self, step_id: int, tokens: dict[str, int]) -> list[tuple[str, int]]:
        """The GPU finished step ``step_id``; ``tokens`` maps request ids to sampled tokens.

        Returns ``(request_id, token)`` for each request of the step that is still the same
        live incarnation that was launched and has an entry in ``tokens``, in any order.
        Entries for other ids are ignored. Every request of the step stops waiting for it:
        an ended request whose last in-flight step this was gets its pages freed now.

        A step id that was never launched or has already completed: returns ``[]`` and
        changes nothing. Never raises.
        """
        raise NotImplementedError(f"Reclaimer.complete ({_PROMPT})")

    def abort(self, request_id: str) -> None:
        """The client went away: end the live incarnation of ``request_id``.

        Its pages are freed now if no step in flight reads them, otherwise when the last of
        those steps completes. If ``request_id`` is not live (already ended, or never
        added), nothing changes and nothing is raised.
        """
        raise NotImplementedError(f"Reclaimer.abort ({_PROMPT})")

    def finish(self, request_id: str) -> None:
        """The generation ended normally: end the live incarnation of ``request_id``.

        Frees pages exactly as ``abort`` does, and likewise does nothing for an id that is
        not live.
        """
        raise NotImplementedError(f"Reclaimer.finish ({_PROMPT})")

    def pages_of(self, request_id: str) -> list[int]:
        """The pages the live request holds, in the order they were handed out.

        Raises KeyError if ``request_id`` is not live.
        """
        raise NotImplementedError(f"Reclaimer.pages_of ({_PROMPT})")

    def free_pages(self) -> int:
        """How many pages are free (can be handed out now). Waiting pages are not free."""
        raise NotImplementedError(f"Reclaimer.free_pages ({_PROMPT})")
