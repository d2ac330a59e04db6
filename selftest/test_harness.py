"""Unit tests of the harness: implementation loading, scoring, reports, bad submissions."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from graders import catalog, grade, impl
from graders.authoring import mutant
from graders.grade.channel import Channel

BAD = Path(__file__).parent / "bad_submissions"
KATA = "radix_cache"


# -- implementation loading -----------------------------------------------------------

def test_load_katas_and_solutions(monkeypatch: pytest.MonkeyPatch) -> None:
    impl.configure("solutions")
    try:
        assert impl.load(KATA).__name__ == "solutions.radix_cache"
        impl.configure("katas")
        assert impl.load(KATA).__name__ == "katas.radix_cache"
    finally:
        impl.configure("katas")


def test_load_submission_file_and_folder(tmp_path: Path) -> None:
    src = (catalog.SOLUTIONS_DIR / f"{KATA}.py").read_text()
    (tmp_path / "file.py").write_text(src)
    folder = tmp_path / "copy_of_kata"
    folder.mkdir()
    (folder / "__init__.py").write_text(src)
    named = tmp_path / "named"
    named.mkdir()
    (named / f"{KATA}.py").write_text(src)
    try:
        for spec in (tmp_path / "file.py", folder, named):
            impl.configure(str(spec))
            module = impl.load(KATA)
            assert module.RadixCache(4).stats()["free"] == 4
    finally:
        impl.configure("katas")


@pytest.mark.parametrize("spec, message", [
    ("/no/such/path.py", "does not exist"),
    (str(BAD / "syntax_error.py"), "SyntaxError"),
    (str(BAD / "import_error.py"), "No module named 'no_such_module_anywhere'"),
    (str(BAD / "exit_at_import.py"), "called exit(3)"),
])
def test_load_failures_are_clear_and_remembered(spec: str, message: str) -> None:
    impl.configure(spec)
    try:
        proxy = impl.kata_impl(KATA)
        for _ in range(2):
            with pytest.raises(impl.SubmissionError, match=message.replace("(", r"\(")
                               .replace(")", r"\)")):
                proxy.RadixCache(4)
    finally:
        impl.configure("katas")


def test_missing_name_is_reported_against_the_stub() -> None:
    impl.configure(str(BAD / "missing_class.py"))
    try:
        with pytest.raises(impl.SubmissionError, match="defines no 'RadixCache'.*stub"):
            impl.kata_impl(KATA).RadixCache
    finally:
        impl.configure("katas")


def test_unknown_kata_is_a_clear_error() -> None:
    with pytest.raises(impl.SubmissionError, match="no kata named"):
        impl.kata_impl("no_such_kata")
    with pytest.raises(catalog.CatalogError, match="known katas"):
        catalog.load("no_such_kata")


def test_test_path_to_kata() -> None:
    assert catalog.kata_of_test_path(catalog.PUBLIC_TESTS_DIR / KATA / "test_x.py") == KATA
    assert catalog.kata_of_test_path(catalog.HIDDEN_TESTS_DIR / KATA / "t.py") == KATA
    assert catalog.visibility_of_test_path(catalog.HIDDEN_TESTS_DIR / KATA / "t.py") == "hidden"
    assert catalog.kata_of_test_path(catalog.ROOT / "selftest" / "x.py") is None


# -- scoring --------------------------------------------------------------------------

def _fake_grade(outcomes: dict[str, list[str]]) -> grade.Grade:
    kata = catalog.load(KATA)
    tests = []
    for item, results in outcomes.items():
        for n, outcome in enumerate(results):
            tests.append(grade.TestResult(f"t::{item}_{n}", item, "hidden", outcome,
                                          "boom" if outcome == "failed" else ""))
    g = grade.Grade(kata, "x", None, "grade", tests)
    grade.score(g)
    return g


def test_an_item_scores_only_when_all_its_tests_pass() -> None:
    outcomes = {i.id: ["passed", "passed"] for i in catalog.load(KATA).tested_items}
    outcomes["edge_split"] = ["passed", "failed"]
    outcomes["dedup"] = ["passed", "not run"]
    g = _fake_grade(outcomes)
    status = {r.item.id: r.status for r in g.items}
    assert status["edge_split"] == "failed" and status["dedup"] == "failed"
    assert status["prefix_match"] == "passed"
    kata = catalog.load(KATA)
    assert g.score == kata.max_score - kata.item("edge_split").points - kata.item("dedup").points
    assert "boom" in next(r for r in g.items if r.item.id == "edge_split").message


def test_an_item_without_tests_scores_nothing() -> None:
    g = _fake_grade({"prefix_match": ["passed"]})
    status = {r.item.id: r.status for r in g.items}
    assert status["eviction"] == "no tests"
    assert g.score == catalog.load(KATA).item("prefix_match").points


def test_all_skipped_item_leaves_the_maximum() -> None:
    outcomes = {i.id: ["passed"] for i in catalog.load(KATA).tested_items}
    outcomes["eviction"] = ["skipped"]
    g = _fake_grade(outcomes)
    assert g.max_score == catalog.load(KATA).max_score - catalog.load(KATA).item("eviction").points
    assert g.score == g.max_score


# -- reports --------------------------------------------------------------------------

# Gradescope's documented results.json keys (gradescope-autograders.readthedocs.io, specs)
TOP_KEYS = {"score", "execution_time", "output", "output_format", "test_output_format",
            "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests",
            "leaderboard"}
TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output",
             "output_format", "tags", "visibility", "extra_data"}


def check_results_json(path: Path) -> dict:
    """Gradescope's schema; the grade's own maximum is ``extra_data["max_score"]`` (the
    schema has none at the top). An item or test that is not counted has neither points
    nor a status (the schema knows only passed and failed), and says so."""
    data = json.loads(path.read_text())
    assert set(data) <= TOP_KEYS, set(data) - TOP_KEYS
    top = data["extra_data"]["max_score"]
    assert isinstance(data["score"], (int, float)) and isinstance(top, (int, float))
    assert 0 <= data["score"] <= top
    assert data["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    assert isinstance(data["tests"], list) and data["tests"]
    for t in data["tests"]:
        assert set(t) <= TEST_KEYS, set(t) - TEST_KEYS
        assert t["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
        if "not counted" in t["tags"] or "skipped" in t["tags"]:
            assert not {"status", "score", "max_score"} & set(t), t
            assert "not counted" in t["output"], t
            continue
        assert set(t) >= {"name", "score", "max_score", "status", "output", "visibility"}, t
        assert t["status"] in ("passed", "failed")
        assert 0 <= t["score"] <= t["max_score"] or t["max_score"] == 0
    rubric = [t for t in data["tests"] if t["name"].startswith("rubric: ")]
    assert sum(t.get("score", 0) for t in rubric) == data["score"]
    assert sum(t.get("max_score", 0) for t in rubric) == top
    return data


def check_junit(path: Path, n_tests: int) -> None:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == n_tests


def test_reports_of_the_reference(tmp_path: Path) -> None:
    g = grade.run(KATA, "solutions", include_hidden=False)
    grade.write_reports(g, tmp_path)
    data = check_results_json(tmp_path / "results.json")
    assert data["score"] == data["extra_data"]["max_score"] == catalog.load(KATA).max_score
    assert data["extra_data"]["seed"] is None
    check_junit(tmp_path / "junit.xml", len(g.tests))
    assert "score: 100/100" in grade.table(g)


def test_grade_cli_writes_reports_and_is_deterministic(tmp_path: Path) -> None:
    scores = []
    for run in ("a", "b"):
        out = tmp_path / run
        proc = subprocess.run(
            [sys.executable, "-m", "graders.grade", KATA, "--impl",
             str(mutant.scratch_file(KATA, "lru_by_insertion")), "--out", str(out),
             "--seed", "7", "--rubric", "eviction"],
            cwd=catalog.ROOT, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        data = check_results_json(out / "results.json")
        assert data["extra_data"]["seed"] == 7
        scores.append({t["name"]: t["status"] for t in data["tests"]})
    assert scores[0] == scores[1], "two grades of one submission differ"


def test_grade_cli_rejects_unknown_kata() -> None:
    proc = subprocess.run([sys.executable, "-m", "graders.grade", "no_such_kata"],
                          cwd=catalog.ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "no kata named" in proc.stderr


# -- bad submissions ------------------------------------------------------------------

BAD_CASES = {  # case -> what a failure message says (in-process, isolated)
    "syntax_error": ("SyntaxError", "SyntaxError"),
    "import_error": ("No module named", "No module named"),
    "missing_class": ("defines no 'RadixCache'", "defines no 'RadixCache'"),
    "infinite_loop": ("Timeout", "Timeout|did not return"),
    "ignores_alarm": ("timed out", "Timeout|did not return"),
    "recursion_bomb": ("died of SIGSEGV", "died of SIGSEGV"),
    "sys_exit": ("SystemExit", r"called exit\(0\)"),
    "os_exit": ("exited with code 0", "exited with code 0"),
    "exit_at_import": (r"called exit\(3\)", r"called exit\(3\)"),
    "floods_output": ("", ""),
}


LOAD_CASES = ("syntax_error", "import_error", "missing_class", "exit_at_import")


@pytest.mark.parametrize("isolate", [False, True], ids=["in_process", "isolated"])
@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_submission_fails_cleanly(case: str, isolate: bool, tmp_path: Path) -> None:
    """The grader finishes, writes valid reports, and fails each test with a clear message:
    in-process, by surviving the test process's death; isolated, the worker's."""
    import re

    g = grade.run(KATA, str(BAD / f"{case}.py"), include_hidden=False, rubric="prefix_match",
                  per_test_timeout=1.0, grace=2.0, total_timeout=120, isolate=isolate)
    grade.write_reports(g, tmp_path)
    data = check_results_json(tmp_path / "results.json")
    check_junit(tmp_path / "junit.xml", len(g.tests))
    assert data["score"] == 0, f"{case} scored {data['score']}"
    assert all(t.outcome != "not run" for t in g.tests)
    failed = [t for t in g.tests if t.outcome == "failed"]
    assert failed, f"{case}: no test failed"
    assert all(t.message.strip() for t in failed), "every failure needs a message"
    pattern = BAD_CASES[case][isolate]
    if case in LOAD_CASES:
        # said once, naming the file as uploaded and its line; each test points to it
        said = g.load_error or ""
        assert re.search(pattern, said) and f"{case}.py" in said, said
        assert case == "missing_class" or re.search(rf'"{case}.py", line \d+', said), said
        assert "graders/" not in said and "kata-worker" not in said, said
        assert all(t.message in (grade.LOAD_POINTER, grade.MISSING_POINTER) for t in failed)
        visible = [t for t in data["tests"] if t["visibility"] == "visible"]
        assert not [t["name"] for t in visible if "graders/" in t["output"]]
        assert all(line.strip() in data["output"] for line in said.splitlines())
    elif pattern:
        assert any(re.search(pattern, t.message) for t in failed), (
            f"{case}: expected /{pattern}/ in a failure message, got:\n"
            + failed[0].message[:1000])
    assert (tmp_path / "results.json").stat().st_size < 400_000, "output must be truncated"
    if not isolate and case in ("os_exit", "recursion_bomb", "ignores_alarm"):
        assert g.restarts >= 1, f"{case} should have needed a fresh test process"
    if isolate:
        assert g.restarts == 0, f"{case}: isolated, the test process itself must survive"
# -- typecheck contract ---------------------------------------------------------------

def test_contract_accepts_the_reference_and_flags_changed_signatures() -> None:
    from graders.typecheck import contract_differences

    stub = (catalog.KATAS_DIR / KATA / "__init__.py").read_text()
    ref = (catalog.SOLUTIONS_DIR / f"{KATA}.py").read_text()
    assert contract_differences(stub, ref) == []
    changed = ref.replace("def evict(self, num_slots: int) -> int:",
                          "def evict(self, n: int) -> int:")
    assert any("RadixCache.evict" in p for p in contract_differences(stub, changed))
    typing_spelling = ref.replace("def acquire(self, tokens: list[int]) -> tuple[int, int, list[int]]:",
                                  "def acquire(self, tokens: List[int]) -> Tuple[int, int, List[int]]:")
    assert contract_differences(stub, typing_spelling) == []
    missing = ref.replace("    def abort(self", "    def _abort(self")
    assert any("missing: RadixCache.abort" in p for p in contract_differences(stub, missing))


# -- the progress channel -------------------------------------------------------------

def _channel_with(lines: list[dict], known: dict | None = None) -> Channel:
    import os

    r, w = os.pipe()
    os.write(w, b"".join(json.dumps(e).encode() + b"\n" for e in lines))
    os.close(w)
    channel = Channel(r, known, set())
    while not channel.eof and channel.violation is None:
        channel.pump(0.1)
    os.close(r)
    return channel


COLLECTED = {"event": "collected", "tests": [
    {"nodeid": "t::a", "rubric": "prefix_match", "visibility": "public"},
    {"nodeid": "t::b", "rubric": "prefix_match", "visibility": "hidden"}]}


def _result(nodeid: str, outcome: str = "passed") -> dict:
    return {"event": "result", "nodeid": nodeid, "outcome": outcome, "message": "",
            "duration": 0.1}


def test_the_channel_accepts_the_plugins_order() -> None:
    c = _channel_with([COLLECTED, {"event": "start", "nodeid": "t::a"}, _result("t::a"),
                       {"event": "start", "nodeid": "t::b"}, _result("t::b", "failed")])
    assert c.violation is None and c.accepted == 2 and set(c.results) == {"t::a", "t::b"}


@pytest.mark.parametrize("events, why", [
    ([COLLECTED, _result("t::a")], "no matching start"),
    ([COLLECTED, {"event": "start", "nodeid": "t::a"}, _result("t::a"), _result("t::a")],
     "second result"),
    ([COLLECTED, {"event": "start", "nodeid": "t::zzz"}], "not collected"),
    ([COLLECTED, {"event": "start", "nodeid": "t::a"}, _result("t::zzz")], "not collected"),
    ([COLLECTED, COLLECTED], "second collection"),
    ([{"event": "start", "nodeid": "t::a"}], "not collected"),
    ([COLLECTED, {"event": "start", "nodeid": "t::a"},
      {"event": "result", "nodeid": "t::a", "outcome": "excellent", "message": "",
       "duration": 0}], "malformed"),
], ids=["no-start", "second-result", "start-uncollected", "result-uncollected",
        "two-collections", "start-first", "bad-outcome"])
def test_the_channel_rejects_forged_orders(events: list[dict], why: str) -> None:
    c = _channel_with(events)
    assert c.violation is not None and why in c.violation, c.violation


def test_a_restarted_run_may_not_collect_or_report_graded_tests() -> None:
    known = {"t::a": grade.TestResult("t::a", "prefix_match", "public", "passed"),
             "t::b": grade.TestResult("t::b", "prefix_match", "hidden")}
    import os

    r, w = os.pipe()
    os.write(w, (json.dumps(COLLECTED) + "\n").encode())
    os.close(w)
    c = Channel(r, known, {"t::a"})
    while not c.eof and c.violation is None:
        c.pump(0.1)
    os.close(r)
    assert c.violation is not None and "graded test" in c.violation


def test_the_grade_passes_the_channel_by_descriptor_only(tmp_path: Path) -> None:
    """No path of a progress file on the trusted pytest's command line, and the worker
    holds no descriptor of the channel."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os, sys\n"
        "class OutOfSlots(RuntimeError):\n    pass\n"
        "class RadixCache:\n"
        "    def __init__(self, n):\n"
        "        import stat\n"
        "        kinds = []\n"
        "        for f in range(3, 1024):\n"
        "            try:\n"
        "                mode = os.fstat(f).st_mode\n"
        "            except OSError:\n"
        "                continue\n"
        "            kinds.append('pipe:' if stat.S_ISFIFO(mode) else 'other')\n"
        "        try:\n"
        "            parent = open(f'/proc/{os.getppid()}/cmdline', 'rb').read()\n"
        "        except OSError:\n"
        "            parent = b''\n"
        "        raise RuntimeError(f'FDS={kinds} PARENT={parent!r}')\n")
    g = grade.run(KATA, str(probe), include_hidden=False, rubric="prefix_match",
                  per_test_timeout=5.0, grace=3.0, total_timeout=120)
    messages = "\n".join(t.message for t in g.tests)
    found = re.search(r"FDS=(\[.*?\])", messages)
    assert found, messages[:2000]
    assert found.group(1).count("pipe:") == 2, f"the worker holds more than its two pipes: {found.group(1)}"
    assert "progress.jsonl" not in messages and "--progress " not in messages.replace("\\x00", " ")


