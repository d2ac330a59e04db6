"""How tests reach the implementation under test.

Tests never import ``katas.*`` or ``solutions.*``. They write, at module level::

    from graders.impl import kata_impl
    rc = kata_impl("radix_cache")

and use ``rc.RadixCache(...)`` inside test functions. ``kata_impl`` returns a lazy proxy:
nothing is imported until a test touches an attribute, so a submission that does not
import (syntax error, import error, an exit at import time) fails each test that uses it,
with a clear message, instead of breaking collection.

Which implementation is loaded is chosen once per run by ``--impl``:
``katas`` (the candidate's stub folder, the default), ``solutions`` (the reference),
``mutant:NAME`` (a known-wrong solution from graders/mutants/<kata>/, built on the fly), or a
path to a submission: a ``.py`` file, or a folder holding ``__init__.py`` (a copy of the
kata folder) or ``<name>.py`` / ``<name>/__init__.py``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import math
import os
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from graders import catalog

_impl_spec = "katas"
_isolate = False
_call_seconds = 60.0
_cache: dict[str, ModuleType | BaseException] = {}
_sessions: dict[str, Any] = {}
_reference_sessions: dict[str, Any] = {}


class SubmissionError(Exception):
    """The submission could not be loaded or lacks part of the stub's API."""


def configure(spec: str, isolate: bool = False, call_seconds: float = 60.0) -> None:
    """Choose the implementation for this process (called by the pytest plugin).

    With ``isolate`` the implementation runs in a sandboxed worker process
    (graders/sandbox/) and tests reach it through a proxy; this process never imports it.
    """
    global _impl_spec, _isolate, _call_seconds
    reset_workers(final=True)
    _sessions.clear()
    _impl_spec = spec
    _isolate = isolate
    _call_seconds = call_seconds
    _cache.clear()


def isolated() -> bool:
    return _isolate


def reset_workers(final: bool = False) -> None:
    """End every worker (after each test, so the next test gets a fresh one)."""
    for session in _sessions.values():
        if final:
            session.close()
        else:
            session.reset()
    if final:   # the reference's workers serve every test of a run: they hold nothing of it
        for session in _reference_sessions.values():
            session.close()
        _reference_sessions.clear()


def submission_file(name: str, spec: str) -> Path:
    """The file that holds the implementation of kata ``name`` under ``spec``."""
    if spec == "katas":
        return catalog.KATAS_DIR / name / "__init__.py"
    if spec == "solutions":
        single = catalog.SOLUTIONS_DIR / f"{name}.py"
        return single if single.exists() else catalog.SOLUTIONS_DIR / name / "__init__.py"
    return resolve_submission(name, spec)


def require_reference(kata: str) -> None:
    """For checks measured against the reference solution (its CPU time, its answers).

    A candidate bundle holds neither the reference nor the hidden tests: there such a
    check is skipped, with the reason, and the grader runs it. Anywhere the hidden tests
    are present the reference must be too: its absence is an error, never a skip (a skip
    would drop the item from the maximum)."""
    if submission_file(kata, "solutions").is_file():
        return
    if not (catalog.HIDDEN_TESTS_DIR / kata).is_dir():
        import pytest

        pytest.skip("this check compares your code with the reference solution, which is "
                    "not in the candidate bundle; the grader runs it")
    raise FileNotFoundError(f"the reference solution of {kata!r} is missing "
                            f"({submission_file(kata, 'solutions')}): this check needs it")


def _remote(name: str) -> Any:
    from graders import sandbox

    if name not in _sessions:
        from graders import wire

        limits = sandbox.Limits(call_seconds=_call_seconds,
                                reply_bytes=wire.reply_cap(catalog.load(name).raw))
        bound = None if _impl_spec in ("katas", "solutions") else Path(_impl_spec)
        _sessions[name] = sandbox.Session(name, submission_file(name, _impl_spec), limits,
                                          bound=bound)
    return sandbox.RemoteModule(_sessions[name])


def current_spec() -> str:
    return _impl_spec


