"""Sessions for candidates, interviewers, hiring teams and maintainers.

    nox -s kata -- NAME [--impl katas|solutions|PATH]     practise: public tests
    nox -s grade -- NAME [--impl ...] [--out DIR] [--seed N]   grade: public + hidden tests
    nox -s typecheck -- NAME [--impl PATH]               mypy against the stub's contract
    nox -s list                                          the katas
    nox -s interview -- NAME --candidate C [--minutes M]  mock interview, one candidate
    nox -s interview -- NAME --interviewer --by I         the interviewer's live view, marks
    nox -s interview -- mark|grade|summary ...           marks, late grades, a table of all
    nox -s bundle -- OUT [NAMES...]                      a candidate's folder
    nox -s gradescope -- NAME OUT.zip                    a Gradescope autograder
    nox -s record -- split_kv|gemm_waves                  GPU sweep -> hardware_fixtures/
    nox -s bench [-- KATA...] [--readme]                 references vs production peers and floors
    nox -s tests                                         the project's own suite
    nox -s deep [NAMES...]                               correct solutions at the grading depth

Every session shares one environment, ``.nox/katas-env``, built on first use (uv when it is
installed, venv + pip otherwise) and rebuilt only when pyproject.toml's requirements change,
so a warm ``nox -s kata`` costs little more than pytest itself.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
ENV_DIR = ROOT / ".nox" / "katas-env"
# the extra every session's environment holds: "dev" here (the maintainers' tools); the
# candidate bundle's noxfile says "candidate" (graders/packaging/bundle.py: only what a candidate needs)
BASE = "dev"
STAMP = ENV_DIR / "requirements.sha256"

nox.options.sessions = ["tests"]
nox.options.error_on_external_run = False


def _requirements(extras: tuple[str, ...]) -> list[str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in extras:
        reqs += project["optional-dependencies"][extra]
    return reqs


def _bin(name: str) -> str:
    sub = "Scripts" if os.name == "nt" else "bin"
    return str(ENV_DIR / sub / name)


def _ensure_env(session: nox.Session, extras: tuple[str, ...] = (BASE,)) -> str:
    """The shared environment's python, (re)built if the requirements changed."""
    wanted = set(extras)
    if STAMP.exists():
        have_extras, _, digest = STAMP.read_text().partition("\n")
        wanted |= set(filter(None, have_extras.split(",")))
    reqs = _requirements(tuple(sorted(wanted)))
    digest = hashlib.sha256("\n".join(reqs).encode()).hexdigest()
    python = _bin("python")
    if STAMP.exists() and STAMP.read_text() == f"{','.join(sorted(wanted))}\n{digest}" \
            and Path(python).exists():
        return python
    session.log(f"installing requirements into {ENV_DIR.relative_to(ROOT)} (once)")
    uv = shutil.which("uv")
    if not Path(python).exists():
        if uv:
            session.run_install(uv, "venv", "--seed", "--quiet", "--python",
                                sys.executable, str(ENV_DIR), external=True)
        else:
            session.run_install(sys.executable, "-m", "venv", str(ENV_DIR), external=True)
    plain = [r for r in reqs if not r.startswith("torch")]
    torch = [r for r in reqs if r.startswith("torch")]
    if uv:
        session.run_install(uv, "pip", "install", "--quiet", "--python", python, *plain,
                            external=True)
    else:
        session.run_install(python, "-m", "pip", "install", "--quiet", *plain, external=True)
    if torch:  # pip, not uv: pip's configuration here finds the CPU build on local disk
        session.run_install(python, "-m", "pip", "install", "--quiet", *torch, external=True)
    STAMP.write_text(f"{','.join(sorted(wanted))}\n{digest}")
    return python


def _env() -> dict[str, str | None]:
    # PYTHONDONTWRITEBYTECODE makes pytest re-compile every module on every run.
    return {"PYTHONDONTWRITEBYTECODE": None, "HF_HUB_OFFLINE": "1"}


