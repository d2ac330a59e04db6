"""Mock interview mode, driven for real in a pseudo-terminal, and the candidate bundle."""

from __future__ import annotations

import html.parser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from graders import bundle, catalog

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


def test_bundle_has_no_reference_and_no_hidden_test_and_runs(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    files = bundle.write_bundle(out, [KATA])
    rel = {str(p.relative_to(out)) for p in files}
    assert "katas/radix_cache/__init__.py" in rel and "tests/radix_cache/__init__.py" in rel
    assert not any(r.startswith(("solutions", "graders/hidden", "graders/mutants",
                                 "graders/alternatives", "graders/hostile", "selftest"))
                   for r in rel), sorted(rel)
    secret_sources = [p.read_text() for p in (catalog.SOLUTIONS_DIR.glob("*.py"))]
    secret_sources += [p.read_text() for p in catalog.HIDDEN_TESTS_DIR.rglob("*.py")
                       if p.stat().st_size > 200]
    hidden_names = {line.split("def ")[1].split("(")[0]
                    for p in catalog.HIDDEN_TESTS_DIR.rglob("test_*.py")
                    for line in p.read_text().splitlines() if line.startswith("def test_")}
    secret_sources = [t for t in secret_sources if len(t) > 200]
    for p in files:
        text = p.read_text(errors="replace")
        assert text not in secret_sources, f"{p} is a copy of a reference or hidden test"
        leaked = [n for n in hidden_names if n in text]
        assert not leaked, f"{p} names hidden tests: {leaked[:3]}"
    # its own `nox -s kata` runs (reusing this checkout's environment to skip the install)
    (out / ".nox").mkdir()
    os.symlink(catalog.ROOT / ".nox" / "katas-env", out / ".nox" / "katas-env")
    stamp = catalog.ROOT / ".nox" / "katas-env" / "requirements.sha256"
    if not stamp.exists():
        pytest.skip("no shared environment to reuse (run through nox -s tests)")
    proc = subprocess.run([sys.executable, "-m", "nox", "-s", "kata", "--", KATA],
                          cwd=out, capture_output=True, text=True, timeout=600)
    assert "not implemented yet" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "rubric: Radix-tree prefix cache" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "nox", "-s", "kata", "--", KATA, "--impl",
                           str(catalog.SOLUTIONS_DIR / f"{KATA}.py")],
                          cwd=out, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "11 passed" in proc.stdout, proc.stdout[-2000:]
