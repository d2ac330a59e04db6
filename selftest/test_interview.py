"""Mock interview mode, driven for real in a pseudo-terminal (the bundle: test_bundle.py)."""

from __future__ import annotations

import csv
import html.parser
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

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
        child.expect(r"test: 0/7 rubric items pass the public tests\r\n  failing \w+: test_\w+: "
                     r"not implemented yet")
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
    assert report_dir.name.startswith(f"{KATA}-candidate-")
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
    assert (report_dir / "candidate-report.html").is_file()


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
                                   ["--profile", "kata"], ["--candidate", "Ann"]])
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
    """The interviewer's view follows the candidate's session in another terminal; its
    marks reach the report, whose total adds them to the tests' score and keeps every mark
    given; a mark after the end amends the report."""
    work = tmp_path / "work"
    shutil.copytree(catalog.KATAS_DIR / MARKED, work)
    out = tmp_path / "interviews"
    view = _spawn([MARKED, "--interviewer", "--by", "Dana", "--out", str(out)])
    cand = None
    try:
        view.expect(r"# Interviewer notes: [^\n]*55 minutes\)")
        view.expect("waiting for the candidate's session to start")
        cand = _spawn([MARKED, "--minutes", "20", "--impl", str(work), "--out", str(out),
                       "--profile", "kata", "--candidate", "Ann"])
        cand.expect(r"left\] > ")
        view.expect("=== following Ann's session: 20 minutes")
        view.expect("Ann's session started \\(20 minutes\\)")
        view.expect("interviewer> ")
        cand.sendline("hint")
        cand.expect(r"hint 1/\d+: ")
        view.expect(r"used, \d\d:\d\d left\] hint 1 taken: ")
        for bad, why in (("mark nosuch 3", "no rubric item 'nosuch'"),
                         ("mark greedy_accept 3", "is graded by the tests"),
                         (f"mark {ITEM} 11", "outside why_differ's range"),
                         (f"mark {ITEM} lots", "'lots' is not a number")):
            view.sendline(bad)
            view.expect(f"mark refused: [^\n]*{why}")
        view.sendline(f"mark {ITEM} 4 explained the reduction order")
        view.expect(f"marked {ITEM}: 4/10 \\(explained the reduction order\\)")
        view.expect(f"interviewer's items now: {ITEM} 4/10")
        (work / "__init__.py").write_text((catalog.SOLUTIONS_DIR / f"{MARKED}.py").read_text())
        cand.expect(r"saved: 7/7 rubric items pass")
        view.expect(r"saved: 7/7 rubric items pass")
        view.sendline(f'mark {ITEM} 7 "good answer on batch shapes"')
        view.expect(f"marked {ITEM}: 7/10")
        view.expect(f"interviewer's items now: {ITEM} 7/10")
        cand.sendline("submit")
        cand.expect("Grading with the public and hidden tests")
        cand.sendcontrol("c")    # the session has ended: the grading goes on
        cand.expect(r"the grading goes on")
        cand.expect(r"score: 100/100", timeout=600)
        cand.expect(r"session ended: submitted")
        cand.expect(r"report: (\S+)report\.md")
        cand.expect(pexpect.EOF)
        view.expect(r"graded by the tests: 100/100", timeout=60)
        view.expect(f"{ITEM} +7/10 +MARKED +by Dana, interviewer's view: good answer")
        view.expect(r"the session ended, by: submitted")
        view.expect(r"total: 107/110 \(tests 100/100 \+ interviewer 7/10\)")
        (report_dir,) = list(out.iterdir())
        md = (report_dir / "report.md").read_text()
        assert "## Score: 107/110 (tests 100/100 + interviewer 7/10)" in md, md[:1500]
        assert ("| why_differ | interviewer | 7/10 | marked by Dana, interviewer's view | - | - "
                "| good answer on batch shapes |") in md
        assert "| greedy_accept | tests | 15/15 | passed | " in md
        assert "- candidate: Ann\n- interviewer: Dana\n" in md
        history = md.split("## Marks, in the order given")[1]
        assert history.index("4/10 by Dana") < history.index("7/10 by Dana")
        assert "explained the reduction order (replaced by a later mark)" in history
        data = json.loads((report_dir / "report.json").read_text())
        assert data["totals"]["score"] == 107 and data["totals"]["max_score"] == 110
        assert [m["points"] for m in data["marks_history"]] == [4, 7]
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
        mine = (report_dir / "candidate-report.md").read_text()
        assert "amended in the view" not in mine and "Dana" not in mine
    finally:
        view.close(force=True)
        if cand is not None:
            cand.close(force=True)


