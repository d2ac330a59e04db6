"""The eviction queue is a plain list: a hit on a free cached block removes it with list.remove, a scan of the whole queue, so allocate grows with the pool.

Rubric: complexity
"""

from __future__ import annotations


from graders.support.block_hash import HashFn, sha256

_TOKEN_LIMIT = 2**32
_ROOT = -1  # the parent id of a request's first block


class OutOfBlocks(RuntimeError):
    """Raised when a call needs more blocks than are free; the call changes nothing."""


def _check_tokens(tokens: list[int]) -> None:
    if not isinstance(tokens, list):
        raise ValueError(f"tokens must be a list of ints, got {type(tokens).__name__}")
    for t in tokens:
        if not isinstance(t, int) or isinstance(t, bool) or not 0 <= t < _TOKEN_LIMIT:
            raise ValueError(f"token ids must be ints in [0, 2**32), got {t!r}")


def _encode(parent: bytes | None, namespace: str, tokens: list[int]) -> bytes:
    """An injective encoding: a root flag or the length-prefixed parent hash, the
    length-prefixed namespace, then fixed-width tokens up to the end."""
    ns = namespace.encode("utf-8")
    head = b"\x00" if parent is None else b"\x01" + len(parent).to_bytes(8, "big") + parent
    body = b"".join(t.to_bytes(4, "big") for t in tokens)
    return head + len(ns).to_bytes(8, "big") + ns + body


def _chain(parent: bytes | None, tokens: list[int], start: int, stop: int, block_size: int,
           namespace: str, hash_fn: HashFn) -> list[bytes]:
    """Hashes of the full blocks from ``start`` (index) up to ``stop`` (excluded)."""
    out: list[bytes] = []
    for i in range(start, stop):
        parent = hash_fn(_encode(parent, namespace, tokens[i * block_size:(i + 1) * block_size]))
        out.append(parent)
    return out


def block_hashes(tokens: list[int], block_size: int, namespace: str = "",
                 hash_fn: HashFn = sha256) -> list[bytes]:
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 1:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")
    if not isinstance(namespace, str):
        raise ValueError(f"namespace must be a str, got {type(namespace).__name__}")
    _check_tokens(tokens)
    return _chain(None, tokens, 0, len(tokens) // block_size, block_size, namespace, hash_fn)


class _Block:
    __slots__ = ("ref", "hash", "key")

    def __init__(self) -> None:
        self.ref = 0
        self.hash = b""
        self.key: tuple[int, str, tuple[int, ...]] | None = None  # set while cached


class _Request:
    __slots__ = ("namespace", "tokens", "table", "hashes", "caching")

    def __init__(self, namespace: str, tokens: list[int], table: list[int],
                 hashes: list[bytes]) -> None:
        self.namespace = namespace
        self.tokens = tokens
        self.table = table
        self.hashes = hashes    # hash of every full block so far
        self.caching = True     # False once a block filled with content cached elsewhere


class BlockPool:
    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn = sha256) -> None:
        for name, value in (("num_blocks", num_blocks), ("block_size", block_size)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self._bs = block_size
        self._hash_fn = hash_fn
        self._blocks = [_Block() for _ in range(num_blocks)]
        self._empty = list(range(num_blocks - 1, -1, -1))     # free, not cached
        self._queue: list[int] = []  # free and cached, LRU first
        self._buckets: dict[bytes, list[int]] = {}
        self._requests: dict[str, _Request] = {}

    # -- the cache ------------------------------------------------------------------
    def _find(self, h: bytes, key: tuple[int, str, tuple[int, ...]]) -> int | None:
        for b in self._buckets.get(h, ()):
            if self._blocks[b].key == key:
                return b
        return None

    def _uncache(self, b: int) -> None:
        block = self._blocks[b]
        bucket = self._buckets[block.hash]
        bucket.remove(b)
        if not bucket:
            del self._buckets[block.hash]
        block.key = None

    def _take_free(self) -> int:
        """A free block for new content: an empty one, else evict the least recently freed."""
        if self._empty:
            b = self._empty.pop()
        else:
            b = self._queue.pop(0)
            self._uncache(b)
        self._blocks[b].ref = 1
        return b

    def _cache_full_blocks(self, req: _Request) -> None:
        """Hash the request's newly full blocks and cache them, stopping for good at the
        first one whose content the cache already holds in another block."""
        bs, done = self._bs, len(req.hashes)
        full = len(req.tokens) // bs
        req.hashes += _chain(req.hashes[-1] if req.hashes else None, req.tokens, done, full,
                             bs, req.namespace, self._hash_fn)
        for i in range(done, full):
            if not req.caching:
                return
            b = req.table[i]
            key = (req.table[i - 1] if i else _ROOT, req.namespace,
                   tuple(req.tokens[i * bs:(i + 1) * bs]))
            if self._find(req.hashes[i], key) is not None:
                req.caching = False   # a duplicate: the cache keeps the block it has
                return
            block = self._blocks[b]
            block.hash, block.key = req.hashes[i], key
            self._buckets.setdefault(block.hash, []).append(b)

    # -- the API --------------------------------------------------------------------
    def allocate(self, request_id: str, tokens: list[int],
                 namespace: str = "") -> tuple[list[int], int]:
        if request_id in self._requests:
            raise ValueError(f"request {request_id!r} is already running")
        if not isinstance(namespace, str):
            raise ValueError(f"namespace must be a str, got {type(namespace).__name__}")
        _check_tokens(tokens)
        if not tokens:
            raise ValueError("a prompt needs at least one token")
        bs = self._bs
        hashes = block_hashes(tokens, bs, namespace, self._hash_fn)
        hits: list[int] = []
        for i in range((len(tokens) - 1) // bs):  # the last token is always computed
            key = (hits[-1] if hits else _ROOT, namespace, tuple(tokens[i * bs:(i + 1) * bs]))
            b = self._find(hashes[i], key)
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
                self._queue.remove(b)
            self._blocks[b].ref += 1
        table = hits + [self._take_free() for _ in range(need)]
        req = _Request(namespace, list(tokens), table, hashes[:len(hits)])
        self._requests[request_id] = req
        self._cache_full_blocks(req)
        return list(table), len(hits) * bs

    def append(self, request_id: str, tokens: list[int]) -> list[int]:
        req = self._requests[request_id]
        _check_tokens(tokens)
        need = -(-(len(req.tokens) + len(tokens)) // self._bs) - len(req.table)
        if need > self.num_free_blocks():
            raise OutOfBlocks(f"request {request_id!r} needs {need} new blocks, "
                              f"{self.num_free_blocks()} are free")
        new = [self._take_free() for _ in range(need)]
        req.table += new
        req.tokens += tokens
        self._cache_full_blocks(req)
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
                    self._queue.append(b)

    def num_free_blocks(self) -> int:
        return len(self._empty) + len(self._queue)

    def cached_blocks(self) -> list[int]:
        return sorted(b for bucket in self._buckets.values() for b in bucket)
