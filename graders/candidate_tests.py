"""Running a test file the candidate wrote against targets the grader chooses.

Some katas grade the candidate's own tests (token_bucket's ``your_bound_test``: a property
test must pass on the reference and fail on every bound-breaking variant). That file is
candidate code, so under grading it runs only in the sandbox (graders/sandbox/
``run_command``): its own uid, a private root, no network, the worker's resource limits,
and nothing of the repository or of the grade's files in reach.

Each run gets a fresh scratch folder holding exactly:

- the candidate's test file, under its own name;
- the target (the reference, or a variant) as the module ``kata_target``: the same name
  for every target, its source rewritten from its syntax tree so that docstrings,
  comments and layout are gone (only code differs between targets);
- a shim package ``graders`` whose ``graders.impl.kata_impl(KATA)`` returns that module
  and which knows nothing else (no spec, no path), plus a copy of graders/support;
- ``kata_profile.py``, a pytest plugin loading the Hypothesis profile the run is promised,
  and a ``pytest.ini`` that keeps pytest inside the scratch folder.

What the trusted side takes from a run is its exit status, and nothing else counts:
0 means every test passed, 1 means a test ran and failed (pytest's own codes); anything
else (a collection or usage error, no test, a crash, a time-out) is neither. The output
tail is kept for the hiring team's report only.

The order in which targets are handed over must not be predictable either: hidden tests
parametrize over ``shuffled(...)``, drawn with ``secrets`` in every test process.

Practice (``nox -s kata``, the candidate's own code on their own machine) may run the same
scratch folder in a plain subprocess (``sandboxed=False``): the layout, the shim and the
profile are the same, so a file that works in practice works when graded.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from graders import catalog

TARGET_MODULE = "kata_target"
DEFAULT_TIMEOUT_S = 50.0
OUTPUT_CHARS = 64 << 10
# The Hypothesis profiles of graders/plugin.py a run may ask for, by the parent run's
# profile: a seeded grade runs the candidate's file under plain ``grade`` (the seed is the
# hidden tests' business).
PROFILE_OF_PARENT = {"kata": "kata", "selftest": "selftest", "grade": "grade",
                     "grade_seeded": "grade"}
_SHIM_IMPL = '''"""graders.impl as a candidate-written test sees it in its sandbox."""

import importlib

KATA = {kata!r}


def kata_impl(name):
    """The implementation under test for kata ``name`` (only this kata is here)."""
    if name != KATA:
        raise ValueError(f"only the kata {{KATA!r}} can be tested here, not {{name!r}}")
    return importlib.import_module({module!r})
'''
_PYTEST_INI = "[pytest]\npythonpath = .\n"

T = TypeVar("T")


class CandidateTestError(ValueError):
    """The grader was asked to run something it cannot (a harness mistake, not the
    candidate's): a missing file, a target that does not parse, an unknown kata."""


@dataclass(frozen=True)
class Run:
    """What one run of a candidate's test file gave: its exit status (the evidence), the
    output tail (for the report), and how long it took."""

    returncode: int
    output: str
    seconds: float
    timeout: float

    @property
    def passed(self) -> bool:
        """pytest exit 0: tests were collected, and every one passed."""
        return self.returncode == 0

    @property
    def caught(self) -> bool:
        """pytest exit 1: tests were collected and ran, and one failed."""
        return self.returncode == 1

    @property
    def timed_out(self) -> bool:
        return self.returncode < 0 and self.seconds >= self.timeout

    @property
    def stub(self) -> bool:
        """A test still raises NotImplementedError. Read from the output, so it can only
        turn a run into a failure, never into a pass."""
        return "NotImplementedError" in self.output

    def summary(self) -> str:
        meaning = {0: "every test passed", 1: "a test failed",
                   2: "interrupted: an error while collecting or running (not a test failure)",
                   3: "pytest internal error", 4: "pytest usage error",
                   5: "no test collected"}
        if self.timed_out:
            how = f"stopped after {self.timeout:g} s"
        elif self.returncode < 0:
            how = f"killed by signal {-self.returncode}"
        else:
            how = meaning.get(self.returncode, "an exit the file chose itself")
        return f"exit status {self.returncode}: {how}; {self.seconds:.1f} s"


def neutral_source(target: Path) -> str:
    """The target's code with every docstring and comment gone and the layout normalised,
    so that only what the code does tells two targets apart."""
    try:
        tree = ast.parse(target.read_text(encoding="utf-8"), filename=TARGET_MODULE + ".py")
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise CandidateTestError(f"target {target} cannot be read as Python: {exc}") from None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                body.pop(0)
                if not body:
                    body.append(ast.Pass())
    return ast.unparse(tree) + "\n"


def profile_source(profile: str, shrink: bool = False) -> str:
    """A pytest plugin that loads, inside the sandbox, the settings of the harness's
    Hypothesis profile ``profile`` (graders/plugin.py), with no example database and,
    unless ``shrink``, without the shrink phase (shrinking only makes a failing example
    smaller; whether the file fails is the same)."""
    import graders.plugin  # noqa: F401 - registers the harness's profiles
    from hypothesis import settings

    if profile not in PROFILE_OF_PARENT.values():
        raise CandidateTestError(f"no Hypothesis profile {profile!r} for candidate tests; "
                                 f"one of {sorted(set(PROFILE_OF_PARENT.values()))}")
    base = settings.get_profile(profile)
    phases = [p.name for p in base.phases if shrink or p.name != "shrink"]
    checks = [c.name for c in base.suppress_health_check]
    return (
        '"""The Hypothesis profile this run is promised (loaded with -p kata_profile)."""\n\n'
        "from hypothesis import HealthCheck, Phase, settings\n\n"
        "settings.register_profile(\n"
        f"    'candidate', max_examples={base.max_examples!r}, "
        f"derandomize={base.derandomize!r}, deadline=None, database=None,\n"
        "    print_blob=False,\n"
        f"    suppress_health_check=[{', '.join('HealthCheck.' + c for c in checks)}],\n"
        f"    phases=[{', '.join('Phase.' + p for p in phases)}])\n"
        "settings.load_profile('candidate')\n")


def prepare(scratch: Path, kata: str, test_file: Path, target: Path, profile: str,
            shrink: bool = False) -> list[str]:
    """Fill the empty folder ``scratch`` for one run; returns the pytest arguments."""
    if not (catalog.KATAS_DIR / kata).is_dir():
        raise CandidateTestError(f"no kata named {kata!r}")
    if not test_file.is_file():
        raise CandidateTestError(f"test file {test_file} does not exist")
    if not test_file.name.startswith("test_") or test_file.suffix != ".py":
        raise CandidateTestError(f"test file {test_file} must be named test_*.py")
    source = neutral_source(target)
    (scratch / test_file.name).write_bytes(test_file.read_bytes())
    (scratch / f"{TARGET_MODULE}.py").write_text(source, encoding="utf-8")
    shim = scratch / "graders"
    shim.mkdir()
    (shim / "__init__.py").write_text('"""A stand-in: only graders.impl.kata_impl."""\n')
    (shim / "impl.py").write_text(_SHIM_IMPL.format(kata=kata, module=TARGET_MODULE))
    support = Path(__file__).with_name("support")
    if support.is_dir():
        shutil.copytree(support, shim / "support",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (scratch / "kata_profile.py").write_text(profile_source(profile, shrink))
    (scratch / "pytest.ini").write_text(_PYTEST_INI)
    return ["-m", "pytest", test_file.name, "-c", "pytest.ini", "--rootdir", ".",
            "-p", "kata_profile", "-p", "_hypothesis_pytestplugin", "-p", "no:cacheprovider",
            "-q", "-x", "--no-header", "-W", "ignore::DeprecationWarning"]


def _package_paths() -> list[str]:
    """The folders pytest and Hypothesis are imported from (the env's site-packages):
    the run's import path beside the scratch folder."""
    import _pytest
    import hypothesis
    import pluggy

    paths: list[str] = []
    for mod in (_pytest, hypothesis, pluggy):
        where = str(Path(str(mod.__file__)).resolve().parent.parent)
        if where not in paths:
            paths.append(where)
    return paths


def run(kata: str, test_file: Path, target: Path, *, profile: str, sandboxed: bool = True,
        timeout: float = DEFAULT_TIMEOUT_S, shrink: bool = False) -> Run:
    """Run ``test_file`` against ``target`` (handed over as ``kata_target``) in a fresh
    scratch folder; in the sandbox unless ``sandboxed`` is False (practice only)."""
    from graders import sandbox

    base = catalog.ROOT / ".nox" / "sandbox"
    base.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="cand-", dir=base))
    try:
        args = prepare(scratch, kata, test_file, target, profile, shrink)
        argv = [sys.executable, "-B", "-s", *args]
        cache = _cache_file(scratch, argv, sandboxed, timeout)
        if cache is not None and cache.is_file():
            saved = json.loads(cache.read_text(encoding="utf-8"))
            return Run(int(saved["rc"]), str(saved["output"]), float(saved["seconds"]), timeout)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch), "LANG": "C.UTF-8",
               "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": os.pathsep.join([str(scratch), *_package_paths()]),
               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "HF_HUB_OFFLINE": "1",
               "OMP_NUM_THREADS": "1"}
        start = time.monotonic()
        if sandboxed:
            limits = sandbox.Limits(call_seconds=timeout, cpu_seconds=int(timeout) + 10)
            rc, output = sandbox.run_command(argv, scratch, limits, timeout, env)
        else:
            rc, output = _plain(argv, scratch, env, timeout)
        done = Run(rc, output, time.monotonic() - start, timeout)
        if cache is not None and not done.timed_out:
            part = cache.with_name(f"{cache.name}.{os.getpid()}.part")
            part.write_text(json.dumps({"rc": rc, "output": output, "seconds": done.seconds}),
                            encoding="utf-8")
            os.replace(part, cache)
        return done
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


