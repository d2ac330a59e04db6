"""Hunts for the grade's progress channel and writes forged "passed" events into it.

Attack: Writes forged start/result events for every test to every descriptor it holds or can reopen (its own, its parent's through /proc, paths on its parent's command line).
Class: progress
Targets: prefix_match
Stopped by: the channel is a pipe passed to the trusted pytest by descriptor only, not
inheritable, and that process is not dumpable (its /proc entries are closed to other
processes of its uid); the worker holds only its two request/reply pipes, and a forged
frame on the reply pipe is an invalid reply that fails the test. The driver also rejects
results with no matching start, second results, and results for tests never collected.
Baseline: _nothing_written.py
"""
import json
import os

_NAMES = ["tests/radix_cache/test_radix_cache_public.py::" + n for n in (
    "test_first_request_gets_fresh_distinct_slots", "test_released_prefix_is_reused_with_its_slots",
    "test_whole_prompt_cached_still_computes_the_last_token")]
_FORGED = "".join(json.dumps({"event": e, "nodeid": n, "outcome": "passed", "message": "",
                              "duration": 0.01}) + "\n"
                  for n in _NAMES for e in ("start", "result")).encode()


def _targets():
    paths = []
    parent = os.getppid()
    try:
        cmd = open(f"/proc/{parent}/cmdline", "rb").read().split(b"\0")
        paths += [c.decode() for c in cmd if b"progress" in c or c.isdigit()]
        for fd in os.listdir(f"/proc/{parent}/fd"):
            paths.append(f"/proc/{parent}/fd/{fd}")
    except OSError:
        pass
    return paths


def _forge():
    for fd in range(3, 256):  # its own descriptors, the reply pipe included
        try:
            os.write(fd, _FORGED)
        except OSError:
            pass
    for path in _targets():
        try:
            with open(path, "ab") as fh:
                fh.write(_FORGED)
        except (OSError, ValueError):
            pass


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        _forge()
        raise NotImplementedError("forged instead")
