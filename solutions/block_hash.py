"""Reference solution for the block_hash kata.

The pool: every block is free and empty, free and cached (in the eviction queue, still
hittable), or held by one or more requests (``ref > 0``; every full block a request holds
is cached). The cache maps a block hash to the cached blocks carrying it, in the order they
were cached (a bucket: a weak hash puts many there, and duplicates of one content sit side
by side, as in vLLM V1); a block matches only if its exact key (parent content, namespace,
tokens) matches too, so a colliding hash can cost a hit but never return the wrong KV.

A cached content gets an id (a counter, never reused) that its copies share, and a block's
key names its parent's content id, not the parent block: so a block filled after a
duplicate is hit through either copy. A content stays cached for as long as any block
extending it does: a request frees tail first and a hit takes a whole prefix, so some copy
of the parent always re-enters the eviction queue after the child.

A request's blocks are hashed in order, each once: ``allocate`` hashes block by block while
it looks the prompt up, and caching goes on from where the lookup stopped.
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from itertools import count

from graders.support.block_hash import HashFn, sha256

_TOKEN_LIMIT = 2**32
_ROOT = -1  # the parent id of a request's first block


class OutOfBlocks(RuntimeError):
    """Raised when a call needs more blocks than are free; the call changes nothing."""


def _words(tokens: list[int]) -> bytes:
    """The tokens as 4-byte big-endian words, each checked once (in C: the types, then
    the range as they are packed)."""
    if not isinstance(tokens, list) or not set(map(type, tokens)) <= {int}:
        raise ValueError("tokens must be a list of ints")
    try:
        return struct.pack(f">{len(tokens)}I", *tokens)
    except struct.error:
        bad = next(t for t in tokens if not 0 <= t < _TOKEN_LIMIT)
        raise ValueError(f"token ids must lie in [0, 2**32), got {bad}") from None


def _ns_field(namespace: str) -> bytes:
    ns = namespace.encode("utf-8")
    return len(ns).to_bytes(8, "big") + ns


def _hash_block(parent: bytes | None, ns_field: bytes, words: bytes, hash_fn: HashFn) -> bytes:
    """``hash_fn`` of an injective encoding: a root flag or the length-prefixed parent
    hash, the length-prefixed namespace (``_ns_field``), then the block's words."""
    head = b"\x00" if parent is None else b"\x01" + len(parent).to_bytes(8, "big") + parent
    return hash_fn(head + ns_field + words)


