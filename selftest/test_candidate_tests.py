"""Candidate-written tests (graders/candidate_tests.py): they run only in the sandbox, every
target looks the same to them, and only the exit status counts.

The hostile cases in graders/hostile/token_bucket/ are graded here too (item
your_bound_test only), each beside its honest baseline, until the generic hostile suite
discovers folder submissions.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

import pytest

from graders import candidate_tests, catalog, grade, sandbox
from graders.hidden.token_bucket import test_token_bucket_bound_grading as grading

HOSTILE = catalog.HOSTILE_DIR / "token_bucket"
ATTACKS = sorted(p.name for p in HOSTILE.iterdir()
                 if p.is_dir() and p.name != "honest" and (p / "__init__.py").is_file())
TRACES = [Path("/tmp/PWNED-BY-SUBMISSION"), Path("/tmp/READ-HIDDEN-BY-SUBMISSION"),
          catalog.ROOT / ".nox" / "sandbox" / "PWNED-BY-SUBMISSION",
          catalog.ROOT / "PWNED-BY-SUBMISSION"]
TARGETS = [grading.REFERENCE, *grading.BOUND_BREAKERS]


@pytest.fixture(autouse=True)
def _no_run_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about runs themselves: none comes from the suite's cache."""
    monkeypatch.delenv(candidate_tests.CACHE_ENV, raising=False)


