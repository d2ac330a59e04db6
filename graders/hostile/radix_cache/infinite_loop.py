"""Never returns from a call.

Honest: 0
Stopped by: the per-call wall-clock limit: the worker is killed, the test fails.
"""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        while True:
            pass
