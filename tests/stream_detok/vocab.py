"""The shipped byte-level BPE vocabulary, read without the tokenizers library.

``data/tokenizer.json`` was trained by ``graders/authoring/train_stream_detok_vocab.py``
on ``data/corpus.txt``. Byte-level BPE writes each byte as a printable character (GPT-2's
byte-to-unicode table); ``load_vocab`` undoes that table to get each token's raw bytes.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
TOKENIZER_JSON = DATA / "tokenizer.json"
CORPUS = DATA / "corpus.txt"


def _byte_of_char() -> dict[str, int]:
    """GPT-2's table: printable bytes map to themselves, the rest to chr(256 + k)."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    table = {chr(b): b for b in printable}
    extra = 0
    for b in range(256):
        if b not in printable:
            table[chr(256 + extra)] = b
            extra += 1
    return table


@functools.lru_cache(maxsize=1)
def load_vocab() -> tuple[bytes, ...]:
    """Token id -> bytes for the shipped vocabulary."""
    model = json.loads(TOKENIZER_JSON.read_text(encoding="utf-8"))["model"]
    table = _byte_of_char()
    vocab: dict[int, bytes] = {}
    for piece, token_id in model["vocab"].items():
        vocab[token_id] = bytes(table[c] for c in piece)
    assert sorted(vocab) == list(range(len(vocab))), "token ids must be 0..n-1"
    return tuple(vocab[i] for i in range(len(vocab)))


@functools.lru_cache(maxsize=1)
def corpus() -> str:
    return CORPUS.read_text(encoding="utf-8")


def greedy_encode(text: str) -> list[int]:
    """Token ids whose bytes concatenate to ``text``'s UTF-8 (longest match first).

    Not BPE's own encoding, but a valid one: the detokenizer only sees ids and bytes.
    Every single byte is a token, so any text (and any byte string) can be encoded.
    """
    return greedy_encode_bytes(text.encode("utf-8"))


@functools.lru_cache(maxsize=1)
def _index() -> tuple[dict[bytes, int], int]:
    vocab = load_vocab()
    index: dict[bytes, int] = {}
    for i, b in enumerate(vocab):
        index.setdefault(b, i)
    return index, max(len(b) for b in vocab)


def greedy_encode_bytes(data: bytes) -> list[int]:
    index, longest = _index()
    ids: list[int] = []
    i = 0
    while i < len(data):
        for n in range(min(longest, len(data) - i), 0, -1):
            token = index.get(data[i:i + n])
            if token is not None:
                ids.append(token)
                i += n
                break
        else:  # pragma: no cover - every byte is a token
            raise AssertionError(f"byte {data[i]:#x} is not a token")
    return ids
