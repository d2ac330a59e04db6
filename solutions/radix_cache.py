"""Reference solution for the radix_cache kata.

The tree: each node owns an edge (a run of tokens and their slots), its children keyed by
the first token of their edge, a pin count (how many live leases hold the node) and the
time it was last used. A lease pins the whole path from the root to its deepest cached
node, so a pinned node's ancestors are pinned too, and every unpinned node is evictable.

Eviction pops a min-heap of unpinned leaves keyed by last use, kept up to date as nodes
become unpinned leaves, so a request at capacity pays for what it evicts, not for the whole
tree. Entries are never removed in place: one goes stale when its node is pinned, used,
gains a child or leaves the tree, and ``evict`` skips it (lazy invalidation).
"""

from __future__ import annotations

import heapq
import itertools


class OutOfSlots(RuntimeError):
    """Raised when a request needs more slots than are free plus evictable."""


class _Node:
    __slots__ = ("tokens", "slots", "children", "parent", "pins", "last_used")

    def __init__(self, tokens: list[int], slots: list[int], parent: _Node | None) -> None:
        self.tokens = tokens
        self.slots = slots
        self.children: dict[int, _Node] = {}
        self.parent = parent
        self.pins = 0
        self.last_used = 0


class _Lease:
    __slots__ = ("slots", "prompt", "node", "cached")

    def __init__(self, slots: list[int], prompt: list[int], node: _Node, cached: int) -> None:
        self.slots = slots      # one slot per position of the sequence
        self.prompt = prompt    # the acquired tokens, to validate commits
        self.node = node        # deepest tree node this lease pins (root: none)
        self.cached = cached    # positions 0 .. cached-1 hold tree slots


