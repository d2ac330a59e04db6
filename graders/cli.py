"""Command-line entry points behind the nox sessions: start, kata, list.

    python -m graders.cli start            how to begin, and the katas
    python -m graders.cli kata NAME [--impl katas|solutions|PATH] [pytest args]
    python -m graders.cli list
    python -m graders.cli table            the README's kata table, in Markdown
"""

from __future__ import annotations

import sys

from graders import catalog, launch



def _points(k: catalog.Kata, sep: str) -> str:
    """Points graded by tests on the CPU, then the optional parts: GPU timings, interviewer."""
    hardware = sum(i.points for i in k.tested_items if i.hardware)
    interviewer = sum(i.points for i in k.rubric if i.graded_by == "interviewer")
    return (f"{k.max_score - hardware}" + (f"{sep}{hardware} hardware" if hardware else "")
            + (f"{sep}{interviewer} interviewer" if interviewer else ""))


def list_table() -> str:
    katas = catalog.load_all()
    rows = [("kata", "title", "min", "difficulty", "points", "needs")]
    for k in katas:
        points = _points(k, " +")
        rows.append((k.name, k.title, str(k.minutes), k.difficulty, points,
                     ", ".join(k.requires) or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table() -> str:
    """The README's kata table (selftest checks the README holds exactly this)."""
    lines = ["| kata | title | minutes | difficulty | points | needs |",
             "|---|---|---|---|---|---|"]
    for k in catalog.load_all():
        points = _points(k, " + ")
        lines.append(f"| `{k.name}` | {k.title} | {k.minutes} | {k.difficulty} | {points} | "
                     f"{', '.join(k.requires) or '-'} |")
    return "\n".join(lines)


def start() -> int:
    print("inference-katas: pick a kata, read its prompt, fill in the stub, run its tests.\n")
    print(list_table())
    print("\nStart one:\n"
          "  1. read   katas/NAME/README.md   (the prompt)\n"
          "  2. edit   katas/NAME/__init__.py (the stub)\n"
          "  3. run    nox -s kata -- NAME    (public tests, about a second)")
    if catalog.HIDDEN_TESTS_DIR.is_dir():
        print("  4. grade  nox -s grade -- NAME   (hidden tests too, a score per rubric item)")
    else:
        print("  4. check  nox -s grade -- NAME   (the public tests under the grader: not a "
              "score,\n                                   the hidden tests are not in this "
              "bundle)")
    return 0


def kata(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        return start()
    name, rest = argv[0], argv[1:]
    try:
        k = catalog.load(name)
    except catalog.CatalogError as exc:
        print(f"kata: {exc}", file=sys.stderr)
        return 2
    import os

    import pytest

    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    args = launch.pytest_args([str(k.public_tests)], profile="kata", quiet=False,
                              extra=["-q", "--tb=short", *rest])
    print(f"{k.title}: public tests  (prompt: katas/{name}/README.md)")
    return int(pytest.main(args))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] == "start":
        return start()
    if argv[0] == "list":
        print(list_table())
        return 0
    if argv[0] == "table":
        print(markdown_table())
        return 0
    if argv[0] == "kata":
        return kata(argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
