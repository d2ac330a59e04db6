"""Process isolation for grading: the submission runs in a worker process, never here.

The trusted test process (hidden tests, references, expected values) talks to the worker
through ``RemoteModule``, a stand-in for the submission's module: attribute access, calls,
method calls and a few operators are sent as plain data (graders/wire.py) and the answers
come back as plain data or handles. Exceptions come back by type and message: built-in
types are raised as themselves, exception classes the kata defines as local classes of the
same name and built-in base.

The worker starts in a fresh scratch folder holding only a copy of the submission (copied,
never linked: ``copy_submission`` refuses links, devices, FIFOs and sockets), the worker's
own two files and graders/support, with a minimal environment, an import path without the
repository, resource limits (CPU time, address space, file size, processes, open files),
a wall-clock limit per call, and its output going to a file, truncated. Around it runs the
best of three backends this machine allows (``capabilities()``; ``KATA_SANDBOX=bwrap``,
``namespaces`` or ``limits`` forces one, and a forced backend that cannot run is an error,
never a quiet downgrade):

- ``bubblewrap``: ``bwrap`` (on PATH; root or not) unshares every namespace: its own
  loopback and no route out, its own pid namespace (every process of the worker dies with
  it), a private root of read-only binds (the system's libraries, the interpreter and its
  packages) where the scratch folder is the only writable path, a private /tmp, /proc and
  /dev, and a uid of its own (as root, a host uid of its own too: the trusted launcher
  drops to it inside; otherwise a uid of its own user namespace, with no further user
  namespaces allowed).
- ``namespaces (root)``: root without bwrap; the private network and root are built here
  by hand (unshare, mount, chroot) and the worker gets a host uid of its own, whose every
  process is swept when it ends. No pid namespace.
- ``limits only``: anyone else; the worker runs as the grader's user and can read what the
  grader can read. The report says so.

Every backend also loads a seccomp filter (built with libseccomp through ``pyseccomp``) that
makes the kernel calls no submission needs (ptrace, mount, unshare, setns, keyctl, bpf,
perf_event_open, module loading, reboot, ...) fail with EPERM. ``run_command`` runs any
command in the same sandbox (candidate-written tests use it).

One worker serves the tests of one test file; a crashed or killed worker fails the test it
was serving and a fresh one serves the next test.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import ctypes.util
import errno
import json
import os
import resource
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO, Callable, Iterator, NoReturn

from graders import catalog, measure, wire

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MS_NOSUID = 2
MS_NODEV = 4
MS_BIND = 4096
MS_REMOUNT = 32
MS_RDONLY = 1

BUILTIN_EXCEPTIONS = {name: obj for name, obj in vars(builtins).items()
                      if isinstance(obj, type) and issubclass(obj, BaseException)}

BACKENDS = {"bwrap": "bubblewrap", "namespaces": "namespaces (root)", "limits": "limits only"}
INNER_UID = 1000                  # the worker's uid inside its own user namespace
TMP_BYTES = 64 << 20              # the private /tmp under bwrap
SUBMISSION_BYTES = 64 << 20       # a submission larger than this is refused
SUBMISSION_ENTRIES = 2000
OUTPUT_TAIL_BYTES = 64 << 10      # what run_command returns of a command's output

# Kernel calls no submission needs; each fails with EPERM. Names this architecture lacks
# are skipped. clone with a namespace flag is refused too, and clone3 (whose flags a filter
# cannot read) reports ENOSYS, so that the C library falls back to plain clone.
DENIED_CALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "mount", "umount2", "mount_setattr", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "pivot_root", "chroot", "unshare", "setns",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
    "open_by_handle_at", "name_to_handle_at", "syslog", "vhangup", "lookup_dcookie",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "sethostname", "setdomainname", "iopl", "ioperm", "fanotify_init",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # System V and POSIX message IPC: objects that outlive their process, through which a
    # worker could hand state to the next one the zygote forks
    "shmget", "msgget", "semget", "mq_open",
)
NAMESPACE_FLAGS = (0x00000080, 0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000,
                   0x20000000, 0x40000000)   # TIME, NS, CGROUP, UTS, IPC, USER, PID, NET
TIOCSTI = 0x5412

# Runs inside bwrap before the command: drops to the worker's host uid (root only: the
# processes limit then counts the worker's processes alone), sets that limit (it counts
# per uid of the namespace it is set in, so it is set here, inside), enters the scratch
# folder (which only that uid may enter), then execs the command, or runs a Python script
# in this same interpreter (a worker starts faster without a second interpreter).
_LAUNCHER = """import os,resource,sys
uid,nproc,cwd,how=int(sys.argv[1]),int(sys.argv[2]),sys.argv[3],sys.argv[4]
if uid>=0:
 os.setgroups([]);os.setgid(uid);os.setuid(uid)
resource.setrlimit(resource.RLIMIT_NPROC,(nproc,nproc))
os.chdir(cwd)
if how=="exec":
 os.execv(sys.argv[5],sys.argv[5:])
import runpy
sys.argv=sys.argv[5:];sys.path[0]=os.path.dirname(sys.argv[0])
runpy.run_path(sys.argv[0],run_name="__main__")
"""
PYTHON_FLAGS = ["-B", "-E", "-s"]   # a worker's interpreter: no bytecode, no PYTHON*, no user site


class SubmissionError(Exception):
    """The submission's worker failed: it died, hung, or sent something invalid."""