def resolve_submission(name: str, spec: str) -> Path:
    """The file to load for kata ``name`` from a path ``spec`` (or ``mutant:NAME``, a mutant
    of that kata built into a scratch folder); a clear error otherwise."""
    if spec.startswith("mutant:"):   # graders.authoring.mutant.SPEC_PREFIX (not in candidate bundles)
        from graders.authoring import mutant

        try:
            return mutant.scratch_file(name, spec[len(mutant.SPEC_PREFIX):])
        except mutant.MutantError as exc:
            raise SubmissionError(str(exc)) from None
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = (Path.cwd() / path)
    if path.is_file():
        if path.suffix != ".py":
            raise SubmissionError(f"submission {path} is not a .py file")
        return path
    if path.is_dir():
        for candidate in (path / "__init__.py", path / f"{name}.py", path / name / "__init__.py"):
            if candidate.is_file():
                return candidate
        files = sorted(p for p in path.iterdir() if not p.name.startswith("."))
        py = [p for p in files if p.suffix == ".py" and p.is_file()]
        if len(py) == 1 and single_module(name):
            return py[0]    # one .py file under another name: the kata is one module
        found = ", ".join(p.name + ("/" if p.is_dir() else "") for p in files[:8]) or "nothing"
        raise SubmissionError(
            f"the submission holds no {name}.py: upload your solution as {name}.py (or the "
            f"kata's folder, with its __init__.py); the upload holds {found}")
    raise SubmissionError(f"submission path {path} does not exist")


def single_module(name: str) -> bool:
    """Whether kata ``name``'s stub is one module (its folder holds no other .py file), so
    that a single uploaded .py file is its whole implementation, whatever its name."""
    folder = catalog.KATAS_DIR / name
    return not [p for p in folder.glob("*.py") if p.name != "__init__.py"] and \
        not [p for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()]


def _located(exc: BaseException, path: Path | str) -> str:
    """Where in the submission an import failed: ``File "...", line N`` of the last frame
    in its files (empty for a SyntaxError, whose own text says where)."""
    if isinstance(exc, SyntaxError):
        return ""
    path = str(path)
    top = os.path.dirname(path) + os.sep
    package = os.path.basename(path) == "__init__.py"
    at = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path or (package and frame.filename.startswith(top)):
            at = f'File "{frame.filename}", line {frame.lineno}\n'
    return at


def _import(name: str, spec: str) -> ModuleType:
    if spec == "katas":
        return importlib.import_module(f"katas.{name}")
    if spec == "solutions":
        return importlib.import_module(f"solutions.{name}")
    path = resolve_submission(name, spec)
    mod_name = f"_submission_{name}"
    search = [str(path.parent)] if path.name == "__init__.py" else None
    loader_spec = importlib.util.spec_from_file_location(
        mod_name, path, submodule_search_locations=search)
    if loader_spec is None or loader_spec.loader is None:
        raise SubmissionError(f"cannot load {path}")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[mod_name] = module
    try:
        loader_spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(mod_name, None)
        raise
    return module


def load(name: str) -> ModuleType:
    """Import (once per process) the implementation of kata ``name``.

    Any failure is remembered and re-raised as a ``SubmissionError`` for every test that
    touches the implementation.
    """
    cached = _cache.get(name)
    if isinstance(cached, ModuleType):
        return cached
    if cached is None:
        try:
            cached = _import(name, _impl_spec)
        except SubmissionError as exc:
            cached = exc
        except SystemExit as exc:
            where = _located(exc, submission_file(name, _impl_spec))
            cached = SubmissionError(
                f"the submission for {name!r} called exit({exc.code!r}) while being imported"
                + (f": {where.strip()}" if where else ""))
        except BaseException as exc:  # noqa: BLE001 - any import failure is the submission's
            if isinstance(exc, KeyboardInterrupt):
                raise
            tb = traceback.format_exception_only(type(exc), exc)
            cached = SubmissionError(
                f"the submission for {name!r} ({_impl_spec}) failed to import: "
                + _located(exc, submission_file(name, _impl_spec)) + "".join(tb).strip())
        _cache[name] = cached
    if isinstance(cached, ModuleType):
        return cached
    raise SubmissionError(str(cached))


class KataImpl:
    """A lazy stand-in for the implementation module of one kata."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str) -> Any:
        name = object.__getattribute__(self, "_name")
        if _isolate:
            return getattr(_remote(name), attr)
        module = load(name)
        try:
            value = getattr(module, attr)
        except AttributeError:
            raise SubmissionError(
                f"the implementation of {name!r} ({_impl_spec}) defines no {attr!r}, "
                f"which the stub katas/{name}/__init__.py declares") from None
        return _read_only_args(name, value)

    def __repr__(self) -> str:
        return f"<implementation of kata {object.__getattribute__(self, '_name')!r} ({_impl_spec})>"


def run_support(kata: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` (a module-level function of graders.support) in the implementation's
    process: here when testing in-process, inside the sandboxed worker when isolated.

    Use it for drivers that must live next to the implementation (a server and its
    clients on one loopback, a leak check on the real object). The driver returns plain
    data; the test keeps every expectation and assertion on its own side. Arguments are
    plain data, objects the implementation returned, or the implementation's own classes
    and functions (``m.StreamServer``).
    """
    module = getattr(fn, "__module__", "") or ""
    if not module.startswith("graders.support."):
        raise ValueError(f"run_support takes a graders.support function, not {fn!r}")
    if not _isolate:
        return fn(*args, **kwargs)
    remote = _remote(kata)
    session = object.__getattribute__(remote, "_session")
    return session.support_call(module, fn.__name__, args, kwargs)


