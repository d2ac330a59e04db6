"""Mock interview mode, driven for real in a pseudo-terminal (the bundle: test_bundle.py)."""

from __future__ import annotations

import html.parser
import json
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
        child.expect("commands: hint, test, mark ITEM POINTS \\[NOTE\\], submit, quit")
        child.expect(r"left\] > ")
        assert "follow-up" not in child.before, "the candidate view must not show interviewer notes"
        child.sendline("hint")
        child.expect(r"hint 1/\d+: ")
        child.sendline("test")
        child.expect(r"test: 0/7 rubric items pass")
        child.sendline("mark edge_split 5")
        child.expect(r"mark refused: 'edge_split' is graded by the tests .* every item of this "
                     r"kata is graded by the tests")
        # the candidate saves a complete solution: the watch run must fire by itself
        (work / "__init__.py").write_text((catalog.SOLUTIONS_DIR / f"{KATA}.py").read_text())
        child.expect(r"saved: 7/7 rubric items pass")
        child.sendline("submit")
        child.expect(r"score: \d+/100", timeout=900)
        child.expect(r"report: (\S+)report\.md")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    (report_dir,) = list(out.iterdir())
    md = (report_dir / "report.md").read_text()
    if "## Score: 100/100" not in md:   # the grade table, failures in full, says why
        tables = [json.loads(line).get("table", "") for line in
                  (report_dir / "events.jsonl").read_text().splitlines()]
        raise AssertionError(md.split("## Hints taken")[0] + "\n".join(filter(None, tables)))
    assert "| edge_split | tests | 15/15 | passed |" in md
    assert "| edge_split | tests | 15/15 | passed | - |" not in md, "first passed: missing"
    assert "## Hints taken" in md and "- 00:" in md.split("## Hints taken")[1].split("##")[0]
    assert "+class RadixCache" in md or "+    def _match" in md, "the final code diff is missing"
    assert "ended by: submitted" in md
    page = (report_dir / "report.html").read_text()
    parser = _Collect()
    parser.feed(page)
    assert {"table", "h1", "pre", "li"} <= set(parser.tags)
    assert "Score: 100/100" in "".join(parser.text)
    # the diff is coloured: added lines in a class the page's CSS paints
    assert "<span class='add'>+class RadixCache" in page or "<span class='add'>+    def" in page
    assert ".add{background:" in page and ".del{background:" in page


def test_interviewer_view_shows_notes_candidate_view_does_not(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "graders.interview", KATA, "--interviewer",
                           "--out", str(tmp_path)],
                          cwd=catalog.ROOT, capture_output=True, text=True, timeout=60, input="")
    assert proc.returncode == 0, proc.stderr
    assert "follow-up:" in proc.stdout and "looks for:" in proc.stdout
    for item in catalog.load(KATA).rubric:
        assert item.id in proc.stdout
    assert "waiting for the candidate's session to start" in proc.stdout


@pytest.mark.parametrize("flags", [["--minutes", "30"], ["--no-hints"], ["--impl", "x"],
                                   ["--profile", "kata"]])
def test_interviewer_view_refuses_the_candidates_settings(flags: list[str],
                                                          tmp_path: Path) -> None:
    """--interviewer follows the candidate's session; a setting of that session given here
    would be ignored, so it is an error that names it."""
    proc = subprocess.run([sys.executable, "-m", "graders.interview", KATA, "--interviewer",
                           "--out", str(tmp_path), *flags],
                          cwd=catalog.ROOT, capture_output=True, text=True, timeout=60, input="")
    assert proc.returncode == 2
    assert flags[0] in proc.stderr and "candidate's command" in proc.stderr, proc.stderr
    assert "follow-up" not in proc.stdout


MARKED = "spec_decode"      # a kata with an interviewer-graded item
ITEM = "why_differ"


def _spawn(args: list[str]) -> pexpect.spawn:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="")
    return pexpect.spawn(sys.executable, ["-m", "graders.interview", *args],
                         cwd=str(catalog.ROOT), env=env, encoding="utf-8", timeout=120,
                         dimensions=(50, 250))


