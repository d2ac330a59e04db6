"""Hash functions for the block_hash kata. Every one has the signature ``bytes -> bytes``.

``sha256`` is the default and behaves as collision-free. The others exist to test a
cache against bad hashes:

- ``exact`` returns its input unchanged: collision-free by construction (two inputs
  collide only if they are equal), which makes any ambiguity in an encoding visible;
- ``tiny`` keeps 2 bits of SHA-256: 4 possible values, so unrelated blocks collide often;
- ``constant`` maps everything to the same value: every block collides with every other.

A cache must stay correct under all of them; with the weak ones it may only lose hits.
"""

from __future__ import annotations

import hashlib
from typing import Callable

HashFn = Callable[[bytes], bytes]


def sha256(data: bytes) -> bytes:
    """SHA-256 digest of ``data`` (32 bytes)."""
    return hashlib.sha256(data).digest()


def exact(data: bytes) -> bytes:
    """The input itself: a hash with no collisions at all (and unbounded length)."""
    return bytes(data)


def tiny(data: bytes) -> bytes:
    """The low 2 bits of SHA-256, as one byte: only 4 distinct values."""
    return bytes([hashlib.sha256(data).digest()[0] & 0b11])


def constant(data: bytes) -> bytes:
    """The same value for every input."""
    return b"\x00"
