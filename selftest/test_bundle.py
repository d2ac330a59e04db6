"""The candidate bundle (graders/packaging/bundle.py): built from a scratch clone holding a solved
kata and a dirty tree, it leaks nothing, and its own nox sessions work offline."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from graders import catalog
from graders.packaging import bundle

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KATA = "radix_cache"
OTHER = "token_bucket"      # a kata with a second file in its folder (the bound test)
PRIVATE = ("solutions/", "graders/hidden/", "graders/mutants/", "graders/alternatives/",
           "graders/hostile/", "graders/hardware/", "selftest/", "docs/", ".github/", ".ci/")
GIT = ["git", "-c", "user.name=selftest", "-c", "user.email=selftest@example.invalid",
       "-c", "commit.gpgsign=false"]

# one worker builds the module's fixture once (nox -s tests runs with --dist loadgroup)
pytestmark = pytest.mark.xdist_group("bundle")

def _git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def _clone(dest: Path) -> Path:
    """A clone of this checkout's last commit (objects shared, nothing copied but the tree)."""
    head = _git(catalog.ROOT, "rev-parse", "HEAD").strip()
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(catalog.ROOT),
                    str(dest)], check=True, capture_output=True)
    _git(dest, "checkout", "-q", head)
    return dest


def _solve(where: Path, name: str) -> None:
    """Copy the reference over the stub in ``where``, as a candidate (or an interviewer)
    who solved it."""
    ref = catalog.SOLUTIONS_DIR / f"{name}.py"
    if ref.is_file():
        shutil.copy(ref, where / "katas" / name / "__init__.py")
    else:
        shutil.copytree(catalog.SOLUTIONS_DIR / name, where / "katas" / name, dirs_exist_ok=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("bundle")
    clone = _clone(tmp / "clone")
    secret = _private_lines(clone)     # read before the clone is changed
    _solve(clone, KATA)
    _solve(clone, OTHER)
    (clone / "tests" / KATA / "test_mine.py").write_text("def test_mine():\n    pass\n")
    with (clone / "graders" / "grade" / "run.py").open("a") as fh:
        fh.write("\n# LOCAL-EDIT-NOT-COMMITTED\n")
    (clone / "solutions" / "extra_notes.py").write_text("SECRET_MARKER_UNTRACKED = 1\n")
    with pytest.raises(bundle.BundleError) as refused:
        bundle.write_bundle(tmp / "refused", [KATA, OTHER], root=clone)
    warnings: list[str] = []
    out = tmp / "out"
    files = bundle.write_bundle(out, [KATA, OTHER], ignore_changes=True, root=clone,
                                warn=warnings.append)
    return {"clone": clone, "out": out, "files": files, "refused": str(refused.value),
            "warnings": warnings, "tmp": tmp, "secret": secret}


def _private_lines(clone: Path) -> set[str]:
    """The lines of the references, hidden tests, alternatives and mutants (what a patch
    adds) that no file outside those folders holds."""
    public = set()
    for path in _tracked(clone):
        if not str(path.relative_to(clone)).startswith(PRIVATE):
            public.update(_lines(path.read_text(errors="replace")))
    secret = set()
    for path in _tracked(clone, "solutions", "graders/hidden", "graders/alternatives"):
        if path.suffix in (".py", ".md"):
            secret.update(_lines(path.read_text(errors="replace")))
    for patch in (clone / "graders" / "mutants").rglob("*.patch"):
        secret.update(_lines("\n".join(line[1:] for line in patch.read_text().splitlines()
                                       if line.startswith("+") and not line.startswith("+++"))))
    return secret - public


def test_a_dirty_kata_is_refused_with_what_to_do(built: dict[str, Any]) -> None:
    msg = built["refused"]
    for path in (f"katas/{KATA}/__init__.py", f"tests/{KATA}/test_mine.py",
                 f"katas/{OTHER}/__init__.py"):
        assert path in msg, msg
    assert "graders/grade/run.py" not in msg, "only the katas' own files decide a refusal"
    assert "--ignore-changes" in msg and "git stash" in msg and "commit" in msg, msg
    assert not (built["tmp"] / "refused").exists(), "a refused bundle writes nothing"
    assert built["warnings"] and f"katas/{KATA}/__init__.py" in built["warnings"][0]
    assert "NOT in the bundle" in built["warnings"][0]
    assert any("graders/grade/run.py" in w and "not in it" in w for w in built["warnings"][1:])


def test_the_bundle_holds_the_committed_stub_and_nothing_private(built: dict[str, Any]) -> None:
    clone, out = built["clone"], built["out"]
    rel = sorted(str(p.relative_to(out)) for p in built["files"])
    private = [r for r in rel if r.startswith(PRIVATE)]
    assert not private, private
    harness = "|".join(re.escape(h) + (".*[.]py" if h.endswith("/") else "")
                       for h in bundle.HARNESS)
    allowed = re.compile(
        rf"^(katas/({KATA}|{OTHER})/|tests/({KATA}|{OTHER})/|data/|hardware_fixtures/"
        r"|graders/(support|stubs)/\w+\.py$|(katas|tests)/__init__\.py$"
        r"|(README\.md|noxfile\.py|pyproject\.toml|conftest\.py)$"
        rf"|graders/({harness})$)")
    assert [r for r in rel if not allowed.match(r)] == []
    assert f"tests/{KATA}/test_mine.py" not in rel
    for name in (KATA, OTHER):
        shipped = (out / "katas" / name / "__init__.py").read_text()
        assert shipped == _git(clone, "show", f"HEAD:katas/{name}/__init__.py")
        assert catalog.stub_problems(shipped, name) == []
    assert "LOCAL-EDIT-NOT-COMMITTED" not in (out / "graders" / "grade" / "run.py").read_text()

    # no line of a reference, hidden test, alternative or mutant that the public side lacks
    secret = set(built["secret"])
    assert len(secret) > 1000, "the check needs the private sources to compare against"
    secret.add("SECRET_MARKER_UNTRACKED = 1")
    hidden_names = {m for p in (clone / "graders" / "hidden").rglob("test_*.py")
                    for m in re.findall(r"^def (test_\w+)", p.read_text(), re.MULTILINE)}
    hidden_names -= {m for p in (clone / "tests").rglob("test_*.py")     # same name in both
                     for m in re.findall(r"^def (test_\w+)", p.read_text(), re.MULTILINE)}
    assert hidden_names
    for path in built["files"]:
        text = path.read_text(errors="replace")
        leaked = sorted(_lines(text) & secret)
        assert not leaked, f"{path.relative_to(out)} holds private lines: {leaked[:3]}"
        named = sorted(hidden_names & set(re.findall(r"\w+", text)))
        assert not named, f"{path.relative_to(out)} names hidden tests: {named[:3]}"


def test_the_shipped_kata_toml_has_no_interviewer_field(built: dict[str, Any]) -> None:
    clone, out = built["clone"], built["out"]
    blob = "\n".join(p.read_text(errors="replace") for p in built["files"])
    for name in (KATA, OTHER):
        full = tomllib.loads((clone / "katas" / name / "kata.toml").read_text())
        shipped = tomllib.loads((out / "katas" / name / "kata.toml").read_text())
        assert set(shipped) <= set(bundle.PUBLIC_KATA_KEYS)
        assert shipped["rubric"] and all(set(i) <= set(bundle.PUBLIC_RUBRIC_KEYS)
                                         for i in shipped["rubric"])
        assert [i["id"] for i in shipped["rubric"]] == [i["id"] for i in full["rubric"]]
        assert shipped["hints"] == full["hints"] and shipped["title"] == full["title"]
        private = [full.get("interviewer", {}).get("overview", "")]
        for item in full["rubric"]:
            private += item.get("follow_ups", []) + [item.get("good_answer", "")]
        private = [p for p in private if p]
        assert private, f"{name}: the check needs interviewer fields to look for"
        leaked = [p[:60] for p in private if p in blob]
        assert not leaked, f"interviewer text in the bundle: {leaked}"


def test_every_kata_toml_key_is_classified() -> None:
    """A new kata.toml field must be declared public or private in graders/packaging/bundle.py."""
    known_top = set(bundle.PUBLIC_KATA_KEYS) | set(bundle.INTERVIEWER_KEYS) | set(
        bundle.MAINTAINER_KEYS)
    known_item = set(bundle.PUBLIC_RUBRIC_KEYS) | set(bundle.INTERVIEWER_KEYS)
    for kata in catalog.load_all():
        assert set(kata.raw) <= known_top, (kata.name, set(kata.raw) - known_top)
        for item in kata.raw["rubric"]:
            assert set(item) <= known_item, (kata.name, set(item) - known_item)
        assert set(kata.raw.get("grading", {})) <= set(bundle.PUBLIC_GRADING_KEYS)


def test_a_committed_solution_is_refused(tmp_path: Path) -> None:
    clone = _clone(tmp_path / "clone")
    _solve(clone, KATA)
    _git(clone, "commit", "-q", "-am", "solved")
    with pytest.raises(bundle.BundleError) as exc:
        bundle.write_bundle(tmp_path / "out", [KATA], root=clone)
    assert "does more than raise NotImplementedError" in str(exc.value)
    assert f"katas/{KATA}/__init__.py" in str(exc.value)
    assert not (tmp_path / "out").exists()


def test_bad_requests_change_nothing(tmp_path: Path) -> None:
    with pytest.raises(bundle.BundleError, match="no committed kata named 'nope'"):
        bundle.write_bundle(tmp_path / "a", ["nope"])
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "keep.txt").write_text("x")
    with pytest.raises(bundle.BundleError, match="not an empty folder"):
        bundle.write_bundle(tmp_path / "b", [KATA])
    assert sorted(os.listdir(tmp_path / "b")) == ["keep.txt"]
    assert not (tmp_path / "a").exists()


