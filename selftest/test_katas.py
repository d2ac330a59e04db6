"""The project's checks on every kata (run by ``nox -s tests``).

For every kata: its parts exist and agree (kata.toml, prompt, stub, reference, tests,
mutants); the reference scores full marks on public + hidden tests, isolated and in-process
alike; the stub fails every rubric item with a clear "not implemented yet" and the harness
does not crash; every mutant applies exactly once to its base and loses the rubric item it
names (graded in-process, trusted code: graders/authoring/mutantrun.py); every independent correct
solution scores full marks in both modes.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from graders import catalog, grade
from graders.authoring import mutant, mutantrun

KATAS = catalog.kata_names()
MIN_MUTANTS = 4


def _grouped(names: list[str]) -> list[object]:
    """Each kata's in-process checks (the reference, the stub, the independent solutions)
    on one xdist worker, so that they share one collection (``_in_process``)."""
    return [pytest.param(n, marks=pytest.mark.xdist_group(f"kata-{n}")) for n in names]


@functools.lru_cache(maxsize=None)
def _in_process(name: str) -> dict[str, grade.Grade]:
    """The reference, the stub and every independent solution of the kata graded
    in-process on the smoke profile in one collection, each in a process forked from it
    (graders/authoring/mutantrun.py ``grade_specs``: the grading plugin and pytest's own
    protocol, as ``nox -s kata`` and ``graders.grade --in-process`` run them, without a
    pytest start and a collection for each)."""
    specs = ["solutions", "katas", *mutant.suite_alternative_specs(name)]
    return mutantrun.grade_specs(name, specs, profile="smoke")


def _failures(g: grade.Grade) -> str:
    return "\n".join(f"{t.nodeid}: {t.outcome}\n{t.message[:1500]}"
                     for t in g.tests if t.outcome in ("failed", "not run"))


def _same_in_both_modes(name: str, spec: str) -> tuple[grade.Grade, grade.Grade]:
    """Grade ``spec`` isolated (through the sandbox and the wire) and in-process, both with
    graders.grade and on the same examples (the smoke profile: every fixed case, growth
    check and state machine runs, each property on 10 examples); each rubric item must get
    the same result: isolation must not change an honest score, nor hide a failure. The
    same check at the grading profile's depth is ``nox -s deep``."""
    isolated = grade.run(name, spec, profile="smoke")
    in_process = _in_process(name)[spec]
    _same(spec, isolated, in_process)
    return isolated, in_process


def _same(spec: str, isolated: grade.Grade, in_process: grade.Grade) -> None:
    """Each rubric item has the same status in both grades."""
    differ = grade.items_that_differ(isolated, in_process)
    assert not differ, (
        f"{spec}: rubric items differ between modes (isolated, in-process): {differ}\n"
        f"isolated:\n{_failures(isolated)}\nin-process:\n{_failures(in_process)}")


@pytest.mark.parametrize("name", KATAS)
def test_kata_parts(name: str) -> None:
    kata = catalog.load(name)
    assert (kata.folder / "__init__.py").is_file(), "no stub"
    prompt = kata.prompt_path.read_text(encoding="utf-8")
    assert len(prompt) > 1500, "the prompt is too short to state the problem and its rules"
    for item in kata.rubric:
        assert item.id in prompt, f"the prompt must name rubric item {item.id!r}"
    assert kata.max_score > 0 and kata.minutes > 0 and kata.hints
    assert (catalog.SOLUTIONS_DIR / f"{name}.py").is_file() or \
        (catalog.SOLUTIONS_DIR / name / "__init__.py").is_file(), "no reference"
    assert list(kata.public_tests.glob("test_*.py")), "no public tests"
    assert list(kata.hidden_tests.glob("test_*.py")), "no hidden tests"
    names = mutant.names(name)
    assert len(names) >= MIN_MUTANTS, f"only {len(names)} mutants"
    assert "empty" in names, "no empty mutant (trivial answers, Rubric: *)"
    for stem in names:
        m = mutant.load(name, stem)
        assert m.rubric == "*" or kata.item(m.rubric).graded_by == "tests", f"{stem}: {m.rubric}"
        assert m.rubric == "*" or not kata.item(m.rubric).hardware, (
            f"{stem}: a hardware item cannot be checked without a GPU; name a CPU item")
        assert len(m.bug) > 20, f"{stem}: say the bug in one sentence"


@pytest.mark.parametrize("name", KATAS)
def test_mutants_apply_exactly_once(name: str) -> None:
    """Each mutant is a patch that applies exactly once to its base, compiles, changes it,
    and makes a change no other mutant of the kata makes."""
    problems = mutant.problems(name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", KATAS)
def test_stub_is_a_stub(name: str) -> None:
    """Every public function and method of the stub raises NotImplementedError."""
    tree = ast.parse((catalog.KATAS_DIR / name / "__init__.py").read_text(encoding="utf-8"))
    bodies = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
              and not n.name.startswith("_") or isinstance(n, ast.FunctionDef)
              and n.name == "__init__"]
    assert bodies, "the stub declares no function"
    for fn in bodies:
        raises = [n for n in ast.walk(fn) if isinstance(n, ast.Raise)]
        assert any("NotImplementedError" in ast.dump(r) for r in raises), (
            f"{fn.name} must raise NotImplementedError with a pointer to the prompt")


