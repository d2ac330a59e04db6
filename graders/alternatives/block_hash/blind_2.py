"""Blind alternative (written from the prompt, the stub and the public tests only).
Differs from the obvious hash -> bucket-list design: the pool never trusts a hash; cached
blocks live in ONE dict keyed by their exact key ((None, namespace, tokens) for block 0,
(parent content id, tokens) after it), so no hash_fn, however weak, can cause a wrong hit.
Carried over by the kata's maintainer to issue 29's rule (a duplicate is cached too, a hit
takes the copy cached first, and the blocks after a duplicate are cached as usual): the
dict's value became the list of copies, and the parent part of a key became the content id
the copies share (it was the parent block id, which a duplicate's child would not match).
Free blocks: a FIFO deque of empty ids plus an intrusive doubly linked list (prev/next
arrays with a sentinel) as the LRU queue; block_hashes uses a tagged varint encoding.
"""

from __future__ import annotations

from collections import deque

from graders.support.block_hash import HashFn, sha256

_LIMIT = 1 << 32


class OutOfBlocks(RuntimeError):
    """Raised when a call needs more blocks than are free (empty or cached)."""


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _tokens(tokens) -> list[int]:
    try:
        seq = list(tokens)
    except TypeError as e:
        raise ValueError(f"tokens must be a sequence of ints, got {tokens!r}") from e
    for t in seq:
        if not _is_int(t) or not 0 <= t < _LIMIT:
            raise ValueError(f"token {t!r} is not an int in [0, 2**32)")
    return seq


def _varint(n: int, out: bytearray) -> None:
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return


def _encode(parent: bytes | None, namespace: str, toks) -> bytes:
    """Tag + length-prefixed parent, char count + 3-byte code points, count + varint tokens."""
    out = bytearray()
    if parent is None:
        out.append(0)
    else:
        out.append(1)
        _varint(len(parent), out)
        out += parent
    _varint(len(namespace), out)
    for ch in namespace:
        out += ord(ch).to_bytes(3, "big")
    _varint(len(toks), out)
    for t in toks:
        _varint(t, out)
    return bytes(out)


def block_hashes(tokens: list[int], block_size: int, namespace: str = "",
                 hash_fn: HashFn = sha256) -> list[bytes]:
    if not _is_int(block_size) or block_size < 1:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")
    if not isinstance(namespace, str):
        raise ValueError(f"namespace must be a str, got {namespace!r}")
    seq = _tokens(tokens)
    out: list[bytes] = []
    parent: bytes | None = None
    for start in range(0, len(seq) - block_size + 1, block_size):
        parent = bytes(hash_fn(_encode(parent, namespace, seq[start:start + block_size])))
        out.append(parent)
    return out


class _Request:
    __slots__ = ("table", "namespace", "length", "tail")

    def __init__(self, table, namespace, length, tail):
        self.table: list[int] = table
        self.namespace: str = namespace
        self.length: int = length          # tokens so far
        self.tail: list[int] = tail        # tokens of the trailing partial block


