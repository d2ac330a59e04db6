"""Observations of a submission's worker taken from outside it.

Nothing here runs in the worker: the trusted test process reads the kernel's view of the
worker (its CPU time and memory in /proc) and creates sockets inside the worker's network
namespace, so that a client the submission does not control can talk to a server the
submission runs on its own loopback.

The worker is the process tree under ``Worker.proc.pid`` (the sandbox may put a
bubblewrap process at its root), plus, where the sandbox gave it a uid of its own, every
process running under that uid (a process that left the tree by double-forking still
counts).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_TICK = 1.0 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)


@dataclass(frozen=True)
class _Proc:
    pid: int
    ppid: int
    uid: int


def _processes() -> list[_Proc]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        ppid = uid = -1
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as fh:
                for line in fh:
                    if line.startswith("PPid:"):
                        ppid = int(line.split()[1])
                    elif line.startswith("Uid:"):
                        uid = int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            continue
        out.append(_Proc(int(entry), ppid, uid))
    return out


def worker_pids(root: int, uid: int | None = None) -> list[int]:
    """``root`` and its descendants, breadth first, then any other process of ``uid``."""
    procs = _processes()
    children: dict[int, list[int]] = {}
    for p in procs:
        children.setdefault(p.ppid, []).append(p.pid)
    order: list[int] = []
    seen: set[int] = set()
    queue = [root]
    while queue:
        pid = queue.pop(0)
        if pid in seen:
            continue
        seen.add(pid)
        order.append(pid)
        queue.extend(sorted(children.get(pid, [])))
    if uid is not None:
        order.extend(p.pid for p in procs if p.uid == uid and p.pid not in seen)
    return order


def _process_cpu(pid: int) -> float:
    """CPU seconds of one process: the larger of its threads' exact run times (schedstat,
    live threads only) and the kernel's per-process total in clock ticks (which also holds
    threads that have exited and children it has reaped)."""
    ticks = 0.0
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        # after the command: state is field 3, utime 14, stime 15, cutime 16, cstime 17
        ticks = sum(int(fields[i]) for i in (11, 12, 13, 14)) * _TICK
    except (OSError, ValueError, IndexError):
        return 0.0
    exact = 0.0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as fh:
                    exact += int(fh.read().split()[0]) / 1e9
            except (OSError, ValueError, IndexError):
                continue
    except OSError:
        pass
    return max(ticks, exact)


def cpu_seconds(root: int, uid: int | None = None) -> float:
    """CPU seconds (user + system) used so far by the worker rooted at ``root``."""
    return sum(_process_cpu(pid) for pid in worker_pids(root, uid))


def memory_bytes(root: int, uid: int | None = None) -> int:
    """Resident plus swapped-out memory of the worker rooted at ``root``, in bytes."""
    total = 0
    for pid in worker_pids(root, uid):
        try:
            with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
                for line in fh:
                    if line.startswith(("VmRSS:", "VmSwap:")):
                        total += int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            continue
    return total


def _netns(pid: int) -> int:
    return os.stat(f"/proc/{pid}/ns/net").st_ino


# Run as a fresh single-threaded process (a multi-threaded one may not join a user
# namespace): join the worker's user namespace when not root, then its network namespace,
# create the sockets and pass them back over the inherited Unix socket.
_JOIN = r"""
import ctypes, os, socket, sys
pid, count, chan_fd = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
def join(kind, flag):
    path = f"/proc/{pid}/ns/{kind}"
    if os.stat(path).st_ino == os.stat(f"/proc/self/ns/{kind}").st_ino:
        return
    fd = os.open(path, os.O_RDONLY)
    if libc.setns(fd, flag) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns({path}): {os.strerror(err)}")
    os.close(fd)
if os.geteuid() != 0:
    join("user", %d)
join("net", %d)
socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
chan = socket.socket(fileno=chan_fd)
socket.send_fds(chan, [b"ok"], [s.fileno() for s in socks])
""" % (CLONE_NEWUSER, CLONE_NEWNET)


def _netns_holder(root: int) -> int:
    """The process nearest ``root`` in its tree (breadth first) whose network namespace
    is not ours; ``root`` when there is none. Under bubblewrap the root process stays in
    our namespace and its child enters the worker's; a namespace that a process of the
    worker makes later lies deeper, so it is never chosen."""
    ours = _netns(os.getpid())
    for pid in worker_pids(root):
        try:
            if _netns(pid) != ours:
                return pid
        except OSError:
            continue
    return root


def sockets_in_netns(root: int, count: int) -> list[socket.socket]:
    """``count`` fresh TCP sockets (not bound, not connected) that live in the network
    namespace of the worker whose tree is rooted at ``root``: on 127.0.0.1 they reach
    that namespace's loopback.

    When the worker shares this process's namespace they are plain sockets. Otherwise a
    short helper process of ours joins the namespace, creates them and hands them back; it
    never runs in the worker's pid namespace, and the worker cannot see or signal it.
    """
    if not 0 < count <= 64:
        raise ValueError(f"count must lie in 1..64, got {count}")
    pid = _netns_holder(root)
    if _netns(pid) == _netns(os.getpid()):
        return [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _JOIN, str(pid), str(count),
             str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, capture_output=True,
            timeout=20)
        theirs.close()
        if proc.returncode != 0:
            raise OSError(f"could not join the worker's network namespace: "
                          f"{proc.stderr.decode('utf-8', 'replace').strip()[-400:]}")
        ours.settimeout(5.0)
        msg, fds, _, _ = socket.recv_fds(ours, 16, count)
        if msg != b"ok" or len(fds) != count:
            for fd in fds:
                os.close(fd)
            raise OSError("the namespace helper sent no sockets")
        socks = [socket.socket(fileno=fd) for fd in fds]
        for s in socks:
            if s.family != socket.AF_INET or s.type != socket.SOCK_STREAM:
                for t in socks:
                    t.close()
                raise OSError("the namespace helper sent something that is not a TCP socket")
        return socks
    finally:
        theirs.close()
        ours.close()
