"""Write a self-contained folder for a candidate: stubs, prompts, public tests, the harness.

    nox -s bundle -- OUT [NAMES...] [--ignore-changes]

Everything comes from the last commit (``git`` HEAD), never from the working tree: a kata
solved or half-edited in this checkout cannot leak into the bundle. A kata whose files
(``katas/NAME``, ``tests/NAME``) differ from HEAD, or hold untracked files, is refused
with the list of those files; ``--ignore-changes`` builds from HEAD anyway and says loudly
that the changes were left out. A committed stub that is no longer a stub (a function that
does more than raise NotImplementedError) is always refused.

What ships is chosen by whitelist:

- per kata: the stub, the prompt, the public tests (with their data) and a ``kata.toml``
  reduced to the fields in ``PUBLIC_KATA_KEYS`` / ``PUBLIC_RUBRIC_KEYS`` (no good answers,
  follow-up questions or interviewer overview);
- the harness modules in ``HARNESS`` and the ``graders.support`` modules the shipped code
  imports;
- ``pyproject.toml``, ``conftest.py``, a ``noxfile.py`` cut down to ``BUNDLE_SESSIONS``
  (default ``kata``), and the files of ``data/`` and ``hardware_fixtures/`` the public side
  names.

No reference solution, hidden test, mutant, alternative or hostile submission. The
bundle's ``nox -s grade`` runs the public tests under the grader and says that this is not
a score (the hidden tests are not there).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from graders import catalog

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# what of graders/ ships to a candidate: modules, and packages whole (a folder ends in "/";
# a module added inside a shipped package ships with no edit here)
HARNESS = ("__init__.py", "catalog.py", "launch.py", "impl.py", "plugin.py", "cli.py", "grade/",
           "typecheck.py", "interview/", "sandbox/", "wire.py", "worker.py", "batch.py",
           "candidate_tests.py", "measure.py", "outside.py")
# kata.toml: what a candidate's harness reads, and nothing else
PUBLIC_KATA_KEYS = ("title", "minutes", "difficulty", "tags", "requires", "summary",
                    "read_only_inputs", "hints", "grading", "rubric")
PUBLIC_RUBRIC_KEYS = ("id", "points", "description", "graded_by", "hardware")
PUBLIC_GRADING_KEYS = ("reply_bytes",)
# the fields that stay behind, by who they are for (a new field must be put in one list:
# selftest/test_bundle.py fails on a kata.toml key that is in none)
INTERVIEWER_KEYS = ("interviewer", "follow_ups", "good_answer")
MAINTAINER_KEYS = ("rule_sections",)    # graders/authoring/prompt_lint.py, not shipped
BUNDLE_SESSIONS = ("kata", "grade", "typecheck", "interview", "list")
# what a session does in a bundle, where it differs from the repository (its docstring and
# its line in the noxfile's docstring are replaced)
BUNDLE_SESSION_DOCS = {
    "grade": "The public tests under the grader, a table per rubric item: NOT a score (the "
             "hidden tests are not in this bundle)."}
TOP_FILES = ("pyproject.toml", "conftest.py")
DATA_FOLDERS = ("data", "hardware_fixtures")


def harness_paths(harness: tuple[str, ...], files: dict[str, Any] | None = None) -> list[str]:
    """The files ``harness`` (``HARNESS``'s form) names, below graders/: folders expanded
    to their .py files, from ``files`` (committed paths) or else from the working tree."""
    paths = []
    for entry in harness:
        if not entry.endswith("/"):
            paths.append(f"graders/{entry}")
        elif files is not None:
            paths += sorted(p for p in files if p.startswith(f"graders/{entry}")
                            and p.endswith(".py"))
        else:
            top = catalog.ROOT / "graders" / entry
            paths += sorted(str(p.relative_to(catalog.ROOT)) for p in top.rglob("*.py")
                            if "__pycache__" not in p.parts)
    return paths


def shipped_modules() -> list[str]:
    """The harness modules a candidate's bundle holds, by name below ``graders``
    (``catalog``, ``grade.report``)."""
    names = []
    for path in harness_paths(HARNESS):
        parts = list(Path(path).with_suffix("").parts[1:])
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


class BundleError(RuntimeError):
    """The bundle cannot be built as asked; the message says why and what to do."""


# -- the last commit ---------------------------------------------------------------------

def _git(root: Path, *args: str, data: bytes | None = None) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], input=data,
                              capture_output=True, check=False)
    except FileNotFoundError:
        raise BundleError("git is not installed: the bundle is built from the last "
                          "commit of a git checkout") from None
    if proc.returncode != 0:
        raise BundleError(f"git {' '.join(args[:2])} failed in {root}: "
                          f"{proc.stderr.decode(errors='replace').strip()} (the bundle is "
                          "built from the last commit of a git checkout)")
    return proc.stdout


def committed(paths: list[str], root: Path | None = None) -> dict[str, tuple[bool, bytes]]:
    """Every file under ``paths`` in HEAD: path -> (executable, content). A symbolic link
    or submodule there is an error (nothing but plain files is shipped)."""
    root = root or catalog.ROOT
    listing = _git(root, "ls-tree", "-r", "-z", "--full-tree", "HEAD", "--", *paths)
    entries = []
    for raw in filter(None, listing.split(b"\0")):
        meta, _, name = raw.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        path = name.decode()
        if kind != "blob" or mode not in ("100644", "100755"):
            raise BundleError(f"{path} is a {'symbolic link' if mode == '120000' else kind} "
                              "in HEAD: only plain files are shipped")
        entries.append((path, mode == "100755", sha))
    if not entries:
        return {}
    out = _git(root, "cat-file", "--batch", data="".join(f"{s}\n" for _, _, s in entries).encode())
    files: dict[str, tuple[bool, bytes]] = {}
    pos = 0
    for path, executable, sha in entries:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        size = int(header[2])
        files[path] = (executable, out[end + 1:end + 1 + size])
        pos = end + 1 + size + 1
    return files


def changed(paths: list[str], root: Path | None = None) -> list[str]:
    """Files under ``paths`` that differ from HEAD (staged or not) or are untracked, as
    ``git status --porcelain`` lines ("XY path")."""
    root = root or catalog.ROOT
    out = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *paths)
    lines, fields = [], out.split(b"\0")
    i = 0
    while i < len(fields):
        entry = fields[i].decode(errors="replace")
        i += 1
        if not entry:
            continue
        lines.append(entry)
        if entry[:1] in ("R", "C"):   # a rename or copy: the next field is the old path
            i += 1
    return lines


# -- what ships ---------------------------------------------------------------------------

def public_kata_toml(text: str, where: str = "kata.toml") -> str:
    """The kata.toml a candidate gets: the whitelisted fields only, written back as TOML
    (and read back to prove it says exactly that)."""
    raw = tomllib.loads(text)
    keep: dict[str, Any] = {k: raw[k] for k in PUBLIC_KATA_KEYS if k in raw and k != "rubric"}
    if "grading" in keep:
        keep["grading"] = {k: v for k, v in keep["grading"].items() if k in PUBLIC_GRADING_KEYS}
    rubric = [{k: item[k] for k in PUBLIC_RUBRIC_KEYS if k in item}
              for item in raw.get("rubric", [])]
    lines = ["# Public part of this kata's metadata (the candidate bundle; graders/packaging/bundle.py)."]
    tables = []
    for key, value in keep.items():
        if isinstance(value, dict):
            tables.append((key, value))
        elif isinstance(value, list) and len(_toml_value(value, where)) > 90:
            lines += [f"{key} = ["] + [f"    {_toml_value(v, where)}," for v in value] + ["]"]
        else:
            lines.append(f"{key} = {_toml_value(value, where)}")
    for key, table in tables:
        lines += ["", f"[{key}]"] + [f"{k} = {_toml_value(v, where)}" for k, v in table.items()]
    for item in rubric:
        lines += ["", "[[rubric]]"] + [f"{k} = {_toml_value(v, where)}" for k, v in item.items()]
    out = "\n".join(lines) + "\n"
    if tomllib.loads(out) != {**keep, **({"rubric": rubric} if rubric else {})}:
        raise BundleError(f"{where}: the public kata.toml does not read back as written")
    return out


def _toml_value(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        # a JSON string is a TOML basic string (\", \\, \n, \t, \uXXXX escapes)
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v, where) for v in value) + "]"
    raise BundleError(f"{where}: cannot ship a value of type {type(value).__name__}")


def bundle_noxfile(source: str) -> str:
    """The project's noxfile with only ``BUNDLE_SESSIONS`` left (their lines in the
    module docstring too) and ``kata`` as the default session."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()          # 0-based line numbers
    default_set = base_set = False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            name = _session_name(node)
            first = node.body[0]
            if name in BUNDLE_SESSION_DOCS and isinstance(first, ast.Expr) and \
                    isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                indent = lines[first.lineno - 1][:len(lines[first.lineno - 1])
                                                 - len(lines[first.lineno - 1].lstrip())]
                lines[first.lineno - 1] = f'{indent}"""{BUNDLE_SESSION_DOCS[name]}"""\n'
                drop.update(range(first.lineno, first.end_lineno or first.lineno))
            if name is not None and name not in BUNDLE_SESSIONS:
                start = min(d.lineno for d in node.decorator_list) - 1
                end = node.end_lineno or node.lineno
                drop.update(range(start, end))
                while end < len(lines) and not lines[end].strip():   # its blank lines too
                    drop.add(end)
                    end += 1
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "nox.options.sessions":
            lines[node.lineno - 1] = 'nox.options.sessions = ["kata"]\n'
            default_set = True
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "BASE":
            # the environment holds what a candidate needs (pyproject's "candidate" extra),
            # none of the maintainers' tools
            lines[node.lineno - 1] = 'BASE = "candidate"\n'
            base_set = True
    if not default_set:
        raise BundleError("noxfile.py: no 'nox.options.sessions = [...]' line to set to kata")
    if not base_set:
        raise BundleError("noxfile.py: no 'BASE = ...' line to set to the candidate extra")
    doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) else None
    if doc is not None:
        for n in range(doc.lineno - 1, doc.end_lineno or doc.lineno):
            found = re.match(r"\s+nox -s (\w+)", lines[n])
            if found and found.group(1) not in BUNDLE_SESSIONS:
                drop.add(n)
            elif found and found.group(1) in BUNDLE_SESSION_DOCS:
                lines[n] = (f"    nox -s {found.group(1)} -- NAME".ljust(57)
                            + "public tests under the grader: NOT a score\n")
    out = "".join(line for n, line in enumerate(lines) if n not in drop)
    compile(out, "noxfile.py", "exec")
    return out


