"""A correct solution except on two inputs the prompt rules out: there it raises the
wrong error, or hangs, hoping the grader's recovery from that one test costs (or earns)
points in other tests.

Attack: Hangs past the test's time bound on one ruled-out input and raises the wrong error on another, so that a worker shared between tests would answer later tests late or not at all.
Class: isolation-spill
Targets: atomic_failure,dedup
Stopped by: every test that used the worker gets a fresh one, and a call interrupted
before its reply retires its worker: only the item of the failing tests is lost, the same
isolated as in-process (selftest/test_harness.py checks the two agree).
"""
import time

from ._ref import OutOfSlots  # noqa: F401
from ._ref import RadixCache as _Ref


class RadixCache(_Ref):
    def acquire(self, tokens):
        if list(tokens) == [4, 5]:
            raise RuntimeError("pool too small")
        return super().acquire(tokens)

    def abort(self, lease):
        if lease == 12345:
            time.sleep(3600)
        return super().abort(lease)
