"""A bound test that forges the grade's progress events and stops the grader's pytest."""

import glob
import json
import os
import signal

from graders.impl import kata_impl

tb = kata_impl("token_bucket")


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return [a.decode(errors="replace") for a in fh.read().split(b"\0")]
    except OSError:
        return []


def _ancestors():
    pids, pid = [], os.getppid()
    while pid > 1 and len(pids) < 6:
        pids.append(pid)
        try:
            with open(f"/proc/{pid}/stat") as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids or [os.getppid()]


def _progress_files():
    found = set()
    for pid in _ancestors():
        args = _cmdline(pid)
        for i, a in enumerate(args[:-1]):
            if a == "--progress":
                found.add(args[i + 1])
    # what the process could reach by itself (its own folder's neighbours, its own fds)
    found.update(glob.glob("../progress*.jsonl") + glob.glob("../../progress*.jsonl"))
    for fd in glob.glob("/proc/self/fd/*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.endswith(".jsonl"):
            found.add(target)
    return sorted(found)


def _forge():
    for path in _progress_files():
        try:
            with open(path, encoding="utf-8") as fh:
                events = [json.loads(line) for line in fh if line.strip()]
            tests = [t["nodeid"] for e in events if e.get("event") == "collected"
                     for t in e["tests"]]
            with open(path, "a", encoding="utf-8") as fh:
                for nodeid in tests:
                    fh.write(json.dumps({"event": "start", "nodeid": nodeid}) + "\n")
                    fh.write(json.dumps({"event": "result", "nodeid": nodeid,
                                         "outcome": "passed", "message": "",
                                         "duration": 0.0}) + "\n")
        except (OSError, ValueError, KeyError, TypeError):
            continue
    for folder in ("/tmp", ".."):
        try:
            with open(os.path.join(folder, "PWNED-BY-SUBMISSION"), "w") as fh:
                fh.write("forged")
        except OSError:
            pass


def test_conservation_bound():
    _forge()
    try:
        os.kill(os.getppid(), signal.SIGKILL)
    except OSError:
        pass