class UnsafeSubmission(SubmissionError):
    """The submission holds something other than plain files and folders."""


class SandboxUnavailable(RuntimeError):
    """The sandbox asked for (KATA_SANDBOX) cannot run on this machine."""


@dataclass
class Limits:
    call_seconds: float = 60.0
    cpu_seconds: int = 300
    memory_bytes: int = 4 << 30
    file_bytes: int = 16 << 20
    processes: int = 64
    open_files: int = 256
    output_bytes: int = 64 << 10
    reply_bytes: int = wire.REPLY_BYTES   # kata.toml [grading] reply_bytes


@dataclass
class Capabilities:
    """Which backend runs the workers and what it gives; reported with every grade."""
    backend: str = "limits"
    separate_uid: bool = False
    network_namespace: bool = False
    mount_namespace: bool = False
    pid_namespace: bool = False
    seccomp: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return BACKENDS[self.backend]

    def lacks(self) -> list[str]:
        missing = [text for have, text in (
            (self.separate_uid, "a uid of its own (it runs as the grader's user)"),
            (self.network_namespace, "a private network (it can reach the network)"),
            (self.mount_namespace, "a private root (it can read whatever the grader can, "
                                   "the repository and hidden tests included)"),
            (self.pid_namespace, "a pid namespace (it sees other processes; its own are "
                                 "swept by uid, or by process group without one)"),
            (self.seccomp, "a seccomp filter (install pyseccomp and libseccomp2)")) if not have]
        return missing

    def summary(self) -> dict[str, Any]:
        return {"process": True, "backend": self.label, "separate_uid": self.separate_uid,
                "no_network": self.network_namespace,
                "hidden_repository": self.mount_namespace,
                "pid_namespace": self.pid_namespace, "seccomp": self.seccomp,
                "lacks": self.lacks(), "notes": self.notes}


# -- seccomp ---------------------------------------------------------------------------

_filter_state: tuple[Any, bytes | None, str] | None = None


def _seccomp() -> tuple[Any, bytes | None, str]:
    """(the filter, its BPF program for bwrap, why there is none), built once."""
    global _filter_state
    if _filter_state is not None:
        return _filter_state
    try:
        import pyseccomp as sc  # type: ignore[import-untyped]
    except (ImportError, RuntimeError, OSError) as exc:
        _filter_state = (None, None, f"no seccomp filter: pyseccomp is unusable ({exc})")
        return _filter_state
    flt = sc.SyscallFilter(sc.ALLOW)
    eperm = sc.ERRNO(errno.EPERM)
    for name in DENIED_CALLS:
        try:
            flt.add_rule(eperm, name)
        except (OSError, ValueError, RuntimeError):
            pass  # not a call on this architecture
    for flag in NAMESPACE_FLAGS:
        flt.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    flt.add_rule(eperm, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, TIOCSTI))
    with tempfile.TemporaryFile() as fh:
        flt.export_bpf(fh)
        fh.seek(0)
        bpf = fh.read()
    _filter_state = (flt, bpf, "")
    return _filter_state


def _seccomp_fd() -> int | None:
    """A fresh file holding the BPF program, for ``bwrap --seccomp FD`` (which reads it to
    its end: each worker needs its own)."""
    bpf = _seccomp()[1]
    if bpf is None:
        return None
    fd = os.memfd_create("kata-seccomp", 0)
    os.write(fd, bpf)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


# -- the private root's contents ---------------------------------------------------------

def _visible_paths() -> list[tuple[str, bool]]:
    """(path, writable) for what the worker's private root shows: the system's programs
    and libraries, the interpreter and its packages; nothing else of the host."""
    import site

    paths: list[tuple[str, bool]] = []
    for p in ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin"):
        if os.path.lexists(p):
            paths.append((p, False))
    extra = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
             *[os.path.realpath(x) for x in site.getsitepackages()]}
    for p in sorted(extra):
        if os.path.isdir(p) and not any(p == q or p.startswith(q + "/") for q, _ in paths):
            paths.append((p, False))
    return paths


