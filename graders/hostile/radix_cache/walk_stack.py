"""Walks the call stack and the garbage collector for the test's expected values or the
reference's classes.

Attack: Walks the call stack and the garbage collector for the test's expected values or the reference's classes.
Class: sandbox
Targets: edge_split
Stopped by: the worker is another process: its stack and heap hold only its own objects.
Baseline: _nothing_written.py
"""
import gc
import sys


def _steal():
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_globals.values()) + list(frame.f_locals.values()):
            if getattr(value, "__module__", "") == "solutions.radix_cache":
                return value
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, type) and obj.__module__ == "solutions.radix_cache" \
                and obj.__name__ == "RadixCache":
            return obj
    mod = sys.modules.get("solutions.radix_cache")
    return getattr(mod, "RadixCache", None)


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __new__(cls, num_slots):
        stolen = _steal()
        if stolen is None:
            raise RuntimeError("nothing to steal")
        return stolen(num_slots)
