"""Grade a folder of submissions in parallel, and merge the summaries of several shards.

    nox -s grade -- NAME --impl DIR --jobs N [--shard I/K] --out OUT
    python -m graders.batch merge OUT/summary.csv OTHER/summary.csv ... > summary.csv

Each entry of DIR (a ``.py`` file, or a folder holding ``__init__.py``, ``NAME.py`` or
``NAME/__init__.py``) is one submission. Each gets ``OUT/<entry>/results.json`` and
``junit.xml``, in a folder named by the entry's whole name (``alice.py`` and ``alice/`` get
two folders); ``OUT/summary.csv`` has one row per submission: its score, the score of each
rubric item (columns ``rubric.<item>``, so no item can clash with a fixed column), the time,
and errors. It is written even when grading stops early. ``--shard I/K`` grades only the
entries whose position in the sorted list is I modulo K, so K machines can split a folder
between them.

Before anything is graded, the batch refuses (with a message naming them) entries whose
names would be ambiguous or unsafe as report folders: two names equal after Unicode
normalisation and case folding, a name the batch writes itself (``summary.csv``), a name
with control characters or bytes that are not UTF-8, a name a spreadsheet would run as a
formula; and an output folder inside the submissions folder.
"""

from __future__ import annotations

import csv
import io
import sys
import time
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from graders import catalog, grade

FIXED = ["submission", "score", "max_score"]
TAIL = ["seconds", "restarts", "errors"]
RUBRIC_PREFIX = "rubric."
OUTPUTS = ("summary.csv", "summary.csv.tmp")   # what the batch itself writes into OUT


class BatchError(ValueError):
    """The batch cannot be graded as given (refused before anything runs)."""


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


def _fold(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


def check_names(folder: Path, out: Path) -> None:
    """Refuse, before grading, a batch whose entry names cannot each own a report folder
    and a summary row unambiguously. Every problem is listed in one message."""
    problems: list[str] = []
    try:
        folder_real, out_real = folder.resolve(), out.resolve()
    except OSError as exc:
        raise BatchError(f"cannot resolve {folder} or {out}: {exc}") from None
    if out_real == folder_real or folder_real in out_real.parents:
        problems.append(f"the output folder {out} lies inside the submissions folder {folder}; "
                        "its report folders would mix with the submissions")
    seen: dict[str, str] = {}
    reserved = {_fold(n) for n in OUTPUTS}
    for entry in entries(folder):
        name = entry.name
        shown = ascii(name)
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            problems.append(f"{shown}: the name is not valid UTF-8")
            continue
        if any(unicodedata.category(c).startswith("C") for c in name):
            problems.append(f"{shown}: the name holds control or invisible characters")
        if name[:1] in ("=", "+", "-", "@"):
            problems.append(f"{shown}: a name starting with {name[0]!r} is read as a formula "
                            "by spreadsheets that open summary.csv")
        key = _fold(name)
        if key in reserved:
            problems.append(f"{shown}: the batch writes {name!r} itself")
        if key in seen:
            problems.append(f"{shown} and {ascii(seen[key])}: the same name once case and "
                            "Unicode normalisation are ignored")
        else:
            seen[key] = name
    if problems:
        raise BatchError("refusing to grade this batch (rename these entries):\n  "
                         + "\n  ".join(problems))


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard wants I/K (I counts from 0: 0/K is the first of K "
                         f"shards), got {text!r}") from None
    if not 0 <= index < count:
        raise ValueError(f"--shard {text}: I counts from 0, so it must lie in 0..K-1 "
                         f"(the shards of K={count} are 0/{count} .. {count - 1}/{count})")
    return index, count


def grade_folder(kata_name: str, folder: Path, out: Path, jobs: int,
                 shard: tuple[int, int] | None = None, seed: int | None = None,
                 per_test_timeout: float = grade.PER_TEST_TIMEOUT_S,
                 isolate: bool = True, hidden_visibility: str = "hidden",
                 rubric: str | None = None, include_hidden: bool = True,
                 require_isolation: bool = False,
                 profile: str | None = None,
                 hidden_detail: str = "rules") -> list[dict[str, str]]:
    """Grade every entry (of one shard); raises BatchError, before grading, for names
    that ``check_names`` refuses. summary.csv is written even if grading stops early."""
    kata = catalog.load(kata_name)
    check_names(folder, out)
    max_score = kata.max_score if not rubric else sum(
        i.points for i in kata.tested_items if i.id in rubric.split(","))
    subs = entries(folder, shard)
    out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict[str, str]] = {}

    def one(path: Path) -> dict[str, str]:
        start = time.monotonic()
        row = {"submission": path.name}
        try:
            g = grade.run(kata_name, str(path), seed=seed, per_test_timeout=per_test_timeout,
                          isolate=isolate, rubric=rubric, include_hidden=include_hidden,
                          require_isolation=require_isolation, profile=profile)
            g.hidden_detail = hidden_detail
            grade.write_reports(g, out / path.name, hidden_visibility)
            row.update(score=str(g.score), max_score=str(g.max_score),
                       restarts=str(g.restarts), errors="")
            for r in g.items:
                row[RUBRIC_PREFIX + r.item.id] = str(r.score)
        except Exception as exc:  # noqa: BLE001 - one broken entry must not stop the batch
            row.update(score="0", max_score=str(max_score), restarts="0",
                       errors=f"{type(exc).__name__}: {exc}"[:500])
        row["seconds"] = f"{time.monotonic() - start:.1f}"
        rows[path.name] = row
        print(f"  {ascii(path.name)[1:-1]}: {row['score']}/{row['max_score']} "
              f"({row['seconds']} s)" + (f"  error: {row['errors']}" if row["errors"] else ""),
              flush=True)
        return row

    try:
        with ThreadPoolExecutor(max(1, jobs)) as pool:
            list(pool.map(one, subs))
    finally:
        for path in subs:  # entries never reached still get a row that says so
            rows.setdefault(path.name, {"submission": path.name, "score": "0",
                                        "max_score": str(max_score), "restarts": "0",
                                        "seconds": "0.0", "errors": "not graded: the batch stopped"})
        write_summary(kata, list(rows.values()), out / "summary.csv")
    return [rows[p.name] for p in subs]


def columns(kata: catalog.Kata) -> list[str]:
    return FIXED + [RUBRIC_PREFIX + i.id for i in kata.tested_items] + TAIL


def write_summary(kata: catalog.Kata, rows: list[dict[str, str]], path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns(kata), restval="0")
        writer.writeheader()
        for row in sorted(rows, key=lambda r: r["submission"]):
            writer.writerow(row)
    tmp.replace(path)


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
