"""Sleeps past every timeout (a sleep uses no CPU, so CPU limits do not see it).

Attack: Sleeps past every timeout (a sleep uses no CPU, so CPU limits do not see it).
Class: sandbox
Targets: edge_split
Stopped by: the per-call wall-clock limit.
Baseline: _nothing_written.py
"""
import time


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        time.sleep(100000)
