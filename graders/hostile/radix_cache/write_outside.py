"""Writes files outside its folder: into the repository, /tmp, root's home, the parent.

Attack: Writes files outside its folder: into the repository, /tmp, root's home, the parent.
Class: sandbox
Targets: edge_split
Stopped by: the worker's uid owns only its scratch folder; /tmp is a private tmpfs.
Baseline: _nothing_written.py
"""
import os

for path in ("/work/main/PWNED-BY-SUBMISSION", "/tmp/PWNED-BY-SUBMISSION",
             "/root/PWNED-BY-SUBMISSION", "../PWNED-BY-SUBMISSION",
             "/work/PWNED-BY-SUBMISSION"):
    try:
        with open(path, "w") as fh:
            fh.write("pwned")
    except OSError:
        pass


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        raise RuntimeError("wrote outside")
