"""Clients of a submission's server that the submission does not control.

Nothing here runs in the worker: the trusted test process creates sockets inside the
worker's network namespace, so that a client the submission cannot see or signal talks to
a server the submission runs on its own loopback. (The worker's CPU time and memory are read
from outside by graders/measure.py.)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from graders.measure import worker_pids

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000


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