STOPS_ITSELF = '''
import os, signal
from solutions.radix_cache import *  # noqa: F403 - in-process only, the reference itself
from solutions.radix_cache import RadixCache as _Ref


class RadixCache(_Ref):
    def abort(self, lease):
        if lease == 12345:  # only test_bad_input_is_rejected passes this lease
            os.kill(os.getpid(), signal.SIGSTOP)
        return super().abort(lease)
'''


def test_a_stopped_test_process_fails_only_the_running_test(tmp_path: Path) -> None:
    sub = tmp_path / "stops.py"
    sub.write_text(STOPS_ITSELF)
    g = grade.run(KATA, str(sub), include_hidden=False, isolate=False,
                  per_test_timeout=2.0, grace=2.0, total_timeout=180)
    failed = [t.nodeid for t in g.tests if t.outcome != "passed"]
    assert failed == [n for n in failed if n.endswith("test_bad_input_is_rejected")] and failed, (
        [(t.nodeid, t.outcome, t.message[:200]) for t in g.tests])
    assert g.restarts == 1
    bad = next(t for t in g.tests if t.nodeid.endswith("test_bad_input_is_rejected"))
    assert "timed out" in bad.message


# -- what a candidate may see ---------------------------------------------------------

def test_results_json_shows_no_hidden_test_to_a_candidate(tmp_path: Path) -> None:
    """A mutant that fails hidden tests: no visible entry and not the top-level output
    carries a hidden test's name, path, source line or message; junit.xml keeps them."""
    g = grade.run(KATA, str(mutant.scratch_file(KATA, "lru_by_insertion")),
                  rubric="eviction", isolate=False)
    hidden_failed = [t for t in g.tests if t.visibility == "hidden" and t.outcome == "failed"]
    assert hidden_failed, "the check needs a failed hidden test"
    from graders.authoring import prompt_lint

    labels = {r.label for r in prompt_lint.parse_rules(catalog.load(KATA))[0]}
    cited = {x for t in hidden_failed for x in t.rules}
    assert cited and cited <= labels, (cited, labels)
    for mode, detail in (("hidden", "rules"), ("after_published", "rules"),
                         ("hidden", "none")):
        out = tmp_path / f"{mode}-{detail}"
        g.hidden_detail = detail
        grade.write_reports(g, out, hidden_visibility=mode)
        data = check_results_json(out / "results.json")
        visible = [json.dumps(t) for t in data["tests"] if t["visibility"] == "visible"]
        visible.append(data["output"])
        secrets = {"graders/hidden", "hidden/" + KATA}
        for t in hidden_failed:
            secrets.add(t.nodeid.split("::")[-1])
            secrets.update(line.strip() for line in t.message.splitlines()
                           if len(line.strip()) > 25)
        public = "\n".join(t.message for t in g.tests if t.visibility != "hidden")
        secrets = {s for s in secrets if s not in public}  # lines both kinds share
        for text in visible:
            leaked = [s for s in secrets if s in text]
            assert not leaked, f"a visible entry shows hidden detail: {leaked[:3]}"
        hidden_entries = [t for t in data["tests"] if t["name"] == hidden_failed[0].nodeid]
        assert hidden_entries and hidden_entries[0]["visibility"] == mode
        assert hidden_entries[0]["output"].strip()
        rubric = next(t for t in data["tests"] if t["name"] == "rubric: eviction")
        assert rubric["status"] == "failed"
        if detail == "rules":   # the rules the failed hidden tests cite, and nothing else
            said = rubric["output"].splitlines()[-1]
            assert said.startswith("failed by hidden tests of rule"), said
            assert set(re.findall(r"'([^']+)'", said)) == cited, said
            assert said in data["output"]
        else:
            assert rubric["output"].endswith(
                "failed by hidden tests (their detail is not shown)"), rubric["output"]
            assert not [x for x in cited if f"'{x}'" in "\n".join(visible)]
        junit = (out / "junit.xml").read_text()
        assert hidden_failed[0].nodeid.split("::")[-1] in junit
    assert hidden_failed[0].nodeid.split("::")[-1] in grade.table(g), "the team's table keeps it"


