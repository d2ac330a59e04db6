"""The jail around a worker: resource limits, the seccomp filter, bubblewrap's argument list,
the hand-built private root and network of the namespaces backend, and the launcher that
applies them before the worker's interpreter starts."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import resource
import signal
import socket
import struct
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from graders import measure, wire


CLONE_NEWNS = 0x00020000


CLONE_NEWNET = 0x40000000


MS_REC = 0x4000


MS_PRIVATE = 1 << 18


MS_NOSUID = 2


MS_NODEV = 4


MS_BIND = 4096


MS_REMOUNT = 32


MS_RDONLY = 1


BACKENDS = {"bwrap": "bubblewrap", "namespaces": "namespaces (root)", "limits": "limits only"}


INNER_UID = 1000                  # the worker's uid inside its own user namespace


TMP_BYTES = 64 << 20              # the private /tmp under bwrap


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
LAUNCHER = """import os,resource,sys
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


_filter_state: tuple[Any, bytes | None, str] | None = None


def seccomp_filter() -> tuple[Any, bytes | None, str]:
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


def open_seccomp_fd() -> int | None:
    """A fresh file holding the BPF program, for ``bwrap --seccomp FD`` (which reads it to
    its end: each worker needs its own)."""
    bpf = seccomp_filter()[1]
    if bpf is None:
        return None
    fd = os.memfd_create("kata-seccomp", 0)
    os.write(fd, bpf)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


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


def bwrap_argv(bwrap: str, scratch: Path, seccomp_fd: int | None) -> list[str]:
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


def preexec(backend: str, uid: int | None, new_root: str | None, scratch: str,
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
