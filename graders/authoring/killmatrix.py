"""The mutant kill matrix of a kata: which rubric items each known-wrong solution loses.

    python -m graders.authoring.killmatrix NAME [--jobs N] [--in-process]

Grades every mutant in graders/mutants/NAME/ (built from its patch) and every solution in
graders/alternatives/NAME/ with the full public + hidden suite and prints a Markdown table:
one row per mutant, the item it names, the items it lost, and whether the named item is
among them.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor

from graders import catalog, grade
from graders.authoring import mutant


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.authoring.killmatrix")
    parser.add_argument("kata")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--in-process", action="store_true",
                        help="run each implementation inside the test process (faster)")
    args = parser.parse_args(argv)
    kata = catalog.load(args.kata)
    names = mutant.names(kata.name)
    specs = [mutant.SPEC_PREFIX + n for n in names] + mutant.alternative_specs(kata.name)

    def one(spec: str) -> grade.Grade:
        return grade.run(kata.name, spec, isolate=not args.in_process)

    with ThreadPoolExecutor(args.jobs) as pool:
        grades = list(pool.map(one, specs))
    print(f"| {kata.name} | named item | items lost | caught | score | seconds |")
    print("|---|---|---|---|---|---|")
    ok = True
    for spec, g in zip(specs, grades):
        lost = [r.item.id for r in g.items if r.status == "failed"]
        if spec.startswith(mutant.SPEC_PREFIX):
            stem = spec[len(mutant.SPEC_PREFIX):]
            label = mutant.load(kata.name, stem).rubric
            hit = all(i.id in lost for i in kata.tested_items) if label == "*" else label in lost
            caught = "yes" if hit else "NO"
            ok &= hit
        else:
            stem = spec.rsplit("/", 1)[-1].removesuffix(".py")
            caught = "full marks" if not lost else "WRONG: a correct solution lost items"
            ok &= not lost
            label = "(correct)"
        print(f"| {stem} | {label} | {', '.join(lost) or '-'} | {caught} | "
              f"{g.score}/{g.max_score} | {g.seconds:.1f} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
