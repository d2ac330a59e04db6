"""An independent correct solution of block_hash, written from the prompt and the stub.

Written by the kata's author as a deliberately different design from the reference:
- a block's exact identity is the whole (namespace, token prefix) tuple, not a parent
  content id (simpler, more memory; duplicates need no special case: every copy carries
  the same identity);
- cached free blocks sit in a hand-written doubly linked list (like vLLM's
  FreeKVCacheBlockQueue) instead of an OrderedDict; empty blocks in a list used as a
  stack (a first version kept them in a set: set.pop() on a big, mostly empty set scans
  its sparse table, which the complexity test flagged at 5-35x depending on load);
- the hash chain is computed incrementally per request and the encoding uses a different
  (still injective) layout: namespace first, then the parent hash, both length-prefixed,
  and tokens as 8-byte little-endian.
Carried over by the kata's author to issue 29's rule (a duplicate is cached too, a hit takes
the copy cached first, the blocks after a duplicate are cached as usual): the per-request
"still caching" flag is gone and every full block is registered.
"""

from __future__ import annotations

import struct

from graders.support.block_hash import HashFn, sha256


class OutOfBlocks(RuntimeError):
    pass


def _valid_tokens(tokens: list[int]) -> list[int]:
    if not isinstance(tokens, list) or any(
            type(t) is not int or t < 0 or t >= 1 << 32 for t in tokens):
        raise ValueError(f"tokens must be a list of ints in [0, 2**32): {tokens!r}")
    return tokens


def _one_hash(parent: bytes | None, namespace: str, block: list[int], hash_fn: HashFn) -> bytes:
    ns = namespace.encode("utf-8")
    parts = [struct.pack("<Q", len(ns)), ns]
    if parent is None:
        parts.append(b"R")
    else:
        parts += [b"P", struct.pack("<Q", len(parent)), parent]
    parts.append(struct.pack(f"<{len(block)}Q", *block))
    return hash_fn(b"".join(parts))


def block_hashes(tokens: list[int], block_size: int, namespace: str = "",
                 hash_fn: HashFn = sha256) -> list[bytes]:
    if type(block_size) is not int or block_size <= 0:
        raise ValueError("block_size must be a positive int")
    if not isinstance(namespace, str):
        raise ValueError("namespace must be a str")
    _valid_tokens(tokens)
    out: list[bytes] = []
    parent: bytes | None = None
    for start in range(0, len(tokens) - block_size + 1, block_size):
        parent = _one_hash(parent, namespace, tokens[start:start + block_size], hash_fn)
        out.append(parent)
    return out


class _Node:
    __slots__ = ("block", "prev", "next")

    def __init__(self, block: int) -> None:
        self.block = block
        self.prev: _Node | None = None
        self.next: _Node | None = None


class _LRU:
    """Doubly linked list of block ids with O(1) push_back, pop_front and remove."""

    def __init__(self) -> None:
        self.head = _Node(-1)
        self.tail = _Node(-1)
        self.head.next, self.tail.prev = self.tail, self.head
        self.nodes: dict[int, _Node] = {}

    def __len__(self) -> int:
        return len(self.nodes)

    def push_back(self, block: int) -> None:
        node = _Node(block)
        last = self.tail.prev
        assert last is not None
        last.next, node.prev, node.next, self.tail.prev = node, last, self.tail, node
        self.nodes[block] = node

    def remove(self, block: int) -> None:
        node = self.nodes.pop(block)
        assert node.prev is not None and node.next is not None
        node.prev.next, node.next.prev = node.next, node.prev

    def pop_front(self) -> int:
        first = self.head.next
        assert first is not None and first is not self.tail
        self.remove(first.block)
        return first.block


