"""Starts a reply and never finishes it: writes a length prefix promising 3 MiB on the
reply pipe, a few bytes of it, then sleeps.

Attack: Writes the start of a reply frame on its reply pipe and never completes it, so a reader waiting for the rest hangs.
Class: replies
Targets: edge_split
Stopped by: a reply must arrive in full within a few seconds of its first byte (and the
call within its wall-clock limit): the worker is killed and the test fails.
Baseline: _nothing_written.py
"""
import fcntl
import os
import struct
import time


def _reply_pipes():
    for fd in range(3, 256):
        try:
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except OSError:
            continue
        if flags & os.O_ACCMODE == os.O_WRONLY:
            yield fd


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        for fd in _reply_pipes():
            try:
                os.write(fd, struct.pack("<I", 3 << 20) + b'{"ok": [1, ')
            except OSError:
                pass
        time.sleep(3600)