class _Graded:
    """The parts of a grade the reports read (the grade itself is tested elsewhere): every
    tested item passes but ``failed``, which fails one public and one hidden test."""

    def __init__(self, kata: catalog.Kata, failed: str) -> None:
        from graders.grade import ItemResult, TestResult

        def tests(item: str) -> list[TestResult]:
            bad = item == failed
            return [TestResult(f"tests/x.py::test_public_{item}", item, "public",
                               "failed" if bad else "passed",
                               "E   AssertionError: public detail\nE   more" if bad else ""),
                    TestResult(f"graders/hidden/x.py::test_secret_{item}", item, "hidden",
                               "failed" if bad else "passed",
                               "E   AssertionError: secret hidden detail" if bad else "")]

        self.items = [ItemResult(i, "failed" if i.id == failed else "passed",
                                 0 if i.id == failed else i.points, tests(i.id))
                      for i in kata.tested_items]
        self.score = sum(r.score for r in self.items)
        self.max_score = kata.max_score
        self.profile, self.seed, self.impl, self.seconds = "kata", None, "work", 1.0
        self.sandbox = {"backend": "bubblewrap", "no_network": True}


def _finished_report(tmp_path: Path) -> Path:
    from graders import interview

    kata = catalog.load(MARKED)
    s = interview.Session(kata, 45, True, candidate="Zoe", out=tmp_path / "iv",
                          stub=interview.pristine_stub(kata)[0])
    folder = interview.open_record(s)
    s.work = interview.prepare_workspace(kata, None, folder, s.stub)
    interview.write_session_info(s, "test")
    summary = interview.grade_summary(_Graded(kata, "rollback"))
    return interview.write_report(folder, "submitted", 100.0, summary, 2.0)


def _mark(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graders.interview", "mark", str(folder),
                           *args], cwd=catalog.ROOT, capture_output=True, text=True, timeout=60)


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())
            if p.is_file()}


def test_mark_after_the_session_amends_every_report_file(tmp_path: Path) -> None:
    folder = _finished_report(tmp_path)
    md = (folder / "report.md").read_text()
    assert "## Score: 85/110 (tests 85/100 + interviewer 0/10, not marked yet: why_differ)" in md
    assert "- [ ] why_differ (10 points)" in md
    proc = _mark(folder, ITEM, "7.5", "--note", "named reduction order and near-ties",
                 "--by", "Dana")
    assert proc.returncode == 0, proc.stderr
    assert "total 92.5/110" in proc.stdout
    md = (folder / "report.md").read_text()
    assert "## Score: 92.5/110 (tests 85/100 + interviewer 7.5/10)" in md
    assert ("| why_differ | interviewer | 7.5/10 | marked by Dana, after the session | - | - | "
            "named reduction order and near-ties |") in md
    assert "| rollback | tests | 0/15 | failed | 1/2 (public 0/1, hidden 1/1)" not in md
    assert "| rollback | tests | 0/15 | failed | 0/2 (public 0/1, hidden 0/1) |" in md, \
        "the tests' marks stay as graded, with their counts"
    assert "- [x] why_differ (7.5/10 points, Dana, after the session" in md
    page = (folder / "report.html").read_text()
    assert "92.5/110" in page and "<input type='checkbox' checked disabled> why_differ" in page
    data = json.loads((folder / "report.json").read_text())
    assert data["marks"][ITEM]["points"] == 7.5 and data["totals"]["score"] == 92.5
    assert data["totals"]["tests_score"] == 85 and data["totals"]["interviewer_score"] == 7.5
    # marking again: the latest counts, the first stays in the history
    assert _mark(folder, ITEM, "10", "--by", "Eve").returncode == 0
    md = (folder / "report.md").read_text()
    assert "## Score: 95/110 (tests 85/100 + interviewer 10/10)" in md
    assert "- interviewer: Dana, Eve" in md
    assert "7.5/10 by Dana, after the session: named reduction order and near-ties (replaced " \
           "by a later mark)" in md and "10/10 by Eve, after the session (counts)" in md


