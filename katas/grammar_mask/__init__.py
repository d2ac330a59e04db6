"""grammar_mask: the allowed-token mask of a byte-level DFA, fast, and jump-forward that keeps
the tokenization (see katas/grammar_mask/README.md).

The DFA is plain data: ``table[s][b]`` is the state after byte ``b`` (0-255) from state ``s``,
``-1`` when there is no transition; ``accepting[s]`` says whether the output may end at ``s``.
The start state is 0. ``graders.support.grammar_mask.compile_regex`` builds one from a
regex; ``graders.support.grammar_mask.longest_match`` is the tokenizer jump-forward uses.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


class GrammarMasker:
    """Token masks and jump-forward for one grammar over one byte-level vocabulary."""

    def __init__(self, tokens: Sequence[bytes], eos_id: int,
                 table: Sequence[Sequence[int]], accepting: Sequence[bool]) -> None:
        """``tokens[i]`` is token ``i``'s bytes; ``eos_id`` is the end-of-sequence token (its
        bytes are ignored). ``table`` and ``accepting`` are the DFA (module docstring).

        Raises ValueError (TypeError allowed where a value has the wrong type) unless:
        ``tokens`` holds bytes, every token but EOS is non-empty, and every single byte
        0-255 is a token; ``eos_id`` is an int (not a bool) in ``0..len(tokens) - 1``;
        ``table`` has at least one row, each of exactly 256 ints (not bools) in
        ``-1..len(table) - 1``; ``accepting`` holds one bool per row.
        """
        raise NotImplementedError("GrammarMasker.__init__ (see katas/grammar_mask/README.md)")

    def allowed(self, state: int) -> npt.NDArray[np.bool_]:
        """A bool array of ``len(tokens)``: True for each token the grammar allows at
        ``state`` (Rules: a token keeps the walk alive; EOS where the state accepts).

        Raises ValueError for a state that is not an int (bools are not) in
        ``0..len(table) - 1``. Changing the returned array changes nothing in the masker.
        """
        raise NotImplementedError("GrammarMasker.allowed (see katas/grammar_mask/README.md)")

    def forced_bytes(self, state: int) -> bytes:
        """The longest byte string that every accepted continuation from ``state`` starts
        with (Rules: forced bytes). Raises ValueError for a bad state, as ``allowed``."""
        raise NotImplementedError("GrammarMasker.forced_bytes (see katas/grammar_mask/README.md)")

    def jump_forward(self, ids: Sequence[int]) -> list[int]:
        """The output's token ids after jump-forward, given the ids generated so far from
        the start state (Rules: jump-forward): ``ids`` unchanged when nothing is jumped,
        else ``ids`` without its last token, followed by the retokenized tail.

        Raises ValueError when an id is not an int in range, is EOS, or kills the walk."""
        raise NotImplementedError("GrammarMasker.jump_forward (see katas/grammar_mask/README.md)")
