"""Process isolation for grading: the submission runs in a worker process, never here.

The trusted test process (hidden tests, references, expected values) talks to the worker
through ``RemoteModule``, a stand-in for the submission's module: attribute access, calls,
method calls and a few operators are sent as plain data (graders/wire.py) and the answers
come back as plain data or handles. Exceptions come back by type and message: built-in
types are raised as themselves, exception classes the kata defines as local classes of the
same name and built-in base.

The worker starts in a fresh scratch folder holding only a copy of the submission, the
worker's own two files and graders/support, with:
- a minimal environment and an import path without the repository;
- resource limits: CPU time, address space, open files, file size, processes;
- where this process is root and the kernel allows it: a private network namespace (its
  own loopback, nothing of the host's), a private root (a chroot showing only the system's
  libraries, the interpreter and its packages, the scratch folder and a private /tmp), and
  an unprivileged uid of its own (so it can write nothing but its scratch folder, and every
  process it leaves behind can be found and killed);
- a wall-clock limit per call; its output goes to a file, truncated.

One worker serves the tests of one test file; a crashed or killed worker fails the test it
was serving and a fresh one serves the next test.
"""

from __future__ import annotations

import builtins
import ctypes
import ctypes.util
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable

from graders import catalog, wire

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


class SubmissionError(Exception):
    """The submission's worker failed: it died, hung, or sent something invalid."""


@dataclass
class Limits:
    call_seconds: float = 60.0
    cpu_seconds: int = 300
    memory_bytes: int = 4 << 30
    file_bytes: int = 16 << 20
    processes: int = 64
    open_files: int = 256
    output_bytes: int = 64 << 10


@dataclass
class Capabilities:
    """What the platform allowed; reported with every grade."""
    separate_uid: bool = False
    network_namespace: bool = False
    mount_namespace: bool = False
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"process": True, "separate_uid": self.separate_uid,
                "no_network": self.network_namespace,
                "hidden_repository": self.mount_namespace, "notes": self.notes}


def _libc() -> Any:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _visible_paths() -> list[tuple[str, bool]]:
    """(path, writable) for what the worker's private root shows: the system's programs
    and libraries, the interpreter and its packages; nothing else of the host."""
    import site

    paths: list[tuple[str, bool]] = []
    for p in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.lexists(p):
            paths.append((p, False))
    extra = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
             *[os.path.realpath(x) for x in site.getsitepackages()]}
    for p in sorted(extra):
        if os.path.isdir(p) and not any(p == q or p.startswith(q + "/") for q, _ in paths):
            paths.append((p, False))
    return paths


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


def _preexec(uid: int | None, namespaces: bool, new_root: str | None, scratch: str | None,
             limits: Limits) -> Any:
    def run() -> None:
        os.setsid()
        if namespaces and new_root and scratch:
            libc = _libc()
            if libc.unshare(CLONE_NEWNS | CLONE_NEWNET) != 0:
                os._exit(97)
            if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
                os._exit(98)
            _loopback_up()
            _build_root(libc, new_root, scratch)
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return run


def _scratch_base() -> Path:
    base = catalog.ROOT / ".nox" / "sandbox"
    base.mkdir(parents=True, exist_ok=True)
    return base


_capabilities: Capabilities | None = None


def capabilities() -> Capabilities:
    """Probe once what this platform allows (root, namespaces)."""
    global _capabilities
    if _capabilities is not None:
        return _capabilities
    caps = Capabilities()
    if sys.platform != "linux":
        caps.notes.append(f"{sys.platform}: no namespaces, no uid switch")
        _capabilities = caps
        return caps
    uid = _sandbox_uid() if os.geteuid() == 0 else None
    probe = [sys.executable, "-I", "-c", "import numpy, json, os; print('ok', os.getcwd())"]
    for namespaces in (True, False):
        if namespaces and os.geteuid() != 0:
            continue
        scratch = Path(tempfile.mkdtemp(prefix="probe-", dir=_scratch_base()))
        new_root = Path(tempfile.mkdtemp(prefix="root-", dir=_scratch_base()))
        if uid is not None:
            os.chown(scratch, uid, uid)
        try:
            out = subprocess.run(probe, preexec_fn=_preexec(
                uid, namespaces, str(new_root), str(scratch), Limits()),
                capture_output=True, text=True, timeout=60, cwd=str(scratch))
        except (OSError, subprocess.SubprocessError) as exc:
            caps.notes.append(f"probe failed: {exc}")
            continue
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.rmtree(new_root, ignore_errors=True)
        if out.returncode == 0 and out.stdout.startswith("ok"):
            caps.network_namespace = caps.mount_namespace = namespaces
            caps.separate_uid = uid is not None
            break
        caps.notes.append(f"sandbox probe with namespaces={namespaces} failed "
                          f"(exit {out.returncode}): {out.stderr.strip()[-300:]}")
    else:
        caps.separate_uid = False
    if os.geteuid() != 0:
        caps.notes.append("not root: no private network namespace, no separate uid; "
                          "the worker runs as this user with resource limits only")
    _capabilities = caps
    return caps


def _sandbox_uid(base: int = 200000) -> int:
    # one uid per trusted process, so parallel graders never sweep each other's workers;
    # the reference's workers (graders.impl.measured_call) use base 300000, so sweeping
    # the submission's never ends theirs, and the other way round
    return base + os.getpid() % 100000


