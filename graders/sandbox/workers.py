"""The worker processes: one per test file (Worker), or forked per test from a zygote that
imported the submission once (Zygote, ForkedWorker)."""

from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, BinaryIO, Callable, NoReturn

from graders import measure, wire
from graders.sandbox.backends import capabilities
from graders.sandbox.errors import WorkerError
from graders.sandbox.jail import Capabilities, Limits
from graders.sandbox.processes import (chown_tree, end_process, exit_status, kill_and_wait,
                                       running, sandbox_uid, spawn, uid_block, worker_env)
from graders.sandbox.scratch import prepare_scratch


def _checked_cgroup(cgroup: str | None, pid: int) -> str | None:
    """``cgroup`` if the sandbox's first process did join it (everything it starts is then
    in it too), else None (the fallback meter is used; an empty cgroup would read 0)."""
    if cgroup is not None and pid not in measure.cgroup_pids(cgroup):
        measure.remove_cgroup(cgroup)
        return None
    return cgroup


class Worker:
    """One worker process and its pipes."""

    def __init__(self, submission: Path, module_name: str, limits: Limits,
                 read_only: bool = False, uid_base: int = 200000,
                 trusted_copy: bool = False, bound: Path | None = None) -> None:
        caps = self.caps = capabilities()
        self.limits = limits
        self.uid = sandbox_uid(uid_base) if os.geteuid() == 0 and caps.separate_uid else None
        self.cgroup = measure.new_cgroup() if caps.backend != "limits" else None
        self.new_root: Path | None = None
        self.scratch, target = prepare_scratch(submission, trusted_copy, bound)
        self.output_path = Path(tempfile.mkstemp(prefix="kata-worker-out-")[1])
        self.dead: str | None = None
        try:
            if self.uid is not None:
                chown_tree(self.scratch, self.uid)
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.output_path.unlink(missing_ok=True)
            raise
        def start(req_r: int, rep_w: int) -> None:
            with open(self.output_path, "wb") as out:
                self.proc, self.new_root = spawn(
                    caps, [str(self.scratch / "_kata_worker.py"), str(req_r), str(rep_w),
                           str(target), module_name] + (["read-only"] if read_only else []),
                    self.scratch, limits, env=worker_env(self.scratch), out=out,
                    pass_fds=(req_r, rep_w), uid=self.uid, cgroup=self.cgroup, script=True)
        try:
            self._connect(start)
        except BaseException:
            if self.cgroup is not None:
                measure.remove_cgroup(self.cgroup)
            raise
        self.cgroup = _checked_cgroup(self.cgroup, self.proc.pid)

    def _connect(self, start: Callable[[int, int], None]) -> None:
        """Make the request and reply pipes, hand the worker's ends to ``start`` (which
        starts the worker) and keep ours; if ``start`` fails, remove the worker's folder and
        output file and close everything."""
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            start(req_r, rep_w)
        except BaseException:
            for fd in (req_w, rep_r):
                os.close(fd)
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.output_path.unlink(missing_ok=True)
            raise
        finally:
            os.close(req_r)
            os.close(rep_w)
        self.requests: BinaryIO = os.fdopen(req_w, "wb")
        self.replies: BinaryIO = os.fdopen(rep_r, "rb")

    @property
    def pid(self) -> int:
        """The root of the worker's process tree, for measurements taken from outside."""
        return int(self.proc.pid)

    @property
    def top(self) -> int:
        """The sandbox's first process (bwrap, or the worker itself in the fallbacks)."""
        return int(self.proc.pid)

    def meter(self) -> "measure.Meter | measure.CgroupMeter":
        """A CPU meter of the whole sandbox (its cgroup), or of the worker's processes
        found from outside where no cgroup could be made; not started."""
        if self.cgroup is not None:
            return measure.CgroupMeter(self.cgroup)
        return measure.Meter(self.pid, self.uid)

    def _main(self) -> int:
        """The worker's own interpreter: below bwrap (and the pid namespace's init, also a
        bwrap) where there is one, the oldest child at each step (orphans re-parented to
        the init are younger)."""
        main = getattr(self, "_main_pid", None)
        if main is None:
            main = self.proc.pid
            for _ in range(4):
                try:
                    with open(f"/proc/{main}/comm") as fh:
                        if fh.read().strip() != "bwrap":
                            break
                except OSError:
                    break
                kids = measure._children_of(main)
                if kids is None:
                    kids = measure._all_parents().get(main, [])
                started = [(st[1], k) for k in kids if (st := measure._stat(k)) is not None]
                if not started:
                    break
                main = min(started)[1]
            self._main_pid = main
        return main

    def survivors(self) -> list[int]:
        """Processes the submission started that are still running (none may outlive a
        measured call)."""
        return measure.survivors(self._main(), self.top, self.cgroup, self.uid)

    def _exit_code(self) -> int | None:
        try:
            return exit_status(self.caps, self.proc.wait(timeout=5))
        except subprocess.TimeoutExpired:
            self.kill()
            return exit_status(self.caps, self.proc.returncode)

    def request(self, message: dict[str, Any],
                watch: Callable[[], str | None] | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply: the reply must start within the call's
        wall-clock limit, be no larger than the kata's reply cap, and arrive in full within
        a few seconds of its first byte. A worker that breaks any of these is killed and
        the test it serves fails with a message that says which. ``watch``
        (graders/measure.py) is called every few tens of milliseconds while the call runs;
        a reason it returns ends the worker."""
        if self.dead:
            raise WorkerError(self.dead)
        self.served = getattr(self, "served", 0) + 1
        try:
            wire.send(self.requests, message)
        except (BrokenPipeError, OSError):
            self._died()
        cap = getattr(self.limits, "reply_bytes", wire.REPLY_BYTES)
        try:
            # the watch runs until the whole reply is in, and the reply (its length header
            # included) must arrive in full within a few seconds of its first byte
            reply = wire.recv_reply(self.replies.fileno(), cap, self.limits.call_seconds,
                                    watch=watch)
        except wire.Stopped as stop:
            self.kill()
            self.dead = str(stop)
            raise WorkerError(self.dead) from None
        except BaseException as exc:
            if not isinstance(exc, (TimeoutError, wire.WireError, ValueError, OSError)):
                # interrupted while the worker still computes (the test's own timeout
                # fired): its late reply would answer the next request, so it goes
                self.kill()
                self.dead = "a call was interrupted before its reply; the worker was killed"
                raise
            self._failed_reply(exc)
        if reply is None:
            self._died()
        assert reply is not None
        return reply

    def _failed_reply(self, exc: BaseException) -> NoReturn:
        if isinstance(exc, TimeoutError):
            self.kill()
            self.dead = (f"the call did not return within {self.limits.call_seconds:.0f} s "
                         "(an infinite loop, or sleeping past the limit): the worker was killed")
            raise WorkerError(self.dead) from None
        self.kill()
        self.dead = f"the worker sent an invalid reply: {exc}"
        raise WorkerError(self.dead) from None

    def _died(self) -> None:
        code = self._exit_code()
        if code is not None and code < 0:
            try:
                how = f"died of {signal.Signals(-code).name}"
            except ValueError:
                how = f"died of signal {-code}"
            if -code == signal.SIGXCPU:
                how += " (CPU time limit)"
            elif -code == signal.SIGSEGV:
                how += " (a crash: a recursion bomb or a native fault?)"
            elif -code == signal.SIGKILL:
                how += " (killed: out of memory?)"
        else:
            how = f"exited with code {code} (sys.exit / os._exit in the implementation?)"
        tail = self.output_tail()
        self.dead = f"the submission's worker process {how}" + (
            f"\nits last output:\n{tail}" if tail else "")
        self.kill()
        raise WorkerError(self.dead)

    def output_tail(self) -> str:
        try:
            with open(self.output_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(0, size - 1500))
                return fh.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def kill(self) -> None:
        """End the worker: every process of it is gone when this returns."""
        if self.cgroup is not None:
            measure.kill_cgroup(self.cgroup)
        end_process(self.proc, self.caps, self.uid)
        if self.cgroup is not None:
            measure.remove_cgroup(self.cgroup)
        for stream in (self.requests, self.replies):
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.scratch, ignore_errors=True)
        if self.new_root is not None:
            shutil.rmtree(self.new_root, ignore_errors=True)
        try:
            self.output_path.unlink()
        except OSError:
            pass


class ZygoteFailed(RuntimeError):
    """The fork server did not start a worker (it died, hung or answered nonsense)."""


def _ns_pid(pid: int) -> int | None:
    """The pid a host process has in its own (innermost) pid namespace."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _remove_tree_on(top: str, device: int) -> None:
    """Remove a folder tree without following links and without leaving ``device``: an
    entry on another file system (a mount point) is left as it is, with the folders above
    it. Iterative, so a very deep tree cannot exhaust the recursion limit."""
    stack = [(top, False)]
    while stack:
        path, listed = stack.pop()
        if listed:
            try:
                os.rmdir(path)
            except OSError:
                pass
            continue
        stack.append((path, True))
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
                if st.st_dev != device:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    stack.append((entry.path, False))
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


def _parent_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def _child_uid(uid_base: int, n: int) -> int:
    """A uid no other worker of any grader on this machine holds: one range per kind of
    worker (submission 200000, reference 300000), one block per trusted process (claimed:
    ``uid_block``), one uid per
    forked worker (reused only after a thousand workers, long after that one is gone)."""
    return (1_000_000_000 + (uid_base // 100_000 % 10) * 100_000_000
            + uid_block() * 1000 + n % 1000)


class Zygote:
    """A fork server in one sandbox: one per session, replacing a fresh sandbox per test.

    Starting a sandbox and an interpreter (and importing numpy) costs a worker about 70 ms
    of CPU and twice that in wall time, before it runs a line of the test; a kata has a
    hundred or more tests. The zygote is started once, as the sandbox's root user holding
    nothing but the right to change uid (bwrap keeps only CAP_SETUID and CAP_SETGID). It
    never loads the submission. For each test it forks a worker, which takes a uid of its
    own (dropping every capability) before any submission code runs, in a folder of its
    own on the sandbox's /tmp (a small tmpfs), the only place it can write. The submission's
    files are compiled once, by a child that first drops to a uid of its own; the zygote
    keeps the marshalled code unread and each worker loads it. So a worker cannot signal,
    trace or read the zygote, nor any earlier or later worker (each has another uid), and
    when a worker is ended, every process under its uid is killed, its folder removed and
    /tmp emptied from outside, before the next one starts. Used where bwrap runs as root
    (a pid namespace and uids to hand out); elsewhere every test gets a fresh sandbox."""

    def __init__(self, submission: Path, module_name: str, limits: Limits, read_only: bool,
                 uid_base: int, trusted_copy: bool, bound: Path | None = None) -> None:
        self.caps = capabilities()
        self.limits = limits
        self.uid_base = uid_base
        self.forked = 0
        self.exits: dict[int, int] = {}
        self.host_pid: int | None = None
        self.scratch, target = prepare_scratch(submission, trusted_copy, bound)
        self.output_path = Path(tempfile.mkstemp(prefix="kata-zygote-out-")[1])
        os.chmod(self.scratch, 0o755)   # workers read their code; only their folder is theirs
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.ctrl = ours
        self.cgroup = measure.new_cgroup()
        try:
            with open(self.output_path, "wb") as out:
                self.proc, _ = spawn(
                    self.caps, [str(self.scratch / "_kata_worker.py"), "zygote",
                                str(theirs.fileno()), str(target), module_name,
                                str(_child_uid(uid_base, 0))]   # the compile child's uid
                    + (["read-only"] if read_only else []),
                    self.scratch, limits, env=worker_env(self.scratch), out=out,
                    pass_fds=(theirs.fileno(),), uid=None, cgroup=self.cgroup, script=True)
        except BaseException:
            if self.cgroup is not None:
                measure.remove_cgroup(self.cgroup)
            ours.close()
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.output_path.unlink(missing_ok=True)
            raise
        finally:
            theirs.close()
        self.cgroup = _checked_cgroup(self.cgroup, self.proc.pid)
        self.ns_pid: int | None = None
        self.infra: set[int] = set()
        self.tmp_kept: set[str] = set()

    @staticmethod
    def usable(caps: Capabilities) -> bool:
        return caps.backend == "bwrap" and caps.pid_namespace and caps.separate_uid \
            and os.geteuid() == 0 and os.environ.get("KATA_ZYGOTE", "1") != "0"

    def _record(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.ctrl], [], [], timeout)
        if not ready:
            raise ZygoteFailed("the fork server did not answer")
        msg = self.ctrl.recv(64)
        if not msg:
            raise ZygoteFailed("the fork server is gone")
        return msg

    def _until(self, kind: bytes, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            msg = self._record(max(0.0, deadline - time.monotonic()))
            if msg[:1] == b"X" and len(msg) == 9:
                pid, status = struct.unpack("!ii", msg[1:])
                self.exits[pid] = status
                if kind == b"X":
                    return msg
            elif msg[:1] == kind:
                return msg
            else:
                raise ZygoteFailed(f"the fork server sent {msg[:16]!r}")

    def _find_host_pid(self, ns_pid: int, parent: int | None, timeout: float = 5.0) -> int:
        deadline = time.monotonic() + timeout
        while True:
            # the parent's children where the kernel lists them, else the whole tree (by
            # parent links): either way the forked worker is found
            kids = None if parent is None else measure._children_of(parent)
            pids = kids if kids else measure.tree(self.proc.pid)
            for pid in pids:
                if _ns_pid(pid) == ns_pid and pid != self.proc.pid:
                    return pid
            if time.monotonic() > deadline:
                raise ZygoteFailed(f"no process of the sandbox has pid {ns_pid} there")
            time.sleep(0.001)

    def start(self, timeout: float = 30.0) -> None:
        if self.host_pid is None:
            msg = self._until(b"R", timeout)
            self.ns_pid = struct.unpack("!i", msg[1:5])[0]
            self.host_pid = self._find_host_pid(self.ns_pid, None)
            # bwrap, the pid namespace's init (bwrap's child) and the zygote: every other
            # process in the sandbox belongs to the current worker
            self.infra = {self.proc.pid, self.host_pid, _parent_of(self.host_pid)}
            try:   # what bwrap put in /tmp (the folders above binds): never cleaned
                self.tmp_kept = set(os.listdir(f"/proc/{self.host_pid}/root/tmp"))
            except OSError:
                self.tmp_kept = set()

    def fork(self) -> "ForkedWorker":
        self.start()
        return ForkedWorker(self)

    def exit_status(self, ns_pid: int, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while ns_pid not in self.exits:
            try:
                self._until(b"X", max(0.0, deadline - time.monotonic()))
            except ZygoteFailed:
                return None
        return self.exits.pop(ns_pid)

    def clean_tmp(self) -> None:
        """Empty the sandbox's /tmp, from outside (through the zygote's view of its root), of
        what workers made there. Only entries that were not there when the zygote started,
        and that lie on /tmp's own file system, are removed: bwrap makes the folders above
        its binds inside /tmp when the checkout lives under /tmp, and a walk into those
        would reach the binds (the real scratch folder, the interpreter)."""
        if self.host_pid is None:
            return
        tmp = f"/proc/{self.host_pid}/root/tmp"
        try:
            device = os.stat(tmp).st_dev
            names = os.listdir(tmp)
        except OSError:
            return
        for name in names:
            if name in self.tmp_kept:
                continue
            path = os.path.join(tmp, name)
            try:
                st = os.lstat(path)
                if st.st_dev != device:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    _remove_tree_on(path, device)
                else:
                    os.unlink(path)
            except OSError:
                pass

    def alive(self) -> bool:
        return self.proc.poll() is None and self.host_pid is not None \
            and running(self.host_pid)

    def kill(self) -> None:
        if self.cgroup is not None:
            measure.kill_cgroup(self.cgroup)
        end_process(self.proc, self.caps, None)
        if self.cgroup is not None:
            measure.remove_cgroup(self.cgroup)
        try:
            self.ctrl.close()
        except OSError:
            pass
        shutil.rmtree(self.scratch, ignore_errors=True)
        self.output_path.unlink(missing_ok=True)


class ForkedWorker(Worker):
    """One worker forked by a Zygote: the same pipes and the same requests as Worker; its
    measurements are rooted at its own process, under its own uid."""

    def __init__(self, zygote: Zygote) -> None:   # Worker.__init__ is not called
        self.caps = zygote.caps
        self.limits = zygote.limits
        self.zygote = zygote
        self.cgroup = zygote.cgroup   # the sandbox's: the zygote is idle while a call runs
        self.new_root = None
        self.dead = None
        zygote.forked += 1
        self.uid = _child_uid(zygote.uid_base, zygote.forked)
        # its folder is on the sandbox's private /tmp (a small tmpfs), reached from here
        # through the zygote's root: emptying /tmp after the worker removes it too, at
        # memory speed (a folder on disk cost about 2 ms of every test to remove)
        folder = f"/tmp/run-{zygote.forked}"
        self.scratch = Path(f"/proc/{zygote.host_pid}/root{folder}")
        self.scratch.mkdir(mode=0o700)
        os.chown(self.scratch, self.uid, self.uid)
        self.output_path = Path(tempfile.mkstemp(prefix="kata-worker-out-")[1])
        def start(req_r: int, rep_w: int) -> None:
            out = os.open(self.output_path, os.O_WRONLY | os.O_APPEND)
            try:
                zygote.ctrl.sendmsg(
                    [b"F" + struct.pack("!ii", self.uid, self.limits.processes)
                     + folder.encode()],
                    [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                      struct.pack("3i", req_r, rep_w, out))])
            finally:
                os.close(out)
            msg = zygote._until(b"P", 10.0)
            self.ns_pid = struct.unpack("!i", msg[1:5])[0]
            self.host_pid = zygote._find_host_pid(self.ns_pid, zygote.host_pid)
        self._connect(start)

    @property
    def pid(self) -> int:
        return self.host_pid

    @property
    def top(self) -> int:
        return int(self.zygote.proc.pid)

    def _main(self) -> int:
        return self.host_pid

    def _exit_code(self) -> int | None:
        status = self.zygote.exit_status(self.ns_pid, 5.0)
        if status is None:
            self.kill()
            return None
        return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)

    def kill(self) -> None:
        """End the worker: every process in the sandbox but the zygote's own (bwrap, its
        init, the zygote) is gone when this returns (orphans are re-parented to the
        namespace's init, so none leaves the tree), its folder is removed and the sandbox's
        /tmp emptied (the worker's folder is there)."""
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            inside = measure.tree(self.zygote.proc.pid)
            if self.cgroup is not None:   # also what left the tree (nothing leaves the cgroup)
                inside += measure.cgroup_pids(self.cgroup)
            left = [p for p in set(inside) if p not in self.zygote.infra and running(p)]
            if not left:
                break
            kill_and_wait(left, min(0.05, max(0.0, deadline - time.monotonic())))
        for stream in (self.requests, self.replies):
            try:
                stream.close()
            except OSError:
                pass
        self.zygote.clean_tmp()
        try:
            self.output_path.unlink()
        except OSError:
            pass
