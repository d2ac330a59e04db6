"""Records every call and its answer on disk to replay them in later tests.

Attack: Records every call and its answer on disk to replay them in later tests.
Class: isolation-spill
Targets: edge_split
Stopped by: each test file gets a fresh worker in a fresh scratch folder (and /tmp is
private to each worker), so nothing survives from one grade to the next; within a file the
worker only ever sees inputs, never an expected value.
Baseline: _nothing_written.py
"""
import json
import os

_LOG = [os.path.join(os.getcwd(), "replay.json"), "/tmp/replay.json"]


def _load():
    for path in _LOG:
        try:
            with open(path) as fh:
                return json.load(fh)
        except (OSError, ValueError):
            continue
    return {"runs": 0}


_state = _load()
_state["runs"] += 1
for path in _LOG:
    try:
        with open(path, "w") as fh:
            json.dump(_state, fh)
    except OSError:
        pass


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        raise RuntimeError(f"replay log seen {_state['runs']} times")
