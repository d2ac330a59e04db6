"""Calls os._exit(0) in the middle of a test, hoping the run ends "successfully".

Attack: Calls os._exit(0) in the middle of a test, hoping the run ends "successfully".
Class: sandbox
Targets: edge_split
Stopped by: only the trusted process writes results; the worker's death fails the test it
was serving and a fresh worker serves the next.
Baseline: _nothing_written.py
"""
import os


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        os._exit(0)