def _session_name(node: ast.FunctionDef) -> str | None:
    for d in node.decorator_list:
        call = d if isinstance(d, ast.Call) else None
        target = ast.unparse(call.func if call else d)
        if target in ("nox.session", "session"):
            for kw in call.keywords if call else []:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                    return str(kw.value.value)
            return node.name
    return None


def _imported_support(sources: list[str]) -> set[str]:
    names = set()
    for text in sources:
        names.update(re.findall(r"graders\.support\.(\w+)", text))
        for group in re.findall(r"from graders\.support import ([\w ,()]+)", text):
            names.update(n.split(" as ")[0].strip(" ()") for n in group.split(","))
    return {n for n in names if n}


def _readme(katas: dict[str, dict[str, Any]]) -> str:
    table = "\n".join(f"| `{name}` | {k['title']} | {k['minutes']} | {k['difficulty']} |"
                      for name, k in katas.items())
    return f"""# inference-katas: candidate bundle

Katas for LLM inference engineering interviews. For each kata: read the prompt
`katas/NAME/README.md`, fill in the stub `katas/NAME/__init__.py`, and run its public tests:

```sh
pip install nox          # once
nox                      # the katas and how to start one
nox -s kata -- NAME      # the public tests (about a second when warm)
nox -s interview -- NAME # a timed mock interview: countdown, tests on every save, hints
nox -s typecheck -- NAME # mypy --strict, and your API against the stub's
nox -s grade -- NAME     # the public tests under the grader (isolated, a table per rubric item)
```

| kata | title | minutes | difficulty |
|---|---|---|---|
{table}

The hidden tests that decide a grade are not in this bundle: what `nox -s grade` prints
here is how many rubric points pass the public tests, not a score. A few public checks
that measure your code against the reference solution's CPU time skip here (the
reference is not in the bundle either); the grader runs them.
"""