def _kata_extras(name: str | None) -> tuple[str, ...]:
    if not name:
        return (BASE,)
    toml = ROOT / "katas" / name / "kata.toml"
    if toml.exists():   # read here: nox's own interpreter does not have the harness's path
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        if "torch" in tomllib.loads(toml.read_text()).get("requires", []):
            return (BASE, "torch")
    return (BASE,)


def _kata_names() -> list[str]:
    return sorted(p.name for p in (ROOT / "katas").iterdir()
                  if (p / "kata.toml").is_file())


def _split_name(posargs: list[str]) -> tuple[str | None, list[str]]:
    if posargs and not posargs[0].startswith("-"):
        return posargs[0], posargs[1:]
    return None, list(posargs)


def _run_in_process(python: str, argv: list[str]) -> int | None:
    """Run ``graders.cli`` inside this process on the shared environment's packages.

    A candidate runs the kata session dozens of times in an interview; starting a second
    interpreter is a third of a warm run. This works when the environment was built from
    this very interpreter (it is, by _ensure_env); otherwise returns None.
    """
    site = ENV_DIR / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    cfg = ENV_DIR / "pyvenv.cfg"
    if os.name == "nt" or not site.is_dir() or not cfg.exists():
        return None
    if any(m == "pytest" or m.startswith(("_pytest", "hypothesis")) for m in sys.modules):
        return None
    sys.path[:0] = [str(ROOT), str(site)]
    sys.dont_write_bytecode = False  # cached assertion rewrites keep pytest fast
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.chdir(ROOT)
    from graders import cli

    return cli.main(argv)


@nox.session(python=False)
def kata(session: nox.Session) -> None:
    """Practise: run the public tests of a kata (no name: list the katas)."""
    name, rest = _split_name(session.posargs)
    python = _ensure_env(session, _kata_extras(name))
    argv = ["kata", name, *rest] if name else ["start", *rest]
    if "torch" not in _kata_extras(name):
        code = _run_in_process(python, argv)
        if code is not None:
            if code not in (0,):
                session.error(f"{name}: tests failed (exit {code})" if name else "failed")
            return
    session.run(python, "-m", "graders.cli", *argv, external=True, env=_env())


@nox.session(python=False)
def grade(session: nox.Session) -> None:
    """Grade: public + hidden tests, a score per rubric item, results.json and junit.xml."""
    name, rest = _split_name(session.posargs)
    python = _ensure_env(session, _kata_extras(name))
    args = ([name] if name else []) + rest
    session.run(python, "-m", "graders.grade", *args, external=True, env=_env())


@nox.session(python=False)
def typecheck(session: nox.Session) -> None:
    """mypy --strict on a kata implementation, and its API against the stub's."""
    python = _ensure_env(session)
    session.run(python, "-m", "graders.typecheck", *session.posargs, external=True, env=_env())


@nox.session(python=False)
def interview(session: nox.Session) -> None:
    """A timed mock interview: prompt, countdown, tests on every save, hints, a report;
    --interviewer: the live view and marks; then mark, grade DIR, summary [DIR]."""
    name, rest = _split_name(session.posargs)
    kata = name
    if name == "grade" and rest and (Path(rest[0]) / "session.json").is_file():
        import json   # grading a session afterwards: its kata's extras (torch)

        kata = json.loads((Path(rest[0]) / "session.json").read_text()).get("kata")
    python = _ensure_env(session, _kata_extras(kata))
    args = ([name] if name else []) + rest
    session.run(python, "-m", "graders.interview", *args, external=True, env=_env())


@nox.session(python=False)
def bundle(session: nox.Session) -> None:
    """A self-contained folder for a candidate: stubs, prompts, public tests, harness."""
    python = _ensure_env(session)
    session.run(python, "-m", "graders.packaging.bundle", *session.posargs, external=True, env=_env())


@nox.session(python=False)
def gradescope(session: nox.Session) -> None:
    """A Gradescope autograder zip for one kata: nox -s gradescope -- NAME OUT.zip."""
    python = _ensure_env(session)
    session.run(python, "-m", "graders.packaging.gradescope", *session.posargs, external=True,
                env=_env())