def worker_process(kata: str) -> tuple[int, int | None]:
    """``(pid, uid)`` of the running worker of ``kata`` (started if need be): the root of
    its process tree, and the uid of its own when the sandbox gave it one (else None).
    For measurements of the worker taken from outside it (graders/outside.py); only
    meaningful when isolated."""
    if not _isolate:
        raise RuntimeError("worker_process: the implementation runs in this process")
    session = object.__getattribute__(_remote(kata), "_session")
    session.call({"op": "ping"})      # the whole tree is up (bwrap's child made its namespaces)
    worker = session.current()
    return int(worker.pid), worker.uid


def worker_cpu_seconds(kata: str) -> float:
    """The CPU seconds the worker's whole sandbox has used so far (its cgroup, where the
    machine allows one; else the worker's processes found from outside): a snapshot, for
    checks that difference two of them around checked calls (backpressure)."""
    from graders import measure

    if not _isolate:
        raise RuntimeError("worker_cpu_seconds: the implementation runs in this process")
    session = object.__getattribute__(_remote(kata), "_session")
    session.call({"op": "ping"})
    worker = session.current()
    if worker.cgroup is not None:
        return measure.cgroup_usage(worker.cgroup)
    return measure.cpu_seconds(worker.pid, worker.uid)


def kata_impl(name: str) -> Any:
    """The implementation under test for kata ``name`` (see the module docstring)."""
    if not (catalog.KATAS_DIR / name).is_dir():
        raise SubmissionError(f"no kata named {name!r}")
    return KataImpl(name)


@functools.cache
def _read_only_kata(kata: str) -> bool:
    try:
        return catalog.load(kata).read_only_inputs
    except catalog.CatalogError:
        return False


def _read_only_args(kata: str, value: Any) -> Any:
    """In-process, a function of a kata whose inputs must be left alone gets its arguments
    as the isolated worker would (graders/wire.py ``freeze``: read-only array views, frozen
    lists and dicts), so an in-place write raises in both modes alike."""
    if not _read_only_kata(kata) or isinstance(value, type) or not callable(value):
        return value
    from graders import wire

    @functools.wraps(value)
    def call(*args: Any, **kwargs: Any) -> Any:
        return value(*wire.freeze(args), **{k: wire.freeze(v) for k, v in kwargs.items()})
    return call


class OverBudget(Exception):
    """A measured call used more CPU than its budget and was stopped."""

    def __init__(self, seconds: float, budget: float) -> None:
        super().__init__(f"used more than {budget:.3f} CPU seconds (stopped at {seconds:.3f})")
        self.seconds = seconds
        self.budget = budget


def _reference_session(kata: str) -> Any:
    from graders import sandbox

    session = _reference_sessions.get(kata)
    if session is None:
        from graders import wire

        limits = sandbox.Limits(call_seconds=_call_seconds,      # the kata's reply cap, as the
                                reply_bytes=wire.reply_cap(catalog.load(kata).raw))  # submission's
        session = _reference_sessions[kata] = sandbox.Session(
            kata, submission_file(kata, "solutions"), limits, uid_base=300000, trusted_copy=True)
    return session


class WrongResult(AssertionError):
    """A measured call's result failed its check: the call earns nothing, however fast."""


def _checked(check: Callable[[Any], Any] | None, result: Any) -> None:
    if check is None:
        return
    wrong = check(result)
    if wrong:   # a check may raise AssertionError, or return what is wrong
        raise WrongResult(str(wrong))


