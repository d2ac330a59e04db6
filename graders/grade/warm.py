"""A warm start for the grade's test process: a fork server of trusted pytest processes.

A grade starts one test process (``python -m pytest ...``, graders/grade/run.py); half a second
of it is importing pytest, Hypothesis and numpy, the same every time. A grading process that
runs many grades (a batch, the project's suite) starts one server here instead: it imports
those once and, for each grade, forks a child that sets up the environment, folder and
descriptors the grade asks for and runs ``pytest.main`` with the grade's arguments, exactly
as the fresh interpreter would. The server never runs a test; no submission code ever runs
in it (isolated grades run submissions in their sandbox; in-process grades are for trusted
code only, and run in the child). Each child starts from the server's state, so nothing of
one grade reaches another.

The environment variables that shape an interpreter at start (PYTHONHASHSEED, PYTHONPATH, ...)
must be those the server started with: a grade asking for another environment, beyond the
sandbox choice (``PER_GRADE``), gets a server of its own. ``KATA_WARM=0`` turns the warm start
off (every grade starts a fresh interpreter); so does any failure of the server.

    python -m graders.grade.warm CONTROL_FD        (started by ``spawn``; not run by hand)
"""

from __future__ import annotations

import atexit
import json
import os
import select
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

# the variables a grade sets for its own test process, read at run time, not at start
# (and pytest's name of the running test, when the grade runs inside a test)
PER_GRADE = frozenset({"KATA_SANDBOX", "KATA_SANDBOX_PROBED", "PYTEST_CURRENT_TEST"})
MAX_SERVERS = 2   # servers kept per grading process (one per environment, latest used)
_PRELOAD = ("pytest", "_pytest.python", "_pytest.unittest", "_pytest.fixtures",
            "_pytest.assertion.rewrite", "hypothesis", "hypothesis.stateful",
            "hypothesis.strategies", "_hypothesis_pytestplugin", "pytest_timeout", "numpy",
            "graders.plugin", "graders.impl", "graders.catalog", "graders.sandbox",
            "graders.wire", "graders.measure")


class Failed(Exception):
    """The server could not start a test process (the caller starts a fresh one)."""


class WarmProcess:
    """A test process forked by the server, seen as much like a ``subprocess.Popen`` as the
    grade needs: ``pid``, ``poll``, ``wait``, ``kill`` and ``returncode`` (negative: the
    signal that ended it)."""

    def __init__(self, server: "Server", pid: int) -> None:
        self.server = server
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            status = self.server.status(self.pid, 0.0)
            if status is not None:
                self.returncode = _code(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            status = self.server.status(self.pid, timeout)
            if status is None:
                raise subprocess.TimeoutExpired(f"test process {self.pid}", timeout or 0.0)
            self.returncode = _code(status)
        return self.returncode

    def kill(self) -> None:
        try:
            os.kill(self.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass


def _code(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


class Server:
    """The parent's end of one server: start test processes, learn how they ended."""

    def __init__(self, env: dict[str, str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.ctrl = ours
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "graders.grade.warm", str(theirs.fileno())],
                cwd=Path(__file__).resolve().parent.parent, env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),), start_new_session=True)
        finally:
            theirs.close()
        self.env = env
        self.lock = threading.Lock()          # one start at a time
        self.cond = threading.Condition()     # exits, as they are reported
        self.exits: dict[int, int] = {}
        self.started: list[int] = []
        self.alive = True
        self.ready = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        with self.cond:
            if not self.cond.wait_for(lambda: self.ready or not self.alive, timeout=60):
                self.alive = False
        if not self.alive:
            raise Failed("the warm server did not start")

    def _read(self) -> None:
        while True:
            try:
                msg = self.ctrl.recv(64)
            except OSError:
                msg = b""
            with self.cond:
                if not msg:
                    self.alive = False
                elif msg[:1] == b"R":
                    self.ready = True
                elif msg[:1] == b"P" and len(msg) == 5:
                    self.started.append(struct.unpack("!i", msg[1:])[0])
                elif msg[:1] == b"E":
                    self.started.append(-1)
                elif msg[:1] == b"X" and len(msg) == 9:
                    pid, status = struct.unpack("!ii", msg[1:])
                    self.exits[pid] = status
                self.cond.notify_all()
                if not msg:
                    return

    def spawn(self, args: list[str], env: dict[str, str], cwd: Path, out_fd: int,
              keep_fd: int) -> WarmProcess:
        """Start ``pytest.main(args)`` with ``env`` and ``cwd``, stdout and stderr on
        ``out_fd``, and ``keep_fd`` open under the same number (the progress channel)."""
        request = json.dumps({"args": args, "env": env, "cwd": str(cwd),
                              "keep": keep_fd}).encode()
        with self.lock:
            if not self.alive:
                raise Failed("the warm server is gone")
            try:
                self.ctrl.sendmsg([b"F" + request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                      struct.pack("2i", out_fd, keep_fd))])
            except OSError as exc:
                self.alive = False
                raise Failed(f"the warm server is gone ({exc})") from None
            with self.cond:
                if not self.cond.wait_for(lambda: self.started or not self.alive, timeout=30):
                    self.alive = False
                if not self.started:
                    raise Failed("the warm server did not start the test process")
                pid = self.started.pop(0)
        if pid < 0:
            raise Failed("the warm server could not fork")
        return WarmProcess(self, pid)

    def status(self, pid: int, timeout: float | None) -> int | None:
        with self.cond:
            self.cond.wait_for(lambda: pid in self.exits or not self.alive, timeout=timeout)
            if pid in self.exits:
                return self.exits.pop(pid)
            if not self.alive:   # its children are gone with it (same session, killed)
                return 9 if _gone(pid) else None
            return None

    def close(self) -> None:
        try:   # shutdown wakes the reader and tells the server to end
            self.ctrl.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.ctrl.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


