"""A submission that ignores SIGALRM and then spins: only the grader's kill stops it."""
import signal


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots: int) -> None:
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            pass