def measured_call(kata: str, driver: Any, target: str, *args: Any, reference: bool = False,
                  budget: float | None = None,
                  check: Callable[[Any], Any] | None = None) -> tuple[Any, float]:
    """Run ``driver(impl.<target>, *args)`` (a graders.support function) next to the
    implementation under test, or next to the reference with ``reference=True``, and return
    (its result, the CPU seconds the call used). With ``driver=None`` the call is
    ``impl.<target>(*args)`` itself, made through the same proxy, in the same way, as every
    checked call of the tests: nothing tells the implementation that it is being timed.

    Every measured call is a checked call: ``check`` (required unless ``reference=True``)
    is given the result and raises AssertionError, or returns a message, when the result is
    not what the correctness tests would accept; ``WrongResult`` (an AssertionError) is then
    raised, so a submission that answers a timed call differently can only lose. Leaving a
    process running past the call (an orphan server, a double fork) fails it too.

    The CPU time is the evidence for work and growth checks, so it is taken from outside the
    implementation's process (graders/measure.py): isolated, the kernel's account of the
    worker's whole sandbox over the call (its cgroup, where the machine allows one; else
    every process of the worker found from outside), wire decoding included (the reference
    pays the same); in-process (trusted code only), ``time.process_time`` of this process.
    The reference runs in a worker of its own, started the same way, that serves nothing
    else, so nothing the submission does can change the baseline. With ``budget`` (CPU
    seconds) a driver may stop early (it is passed ``budget=``), and an isolated call still
    running past it is ended from outside; either way ``OverBudget`` is raised.
    """
    if check is None and not reference:
        raise TypeError("measured_call needs check=: every measured call is a checked call "
                        "(docs/AUTHORING.md)")
    module = "" if driver is None else (getattr(driver, "__module__", "") or "")
    if driver is not None and not module.startswith("graders.support."):
        raise ValueError(f"measured_call takes a graders.support function, not {driver!r}")
    extra = {} if budget is None or driver is None else {"budget": budget}
    if reference:
        require_reference(kata)
    if not _isolate:
        if reference:
            impl = importlib.import_module(f"solutions.{kata}")
            fn = _read_only_args(kata, getattr(impl, target))
        else:
            fn = getattr(KataImpl(kata), target)
        start = time.process_time()
        result = driver(fn, *args, **extra) if driver is not None else fn(*args)
        used = time.process_time() - start
        if budget is not None and used > budget:
            raise OverBudget(used, budget)
        _checked(check, result)
        return result, used
    from graders import sandbox

    session = _reference_session(kata) if reference else \
        object.__getattribute__(_remote(kata), "_session")
    remote = sandbox.RemoteModule(session)
    fn = getattr(remote, target)
    if driver is not None:
        session.call({"op": "support_import", "module": module})
    worker = session.current()
    meter = worker.meter().start()
    backstop = None if budget is None else budget * 1.25 + 0.25
    try:
        if driver is None:
            with session.watching(meter.watch(backstop)):
                result = fn(*args)
        else:
            result = session.support_call(module, driver.__name__, (fn, *args), extra,
                                          watch=meter.watch(backstop))
    except sandbox.WorkerError:
        if meter.over:
            raise OverBudget(meter.seconds(), budget if budget is not None else math.inf) \
                from None
        raise
    used = meter.seconds()
    _no_survivors(worker)
    _checked(check, result)
    return result, used


def _no_survivors(worker: Any) -> None:
    """No process the submission started may outlive a measured call: its CPU after the
    call would be work the meter never sees (an orphan server answering the next call)."""
    from graders import sandbox

    left = worker.survivors()
    if left:
        worker.kill()
        worker.dead = (f"{len(left)} process(es) the implementation started were still "
                       "running after a measured call returned (an orphan, a server, a "
                       "double fork): no process may outlive a measured call")
        raise sandbox.WorkerError(worker.dead)


class _SandboxMeter:
    """A started meter of one worker's sandbox whose reading also ends the item for any
    process left running by the implementation (see ``_no_survivors``)."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker
        self.meter = worker.meter().start()

    def seconds(self) -> float:
        used = float(self.meter.seconds())
        _no_survivors(self.worker)
        return used


def metered(kata: str, reference: bool = False) -> tuple[Any, Any]:
    """(the implementation, or the reference; a function that starts a CPU meter on it).

    For checks that drive the implementation call by call from the test's side (so that
    every call's answer crosses the wire and nothing inside the worker can batch or skip
    them): the meter's ``seconds()`` is the CPU the implementation's process has used since
    it was started, taken from outside it (graders/measure.py: the worker's whole sandbox),
    and reading it fails the item if the implementation left a process running; in-process,
    this process's. Every call made while a meter runs must be checked by the test as its
    correctness tests check it. The reference's worker serves nothing else (see
    ``measured_call``)."""
    from graders import measure, sandbox

    if reference:
        require_reference(kata)
    if not _isolate:
        impl = KataImpl(kata) if not reference else \
            importlib.import_module(f"solutions.{kata}")
        return impl, lambda: measure.ProcessMeter().start()
    session = _reference_session(kata) if reference else \
        object.__getattribute__(_remote(kata), "_session")
    module = sandbox.RemoteModule(session)
    return module, lambda: _SandboxMeter(session.current())
