"""Sleeps past every timeout (a sleep uses no CPU, so CPU limits do not see it).

Honest: 0
Stopped by: the per-call wall-clock limit.
"""
import time


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        time.sleep(100000)