def _sweep(uid: int) -> None:
    """Kill every process left running under the sandbox uid."""
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


class Worker:
    """One worker process and its pipes."""

    def __init__(self, submission: Path, module_name: str, limits: Limits,
                 read_only: bool = False, uid_base: int = 200000) -> None:
        caps = capabilities()
        self.limits = limits
        self.uid = _sandbox_uid(uid_base) if caps.separate_uid else None
        self.scratch = Path(tempfile.mkdtemp(prefix="kata-worker-", dir=_scratch_base()))
        self.new_root = Path(tempfile.mkdtemp(prefix="root-", dir=_scratch_base()))
        here = Path(__file__).parent
        shutil.copy(here / "worker.py", self.scratch / "_kata_worker.py")
        shutil.copy(here / "wire.py", self.scratch / "_kata_wire.py")
        support = here / "support"
        if support.is_dir():
            dest = self.scratch / "_support" / "graders"
            shutil.copytree(support, dest / "support",
                            ignore=shutil.ignore_patterns("__pycache__"))
            (dest / "__init__.py").write_text("")
        if submission.name == "__init__.py":
            shutil.copytree(submission.parent, self.scratch / "submission",
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            target = self.scratch / "submission" / "__init__.py"
        else:
            target = self.scratch / "submission.py"
            shutil.copy(submission, target)
        if self.uid is not None:
            for dirpath, _, files in os.walk(self.scratch):
                os.chown(dirpath, self.uid, self.uid)
                for f in files:
                    os.chown(os.path.join(dirpath, f), self.uid, self.uid)
        self.output_path = Path(tempfile.mkstemp(prefix="kata-worker-out-")[1])
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.scratch), "LANG": "C.UTF-8",
               "PYTHONHASHSEED": "0",
               "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
        for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
            if key in os.environ:
                env[key] = os.environ[key]
        with open(self.output_path, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-B", "-E", "-s", str(self.scratch / "_kata_worker.py"),
                 str(req_r), str(rep_w), str(target), module_name]
                + (["read-only"] if read_only else []),
                cwd=self.scratch, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                pass_fds=(req_r, rep_w),
                preexec_fn=_preexec(self.uid, caps.mount_namespace, str(self.new_root),
                                    str(self.scratch), limits))
        os.close(req_r)
        os.close(rep_w)
        self.requests: BinaryIO = os.fdopen(req_w, "wb")
        self.replies: BinaryIO = os.fdopen(rep_r, "rb")
        self.dead: str | None = None

    def request(self, message: dict[str, Any],
                watch: Callable[[], str | None] | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply. ``watch`` (graders/measure.py) is called
        every few tens of milliseconds while waiting; a reason it returns ends the worker."""
        if self.dead:
            raise SubmissionError(self.dead)
        try:
            wire.send(self.requests, message)
        except (BrokenPipeError, OSError):
            self._died()
        deadline = time.monotonic() + self.limits.call_seconds
        ready: list[Any] = []
        while not ready:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([self.replies], [], [],
                                        left if watch is None else min(left, 0.02))
            if not ready and watch is not None:
                reason = watch()
                if reason:
                    self.kill()
                    self.dead = reason
                    raise SubmissionError(reason)
        if not ready:
            self.kill()
            self.dead = (f"the call did not return within {self.limits.call_seconds:.0f} s "
                         "(an infinite loop, or sleeping past the limit): the worker was killed")
            raise SubmissionError(self.dead)
        try:
            reply = wire.recv(self.replies)
        except (wire.WireError, ValueError, UnicodeDecodeError) as exc:
            self.kill()
            self.dead = f"the worker sent an invalid reply: {exc}"
            raise SubmissionError(self.dead) from None
        if reply is None:
            self._died()
        assert reply is not None
        return reply

    def _died(self) -> None:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
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
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            self.proc.wait()
        else:
            try:  # children it left in its process group
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.uid is not None:
            _sweep(self.uid)
        for stream in (self.requests, self.replies):
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.scratch, ignore_errors=True)
        shutil.rmtree(self.new_root, ignore_errors=True)
        try:
            self.output_path.unlink()
        except OSError:
            pass


class Session:
    """The worker that serves one kata's submission, replaced after each test."""

    def __init__(self, kata: str, submission: Path, limits: Limits | None = None,
                 uid_base: int = 200000) -> None:
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

    def current(self) -> Worker:
        if self.worker is None or self.worker.dead:
            if self.worker is not None:
                self.worker.kill()
            self.worker = Worker(self.submission, f"_submission_{self.kata}", self.limits,
                                 self.read_only, self.uid_base)
            self.generation += 1
        return self.worker

    def reset(self) -> None:
        """End the current worker and start the next one at once, so that it boots while
        the next test sets up."""
        if self.worker is not None:
            self.worker.kill()
            self.worker = None
            self.worker = Worker(self.submission, f"_submission_{self.kata}", self.limits,
                                 self.read_only, self.uid_base)
            self.generation += 1

    def close(self) -> None:
        if self.worker is not None:
            self.worker.kill()
            self.worker = None

    def call(self, message: dict[str, Any],
             watch: Callable[[], str | None] | None = None) -> Any:
        worker = self.current()
        generation = self.generation
        reply = worker.request(message, watch)
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