class RadixCache:
    def __init__(self, num_slots: int) -> None:
        if not isinstance(num_slots, int) or isinstance(num_slots, bool) or num_slots <= 0:
            raise ValueError(f"num_slots must be a positive int, got {num_slots!r}")
        self._num_slots = num_slots
        self._free = list(range(num_slots - 1, -1, -1))
        self._root = _Node([], [], None)
        self._root.pins = 1  # the root is never evicted
        self._leases: dict[int, _Lease] = {}
        self._ids = itertools.count()
        self._clock = itertools.count(1)
        self._cached = 0
        self._pinned = 0
        self._heap: list[tuple[int, int, _Node]] = []   # (last_used, tie-break, leaf)
        self._pushes = itertools.count()

    # -- tree walking ---------------------------------------------------------------
    def _match(self, tokens: list[int], limit: int) -> tuple[_Node, int]:
        """Deepest node on ``tokens[:limit]``, splitting the edge where the match ends."""
        node, pos = self._root, 0
        while pos < limit:
            child = node.children.get(tokens[pos])
            if child is None:
                break
            run = 0
            while run < len(child.tokens) and pos + run < limit and \
                    child.tokens[run] == tokens[pos + run]:
                run += 1
            if run < len(child.tokens):
                child = self._split(child, run)
            node, pos = child, pos + run
            if run < len(child.tokens):
                break
        return node, pos

    def _split(self, child: _Node, at: int) -> _Node:
        """Cut ``child``'s edge after ``at`` tokens; the new parent inherits the pins."""
        parent = child.parent
        assert parent is not None and 0 < at < len(child.tokens)
        upper = _Node(child.tokens[:at], child.slots[:at], parent)
        upper.pins = child.pins
        upper.last_used = child.last_used
        parent.children[upper.tokens[0]] = upper
        child.tokens, child.slots = child.tokens[at:], child.slots[at:]
        child.parent = upper
        upper.children[child.tokens[0]] = child
        return upper

    def _path(self, node: _Node) -> list[_Node]:
        path = []
        while node is not self._root:
            path.append(node)
            assert node.parent is not None
            node = node.parent
        return path

    def _pin(self, node: _Node, delta: int) -> None:
        for n in self._path(node):
            if n.pins == 0 and delta > 0:
                self._pinned += len(n.slots)
            n.pins += delta
            if n.pins == 0:
                self._pinned -= len(n.slots)
                self._offer(n)

    def _touch(self, node: _Node) -> None:
        now = next(self._clock)
        for n in self._path(node):
            n.last_used = now

    # -- slots ----------------------------------------------------------------------
    def _evictable(self) -> int:
        return self._cached - self._pinned

    def _take(self, n: int) -> list[int]:
        if len(self._free) < n:
            self.evict(n - len(self._free))
        out = self._free[-n:] if n else []
        del self._free[len(self._free) - n:]
        return out

    def _lease(self, lease_id: int) -> _Lease:
        try:
            return self._leases[lease_id]
        except KeyError:
            raise KeyError(f"unknown lease {lease_id!r}") from None

    # -- API ------------------------------------------------------------------------
    def acquire(self, tokens: list[int]) -> tuple[int, int, list[int]]:
        _check_tokens(tokens)
        if not tokens:
            raise ValueError("a prompt needs at least one token")
        node, cached = self._match(tokens, len(tokens) - 1)
        self._pin(node, +1)
        need = len(tokens) - cached
        if need > len(self._free) + self._evictable():
            self._pin(node, -1)
            raise OutOfSlots(f"prompt needs {need} fresh slots; {len(self._free)} free, "
                             f"{self._evictable()} evictable")
        self._touch(node)
        hit = [s for n in reversed(self._path(node)) for s in n.slots]
        slots = hit + self._take(need)
        lease_id = next(self._ids)
        self._leases[lease_id] = _Lease(slots, list(tokens), node, cached)
        return lease_id, cached, list(slots)

    def extend(self, lease_id: int, n: int) -> list[int]:
        lease = self._lease(lease_id)
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be a non-negative int, got {n!r}")
        if n > len(self._free) + self._evictable():
            raise OutOfSlots(f"{n} slots wanted; {len(self._free)} free, "
                             f"{self._evictable()} evictable")
        fresh = self._take(n)
        lease.slots.extend(fresh)
        return list(fresh)

    def commit(self, lease_id: int, tokens: list[int]) -> list[int]:
        lease = self._lease(lease_id)
        self._validate(lease, tokens)
        self._insert(lease, tokens)
        return lease.slots[:len(tokens)]

    def _validate(self, lease: _Lease, tokens: list[int]) -> None:
        _check_tokens(tokens)
        if len(tokens) > len(lease.slots):
            raise ValueError(f"{len(tokens)} tokens but the lease holds {len(lease.slots)} slots")
        n = min(len(tokens), len(lease.prompt))
        if tokens[:n] != lease.prompt[:n]:
            raise ValueError("tokens disagree with the lease's prompt")

    def _insert(self, lease: _Lease, tokens: list[int]) -> None:
        """Put ``tokens`` (with the lease's slots) in the tree; keep the tree's slots where
        it already has them and free the lease's duplicates."""
        if len(tokens) <= lease.cached:
            return
        node, pos = self._match(tokens, len(tokens))
        for i in range(lease.cached, pos):  # the tree had these already
            tree_slot = self._slot_at(node, pos, i)
            if lease.slots[i] != tree_slot:
                self._free.append(lease.slots[i])
                lease.slots[i] = tree_slot
        if pos < len(tokens):
            leaf = _Node(list(tokens[pos:]), lease.slots[pos:len(tokens)], node)
            node.children[tokens[pos]] = leaf
            self._cached += len(leaf.slots)
            node = leaf
        self._pin(node, +1)
        self._pin(lease.node, -1)
        self._touch(node)
        lease.node, lease.cached = node, len(tokens)

    def _slot_at(self, node: _Node, depth: int, i: int) -> int:
        """Slot of position ``i`` on the path that ends at ``node`` (``depth`` tokens)."""
        while depth - len(node.tokens) > i:
            depth -= len(node.tokens)
            assert node.parent is not None
            node = node.parent
        return node.slots[i - (depth - len(node.tokens))]

    def release(self, lease_id: int, tokens: list[int]) -> None:
        lease = self._lease(lease_id)
        self._validate(lease, tokens)
        self._insert(lease, tokens)
        self._end(lease_id, lease)

    def abort(self, lease_id: int) -> None:
        self._end(lease_id, self._lease(lease_id))

    def _end(self, lease_id: int, lease: _Lease) -> None:
        self._free.extend(lease.slots[lease.cached:])
        self._pin(lease.node, -1)
        del self._leases[lease_id]

    def evict(self, num_slots: int) -> int:
        if not isinstance(num_slots, int) or num_slots < 0:
            raise ValueError(f"num_slots must be a non-negative int, got {num_slots!r}")
        freed = 0
        while freed < num_slots and self._heap:
            last_used, _, leaf = heapq.heappop(self._heap)
            if not self._evictable_leaf(leaf, last_used):
                continue    # a stale entry
            parent = leaf.parent
            assert parent is not None
            del parent.children[leaf.tokens[0]]
            self._free.extend(leaf.slots)
            self._cached -= len(leaf.slots)
            freed += len(leaf.slots)
            self._offer(parent)     # it may have become a leaf
        return freed

    # -- the eviction heap ----------------------------------------------------------
    def _offer(self, node: _Node) -> None:
        """Queue ``node`` if it is an unpinned leaf: every such leaf has an entry."""
        if node.pins or node.children:   # the root is pinned for good
            return
        heapq.heappush(self._heap, (node.last_used, next(self._pushes), node))
        if len(self._heap) > 2 * self._cached + 64:   # mostly stale: rebuild, O(1) amortized
            live = {id(n): (t, i, n) for t, i, n in self._heap if self._evictable_leaf(n, t)}
            self._heap = list(live.values())
            heapq.heapify(self._heap)

    def _evictable_leaf(self, node: _Node, last_used: int) -> bool:
        """Whether a heap entry still holds: an unpinned leaf in the tree, unused since."""
        parent = node.parent
        return (node.pins == 0 and not node.children and node.last_used == last_used
                and parent is not None and parent.children.get(node.tokens[0]) is node)

    def stats(self) -> dict[str, int]:
        leased = self._num_slots - len(self._free) - self._cached
        return {"free": len(self._free), "cached": self._cached,
                "pinned": self._pinned, "leased": leased}


def _check_tokens(tokens: list[int]) -> None:
    if not isinstance(tokens, list) or not all(
            isinstance(t, int) and not isinstance(t, bool) for t in tokens):
        raise ValueError("tokens must be a list of ints")
