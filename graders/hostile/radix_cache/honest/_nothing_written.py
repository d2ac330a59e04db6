"""The shared honest baseline of the attacks that wrote nothing but their cheat."""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        raise NotImplementedError("nothing but the cheat was written")