def block_hashes(tokens: list[int], block_size: int, namespace: str = "",
                 hash_fn: HashFn = sha256) -> list[bytes]:
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 1:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")
    if not isinstance(namespace, str):
        raise ValueError(f"namespace must be a str, got {type(namespace).__name__}")
    words, ns, width = _words(tokens), _ns_field(namespace), 4 * block_size
    out: list[bytes] = []
    for i in range(len(tokens) // block_size):
        out.append(_hash_block(out[-1] if out else None, ns, words[i * width:(i + 1) * width],
                               hash_fn))
    return out


class _Block:
    __slots__ = ("ref", "hash", "key", "cid")

    def __init__(self) -> None:
        self.ref = 0
        self.hash = b""
        self.key: tuple[int, str, bytes] | None = None  # (parent cid, namespace, words) if cached
        self.cid = _ROOT                                # the content's id while cached


class _Request:
    __slots__ = ("namespace", "ns_field", "words", "table", "hashes")

    def __init__(self, namespace: str, words: bytes) -> None:
        self.namespace = namespace
        self.ns_field = _ns_field(namespace)
        self.words = bytearray(words)   # the tokens so far, 4 bytes each
        self.table: list[int] = []
        self.hashes: list[bytes] = []   # hashes of the first full blocks, each made once


class BlockPool:
    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn = sha256) -> None:
        for name, value in (("num_blocks", num_blocks), ("block_size", block_size)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self._bs = block_size
        self._hash_fn = hash_fn
        self._blocks = [_Block() for _ in range(num_blocks)]
        self._empty = list(range(num_blocks - 1, -1, -1))     # free, not cached
        self._queue: OrderedDict[int, None] = OrderedDict()  # free and cached, LRU first
        self._buckets: dict[bytes, dict[int, None]] = {}   # hash -> blocks, first cached first
        self._cids = count()
        self._requests: dict[str, _Request] = {}

    # -- the cache ------------------------------------------------------------------
    def _find(self, h: bytes, key: tuple[int, str, bytes]) -> int | None:
        """The first cached block (in caching order) whose exact key is ``key``."""
        for b in self._buckets.get(h, ()):
            if self._blocks[b].key == key:
                return b
        return None

    def _uncache(self, b: int) -> None:
        block = self._blocks[b]
        bucket = self._buckets[block.hash]
        del bucket[b]
        if not bucket:
            del self._buckets[block.hash]
        block.key = None

    def _take_free(self) -> int:
        """A free block for new content: an empty one, else evict the least recently freed."""
        if self._empty:
            b = self._empty.pop()
        else:
            b, _ = self._queue.popitem(last=False)
            self._uncache(b)
        self._blocks[b].ref = 1
        return b

    def _key(self, req: _Request, i: int, parent: int) -> tuple[int, str, bytes]:
        """Block ``i``'s exact content: its parent's content id, the namespace, its words."""
        width = 4 * self._bs
        return parent, req.namespace, bytes(req.words[i * width:(i + 1) * width])

    def _block_hash(self, req: _Request, i: int, words: bytes) -> bytes:
        """Hash of the request's block ``i`` (blocks are hashed in order, each once)."""
        if i == len(req.hashes):
            parent = req.hashes[-1] if i else None
            req.hashes.append(_hash_block(parent, req.ns_field, words, self._hash_fn))
        return req.hashes[i]

    def _cache_full_blocks(self, req: _Request, start: int) -> None:
        """Cache the request's full blocks from index ``start`` on. A block whose content
        is cached already is cached too, as a second copy of it (a duplicate)."""
        for i in range(start, len(req.words) // (4 * self._bs)):
            key = self._key(req, i, self._blocks[req.table[i - 1]].cid if i else _ROOT)
            h = self._block_hash(req, i, key[2])
            copy = self._find(h, key)
            block = self._blocks[req.table[i]]
            block.hash, block.key = h, key
            block.cid = next(self._cids) if copy is None else self._blocks[copy].cid
            self._buckets.setdefault(h, {})[req.table[i]] = None

    # -- the API --------------------------------------------------------------------
    def allocate(self, request_id: str, tokens: list[int],
                 namespace: str = "") -> tuple[list[int], int]:
        if request_id in self._requests:
            raise ValueError(f"request {request_id!r} is already running")
        if not isinstance(namespace, str):
            raise ValueError(f"namespace must be a str, got {type(namespace).__name__}")
        req = _Request(namespace, _words(tokens))
        if not tokens:
            raise ValueError("a prompt needs at least one token")
        bs = self._bs
        hits: list[int] = []
        for i in range((len(tokens) - 1) // bs):  # the last token is always computed
            key = self._key(req, i, self._blocks[hits[-1]].cid if hits else _ROOT)
            b = self._find(self._block_hash(req, i, key[2]), key)
            if b is None:
                break
            hits.append(b)
        need = -(-len(tokens) // bs) - len(hits)
        revived = sum(1 for b in hits if self._blocks[b].ref == 0)
        if need > self.num_free_blocks() - revived:
            raise OutOfBlocks(f"request {request_id!r} needs {need} new blocks, "
                              f"{self.num_free_blocks() - revived} are free")
        for b in hits:
            if self._blocks[b].ref == 0:
                del self._queue[b]
            self._blocks[b].ref += 1
        req.table = hits + [self._take_free() for _ in range(need)]
        self._requests[request_id] = req
        self._cache_full_blocks(req, len(hits))
        return list(req.table), len(hits) * bs

    def append(self, request_id: str, tokens: list[int]) -> list[int]:
        req = self._requests[request_id]
        words = _words(tokens)
        length = len(req.words) // 4
        need = -(-(length + len(tokens)) // self._bs) - len(req.table)
        if need > self.num_free_blocks():
            raise OutOfBlocks(f"request {request_id!r} needs {need} new blocks, "
                              f"{self.num_free_blocks()} are free")
        new = [self._take_free() for _ in range(need)]
        req.table += new
        req.words += words
        self._cache_full_blocks(req, length // self._bs)
        return new

    def free(self, request_id: str) -> None:
        req = self._requests.pop(request_id)
        for b in reversed(req.table):  # tail first: the tail is evicted before the head
            block = self._blocks[b]
            block.ref -= 1
            if block.ref == 0:
                if block.key is None:
                    self._empty.append(b)
                else:
                    self._queue[b] = None

    def num_free_blocks(self) -> int:
        return len(self._empty) + len(self._queue)

    def cached_blocks(self) -> list[int]:
        return sorted(b for bucket in self._buckets.values() for b in bucket)
