"""Independent correct solution, written blind (from the prompt and the stub only) by a
helper session.

radix_cache: a radix-tree prefix cache over a pool of KV slots (blind reference)."""

from __future__ import annotations

import heapq
import itertools

_FREE, _CACHED, _LEASED = 0, 1, 2


class OutOfSlots(RuntimeError):
    """Raised when a request needs more slots than are free plus evictable."""


class _Node:
    __slots__ = ("tokens", "slots", "children", "parent", "pin", "time", "serial")

    def __init__(self, tokens, slots, parent, time, serial):
        self.tokens = tokens
        self.slots = slots
        self.children = {}
        self.parent = parent
        self.pin = 0
        self.time = time
        self.serial = serial


class _Lease:
    __slots__ = ("known", "slots", "ncached", "node")

    def __init__(self, known, slots, ncached, node):
        self.known = known      # token ids known for leading positions (prompt + committed)
        self.slots = slots      # one slot per position
        self.ncached = ncached  # slots[:ncached] are in the tree, pinned via path to node
        self.node = node        # deepest node pinned by this lease (root if none)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _token_list(tokens) -> list[int]:
    if isinstance(tokens, (str, bytes)):
        raise ValueError("tokens must be a sequence of ints")
    try:
        toks = list(tokens)
    except TypeError:
        raise ValueError("tokens must be a sequence of ints") from None
    for t in toks:
        if not _is_int(t):
            raise ValueError(f"non-int token {t!r}")
    return toks


