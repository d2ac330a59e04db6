"""stream_detok: a streaming detokenizer with stop strings.

Fill in every method. The prompt is katas/stream_detok/README.md; run the public tests with
``nox -s kata -- stream_detok``.

Token ids arrive a few at a time; each token is a run of bytes (byte-level BPE tokens may
hold part of a UTF-8 character). The detokenizer turns them into text for the client as
early as it safely can, and stops the stream at the first stop string.

The contract, whatever the ids and however they are grouped into pushes:
- the concatenation of every ``push`` result and the ``finish`` result equals the
  whole-output reference: all the bytes decoded at once (UTF-8, invalid sequences
  replaced as ``bytes.decode("utf-8", errors="replace")`` does), cut at the first stop
  string to complete (see ``push``);
- nothing emitted is ever taken back;
- after each push, no more text is held back than the rules of ``push`` allow.
"""

from __future__ import annotations

from collections.abc import Sequence

_PROMPT = "see katas/stream_detok/README.md"


class StreamDetokenizer:
    """Bytes in, safe text out, stopping at the first stop string."""

    def __init__(self, vocab: Sequence[bytes], stop: Sequence[str] = (),
                 include_stop: bool = False) -> None:
        """A detokenizer for one generation.

        ``vocab[i]`` is token ``i``'s bytes. ``stop`` lists the stop strings (duplicates
        are allowed); ``include_stop`` keeps the matched stop string at the end of the
        output instead of dropping it.

        Raises ValueError for an empty stop string (and TypeError or ValueError when a
        stop is not a str or a token is not bytes).
        """
        raise NotImplementedError(f"StreamDetokenizer.__init__ ({_PROMPT})")

    def push(self, token_ids: Sequence[int]) -> str:
        """Take the next tokens (one or several, as speculative decoding delivers them) and
        return the text that has become safe to send, "" if none.

        The first stop string to complete wins: the one whose last character comes
        earliest in the text; at an equal end, the one that starts earlier. The output
        stops right before it (right after it with ``include_stop``), and every later
        push returns "".

        Held back after each push: only an incomplete UTF-8 character at the end, and,
        when ``include_stop`` is False, the longest end of the text that is a proper
        prefix of some stop string (it may still turn into a stop that must not be sent).
        Emitting a little more is allowed only where it is certain to be part of the final
        output whatever bytes come next.

        Raises ValueError when an id is not in ``range(len(vocab))``, RuntimeError after
        ``finish``; a push that raises changes nothing.
        """
        raise NotImplementedError(f"StreamDetokenizer.push ({_PROMPT})")

    def finish(self) -> str:
        """End of generation: return everything still held back (an incomplete character
        at the end becomes U+FFFD, as the whole-output decode makes it), still cut at a stop
        string if one completes. Returns "" after a stop.

        Raises RuntimeError when called a second time.
        """
        raise NotImplementedError(f"StreamDetokenizer.finish ({_PROMPT})")

    @property
    def stopped(self) -> bool:
        """True once a stop string has completed."""
        raise NotImplementedError(f"StreamDetokenizer.stopped ({_PROMPT})")

    @property
    def matched_stop(self) -> str | None:
        """The stop string that ended the stream, None while none has."""
        raise NotImplementedError(f"StreamDetokenizer.matched_stop ({_PROMPT})")