def _bwrap_argv(bwrap: str, scratch: Path, seccomp_fd: int | None) -> list[str]:
    if os.geteuid() == 0:
        # bwrap runs privileged: no user namespace (which would map the worker to host
        # root); the launcher inside keeps only the right to drop to the worker's uid
        argv = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--cap-drop", "ALL",
                "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        argv = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns",
                "--uid", str(INNER_UID), "--gid", str(INNER_UID)]
    argv += ["--die-with-parent", "--new-session", "--hostname", "sandbox", "--proc", "/proc",
             "--dev", "/dev", "--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    binds = [(path, os.path.islink(path)) for path, _ in _visible_paths()]
    if os.path.isfile("/etc/ld.so.cache"):   # where the dynamic loader finds libraries
        binds.append(("/etc/ld.so.cache", False))
    binds.append((str(scratch), False))
    made = {"/", "/tmp"}
    for path, _ in binds:   # the folders above each bind: bwrap would make them 0700
        for parent in reversed(Path(path).parents):
            if str(parent) not in made:
                made.add(str(parent))
                argv += ["--perms", "0755", "--dir", str(parent)]
    for path, link in binds[:-1]:
        argv += ["--symlink", os.readlink(path), path] if link else ["--ro-bind", path, path]
    # the private root and /dev are bwrap's own tmpfs, which an unprivileged sandbox may
    # write to: read-only, so that the scratch folder and /tmp (bounded) are all it can fill
    argv += ["--bind", str(scratch), str(scratch), "--remount-ro", "/dev", "--remount-ro", "/"]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return argv + ["--"]


# -- the hand-written fallback (root without bwrap) --------------------------------------

def _libc() -> Any:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _build_root(libc: Any, new_root: str, scratch: str) -> None:
    """In a private mount namespace: a tmpfs root holding read-only binds of the visible
    paths, the scratch folder (writable), a private /tmp and a few devices; then chroot."""
    if libc.mount(b"tmpfs", new_root.encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
                  b"size=16m,mode=0755") != 0:
        os._exit(95)
    # the private /tmp first: the checkout (interpreter, scratch) may itself live under /tmp
    os.makedirs(new_root + "/tmp", exist_ok=True)
    if libc.mount(b"tmpfs", (new_root + "/tmp").encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
                  b"size=16m,mode=1777") != 0:
        os._exit(93)
    for path, writable in _visible_paths() + [(scratch, True)]:
        inside = new_root + path
        if os.path.islink(path):
            os.makedirs(os.path.dirname(inside), exist_ok=True)
            os.symlink(os.readlink(path), inside)
            continue
        os.makedirs(inside, exist_ok=True)
        if libc.mount(path.encode(), inside.encode(), None, MS_BIND | MS_REC, None) != 0:
            os._exit(94)
        if not writable:
            libc.mount(None, inside.encode(), None,
                       MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID, None)
    os.makedirs(new_root + "/dev", exist_ok=True)
    for dev in ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"):
        target = new_root + dev
        open(target, "w").close()
        libc.mount(dev.encode(), target.encode(), None, MS_BIND, None)
    os.chroot(new_root)
    os.chdir(scratch)


def _loopback_up() -> None:
    """Bring up the private namespace's own loopback, so that a kata can serve and connect
    on 127.0.0.1 inside the worker; nothing outside the namespace is reachable."""
    import fcntl
    import socket
    import struct

    iff_up, iff_loopback, iff_running, siocsifflags = 0x1, 0x8, 0x40, 0x8914
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        ifreq = struct.pack("16sH14s", b"lo", iff_up | iff_loopback | iff_running, b"\0" * 14)
        fcntl.ioctl(sock, siocsifflags, ifreq)


def _set_limits(limits: Limits) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _preexec(backend: str, uid: int | None, new_root: str | None, scratch: str,
             limits: Limits, flt: Any, cgroup: str | None = None) -> Callable[[], None]:
    """Runs in the child between fork and exec. First the sandbox's cgroup (where there is
    one: everything the sandbox ever starts is then accounted there). Under bwrap: a new
    session and the limits (bwrap and the launcher do the rest). Otherwise also the
    fallback's namespaces, the uid switch and the seccomp filter."""
    def run() -> None:
        if cgroup is not None:
            try:   # checked from outside once started (_checked_cgroup)
                measure.join_cgroup(cgroup)
            except OSError:
                pass
        os.setsid()
        if backend == "namespaces" and new_root:
            libc = _libc()
            if libc.unshare(CLONE_NEWNS | CLONE_NEWNET) != 0:
                os._exit(97)
            if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
                os._exit(98)
            _loopback_up()
            _build_root(libc, new_root, scratch)
        _set_limits(limits)
        if backend == "bwrap":
            return
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        if flt is not None:
            flt.load()
    return run


def _scratch_base() -> Path:
    base = catalog.ROOT / ".nox" / "sandbox"
    base.mkdir(parents=True, exist_ok=True)
    return base


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


def _sandbox_uid(base: int = 200000) -> int:
    # one uid per trusted process (its claimed block), so parallel graders never sweep each
    # other's workers; the reference's workers (graders.impl.measured_call) use base 300000
    # and candidate test commands base 400000, so sweeping one kind never ends another
    return base + uid_block()


def _chown_tree(top: Path, uid: int) -> None:
    os.chown(top, uid, uid)
    for dirpath, dirs, files in os.walk(top):
        for name in dirs + files:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


# -- starting and ending sandboxed processes --------------------------------------------

def _spawn(caps: Capabilities, argv: list[str], scratch: Path, limits: Limits, *,
           env: dict[str, str], out: IO[bytes] | int, pass_fds: tuple[int, ...] = (),
           uid: int | None = None, cgroup: str | None = None,
           script: bool = False) -> tuple[subprocess.Popen[bytes], Path | None]:
    """Start argv (cwd: scratch) in the sandbox ``caps`` describes; with ``script``, argv is
    a Python script and its arguments, run by this interpreter with PYTHON_FLAGS. Returns
    the process (under bwrap: bwrap itself, the root of the worker's whole process tree)
    and the fallback's private root folder, if one was made."""
    flt = _seccomp()[0] if caps.seccomp else None
    new_root: Path | None = None
    seccomp_fd: int | None = None
    if caps.backend == "bwrap":
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxUnavailable("bwrap is no longer on PATH")
        seccomp_fd = _seccomp_fd() if caps.seccomp else None
        argv = (_bwrap_argv(bwrap, scratch, seccomp_fd)
                + [sys.executable, *(PYTHON_FLAGS if script else ["-I", "-S"]), "-c", _LAUNCHER,
                   str(-1 if uid is None else uid), str(limits.processes), str(scratch),
                   "script" if script else "exec"] + argv)
        pass_fds += () if seccomp_fd is None else (seccomp_fd,)
    else:
        argv = [sys.executable, *PYTHON_FLAGS] + argv if script else argv
        if caps.backend == "namespaces":
            new_root = Path(tempfile.mkdtemp(prefix="root-", dir=_scratch_base()))
    prepare = _preexec(caps.backend, uid, str(new_root) if new_root else None, str(scratch),
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


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _kill_and_wait(pids: list[int], timeout: float) -> None:
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


def _end(proc: subprocess.Popen[bytes], caps: Capabilities, uid: int | None) -> None:
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
    while any(_running(pid) for pid in tree) and time.monotonic() < deadline:
        time.sleep(0.005)


def _exit_status(caps: Capabilities, code: int) -> int:
    """bwrap reports a command killed by signal N as exit code 128 + N; give it back as
    -N, as subprocess does."""
    if caps.backend == "bwrap" and 128 < code < 128 + 65:
        return -(code - 128)
    return code


def _worker_env(scratch: Path) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch), "LANG": "C.UTF-8",
           "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def _run(caps: Capabilities, argv: list[str], scratch: Path, limits: Limits, timeout: float,
         env: dict[str, str] | None) -> tuple[int, str]:
    # a uid of its own, never a worker's: the command can neither signal this process's
    # submission worker nor be swept with it (the root fallback sweeps by uid)
    uid = _sandbox_uid(400000) if os.geteuid() == 0 and caps.separate_uid else None
    if uid is not None:
        _chown_tree(scratch, uid)
    with tempfile.TemporaryFile() as out:
        proc, new_root = _spawn(caps, argv, scratch, limits, out=out, uid=uid,
                                env=_worker_env(scratch) if env is None else env)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        finally:
            _end(proc, caps, uid)
            if new_root is not None:
                shutil.rmtree(new_root, ignore_errors=True)
        size = out.seek(0, os.SEEK_END)
        out.seek(max(0, size - OUTPUT_TAIL_BYTES))
        tail = out.read().decode("utf-8", "replace")
    return _exit_status(caps, proc.returncode), tail


