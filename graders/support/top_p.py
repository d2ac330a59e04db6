"""Drivers for the top_p tests that must run next to the implementation.

``call`` is the call whose CPU time graders.impl.measured_call takes from outside the
worker: the vectorised item's evidence. ``python_steps`` counts the Python steps a call
executes in the submission's own files (a loop over rows or tokens adds steps per iteration,
numpy work adds none). It is counted inside the submission's interpreter, so a submission can silence it:
the tests use it only to withhold the item from a loop the CPU time does not expose, never
to grant it.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any


def python_steps(fn: Any, *args: Any, **kwargs: Any) -> tuple[int, Any]:
    """(steps, result): function calls and line events of ``fn(*args, **kwargs)`` that run
    in the submission's own source files (its module file, or its package folder)."""
    files = {inspect.getsourcefile(fn) or ""}
    mod = sys.modules.get(getattr(fn, "__module__", "") or "")
    mod_file = getattr(mod, "__file__", None)
    folder: Path | None = None
    if mod_file:
        files.add(mod_file)
        if Path(mod_file).name == "__init__.py":
            folder = Path(mod_file).resolve().parent
    files = {str(Path(f).resolve()) for f in files if f}
    cache: dict[str, bool] = {}

    def ours(filename: str) -> bool:
        hit = cache.get(filename)
        if hit is None:
            try:
                path = Path(filename).resolve()
            except (OSError, ValueError):
                path = Path(filename)
            hit = str(path) in files or (folder is not None and folder in path.parents)
            cache[filename] = hit
        return hit

    steps = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal steps
        steps += 1
        return local

    def global_(frame: Any, event: str, arg: Any) -> Any:
        nonlocal steps
        if ours(frame.f_code.co_filename):
            steps += 1
            return local
        return None

    old = sys.gettrace()
    sys.settrace(global_)
    try:
        result = fn(*args, **kwargs)
    finally:
        sys.settrace(old)
    return steps, result


def call(fn: Any, *args: Any, budget: float | None = None) -> Any:
    """``fn(*args)``: the call whose CPU time graders.impl.measured_call takes from outside
    the worker (the vectorised item's evidence). Inputs travel with the request, so nothing
    about them is known to the worker before the measured call starts. ``budget`` is
    enforced from outside; a single call has nothing to stop early."""
    return fn(*args)
