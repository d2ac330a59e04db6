"""Trivial answers: sends nothing, never stops, accepts anything.

Rubric: *
"""

from __future__ import annotations

from collections.abc import Sequence


class StreamDetokenizer:
    def __init__(self, vocab: Sequence[bytes], stop: Sequence[str] = (),
                 include_stop: bool = False) -> None:
        pass

    def push(self, token_ids: Sequence[int]) -> str:
        return ""

    def finish(self) -> str:
        return ""

    @property
    def stopped(self) -> bool:
        return False

    @property
    def matched_stop(self) -> str | None:
        return None
