"""Answers with values nested far deeper than any honest answer, to blow the trusted
side's stack while it parses or decodes them.

Attack: Returns lists nested 100 and 100,000 levels deep.
Class: replies
Targets: edge_split
Stopped by: the JSON parser's recursion guard and the decoder's depth budget (64): an
invalid reply, the worker killed, the test failed.
Baseline: _small_answers.py
"""


def _nest(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        self.n = num_slots

    def acquire(self, tokens):
        return 0, 0, _nest(100)

    def stats(self):
        import sys

        sys.setrecursionlimit(1_000_000)
        return _nest(100_000)
