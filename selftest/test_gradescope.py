"""The Gradescope autograder (graders/packaging/gradescope.py), run as Gradescope runs it: the zip
unpacked into ``source/`` of a scratch root, ``setup.sh`` run there (its install step
pointed at this environment, its checks run for real), then ``run_autograder`` for each
submission put in ``submission/``, and ``results/results.json`` read back."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from graders import catalog, grade
from graders.authoring import mutant
from graders.packaging import bundle, gradescope
from selftest.test_bundle import _clone
from selftest.test_harness import check_results_json

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KATA = "deferred_reclaim"    # the quickest kata to grade (76 tests)
MUTANT = "finish_frees_at_once"   # Rubric: deferred_free
PRIVATE = ("solutions/", "graders/mutants/", "graders/alternatives/", "graders/hostile/",
           "graders/authoring/mutant.py", "graders/authoring/mutantrun.py", "graders/authoring/killmatrix.py", "selftest/")

# one worker builds the module's fixture once (nox -s tests runs with --dist loadgroup)
pytestmark = pytest.mark.xdist_group("gradescope")

@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("gradescope")
    clone = _clone(tmp / "clone")
    out = tmp / "autograder.zip"
    names = gradescope.build(KATA, out, root=clone)
    root = tmp / "autograder"
    source = root / "source"
    with zipfile.ZipFile(out) as zf:
        zf.extractall(source)
        for info in zf.infolist():       # zipfile drops the modes: put them back
            mode = info.external_attr >> 16
            if mode:
                (source / info.filename).chmod(stat.S_IMODE(mode))
    (root / "submission").mkdir()
    (root / "results").mkdir()
    return {"tmp": tmp, "clone": clone, "zip": out, "names": names, "root": root}


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "KATA_", "PYTHONPATH"))}
    env.update(KATA_GRADESCOPE_ROOT=str(root), KATA_GRADESCOPE_PYTHON=sys.executable,
               KATA_GRADESCOPE_PROFILE="smoke", **extra)
    return env


def test_the_zip_holds_the_grader_and_no_solution(layout: dict[str, Any]) -> None:
    names = layout["names"]
    for needed in ("setup.sh", "run_autograder", "requirements.txt", gradescope.CONFIG,
                   "graders/grade/run.py", "graders/sandbox/session.py", f"katas/{KATA}/kata.toml",
                   f"tests/{KATA}/test_{KATA}_public.py"):
        assert needed in names, needed
    assert any(n.startswith(f"graders/hidden/{KATA}/test_") for n in names)
    assert [n for n in names if n.startswith(PRIVATE)] == []
    assert [n for n in names if n.startswith(("graders/hidden/", "tests/", "katas/"))
            and f"/{KATA}/" not in n and not n.endswith("__init__.py")] == []
    with zipfile.ZipFile(layout["zip"]) as zf:
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        toml = tomllib.loads(zf.read(f"katas/{KATA}/kata.toml").decode())
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert set(toml) <= set(bundle.PUBLIC_KATA_KEYS)
    assert all(set(i) <= set(bundle.PUBLIC_RUBRIC_KEYS) for i in toml["rubric"])


def test_setup_sh_checks_the_image(layout: dict[str, Any]) -> None:
    root = layout["root"]
    proc = subprocess.run(["bash", str(root / "source" / "setup.sh")], cwd=root / "source",
                          env=_env(root), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"autograder check: {KATA}" in proc.stdout and "tests collected" in proc.stdout


def _grade(root: Path, files: dict[str, Path], **env: str) -> dict[str, Any]:
    """Put ``files`` in submission/, run run_autograder as Gradescope does (a copy at the
    root, results/ emptied first), and return results.json, checked against the schema."""
    for folder in ("submission", "results"):
        shutil.rmtree(root / folder)
        (root / folder).mkdir()
    for name, src in files.items():
        shutil.copy(src, root / "submission" / name)
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    proc = subprocess.run([str(root / "run_autograder")], cwd=root, env=_env(root, **env),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = check_results_json(root / "results" / "results.json")
    assert sorted(os.listdir(root / "results")) == ["results.json"]
    return data


def _items(data: dict[str, Any]) -> dict[str, int]:
    return {t["name"][len("rubric: "):]: t["score"] for t in data["tests"]
            if t["name"].startswith("rubric: ")}


def test_the_reference_scores_full_marks(layout: dict[str, Any]) -> None:
    data = _grade(layout["root"], {f"{KATA}.py": catalog.SOLUTIONS_DIR / f"{KATA}.py"})
    assert data["score"] == data["extra_data"]["max_score"] == catalog.load(KATA).max_score, \
        data["output"]
    hidden = [t for t in data["tests"] if "graders/hidden/" in t["name"]]
    assert hidden and all(t["visibility"] == "hidden" for t in hidden)
    assert data["extra_data"]["isolation"]["process"] is True


def test_the_stub_scores_zero(layout: dict[str, Any]) -> None:
    data = _grade(layout["root"], {"__init__.py": catalog.KATAS_DIR / KATA / "__init__.py"})
    assert data["score"] == 0 and data["extra_data"]["max_score"] == catalog.load(KATA).max_score
    assert "not implemented yet" in data["output"] or "NotImplementedError" in json.dumps(data)


def test_a_mutant_loses_its_item(layout: dict[str, Any]) -> None:
    wrong = mutant.load(KATA, MUTANT)
    data = _grade(layout["root"], {f"{KATA}.py": mutant.scratch_file(KATA, MUTANT)})
    items = _items(data)
    assert items[wrong.rubric] == 0, items
    points = {i.id: i.points for i in catalog.load(KATA).tested_items}
    assert data["score"] < data["extra_data"]["max_score"]
    assert all(score in (0, points[i]) for i, score in items.items())
    # the item it lost names the rules its failed hidden tests check, and no test
    said = next(t["output"] for t in data["tests"]
                if t["name"] == f"rubric: {wrong.rubric}").splitlines()[-1]
    assert "failed by hidden tests of rule" in said and "test_" not in said, said


def _visible(data: dict[str, Any]) -> list[str]:
    return [data["output"]] + [t["output"] for t in data["tests"] if t["visibility"] == "visible"]


def test_an_upload_that_cannot_load_is_said_once(layout: dict[str, Any]) -> None:
    """A syntax error: one message naming the file as uploaded and the line; every other
    visible entry points to it in one line; no path of the harness anywhere visible."""
    bad = layout["tmp"] / "broken.py"
    bad.write_text("class Broken:\n    pass\n\ndef oops(:\n    pass\n")
    data = _grade(layout["root"], {f"{KATA}.py": bad})
    assert data["score"] == 0
    assert f'"{KATA}.py", line 4' in data["output"] and "SyntaxError" in data["output"]
    for text in _visible(data):
        assert "graders/" not in text and "kata-worker" not in text and "Traceback" not in text
    for t in data["tests"]:
        if t["visibility"] == "visible" and not t["name"].startswith("rubric: "):
            assert t["output"] == grade.LOAD_POINTER, t


def test_a_single_file_under_another_name_is_graded(layout: dict[str, Any]) -> None:
    data = _grade(layout["root"], {"solution.py": catalog.SOLUTIONS_DIR / f"{KATA}.py"})
    assert data["score"] == catalog.load(KATA).max_score, data["output"]
    two = _grade(layout["root"], {"a.py": catalog.SOLUTIONS_DIR / f"{KATA}.py",
                                  "b.py": catalog.SOLUTIONS_DIR / f"{KATA}.py"})
    assert two["score"] == 0 and f"upload your solution as {KATA}.py" in two["output"]
    for text in _visible(two):
        assert "graders/" not in text and "Traceback" not in text


def test_no_sandbox_means_no_grade_unless_allowed(layout: dict[str, Any]) -> None:
    """Where only resource limits are available the autograder refuses, says why and how
    to allow it, and still writes a valid results.json (every item at zero)."""
    data = _grade(layout["root"], {f"{KATA}.py": catalog.SOLUTIONS_DIR / f"{KATA}.py"},
                  KATA_SANDBOX="limits")
    assert data["score"] == 0 and "--allow-limits-only" in data["output"], data["output"]


def test_katas_measured_against_the_reference_need_the_flag(layout: dict[str, Any]) -> None:
    clone, tmp = layout["clone"], layout["tmp"]
    with pytest.raises(gradescope.BuildError, match="--include-reference"):
        gradescope.build("top_p", tmp / "top_p.zip", root=clone)
    assert not (tmp / "top_p.zip").exists()
    names = gradescope.build("top_p", tmp / "top_p.zip", include_reference=True, root=clone)
    assert "solutions/top_p.py" in names
    assert not [n for n in names if n.startswith(("graders/mutants/", "graders/alternatives/"))
                or (n.startswith("solutions/") and "top_p" not in n and n != "solutions/__init__.py")]
    with pytest.raises(gradescope.BuildError, match="exists"):
        gradescope.build("top_p", tmp / "top_p.zip", include_reference=True, root=clone)


def test_which_katas_need_the_reference_is_read_from_the_code(layout: dict[str, Any]) -> None:
    needs = gradescope.needs_reference(layout["clone"])
    assert {"top_p", "radix_cache"} <= set(needs), needs
    assert KATA not in needs      # this module's zip is built without the flag
