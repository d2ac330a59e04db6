"""A submission that lifts the recursion limit and recurses through C calls until the
C stack overflows (the test process dies of SIGSEGV)."""
import sys


class OutOfSlots(RuntimeError):
    pass


def _down(n: int) -> list[object]:
    return list(map(_down, [n + 1]))


class RadixCache:
    def __init__(self, num_slots: int) -> None:
        sys.setrecursionlimit(10**8)
        _down(0)