class BlockPool:
    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn = sha256) -> None:
        if type(num_blocks) is not int or num_blocks <= 0:
            raise ValueError("num_blocks must be a positive int")
        if type(block_size) is not int or block_size <= 0:
            raise ValueError("block_size must be a positive int")
        self.bs = block_size
        self.hash_fn = hash_fn
        self.refs = [0] * num_blocks
        self.ident: dict[int, tuple[bytes, tuple[str, tuple[int, ...]]]] = {}  # cached blocks
        self.by_hash: dict[bytes, list[int]] = {}
        self.empty: list[int] = list(range(num_blocks))
        self.lru = _LRU()
        # request id -> [namespace, tokens, table, hashes]
        self.reqs: dict[str, tuple[str, list[int], list[int], list[bytes]]] = {}

    def _lookup(self, h: bytes, ident: tuple[str, tuple[int, ...]]) -> int | None:
        # by_hash lists are in caching order: the first match is the copy cached first
        for b in self.by_hash.get(h, []):
            if self.ident[b][1] == ident:
                return b
        return None

    def _new_block(self) -> int:
        if self.empty:
            b = self.empty.pop()
        else:
            b = self.lru.pop_front()
            h, _ = self.ident.pop(b)
            self.by_hash[h].remove(b)
            if not self.by_hash[h]:
                del self.by_hash[h]
        self.refs[b] = 1
        return b

    def _register(self, rid: str) -> None:
        ns, tokens, table, hashes = self.reqs[rid]
        while len(hashes) < len(tokens) // self.bs:
            i = len(hashes)
            block = tokens[i * self.bs:(i + 1) * self.bs]
            h = _one_hash(hashes[-1] if hashes else None, ns, block, self.hash_fn)
            hashes.append(h)
            # a duplicate of a cached content is cached too, as a second copy
            ident = (ns, tuple(tokens[:(i + 1) * self.bs]))
            self.ident[table[i]] = (h, ident)
            self.by_hash.setdefault(h, []).append(table[i])

    def allocate(self, request_id: str, tokens: list[int],
                 namespace: str = "") -> tuple[list[int], int]:
        if request_id in self.reqs:
            raise ValueError(f"{request_id!r} is running")
        if not isinstance(namespace, str):
            raise ValueError("namespace must be a str")
        _valid_tokens(tokens)
        if len(tokens) == 0:
            raise ValueError("empty prompt")
        hashes = block_hashes(tokens, self.bs, namespace, self.hash_fn)
        max_hit = (len(tokens) - 1) // self.bs
        found: list[int] = []
        while len(found) < max_hit:
            i = len(found)
            b = self._lookup(hashes[i], (namespace, tuple(tokens[:(i + 1) * self.bs])))
            if b is None:
                break
            found.append(b)
        blocks_total = (len(tokens) + self.bs - 1) // self.bs
        fresh_needed = blocks_total - len(found)
        from_queue = len([b for b in found if self.refs[b] == 0])
        if fresh_needed > len(self.empty) + len(self.lru) - from_queue:
            raise OutOfBlocks(f"{fresh_needed} blocks needed")
        for b in found:
            if self.refs[b] == 0:
                self.lru.remove(b)
            self.refs[b] += 1
        table = found + [self._new_block() for _ in range(fresh_needed)]
        self.reqs[request_id] = (namespace, list(tokens), table, hashes[:len(found)])
        self._register(request_id)
        return list(table), len(found) * self.bs

    def append(self, request_id: str, tokens: list[int]) -> list[int]:
        if request_id not in self.reqs:
            raise KeyError(request_id)
        _valid_tokens(tokens)
        _, toks, table, _ = self.reqs[request_id]
        fresh_needed = (len(toks) + len(tokens) + self.bs - 1) // self.bs - len(table)
        if fresh_needed > len(self.empty) + len(self.lru):
            raise OutOfBlocks(f"{fresh_needed} blocks needed")
        added = [self._new_block() for _ in range(fresh_needed)]
        table.extend(added)
        toks.extend(tokens)
        self._register(request_id)
        return added

    def free(self, request_id: str) -> None:
        if request_id not in self.reqs:
            raise KeyError(request_id)
        _, _, table, _ = self.reqs.pop(request_id)
        for b in table[::-1]:
            self.refs[b] -= 1
            if self.refs[b] == 0:
                if b in self.ident:
                    self.lru.push_back(b)
                else:
                    self.empty.append(b)

    def num_free_blocks(self) -> int:
        return len(self.empty) + len(self.lru)

    def cached_blocks(self) -> list[int]:
        return sorted(self.ident)
