"""A submission that calls sys.exit(0) from inside the API."""
import sys


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots: int) -> None:
        sys.exit(0)