def run_command(argv: list[str], scratch: Path, limits: Limits, timeout: float,
                env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run argv with cwd=scratch in the same sandbox as a worker: scratch is the only
    writable path and nothing of the repository or the grade's files is visible (under
    bwrap and the root fallback; see capabilities()). Waits at most ``timeout`` s, then
    kills the whole process tree. Returns the exit status (negative: killed by that
    signal, as subprocess reports it) and the last 64 KiB of its output (stdout and
    stderr together). As root, scratch is handed to the sandbox's uid."""
    return _run(capabilities(), argv, Path(scratch), limits, timeout, env)


# -- choosing the backend ----------------------------------------------------------------

_capabilities: Capabilities | None = None


def _unavailable(backend: str) -> str | None:
    if backend != "limits" and sys.platform != "linux":
        return f"Linux only (this is {sys.platform})"
    if backend == "bwrap" and shutil.which("bwrap") is None:
        return "bwrap is not on PATH (install bubblewrap; see the README)"
    if backend == "namespaces" and os.geteuid() != 0:
        return "needs root"
    return None


def _describe(backend: str, seccomp: bool) -> Capabilities:
    full = backend != "limits"
    caps = Capabilities(backend, separate_uid=full, network_namespace=full,
                        mount_namespace=full, pid_namespace=backend == "bwrap", seccomp=seccomp)
    if backend == "bwrap" and os.geteuid() != 0:
        caps.notes.append(f"not root: the worker is uid {INNER_UID} of its own user "
                          "namespace, this user outside it")
    return caps


def _probe(caps: Capabilities) -> str | None:
    """Run a small program in this sandbox; None when it worked, else why not."""
    scratch = Path(tempfile.mkdtemp(prefix="probe-", dir=_scratch_base()))
    try:
        code, out = _run(caps, [sys.executable, "-I", "-c",
                                "import numpy, os; print('ok', os.getcwd())"],
                         scratch, Limits(), 60.0, None)
    except (OSError, subprocess.SubprocessError, SandboxUnavailable) as exc:
        return f"could not start: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if code == 0 and out.startswith("ok"):
        return None
    return f"a test program failed (exit {code}): {out.strip()[-300:]}"


PROBED_ENV = "KATA_SANDBOX_PROBED"


def probed_env(caps: Capabilities) -> dict[str, str]:
    """What a grade passes to the test process it starts (with KATA_SANDBOX): the sandbox
    it has just tried with a real program, so that the test process need not try it again
    (a sandbox and an interpreter, a fifth of a second, on every grade)."""
    return {"KATA_SANDBOX": caps.backend,
            PROBED_ENV: json.dumps({"backend": caps.backend, "seccomp": caps.seccomp,
                                    "notes": caps.notes})}


