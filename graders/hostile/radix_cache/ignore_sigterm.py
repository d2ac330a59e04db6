"""Ignores SIGTERM, SIGINT and SIGALRM, then spins.

Attack: Ignores SIGTERM, SIGINT and SIGALRM, then spins.
Class: sandbox
Targets: edge_split
Stopped by: the worker is killed with SIGKILL, which cannot be ignored.
Baseline: _nothing_written.py
"""
import signal


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        while True:
            pass