@nox.session(python=False)
def record(session: nox.Session) -> None:
    """Record a hardware sweep on the CUDA GPU present: nox -s record -- split_kv|gemm_waves.

    RECORD_PYTHON=/path/to/python uses an interpreter that already has a CUDA build of torch
    (and triton) instead of the project's environment. Without a GPU it exits non-zero.
    """
    python = os.environ.get("RECORD_PYTHON") or _ensure_env(session, ("dev", "hardware"))
    session.run(python, "-m", "graders.hardware.record", *session.posargs, external=True,
                env={**_env(), "PYTHONPATH": str(ROOT)})


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """References against production engines' approaches and the physical floor, as ratios
    measured in one run: nox -s bench [-- KATA...] [--rounds N] [--out DIR] [--readme]
    [--alternatives].

    Times each kata's reference (solutions/, as it is now) and, on the same inputs,
    interleaved over several rounds: vLLM's sort + cumsum top-p (torch) and a sort-free
    pivot search after FlashInfer's kernels, tokenizers' DecodeStream (with and without a
    vLLM-style stop check), a vLLM-style block hash chain; the floor (one pass over the
    data); and how the cost per request grows from 1k to 100k cached tokens. Prints a
    Markdown table and writes docs/bench/results.{json,md,png}; --readme pastes the plot
    and the table into README.md; --alternatives adds every kata's independent solutions
    (top_p's are always timed). A few minutes on two cores.
    """
    python = _ensure_env(session, ("dev", "torch", "bench"))
    session.run(python, "-m", "graders.bench", *session.posargs, external=True,
                env={**_env(), "PYTHONPATH": str(ROOT)})


@nox.session(name="list", python=False)
def list_(session: nox.Session) -> None:
    """The katas: title, minutes, difficulty, rubric points."""
    python = _ensure_env(session)
    session.run(python, "-m", "graders.cli", "list", external=True, env=_env())


@nox.session(python=False)
def tests(session: nox.Session) -> None:
    """The project's own suite: references pass, stubs fail cleanly, mutants are caught."""
    # hardware: the recorder's CPU checks; bench: the bench's plot (its self-test and mypy)
    python = _ensure_env(session, ("dev", "hardware", "bench"))
    # all of graders/ but the per-kata content folders (pyproject.toml: [tool.mypy] exclude)
    session.run(python, "-m", "mypy", "--strict", "solutions", "katas", "graders",
                external=True, env=_env())
    # two workers per core, and one more: a test mostly waits on its child processes (the
    # grade's pytest, the sandboxed worker, each waiting on the other in turn) and on real
    # timeouts (stalled clients, interview sessions, attacks that sleep), so a worker keeps
    # well under a core busy. On 2 cores with 30 katas, the same tree minutes apart:
    # -n 5, 365 s for 584 CPU seconds (80% of both cores); -n 3, 464 s (python -m pytest
    # selftest -n N --dist loadgroup; the -n 3 run shared the machine with a helper)
    workers = str(2 * (os.cpu_count() or 1) + 1)
    session.run(python, "-m", "pytest", "selftest", "-q", "-n", workers, "--dist", "loadgroup",
                *session.posargs, external=True, env=_env())


@nox.session(python=False)
def deep(session: nox.Session) -> None:
    """The full-marks check at the grading profile's depth: the reference and every
    independent correct solution of each kata (or of the katas named), in-process, 150
    examples per property, and each independent solution isolated too, item by item as
    in-process. The suite (`nox -s tests`) runs the same check on 10 examples (isolated: one
    blind solution per kata); run this one after changing a hidden test or a strategy."""
    python = _ensure_env(session)
    names = session.posargs or _kata_names()
    failed = []
    for name in names:
        try:
            session.run(python, "-m", "graders.authoring.mutantrun", name, "--solutions", "--profile",
                        "grade", external=True, env=_env())
        except nox.command.CommandFailed:
            failed.append(name)
    if failed:
        session.error(f"a correct solution lost points under the grading profile: {failed}")