def _probed(forced: str) -> Capabilities | None:
    try:
        data = json.loads(os.environ.get(PROBED_ENV, ""))
    except ValueError:
        return None
    if not isinstance(data, dict) or not forced or data.get("backend") != forced:
        return None
    caps = _describe(forced, seccomp=bool(data.get("seccomp")) and _seccomp()[0] is not None)
    caps.notes = [str(n) for n in data.get("notes") or []]
    return caps


def capabilities() -> Capabilities:
    """The backend this process's workers run under, chosen once: bwrap, else the root
    fallback, else limits only; or the one KATA_SANDBOX names (SandboxUnavailable when it
    cannot run here). Each candidate is tried with a real program before it is chosen."""
    global _capabilities
    if _capabilities is not None:
        return _capabilities
    forced = os.environ.get("KATA_SANDBOX", "").strip()
    if forced and forced not in BACKENDS:
        raise SandboxUnavailable(f"KATA_SANDBOX={forced!r}: choose bwrap, namespaces or limits")
    _, _, no_filter = _seccomp()
    notes = [no_filter] if no_filter else []
    probed = _probed(forced)
    if probed is not None:   # the grade that started this process tried it moments ago
        _capabilities = probed
        return probed
    for backend in [forced] if forced else list(BACKENDS):
        why = _unavailable(backend)
        if why is None:
            caps = _describe(backend, seccomp=not no_filter)
            why = _probe(caps)
            if why is not None and caps.seccomp:
                caps = _describe(backend, seccomp=False)
                if _probe(caps) is None:
                    notes.append(f"the seccomp filter could not be loaded: {why}")
                    why = None
            if why is None:
                caps.notes = notes + caps.notes
                _capabilities = caps
                return caps
        if forced:
            raise SandboxUnavailable(f"KATA_SANDBOX={forced}: the {BACKENDS[forced]} sandbox "
                                     f"cannot run here: {why}")
        notes.append(f"{BACKENDS[backend]}: {why}")
    caps = _describe("limits", seccomp=False)
    caps.notes = notes
    _capabilities = caps
    return caps


# -- copying the submission --------------------------------------------------------------

_KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}


def _refuse(path: Path, st: os.stat_result) -> UnsafeSubmission:
    kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a plain file or folder")
    return UnsafeSubmission(f"submission refused: {path} is {kind}; submissions must hold "
                            "plain files and folders only (copied, never linked)")


def _open_entry(path: Path, dir_fd: int | None, name: str) -> tuple[int, os.stat_result]:
    """Open one entry without following a link, and check that what was opened is the
    plain file or folder that was looked at (no swap between the look and the open)."""
    before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if not (stat.S_ISREG(before.st_mode) or stat.S_ISDIR(before.st_mode)):
        raise _refuse(path, before)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | (
        os.O_DIRECTORY if stat.S_ISDIR(before.st_mode) else 0)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        raise UnsafeSubmission(f"submission refused: {path} changed while it was being "
                               f"copied ({exc.strerror})") from None
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise UnsafeSubmission(f"submission refused: {path} changed while it was being copied")
    return fd, st


class _Copy:
    """Walk (and, given a destination, copy) one submission tree through file descriptors
    opened without following links; count bytes, entries and hard links on the way."""

    def __init__(self) -> None:
        self.bytes = 0
        self.entries = 0
        self.links: dict[tuple[int, int], tuple[int, list[Path]]] = {}

    def entry(self, path: Path, dir_fd: int | None, name: str, dest: Path | None) -> None:
        self.entries += 1
        if self.entries > SUBMISSION_ENTRIES:
            raise UnsafeSubmission(f"submission refused: more than {SUBMISSION_ENTRIES} "
                                   "files and folders")
        fd, st = _open_entry(path, dir_fd, name)
        try:
            if stat.S_ISDIR(st.st_mode):
                if dest is not None:
                    dest.mkdir(mode=0o755)
                for child in sorted(os.listdir(fd)):
                    if child == "__pycache__" or child.endswith(".pyc"):
                        continue
                    self.entry(path / child, fd, child, None if dest is None else dest / child)
                return
            nlink, seen = self.links.setdefault((st.st_dev, st.st_ino), (st.st_nlink, []))
            seen.append(path)
            self.bytes += st.st_size
            if self.bytes > SUBMISSION_BYTES:
                raise UnsafeSubmission(f"submission refused: larger than "
                                       f"{SUBMISSION_BYTES >> 20} MiB")
            if dest is not None:
                with open(dest, "xb") as out:
                    while chunk := os.read(fd, 1 << 20):
                        out.write(chunk)
        finally:
            os.close(fd)

    def check_links(self) -> None:
        for nlink, seen in self.links.values():
            if nlink > len(seen):
                raise UnsafeSubmission(
                    f"submission refused: {seen[0]} is a hard link to a file outside the "
                    f"submission ({nlink} names, {len(seen)} inside); submissions must hold "
                    "plain files only (copied, never linked)")


def _source(submission: Path) -> Path:
    """What of a submission is copied: its package folder, or its one file."""
    return submission.parent if submission.name == "__init__.py" else submission