def test_marks_live_interviewer_view_and_combined_total(tmp_path: Path) -> None:
    """The interviewer's view follows the candidate's session in another terminal; marks
    from the candidate's prompt and from that view reach the report, whose total adds
    them to the tests' score; a mark after the end amends the report."""
    work = tmp_path / "work"
    shutil.copytree(catalog.KATAS_DIR / MARKED, work)
    out = tmp_path / "interviews"
    view = _spawn([MARKED, "--interviewer", "--out", str(out)])
    cand = None
    try:
        view.expect("waiting for the candidate's session to start")
        cand = _spawn([MARKED, "--minutes", "20", "--impl", str(work), "--out", str(out),
                       "--profile", "kata"])
        cand.expect(r"left\] > ")
        view.expect("following ")
        view.expect("the candidate's session started \\(20 minutes\\)")
        cand.sendline("hint")
        cand.expect(r"hint 1/\d+: ")
        view.expect(r"used, \d\d:\d\d left\] hint 1 taken: ")
        for bad, why in ((f"mark nosuch 3", "no rubric item 'nosuch'"),
                         ("mark greedy_accept 3", "is graded by the tests"),
                         (f"mark {ITEM} 11", "outside why_differ's range"),
                         (f"mark {ITEM} lots", "'lots' is not a number")):
            cand.sendline(bad)
            cand.expect(f"mark refused: [^\n]*{why}")
        cand.sendline(f"mark {ITEM} 4 explained the reduction order")
        cand.expect(f"marked {ITEM}: 4/10 \\(explained the reduction order\\)")
        (work / "__init__.py").write_text((catalog.SOLUTIONS_DIR / f"{MARKED}.py").read_text())
        cand.expect(r"saved: 7/7 rubric items pass")
        view.expect(r"saved: 7/7 rubric items pass")
        view.sendline(f'mark {ITEM} 7 "good answer on batch shapes"')
        view.expect(f"marked {ITEM}: 7/10")
        view.sendline("mark greedy_accept 15")
        view.expect("mark refused: 'greedy_accept' is graded by the tests")
        cand.sendline("submit")
        cand.expect(r"score: 100/100", timeout=600)
        cand.expect(r"report: (\S+)report\.md")
        cand.expect(pexpect.EOF)
        view.expect(r"graded by the tests: 100/100", timeout=60)
        view.expect(r"the session ended, by: submitted")
        view.expect(r"total: 107/110 \(tests 100/100 \+ interviewer 7/10\)")
        (report_dir,) = list(out.iterdir())
        md = (report_dir / "report.md").read_text()
        assert "## Score: 107/110 (tests 100/100 + interviewer 7/10)" in md, md[:1500]
        assert ("| why_differ | interviewer | 7/10 | marked (interviewer's view) | - | "
                "good answer on batch shapes |") in md
        assert "| greedy_accept | tests | 15/15 | passed |" in md
        data = json.loads((report_dir / "report.json").read_text())
        assert data["totals"]["score"] == 107 and data["totals"]["max_score"] == 110
        # the candidate's time stops at the submission; the grading is reported apart
        events = [json.loads(line) for line in (report_dir / "events.jsonl").read_text()
                  .splitlines()]
        grading = next(e for e in events if e["event"] == "grading")
        end = next(e for e in events if e["event"] == "end")
        assert data["grading_s"] > 0
        assert abs(data["time_used_s"] - grading["at"]) < 0.5
        assert data["time_used_s"] <= end["at"] - data["grading_s"] + 0.5
        assert f"the final grading's {data['grading_s']:.0f} second" in md
        # a mark after the end rewrites the report
        view.sendline(f"mark {ITEM} 9 amended in the view")
        view.expect(f"marked {ITEM}: 9/10")
        view.expect(r"report rewritten; total: 109/110")
        view.sendline("quit")
        view.expect(pexpect.EOF)
        md = (report_dir / "report.md").read_text()
        assert "## Score: 109/110 (tests 100/100 + interviewer 9/10)" in md
        assert "amended in the view" in (report_dir / "report.html").read_text()
    finally:
        view.close(force=True)
        if cand is not None:
            cand.close(force=True)


class _Graded:
    """The parts of a grade the report reads (the grade itself is tested elsewhere)."""

    def __init__(self, kata: catalog.Kata, failed: str) -> None:
        self.items = [type("R", (), {"item": i, "score": 0 if i.id == failed else i.points,
                                     "status": "failed" if i.id == failed else "passed"})()
                      for i in kata.tested_items]
        self.score = sum(r.score for r in self.items)
        self.max_score = kata.max_score


def _finished_report(tmp_path: Path) -> Path:
    from graders import interview

    kata = catalog.load(MARKED)
    s = interview.Session(kata, "katas", kata.folder, 45, True, out=tmp_path / "iv")
    s.stub_source = "def f():\n    raise NotImplementedError\n"
    interview.open_record(s)
    return interview.write_report(s, _Graded(kata, "rollback"), "submitted", s.out)


def _mark(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graders.interview", "mark", str(folder),
                           *args], cwd=catalog.ROOT, capture_output=True, text=True, timeout=60)


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


