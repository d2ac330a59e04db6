"""Mock interview mode, driven for real in a pseudo-terminal (the bundle: test_bundle.py)."""

from __future__ import annotations

import html.parser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from graders import catalog

KATA = "radix_cache"


class _Collect(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_interview_in_a_pseudo_terminal(tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(catalog.KATAS_DIR / KATA, work)
    out = tmp_path / "interviews"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="")
    child = pexpect.spawn(sys.executable, ["-m", "graders.interview", KATA, "--minutes", "20",
                                           "--impl", str(work), "--out", str(out),
                                           "--profile", "kata"],
                          cwd=str(catalog.ROOT), env=env, encoding="utf-8", timeout=120,
                          dimensions=(50, 200))
    try:
        child.expect("commands: hint, test, submit, quit")
        child.expect(r"left\] > ")
        assert "follow-up" not in child.before, "the candidate view must not show interviewer notes"
        child.sendline("hint")
        child.expect(r"hint 1/\d+: ")
        child.sendline("test")
        child.expect(r"test: 0/7 rubric items pass")
        # the candidate saves a complete solution: the watch run must fire by itself
        (work / "__init__.py").write_text((catalog.SOLUTIONS_DIR / f"{KATA}.py").read_text())
        child.expect(r"saved: 7/7 rubric items pass")
        child.sendline("submit")
        child.expect(r"score: 100/100", timeout=900)
        child.expect(r"report: (\S+)report\.md")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    (report_dir,) = list(out.iterdir())
    md = (report_dir / "report.md").read_text()
    assert "## Score: 100/100" in md
    assert "| edge_split | 15/15 | passed |" in md and "| edge_split | 15/15 | passed | - |" not in md
    assert "## Hints taken" in md and "- 00:" in md.split("## Hints taken")[1].split("##")[0]
    assert "+class RadixCache" in md or "+    def _match" in md, "the final code diff is missing"
    assert "ended by: submitted" in md
    parser = _Collect()
    parser.feed((report_dir / "report.html").read_text())
    assert {"table", "h1", "pre", "li"} <= set(parser.tags)
    assert "Score: 100/100" in "".join(parser.text)


def test_interviewer_view_shows_notes_candidate_view_does_not() -> None:
    proc = subprocess.run([sys.executable, "-m", "graders.interview", KATA, "--interviewer"],
                          cwd=catalog.ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "follow-up:" in proc.stdout and "looks for:" in proc.stdout
    for item in catalog.load(KATA).rubric:
        assert item.id in proc.stdout


@pytest.mark.parametrize("name", catalog.kata_names())
def test_every_kata_has_interviewer_material(name: str) -> None:
    kata = catalog.load(name)
    assert kata.raw.get("interviewer", {}).get("overview"), f"{name}: no [interviewer] overview"
    for item in kata.rubric:
        assert item.extra.get("follow_ups"), f"{name}: rubric item {item.id} has no follow_ups"
        if item.graded_by == "interviewer":
            assert item.extra.get("good_answer"), f"{name}: {item.id} needs a good_answer"