def copy_submission(submission: Path, dest: Path | None, root: Path | None = None,
                    check_links: bool = True) -> None:
    """Copy the submission (``submission`` is the file the worker loads; a package's whole
    folder is copied) to ``dest``; with ``dest`` None, only check it. Symbolic links, hard
    links to files outside it, devices, FIFOs and sockets are refused (UnsafeSubmission,
    naming the path). Nothing is followed: every entry is opened with O_NOFOLLOW relative
    to its folder, from ``root`` (the path the grader was given, trusted up to there)
    down, so a link swapped in after a check cannot pull in a file from elsewhere. The
    project's own reference (``check_links`` False) is copied whatever other names its
    files have: a hard link made to it elsewhere must not stop the baseline."""
    src = _source(submission)
    root = src if root is None else root
    try:
        parts = src.relative_to(root).parts
    except ValueError:
        raise UnsafeSubmission(f"submission refused: {src} lies outside {root}") from None
    chain = [root.joinpath(*parts[:i]) for i in range(len(parts))]   # folders above src
    walker = _Copy()
    fds: list[int] = []
    try:
        dir_fd: int | None = None
        for folder in chain:
            fd, st = _open_entry(folder, dir_fd, str(folder) if dir_fd is None else folder.name)
            fds.append(fd)
            if not stat.S_ISDIR(st.st_mode):
                raise UnsafeSubmission(f"submission refused: {folder} is not a folder")
            dir_fd = fd
        walker.entry(src, dir_fd, str(src) if dir_fd is None else src.name, dest)
    finally:
        for fd in fds:
            os.close(fd)
    if check_links:
        walker.check_links()


def _spec_root() -> Path | None:
    """The submission path the grader was given (None for the repository's own katas/
    and solutions/)."""
    from graders import impl

    spec = impl.current_spec()
    return None if spec in ("katas", "solutions") else Path(spec)


