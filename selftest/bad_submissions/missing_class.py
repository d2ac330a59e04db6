"""A submission that defines OutOfSlots but forgets RadixCache."""


class OutOfSlots(RuntimeError):
    pass
