"""Starts processes that outlive it: a child in its group and a double-forked daemon in a
session of its own (both run `sleep 987654`).

Attack: Starts processes that outlive it: a child in its group and a double-forked daemon in a session of its own (both run `sleep 987654`).
Class: sandbox
Targets: edge_split
Stopped by: the process-group kill, and the sweep of every process under the worker's uid.
Baseline: _nothing_written.py
"""
import os
import subprocess


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        subprocess.Popen(["sleep", "987654"])
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", "987654"])
            os._exit(0)
        raise RuntimeError("children left behind")
