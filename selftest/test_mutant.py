"""The mutant format (graders/authoring/mutant.py): strict application, the header, conversion, and
``--impl mutant:NAME``; and the verdict rules of graders/authoring/mutantrun.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from graders import catalog, impl
from graders.authoring import mutant, mutantrun

KATA = "token_bucket"
BASE = "solutions/token_bucket/__init__.py"
LINE = "        del self._live[request_id]"


def _patch(header: str, hunk: str, base: str = BASE) -> str:
    return f"{header}\n\n--- a/{base}\n+++ b/{base}\n{hunk}"


def _hunk_removing(line: str, context: int = 1) -> str:
    lines = (catalog.ROOT / BASE).read_text(encoding="utf-8").split("\n")
    at = lines.index(line)
    before, after = lines[at - context:at], lines[at + 1:at + 1 + context]
    body = [f" {x}" for x in before] + [f"-{line}"] + [f" {x}" for x in after]
    start = at - context + 1
    return (f"@@ -{start},{len(before) + 1 + len(after)} +{start},{len(before) + len(after)} @@\n"
            + "\n".join(body) + "\n")


HEADER = "Bug: finish never forgets the request, so a second finish refunds again.\nRubric: reserve_refund"


def _parse(text: str, name: str = "x") -> mutant.Mutant:
    return mutant.parse(text, KATA, name, Path(f"{name}.patch"))


def test_a_patch_builds_its_base_with_the_change() -> None:
    m = _parse(_patch(HEADER, _hunk_removing(LINE)))
    assert (m.bug, m.rubric, m.blind, m.base) == (
        "finish never forgets the request, so a second finish refunds again.", "reserve_refund",
        None, BASE)
    built = mutant.build(m)
    base = (catalog.ROOT / BASE).read_text(encoding="utf-8")
    assert built == base.replace(LINE + "\n", "", 1) != base


def test_every_converted_mutant_builds_and_the_header_reads() -> None:
    m = mutant.load(KATA, "refund_twice")
    assert m.rubric == "reserve_refund" and m.base == BASE and len(m.hunks) == 1
    assert mutant.load("radix_cache", "blind_cap_at_boundaries").blind


@pytest.mark.parametrize(("hunk", "error"), [
    ("@@ -1,2 +1,2 @@\n-no such line in the base\n+x\n no such line either\n", "does not apply"),
    ("@@ -1,1 +1,1 @@\n-\n+x = 1\n", "ambiguous"),
    ("@@ -1,1 +1,1 @@\n-" + LINE + "\n+" + LINE + "  # moved\n", "stale"),
    ("@@ -1,1 +1,1 @@\n " + LINE + "\n", "changes nothing"),
    ("@@ -1,2 +1,1 @@\n-" + LINE + "\n", "old and"),
])
def test_a_change_that_does_not_apply_exactly_once_is_refused(hunk: str, error: str) -> None:
    with pytest.raises(mutant.MutantError, match=error) as info:
        mutant.build(_parse(_patch(HEADER, hunk), name="stale_one"))
    assert "stale_one" in str(info.value)


def test_a_hunk_whose_new_line_number_is_wrong_is_refused() -> None:
    hunk = _hunk_removing(LINE).replace(" +", " +1", 1)
    with pytest.raises(mutant.MutantError, match="gives new line"):
        mutant.build(_parse(_patch(HEADER, hunk)))


def test_a_patch_that_leaves_the_base_unchanged_is_refused() -> None:
    lines = (catalog.ROOT / BASE).read_text(encoding="utf-8").split("\n")
    at = lines.index(LINE)
    hunk = f"@@ -{at + 1},1 +{at + 1},1 @@\n-{LINE}\n+{LINE}\n"
    with pytest.raises(mutant.MutantError, match="unchanged"):
        mutant.build(_parse(_patch(HEADER, hunk)))


@pytest.mark.parametrize(("header", "base", "error"), [
    ("Rubric: reserve_refund\nBug: the order is wrong here, fields swapped", BASE, "in that order"),
    ("Bug: no rubric line in this header at all", BASE, "in that order"),
    (HEADER, "solutions/top_p.py", "neither the reference nor an alternative"),
    (HEADER.replace("reserve_refund", "*"), "katas/top_p/__init__.py", "neither"),
])
def test_a_malformed_header_is_refused(header: str, base: str, error: str) -> None:
    with pytest.raises(mutant.MutantError, match=error):
        _parse(_patch(header, _hunk_removing(LINE), base=base))


def test_a_blind_mutant_says_so_on_its_first_line() -> None:
    text = _patch(HEADER, _hunk_removing(LINE))
    with pytest.raises(mutant.MutantError, match="Blind"):
        _parse(text, name="blind_x")
    m = _parse("Blind: from the prompt and the stub only, 2026-12-01\n" + text, name="blind_x")
    assert m.blind == "from the prompt and the stub only, 2026-12-01"


def test_stale_line_numbers_are_refreshed_when_the_lines_still_match(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog, "MUTANTS_DIR", tmp_path)
    (tmp_path / KATA).mkdir()
    good = _hunk_removing(LINE)
    head, body = good.split("\n", 1)
    start = int(head.split(",")[0].removeprefix("@@ -"))
    moved = head.replace(f"-{start},", f"-{start - 5},").replace(f"+{start},", f"+{start - 5},")
    path = tmp_path / KATA / "moved.patch"
    path.write_text(_patch(HEADER, moved + "\n" + body), encoding="utf-8")
    with pytest.raises(mutant.MutantError, match="stale"):
        mutant.build(mutant.load(KATA, "moved"))
    assert mutant.refresh(KATA) == ["moved"]
    assert mutant.build(mutant.load(KATA, "moved")) == mutant.build(
        _parse(_patch(HEADER, good)))


def test_convert_turns_a_whole_file_into_a_patch_that_builds_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog, "MUTANTS_DIR", tmp_path)
    base = (catalog.ROOT / BASE).read_text(encoding="utf-8")
    body = base.split('"""', 2)[2]
    whole = tmp_path / "refunds_again.py"
    whole.write_text('"""Finish never forgets the request, so it refunds again.\n\n'
                     'Rubric: reserve_refund\n"""' + body.replace(LINE + "\n", ""),
                     encoding="utf-8")
    out, base_rel, changed = mutant.convert(KATA, whole)
    assert (base_rel, changed) == (BASE, 1) and not whole.exists()
    m = mutant.load(KATA, "refunds_again")
    assert m.rubric == "reserve_refund" and m.bug.startswith("Finish never forgets")
    assert mutant.build(m) == base.replace(LINE + "\n", "")
    removed = [ln for ln in out.read_text(encoding="utf-8").split("\n")
               if ln.startswith("-") and not ln.startswith("---")]
    assert removed == [f"-{LINE}"]


