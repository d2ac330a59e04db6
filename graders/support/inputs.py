"""How tests check that a call leaves its inputs alone: it gets them read-only.

For a kata with ``read_only_inputs = true`` in kata.toml the implementation receives every
argument read-only, in every mode (graders/wire.py): under isolation the worker decodes
arrays as views over immutable bytes (``setflags(write=True)`` cannot undo that) and lists
and dicts as frozen ones; in-process the test's own objects arrive as read-only views and
frozen copies. An in-place write therefore raises where it happens, and the test sees that
failure as what the call returned, across the wire or not. Nothing here runs inside the
worker or trusts a value computed there.

``leaves_inputs_alone`` makes the call on the test's side and turns a read-only failure
into a clear assertion; every other exception is the implementation's own and propagates.
"""

from __future__ import annotations

from typing import Any

READ_ONLY_MARKS = ("read-only", "WRITEABLE")


def leaves_inputs_alone(fn: Any, *args: Any, what: str = "") -> Any:
    """``fn(*args)``; an AssertionError if it tried to write into one of its arguments."""
    try:
        return fn(*args)
    except (ValueError, TypeError) as exc:
        if any(mark in str(exc) for mark in READ_ONLY_MARKS):
            raise AssertionError(
                f"never modify the arguments you are given: {what or 'the call'} wrote into "
                f"one of them (they are passed read-only): {type(exc).__name__}: {exc}"
            ) from None
        raise
