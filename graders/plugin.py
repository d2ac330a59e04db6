"""The pytest plugin every kata run loads (``-p graders.plugin``, set in pyproject.toml).

It adds:
- ``--impl katas|solutions|PATH``: the implementation the tests reach (graders.impl);
- the ``rubric`` marker: every kata test carries exactly one
  ``@pytest.mark.rubric("item")`` naming an item of the kata's kata.toml;
- ``--rubric ITEM``: run only the tests of one rubric item (mutant checks);
- Hypothesis profiles ``kata`` (fast practice), ``grade`` (large, derandomized) and
  ``selftest``;
- short "not implemented yet" failures for stub bodies;
- ``--progress-fd N``: one JSON line per event (sandbox, collected, start, result) written
  to the inherited descriptor N, a pipe the grade driver made; nothing else holds its
  write end, and no process this one starts inherits it, so no other process can forge an
  event. Exactly one result per test, sent after its teardown;
- ``--progress FILE``: the same events appended to a file (practice runs only: a path on
  the command line is readable by anything the run starts, so a grade never uses it);
- a rubric summary at the end of a run.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import IO, Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from graders import catalog, impl, launch

MAX_MESSAGE_CHARS = 4000
PROFILES = launch.PROFILES   # name -> (max_examples, derandomize)

for _name, (_n, _derandomize) in PROFILES.items():
    settings.register_profile(
        _name,
        max_examples=_n,
        deadline=None,
        derandomize=_derandomize,
        database=None if _name != "kata" else DirectoryBasedExampleDatabase(
            str(catalog.ROOT / ".hypothesis" / "examples")),
        print_blob=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.filter_too_much],
        # Practice shrinks failures to a minimal example; grading does not: shrinking a
        # failing state machine can take minutes, and the failing input is reported anyway.
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
        if _name == "kata" else [Phase.explicit, Phase.generate, Phase.target],
    )
settings.load_profile(os.environ.get("KATA_HYPOTHESIS_PROFILE", "kata"))


def _parse_each_test_file_once() -> None:
    """pytest parses a test file's whole source again for every line of every failure's
    traceback it shows (to find the statement around the line). A practice run on the
    stub fails every test, and a hidden test file is a few hundred lines: that parsing was
    four fifths of such a run. Keep each file's tree, keyed by its text, so the failure
    reports stay exactly the same. (A private pytest function: where it is missing, pytest
    is left as it is.)"""
    import ast
    import warnings

    try:
        from _pytest._code import code as pytest_code
        from _pytest._code import source as pytest_source
    except ImportError:   # pragma: no cover - another pytest layout
        return
    original = getattr(pytest_source, "getstatementrange_ast", None)
    if original is None or getattr(original, "_kata_cached", False):
        return
    trees: dict[str, ast.AST] = {}

    def cached(lineno: int, source: Any, assertion: bool = False,
               astnode: ast.AST | None = None) -> Any:
        if astnode is None:
            content = str(source)
            astnode = trees.get(content)
            if astnode is None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    astnode = ast.parse(content, "source", "exec")
                if len(trees) < 512:
                    trees[content] = astnode
        return original(lineno, source, assertion, astnode)

    cached._kata_cached = True  # type: ignore[attr-defined]
    for module in (pytest_source, pytest_code):
        if hasattr(module, "getstatementrange_ast"):
            module.getstatementrange_ast = cached  # type: ignore[attr-defined]


_parse_each_test_file_once()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("katas")
    group.addoption("--impl", default="katas",
                    help="implementation under test: katas (default), solutions, or a path")
    group.addoption("--rubric", default=None, metavar="ITEM",
                    help="run only the tests of this rubric item (or of several: a,b,c)")
    group.addoption("--progress", default=None, metavar="FILE",
                    help="append one JSON line per test event to FILE (practice runs)")
    group.addoption("--progress-fd", default=None, type=int, metavar="N",
                    help="write one JSON line per test event to the inherited descriptor N")
    group.addoption("--skip-nodeids", default=None, metavar="FILE",
                    help="deselect the test node ids listed in FILE (one per line)")
    group.addoption("--isolate", action="store_true",
                    help="run the implementation in a sandboxed worker process (grading)")
    group.addoption("--no-rubric-summary", action="store_true",
                    help="do not print the rubric table at the end")


class _State:
    progress: IO[str] | None = None
    progress_fd: int | None = None
    results: dict[str, tuple[str, str]] = {}
    pending: dict[str, tuple[str, str, float]] = {}
    items: list[pytest.Item] = []


def _emit(event: dict[str, Any]) -> None:
    if _State.progress is not None:
        _State.progress.write(json.dumps(event) + "\n")
        _State.progress.flush()
        os.fsync(_State.progress.fileno())
    if _State.progress_fd is not None:
        data = (json.dumps(event) + "\n").encode("utf-8")
        while data:
            try:
                data = data[os.write(_State.progress_fd, data):]
            except InterruptedError:
                continue
            except OSError:  # the driver has gone: nothing left to report to
                _State.progress_fd = None
                return


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "rubric(item): the rubric item of the kata this test scores for")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if getattr(config.option, "timeout", None) in (None, 0):
        config.option.timeout = 60.0
        config.option.timeout_method = "signal"
    impl.configure(config.getoption("--impl"), isolate=config.getoption("--isolate"),
                   call_seconds=float(config.option.timeout))
    path = config.getoption("--progress")
    _State.progress = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115
    fd = config.getoption("--progress-fd")
    if fd is not None:
        try:
            os.set_inheritable(fd, False)  # nothing this process starts gets the channel
        except OSError as exc:
            raise pytest.UsageError(f"--progress-fd {fd}: not an open descriptor ({exc})") from None
    _State.progress_fd = fd
    if fd is not None:
        _not_dumpable()
    _State.results = {}
    _State.pending = {}
    _State.items = []


def _not_dumpable() -> None:
    """Where the worker shares this process's uid (the sandbox's fallback without root),
    it could otherwise reopen the progress pipe through /proc/<this pid>/fd. A process
    that is not dumpable has its /proc entries owned by root and closed to ptrace-style
    access from its own uid."""
    if sys.platform != "linux":
        return
    import ctypes
    import ctypes.util

    pr_set_dumpable = 4
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(pr_set_dumpable, 0, 0, 0, 0)


def pytest_unconfigure(config: pytest.Config) -> None:
    impl.reset_workers(final=True)
    if _State.progress is not None:
        _State.progress.close()
        _State.progress = None
    if _State.progress_fd is not None:
        try:
            os.close(_State.progress_fd)
        except OSError:
            pass
        _State.progress_fd = None


def rubric_of(item: pytest.Item) -> str | None:
    marks = list(item.iter_markers("rubric"))
    if not marks:
        return None
    return str(marks[0].args[0]) if marks[0].args else None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    errors: list[str] = []
    katas: dict[str, catalog.Kata] = {}
    for item in items:
        kata = catalog.kata_of_test_path(Path(str(item.path)))
        if kata is None:
            continue
        if kata not in katas:
            katas[kata] = catalog.load(kata)
        marks = list(item.iter_markers("rubric"))
        if len(marks) != 1 or len(marks[0].args) != 1:
            errors.append(f"{item.nodeid}: needs exactly one @pytest.mark.rubric('item')")
            continue
        try:
            rubric_item = katas[kata].item(str(marks[0].args[0]))
        except KeyError as exc:
            errors.append(f"{item.nodeid}: {exc.args[0]}")
            continue
        if rubric_item.graded_by != "tests":
            errors.append(f"{item.nodeid}: rubric item {rubric_item.id!r} is graded by the "
                          "interviewer, not by tests")
    if errors:
        raise pytest.UsageError("rubric markers are wrong:\n  " + "\n  ".join(errors))

    keep = items
    only = config.getoption("--rubric")
    if only:
        wanted = set(only.split(","))
        keep = [i for i in keep if rubric_of(i) in wanted]
    skip_file = config.getoption("--skip-nodeids")
    if skip_file:
        done = set(Path(skip_file).read_text(encoding="utf-8").split("\n"))
        keep = [i for i in keep if i.nodeid not in done]
    if len(keep) != len(items):
        deselected = [i for i in items if i not in keep]
        config.hook.pytest_deselected(items=deselected)
        items[:] = keep
    _State.items = list(items)
    _emit({"event": "collected", "tests": [
        {"nodeid": i.nodeid, "rubric": rubric_of(i),
         "kata": catalog.kata_of_test_path(Path(str(i.path))),
         "visibility": catalog.visibility_of_test_path(Path(str(i.path))),
         "rules": rules_of(i)}
        for i in items]})


_CITE = re.compile(r"^\s*Rules?:\s*(.+?)\s*$", re.MULTILINE)   # as graders/authoring/prompt_lint.py
_LABEL = re.compile(r"^(?:[-*]\s+|\d+\.\s+)?\*\*([^*\n]+?)\.\*\*", re.MULTILINE)
_prompt_labels: dict[str, dict[str, str]] = {}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def rules_of(item: pytest.Item) -> list[str]:
    """The prompt's rule labels a test checks (docs/AUTHORING.md): the ``Rule:``/``Rules:``
    lines of its docstring and its class's, else a label of two words or more in its name.
    Only labels the prompt holds (``**Label.**``) are named: the grader may show them to a
    candidate ("failed by hidden tests of rule ..."), never anything else of the test."""
    kata = catalog.kata_of_test_path(Path(str(item.path)))
    if kata is None:
        return []
    if kata not in _prompt_labels:
        try:
            prompt = (catalog.KATAS_DIR / kata / "README.md").read_text(encoding="utf-8")
        except OSError:
            prompt = ""
        _prompt_labels[kata] = {_slug(m.group(1)): " ".join(m.group(1).split())
                                for m in _LABEL.finditer(prompt)}
    labels = _prompt_labels[kata]
    found: list[str] = []
    for obj in (getattr(item, "function", None), getattr(item, "cls", None)):
        for match in _CITE.finditer(getattr(obj, "__doc__", None) or ""):
            for label in match.group(1).split(";"):
                known = labels.get(_slug(label.rstrip(". ")))
                if known and known not in found:
                    found.append(known)
    if not found:
        name = _slug(getattr(item, "originalname", None) or item.name.split("[")[0])
        found = [label for s, label in labels.items()
                 if "_" in s and f"_{s}_" in f"_{name.removeprefix('test_')}_"]
    return found


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    _emit({"event": "start", "nodeid": nodeid})


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    # Isolated mode: every test that used the worker gets a fresh one for the next test,
    # so nothing one test did (an exception, a stuck thread, a corrupted module global, a
    # killed worker) can change another test's outcome. The next worker starts at once and
    # boots while the next test sets up; a worker that served no call is kept.
    impl.reset_workers(final=nextitem is None)


def pytest_sessionstart(session: pytest.Session) -> None:
    if impl.isolated():
        from graders import sandbox

        _emit({"event": "sandbox", "capabilities": sandbox.capabilities().summary()})


def _not_implemented_message(excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
    exc: BaseException | None = excinfo.value
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, NotImplementedError):
            detail = str(exc) or "a stub body still raises NotImplementedError"
            return f"not implemented yet: {detail}"
        if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        else:
            exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def truncate(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    tail = limit - head
    return (text[:head] + f"\n... [{len(text) - limit} characters cut] ...\n"
            + text[-tail:])


NOTE_CHARS = 300


@pytest.hookimpl(tryfirst=True, specname="pytest_runtest_makereport")
def pytest_runtest_makereport_of_a_stub(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A stub's failure is reported by its one line ("not implemented yet: ...") without
    pytest first formatting its whole traceback (source lines, assertion introspection):
    that formatting was half the time of a practice run on a fresh stub, and was thrown
    away. Any other failure goes to pytest's own report (None: the next implementation)."""
    if call.excinfo is None or call.when == "collect":
        return None
    message = _not_implemented_message(call.excinfo)
    if message is None:
        return None
    short = copy.copy(call)
    short.excinfo = message  # type: ignore[assignment]  # pytest reports a str as it is
    return pytest.TestReport.from_item_and_call(item, short)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if call.excinfo is not None and report.failed:
        message = _not_implemented_message(call.excinfo)
        if message is not None:
            report.longrepr = message
    # Megabytes of printed output must not flood reports: keep the head and the tail.
    report.sections = [(title, truncate(body)) for title, body in report.sections]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Fold the setup, call and teardown reports of a test into one outcome, and send it
    once, after the teardown (the driver rejects a second result for a test)."""
    if report.when == "call" or (report.when == "setup" and not report.passed) or (
            report.when == "teardown" and report.failed):
        if report.skipped:
            outcome = "skipped"
        elif report.failed:
            outcome = "failed"
        else:
            outcome = "passed"
        previous = _State.pending.get(report.nodeid)
        if previous is None or previous[0] != "failed":
            if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
                message = str(report.longrepr[2]).removeprefix("Skipped: ")  # the reason
            else:
                message = truncate(report.longreprtext) if report.failed or report.skipped else ""
            took = report.duration + (previous[2] if previous else 0.0)
            _State.pending[report.nodeid] = (outcome, message, took)
    if report.when != "teardown":
        return
    outcome, message, took = _State.pending.pop(
        report.nodeid, ("failed", "the test produced no result", report.duration))
    _State.results[report.nodeid] = (outcome, message)
    event = {"event": "result", "nodeid": report.nodeid, "outcome": outcome,
             "message": message, "duration": round(took, 4)}
    # what graded a hardware test (record_property("graded_on", ...)): shown beside its item
    notes = [str(v) for k, v in report.user_properties if k == "graded_on"]
    if notes:
        event["note"] = "; ".join(notes)[:NOTE_CHARS]
    _emit(event)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    if config.getoption("--no-rubric-summary") or not _State.items:
        return
    by_kata: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for item in _State.items:
        owner = catalog.kata_of_test_path(Path(str(item.path)))
        rub = rubric_of(item)
        if owner is None or rub is None:
            continue
        outcome = _State.results.get(item.nodeid, ("not run", ""))[0]
        by_kata[owner][rub].append(outcome)
    for kata_name, items in by_kata.items():
        kata = catalog.load(kata_name)
        tw = terminalreporter
        tw.section(f"rubric: {kata.title} ({kata_name}, implementation: {impl.current_spec()})")
        for rubric_item in kata.rubric:
            outcomes = items.get(rubric_item.id)
            if rubric_item.graded_by != "tests":
                tw.write_line(f"  [ .. ] {rubric_item.id:<24} graded by the interviewer")
                continue
            if not outcomes and rubric_item.hardware:
                tw.write_line(f"  [ hw ] {rubric_item.id:<24} graded on GPU timings by the hidden "
                              "tests (a recorded sweep or a live GPU)")
                continue
            if not outcomes:
                tw.write_line(f"  [    ] {rubric_item.id:<24} no test in this run")
                continue
            passed = sum(o == "passed" for o in outcomes)
            skipped = sum(o == "skipped" for o in outcomes)
            failed = len(outcomes) - passed - skipped
            if passed == 0 and failed == 0:
                tw.write_line(f"  [SKIP] {rubric_item.id:<24} skipped (no data for it here)"
                              f"  - {rubric_item.description}")
                continue
            mark = "FAIL" if failed else "PASS"
            tw.write_line(f"  [{mark}] {rubric_item.id:<24} {passed}/{len(outcomes)} tests"
                          f"  - {rubric_item.description}")
