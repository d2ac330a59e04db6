"""A Gradescope autograder for one kata.

    nox -s gradescope -- KATA OUT.zip [--include-reference] [--allow-limits-only]
                                      [--hidden-detail rules|none]
    nox -s gradescope -- needs-reference  the katas whose build needs --include-reference
    python -m graders.packaging.gradescope check    setup.sh runs it once the image is built
    python -m graders.packaging.gradescope run      run_autograder runs it for each submission

The zip follows Gradescope's autograder layout: ``setup.sh`` and ``run_autograder`` at its
top, unpacked to ``/autograder/source``. Gradescope builds an image from it once (setup.sh,
as root, on its Ubuntu 22.04 base image), then for each submission puts the uploaded files
in ``/autograder/submission``, runs ``run_autograder`` and reads
``/autograder/results/results.json``. The results are the project's own (graders/grade/,
Gradescope's schema): one entry per rubric item with its points, then one per test, the
hidden tests' entries with visibility ``hidden``.

What the zip holds, all from the last commit (graders/packaging/bundle.py reads it): the grading
harness, the kata's public and hidden tests, its stub and public kata.toml, the data its
tests name, ``pyproject.toml`` and ``requirements.txt`` (the runtime requirements). No reference solution, mutant,
alternative, hostile submission or interviewer note. Katas whose tests measure a submission
against the reference (CPU time, work counts, the candidate's own test run against it and
against bound-breaking mutants; ``needs-reference`` lists them, by ``NEEDS_REFERENCE``):
for those the build refuses unless ``--include-reference`` puts the reference (and the
mutants their tests name) in the zip, where the sandbox keeps them out of the submission's
reach.

The submission runs in the project's sandbox. The autograder refuses to grade (score 0,
the reason in the output) where only resource limits are available, unless it was built
with ``--allow-limits-only``: then the submission runs as the grader's user and could read
the hidden tests in the container.

``KATA_GRADESCOPE_ROOT`` replaces ``/autograder`` (tests lay out the folders in a scratch
root); ``KATA_GRADESCOPE_PYTHON`` names an interpreter that already has the requirements
(setup.sh then installs nothing); ``KATA_GRADESCOPE_PROFILE`` overrides the Hypothesis
profile (``grade``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import io
import json
import os
import re
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from graders import catalog
from graders.packaging import bundle

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_ROOT = "/autograder"
CONFIG = "gradescope.json"
UBUNTU = "22.04"
# the grading side of the harness (no typecheck, interview, batch, bundle, mutant tools)
HARNESS = ("__init__.py", "catalog.py", "launch.py", "impl.py", "plugin.py", "cli.py", "grade/",
           "sandbox/", "wire.py", "worker.py", "measure.py", "outside.py",
           "candidate_tests.py", "packaging/")
NEEDS_REFERENCE = re.compile(r"\breference=|[\"']solutions[\"']|\bsolutions\.|SOLUTIONS_DIR"
                             r"|\bmutant\.")

SETUP_SH = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
# Target: Gradescope's Ubuntu {UBUNTU} base image (python3 3.10).
set -euo pipefail
root="${{KATA_GRADESCOPE_ROOT:-{DEFAULT_ROOT}}}"
src="$root/source"
if [ -z "${{KATA_GRADESCOPE_PYTHON:-}}" ]; then
    apt-get update
    apt-get install -y --no-install-recommends python3 python3-venv python3-pip \\
        bubblewrap libseccomp2
    python3 -m venv "$src/.venv"
    "$src/.venv/bin/python" -m pip install --no-cache-dir --upgrade pip
    "$src/.venv/bin/python" -m pip install --no-cache-dir -r "$src/requirements.txt"
    python="$src/.venv/bin/python"
else
    python="$KATA_GRADESCOPE_PYTHON"   # an interpreter that already has the requirements
fi
# the image is usable: the harness imports and the kata's tests are collected
cd "$src"
"$python" -m graders.packaging.gradescope check
"""

