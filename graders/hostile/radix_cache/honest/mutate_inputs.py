"""Honest baseline of mutate_inputs: the same submission without the cheat."""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        self.n = num_slots

    def acquire(self, tokens):
        n = len(tokens)
        return 0, 0, list(range(n))

    def commit(self, lease, tokens):
        return []

    def release(self, lease, tokens):
        pass

    def stats(self):
        return {"free": self.n, "cached": 0, "pinned": 0, "leased": 0}
