"""Clears the lists it is handed, hoping to corrupt the test's own model of the truth.

Attack: Clears the lists it is handed, hoping to corrupt the test's own model of the truth.
Class: evidence
Targets: edge_split
Stopped by: the worker gets copies; the test's lists never leave the trusted process.
"""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        self.n = num_slots

    def acquire(self, tokens):
        n = len(tokens)
        tokens.clear()
        return 0, 0, list(range(n))

    def commit(self, lease, tokens):
        tokens.clear()
        return []

    def release(self, lease, tokens):
        tokens.clear()

    def stats(self):
        return {"free": self.n, "cached": 0, "pinned": 0, "leased": 0}
