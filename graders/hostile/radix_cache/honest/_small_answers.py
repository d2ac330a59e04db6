"""The honest baseline several attacks share: the same submission without their cheats."""

class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        self.n = num_slots

    def acquire(self, tokens):
        return 0, 0, []

    def stats(self):
        return []