RUN_AUTOGRADER = f"""#!/usr/bin/env bash
# Gradescope runs this for each submission: the uploaded files are in $root/submission,
# the results go to $root/results/results.json.
set -uo pipefail
root="${{KATA_GRADESCOPE_ROOT:-{DEFAULT_ROOT}}}"
python="${{KATA_GRADESCOPE_PYTHON:-$root/source/.venv/bin/python}}"
cd "$root/source"
exec "$python" -m graders.packaging.gradescope run
"""


class BuildError(RuntimeError):
    """The autograder cannot be built as asked; the message says why."""


def reference_reasons(kata: str, files: dict[str, tuple[bool, bytes]]) -> list[str]:
    """The test files of ``kata`` that reach for the reference or a mutant."""
    return sorted(path for path, (_, data) in files.items()
                  if path.startswith((f"tests/{kata}/", f"graders/hidden/{kata}/"))
                  and path.endswith(".py")
                  and NEEDS_REFERENCE.search(data.decode("utf-8", "replace")))


def needs_reference(root: Path | None = None) -> dict[str, list[str]]:
    """Every kata whose autograder needs ``--include-reference``, with the test files that
    reach for the reference (the same rule ``build`` applies, on the last commit)."""
    root = root or catalog.ROOT
    out: dict[str, list[str]] = {}
    for kata in catalog.kata_names():
        files = bundle.committed([f"tests/{kata}", f"graders/hidden/{kata}"], root)
        reasons = reference_reasons(kata, files)
        if reasons:
            out[kata] = reasons
    return out


def _requirements(kata: catalog.Kata, pyproject: bytes) -> str:
    """pyproject's runtime requirements (and torch for a kata that needs it). Not pinned to
    this machine's versions, which may not exist for the image's Python: pip picks once,
    when the image is built, and every submission is graded with what it picked."""
    project = tomllib.loads(pyproject.decode())["project"]
    reqs = list(project["dependencies"])
    if "torch" in kata.requires:
        reqs += project["optional-dependencies"]["torch"]
    tested = []
    for req in reqs:
        name = re.split(r"[<>=!~; \[]", req.strip(), maxsplit=1)[0]
        try:
            tested.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            pass
    return (f"# built and tested with: {', '.join(tested)} (Python "
            f"{sys.version_info[0]}.{sys.version_info[1]})\n" + "\n".join(reqs) + "\n")


