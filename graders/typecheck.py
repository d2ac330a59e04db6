"""Type-check a kata implementation and hold its API to the stub's contract.

    python -m graders.typecheck NAME [--impl katas|PATH]

Two checks:
1. ``mypy --strict`` on the implementation;
2. the contract: every public class, function and method the stub declares exists with the
   same parameters (names, kinds, defaults present) and the same annotations. The stub is
   read from git (``HEAD:katas/NAME/__init__.py``) when the candidate edits the kata folder
   in place (in a candidate bundle, from its copy ``graders/stubs/NAME.py``), or from
   ``katas/NAME/__init__.py`` when grading a submission elsewhere.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys

from graders import catalog
from graders.impl import SubmissionError, resolve_submission

_ALIASES = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set",
            "FrozenSet": "frozenset", "Type": "type"}


def _norm(annotation: ast.expr | None) -> str:
    if annotation is None:
        return ""
    text = ast.unparse(annotation).replace("typing.", "").replace("'", "").replace('"', "")
    for old, new in _ALIASES.items():
        text = re.sub(rf"\b{old}\[", f"{new}[", text)
    text = re.sub(r"\bOptional\[(.*)\]$", r"\1 | None", text)
    return text.replace(" ", "")


def _signature(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    n_defaults = len(a.defaults)
    for i, arg in enumerate(positional):
        has_default = i >= len(positional) - n_defaults
        out.append(f"{arg.arg}:{_norm(arg.annotation)}{'=...' if has_default else ''}")
    if a.vararg:
        out.append(f"*{a.vararg.arg}:{_norm(a.vararg.annotation)}")
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        out.append(f"kw {arg.arg}:{_norm(arg.annotation)}{'=...' if default else ''}")
    if a.kwarg:
        out.append(f"**{a.kwarg.arg}:{_norm(a.kwarg.annotation)}")
    out.append(f"-> {_norm(fn.returns)}")
    return out


def _api(source: str) -> dict[str, list[str]]:
    """Public API: 'name' -> signature, 'Class.method' -> signature, 'Class' -> bases."""
    api: dict[str, list[str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            api[node.name] = _signature(node)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            api[node.name] = ["class"]
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                        not item.name.startswith("_") or item.name == "__init__"):
                    api[f"{node.name}.{item.name}"] = _signature(item)
    return api


def contract_differences(stub: str, candidate: str) -> list[str]:
    want, have = _api(stub), _api(candidate)
    problems = []
    for name, sig in want.items():
        if name not in have:
            problems.append(f"missing: {name} (the stub declares it)")
        elif have[name] != sig:
            problems.append(f"{name}: the stub declares ({', '.join(sig)}), "
                            f"the implementation has ({', '.join(have[name])})")
    return problems


STUBS_DIR = catalog.STUBS_DIR


def _pristine_stub(name: str, editing_in_place: bool) -> str | None:
    path = catalog.KATAS_DIR / name / "__init__.py"
    if not editing_in_place:
        return path.read_text(encoding="utf-8")
    copy = STUBS_DIR / f"{name}.py"
    if copy.is_file():     # a bundle: its own git history, if any, is the candidate's
        return copy.read_text(encoding="utf-8")
    try:
        return subprocess.run(
            ["git", "show", f"HEAD:katas/{name}/__init__.py"], cwd=catalog.ROOT,
            capture_output=True, text=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nox -s typecheck --")
    parser.add_argument("kata")
    parser.add_argument("--impl", default="katas")
    args = parser.parse_args(argv)
    try:
        catalog.load(args.kata)
        if args.impl == "katas":
            target = catalog.KATAS_DIR / args.kata / "__init__.py"
        elif args.impl == "solutions":
            target = next(p for p in (catalog.SOLUTIONS_DIR / f"{args.kata}.py",
                                      catalog.SOLUTIONS_DIR / args.kata / "__init__.py")
                          if p.exists())
        else:
            target = resolve_submission(args.kata, args.impl)
    except (catalog.CatalogError, SubmissionError, StopIteration) as exc:
        print(f"typecheck: {exc}", file=sys.stderr)
        return 2
    mypy_target = str(target.parent if target.name == "__init__.py" else target)
    print(f"mypy --strict {mypy_target}")
    code = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
                           mypy_target], cwd=catalog.ROOT).returncode
    stub = _pristine_stub(args.kata, args.impl == "katas")
    if stub is None:
        print("contract: skipped (no git history to read the original stub from)")
        return code
    problems = contract_differences(stub, target.read_text(encoding="utf-8"))
    if problems:
        print("contract: the implementation differs from the stub's API:")
        for p in problems:
            print(f"  {p}")
        return 1
    print("contract: the API matches the stub")
    return code


if __name__ == "__main__":
    sys.exit(main())
