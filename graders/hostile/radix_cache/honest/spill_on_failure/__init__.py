"""Honest baseline of spill_on_failure: the same submission without the hang (it still
raises the wrong error on the one ruled-out input)."""
from ._ref import OutOfSlots  # noqa: F401
from ._ref import RadixCache as _Ref


class RadixCache(_Ref):
    def acquire(self, tokens):
        if list(tokens) == [4, 5]:
            raise RuntimeError("pool too small")
        return super().acquire(tokens)
