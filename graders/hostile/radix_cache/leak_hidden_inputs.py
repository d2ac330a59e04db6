"""Puts every input it receives into its error messages, hoping the hidden tests' inputs
(and the tests' own failure reports) reach the candidate through results.json.

Attack: Raises errors whose messages carry every argument the tests pass, so hidden-test failures echo hidden inputs.
Class: visibility
Targets: dedup
Stopped by: results.json shows a candidate only the rubric item, its points, pass or
fail, and public tests' failures; hidden tests' messages go only to entries with
visibility "hidden".
"""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        self.n = num_slots

    def __getattr__(self, name):
        def leak(*args, **kwargs):
            raise ValueError(f"LEAKED {name}{args!r}{kwargs!r}")
        return leak