class RadixCache:
    """A prefix cache: a radix tree whose edges are token runs, each token mapped to a slot."""

    def __init__(self, num_slots: int) -> None:
        if not _is_int(num_slots) or num_slots < 1:
            raise ValueError("num_slots must be a positive int")
        self._n = num_slots
        self._serial = itertools.count()
        self._clock = 0
        self._root = _Node([], [], None, 0, next(self._serial))
        self._free = list(range(num_slots - 1, -1, -1))  # pop() hands out slot 0 first
        self._state = bytearray(num_slots)  # all _FREE
        self._cached = 0
        self._pinned = 0
        self._leased = 0
        self._leaves: set[_Node] = set()
        self._leases: dict[int, _Lease] = {}
        self._next_lease = 1

    # ------------------------------------------------------------------ helpers
    def _tick(self) -> int:
        self._clock += 1
        return self._clock

    def _take_free(self) -> int:
        s = self._free.pop()
        assert self._state[s] == _FREE
        self._state[s] = _LEASED
        self._leased += 1
        return s

    def _free_leased(self, s: int) -> None:
        assert self._state[s] == _LEASED, f"slot {s} not leased"
        self._state[s] = _FREE
        self._leased -= 1
        self._free.append(s)

    def _pin_path(self, node: _Node) -> None:
        while node is not self._root:
            node.pin += 1
            if node.pin == 1:
                self._pinned += len(node.tokens)
            node = node.parent

    def _unpin_path(self, node: _Node) -> None:
        while node is not self._root:
            node.pin -= 1
            assert node.pin >= 0
            if node.pin == 0:
                self._pinned -= len(node.tokens)
            node = node.parent

    def _touch_path(self, node: _Node, now: int) -> None:
        while node is not self._root:
            node.time = now
            node = node.parent

    def _split(self, node: _Node, k: int) -> _Node:
        """Split node's edge after k tokens (0 < k < len); return the new upper node."""
        assert 0 < k < len(node.tokens)
        parent = node.parent
        upper = _Node(node.tokens[:k], node.slots[:k], parent, node.time, next(self._serial))
        upper.pin = node.pin  # every lease pinning node holds all of it, so the upper part too
        node.tokens = node.tokens[k:]
        node.slots = node.slots[k:]
        node.parent = upper
        upper.children[node.tokens[0]] = node
        parent.children[upper.tokens[0]] = upper
        return upper

    @staticmethod
    def _common(edge: list[int], toks: list[int], start: int, stop: int) -> int:
        k = 0
        m = min(len(edge), stop - start)
        while k < m and edge[k] == toks[start + k]:
            k += 1
        return k

    def _evict(self, n: int) -> int:
        target = min(n, self._cached - self._pinned)
        if target <= 0:
            return 0
        heap = [(lf.time, lf.serial, lf) for lf in self._leaves if lf.pin == 0]
        heapq.heapify(heap)
        freed = 0
        while freed < target:
            assert heap, "evictable accounting out of sync"
            _, _, leaf = heapq.heappop(heap)
            for s in leaf.slots:
                assert self._state[s] == _CACHED
                self._state[s] = _FREE
                self._free.append(s)
            freed += len(leaf.slots)
            self._cached -= len(leaf.slots)
            parent = leaf.parent
            del parent.children[leaf.tokens[0]]
            self._leaves.discard(leaf)
            leaf.parent = None
            if parent is not self._root and not parent.children:
                self._leaves.add(parent)
                if parent.pin == 0:
                    heapq.heappush(heap, (parent.time, parent.serial, parent))
        return freed

    def _lease(self, lease_id) -> _Lease:
        try:
            return self._leases[lease_id]
        except (KeyError, TypeError):
            raise KeyError(lease_id) from None

    def _check_commit(self, lease: _Lease, tokens) -> list[int]:
        toks = _token_list(tokens)
        if len(toks) > len(lease.slots):
            raise ValueError("tokens longer than the lease's slots")
        m = min(len(toks), len(lease.known))
        if toks[:m] != lease.known[:m]:
            raise ValueError("tokens disagree with the lease's prompt")
        return toks

    def _commit(self, lease: _Lease, toks: list[int]) -> list[int]:
        L = len(toks)
        node, i = self._root, 0
        while i < L:
            child = node.children.get(toks[i])
            if child is None:
                break
            k = self._common(child.tokens, toks, i, L)
            for j in range(k):
                pos, ts = i + j, child.slots[j]
                if pos < lease.ncached:
                    assert lease.slots[pos] == ts
                elif lease.slots[pos] != ts:
                    self._free_leased(lease.slots[pos])  # the tree's slot wins
                    lease.slots[pos] = ts
            i += k
            if k < len(child.tokens):
                node = self._split(child, k)
                break
            node = child
        if i < L:
            assert i >= lease.ncached
            new = _Node(toks[i:L], lease.slots[i:L], node, 0, next(self._serial))
            for s in new.slots:
                assert self._state[s] == _LEASED
                self._state[s] = _CACHED
            self._leased -= L - i
            self._cached += L - i
            node.children[new.tokens[0]] = new
            self._leaves.discard(node)
            self._leaves.add(new)
            node = new
        self._touch_path(node, self._tick())
        if L > lease.ncached:
            self._pin_path(node)
            self._unpin_path(lease.node)
            lease.node = node
            lease.ncached = L
        if L > len(lease.known):
            lease.known.extend(toks[len(lease.known):L])
        return list(lease.slots[:L])

    def _end(self, lease_id: int, lease: _Lease) -> None:
        for s in lease.slots[lease.ncached:]:
            self._free_leased(s)
        self._unpin_path(lease.node)
        del self._leases[lease_id]

    # --------------------------------------------------------------------- API
    def acquire(self, tokens: list[int]) -> tuple[int, int, list[int]]:
        toks = _token_list(tokens)
        if not toks:
            raise ValueError("empty prompt")
        limit = len(toks) - 1
        node, i = self._root, 0
        partial = None  # (child, k) when the match ends inside child's edge
        newly_pinned = 0
        while i < limit:
            child = node.children.get(toks[i])
            if child is None:
                break
            k = self._common(child.tokens, toks, i, limit)
            if child.pin == 0:
                newly_pinned += k
            i += k
            if k < len(child.tokens):
                partial = (child, k)
                break
            node = child
        matched = i
        need = len(toks) - matched
        if need > len(self._free) + (self._cached - self._pinned - newly_pinned):
            raise OutOfSlots(f"need {need} slots")
        if partial is not None:
            node = self._split(*partial)
        self._touch_path(node, self._tick())
        self._pin_path(node)
        slots = []
        cur = node
        while cur is not self._root:
            slots[:0] = cur.slots
            cur = cur.parent
        assert len(slots) == matched
        if need > len(self._free):
            self._evict(need - len(self._free))
        slots.extend(self._take_free() for _ in range(need))
        lid = self._next_lease
        self._next_lease += 1
        self._leases[lid] = _Lease(list(toks), slots, matched, node)
        return lid, matched, list(slots)

    def extend(self, lease_id: int, n: int) -> list[int]:
        lease = self._lease(lease_id)
        if not _is_int(n) or n < 0:
            raise ValueError("n must be a non-negative int")
        if n > len(self._free) + self._cached - self._pinned:
            raise OutOfSlots(f"need {n} slots")
        if n > len(self._free):
            self._evict(n - len(self._free))
        fresh = [self._take_free() for _ in range(n)]
        lease.slots.extend(fresh)
        return fresh

    def commit(self, lease_id: int, tokens: list[int]) -> list[int]:
        lease = self._lease(lease_id)
        toks = self._check_commit(lease, tokens)
        return self._commit(lease, toks)

    def release(self, lease_id: int, tokens: list[int]) -> None:
        lease = self._lease(lease_id)
        toks = self._check_commit(lease, tokens)
        self._commit(lease, toks)
        self._end(lease_id, lease)

    def abort(self, lease_id: int) -> None:
        lease = self._lease(lease_id)
        self._end(lease_id, lease)

    def evict(self, num_slots: int) -> int:
        if not _is_int(num_slots) or num_slots < 0:
            raise ValueError("num_slots must be a non-negative int")
        return self._evict(num_slots)

    def stats(self) -> dict[str, int]:
        return {
            "free": len(self._free),
            "cached": self._cached,
            "pinned": self._pinned,
            "leased": self._leased,
        }