class BlockPool:
    """A pool of KV blocks with a prefix cache keyed by exact block content."""

    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn = sha256) -> None:
        if not _is_int(num_blocks) or num_blocks < 1:
            raise ValueError(f"num_blocks must be a positive int, got {num_blocks!r}")
        if not _is_int(block_size) or block_size < 1:
            raise ValueError(f"block_size must be a positive int, got {block_size!r}")
        self._n = num_blocks
        self._bs = block_size
        self._hash_fn = hash_fn   # not needed: the exact key is the index (see docstring)
        self._ref = [0] * num_blocks
        self._key: list[tuple | None] = [None] * num_blocks   # exact key while cached
        self._cid = [-1] * num_blocks         # content id while cached (copies share it)
        self._next_cid = 0
        self._index: dict[tuple, list[int]] = {}   # exact key -> copies, first cached first
        self._empty: deque[int] = deque(range(num_blocks))
        s = num_blocks                        # sentinel of the LRU list
        self._prev = [s] * (num_blocks + 1)
        self._next = [s] * (num_blocks + 1)
        self._queued = 0
        self._reqs: dict[object, _Request] = {}

    # -- the LRU queue of cached free blocks (intrusive doubly linked list) ------------
    def _q_push(self, b: int) -> None:
        s = self._n
        tail = self._prev[s]
        self._next[tail] = b
        self._prev[b] = tail
        self._next[b] = s
        self._prev[s] = b
        self._queued += 1

    def _q_unlink(self, b: int) -> None:
        p, nx = self._prev[b], self._next[b]
        self._next[p] = nx
        self._prev[nx] = p
        self._prev[b] = self._next[b] = -1
        self._queued -= 1

    def _q_pop_front(self) -> int:
        b = self._next[self._n]
        if b == self._n:
            raise OutOfBlocks("no free block left")
        self._q_unlink(b)
        return b

    # -- helpers -----------------------------------------------------------------------
    def _fresh(self) -> int:
        if self._empty:
            b = self._empty.popleft()
        else:
            b = self._q_pop_front()
            copies = self._index[self._key[b]]
            copies.remove(b)
            if not copies:
                del self._index[self._key[b]]
            self._key[b] = None
        self._ref[b] = 1
        return b

    def _make_key(self, j: int, table: list[int], namespace: str, blk: tuple) -> tuple:
        return (None, namespace, blk) if j == 0 else (self._cid[table[j - 1]], blk)

    def _cache(self, j: int, table: list[int], namespace: str, blk: tuple) -> None:
        key = self._make_key(j, table, namespace, blk)
        copies = self._index.setdefault(key, [])
        if copies:                    # a duplicate: cached too, sharing the content id
            self._cid[table[j]] = self._cid[copies[0]]
        else:
            self._cid[table[j]] = self._next_cid
            self._next_cid += 1
        copies.append(table[j])
        self._key[table[j]] = key

    # -- API ---------------------------------------------------------------------------
    def allocate(self, request_id: str, tokens: list[int],
                 namespace: str = "") -> tuple[list[int], int]:
        if request_id in self._reqs:
            raise ValueError(f"request {request_id!r} is already running")
        if not isinstance(namespace, str):
            raise ValueError(f"namespace must be a str, got {namespace!r}")
        toks = _tokens(tokens)
        if not toks:
            raise ValueError("empty prompt")
        bs = self._bs
        nblocks = -(-len(toks) // bs)
        cap = (len(toks) - 1) // bs           # the last prompt token is always computed
        hits: list[int] = []
        queued_hits = 0
        for j in range(cap):
            copies = self._index.get(self._make_key(j, hits, namespace,
                                                    tuple(toks[j * bs:(j + 1) * bs])))
            if not copies:
                break
            b = copies[0]
            hits.append(b)
            if self._ref[b] == 0:
                queued_hits += 1
        need = nblocks - len(hits)
        if need > len(self._empty) + self._queued - queued_hits:
            raise OutOfBlocks(f"need {need} fresh blocks")
        for b in hits:
            if self._ref[b] == 0:
                self._q_unlink(b)
            self._ref[b] += 1
        table = list(hits)
        for _ in range(need):
            table.append(self._fresh())
        full = len(toks) // bs
        for j in range(len(hits), full):
            self._cache(j, table, namespace, tuple(toks[j * bs:(j + 1) * bs]))
        self._reqs[request_id] = _Request(table, namespace, len(toks), toks[full * bs:])
        return list(table), len(hits) * bs

    def append(self, request_id: str, tokens: list[int]) -> list[int]:
        if request_id not in self._reqs:
            raise KeyError(request_id)
        st = self._reqs[request_id]
        toks = _tokens(tokens)
        if not toks:
            return []
        bs = self._bs
        new_len = st.length + len(toks)
        need = -(-new_len // bs) - len(st.table)
        if need > len(self._empty) + self._queued:
            raise OutOfBlocks(f"need {need} fresh blocks")
        added = [self._fresh() for _ in range(need)]
        st.table.extend(added)
        first, full = st.length // bs, new_len // bs
        buf = st.tail + toks                   # tokens from position first * bs
        for j in range(first, full):
            k = j - first
            self._cache(j, st.table, st.namespace, tuple(buf[k * bs:(k + 1) * bs]))
        st.tail = buf[(full - first) * bs:]
        st.length = new_len
        return added

    def free(self, request_id: str) -> None:
        if request_id not in self._reqs:
            raise KeyError(request_id)
        st = self._reqs.pop(request_id)
        for b in reversed(st.table):
            self._ref[b] -= 1
            if self._ref[b] == 0:
                if self._key[b] is not None:
                    self._q_push(b)
                else:
                    self._empty.append(b)

    def num_free_blocks(self) -> int:
        return len(self._empty) + self._queued

    def cached_blocks(self) -> list[int]:
        return sorted(b for copies in self._index.values() for b in copies)
