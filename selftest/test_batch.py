"""Batch grading: a folder of submissions, shards, the summary CSV and its merge, and
entry names that must not be able to damage each other's reports."""

from __future__ import annotations

import csv
import json
import dataclasses
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from graders import batch, catalog
from graders.authoring import mutant

KATA = "radix_cache"
BAD = Path(__file__).parent / "bad_submissions"


def make_folder(tmp_path: Path) -> Path:
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(mutant.scratch_file(KATA, "empty"), subs / "alice.py")
    shutil.copy(BAD / "syntax_error.py", subs / "bob.py")
    (subs / "carol").mkdir()
    shutil.copy(catalog.SOLUTIONS_DIR / f"{KATA}.py", subs / "carol" / f"{KATA}.py")
    return subs


def grade_cli(subs: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graders.grade", KATA, "--impl", str(subs), "--out", str(out),
         *extra], cwd=catalog.ROOT, capture_output=True, text=True, timeout=900)


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


@pytest.mark.parametrize("names, message", [
    (["Alice.py", "alice.py"], "same name"),
    ([unicodedata.normalize("NFC", "zoë.py"), unicodedata.normalize("NFD", "zoë.py")],
     "same name"),
    (["summary.csv/"], "writes 'summary.csv' itself"),
    (["tab\there.py"], "control"),
    (["=cmd.py"], "formula"),
], ids=["case", "unicode", "summary-folder", "control-char", "formula"])
def test_ambiguous_or_unsafe_names_are_refused_up_front(
        tmp_path: Path, names: list[str], message: str) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in names + ["fine.py"]:
        if name.endswith("/"):
            (subs / name.rstrip("/")).mkdir()
            (subs / name.rstrip("/") / "__init__.py").write_text("")
        else:
            (subs / name).write_text("")
    if len({p.name for p in subs.iterdir()}) < len(names) + 1:
        pytest.skip("this filesystem folds these names itself")
    with pytest.raises(batch.BatchError, match=message):
        batch.check_names(subs, tmp_path / "out")
    out = tmp_path / "out-cli"
    proc = grade_cli(subs, out)
    assert proc.returncode == 2 and "refusing to grade" in proc.stderr, proc.stderr
    assert not out.exists(), "a refused batch writes nothing"


def test_an_output_folder_inside_the_submissions_is_refused(tmp_path: Path) -> None:
    subs = make_folder(tmp_path)
    with pytest.raises(batch.BatchError, match="inside the submissions folder"):
        batch.check_names(subs, subs / "out")
    batch.check_names(subs, tmp_path / "out")  # elsewhere is fine


def test_rubric_columns_cannot_clash_with_fixed_ones(tmp_path: Path) -> None:
    kata = catalog.load(KATA)
    clash = dataclasses.replace(kata, rubric=kata.rubric + tuple(
        dataclasses.replace(kata.rubric[0], id=name)
        for name in ("errors", "score", "submission", "seconds")))
    cols = batch.columns(clash)
    assert len(cols) == len(set(cols)), f"duplicate columns: {cols}"
    rows = [{"submission": "x.py", "score": "5", "max_score": "9", "rubric.errors": "3",
             "errors": "", "seconds": "1.0", "restarts": "0"}]
    batch.write_summary(clash, rows, tmp_path / "summary.csv")
    got = list(csv.DictReader((tmp_path / "summary.csv").open()))
    assert got[0]["rubric.errors"] == "3" and got[0]["errors"] == "" and got[0]["score"] == "5"


def test_entries_named_alike_keep_their_own_reports(tmp_path: Path) -> None:
    """alice.py and alice/ get two report folders; summary.csv.py is an ordinary entry;
    the summary is written with one row each."""
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(catalog.SOLUTIONS_DIR / f"{KATA}.py", subs / "alice.py")
    (subs / "alice").mkdir()
    shutil.copy(mutant.scratch_file(KATA, "empty"), subs / "alice" / "__init__.py")
    shutil.copy(catalog.SOLUTIONS_DIR / f"{KATA}.py", subs / "summary.csv.py")
    out = tmp_path / "out"
    proc = grade_cli(subs, out, "--rubric", "atomic_failure", "--in-process", "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["submission"]: r for r in csv.DictReader((out / "summary.csv").open())}
    assert set(rows) == {"alice.py", "alice", "summary.csv.py"}
    points = str(catalog.load(KATA).item("atomic_failure").points)
    assert rows["alice.py"]["score"] == points and rows["alice"]["score"] == "0"
    assert rows["summary.csv.py"]["score"] == points
    import json

    for name, score in (("alice.py", int(points)), ("alice", 0), ("summary.csv.py", int(points))):
        data = json.loads((out / name / "results.json").read_text())
        assert data["score"] == score, name


def test_grade_a_folder_in_two_shards_and_merge(tmp_path: Path) -> None:
    subs = make_folder(tmp_path)
    outs = []
    for shard in ("0/2", "1/2"):
        out = tmp_path / f"out-{shard[0]}"
        proc = grade_cli(subs, out, "--jobs", "2", "--shard", shard, "--rubric",
                         "edge_split,atomic_failure", "--profile", "smoke")
        assert proc.returncode == 0, proc.stderr[-2000:]
        outs.append(out / "summary.csv")
    merged = batch.merge(outs)
    rows = {r["submission"]: r for r in csv.DictReader(merged.splitlines())}
    assert set(rows) == {"alice.py", "bob.py", "carol"}
    kata = catalog.load(KATA)
    best = str(kata.item("edge_split").points + kata.item("atomic_failure").points)
    assert rows["carol"]["score"] == rows["carol"]["max_score"] == best
    assert rows["alice.py"]["score"] == "0" and rows["bob.py"]["score"] == "0"
    assert rows["carol"]["rubric.edge_split"] == str(kata.item("edge_split").points)
    for out, name in ((tmp_path / "out-0", "alice.py"), (tmp_path / "out-1", "bob.py")):
        assert (out / name / "results.json").is_file() and (out / name / "junit.xml").is_file()
        data = json.loads((out / name / "results.json").read_text())
        assert data["extra_data"]["hypothesis_profile"] == "smoke", "--profile reaches a batch"
