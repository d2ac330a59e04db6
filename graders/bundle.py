"""Write a self-contained folder for a candidate: stubs, prompts, public tests, the harness.

    nox -s bundle -- OUT [NAMES...]

No reference solutions, no hidden tests, no mutants, no alternatives, no hostile
submissions, and no data file that only the hidden tests use. The bundle's own
``nox -s kata -- NAME`` runs the public tests; ``nox -s grade`` there scores the public
tests only.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from graders import catalog

HARNESS = ["__init__.py", "catalog.py", "impl.py", "plugin.py", "cli.py", "grade.py",
           "typecheck.py", "interview.py", "sandbox.py", "wire.py", "worker.py", "batch.py",
           "candidate_tests.py", "measure.py", "outside.py"]
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")


def write_bundle(out: Path, names: list[str]) -> list[Path]:
    root = catalog.ROOT
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} exists and is not empty")
    katas = [catalog.load(n) for n in (names or catalog.kata_names())]
    out.mkdir(parents=True, exist_ok=True)
    for f in ("pyproject.toml", "noxfile.py", "conftest.py"):
        shutil.copy(root / f, out / f)
    (out / "graders").mkdir()
    for f in HARNESS:
        shutil.copy(root / "graders" / f, out / "graders" / f)
    if (root / "graders" / "support").is_dir():
        shutil.copytree(root / "graders" / "support", out / "graders" / "support", ignore=IGNORE)
    for pkg in ("katas", "tests"):
        (out / pkg).mkdir()
        (out / pkg / "__init__.py").write_text("")
    for k in katas:
        shutil.copytree(k.folder, out / "katas" / k.name, ignore=IGNORE)
        shutil.copytree(k.public_tests, out / "tests" / k.name, ignore=IGNORE)
    shipped = [p for p in out.rglob("*") if p.is_file() and p.suffix in (".py", ".md", ".toml")]
    blob = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in shipped)
    for folder in ("data", "hardware_fixtures"):
        if not (root / folder).is_dir():
            continue
        for src in sorted(p for p in (root / folder).rglob("*") if p.is_file()):
            # a data file ships when the public side names it (or, for data/, its folder)
            keys = {src.name, src.stem}
            if folder == "data":
                keys.add(src.parent.name)
            if not any(k in blob for k in keys):
                continue
            dest = out / src.relative_to(root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest)
    table = "\n".join(f"| `{k.name}` | {k.title} | {k.minutes} | {k.difficulty} |" for k in katas)
    (out / "README.md").write_text(f"""# inference-katas: candidate bundle

Katas for LLM inference engineering interviews. For each kata: read the prompt
`katas/NAME/README.md`, fill in the stub `katas/NAME/__init__.py`, and run its public tests:

```sh
pip install nox          # once
nox -s kata -- NAME      # the public tests (about a second when warm)
nox -s interview -- NAME # a timed mock interview: countdown, tests on every save, hints
nox -s typecheck -- NAME # mypy --strict, and your API against the stub's
```

| kata | title | minutes | difficulty |
|---|---|---|---|
{table}

The hidden tests that decide a grade are not in this bundle.
""", encoding="utf-8")
    return sorted(p for p in out.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nox -s bundle --")
    parser.add_argument("out", type=Path)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    try:
        files = write_bundle(args.out, args.names)
    except (catalog.CatalogError, FileExistsError) as exc:
        print(f"bundle: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
