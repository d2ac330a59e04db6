"""Recurses through C calls after lifting the recursion limit, overflowing the C stack.

Attack: Recurses through C calls after lifting the recursion limit, overflowing the C stack.
Class: sandbox
Targets: edge_split
Stopped by: the worker dies of SIGSEGV; the test fails; a fresh worker serves the next.
Baseline: _nothing_written.py
"""
import sys


class OutOfSlots(RuntimeError):
    pass


def _down(n):
    return list(map(_down, [n + 1]))


class RadixCache:
    def __init__(self, num_slots):
        sys.setrecursionlimit(10**8)
        _down(0)