# -- isolation does not change honest scores ------------------------------------------

SPILL = '''
import time
from solutions.radix_cache import *  # noqa: F403
from solutions.radix_cache import RadixCache as _Ref


class RadixCache(_Ref):
    def acquire(self, tokens):
        if list(tokens) == [4, 5]:  # test_short_pool_raises...: the wrong exception
            raise RuntimeError("pool too small")
        return super().acquire(tokens)

    def abort(self, lease):
        if lease == 12345:  # an unknown lease: this one hangs instead of raising KeyError
            time.sleep(30)
        return super().abort(lease)
'''


def test_one_failing_test_does_not_spill_into_others(tmp_path: Path) -> None:
    """A submission that raises (and, on another input, hangs) in one test scores the
    same, item by item, isolated and in-process: only that test's item is lost."""
    sub = tmp_path / "spill.py"
    sub.write_text(SPILL.replace("from solutions.radix_cache", "from _ref_radix_cache"))
    shutil.copy(catalog.SOLUTIONS_DIR / f"{KATA}.py", tmp_path / "_ref_radix_cache.py")
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "__init__.py").write_text(SPILL.replace("from solutions.radix_cache",
                                                      "from ._ref_radix_cache"))
    shutil.copy(catalog.SOLUTIONS_DIR / f"{KATA}.py", folder / "_ref_radix_cache.py")
    scores = {}
    for isolate in (False, True):
        g = grade.run(KATA, str(folder), include_hidden=False, isolate=isolate,
                      per_test_timeout=2.0, grace=2.0, total_timeout=240)
        scores[isolate] = {r.item.id: r.score for r in g.items}
        lost = {r.item.id for r in g.items if r.status == "failed"}
        assert lost == {"atomic_failure"}, (isolate, [(t.nodeid, t.message[:200])
                                                      for t in g.tests if t.outcome == "failed"])
    assert scores[False] == scores[True]


