"""Drivers for the top_p tests that must run next to the implementation.

``python_steps`` counts the Python steps a call executes in the submission's own files
(the vectorised item: a loop over rows or tokens adds steps per iteration, numpy work adds
none); counted here, where the submission runs, the count is exact under isolated grading
too. ``modified_arguments`` calls ``kept_mask`` and ``sample`` on the arrays it is given, in the
implementation's process, and reports which arrays a call changed in place. Across the
grading worker's wire the arguments are copies, so only a check made on this side can see
an in-place write. It returns plain observations; the expectation stays in the tests.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np


def modified_arguments(kept_mask: Any, sample: Any, logits: np.ndarray,
                       temperature: np.ndarray, top_p: np.ndarray, u: np.ndarray,
                       top_k: np.ndarray) -> list[str]:
    """``call: argument`` for every argument a call changed."""
    names = ("logits", "temperature", "top_p", "u", "top_k")
    calls: list[tuple[str, Callable[[list[np.ndarray]], object]]] = [
        ("kept_mask(top_k)", lambda a: kept_mask(a[0], a[1], a[2], a[4])),
        ("sample(top_k)", lambda a: sample(a[0], a[1], a[2], a[3], a[4])),
        ("kept_mask", lambda a: kept_mask(a[0], a[1], a[2])),
        ("sample", lambda a: sample(a[0], a[1], a[2], a[3])),
    ]
    changed = []
    for label, call in calls:
        args = [np.array(a, copy=True) for a in (logits, temperature, top_p, u, top_k)]
        kept = [a.copy() for a in args]
        call(args)
        for name, after, before in zip(names, args, kept):
            if not np.array_equal(after, before, equal_nan=True):
                changed.append(f"{label}: {name}")
    return changed


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
