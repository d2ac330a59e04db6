"""A sandboxed process's life: its uid, spawning it in the jail, waiting, killing and sweeping
what it left, and run_command (any command in the same sandbox)."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

from graders import measure
from graders.sandbox.errors import SandboxUnavailable
from graders.sandbox.jail import (Capabilities, LAUNCHER, Limits, PYTHON_FLAGS, bwrap_argv,
                                  open_seccomp_fd, preexec, seccomp_filter)
from graders.sandbox.scratch import scratch_base


OUTPUT_TAIL_BYTES = 64 << 10      # what run_command returns of a command's output


_UID_BLOCKS = 100_000
_uid_block: dict[int, tuple[int, int]] = {}   # pid -> (block, the descriptor holding it)


def _claims_folder() -> str:
    for top in ("/run", "/tmp"):
        folder = os.path.join(top, "kata-uid-claims")
        try:
            os.makedirs(folder, mode=0o755, exist_ok=True)
            if os.access(folder, os.W_OK):
                return folder
        except OSError:
            continue
    raise SandboxUnavailable("no folder for uid claims in /run or /tmp")


def uid_block() -> int:
    """This process's block of worker uids, unique on the machine while it lives: claimed
    by an exclusive lock (``flock``) on ``/run/kata-uid-claims/<block>`` (``/tmp`` where
    /run is not writable), held until the process ends (the kernel drops it then, however
    the process ends), so concurrent graders (a batch with ``--jobs``, two CI runners, and
    containers that share that folder) never hold the same uids and the root fallback's
    sweep by uid never ends another grader's worker. The search starts at pid mod 100000."""
    import fcntl

    pid = os.getpid()
    if pid in _uid_block:
        return _uid_block[pid][0]
    folder = _claims_folder()
    for i in range(_UID_BLOCKS):
        block = (pid + i) % _UID_BLOCKS
        fd = os.open(os.path.join(folder, str(block)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                     0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _uid_block[pid] = (block, fd)
        return block
    raise SandboxUnavailable("every block of worker uids is claimed")


def sandbox_uid(base: int = 200000) -> int:
    # one uid per trusted process (its claimed block), so parallel graders never sweep each
    # other's workers; the reference's workers (graders.impl.measured_call) use base 300000
    # and candidate test commands base 400000, so sweeping one kind never ends another
    return base + uid_block()


def chown_tree(top: Path, uid: int) -> None:
    os.chown(top, uid, uid)
    for dirpath, dirs, files in os.walk(top):
        for name in dirs + files:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


def spawn(caps: Capabilities, argv: list[str], scratch: Path, limits: Limits, *,
           env: dict[str, str], out: IO[bytes] | int, pass_fds: tuple[int, ...] = (),
           uid: int | None = None, cgroup: str | None = None,
           script: bool = False) -> tuple[subprocess.Popen[bytes], Path | None]:
    """Start argv (cwd: scratch) in the sandbox ``caps`` describes; with ``script``, argv is
    a Python script and its arguments, run by this interpreter with PYTHON_FLAGS. Returns
    the process (under bwrap: bwrap itself, the root of the worker's whole process tree)
    and the fallback's private root folder, if one was made."""
    flt = seccomp_filter()[0] if caps.seccomp else None
    new_root: Path | None = None
    seccomp_fd: int | None = None
    if caps.backend == "bwrap":
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxUnavailable("bwrap is no longer on PATH")
        seccomp_fd = open_seccomp_fd() if caps.seccomp else None
        argv = (bwrap_argv(bwrap, scratch, seccomp_fd)
                + [sys.executable, *(PYTHON_FLAGS if script else ["-I", "-S"]), "-c", LAUNCHER,
                   str(-1 if uid is None else uid), str(limits.processes), str(scratch),
                   "script" if script else "exec"] + argv)
        pass_fds += () if seccomp_fd is None else (seccomp_fd,)
    else:
        argv = [sys.executable, *PYTHON_FLAGS] + argv if script else argv
        if caps.backend == "namespaces":
            new_root = Path(tempfile.mkdtemp(prefix="root-", dir=scratch_base()))
    prepare = preexec(caps.backend, uid, str(new_root) if new_root else None, str(scratch),
                       limits, flt, cgroup)
    try:
        proc = subprocess.Popen(argv, cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=out, pass_fds=pass_fds, preexec_fn=prepare)
    except BaseException:
        if new_root is not None:
            shutil.rmtree(new_root, ignore_errors=True)
        raise
    finally:
        if seccomp_fd is not None:
            os.close(seccomp_fd)
    return proc, new_root


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def kill_and_wait(pids: list[int], timeout: float) -> None:
    """SIGKILL ``pids`` and wait, at most ``timeout`` seconds, until one of them has ended
    (a pidfd reads ready then; where pidfds are missing, a millisecond's sleep)."""
    fds = []
    for pid in pids:
        try:
            fds.append(os.pidfd_open(pid))
        except (AttributeError, OSError):
            pass
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        if fds:
            select.select(fds, [], [], timeout)
        else:
            time.sleep(min(0.001, timeout))
    finally:
        for fd in fds:
            os.close(fd)


def _sweep(uid: int) -> None:
    """Kill every process left running under the sandbox uid (the fallback without a pid
    namespace)."""
    for _ in range(3):
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/status") as fh:
                    for line in fh:
                        if line.startswith("Uid:"):
                            if int(line.split()[1]) == uid:
                                os.kill(int(entry), signal.SIGKILL)
                                found = True
                            break
            except (OSError, ValueError):
                continue
        if not found:
            return
        time.sleep(0.05)


def end_process(proc: subprocess.Popen[bytes], caps: Capabilities, uid: int | None) -> None:
    """Kill proc and every process below it, and wait until they are gone. Under bwrap,
    killing the pid namespace's first process takes every process in it down."""
    tree = measure.tree(proc.pid)[1:]   # /proc parent links: not every kernel has task/*/children
    for pid in tree:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if proc.poll() is None:
            proc.kill()
    proc.wait()
    if uid is not None and not caps.pid_namespace:
        _sweep(uid)
    deadline = time.monotonic() + 5.0
    while any(running(pid) for pid in tree) and time.monotonic() < deadline:
        time.sleep(0.005)


def exit_status(caps: Capabilities, code: int) -> int:
    """bwrap reports a command killed by signal N as exit code 128 + N; give it back as
    -N, as subprocess does."""
    if caps.backend == "bwrap" and 128 < code < 128 + 65:
        return -(code - 128)
    return code


def worker_env(scratch: Path) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch), "LANG": "C.UTF-8",
           "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def run_sandboxed(caps: Capabilities, argv: list[str], scratch: Path, limits: Limits,
                  timeout: float, env: dict[str, str] | None) -> tuple[int, str]:
    # a uid of its own, never a worker's: the command can neither signal this process's
    # submission worker nor be swept with it (the root fallback sweeps by uid)
    uid = sandbox_uid(400000) if os.geteuid() == 0 and caps.separate_uid else None
    if uid is not None:
        chown_tree(scratch, uid)
    with tempfile.TemporaryFile() as out:
        proc, new_root = spawn(caps, argv, scratch, limits, out=out, uid=uid,
                                env=worker_env(scratch) if env is None else env)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        finally:
            end_process(proc, caps, uid)
            if new_root is not None:
                shutil.rmtree(new_root, ignore_errors=True)
        size = out.seek(0, os.SEEK_END)
        out.seek(max(0, size - OUTPUT_TAIL_BYTES))
        tail = out.read().decode("utf-8", "replace")
    return exit_status(caps, proc.returncode), tail