def build(kata_name: str, out: Path, include_reference: bool = False,
          allow_limits_only: bool = False, root: Path | None = None,
          hidden_detail: str = "rules") -> list[str]:
    """Write the autograder zip for ``kata_name`` to ``out``; return the names it holds."""
    root = root or catalog.ROOT
    kata = catalog.load(kata_name)
    if out.suffix != ".zip":
        raise BuildError(f"{out}: the autograder is a .zip file")
    if out.exists():
        raise BuildError(f"{out} exists: choose a new file name")
    paths = [f"katas/{kata_name}", f"tests/{kata_name}", f"graders/hidden/{kata_name}"]
    dirty = bundle.changed(paths, root)
    if dirty:
        raise BuildError("these files of the kata differ from the last commit (the "
                         "autograder is built from it):\n  " + "\n  ".join(dirty)
                         + "\nCommit or stash them (git stash -u), then run again.")
    files = bundle.committed(
        [*paths, "pyproject.toml", "conftest.py", "graders/hidden/__init__.py",
         *(f"graders/{h.rstrip('/')}" for h in HARNESS), "graders/support", "graders/hardware",
         *bundle.DATA_FOLDERS, "solutions", "graders/authoring/__init__.py",
         "graders/authoring/mutant.py", f"graders/mutants/{kata_name}"],
        root)
    if not any(p.startswith(f"graders/hidden/{kata_name}/") for p in files):
        raise BuildError(f"{kata_name}: no hidden tests in the last commit")
    harness = bundle.harness_paths(HARNESS, files)
    missing = [f for f in (*harness, *(f"graders/{h}__init__.py" for h in HARNESS
                                         if h.endswith("/"))) if f not in files]
    if missing:
        raise BuildError(f"not in the last commit: {', '.join(missing)}")
    ship: dict[str, tuple[bool, bytes]] = {
        p: e for p, e in files.items() if p.startswith(tuple(f"{x}/" for x in paths))}
    for p in ("pyproject.toml", "conftest.py", "graders/hidden/__init__.py", *harness):
        ship[p] = files[p]
    for pkg in ("katas", "tests"):
        ship[f"{pkg}/__init__.py"] = (False, b"")
    toml = f"katas/{kata_name}/kata.toml"
    ship[toml] = (False, bundle.public_kata_toml(ship[toml][1].decode(), toml).encode())

    needs = reference_reasons(kata_name, ship)
    if needs and not include_reference:
        raise BuildError(
            f"{kata_name}'s tests measure a submission against the reference solution (or "
            f"its mutants): {', '.join(needs)}. Build with --include-reference to put it in "
            "the zip (the sandbox keeps it from the submission; the zip itself must stay "
            "with the hiring team).")
    if needs:
        ship.update({p: e for p, e in files.items() if p == "solutions/__init__.py"
                     or p == f"solutions/{kata_name}.py"
                     or p.startswith(f"solutions/{kata_name}/")})
        text = "\n".join(ship[p][1].decode("utf-8", "replace") for p in needs)
        if "mutant." in text:
            for p in ("graders/authoring/__init__.py", "graders/authoring/mutant.py"):
                ship[p] = files[p]
            for p, e in files.items():
                if p.startswith(f"graders/mutants/{kata_name}/") and \
                        f'"{Path(p).stem}"' in text:
                    ship[p] = e
    texts = [e[1].decode("utf-8", "replace") for p, e in ship.items()
             if p.endswith((".py", ".md", ".toml"))]
    support = {"__init__"} | bundle._imported_support(texts)
    hardware = any("graders.hardware" in e[1].decode("utf-8", "replace")
                   for p, e in ship.items() if p.startswith(tuple(f"{x}/" for x in paths[1:])))
    blob = "\n".join(texts)
    for p, e in files.items():
        if p.startswith("graders/support/") and p.count("/") == 2 and Path(p).stem in support:
            ship[p] = e
        elif p.startswith("graders/hardware/") and hardware:
            ship[p] = e
        elif p.startswith(tuple(f"{d}/" for d in bundle.DATA_FOLDERS)):
            q = Path(p)
            keys = {q.name, q.stem} | ({q.parent.name} if p.startswith("data/") else set())
            if any(k in blob for k in keys):
                ship[p] = e
    config = {"kata": kata_name, "allow_limits_only": allow_limits_only,
              "hidden_visibility": "hidden", "hidden_detail": hidden_detail,
              "profile": "grade",
              "reference_included": bool(needs)}
    ship[CONFIG] = (False, (json.dumps(config, indent=2) + "\n").encode())
    ship["requirements.txt"] = (False, _requirements(kata, files["pyproject.toml"][1])
                                .encode())
    ship["setup.sh"] = (True, SETUP_SH.encode())
    ship["run_autograder"] = (True, RUN_AUTOGRADER.encode())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, (executable, data) in sorted(ship.items()):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buf.getvalue())
    return sorted(ship)


# -- inside the autograder ------------------------------------------------------------------

def _root() -> Path:
    return Path(os.environ.get("KATA_GRADESCOPE_ROOT", DEFAULT_ROOT))


def _config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((catalog.ROOT / CONFIG).read_text(encoding="utf-8"))
    return data