def write_bundle(out: Path, names: list[str], ignore_changes: bool = False,
                 root: Path | None = None, warn: Any = None) -> list[Path]:
    """Build the bundle in ``out`` (which must not exist or be empty) from HEAD of the
    checkout at ``root`` (this one by default); return the files written."""
    root = root or catalog.ROOT
    warn = warn or (lambda msg: print(msg, file=sys.stderr))
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BundleError(f"{out} exists and is not an empty folder")
    known = sorted(p.split("/")[1] for p in committed(["katas"], root)
                   if p.count("/") == 2 and p.endswith("/kata.toml"))
    names = list(dict.fromkeys(names)) or known
    unknown = [n for n in names if n not in known]
    if unknown:
        raise BundleError(f"no committed kata named {', '.join(map(repr, unknown))}; "
                          f"committed katas: {', '.join(known) or '(none)'}")
    kata_paths = [p for n in names for p in (f"katas/{n}", f"tests/{n}")]
    dirty = changed(kata_paths, root)
    if dirty:
        listing = "\n  ".join(dirty)
        if not ignore_changes:
            raise BundleError(
                "these files of the katas to bundle differ from the last commit (or are not "
                f"committed):\n  {listing}\nThe bundle is built from the last commit only. "
                "Commit the changes you mean to ship, or set them aside (git stash -u), then "
                "run again; or pass --ignore-changes to build from the last commit and leave "
                "these changes out.")
        warn("WARNING: --ignore-changes: these uncommitted changes are NOT in the bundle "
             f"(it holds the last commit's version):\n  {listing}")
    shared = [*TOP_FILES, "noxfile.py", *(f"graders/{h.rstrip('/')}" for h in HARNESS),
              "graders/support", *DATA_FOLDERS]
    elsewhere = changed(shared, root)
    if elsewhere:
        warn("note: the bundle holds the last commit's harness; these uncommitted changes "
             "are not in it:\n  " + "\n  ".join(elsewhere))
    files = committed([*kata_paths, *shared], root)
    ship: dict[str, tuple[bool, bytes]] = {}
    problems = []
    for name in names:
        for path, entry in files.items():
            if path.startswith((f"katas/{name}/", f"tests/{name}/")):
                ship[path] = entry
        for part in ("__init__.py", "README.md", "kata.toml"):
            if f"katas/{name}/{part}" not in ship:
                problems.append(f"katas/{name}/{part} is not committed")
        for path in [p for p in ship if p.startswith(f"katas/{name}/") and p.endswith(".py")]:
            problems += catalog.stub_problems(ship[path][1].decode("utf-8", "replace"), path)
        if f"katas/{name}/__init__.py" in ship:   # typecheck's contract check reads it
            ship[f"graders/stubs/{name}.py"] = ship[f"katas/{name}/__init__.py"]
        toml = f"katas/{name}/kata.toml"
        if toml in ship:
            ship[toml] = (False, public_kata_toml(ship[toml][1].decode(), toml).encode())
    if problems:
        raise BundleError("the last commit does not hold a clean stub, so the bundle would "
                          "ship a solution:\n  " + "\n  ".join(problems)
                          + "\nCommit the stub back (git checkout <a stub's commit> -- "
                          "katas/NAME), then run again.")
    harness = harness_paths(HARNESS, files)
    missing = [f for f in (*TOP_FILES, "noxfile.py", *harness, *(
        f"graders/{h}__init__.py" for h in HARNESS if h.endswith("/"))) if f not in files]
    if missing:
        raise BundleError(f"not in the last commit: {', '.join(missing)}")
    for f in TOP_FILES:
        ship[f] = files[f]
    ship["noxfile.py"] = (False, bundle_noxfile(files["noxfile.py"][1].decode()).encode())
    for f in harness:
        ship[f] = files[f]
    for pkg in ("katas", "tests"):
        ship[f"{pkg}/__init__.py"] = (False, b"")
    texts = [data.decode("utf-8", "replace") for p, (_, data) in ship.items()
             if p.endswith((".py", ".md", ".toml"))]
    support = {"__init__"} | _imported_support(texts)
    for path, entry in files.items():
        if path.startswith("graders/support/") and path.count("/") == 2 \
                and path.endswith(".py") and Path(path).stem in support:
            ship[path] = entry
    blob = "\n".join(texts)
    for path, entry in files.items():
        if not path.startswith(tuple(f"{d}/" for d in DATA_FOLDERS)):
            continue
        # a data file ships when the public side names it (or, under data/, its folder)
        p = Path(path)
        keys = {p.name, p.stem} | ({p.parent.name} if path.startswith("data/") else set())
        if any(k in blob for k in keys):
            ship[path] = entry
    katas = {n: tomllib.loads(ship[f"katas/{n}/kata.toml"][1].decode()) for n in names}
    ship["README.md"] = (False, _readme(katas).encode())
    out.mkdir(parents=True, exist_ok=True)
    for path, (executable, data) in sorted(ship.items()):
        dest = out / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        if executable:
            dest.chmod(0o755)
    return sorted(p for p in out.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nox -s bundle --", description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="a new (or empty) folder")
    parser.add_argument("names", nargs="*", help="katas to ship (default: all)")
    parser.add_argument("--ignore-changes", action="store_true",
                        help="build from the last commit even where the katas' files differ "
                             "from it (those changes are left out, with a warning)")
    args = parser.parse_args(argv)
    try:
        files = write_bundle(args.out, args.names, args.ignore_changes)
    except BundleError as exc:
        print(f"bundle: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(files)} files to {args.out} (from the last commit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
