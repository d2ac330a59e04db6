"""How a kata's pytest is launched: the one home of the profile names, the plugin flags,
the test process's argument list and its environment.

Every run of a kata's tests goes through here: practice (``graders.cli``), a grade
(``graders.grade``), the interview's saves, the mutant runner and the Gradescope
autograder's collection check. A flag added here reaches them all, so they cannot drift.
(A candidate-written test runs in a sandbox with its own small shim and profile plugin:
``graders.candidate_tests`` builds that launch, from ``PROFILES`` too.)

Standard library only: the grade engine imports this before anything heavy.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The Hypothesis profiles graders/plugin.py registers: name -> (max_examples, derandomize).
# grade_seeded is grade with a seed given on the command line (--hypothesis-seed), for a
# second, different but reproducible sample.
PROFILES: dict[str, tuple[int, bool]] = {
    "kata": (25, False), "selftest": (60, True), "smoke": (10, True), "grade": (150, True),
    "grade_seeded": (150, False)}
GRADE_PROFILES = ("grade", "grade_seeded", "selftest", "smoke", "kata")  # --profile's order

# Plugins are named, not auto-loaded: a machine's other pytest plugins (random ordering,
# async runners) must neither slow a run nor change its result.
PLUGINS = ["-p", "_hypothesis_pytestplugin", "-p", "pytest_timeout", "-p", "no:cacheprovider"]
CONFIG = ["-c", str(ROOT / "pyproject.toml")]
QUIET = ["-q", "--no-header", "--no-rubric-summary"]
NO_DEPRECATIONS = ["-W", "ignore::DeprecationWarning"]


def test_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a kata's test process: the harness importable, only the named
    plugins, a fixed hash seed, bytecode caching on (it keeps pytest's start fast)."""
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def pytest_args(paths: list[str], *, profile: str, impl: str | None = None,
                quiet: bool = True, timeout: float | None = None,
                extra: list[str] | None = None) -> list[str]:
    """pytest's arguments (without the interpreter) for a kata's tests in ``paths``.

    ``impl`` is the implementation spec of graders/plugin.py (``katas``, ``solutions``, a
    path, ``mutant:NAME``); ``timeout`` a per-test limit in seconds, enforced by a signal.
    """
    if profile not in PROFILES:
        raise ValueError(f"no Hypothesis profile {profile!r}; one of {sorted(PROFILES)}")
    args = [*paths]
    if impl is not None:
        args += ["--impl", impl]
    args += ["--hypothesis-profile", profile]
    if quiet:
        args += QUIET
    args += [*PLUGINS, *CONFIG, *NO_DEPRECATIONS]
    if timeout is not None:
        args += ["--timeout", str(timeout), "--timeout-method", "signal"]
    return args + list(extra or [])
