"""Honest baseline of always_equal: the same submission without the cheat."""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        self.n = num_slots

    def acquire(self, tokens):
        return 0, 0, []

    def extend(self, lease, n):
        return []

    def commit(self, lease, tokens):
        return []

    def release(self, lease, tokens):
        return None

    def abort(self, lease):
        return None

    def evict(self, n):
        return 0

    def stats(self):
        return dict(free=self.n, cached=0, pinned=0, leased=0)
