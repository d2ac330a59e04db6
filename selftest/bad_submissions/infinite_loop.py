"""A submission whose constructor never returns."""


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots: int) -> None:
        while True:
            pass
