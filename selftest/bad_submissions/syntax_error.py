"""A submission that does not parse."""
class RadixCache:
    def __init__(self, num_slots: int) -> None
        pass
