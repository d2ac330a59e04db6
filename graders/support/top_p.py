"""A driver for the top_p tests that must run next to the implementation.

``python_steps`` counts the Python steps a call executes in the submission's own files
(the vectorised item: a loop over rows or tokens adds steps per iteration, numpy work adds
none); counted here, where the submission runs, the count is exact under isolated grading
too.
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
