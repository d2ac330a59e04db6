"""A submission that recurses without bound after lifting the recursion limit."""
import sys


class OutOfSlots(RuntimeError):
    pass


def _down(n: int) -> int:
    return _down(n + 1) + 1


class RadixCache:
    def __init__(self, num_slots: int) -> None:
        sys.setrecursionlimit(10**8)
        _down(0)
