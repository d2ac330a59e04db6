"""Ignores SIGTERM, SIGINT and SIGALRM, then spins.

Honest: 0
Stopped by: the worker is killed with SIGKILL, which cannot be ignored.
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