def test_a_skipped_item_is_not_counted_not_lost(tmp_path: Path) -> None:
    """A skipped item (no hardware data here) reads "not counted: <reason>" in the table and
    in results.json, where it has neither points nor a status; the score line counts it."""
    outcomes = {i.id: ["passed"] for i in catalog.load(KATA).tested_items}
    outcomes["eviction"] = ["skipped"]
    g = _fake_grade(outcomes)
    g.tests[[t.rubric for t in g.tests].index("eviction")].message = "no fixture here"
    points = catalog.load(KATA).item("eviction").points
    team, candidate = grade.table(g), grade.table(g, candidate=True)
    assert "NOT COUNTED" in team and "not counted: no fixture here" in team
    assert f"({points} points not counted: eviction)" in candidate
    assert "not counted: no fixture here" not in candidate   # a hidden test's own reason
    grade.write_reports(g, tmp_path)
    data = check_results_json(tmp_path / "results.json")
    entry = next(t for t in data["tests"] if t["name"] == "rubric: eviction")
    assert "not counted" in entry["output"] and "status" not in entry
    assert data["extra_data"]["not_counted"] == points
    assert not [t for t in data["tests"] if "skipped" in t["tags"] and "status" in t]


def test_hidden_tests_cite_the_prompts_rules() -> None:
    """The collected event names, for each hidden test, only rule labels the prompt holds
    (plugin.rules_of): what the candidate may be told about a hidden failure."""
    from graders.authoring import prompt_lint

    g = grade.run(KATA, "solutions", include_public=False, rubric="eviction", isolate=False,
                  profile="smoke")
    labels = {r.label for r in prompt_lint.parse_rules(catalog.load(KATA))[0]}
    cited = [t for t in g.tests if t.rules]
    assert cited and all(set(t.rules) <= labels for t in cited)
