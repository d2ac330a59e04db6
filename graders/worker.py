"""The worker: the only process that runs submission code.

Started by graders.sandbox in a scratch folder holding a copy of the submission, this
file and the wire module; it answers requests from the trusted test process over two pipes
(file descriptors given on the command line). It keeps the objects the submission creates
in a table and sends back plain data or handles (graders/wire.py). Everything it sends is
only data: the trusted side decodes it strictly.

Usage: python -I -B worker.py FD_IN FD_OUT SUBMISSION_PATH MODULE_NAME [read-only]
       python -I -B worker.py zygote CONTROL_FD SUBMISSION_PATH MODULE_NAME COMPILE_UID [read-only]
(the second: a fork server that starts one worker per test; see ``zygote``)

With ``read-only`` every argument of every request is decoded read-only (graders/wire.py:
arrays over immutable bytes, frozen lists and dicts), for katas whose inputs must be left
alone: an in-place write raises in the implementation and comes back as an error.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import os
import sys
import time
import traceback
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graders import wire
else:
    import _kata_wire as wire  # copied next to this file as _kata_wire.py

# graders.support (functions and drivers both sides may use) is copied to ./_support
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_support"))

_objects: dict[int, Any] = {}
_ids: dict[int, int] = {}
_module: ModuleType | None = None
_import_error: dict[str, str] | None = None
_read_only = False


def _kind(obj: Any) -> tuple[str, str]:
    if isinstance(obj, type):
        if issubclass(obj, BaseException):
            base = next(c for c in obj.__mro__ if c.__module__ == "builtins")
            return "exc_class", base.__name__
        return "class", ""
    if callable(obj):
        return "callable", ""
    return "object", ""


def _handle(obj: Any) -> dict[str, Any]:
    key = id(obj)
    if key not in _ids:
        _ids[key] = len(_objects) + 1
        _objects[_ids[key]] = obj
    kind, base = _kind(obj)
    return {"$": "h", "id": _ids[key], "kind": kind, "base": base,
            "name": getattr(obj, "__name__", type(obj).__name__)}


def _unhandle(data: dict[str, Any]) -> Any:
    if data["$"] == "h":
        return _objects[int(data["id"])]
    module, name = str(data["module"]), str(data["name"])
    if not module.startswith("graders.support."):
        raise ValueError(f"functions may only come from graders.support, not {module}")
    return getattr(importlib.import_module(module), name)


def _load(path: str, name: str) -> ModuleType:
    global _module, _import_error
    if _module is not None:
        return _module
    if _import_error is None:
        try:
            search = [os.path.dirname(path)] if os.path.basename(path) == "__init__.py" else None
            spec = importlib.util.spec_from_file_location(name, path,
                                                          submodule_search_locations=search)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            _module = module
            return module
        except SystemExit as exc:
            where = _located(exc, path).strip()
            _import_error = {"type": "SubmissionError", "builtin": "Exception",
                             "msg": f"the submission called exit({exc.code!r}) while being "
                                    f"imported{': ' + where if where else ''}"}
        except BaseException as exc:  # noqa: BLE001
            text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            _import_error = {"type": "SubmissionError", "builtin": "Exception",
                             "msg": f"the submission failed to import: {_located(exc, path)}"
                                    f"{text}"}
    raise _ImportFailed()


def _located(exc: BaseException, path: str) -> str:
    """``File "...", line N`` of the last frame of the submission's own files in the
    traceback of an import failure (empty for a SyntaxError: its text says where)."""
    if isinstance(exc, SyntaxError):
        return ""
    top = os.path.dirname(path) + os.sep
    package = os.path.basename(path) == "__init__.py"
    at = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path or (package and frame.filename.startswith(top)):
            at = f'File "{frame.filename}", line {frame.lineno}\n'
    return at


class _ImportFailed(Exception):
    pass


# The submission's files are compiled once per sandbox, by a child of the fork server that
# has dropped to a uid of its own; each worker then takes the code instead of compiling the
# same text again (about 4 ms of a worker's 7 ms of CPU). The fork server holds only the
# child's bytes, never parsed there: only workers, which run submission code anyway, load
# them (``_use_compiled``).
_compiled: dict[str, tuple[int, int, Any]] = {}   # path -> (mtime_ns, size, code object)
PRECOMPILE_FILES = 200
PRECOMPILE_BYTES = 2 << 20          # of source
PRECOMPILED_BYTES = 8 << 20         # of marshalled code the fork server takes
PRECOMPILE_SECONDS = 10.0


def _precompile(path: str) -> dict[str, tuple[int, int, Any]]:
    """Compile, never run, the submission's Python files (the module, or every ``.py`` under
    the package that ``path`` opens), as importlib would: ``compile`` of the bytes with the
    file's path as its name, nothing inherited. A file that does not compile is left to
    each worker, which compiles it itself and reports the error as before."""
    if os.path.basename(path) == "__init__.py":
        top = os.path.dirname(path)
        files = sorted(os.path.join(root, f) for root, _, names in os.walk(top)
                       for f in names if f.endswith(".py"))[:PRECOMPILE_FILES]
    else:
        files = [path]
    budget = PRECOMPILE_BYTES
    out: dict[str, tuple[int, int, Any]] = {}
    for file in files:
        try:
            st = os.stat(file, follow_symlinks=False)
            if st.st_size > budget or not os.path.isfile(file):
                continue
            with open(file, "rb") as fh:
                data = fh.read(st.st_size + 1)
            if len(data) != st.st_size:
                continue
            budget -= len(data)
            out[file] = (st.st_mtime_ns, st.st_size,
                         compile(data, file, "exec", dont_inherit=True))
        except (Exception, RecursionError):   # noqa: BLE001 - the worker reports it
            continue
    return out


def _become(uid: int, nproc: int) -> None:
    """In a child of the fork server: take ``uid`` (every capability goes with root's uid),
    at most ``nproc`` processes under it, the default SIGCHLD; exit 71 if the uid did not
    take."""
    import resource
    import signal

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        os._exit(71)
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def _compile_in_child(path: str, uid: int) -> bytes:
    """The marshalled result of ``_precompile``, made by a forked child that first drops to
    ``uid`` (no capability left), may not fork, and has a few CPU seconds; b"" when it
    fails or is late. The caller (the fork server) keeps the bytes as they are."""
    import marshal
    import resource
    import select

    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.close(read_fd)
            _become(uid, 1)
            resource.setrlimit(resource.RLIMIT_CPU, (5, 5))
            data = marshal.dumps(_precompile(path))
            with os.fdopen(write_fd, "wb") as pipe:
                pipe.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + PRECOMPILE_SECONDS
    try:
        while size <= PRECOMPILED_BYTES:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_fd], [], [], left)[0]:
                return b""   # late: the child ends by its CPU limit; the reaper reports it
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if size > PRECOMPILED_BYTES or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return b""
    return b"".join(chunks)


def _use_compiled(blob: bytes) -> None:
    """In a worker: load the compile child's code objects, and make importlib take the one
    for a file that is unchanged since (anything else is compiled as usual)."""
    import marshal
    from importlib.machinery import SourceFileLoader

    try:
        loaded = marshal.loads(blob) if blob else {}
    except (ValueError, EOFError, TypeError):
        return
    if not isinstance(loaded, dict):
        return
    _compiled.update(loaded)
    original = SourceFileLoader.get_code

    def get_code(self: Any, fullname: str) -> Any:
        entry = _compiled.get(self.path)
        if entry is not None:
            try:
                st = os.stat(self.path, follow_symlinks=False)
            except OSError:
                st = None
            if st is not None and (st.st_mtime_ns, st.st_size) == tuple(entry[:2]):
                return entry[2]
        return original(self, fullname)

    SourceFileLoader.get_code = get_code  # type: ignore[method-assign]


def _special(obj: Any, op: str, args: list[Any]) -> Any:
    if op == "len":
        return len(obj)
    if op == "getitem":
        return obj[args[0]]
    if op == "contains":
        return args[0] in obj
    if op == "iter":
        return list(obj)
    if op == "bool":
        return bool(obj)
    if op == "repr":
        return repr(obj)
    raise ValueError(f"unknown special operation {op!r}")


def _serve(request: dict[str, Any], path: str, name: str) -> Any:
    op = request.get("op")
    args = [wire.decode(a, _unhandle, read_only=_read_only) for a in request.get("args", [])]
    kwargs = {str(k): wire.decode(v, _unhandle, read_only=_read_only)
              for k, v in request.get("kwargs", {}).items()}
    if op == "module_attr":
        module = _load(path, name)
        return getattr(module, str(request["name"]))
    target: Any = _objects[int(request["target"])] if "target" in request else None
    if op == "call":
        return target(*args, **kwargs)
    if op == "callattr":
        return getattr(target, str(request["name"]))(*args, **kwargs)
    if op == "getattr":
        return getattr(target, str(request["name"]))
    if op == "setattr":
        setattr(target, str(request["name"]), args[0])
        return None
    if op == "special":
        return _special(target, str(request["name"]), args)
    if op == "support_call":
        support = str(request["module"])
        if not support.startswith("graders.support."):
            raise ValueError(f"support calls may only name graders.support, not {support}")
        _load(path, name)
        return getattr(importlib.import_module(support), str(request["name"]))(*args, **kwargs)
    if op == "support_import":   # load a driver before a measured call, not during it
        driver = str(request["module"])
        if not driver.startswith("graders.support."):
            raise ValueError(f"support calls may only name graders.support, not {driver}")
        _load(path, name)
        importlib.import_module(driver)
        return None
    if op == "ping":
        return "pong"
    raise ValueError(f"unknown operation {op!r}")


def _error(exc: BaseException) -> dict[str, str]:
    base = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
    msg = str(exc) if not isinstance(exc, KeyError) else (repr(exc.args[0]) if exc.args else "")
    tb = traceback.extract_tb(exc.__traceback__)
    where = [f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}" for f in tb[-3:]
             if not f.filename.endswith(("worker.py", "_kata_wire.py"))]
    return {"type": type(exc).__name__, "builtin": base.__name__, "msg": msg[:4000],
            "where": "; ".join(where)}


def serve(fd_in: int, fd_out: int, path: str, name: str) -> None:
    """Answer requests until the trusted side closes the request pipe."""
    inp = os.fdopen(fd_in, "rb")
    out = os.fdopen(fd_out, "wb")
    sys.argv = [path]
    while True:
        request = wire.recv(inp)
        if request is None:
            return
        try:
            value = _serve(request, path, name)
            reply = {"ok": wire.encode(value, _handle)}
        except _ImportFailed:
            reply = {"error": dict(_import_error or {})}
        except SystemExit as exc:
            reply = {"error": {"type": "SubmissionError", "builtin": "Exception",
                               "msg": f"the implementation called exit({exc.code!r})"}}
        except BaseException as exc:  # noqa: BLE001 - everything goes back as data
            reply = {"error": _error(exc)}
        try:
            wire.send(out, reply)
        except BaseException as exc:  # noqa: BLE001 - e.g. an unencodable value
            wire.send(out, {"error": _error(exc)})


def zygote(ctrl_fd: int, path: str, name: str, compile_uid: int) -> None:
    """The fork server (graders/sandbox/workers.py ``Zygote``): it never loads the submission. It
    imports what every worker needs once, has the submission's files compiled by a child
    under ``compile_uid`` (``_compile_in_child``: it keeps the bytes, unread), then, for
    each request of the trusted side
    (a uid, a process limit, a folder, and three descriptors: requests, replies, output),
    forks a worker that takes that uid (dropping every capability) before it runs any
    submission code, and reports the worker's pid; it reports each worker's exit status
    when it reaps it. Workers run under uids of their own, so no worker can signal, trace
    or read this process."""
    import select
    import socket
    import struct

    # the project's own support code for this kata too (a driver of a growth check, the
    # inputs' helpers): trusted, and costly to import again in every worker
    kata = name.removeprefix("_submission_")
    for module in ("numpy", "json", "math", "collections", "typing", "dataclasses",
                   "functools", "heapq", "bisect", "itertools", "decimal", "fractions",
                   "graders.support.inputs", f"graders.support.{kata}"):
        try:
            importlib.import_module(module)
        except ImportError:
            pass
    compiled = _compile_in_child(path, compile_uid)
    ctrl = socket.socket(fileno=ctrl_fd)
    ctrl.send(b"R" + struct.pack("!i", os.getpid()))
    while True:
        while True:   # reap finished workers and report how they ended
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            ctrl.send(b"X" + struct.pack("!ii", pid, status))
        ready, _, _ = select.select([ctrl], [], [], 0.05)
        if not ready:
            continue
        msg, fds, _, _ = socket.recv_fds(ctrl, 4096, 3)
        if not msg or msg[:1] != b"F" or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            os._exit(0)
        uid, nproc = struct.unpack("!ii", msg[1:9])
        folder = msg[9:].decode()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                ctrl.close()
                req, rep, out = fds
                os.dup2(out, 1)
                os.dup2(out, 2)
                os.close(out)
                _become(uid, nproc)
                os.chdir(folder)
                os.environ.update(HOME=folder, TMPDIR=folder)
                _use_compiled(compiled)
                serve(req, rep, path, name)
                code = 0
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        for fd in fds:
            os.close(fd)
        ctrl.send(b"P" + struct.pack("!i", pid))


def main() -> None:
    global _read_only
    _read_only = sys.argv[5:6] == ["read-only"]
    if sys.argv[1] == "zygote":
        _read_only = sys.argv[6:7] == ["read-only"]
        zygote(int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]))
        return
    serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])


if __name__ == "__main__":
    builtins.__dict__.pop("breakpoint", None)
    main()
