"""The block hash chain shared by the prefix_routing kata's router, its tests and the
replicas the tests simulate.

``block_hashes(tokens, block_size)`` returns one 32-byte hash per full block of
``tokens`` (a trailing partial block has none). Block i's hash is SHA-256 of block i-1's
hash (32 zero bytes for block 0) followed by block i's tokens, each as 4 little-endian
bytes, so two prompts get the same hash for block i exactly when their tokens 0 through
the end of block i are equal (SHA-256 is treated as collision-free). An eviction notice
names blocks by these hashes, as vLLM's ``BlockRemoved`` event does.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

ROOT = bytes(32)
TOKEN_LIMIT = 2**32


def block_hashes(tokens: Sequence[int], block_size: int) -> list[bytes]:
    """The chained hashes of the full blocks of ``tokens``.

    Raises ValueError for a block_size that is not a positive int or a token that is not
    an int in ``[0, 2**32)`` (bools are not ints).
    """
    if type(block_size) is not int or block_size < 1:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")
    toks = list(tokens)
    for t in toks:
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < TOKEN_LIMIT:
            raise ValueError(f"token ids must be ints in [0, 2**32), got {t!r}")
    out: list[bytes] = []
    parent = ROOT
    for end in range(block_size, len(toks) + 1, block_size):
        block = toks[end - block_size:end]
        parent = hashlib.sha256(parent + struct.pack(f"<{block_size}I", *block)).digest()
        out.append(parent)
    return out
