"""Allocates memory without bound.

Attack: Allocates memory without bound.
Class: sandbox
Targets: edge_split
Stopped by: RLIMIT_AS (4 GiB): the allocation fails inside the worker.
Baseline: _nothing_written.py
"""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        hog = []
        while True:
            hog.append(bytearray(256 << 20))
