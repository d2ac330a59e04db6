"""Honest baseline of leak_hidden_inputs: the same submission without the cheat."""

class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        self.n = num_slots

    def __getattr__(self, name):
        def nothing(*args, **kwargs):
            raise ValueError("not implemented")
        return nothing
