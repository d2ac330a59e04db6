"""Answers with the most objects a reply under the byte cap can hold: a million empty
lists and dicts, hoping the trusted side's parser builds them all.

Attack: Returns hundreds of thousands of tiny containers in a reply just under the byte cap.
Class: replies
Targets: edge_split
Stopped by: the container count checked before parsing and the decoder's element budget:
an invalid reply, the worker killed, the test failed, the trusted side's memory bounded.
Baseline: _small_answers.py
"""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        self.n = num_slots

    def acquire(self, tokens):
        return 0, 0, [[] for _ in range(300_000)]

    def stats(self):
        return [0] * 1_100_000
