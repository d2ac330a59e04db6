"""The mutant kill matrix of a kata: which rubric items each known-wrong solution loses.

    python -m graders.killmatrix NAME [--jobs N]

Grades every mutant in graders/mutants/NAME/ (and every solution in
graders/alternatives/NAME/) with the full public + hidden suite and prints a Markdown table:
one row per mutant, the item its docstring names, the items it lost, and whether the named
item is among them.
"""

from __future__ import annotations

import argparse
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from graders import catalog, grade

RUBRIC_LINE = re.compile(r"^Rubric:\s*(\S+)\s*$", re.MULTILINE)


def mutant_files(kata: catalog.Kata) -> list[Path]:
    return sorted(p for p in kata.mutants_dir.glob("*.py") if p.name != "__init__.py")


def alternative_files(kata: catalog.Kata) -> list[Path]:
    """Independent correct solutions: single files, or folders (a copy of the kata folder,
    for katas whose submission holds more than the module, e.g. a test file)."""
    folder = catalog.ROOT / "graders" / "alternatives" / kata.name
    files = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
    files += [p for p in folder.glob("*/__init__.py")]
    return sorted(files)


def named_item(path: Path) -> str:
    """The rubric item a mutant's docstring names (``*``: every item)."""
    import ast

    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    found = RUBRIC_LINE.search(doc)
    if not found:
        raise ValueError(f"{path}: the docstring needs a line 'Rubric: <item>'")
    return found.group(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.killmatrix")
    parser.add_argument("kata")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    kata = catalog.load(args.kata)
    files = mutant_files(kata) + alternative_files(kata)

    def one(path: Path) -> grade.Grade:
        return grade.run(kata.name, str(path))

    with ThreadPoolExecutor(args.jobs) as pool:
        grades = list(pool.map(one, files))
    print(f"| {kata.name} | named item | items lost | caught | score | seconds |")
    print("|---|---|---|---|---|---|")
    ok = True
    for path, g in zip(files, grades):
        lost = [r.item.id for r in g.items if r.status == "failed"]
        if "alternatives" in path.parts:
            caught = "full marks" if not lost else "WRONG: a correct solution lost items"
            ok &= not lost
            label = "(correct)"
        else:
            label = named_item(path)
            hit = all(i.id in lost for i in kata.tested_items) if label == "*" else label in lost
            caught = "yes" if hit else "NO"
            ok &= hit
        stem = path.parent.name if path.name == "__init__.py" else path.stem
        print(f"| {stem} | {label} | {', '.join(lost) or '-'} | {caught} | "
              f"{g.score}/{g.max_score} | {g.seconds:.1f} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
