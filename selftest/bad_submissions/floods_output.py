"""A submission that prints megabytes on every call and returns trivial answers."""
import sys


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots: int) -> None:
        self.n = num_slots
        sys.stdout.write("x" * 2_000_000 + "\n")
        sys.stderr.write("y" * 2_000_000 + "\n")

    def acquire(self, tokens):
        print("z" * 1_000_000)
        return 0, 0, list(range(len(tokens)))

    def stats(self):
        return {"free": self.n, "cached": 0, "pinned": 0, "leased": 0}