def test_the_bundles_nox_sessions_work_offline(built: dict[str, Any]) -> None:
    """Its nox lists only sessions that work there, runs ``kata`` by default, and its
    ``grade`` says that only public tests ran and that this is not a score."""
    out = built["out"]
    _reuse_this_environment(out)
    listed = _nox(out, "-l").stdout
    sessions = re.findall(r"^([*-]) (\w+)", listed, re.MULTILINE)
    assert sorted(n for _, n in sessions) == sorted(bundle.BUNDLE_SESSIONS), listed
    assert [n for mark, n in sessions if mark == "*"] == ["kata"], listed
    assert "hidden" not in re.search(r"^- grade -> (.*)$", listed, re.MULTILINE).group(1) \
        .replace("hidden tests are not in this bundle", ""), listed

    bare = _nox(out)     # the default session: the katas and how to start
    assert bare.returncode == 0 and KATA in bare.stdout and "not a score" in bare.stdout, \
        bare.stdout[-2000:] + bare.stderr[-2000:]
    stub = _nox(out, "-s", "kata", "--", KATA)
    assert stub.returncode != 0 and "not implemented yet" in stub.stdout, stub.stdout[-2000:]

    _solve(out, KATA)    # the candidate solves it in the bundle
    passed = _nox(out, "-s", "kata", "--", KATA)
    assert passed.returncode == 0 and "11 passed" in passed.stdout, passed.stdout[-2000:]
    # typecheck's contract check reads the bundle's copy of the stub (no git there); its
    # mypy step is the same as in the repository and is left out here (seconds of mypy)
    code = ("from graders import typecheck as t; import sys; s = t._pristine_stub(sys.argv[1], "
            "True); print(s is not None and 'NotImplementedError' in s, t.contract_differences("
            "s, open(f'katas/{sys.argv[1]}/__init__.py').read()))")
    typed = subprocess.run([sys.executable, "-c", code, KATA], cwd=out, capture_output=True,
                           text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(out)})
    assert typed.stdout.split() == ["True", "[]"], typed.stdout + typed.stderr[-2000:]
    graded = _nox(out, "-s", "grade", "--", KATA, "--profile", "smoke")
    text = graded.stdout
    assert graded.returncode == 0, text[-2000:] + graded.stderr[-2000:]
    assert "NOT A SCORE" in text and "public tests only: 100/100" in text, text[-2000:]
    assert not re.search(r"^\s*score:", text, re.MULTILINE), text[-2000:]


