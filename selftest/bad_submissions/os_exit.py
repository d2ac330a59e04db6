"""A submission that calls os._exit(0) from inside the API: the test process dies."""
import os


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots: int) -> None:
        os._exit(0)