def check() -> int:
    """setup.sh's last step: the kata loads and its public and hidden tests are collected."""
    import subprocess

    from graders import launch

    kata = catalog.load(_config()["kata"])
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *launch.pytest_args(
            [str(kata.public_tests), str(kata.hidden_tests)], profile="grade", quiet=False,
            extra=["--collect-only", "-q"])],
        cwd=catalog.ROOT, capture_output=True, text=True, env=launch.test_env())
    if proc.returncode != 0:
        print(proc.stdout[-4000:] + proc.stderr[-4000:], file=sys.stderr)
        print(f"autograder check: the tests of {kata.name} cannot be collected",
              file=sys.stderr)
        return 1
    count = len([line for line in proc.stdout.splitlines() if "::" in line])
    print(f"autograder check: {kata.name}, {count} tests collected")
    return 0


def _refusal(kata: catalog.Kata, why: str) -> dict[str, Any]:
    """results.json when no grade could be made: every rubric item at zero, and why."""
    tests = [{"name": f"rubric: {i.id}", "number": str(n), "score": 0, "max_score": i.points,
              "status": "failed", "output": f"{i.description}\nnot graded: {why}",
              "visibility": "visible", "tags": ["rubric", i.id]}
             for n, i in enumerate(kata.tested_items, 1)]
    return {"score": 0, "output": f"The autograder could not "
            f"grade this submission: {why}", "visibility": "visible",
            "stdout_visibility": "hidden", "tests": tests,
            "extra_data": {"kata": kata.name, "error": why, "max_score": kata.max_score}}


def run() -> int:
    """Grade ``$root/submission`` and write ``$root/results/results.json``."""
    from graders import grade

    root, config = _root(), _config()
    kata = catalog.load(config["kata"])
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    profile = os.environ.get("KATA_GRADESCOPE_PROFILE") or config.get("profile", "grade")
    try:
        g = grade.run(kata.name, str(root / "submission"), profile=profile,
                      require_isolation=not config.get("allow_limits_only", False))
    except grade.GradeError as exc:
        why = str(exc)
        if "require-isolation" in why:
            why += (" (this autograder was built to refuse that; rebuild it with "
                    "--allow-limits-only to grade with resource limits only)")
        data = _refusal(kata, why)
        print(why, file=sys.stderr)
    else:
        g.hidden_detail = config.get("hidden_detail", "rules")
        with tempfile.TemporaryDirectory() as tmp:
            grade.write_reports(g, Path(tmp), config.get("hidden_visibility", "hidden"))
            data = json.loads((Path(tmp) / "results.json").read_text(encoding="utf-8"))
        print(grade.table(g))    # the run's stdout: the hiring team's view (hidden by default)
    tmp_out = results / "results.json.tmp"
    tmp_out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp_out.replace(results / "results.json")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["check"]:
        return check()
    if argv[:1] == ["run"]:
        return run()
    if argv[:1] == ["needs-reference"]:
        for kata, files in needs_reference().items():
            print(f"{kata}: {', '.join(files)}")
        return 0
    parser = argparse.ArgumentParser(prog="nox -s gradescope --",
                                     description="Build a Gradescope autograder zip for a kata.")
    parser.add_argument("kata")
    parser.add_argument("out", type=Path, help="the zip to write (OUT.zip, must not exist)")
    parser.add_argument("--include-reference", action="store_true",
                        help="put the reference (and the mutants its tests name) in the zip, "
                             "for katas whose tests measure against it")
    parser.add_argument("--allow-limits-only", action="store_true",
                        help="grade even where the container allows no sandbox beyond "
                             "resource limits (the submission could then read the tests)")
    parser.add_argument("--hidden-detail", default="rules", choices=("rules", "none"),
                        help="what a candidate learns of an item failed by hidden tests "
                             "alone: rules (default: the prompt's rule labels they check) "
                             "or none")
    args = parser.parse_args(argv)
    try:
        names = build(args.kata, args.out, args.include_reference, args.allow_limits_only,
                      hidden_detail=args.hidden_detail)
    except (BuildError, bundle.BundleError, catalog.CatalogError) as exc:
        print(f"gradescope: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {len(names)} files for {args.kata} (upload it as the "
          f"autograder, base image Ubuntu {UBUNTU})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