def test_impl_mutant_spec_builds_the_mutant_of_the_kata() -> None:
    path = impl.resolve_submission(KATA, "mutant:refund_twice")
    assert path.read_text(encoding="utf-8") == mutant.build(mutant.load(KATA, "refund_twice"))
    with pytest.raises(impl.SubmissionError, match="no mutant"):
        impl.resolve_submission(KATA, "mutant:no_such_bug")


def test_materialise_writes_one_gradable_file(tmp_path: Path) -> None:
    path = mutant.materialise(KATA, "refund_twice", tmp_path / "targets")
    assert path == tmp_path / "targets" / "refund_twice.py"
    compile(path.read_text(encoding="utf-8"), str(path), "exec")
    assert [p.name for p in path.parent.iterdir()] == ["refund_twice.py"]


@pytest.mark.parametrize(("rubric", "lost", "ran", "error", "caught"), [
    ("bad_input", {"bad_input": "assert 1 == 2"}, ["bad_input"], "", True),
    ("bad_input", {"other": "assert"}, ["bad_input", "other"], "", False),
    ("bad_input", {"bad_input": "SubmissionError: ... failed to import: x"}, ["bad_input"], "",
     False),
    ("bad_input", {"bad_input": "assert"}, ["bad_input"], "pytest ended with exit code 2", False),
    ("*", {"a": "x", "b": "y"}, ["a", "b"], "", True),
    ("*", {"a": "x"}, ["a", "b"], "", False),
    ("*", {}, [], "", False),
])
def test_a_mutant_is_caught_only_by_a_real_failure_of_its_item(
        rubric: str, lost: dict[str, str], ran: list[str], error: str, caught: bool) -> None:
    v = mutantrun.Verdict("m", rubric, lost, ran, error)
    assert v.caught is caught
    assert bool(v.why_not()) is not caught


def test_recorded_catchers_order_the_run_but_never_decide_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant runs its recorded catchers first (graders/mutants/<kata>/catchers.json); a
    stale record (a test that passes now, a test of another item, a nodeid that no longer
    exists) changes nothing about the verdict: the item's other tests still run."""
    names = ["budget_off_by_one", "pending_not_counted"]
    honest = mutantrun.grade_in_process("backpressure", names)
    assert all(v.caught and v.catchers for v in honest.values())
    other = "tests/backpressure/test_backpressure_public.py::no_such_test"
    stale = {n: [other, *[c for m, v in honest.items() if m != n for c in v.catchers]]
             for n in names}
    monkeypatch.setattr(mutant, "catchers", lambda kata: stale)
    again = mutantrun.grade_in_process("backpressure", names)
    for n in names:
        assert again[n].caught and again[n].rubric == honest[n].rubric
        assert again[n].catchers and set(again[n].ran) == set(honest[n].ran)


def test_every_mutant_has_a_recorded_catcher() -> None:
    """The suite's mutant check is fast only with a catcher per mutant; one missing is a
    problem that says how to record it."""
    kata = "roofline"
    have = mutant.catchers(kata)
    assert set(have) == set(mutant.names(kata))
    assert all(isinstance(n, str) and "::" in n for v in have.values() for n in v)
