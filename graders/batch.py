"""Grade a folder of submissions in parallel, and merge the summaries of several shards.

    nox -s grade -- NAME --impl DIR --jobs N [--shard I/K] --out OUT
    python -m graders.batch merge OUT/summary.csv OTHER/summary.csv ... > summary.csv

Each entry of DIR (a ``.py`` file, or a folder holding ``__init__.py``, ``NAME.py`` or
``NAME/__init__.py``) is one submission. Each gets ``OUT/<entry>/results.json`` and
``junit.xml``; ``OUT/summary.csv`` has one row per submission: its score, the score of each
rubric item, the time, and errors. ``--shard I/K`` grades only the entries whose position
in the sorted list is I modulo K, so K machines can split a folder between them.
"""

from __future__ import annotations

import csv
import io
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from graders import catalog, grade

FIXED = ["submission", "score", "max_score"]
TAIL = ["seconds", "restarts", "errors"]


def is_batch(kata: str, path: Path) -> bool:
    """A folder of submissions, rather than one submission that is a folder."""
    if not path.is_dir():
        return False
    return not any((path / p).is_file() for p in ("__init__.py", f"{kata}.py",
                                                   f"{kata}/__init__.py"))


def entries(path: Path, shard: tuple[int, int] | None = None) -> list[Path]:
    found = sorted(p for p in path.iterdir()
                   if not p.name.startswith((".", "_")) and (p.suffix == ".py" or p.is_dir()))
    if shard is not None:
        index, count = shard
        found = [p for n, p in enumerate(found) if n % count == index]
    return found


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard wants I/K, got {text!r}") from None
    if not 0 <= index < count:
        raise ValueError(f"--shard {text}: I must lie in 0..K-1")
    return index, count


def grade_folder(kata_name: str, folder: Path, out: Path, jobs: int,
                 shard: tuple[int, int] | None = None, seed: int | None = None,
                 per_test_timeout: float = grade.PER_TEST_TIMEOUT_S,
                 isolate: bool = True, require_isolation: bool = False) -> list[dict[str, str]]:
    kata = catalog.load(kata_name)
    subs = entries(folder, shard)
    out.mkdir(parents=True, exist_ok=True)

    def one(path: Path) -> dict[str, str]:
        start = time.monotonic()
        row = {"submission": path.name}
        try:
            g = grade.run(kata_name, str(path), seed=seed, per_test_timeout=per_test_timeout,
                          isolate=isolate, require_isolation=require_isolation)
            grade.write_reports(g, out / path.stem)
            row.update(score=str(g.score), max_score=str(g.max_score),
                       restarts=str(g.restarts), errors="")
            for r in g.items:
                row[r.item.id] = str(r.score)
        except Exception as exc:  # noqa: BLE001 - one broken entry must not stop the batch
            row.update(score="0", max_score=str(kata.max_score), restarts="0",
                       errors=f"{type(exc).__name__}: {exc}"[:500])
        row["seconds"] = f"{time.monotonic() - start:.1f}"
        print(f"  {path.name}: {row['score']}/{row['max_score']} ({row['seconds']} s)"
              + (f"  error: {row['errors']}" if row["errors"] else ""), flush=True)
        return row

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        rows = list(pool.map(one, subs))
    write_summary(kata, rows, out / "summary.csv")
    return rows


def columns(kata: catalog.Kata) -> list[str]:
    return FIXED + [i.id for i in kata.tested_items] + TAIL


def write_summary(kata: catalog.Kata, rows: list[dict[str, str]], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns(kata), restval="0")
        writer.writeheader()
        for row in sorted(rows, key=lambda r: r["submission"]):
            writer.writerow(row)


def merge(paths: list[Path]) -> str:
    """One summary from several shards' summaries (same kata, same columns)."""
    header: list[str] | None = None
    rows: list[dict[str, str]] = []
    for path in paths:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if header is None:
                header = list(reader.fieldnames or [])
            elif list(reader.fieldnames or []) != header:
                raise ValueError(f"{path}: columns differ from the first summary's")
            rows.extend(reader)
    if header is None:
        raise ValueError("nothing to merge")
    seen: set[str] = set()
    for row in rows:
        if row["submission"] in seen:
            raise ValueError(f"submission {row['submission']!r} appears in two shards")
        seen.add(row["submission"])
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=header)
    writer.writeheader()
    for row in sorted(rows, key=lambda r: r["submission"]):
        writer.writerow(row)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) >= 2 and argv[0] == "merge":
        try:
            sys.stdout.write(merge([Path(p) for p in argv[1:]]))
        except (OSError, ValueError) as exc:
            print(f"merge: {exc}", file=sys.stderr)
            return 2
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