def test_mark_after_the_session_amends_every_report_file(tmp_path: Path) -> None:
    folder = _finished_report(tmp_path)
    md = (folder / "report.md").read_text()
    assert "## Score: 85/110 (tests 85/100 + interviewer 0/10, not marked yet: why_differ)" in md
    assert "- [ ] why_differ (10 points)" in md
    proc = _mark(folder, ITEM, "7.5", "--note", "named reduction order and near-ties")
    assert proc.returncode == 0, proc.stderr
    assert "total 92.5/110" in proc.stdout
    md = (folder / "report.md").read_text()
    assert "## Score: 92.5/110 (tests 85/100 + interviewer 7.5/10)" in md
    assert ("| why_differ | interviewer | 7.5/10 | marked (after the session) | - | "
            "named reduction order and near-ties |") in md
    assert "| rollback | tests | 0/15 | failed |" in md, "the tests' marks stay as graded"
    assert "- [x] why_differ (7.5/10 points, after the session" in md
    page = (folder / "report.html").read_text()
    assert "92.5/110" in page and "<input type='checkbox' checked disabled> why_differ" in page
    data = json.loads((folder / "report.json").read_text())
    assert data["marks"][ITEM]["points"] == 7.5 and data["totals"]["score"] == 92.5
    assert data["totals"]["tests_score"] == 85 and data["totals"]["interviewer_score"] == 7.5
    # marking again replaces the mark
    assert _mark(folder, ITEM, "10").returncode == 0
    assert "## Score: 95/110 (tests 85/100 + interviewer 10/10)" in \
        (folder / "report.md").read_text()


@pytest.mark.parametrize("args, message", [
    (["nosuch", "3"], "no rubric item 'nosuch'; the interviewer marks: why_differ (0 to 10)"),
    (["rollback", "3"], "'rollback' is graded by the tests"),
    ([ITEM, "11"], "11 is outside why_differ's range: give a number from 0 to 10"),
    ([ITEM, "-1"], "-1 is outside why_differ's range"),
    ([ITEM, "seven"], "'seven' is not a number"),
    ([ITEM, "nan"], "nan is outside why_differ's range"),
])
def test_a_bad_mark_is_refused_and_changes_no_file(tmp_path: Path, args: list[str],
                                                   message: str) -> None:
    folder = _finished_report(tmp_path)
    assert _mark(folder, ITEM, "4").returncode == 0
    before = _files(folder)
    proc = _mark(folder, *args, "--note", "should not appear")
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert _files(folder) == before, "a refused mark changed the report's folder"


def test_mark_of_a_folder_that_is_no_interview(tmp_path: Path) -> None:
    proc = _mark(tmp_path, ITEM, "3")
    assert proc.returncode == 2 and "is not an interview's folder" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_one_minute_and_quit_before_submitting(tmp_path: Path) -> None:
    """'1 minute', not '1 minutes'; a session that ends without a grade still shows the
    interviewer's mark in its total."""
    out = tmp_path / "interviews"
    child = _spawn([MARKED, "--minutes", "1", "--impl", str(catalog.KATAS_DIR / MARKED),
                    "--out", str(out)])
    try:
        child.expect(r"=== [^\n]*: 1 minute\. Edit ")
        child.sendline(f"mark {ITEM} 6 didn't name the near-ties")
        child.expect(f"marked {ITEM}: 6/10 \\(didn't name the near-ties\\)")
        child.sendline("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    (folder,) = list(out.iterdir())
    md = (folder / "report.md").read_text()
    assert "- time allowed: 1 minute; time used: 00:" in md
    assert "1 minutes" not in md and "grading" not in md.split("## Score")[0]
    assert "## Score: not graded by the tests (the candidate quit before submitting); " \
           "interviewer 6/10" in md
    assert "| why_differ | interviewer | 6/10 | marked (during the session) | - | didn't name " \
           "the near-ties |" in md


def test_html_diff_lines_are_coloured() -> None:
    from graders import interview

    page = interview.markdown_to_html(
        "# r\n\n```diff\n--- a\n+++ b\n@@ -1 +1 @@\n-old <line>\n+new line\n same\n```\n", "t")
    assert "<span class='del'>-old &lt;line&gt;</span>" in page
    assert "<span class='add'>+new line</span>" in page
    assert "<span class='hunk'>@@ -1 +1 @@</span>" in page
    assert "<span class='file'>+++ b</span>" in page and "<span> same</span>" in page
    assert ".add{background:#e6ffec" in page and ".del{background:#ffebe9" in page


@pytest.mark.parametrize("name", catalog.kata_names())
def test_every_kata_has_interviewer_material(name: str) -> None:
    kata = catalog.load(name)
    assert kata.raw.get("interviewer", {}).get("overview"), f"{name}: no [interviewer] overview"
    for item in kata.rubric:
        assert item.extra.get("follow_ups"), f"{name}: rubric item {item.id} has no follow_ups"
        if item.graded_by == "interviewer":
            assert item.extra.get("good_answer"), f"{name}: {item.id} needs a good_answer"
