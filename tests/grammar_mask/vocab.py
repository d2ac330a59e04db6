"""stream_detok's byte-level BPE vocabulary, read without the tokenizers library.

``data/tokenizer.json`` is a byte-identical copy of ``tests/stream_detok/data/tokenizer.json``
(trained by ``graders/support/train_stream_detok_vocab.py``), kept here so that a bundle of
this kata alone holds it. Byte-level BPE writes each byte as a printable character (GPT-2's
byte-to-unicode table); ``load_vocab`` undoes that table to get each token's raw bytes.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

TOKENIZER_JSON = Path(__file__).resolve().parent / "data" / "tokenizer.json"


def _byte_of_char() -> dict[str, int]:
    """GPT-2's table: printable bytes stand for themselves, the others for chr(256 + k)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    table = {chr(b): b for b in printable}
    others = [b for b in range(256) if b not in table.values()]
    table.update({chr(256 + k): b for k, b in enumerate(others)})
    return table


@functools.lru_cache(maxsize=1)
def load_vocab() -> tuple[bytes, ...]:
    """Token id -> bytes (700 tokens, ids 0..699)."""
    vocab = json.loads(TOKENIZER_JSON.read_text(encoding="utf-8"))["model"]["vocab"]
    table = _byte_of_char()
    out = {token_id: bytes(table[c] for c in piece) for piece, token_id in vocab.items()}
    assert sorted(out) == list(range(len(out))), "token ids must be 0..n-1"
    return tuple(out[i] for i in range(len(out)))
