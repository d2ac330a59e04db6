"""Floods its output: hundreds of megabytes to stdout and stderr.

Attack: Floods its output: hundreds of megabytes to stdout and stderr.
Class: sandbox
Targets: edge_split
Stopped by: the worker's output goes to a file capped by RLIMIT_FSIZE; reports keep a
truncated tail.
Baseline: _nothing_written.py
"""
import sys


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        block = "x" * (1 << 20)
        for _ in range(300):
            try:
                sys.stdout.write(block)
                sys.stderr.write(block)
            except OSError:
                break
        raise RuntimeError("flooded")
