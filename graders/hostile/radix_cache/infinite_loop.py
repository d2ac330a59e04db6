"""Never returns from a call.

Attack: Never returns from a call.
Class: sandbox
Targets: edge_split
Stopped by: the per-call wall-clock limit: the worker is killed, the test fails.
Baseline: _nothing_written.py
"""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        while True:
            pass
