"""The project's checks on every kata (run by ``nox -s tests``).

For every kata: its parts exist and agree (kata.toml, prompt, stub, reference, tests,
mutants); the reference scores full marks on public + hidden tests; the stub fails every
rubric item with a clear "not implemented yet" and the harness does not crash; every mutant
loses the rubric item its docstring names; every independent correct solution scores full
marks.
"""

from __future__ import annotations

import ast

import pytest

from graders import catalog, grade, killmatrix

KATAS = catalog.kata_names()
MIN_MUTANTS = 4


def _mutants() -> list[tuple[str, str]]:
    out = []
    for name in KATAS:
        for path in killmatrix.mutant_files(catalog.load(name)):
            out.append((name, path.stem))
    return out


def _alternatives() -> list[tuple[str, str]]:
    out = []
    for name in KATAS:
        for path in killmatrix.alternative_files(catalog.load(name)):
            out.append((name, str(path.relative_to(catalog.ROOT))))
    return out


def _failures(g: grade.Grade) -> str:
    return "\n".join(f"{t.nodeid}: {t.outcome}\n{t.message[:1500]}"
                     for t in g.tests if t.outcome in ("failed", "not run"))


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
    mutants = killmatrix.mutant_files(kata)
    assert len(mutants) >= MIN_MUTANTS, f"only {len(mutants)} mutants"
    assert any(p.stem == "empty" for p in mutants), "no empty.py mutant"
    for path in mutants:
        item = killmatrix.named_item(path)
        assert item == "*" or kata.item(item).graded_by == "tests", f"{path.name}: {item}"
        assert item == "*" or not kata.item(item).hardware, (
            f"{path.name}: a hardware item cannot be checked without a GPU; name a CPU item")
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        assert len(doc.splitlines()[0]) > 20, f"{path.name}: say the bug in one sentence"


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


@pytest.mark.parametrize("name", KATAS)
def test_reference_scores_full_marks(name: str) -> None:
    g = grade.run(name, "solutions")
    assert g.score == g.max_score, f"{g.score}/{g.max_score}\n{_failures(g)}"
    assert g.restarts == 0
    # only an item graded on GPU timings may drop out of the max score (no data, no GPU)
    skipped = [r.item.id for r in g.items if r.status == "skipped" and not r.item.hardware]
    assert not skipped, f"items skipped without a hardware reason: {skipped}"


@pytest.mark.parametrize("name", KATAS)
def test_stub_fails_every_item_cleanly(name: str) -> None:
    g = grade.run(name, "katas", profile="selftest")
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


@pytest.mark.parametrize(("name", "mutant"), _mutants())
def test_mutant_loses_its_rubric_item(name: str, mutant: str) -> None:
    kata = catalog.load(name)
    path = kata.mutants_dir / f"{mutant}.py"
    item = killmatrix.named_item(path)
    if item == "*":
        g = grade.run(name, str(path))
        lost = {r.item.id for r in g.items if r.status == "failed"}
        ran = {t.rubric for t in g.tests if t.outcome != "skipped"}
        assert lost >= ran, f"{mutant} must lose every item; kept {sorted(ran - lost)}"
        return
    g = grade.run(name, str(path), rubric=item, exitfirst=True)
    (result,) = g.items
    assert result.status == "failed", (
        f"mutant {mutant} ({path.name}) is not caught by any test of rubric item {item!r}")
    bad = [t for t in g.tests if t.outcome == "failed"]
    assert not any("failed to import" in t.message for t in bad), (
        f"mutant {mutant} does not even import:\n{bad[0].message[:800]}")


@pytest.mark.parametrize(("name", "alt"), _alternatives())
def test_independent_solution_scores_full_marks(name: str, alt: str) -> None:
    path = catalog.ROOT / alt
    g = grade.run(name, str(path.parent if path.name == "__init__.py" else path))
    assert g.score == g.max_score, f"{alt}: {g.score}/{g.max_score}\n{_failures(g)}"


def test_readme_kata_table_is_current() -> None:
    from graders.cli import markdown_table

    readme = (catalog.ROOT / "README.md").read_text(encoding="utf-8")
    assert markdown_table() in readme, (
        "README.md's kata table is out of date: paste `python -m graders.cli table`")
