"""Answers with a reply far larger than any honest answer (64 MiB), to exhaust the
trusted test process's memory.

Attack: Returns a 64 MiB string from every call so the trusted side must read and parse it.
Class: replies
Targets: edge_split
Stopped by: the reply cap (4 MiB unless kata.toml says otherwise) checked on the reply's
length prefix, before any of it is read: the worker is killed and the test fails.
"""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        self.n = num_slots

    def acquire(self, tokens):
        return "x" * (64 << 20)

    def stats(self):
        return "x" * (64 << 20)
