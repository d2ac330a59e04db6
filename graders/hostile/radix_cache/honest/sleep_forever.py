"""Honest baseline of sleep_forever: the same submission without the cheat."""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        raise NotImplementedError("nothing but the cheat was written")
