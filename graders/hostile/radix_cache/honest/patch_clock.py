"""Honest baseline of patch_clock: the same submission without the cheat."""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        self.n = num_slots

    def stats(self):
        return {"free": self.n, "cached": 0, "pinned": 0, "leased": 0}