def test_the_reports_settings_and_first_failures(tmp_path: Path) -> None:
    """The hiring team's copy names the settings and each failed item's first failures,
    hidden ones included; the candidate's copy never shows a hidden test's detail."""
    folder = _finished_report(tmp_path)
    md = (folder / "report.md").read_text()
    assert "# Interview report: Zoe, " in md and "- candidate: Zoe" in md
    assert ("- settings: hypothesis profile kata, seed derandomized, isolation bubblewrap "
            "(no network), implementation work, commit ") in md
    assert "- rollback, public: test_public_rollback: AssertionError: public detail" in md
    assert "- rollback, hidden: test_secret_rollback: AssertionError: secret hidden detail" in md
    mine = (folder / "candidate-report.md").read_text()
    assert "- rollback, public: test_public_rollback: AssertionError: public detail" in mine
    assert "- rollback, hidden: failed by hidden tests (their detail is not shown)" in mine
    assert "secret" not in mine and "secret" not in (folder / "candidate-report.html").read_text()
    assert "good_answer" not in mine and "## Marks" not in mine


@pytest.mark.parametrize("args, message", [
    (["nosuch", "3"], "no rubric item 'nosuch'; the interviewer marks: why_differ (0 to 10)"),
    (["rollback", "3"], "'rollback' is graded by the tests"),
    ([ITEM, "11"], "11 is outside why_differ's range: give a number from 0 to 10"),
    ([ITEM, "-1"], "-1 is outside why_differ's range"),
    ([ITEM, "seven"], "'seven' is not a number"),
    ([ITEM, "nan"], "nan is outside why_differ's range"),
    ([ITEM, "3", "--by", "=cmd()"], "spreadsheets read as a formula"),
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


def test_one_minute_quit_asks_and_a_mark_during_the_session(tmp_path: Path) -> None:
    """'1 minute', not '1 minutes'; quit asks first; a mark given (by ``mark``) while the
    session runs reaches its report, though the tests never graded it."""
    out = tmp_path / "interviews"
    child = _spawn([MARKED, "--minutes", "1", "--out", str(out)])
    try:
        child.expect(r"=== [^\n]*: 1 minute\. Edit ")
        child.expect(r"left\] > ")
        (folder,) = list(out.iterdir())
        proc = _mark(folder, ITEM, "6", "--note", "didn't name the near-ties")
        assert proc.returncode == 0 and "still running: its report will include" in proc.stdout
        child.sendline("quit")
        child.expect(r"quit without submitting\? the session ends, not graded \[y/N\] ")
        child.sendline("y")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    md = (folder / "report.md").read_text()
    assert "- time allowed: 1 minute; time used: 00:" in md
    assert "1 minutes" not in md and "grading" not in md.split("## Score")[0]
    assert "## Score: not graded by the tests (the session ended by: quit; nox -s interview " \
           f"-- grade {folder} grades it); interviewer 6/10" in md
    assert "| why_differ | interviewer | 6/10 | marked by interviewer, after the session | - " \
           "| - | didn't name the near-ties |" in md


def test_html_diff_keeps_its_lines_without_css() -> None:
    from graders import interview

    page = interview.markdown_to_html(
        "# r\n\n```diff\n--- a\n+++ b\n@@ -1 +1 @@\n-old <line>\n+new line\n same\n```\n", "t")
    assert "<span class='del'>-old &lt;line&gt;</span>\n<span class='add'>+new line</span>\n" \
           "<span> same</span></pre>" in page
    assert "<span class='hunk'>@@ -1 +1 @@</span>" in page
    assert "<span class='file'>+++ b</span>" in page
    assert ".add{background:#e6ffec" in page and ".del{background:#ffebe9" in page
    assert "display:block" not in page, "one line per span must not need the stylesheet"


def test_the_notes_header_gives_the_sessions_own_minutes() -> None:
    from graders import interview

    kata = catalog.load(MARKED)
    assert interview.interviewer_notes(kata, 15).splitlines()[0].endswith(
        "(spec_decode, 15 minutes; the kata's usual 55 minutes)")
    assert interview.interviewer_notes(kata).splitlines()[0].endswith("(spec_decode, 55 minutes)")


def test_the_candidates_prompt_keeps_the_interviewers_question() -> None:
    from graders import interview

    kata = catalog.load(MARKED)
    text = interview.candidate_prompt(kata)
    assert "| why_differ | 10 | (asked by the interviewer during the session) |" in text
    assert "why speculative greedy can differ" not in text and "<details>" not in text


# -- back to back: three candidates on one kata, one interviewer's view ----------------------

BACK = "mini_engine"        # its stub grades in seconds; recompute_vs_swap is the interviewer's
BACK_ITEM = "recompute_vs_swap"
MARKER = "ALICE_WROTE_THIS"


@pytest.fixture(scope="module")
def back_to_back(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Alice (saves code that does not load, then code of her own, then Ctrl-C), Bob (quits)
    and Carol (killed), one after another, followed by one interviewer's view; then
    ``grade`` on Alice's session and ``summary`` over the folder."""
    out = tmp_path_factory.mktemp("back") / "interviews"
    seen: dict[str, Any] = {"out": out}
    view = _spawn([BACK, "--interviewer", "--by", "Dana", "--out", str(out)])
    people: list[pexpect.spawn] = [view]
    try:
        view.expect("waiting for the candidate's session to start")
        alice = _spawn([BACK, "--candidate", "Alice Smith", "--minutes", "30", "--out", str(out)])
        people.append(alice)
        alice.logfile_read = io.StringIO()
        alice.expect(r"left\] > ")
        view.expect("=== following Alice Smith's session: 30 minutes")
        alice.sendline(f"mark {BACK_ITEM} 10 I explained it perfectly")
        alice.expect(r"'mark' is not a command; commands: hint, test, submit, quit")
        (folder_a,) = list(out.iterdir())
        work = folder_a / "work"
        stub = (work / "__init__.py").read_text()
        (work / "__init__.py").write_text(stub + "\ndef broken(:\n    pass\n")
        alice.expect(r"saved: does not load: SyntaxError at line (\d+)")
        seen["syntax_line"] = int(alice.match.group(1))
        seen["stub_lines"] = len(stub.splitlines())
        view.expect(r"saved: does not load: SyntaxError at line")
        (work / "__init__.py").write_text("import no_such_module_for_the_test\n")
        alice.expect(r"saved: does not load: ModuleNotFoundError: No module named "
                     r"'no_such_module_for_the_test'")
        (work / "__init__.py").write_text(stub + f"\n{MARKER} = 1\n")
        alice.expect(r"saved: 0/\d+ rubric items pass the public tests\r\n  failing \w+: "
                     r"test_\w+: not implemented yet")
        alice.sendcontrol("c")
        alice.expect(r"session ended: interrupted \(Ctrl-C\)")
        alice.expect(r"not graded: nox -s interview -- grade \S+ grades the workspace")
        alice.expect(pexpect.EOF)
        seen["alice"] = alice.logfile_read.getvalue()
        view.expect(r"the session ended, by: interrupted \(Ctrl-C\)")
        view.sendline("next")
        view.expect("waiting for the next session")
        bob = _spawn([BACK, "--candidate", "Bob", "--minutes", "30", "--out", str(out)])
        people.append(bob)
        bob.expect(r"left\] > ")
        view.expect("=== following Bob's session")
        bob.sendline("quit")
        bob.expect(r"\[y/N\] ")
        bob.sendline("yes")
        bob.expect(pexpect.EOF)
        view.expect(r"the session ended, by: quit")
        view.sendline("next")
        view.expect("waiting for the next session")
        carol = _spawn([BACK, "--candidate", "Carol", "--minutes", "30", "--out", str(out)])
        people.append(carol)
        carol.expect(r"left\] > ")
        view.expect("=== following Carol's session")
        carol.kill(9)
        view.expect(r"the candidate's session \(process \d+\) is gone without a report: "
                    r"nox -s interview -- grade (\S+) grades", timeout=30)
        seen["gone"] = view.match.group(1)
        view.sendline("quit")
        view.expect(pexpect.EOF)
        folders = {json.loads((f / "session.json").read_text())["candidate"]: f
                   for f in out.iterdir() if f.is_dir()}
        seen["folders"] = folders
        seen["mark_carol"] = _mark(folders["Carol"], BACK_ITEM, "3")
        seen["grade"] = subprocess.run(
            [sys.executable, "-m", "graders.interview", "grade", str(folders["Alice Smith"]),
             "--profile", "kata"], cwd=catalog.ROOT, capture_output=True, text=True,
            timeout=300)
        seen["regrade"] = subprocess.run(
            [sys.executable, "-m", "graders.interview", "grade", str(folders["Alice Smith"])],
            cwd=catalog.ROOT, capture_output=True, text=True, timeout=60)
        seen["summary"] = subprocess.run(
            [sys.executable, "-m", "graders.interview", "summary", str(out)],
            cwd=catalog.ROOT, capture_output=True, text=True, timeout=60)
    finally:
        for child in people:
            child.close(force=True)
    return seen


def test_each_candidate_starts_from_the_stub(back_to_back: dict[str, Any]) -> None:
    from graders import interview

    folders = back_to_back["folders"]
    assert sorted(folders) == ["Alice Smith", "Bob", "Carol"]
    assert folders["Alice Smith"].name.startswith(f"{BACK}-Alice-Smith-")
    stub = interview.pristine_stub(catalog.load(BACK))[0]
    assert list(stub) == ["__init__.py"]
    for name in ("Bob", "Carol"):
        assert (folders[name] / "work" / "__init__.py").read_text() == stub["__init__.py"]
    alice = (folders["Alice Smith"] / "report.md").read_text()
    bob = (folders["Bob"] / "report.md").read_text()
    assert f"+{MARKER} = 1" in alice
    assert MARKER not in bob and "(no change from the stub)" in bob
    assert "# Interview report: Bob, " in bob and "- interviewer: Dana" in bob


def test_the_kata_folder_must_be_the_stub(tmp_path: Path) -> None:
    """--impl DIR: a folder holding anything but the stub is refused, its files named."""
    work = tmp_path / "work"
    shutil.copytree(catalog.KATAS_DIR / BACK, work)
    (work / "__init__.py").write_text((work / "__init__.py").read_text() + "X = 1\n")
    (work / "helper.py").write_text("Y = 2\n")
    proc = subprocess.run([sys.executable, "-m", "graders.interview", BACK, "--impl", str(work),
                           "--out", str(tmp_path / "iv")], cwd=catalog.ROOT, capture_output=True,
                          text=True, timeout=60, input="")
    assert proc.returncode == 2
    assert f"{work} is not the stub" in proc.stderr
    assert f"{work / '__init__.py'} differs from the stub (1 line changed)" in proc.stderr
    assert f"{work / 'helper.py'} is not part of the stub" in proc.stderr
    assert not (tmp_path / "iv").exists() or not list((tmp_path / "iv").iterdir())


def test_mark_is_not_a_candidate_command(back_to_back: dict[str, Any]) -> None:
    data = json.loads((back_to_back["folders"]["Alice Smith"] / "report.json").read_text())
    assert data["marks_history"] == [] and f"marked {BACK_ITEM}" not in back_to_back["alice"]
    assert "'mark' is not a command" in back_to_back["alice"]
    assert BACK_ITEM in data["totals"]["unmarked"]


def test_feedback_names_the_line_that_does_not_load(back_to_back: dict[str, Any]) -> None:
    assert back_to_back["syntax_line"] == back_to_back["stub_lines"] + 2


def test_ctrl_c_leaves_a_report_and_grade_grades_it(back_to_back: dict[str, Any]) -> None:
    folder = back_to_back["folders"]["Alice Smith"]
    proc = back_to_back["grade"]
    assert proc.returncode == 0, proc.stderr
    assert "score: 0/100" in proc.stdout
    md = (folder / "report.md").read_text()
    assert "- ended by: interrupted (Ctrl-C); graded afterwards" in md
    assert "## Score: 0/110 (tests 0/100 + interviewer 0/10, not marked yet: " \
           f"{BACK_ITEM})" in md
    assert "- settings: hypothesis profile kata, seed derandomized, isolation " in md
    assert "| budget_order | tests | 0/" in md and "## First failures" in md
    last = json.loads((folder / "events.jsonl").read_text().splitlines()[-1])
    assert last["event"] == "graded" and last["afterwards"] and last["score"] == 0, last
    again = back_to_back["regrade"]
    assert again.returncode == 2 and "is graded already" in again.stderr


def test_the_view_notices_a_session_that_is_gone(back_to_back: dict[str, Any]) -> None:
    carol = back_to_back["folders"]["Carol"]
    assert back_to_back["gone"] == str(carol)
    assert not (carol / "report.md").exists()
    proc = back_to_back["mark_carol"]
    assert proc.returncode == 0 and "ended without a report" in proc.stdout
    assert "grade" in proc.stdout


def test_summary_lists_every_session_as_a_table_and_a_csv(back_to_back: dict[str, Any]) -> None:
    proc = back_to_back["summary"]
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["candidate", "kata", "date", "tests", "marks", "total", "hints",
                                "time", "used", "ended", "folder"]
    rows = {line.split("  ")[0]: line for line in lines[2:5]}
    assert set(rows) == {"Alice Smith", "Bob", "Carol"}
    assert "0/100" in rows["Alice Smith"] and "0/110" in rows["Alice Smith"]
    assert "not graded/100" in rows["Bob"] and "quit" in rows["Bob"]
    assert "3/10" in rows["Carol"] and "no report" in rows["Carol"]
    with open(back_to_back["out"] / "summary.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [r["candidate"] for r in table] == ["Alice Smith", "Bob", "Carol"]
    alice = table[0]
    assert (alice["kata"], alice["tests"], alice["marks"], alice["total"], alice["hints"]) == \
        (BACK, "0/100", "0/10 (1 unmarked)", "0/110", "0")
    assert alice["time used"].endswith("of 30 minutes") and alice["date"]
    assert table[2]["marks"] == "3/10" and table[2]["total"] == "3/110"


@pytest.mark.parametrize("name", catalog.kata_names())
def test_every_kata_has_interviewer_material(name: str) -> None:
    kata = catalog.load(name)
    assert kata.raw.get("interviewer", {}).get("overview"), f"{name}: no [interviewer] overview"
    for item in kata.rubric:
        assert item.extra.get("follow_ups"), f"{name}: rubric item {item.id} has no follow_ups"
        if item.graded_by == "interviewer":
            assert item.extra.get("good_answer"), f"{name}: {item.id} needs a good_answer"
