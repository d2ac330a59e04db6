"""Imports the reference module by putting the repository on sys.path.

Attack: Imports the reference module by putting the repository on sys.path.
Class: sandbox
Targets: edge_split
Stopped by: the worker's import path lacks the repository, and its private root does not
contain it.
Baseline: _nothing_written.py
"""
import os
import sys

for p in ("/work/main", os.path.dirname(os.getcwd()), os.getcwd() + "/../.."):
    sys.path.insert(0, p)
from solutions.radix_cache import OutOfSlots, RadixCache  # noqa: E402,F401
