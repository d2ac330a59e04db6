"""The terminal report of ``nox -s grade``: a compact table, then each failed item's first
failure in full, within what a candidate may see of hidden tests."""

from __future__ import annotations

from graders import catalog, grade

KATA = "radix_cache"

PUBLIC_SENTENCE = ("acquire([1, 2, 3, 4]) on a pool of 4 slots after evicting the only "
                   "unpinned leaf must hand back all four slots, and the free count must "
                   "return to 4 once the request is released; got free = 3")
HIDDEN_SENTENCE = ("state machine step 17: release of a request that was never acquired "
                   "must raise KeyError and leave the tree exactly as it was before the call")


def _longrepr(path: str, sentence: str) -> str:
    """A pytest failure as the plugin records it: the test's source, the E block, the
    closing location line."""
    return (f"    def test_x():\n        cache = m.RadixCache(4)\n>       assert free == 4, msg\n"
            f"E       AssertionError: {sentence}\nE       assert 3 == 4\n\n"
            f"{path}:42: AssertionError")


def _grade() -> grade.Grade:
    kata = catalog.load(KATA)
    tested = [i.id for i in kata.tested_items]
    public_file = f"tests/{KATA}/test_{KATA}_public.py"
    hidden_file = f"graders/hidden/{KATA}/test_{KATA}_traps.py"
    tests = [
        # item 0: a public failure after a passed test
        grade.TestResult(f"{public_file}::test_ok", tested[0], "public", "passed"),
        grade.TestResult(f"{public_file}::test_free_count_returns", tested[0], "public",
                         "failed", _longrepr(public_file, PUBLIC_SENTENCE)),
        # item 1: failed by a hidden test alone
        grade.TestResult(f"{hidden_file}::test_release_unknown_is_atomic", tested[1], "hidden",
                         "failed", _longrepr(hidden_file, HIDDEN_SENTENCE)),
        # item 2: a harness verdict with no E block
        grade.TestResult(f"{public_file}::test_hangs", tested[2], "public", "failed",
                         "timed out: the test ran past its 60 s bound and the worker was "
                         "killed; the implementation loops or waits forever"),
    ]
    tests += [grade.TestResult(f"{public_file}::test_{i}", i, "public", "passed")
              for i in tested[3:]]
    g = grade.Grade(kata, "submission.py", None, "grade", tests)
    grade.score(g)
    return g


def _table_rows(text: str) -> list[str]:
    return text.split("\n\n")[1].splitlines()[1:]


def test_team_table_stays_compact_and_gives_each_first_failure_in_full() -> None:
    g = _grade()
    text = grade.table(g)
    rows = _table_rows(text)
    assert rows and all(len(row) <= 160 for row in rows), "the table's rows must stay short"
    assert PUBLIC_SENTENCE not in "\n".join(rows), "the whole message belongs below the table"
    details = text.split("first failure of each failed item, in full:")[1]
    flat = " ".join(details.split())
    for sentence in (PUBLIC_SENTENCE, HIDDEN_SENTENCE):
        assert sentence in flat, f"cut or missing: {sentence[:40]}..."
    assert "the implementation loops or waits forever" in flat
    assert "test_release_unknown_is_atomic" in details, "the team's terminal names hidden tests"
    assert ":42: AssertionError" in details
    assert "def test_x" not in details and "cache = m.RadixCache" not in details, \
        "the test's source is not part of the explanation"
    ok_item = catalog.load(KATA).tested_items[3].id
    assert f"  {ok_item}:" not in details, "a passed item has no detail"


def test_candidate_table_gives_public_failures_in_full_and_nothing_hidden() -> None:
    g = _grade()
    text = grade.table(g, candidate=True)
    flat = " ".join(text.split())
    assert PUBLIC_SENTENCE in flat
    assert HIDDEN_SENTENCE[:30] not in flat and "test_release_unknown" not in text
    assert "graders/hidden" not in text
    hidden_item = catalog.load(KATA).tested_items[1].id
    assert f"{hidden_item}: failed by hidden tests (their detail is not shown)" in text
    # results.json's top-level output is this table: the same rule holds there
    output = grade.results_json(g)["output"]
    assert PUBLIC_SENTENCE in " ".join(output.split()) and "test_release_unknown" not in output


def test_overlong_explanation_is_cut_at_a_line_with_a_count() -> None:
    g = _grade()
    many = "\n".join(f"E       line {n} of a long comparison" for n in range(200))
    g.tests[1].message = f">       assert x\n{many}\n\npath.py:1: AssertionError"
    details = grade.table(g).split("in full:")[1]
    assert "line 0 of a long comparison" in details
    assert f"line {grade.DETAIL_LINES - 1} of a long comparison" in details
    assert f"line {grade.DETAIL_LINES} of a long comparison" not in details
    assert f"... {200 + 1 - grade.DETAIL_LINES} more lines in junit.xml" in details


def test_a_hardware_item_says_what_graded_it() -> None:
    """A hardware test's ``graded_on`` note reaches its item in the table and results.json; a
    skipped hardware item says it is not counted."""
    kata = catalog.load("gemm_waves")
    hw = kata.item("chunk_on_hardware")
    assert hw.hardware
    node = "graders/hidden/gemm_waves/test_gemm_waves_hardware.py::test_chunk_regret_on_measured_sweep"
    note = "graded on published H100 measurements (microsoft/vidur, 2024, fp16)"
    for outcome in ("passed", "failed"):
        t = grade.TestResult(node, hw.id, "hidden", outcome, "" if outcome == "passed" else "E  x",
                             note=note)
        g = grade.Grade(kata, "submission.py", None, "grade", [t], rubric_filter=hw.id)
        grade.score(g)
        [r] = g.items
        assert r.note == note
        assert note[:40] in grade.table(g, candidate=True)
        [entry] = [e for e in grade.results_json(g)["tests"] if e["name"] == f"rubric: {hw.id}"]
        assert note in entry["output"]
    skipped = grade.TestResult(node, hw.id, "hidden", "skipped", "not counted (no data): no GPU")
    g = grade.Grade(kata, "submission.py", None, "grade", [skipped], rubric_filter=hw.id)
    grade.score(g)
    assert g.items[0].note == "not counted (no data)" and g.max_score == 0