def test_the_suites_cache_keeps_a_run_of_the_same_folder_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With KATA_CANDIDATE_RUN_CACHE (the project's suite only), a run of exactly the same
    prepared folder and command is answered from the cache; any other byte runs anew."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv(candidate_tests.CACHE_ENV, str(cache))
    test_file = catalog.SOLUTIONS_DIR / "token_bucket" / "test_token_bucket_bound.py"
    reference = grading._target_file(grading.REFERENCE)
    first = candidate_tests.run("token_bucket", test_file, reference, profile="selftest",
                                sandboxed=False)
    assert first.passed, first.output[-2000:]
    (kept,) = list(cache.iterdir())
    kept.write_text(kept.read_text().replace('"rc": 0', '"rc": 5'))   # mark the entry
    again = candidate_tests.run("token_bucket", test_file, reference, profile="selftest",
                                sandboxed=False)
    assert again.returncode == 5, "the same folder and command must come from the cache"
    broken = grading._target_file("refund_twice")
    other = candidate_tests.run("token_bucket", test_file, broken, profile="selftest",
                                sandboxed=False)
    assert other.caught and len(list(cache.iterdir())) == 2, "another target must run anew"
    monkeypatch.delenv(candidate_tests.CACHE_ENV)
    fresh = candidate_tests.run("token_bucket", test_file, reference, profile="selftest",
                                sandboxed=False)
    assert fresh.passed, "without the variable nothing comes from the cache"


def full_sandbox() -> bool:
    caps = sandbox.capabilities()
    return caps.separate_uid and caps.mount_namespace


def leftovers(marks: tuple[bytes, ...] = (b"kata_profile", b"sleep\x00987654\x00")) -> list[str]:
    """Processes still running a candidate test (their pytest loads kata_profile), or
    holding one of ``marks`` in their command line."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if any(m in cmd for m in marks):
                found.append(f"{entry}: {cmd[:120]!r}")
    return found


def test_every_target_gets_the_same_scratch_but_its_code(tmp_path: Path) -> None:
    test_file = catalog.SOLUTIONS_DIR / "token_bucket" / "test_token_bucket_bound.py"
    trees = {}
    for name in TARGETS:
        scratch = tmp_path / name
        scratch.mkdir()
        argv = candidate_tests.prepare(scratch, "token_bucket", test_file,
                                       grading._target_file(name), "grade")
        assert name not in " ".join(argv)
        trees[name] = {str(p.relative_to(scratch)): p.read_bytes()
                       for p in sorted(scratch.rglob("*")) if p.is_file()}
    first = trees[grading.REFERENCE]
    for name, tree in trees.items():
        assert sorted(tree) == sorted(first), f"{name}: another set of files"
        for rel, data in tree.items():
            if rel != f"{candidate_tests.TARGET_MODULE}.py":
                assert data == first[rel], f"{name}: {rel} differs between targets"
        target = tree[f"{candidate_tests.TARGET_MODULE}.py"].decode()
        assert "#" not in target and "Rubric" not in target, name
        assert ast.get_docstring(ast.parse(target)) is None, name
        words = ("solutions", "mutant", "reference", "hidden", str(catalog.ROOT), *TARGETS)
        for rel, data in tree.items():
            if rel != test_file.name and not rel.startswith("graders/support"):
                for word in words:
                    assert word.encode() not in data, f"{name}: {rel} says {word!r}"
    assert len({t[f"{candidate_tests.TARGET_MODULE}.py"] for t in trees.values()}) == len(TARGETS)


def test_the_order_of_targets_is_drawn_afresh() -> None:
    orders = {tuple(candidate_tests.shuffled(TARGETS)) for _ in range(40)}
    if "PYTEST_XDIST_WORKER" in os.environ:
        assert orders == {tuple(TARGETS)}     # xdist workers must collect one order
    else:
        assert len(orders) > 1


def test_exit_status_alone_decides(tmp_path: Path) -> None:
    target = grading._target_file(grading.REFERENCE)
    cases = {"passes": ("def test_x():\n    assert True\n", True, False),
             "fails": ("def test_x():\n    assert False\n", False, True),
             "no_import": ("import no_such_module_here\n\ndef test_x():\n    assert False\n",
                           False, False),
             "no_test": ("X = 1\n", False, False),
             "exits_3": ("import os\n\ndef test_x():\n    os._exit(3)\n", False, False)}
    for name, (text, passed, caught) in cases.items():
        path = tmp_path / name / "test_case.py"
        path.parent.mkdir()
        path.write_text(text)
        run = candidate_tests.run("token_bucket", path, target, profile="grade", timeout=30)
        assert (run.passed, run.caught) == (passed, caught), f"{name}: {run.summary()}\n{run.output}"


def test_practice_runs_the_same_scratch_in_a_plain_process(tmp_path: Path) -> None:
    path = tmp_path / "test_case.py"
    path.write_text("from graders.impl import kata_impl\n\ntb = kata_impl('token_bucket')\n\n"
                    "def test_x():\n    assert tb.__name__ == 'kata_target'\n"
                    "    assert tb.TokenBucket(5, 1.0).available(0.0) == 5.0\n")
    run = candidate_tests.run("token_bucket", path, grading._target_file(grading.REFERENCE),
                              profile="kata", sandboxed=False, timeout=30)
    assert run.passed, run.output
    assert candidate_tests.needs_sandbox("kata", isolated=False) is False
    for profile, isolated in (("kata", True), ("grade", False), ("selftest", False)):
        assert candidate_tests.needs_sandbox(profile, isolated) is True


@pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="needs root on Linux")
def test_the_sandbox_hides_the_grader_and_bounds_the_run(tmp_path: Path) -> None:
    assert full_sandbox(), sandbox.capabilities().notes
    hidden = catalog.HIDDEN_TESTS_DIR / "token_bucket" / \
        "test_token_bucket_bound_grading.py"
    script = (
        "import os, subprocess, sys\n"
        "print('uid', os.getuid())\n"
        f"for p in ({str(hidden)!r}, {str(catalog.ROOT / 'solutions' / 'token_bucket' / '__init__.py')!r}):\n"
        "    print('read', p, os.path.exists(p))\n"
        "try:\n"
        f"    open({str(catalog.ROOT / 'PWNED-BY-SUBMISSION')!r}, 'w'); print('wrote outside')\n"
        "except OSError:\n"
        "    print('no write')\n"
        "try:\n"
        "    os.kill(os.getppid(), 0); print('signalled parent')\n"
        "except OSError:\n"
        "    print('no signal')\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(987653)'],\n"
        "                 start_new_session=True)\n"
        "if sys.argv[1:] == ['hang']:\n"
        "    import time; time.sleep(60)\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "probe.py").write_text(script)
    rc, out = sandbox.run_command([sys.executable, "-I", "probe.py"], scratch, sandbox.Limits(),
                                  30)
    assert rc == 0, out
    uid = int(re.search(r"uid (\d+)", out).group(1))  # type: ignore[union-attr]
    assert uid not in (0, os.getuid())
    assert " True" not in out and "wrote outside" not in out and "signalled" not in out, out
    # only this probe's own sleeper: other tests may run candidate tests meanwhile
    assert not leftovers((b"987653",)), "a process the command started outlived it"
    rc, out = sandbox.run_command([sys.executable, "-I", "probe.py", "hang"], scratch,
                                  sandbox.Limits(), 2)
    assert rc < 0, out
    assert not leftovers((b"987653",)), "a process of a timed-out command outlived it"
    assert not (catalog.ROOT / "PWNED-BY-SUBMISSION").exists()


_scores: dict[str, int] = {}


def _bound_score(folder: Path) -> int:
    """The folder's score on your_bound_test, graded isolated (once per content: the
    honest baselines are alike)."""
    key = "\n".join(p.read_text() for p in sorted(folder.glob("*.py")))
    if key not in _scores:
        g = grade.run("token_bucket", str(folder), rubric="your_bound_test", total_timeout=240)
        item = next(i for i in g.items if i.item.id == "your_bound_test")
        assert all(t.outcome in ("passed", "failed") for t in item.tests), item.tests
        _scores[key] = item.score
    return _scores[key]


def _generic_suite_grades_folders() -> bool:
    """Once selftest/test_hostile.py discovers folder attacks, it grades these itself."""
    from selftest import test_hostile

    return "forge_progress" in repr(getattr(test_hostile, "CASES", ""))


@pytest.mark.xdist_group("hostile")
@pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="needs root on Linux")
@pytest.mark.parametrize("attack", ATTACKS)
def test_a_hostile_bound_test_gains_nothing(attack: str) -> None:
    assert full_sandbox(), sandbox.capabilities().notes
    if _generic_suite_grades_folders():
        pytest.skip("selftest/test_hostile.py grades the folder attacks")
    folder, honest = HOSTILE / attack, HOSTILE / "honest" / attack
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text())) or ""
    assert re.search(r"^Attack: .+", doc, re.M) and re.search(r"^Class: candidate-tests$", doc, re.M)
    assert (honest / "test_token_bucket_bound.py").is_file()
    for trace in TRACES:
        trace.unlink(missing_ok=True)
    before = set((catalog.ROOT / ".nox" / "sandbox").glob("cand-*"))
    score = _bound_score(folder)
    baseline = _bound_score(honest)
    assert score <= baseline, f"{attack} scored {score} on your_bound_test > honest {baseline}"
    written = [str(t) for t in TRACES if t.exists()]
    assert not written, f"{attack} wrote outside its sandbox: {written}"
    assert not leftovers(), f"{attack} left processes running"
    assert set((catalog.ROOT / ".nox" / "sandbox").glob("cand-*")) <= before