CACHE_ENV = "KATA_CANDIDATE_RUN_CACHE"


def _cache_file(scratch: Path, argv: list[str], sandboxed: bool, timeout: float) -> Path | None:
    """Where a run of exactly this prepared folder and command is kept, when the project's
    own suite names a folder for it (``KATA_CANDIDATE_RUN_CACHE``; a grade never sets it).
    A run is a pure function of what ``prepare`` wrote (the test file, the target, the
    harness's shim and profile: every byte), the command, the sandbox and the time limit;
    the suite grades the same alternative in both modes, and both would run the same
    candidate tests in the same sandbox. None when no folder is named."""
    folder = os.environ.get(CACHE_ENV)
    if not folder or not Path(folder).is_dir():
        return None
    digest = hashlib.sha256(json.dumps([argv, sandboxed, timeout]).encode())
    for path in sorted(p for p in scratch.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(scratch)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return Path(folder) / f"{digest.hexdigest()}.json"


def _plain(argv: list[str], scratch: Path, env: dict[str, str],
           timeout: float) -> tuple[int, str]:
    try:
        done = subprocess.run(argv, cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, check=False)
        return done.returncode, (done.stdout + done.stderr)[-OUTPUT_CHARS:]
    except subprocess.TimeoutExpired as exc:
        text = exc.stdout if isinstance(exc.stdout, str) else ""
        return -9, text[-OUTPUT_CHARS:] + f"\n[no exit within {timeout:g} s: killed]"


def needs_sandbox(parent_profile: str | None, isolated: bool) -> bool:
    """Whether a test run under ``parent_profile`` must put candidate tests in the
    sandbox: always, except in practice (the ``kata`` profile, in-process), where the
    code is the candidate's own on their own machine."""
    if parent_profile is None:
        parent_profile = os.environ.get("KATA_HYPOTHESIS_PROFILE", "kata")
    return isolated or parent_profile != "kata"


def profile_for(parent_profile: str | None) -> str:
    """The profile a candidate test runs under when its parent run uses ``parent_profile``."""
    if parent_profile is None:
        parent_profile = os.environ.get("KATA_HYPOTHESIS_PROFILE", "kata")
    return PROFILE_OF_PARENT.get(parent_profile, "grade")


def shuffled(items: Sequence[T]) -> list[T]:
    """``items`` in an order drawn afresh, from the system's cryptographic source, in every
    test process (use it for the parametrize list of the runs, so the candidate cannot
    know which target comes first). Under pytest-xdist, whose workers must all collect the
    same order, the order is kept."""
    out = list(items)
    if "PYTEST_XDIST_WORKER" not in os.environ:
        secrets.SystemRandom().shuffle(out)
    return out
