"""Returns objects whose __eq__ is always true (and that claim to be ints and dicts).

Attack: Returns objects whose __eq__ is always true (and that claim to be ints and dicts).
Class: evidence
Targets: edge_split
Stopped by: only plain data crosses the pipe; anything else arrives as an opaque handle,
which equals nothing but itself.
"""


class _Yes(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__

    def __le__(self, other):
        return True

    def __lt__(self, other):
        return True

    def __ge__(self, other):
        return True

    def __gt__(self, other):
        return True


class _YesDict(dict):
    def __eq__(self, other):
        return True

    def __getitem__(self, key):
        return _Yes(0)


class _YesList(list):
    def __eq__(self, other):
        return True

    def __getitem__(self, i):
        return _Yes(0)

    def __len__(self):
        return _Yes(0)


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        self.n = num_slots

    def acquire(self, tokens):
        return _Yes(0), _Yes(0), _YesList()

    def extend(self, lease, n):
        return _YesList()

    def commit(self, lease, tokens):
        return _YesList()

    def release(self, lease, tokens):
        return None

    def abort(self, lease):
        return None

    def evict(self, n):
        return _Yes(0)

    def stats(self):
        return _YesDict(free=self.n, cached=0, pinned=0, leased=0)
