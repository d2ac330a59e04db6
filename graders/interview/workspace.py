"""One candidate, one workspace: the committed stub (git HEAD, or a bundle's
graders/stubs copy), a fresh copy of it per session, and the candidate's diff against it."""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path

from graders import catalog
from graders.interview.record import ASKED, STUBS_DIR, WORK_DIR, WorkspaceError, commit_text


def pristine_stub(kata: catalog.Kata) -> tuple[dict[str, str], str]:
    """The committed stub, its code files (path in the kata folder -> text), and where it
    came from: git HEAD; in a candidate bundle its copy ``graders/stubs/NAME.py`` (the
    other files as shipped); with neither, ``katas/NAME`` itself once it passes as a stub.
    WorkspaceError otherwise."""
    folder = f"katas/{kata.name}"
    copy = STUBS_DIR / f"{kata.name}.py"
    if copy.is_file():
        files = {p.relative_to(kata.folder).as_posix(): p.read_text(encoding="utf-8")
                 for p in code_files(kata.folder)}
        files["__init__.py"] = copy.read_text(encoding="utf-8")
        return files, f"graders/stubs/{kata.name}.py (a candidate bundle)"
    files = _committed(folder)
    if files:
        return files, f"{folder} at git HEAD {commit_text().split()[0]}"
    files = {p.relative_to(kata.folder).as_posix(): p.read_text(encoding="utf-8")
             for p in code_files(kata.folder)}
    problems = [p for rel, text in files.items()
                for p in catalog.stub_problems(text, f"{folder}/{rel}")]
    if problems or "__init__.py" not in files:
        raise WorkspaceError(f"{folder} is not the stub, and no committed stub is at hand:\n  "
                             + "\n  ".join(problems or [f"{folder}/__init__.py is missing"]))
    return files, f"{folder} (checked to be a stub; no git history)"


def _committed(folder: str) -> dict[str, str]:
    """The .py files under ``folder`` in git HEAD (empty without git or history)."""
    try:
        listing = subprocess.run(["git", "ls-tree", "-r", "-z", "--name-only", "HEAD", "--",
                                  folder + "/"], cwd=catalog.ROOT, capture_output=True,
                                 timeout=30)
        files = {}
        for name in filter(None, listing.stdout.decode().split("\0")):
            if listing.returncode != 0 or not name.endswith(".py"):
                continue
            show = subprocess.run(["git", "show", f"HEAD:{name}"], cwd=catalog.ROOT,
                                  capture_output=True, timeout=30)
            if show.returncode == 0:
                files[name[len(folder) + 1:]] = show.stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return {}
    return files if "__init__.py" in files else {}


def candidate_prompt(kata: catalog.Kata) -> str:
    """The prompt as the candidate reads it: up to the hints, and the rubric table's row of
    each interviewer-graded item without the question it announces."""
    text = kata.prompt_path.read_text(encoding="utf-8").split("<details>")[0].rstrip()
    asked = {i.id for i in kata.rubric if i.graded_by != "tests"}
    lines = []
    for line in text.splitlines():
        cells = line.strip().strip("|").split("|")
        if line.startswith("|") and len(cells) >= 2 and cells[0].strip(" `") in asked:
            line = "|" + "|".join(cells[:-1]) + f"| ({ASKED}) |"
        lines.append(line)
    return "\n".join(lines)


def code_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def differs_from_stub(folder: Path, stub: dict[str, str]) -> list[str]:
    """The files that make ``folder`` more (or less) than the stub: a changed or missing
    stub file, any other .py file."""
    found = []
    for rel, text in stub.items():
        path = folder / rel
        if not path.is_file():
            found.append(f"{path} is missing")
        elif _read(path) != text:
            changed = sum(1 for line in difflib.unified_diff(
                text.splitlines(), _read(path).splitlines(), lineterm="", n=0)
                if line[:1] in "+-" and line[:3] not in ("+++", "---"))
            found.append(f"{path} differs from the stub ({changed} line"
                         + ("" if changed == 1 else "s") + " changed)")
    found += [f"{p} is not part of the stub" for p in code_files(folder)
              if p.relative_to(folder).as_posix() not in stub]
    return found


def prepare_workspace(kata: catalog.Kata, impl: str | None, record: Path,
                      stub: dict[str, str]) -> Path:
    """The folder the candidate edits, holding exactly the stub. Default: ``record``/work,
    written now. ``impl``: that folder (``katas`` for katas/NAME), filled from the stub when
    absent or empty; WorkspaceError naming the files when it holds anything else."""
    if impl is None:
        work = (record / WORK_DIR).resolve()   # the tests and the grade run from the root
        work.mkdir()
    else:
        work = kata.folder if impl == "katas" else Path(impl).expanduser().resolve()
        if work.exists() and not work.is_dir():
            raise WorkspaceError(f"--impl {impl}: {work} is not a folder")
        if work.is_dir() and any(work.iterdir()):
            problems = differs_from_stub(work, stub)
            if problems:
                raise WorkspaceError(
                    f"{work} is not the stub, so the candidate would start on code already "
                    "there:\n  " + "\n  ".join(problems) + "\nDrop --impl (each session "
                    "gets a fresh workspace of its own), or restore the stub (git checkout "
                    f"-- katas/{kata.name}, or empty the folder), then start again.")
            return work
        work.mkdir(parents=True, exist_ok=True)
    for rel, text in stub.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text, encoding="utf-8")
    (work / "README.md").write_text(candidate_prompt(kata) + "\n", encoding="utf-8")
    return work


def workspace_diff(work: Path, stub: dict[str, str], name: str) -> str:
    """The workspace's code as a unified diff against the stub (every .py file)."""
    if not (work / "__init__.py").is_file():
        return f"(the workspace {work} holds no __init__.py)"
    parts = []
    for path in code_files(work):
        rel = path.relative_to(work).as_posix()
        base = stub.get(rel)
        try:
            now = _read(path)
        except OSError:
            continue
        parts.append("".join(difflib.unified_diff(
            (base or "").splitlines(keepends=True), now.splitlines(keepends=True),
            fromfile=f"stub katas/{name}/{rel}" if base is not None else "/dev/null",
            tofile=f"final {rel}")))
    parts += [f"--- stub katas/{name}/{rel}\n+++ (deleted)\n" for rel in stub
              if not (work / rel).is_file()]
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts if p) or \
        "(no change from the stub)"


def load_problem(work: Path) -> str | None:
    """'SyntaxError at line N' (with the file) when the workspace's code does not compile."""
    for path in code_files(work):
        try:
            compile(path.read_bytes(), str(path), "exec")
        except SyntaxError as exc:
            where = "" if path.name == "__init__.py" and path.parent == work else \
                f" in {path.relative_to(work)}"
            return f"{type(exc).__name__} at line {exc.lineno}{where}: {exc.msg}"
        except (OSError, ValueError) as exc:
            return f"{path.name} cannot be read: {exc}"
    return None
