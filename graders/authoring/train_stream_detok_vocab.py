"""Train the small byte-level BPE vocabulary the stream_detok tests use, offline.

    python graders/authoring/train_stream_detok_vocab.py

reads ``tests/stream_detok/data/corpus.txt`` (text written for this project: euro signs,
emoji, CJK, accented Latin, code) and writes ``tests/stream_detok/data/tokenizer.json``.
The output is committed; the tests never train and never reach a hub. Needs the
``tokenizers`` library (``pip install tokenizers``); training is deterministic for a given
corpus and library version.

A small vocabulary over text with many multi-byte characters is the point: byte-level BPE
then has tokens that hold only part of a character (the first two bytes of a CJK
character, the lead byte of an emoji) and tokens that run across character boundaries.
"""

from __future__ import annotations

import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "tests" / "stream_detok" / "data"
VOCAB_SIZE = 700


def main() -> int:
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError:
        print("needs the tokenizers library: pip install tokenizers", file=sys.stderr)
        return 1
    text = (DATA / "corpus.txt").read_text(encoding="utf-8")
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tokenizer.train_from_iterator(text.splitlines(keepends=True), trainer=trainer)
    out = DATA / "tokenizer.json"
    tokenizer.save(str(out), pretty=False)
    ids = tokenizer.encode(text).ids
    assert tokenizer.decode(ids) == text, "the trained tokenizer must round-trip its corpus"
    print(f"wrote {out} ({out.stat().st_size} bytes, {tokenizer.get_vocab_size()} tokens; "
          f"the corpus is {len(ids)} tokens)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