def _prepare_scratch(submission: Path, trusted_copy: bool) -> tuple[Path, Path]:
    """A fresh scratch folder holding the worker's code, graders.support and a copy of the
    submission; returns (the folder, the file the worker loads)."""
    # the path the grader was given bounds the copy; the project's own reference
    # (a baseline worker) is checked from its own file
    root = None if trusted_copy else _spec_root()
    scratch = Path(tempfile.mkdtemp(prefix="kata-worker-", dir=_scratch_base()))
    try:
        here = Path(__file__).parent
        shutil.copy(here / "worker.py", scratch / "_kata_worker.py")
        shutil.copy(here / "wire.py", scratch / "_kata_wire.py")
        support = here / "support"
        if support.is_dir():
            dest = scratch / "_support" / "graders"
            shutil.copytree(support, dest / "support",
                            ignore=shutil.ignore_patterns("__pycache__"))
            (dest / "__init__.py").write_text("")
        if submission.name == "__init__.py":
            copy_submission(submission, scratch / "submission", root, not trusted_copy)
            target = scratch / "submission" / "__init__.py"
        else:
            target = scratch / "submission.py"
            copy_submission(submission, target, root, not trusted_copy)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return scratch, target


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
                 trusted_copy: bool = False) -> None:
        caps = self.caps = capabilities()
        self.limits = limits
        self.uid = _sandbox_uid(uid_base) if os.geteuid() == 0 and caps.separate_uid else None
        self.cgroup = measure.new_cgroup() if caps.backend != "limits" else None
        self.new_root: Path | None = None
        self.scratch, target = _prepare_scratch(submission, trusted_copy)
        self.output_path = Path(tempfile.mkstemp(prefix="kata-worker-out-")[1])
        self.dead: str | None = None
        try:
            if self.uid is not None:
                _chown_tree(self.scratch, self.uid)
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.output_path.unlink(missing_ok=True)
            raise
        def start(req_r: int, rep_w: int) -> None:
            with open(self.output_path, "wb") as out:
                self.proc, self.new_root = _spawn(
                    caps, [str(self.scratch / "_kata_worker.py"), str(req_r), str(rep_w),
                           str(target), module_name] + (["read-only"] if read_only else []),
                    self.scratch, limits, env=_worker_env(self.scratch), out=out,
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
            return _exit_status(self.caps, self.proc.wait(timeout=5))
        except subprocess.TimeoutExpired:
            self.kill()
            return _exit_status(self.caps, self.proc.returncode)

    def request(self, message: dict[str, Any],
                watch: Callable[[], str | None] | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply: the reply must start within the call's
        wall-clock limit, be no larger than the kata's reply cap, and arrive in full within
        a few seconds of its first byte. A worker that breaks any of these is killed and
        the test it serves fails with a message that says which. ``watch``
        (graders/measure.py) is called every few tens of milliseconds while the call runs;
        a reason it returns ends the worker."""
        if self.dead:
            raise SubmissionError(self.dead)
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
            raise SubmissionError(self.dead) from None
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
            raise SubmissionError(self.dead) from None
        self.kill()
        self.dead = f"the worker sent an invalid reply: {exc}"
        raise SubmissionError(self.dead) from None

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
        raise SubmissionError(self.dead)

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
        _end(self.proc, self.caps, self.uid)
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
                 uid_base: int, trusted_copy: bool) -> None:
        self.caps = capabilities()
        self.limits = limits
        self.uid_base = uid_base
        self.forked = 0
        self.exits: dict[int, int] = {}
        self.host_pid: int | None = None
        self.scratch, target = _prepare_scratch(submission, trusted_copy)
        self.output_path = Path(tempfile.mkstemp(prefix="kata-zygote-out-")[1])
        os.chmod(self.scratch, 0o755)   # workers read their code; only their folder is theirs
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.ctrl = ours
        self.cgroup = measure.new_cgroup()
        try:
            with open(self.output_path, "wb") as out:
                self.proc, _ = _spawn(
                    self.caps, [str(self.scratch / "_kata_worker.py"), "zygote",
                                str(theirs.fileno()), str(target), module_name,
                                str(_child_uid(uid_base, 0))]   # the compile child's uid
                    + (["read-only"] if read_only else []),
                    self.scratch, limits, env=_worker_env(self.scratch), out=out,
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
            and _running(self.host_pid)

    def kill(self) -> None:
        if self.cgroup is not None:
            measure.kill_cgroup(self.cgroup)
        _end(self.proc, self.caps, None)
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
            left = [p for p in set(inside) if p not in self.zygote.infra and _running(p)]
            if not left:
                break
            _kill_and_wait(left, min(0.05, max(0.0, deadline - time.monotonic())))
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


class Session:
    """The worker that serves one kata's submission, replaced after each test."""

    def __init__(self, kata: str, submission: Path, limits: Limits | None = None,
                 uid_base: int = 200000, trusted_copy: bool = False) -> None:
        self.trusted_copy = trusted_copy
        self.kata = kata
        self.submission = submission
        self.limits = limits or Limits()
        self.worker: Worker | None = None
        self.uid_base = uid_base
        try:
            self.read_only = catalog.load(kata).read_only_inputs
        except catalog.CatalogError:
            self.read_only = False
        self.generation = 0
        self.exc_classes: dict[str, type[BaseException]] = {}
        self.zygote: Zygote | None = None
        self.use_zygote = Zygote.usable(capabilities())
        self._watch: Callable[[], str | None] | None = None

    @contextlib.contextmanager
    def watching(self, watch: Callable[[], str | None]) -> Iterator[None]:
        """Every call made inside the block is watched by ``watch`` (a CPU meter's): a
        measured call then goes through the proxy exactly as a checked call does."""
        self._watch = watch
        try:
            yield
        finally:
            self._watch = None

    def _new_worker(self) -> Worker:
        name = f"_submission_{self.kata}"
        if self.use_zygote:
            for _ in range(2):   # a zygote that died or hung is replaced once
                if self.zygote is None or not (self.zygote.host_pid is None
                                               or self.zygote.alive()):
                    if self.zygote is not None:
                        self.zygote.kill()
                    self.zygote = Zygote(self.submission, name, self.limits, self.read_only,
                                         self.uid_base, self.trusted_copy)
                try:
                    return self.zygote.fork()
                except (ZygoteFailed, OSError):
                    self.zygote.kill()
                    self.zygote = None
        return Worker(self.submission, name, self.limits, self.read_only, self.uid_base,
                      self.trusted_copy)

    def current(self) -> Worker:
        if self.worker is None or self.worker.dead:
            if self.worker is not None:
                self.worker.kill()
            self.worker = self._new_worker()
            self.generation += 1
        return self.worker

    def reset(self) -> None:
        """Replace the worker after a test that used it, so that nothing one test did
        (an exception, a thread left running, a changed global, a killed worker) can reach
        the next test. The next worker starts at once and boots while the next test sets
        up. A worker that has served no request since it started is kept as it is."""
        if self.worker is not None and (self.worker.dead is not None
                                        or getattr(self.worker, "served", 0) > 0):
            self.worker.kill()
            self.worker = None
            self.worker = self._new_worker()
            self.generation += 1

    def close(self) -> None:
        if self.worker is not None:
            self.worker.kill()
            self.worker = None
        if self.zygote is not None:
            self.zygote.kill()
            self.zygote = None

    def call(self, message: dict[str, Any],
             watch: Callable[[], str | None] | None = None) -> Any:
        worker = self.current()
        generation = self.generation
        reply = worker.request(message, watch if watch is not None else self._watch)
        if "ok" in reply:
            return wire.decode(reply["ok"], lambda d: self._proxy(d, generation))
        err = reply.get("error")
        if not isinstance(err, dict):
            raise SubmissionError("the worker sent an invalid reply")
        raise self._exception(err)

    def support_call(self, module: str, name: str, args: tuple[Any, ...],
                     kwargs: dict[str, Any],
                     watch: Callable[[], str | None] | None = None) -> Any:
        """Run a driver from graders.support inside the worker (for katas whose tests
        need the implementation's own process, e.g. a server on the worker's loopback)."""
        return self.call({"op": "support_call", "module": module, "name": name,
                          "args": [_encode_arg(a) for a in args],
                          "kwargs": {k: _encode_arg(v) for k, v in kwargs.items()}}, watch)

    def _exception(self, err: dict[str, Any]) -> BaseException:
        name, builtin = str(err.get("type", "")), str(err.get("builtin", ""))
        msg = str(err.get("msg", ""))
        where = str(err.get("where", ""))
        if name == "SubmissionError":
            return SubmissionError(msg)
        if name in BUILTIN_EXCEPTIONS and name not in ("SystemExit", "KeyboardInterrupt",
                                                       "GeneratorExit"):
            return BUILTIN_EXCEPTIONS[name](msg)
        return self._exc_class(name, builtin)(msg + (f" (at {where})" if where else ""))

    def _exc_class(self, name: str, builtin: str) -> type[BaseException]:
        """The local stand-in of an exception class the submission defines (one per name,
        so ``pytest.raises(m.OutOfSlots)`` matches what the worker raised)."""
        if name not in self.exc_classes:
            base = BUILTIN_EXCEPTIONS.get(builtin, Exception)
            if not issubclass(base, Exception):
                base = Exception
            self.exc_classes[name] = type(name, (base,), {"__module__": "submission"})
        return self.exc_classes[name]

    def _proxy(self, data: dict[str, Any], generation: int) -> Any:
        if data.get("$") == "fn":
            raise wire.WireError("the worker may not send function references")
        handle = int(data["id"])
        kind = str(data.get("kind", "object"))
        name = str(data.get("name", "object"))
        if kind == "exc_class":
            return self._exc_class(name, str(data.get("base")))
        return RemoteObject(self, handle, generation, kind, name)


def _encode_arg(value: Any) -> Any:
    def handle_of(obj: Any) -> dict[str, Any]:
        if isinstance(obj, RemoteObject):
            return {"$": "h", "id": object.__getattribute__(obj, "_id")}
        module = getattr(obj, "__module__", "") or ""
        if callable(obj) and module.startswith("graders.support.") and \
                getattr(obj, "__qualname__", "") == getattr(obj, "__name__", None):
            return {"$": "fn", "module": module, "name": obj.__name__}
        raise TypeError(f"cannot send {type(obj).__name__} to the submission: only plain "
                        "data, objects it returned, and graders.support functions cross")
    return wire.encode(value, handle_of)


class RemoteObject:
    """An object, class or function living in the worker."""

    __slots__ = ("_session", "_id", "_generation", "_kind", "_name", "_methods")

    def __init__(self, session: Session, handle: int, generation: int, kind: str,
                 name: str) -> None:
        for key, value in (("_session", session), ("_id", handle), ("_generation", generation),
                           ("_kind", kind), ("_name", name), ("_methods", set())):
            object.__setattr__(self, key, value)

    def _send(self, message: dict[str, Any]) -> Any:
        session: Session = object.__getattribute__(self, "_session")
        if session.generation != object.__getattribute__(self, "_generation") or \
                session.worker is None:
            raise SubmissionError("this object belonged to a worker that has ended")
        message["target"] = object.__getattribute__(self, "_id")
        return session.call(message)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._send({"op": "call", "args": [_encode_arg(a) for a in args],
                           "kwargs": {k: _encode_arg(v) for k, v in kwargs.items()}})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        methods: set[str] = object.__getattribute__(self, "_methods")
        if name in methods:
            return _BoundMethod(self, name)
        value = self._send({"op": "getattr", "name": name})
        if isinstance(value, RemoteObject) and object.__getattribute__(value, "_kind") == "callable":
            methods.add(name)
            return _BoundMethod(self, name)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        self._send({"op": "setattr", "name": name, "args": [_encode_arg(value)]})

    def __len__(self) -> int:
        return int(self._send({"op": "special", "name": "len"}))

    def __getitem__(self, key: Any) -> Any:
        return self._send({"op": "special", "name": "getitem", "args": [_encode_arg(key)]})

    def __contains__(self, key: Any) -> bool:
        return bool(self._send({"op": "special", "name": "contains", "args": [_encode_arg(key)]}))

    def __iter__(self) -> Any:
        return iter(self._send({"op": "special", "name": "iter"}))

    def __bool__(self) -> bool:
        return bool(self._send({"op": "special", "name": "bool"}))

    def __repr__(self) -> str:
        return f"<{object.__getattribute__(self, '_kind')} {object.__getattribute__(self, '_name')} in the submission's worker>"


class _BoundMethod:
    __slots__ = ("obj", "name")

    def __init__(self, obj: RemoteObject, name: str) -> None:
        self.obj, self.name = obj, name

    @property
    def __name__(self) -> str:  # as a bound method has, for tests that log the call
        return self.name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.obj._send({"op": "callattr", "name": self.name,
                               "args": [_encode_arg(a) for a in args],
                               "kwargs": {k: _encode_arg(v) for k, v in kwargs.items()}})


class RemoteModule:
    """The submission's module, as seen from the trusted process."""

    def __init__(self, session: Session) -> None:
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_cache", {})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        session: Session = object.__getattribute__(self, "_session")
        cache: dict[tuple[int, str], Any] = object.__getattribute__(self, "_cache")
        key = (session.generation, name)
        if session.worker is not None and not session.worker.dead and key in cache:
            return cache[key]
        try:
            value = session.call({"op": "module_attr", "name": name})
        except AttributeError:
            raise SubmissionError(
                f"the implementation of {session.kata!r} defines no {name!r}, which the stub "
                f"katas/{session.kata}/__init__.py declares") from None
        cache[(session.generation, name)] = value
        return value
