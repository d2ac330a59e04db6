"""Batch grading: a folder of submissions, shards, the summary CSV and its merge."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graders import batch, catalog

KATA = "radix_cache"
BAD = Path(__file__).parent / "bad_submissions"


def make_folder(tmp_path: Path) -> Path:
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(catalog.MUTANTS_DIR / KATA / "empty.py", subs / "alice.py")
    shutil.copy(BAD / "syntax_error.py", subs / "bob.py")
    (subs / "carol").mkdir()
    shutil.copy(catalog.SOLUTIONS_DIR / f"{KATA}.py", subs / "carol" / f"{KATA}.py")
    return subs


def test_entries_shards_and_batch_detection(tmp_path: Path) -> None:
    subs = make_folder(tmp_path)
    assert batch.is_batch(KATA, subs)
    assert not batch.is_batch(KATA, subs / "carol"), "a folder holding NAME.py is one submission"
    names = [p.name for p in batch.entries(subs)]
    assert names == ["alice.py", "bob.py", "carol"]
    shards = [[p.name for p in batch.entries(subs, (i, 2))] for i in range(2)]
    assert sorted(shards[0] + shards[1]) == names and not set(shards[0]) & set(shards[1])
    for bad in ("1", "2/2", "x/3", "-1/2"):
        with pytest.raises(ValueError):
            batch.parse_shard(bad)


def test_merge_rejects_mismatched_or_duplicate_shards(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    a.write_text("submission,score\nx,1\n")
    b.write_text("submission,score\ny,2\n")
    c.write_text("submission,points\nz,3\n")
    assert batch.merge([b, a]).splitlines() == ["submission,score", "x,1", "y,2"]
    with pytest.raises(ValueError, match="columns"):
        batch.merge([a, c])
    with pytest.raises(ValueError, match="two shards"):
        batch.merge([a, a])


def test_grade_a_folder_in_two_shards_and_merge(tmp_path: Path) -> None:
    subs = make_folder(tmp_path)
    outs = []
    for shard in ("0/2", "1/2"):
        out = tmp_path / f"out-{shard[0]}"
        proc = subprocess.run(
            [sys.executable, "-m", "graders.grade", KATA, "--impl", str(subs), "--jobs", "2",
             "--shard", shard, "--out", str(out)],
            cwd=catalog.ROOT, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outs.append(out / "summary.csv")
    merged = batch.merge(outs)
    rows = {r["submission"]: r for r in csv.DictReader(merged.splitlines())}
    assert set(rows) == {"alice.py", "bob.py", "carol"}
    assert rows["carol"]["score"] == rows["carol"]["max_score"] == "100"
    assert rows["alice.py"]["score"] == "0" and rows["bob.py"]["score"] == "0"
    assert rows["carol"]["edge_split"] == "15"
    for out, name in ((tmp_path / "out-0", "alice"), (tmp_path / "out-1", "bob")):
        assert (out / name / "results.json").is_file() and (out / name / "junit.xml").is_file()