@pytest.mark.parametrize("name", _grouped(KATAS))
def test_reference_scores_full_marks(name: str) -> None:
    """Full marks isolated and in-process, item by item alike."""
    for g in _same_in_both_modes(name, "solutions"):
        assert g.score == g.max_score, f"{g.score}/{g.max_score}\n{_failures(g)}"
        assert g.restarts == 0
        # only an item graded on GPU timings may drop out of the max score (no data, no GPU)
        skipped = [r.item.id for r in g.items if r.status == "skipped" and not r.item.hardware]
        assert not skipped, f"items skipped without a hardware reason: {skipped}"


# The stubs of these katas are also graded isolated (a driver inside the worker, a server on
# its loopback): the isolated path's failure messages for every other kind of test are the
# same code, covered by the references, the alternatives and the hostile suite.
STUB_ISOLATED = ("backpressure", "stream_detok")


@pytest.mark.parametrize("name", _grouped(KATAS))
def test_stub_fails_every_item_cleanly(name: str) -> None:
    """A fresh stub scores nothing and every failure says "not implemented yet": in-process,
    through the plugin the practice loop (``nox -s kata``) runs, and isolated for
    ``STUB_ISOLATED``."""
    _check_stub(name, _in_process(name)["katas"])
    if name in STUB_ISOLATED:
        _check_stub(name, grade.run(name, "katas", profile="smoke"))


def _check_stub(name: str, g: grade.Grade) -> None:
    kata = catalog.load(name)
    assert g.score == 0, f"the stub scored {g.score}"
    assert {r.item.id for r in g.items if r.status == "failed"} >= \
        {i.id for i in kata.tested_items if any(t.rubric == i.id and t.outcome != "skipped"
                                                for t in g.tests)}
    assert g.restarts == 0, "the stub crashed the test process"
    unclear = [t for t in g.tests if t.outcome == "failed"
               and "not implemented yet" not in t.message]
    assert not unclear, "failures must say 'not implemented yet':\n" + "\n".join(
        f"{t.nodeid}: {t.message[:500]}" for t in unclear[:5])


@pytest.mark.parametrize("name", KATAS)
def test_mutants_lose_their_rubric_items(name: str) -> None:
    """Every mutant of the kata fails a test of the item it names (every item, for ``*``)."""
    verdicts = mutantrun.grade_all(name)
    missed = [v.why_not() for v in verdicts.values() if not v.caught]
    assert not missed, "\n".join(missed)


@pytest.mark.parametrize("name", _grouped([k for k in KATAS if mutant.alternative_files(k)]))
def test_independent_solutions_score_full_marks(name: str) -> None:
    """The kata's blind-written correct solutions (``mutant.suite_alternative_specs``; every
    independent solution where none was written blind) score full marks in-process, in the
    kata's one collection (``_in_process``), on the smoke profile's examples. ``nox -s
    deep`` grades every independent solution in both modes at the grading profile's depth:
    the author-written ones and the isolated grades moved there to keep the suite within
    five minutes on two cores as the katas passed twenty, then thirty."""
    specs = mutant.suite_alternative_specs(name)
    in_process = _in_process(name)
    problems = []
    for spec in specs:
        label = str(Path(spec).relative_to(catalog.ROOT))
        g = in_process[spec]
        if g.score != g.max_score:
            problems.append(f"{label}: {g.score}/{g.max_score}\n{_failures(g)}")
    assert not problems, "\n\n".join(problems)


def test_readme_kata_table_is_current() -> None:
    from graders.cli import markdown_table

    readme = (catalog.ROOT / "README.md").read_text(encoding="utf-8")
    assert markdown_table() in readme, (
        "README.md's kata table is out of date: paste `python -m graders.cli table`")


def test_spec_decode_messages_show_the_budget_the_test_passed() -> None:
    """A public test that leaves ``remaining`` to its default passes a real budget to the
    implementation; its failure message must print that budget, not ``remaining = None``."""
    g = grade.run("spec_decode", "mutant:accepted_uncapped", rubric="eos_and_cap",
                  include_hidden=False, isolate=False, profile="smoke")
    [failed] = [t for t in g.tests
                if t.nodeid.endswith("::test_prompt_example_eos_inside_the_drafts")]
    assert failed.outcome == "failed", "the check needs the mutant to fail this test"
    assert "remaining = None" not in failed.message, failed.message
    assert "remaining = [100]" in failed.message, failed.message
