"""The trusted side's view of a submission: Session (its workers, one call at a time) and the
proxy (RemoteModule, RemoteObject) that sends attribute access, calls and operators as
plain data and raises the worker's exceptions as the kata's own types."""

from __future__ import annotations

import builtins
import contextlib
from pathlib import Path
from typing import Any, Callable, Iterator

from graders import catalog, wire
from graders.sandbox.backends import capabilities
from graders.sandbox.errors import WorkerError
from graders.sandbox.jail import Limits
from graders.sandbox.workers import Worker, Zygote, ZygoteFailed


BUILTIN_EXCEPTIONS = {name: obj for name, obj in vars(builtins).items()
                      if isinstance(obj, type) and issubclass(obj, BaseException)}


class Session:
    """The worker that serves one kata's submission, replaced after each test."""

    def __init__(self, kata: str, submission: Path, limits: Limits | None = None,
                 uid_base: int = 200000, trusted_copy: bool = False,
                 bound: Path | None = None) -> None:
        """``bound``: the path the grader was given, which the copy of the submission may
        not reach out of (None for the repository's own katas/ and solutions/)."""
        self.trusted_copy = trusted_copy
        self.bound = bound
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
                                         self.uid_base, self.trusted_copy, self.bound)
                try:
                    return self.zygote.fork()
                except (ZygoteFailed, OSError):
                    self.zygote.kill()
                    self.zygote = None
        return Worker(self.submission, name, self.limits, self.read_only, self.uid_base,
                      self.trusted_copy, self.bound)

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
            raise WorkerError("the worker sent an invalid reply")
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
        if name == "SubmissionError":   # the worker could not load the submission
            return WorkerError(msg)
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
            raise WorkerError("this object belonged to a worker that has ended")
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
            raise WorkerError(
                f"the implementation of {session.kata!r} defines no {name!r}, which the stub "
                f"katas/{session.kata}/__init__.py declares") from None
        cache[(session.generation, name)] = value
        return value