def _nox(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHONPATH"))}
    env.update(PIP_NO_INDEX="1", UV_OFFLINE="1", NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "nox", "--no-color", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def _reuse_this_environment(out: Path) -> None:
    """Give the bundle a ``.nox/katas-env`` that nox accepts as built (its stamp matches the
    bundle's pyproject.toml) and whose packages are this environment's (a .pth file), so
    that its sessions start offline and install nothing."""
    env_dir = out / ".nox" / "katas-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    site = Path(sysconfig.get_paths(vars={"base": str(env_dir), "platbase": str(env_dir)})[
        "purelib"])
    (site / "_this_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    spec = importlib.util.spec_from_file_location("_bundle_noxfile", out / "noxfile.py")
    assert spec is not None and spec.loader is not None
    noxfile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(noxfile)
    import hashlib

    assert noxfile.BASE == "candidate", "the bundle's environment is the candidate's"
    digest = hashlib.sha256("\n".join(noxfile._requirements((noxfile.BASE,))).encode()
                            ).hexdigest()
    (env_dir / "requirements.sha256").write_text(f"{noxfile.BASE}\n{digest}")


def _tracked(repo: Path, *paths: str) -> list[Path]:
    names = _git(repo, "ls-files", "--", *paths).splitlines()
    return [repo / n for n in names if (repo / n).is_file()]


def _lines(text: str) -> set[str]:
    """The lines worth matching: long enough to be specific."""
    return {s for s in (line.strip() for line in text.splitlines()) if len(s) >= 25}


# imported only on paths a bundle never takes (a mutant spec: --impl mutant:NAME)
NOT_SHIPPED_ON_PURPOSE = {"authoring"}


def test_every_graders_module_the_harness_imports_is_shipped(built: dict[str, Any]) -> None:
    """A module added to the harness (imported by a shipped one) must be added to
    bundle.HARNESS too, or the bundle breaks on the path that imports it."""
    out = built["out"]
    shipped = {p.stem for p in (out / "graders").glob("*.py")} | {
        p.name for p in (out / "graders").iterdir() if p.is_dir()}
    wanted: dict[str, str] = {}
    for path in [*(out / "graders").rglob("*.py"), *(out / "tests").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module == "graders":
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("graders."):
                names = [(node.module or "").split(".")[1]]
            elif isinstance(node, ast.Import):
                names = [a.name.split(".")[1] for a in node.names
                         if a.name.startswith("graders.")]
            for name in names:
                wanted.setdefault(name, str(path.relative_to(out)))
    missing = {n: where for n, where in wanted.items()
               if n not in shipped and n not in NOT_SHIPPED_ON_PURPOSE}
    assert not missing, f"imported but not in bundle.HARNESS: {missing}"


def test_an_interview_in_the_bundle(built: dict[str, Any], tmp_path: Path) -> None:
    """In a bundle, a session starts from the shipped copy of the stub even when the kata
    folder was solved in place, and the interviewer's view says that no notes ship."""
    out = built["out"]
    _solve(out, KATA)    # an earlier candidate solved katas/NAME in place
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHONPATH"))}
    view = subprocess.run([sys.executable, "-m", "graders.interview", KATA, "--interviewer",
                           "--out", str(tmp_path)], cwd=out, env=env, capture_output=True,
                          text=True, timeout=60, input="")
    assert view.returncode == 0, view.stderr
    assert "NO INTERVIEWER NOTES HERE" in view.stdout and "follow-up:" not in view.stdout
    session = subprocess.run([sys.executable, "-m", "graders.interview", KATA, "--candidate",
                              "Ann", "--out", str(tmp_path)], cwd=out, env=env,
                             capture_output=True, text=True, timeout=60, input="")
    assert session.returncode == 0, session.stderr
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert (folder / "work" / "__init__.py").read_text() == \
        (out / "graders" / "stubs" / f"{KATA}.py").read_text()
    assert "ended by: end of input" in (folder / "report.md").read_text()