_servers: dict[tuple[tuple[str, str], ...], Server] = {}
_servers_lock = threading.Lock()


def enabled() -> bool:
    return os.name == "posix" and os.environ.get("KATA_WARM", "1") != "0"


def spawn(args: list[str], env: dict[str, str], cwd: Path, out_fd: int,
          keep_fd: int) -> WarmProcess:
    """A warm test process for ``pytest.main(args)``; Failed when none can be had."""
    base = {k: v for k, v in env.items() if k not in PER_GRADE}
    key = tuple(sorted(base.items()))
    with _servers_lock:
        server = _servers.pop(key, None)
        if server is None or not server.alive:
            if server is not None:
                server.close()
            server = Server(base)
        _servers[key] = server           # the latest used last
        while len(_servers) > MAX_SERVERS:
            _servers.pop(next(iter(_servers))).close()
    return server.spawn(args, env, cwd, out_fd, keep_fd)


@atexit.register
def _close_all() -> None:
    for server in list(_servers.values()):
        server.close()
    _servers.clear()


# -- the server ----------------------------------------------------------------------------

def _child(request: dict[str, Any], out_fd: int, keep_fd: int) -> None:
    """In the forked child: become the test process the grade asked for. Never returns."""
    code = 70
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.close(out_fd)
        want = int(request["keep"])
        if want < 3:
            raise ValueError(f"descriptor {want} cannot be kept: it is a standard stream")
        if keep_fd != want:
            os.dup2(keep_fd, want, inheritable=False)
            os.close(keep_fd)
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in request["env"].items()})
        os.chdir(request["cwd"])
        import pytest

        sys.argv = ["pytest", *request["args"]]
        code = int(pytest.main(list(request["args"])))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:   # noqa: BLE001 - said on the test process's output
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve(ctrl_fd: int) -> None:
    import importlib

    for module in _PRELOAD:
        try:
            importlib.import_module(module)
        except ImportError:
            pass
    # a child's end wakes the loop (no polling while idle)
    import signal

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    ctrl = socket.socket(fileno=ctrl_fd)
    ctrl.send(b"R")
    while True:
        while True:   # reap ended test processes and say how they ended
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            ctrl.send(b"X" + struct.pack("!ii", pid, status))
        ready, _, _ = select.select([ctrl.fileno(), wake_r], [], [], 1.0)
        if wake_r in ready:
            os.read(wake_r, 512)
        if ctrl.fileno() not in ready:
            continue
        msg, fds, _, _ = socket.recv_fds(ctrl, 1 << 20, 2)
        if not msg or msg[:1] != b"F" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            return
        try:
            request = json.loads(msg[1:])
            pid = os.fork()
        except (OSError, ValueError):
            for fd in fds:
                os.close(fd)
            ctrl.send(b"E")
            continue
        if pid == 0:
            ctrl.close()
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.close(wake_r)
            os.close(wake_w)
            _child(request, fds[0], fds[1])
        for fd in fds:
            os.close(fd)
        ctrl.send(b"P" + struct.pack("!i", pid))


if __name__ == "__main__":
    serve(int(sys.argv[1]))
