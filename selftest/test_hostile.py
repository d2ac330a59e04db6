"""The hostile-submission suite: every attack in graders/hostile/<kata>/ against its honest
baseline.

Convention (shared by everyone who adds attacks): an attack is ``<kata>/<attack>.py``, a
folder ``<kata>/<attack>/``, or a patch ``<kata>/<attack>.patch`` against its honest twin
(graders/authoring/patches.py: the attack is the twin plus the cheat, nothing else); its
honest baseline, the same submission without the cheat, is ``<kata>/honest/<attack>.py``
(folder, or a ``.patch`` against the reference), or the shared one the attack's docstring
names on a line ``Baseline: <file in honest/>``. The attack's module docstring (a folder's
``__init__.py``, or ``_doc.py`` for a batch) has the lines

    Attack: <one sentence>
    Class: <candidate-tests | progress | links | evidence | growth | batch | replies |
            visibility | isolation-spill | sandbox | reports>
    Targets: item, item        (optional: grade only these rubric items, to keep it fast)
    Modes: both                (optional: grade attack and baseline with the zygote on and
                                off, KATA_ZYGOTE=1 and 0; else in the default mode only)

Both are graded isolated, on the public tests (and the hidden ones for class
``visibility``), restricted to the targets. For every attack the suite checks: the grade
finishes within its bound and writes valid reports; each rubric item scores no more than
the baseline's; nothing is written outside the sandbox (known trace paths, the
repository's top level); no process is left behind. A folder of class ``batch`` is graded
as a batch: every entry's report must be intact (the score its honest counterpart gets,
paired in sorted order), or the batch refused before anything is written. Class
``replies`` must fail with a message that names the reply, and class ``visibility`` must
show no hidden detail in a visible entry, and class ``reports`` must leave no control
character (but newline and tab) in the terminal table, junit.xml or results.json. Cases are found by globbing, so attacks added
under any kata join the suite; a baseline shared by several attacks is graded once.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from graders import batch, catalog, grade, sandbox
from graders.authoring import patches
from graders.grade import scoring
from selftest.test_harness import check_junit, check_results_json

HOSTILE = catalog.HOSTILE_DIR
CLASSES = ("candidate-tests", "progress", "links", "evidence", "growth", "batch", "replies",
           "visibility", "isolation-spill", "sandbox", "reports")
NEEDS_UID = {"fork_bomb"}
PER_TEST_S, GRACE_S, TOTAL_S = 2.0, 3.0, 240.0
TRACES = [Path("/tmp/PWNED-BY-SUBMISSION"), Path("/root/PWNED-BY-SUBMISSION"),
          catalog.ROOT / "PWNED-BY-SUBMISSION", catalog.ROOT.parent / "PWNED-BY-SUBMISSION",
          catalog.ROOT / "results.json", catalog.ROOT / "junit.xml",
          catalog.ROOT / "FORGED-BY-SUBMISSION",
          Path("/tmp/results.json"), Path("/tmp/replay.json")]
TRACES = [t for t in TRACES if os.access(t.parent, os.X_OK)]  # a non-root run cannot look in /root
TOP_LEVEL_NOISE = {".nox", ".hypothesis", ".pytest_cache", "__pycache__", ".mypy_cache"}


def _is_case(p: Path) -> bool:
    return not p.name.startswith(("_", ".")) and p.name != "honest" and (
        p.suffix in (".py", ".patch") or p.is_dir())


CASES = sorted((p.parent.name, p.name.removesuffix(".py").removesuffix(".patch"))
               for p in HOSTILE.glob("*/*") if p.parent.is_dir() and _is_case(p))
PATCH_KEYS = ("Attack", "Class", "Targets", "Baseline", "Honest")


def attack_path(kata: str, name: str, honest: bool = False) -> Path:
    base = HOSTILE / kata / ("honest" if honest else "")
    for candidate in (base / f"{name}.py", base / f"{name}.patch"):
        if candidate.is_file():
            return candidate
    if honest and not (base / name).exists():
        shared = doc_field(attack_path(kata, name), "Baseline", required=False)
        if shared:
            return base / shared
    return base / name


def source_of(path: Path) -> str:
    """A case's code: the file, or a patch built on its base."""
    if path.suffix == ".patch":
        return patches.build(patches.load(path, PATCH_KEYS))
    return path.read_text()


REFERENCE_MARK = "# REFERENCE: "


def built(path: Path, tmp: Path) -> Path:
    """The case at ``path`` ready to grade: a patch built into ``tmp``; a folder holding
    files that only name the reference (a first line ``# REFERENCE: solutions/...``) copied
    to ``tmp`` with the reference's code in them; anything else graded where it stands."""
    if path.suffix == ".patch":
        dest = tmp / "built" / ("honest" if path.parent.name == "honest" else "attack")
        dest.mkdir(parents=True, exist_ok=True)
        out = dest / f"{path.stem}.py"
        out.write_text(source_of(path))
        return out
    if not path.is_dir() or not any(
            f.read_text().startswith(REFERENCE_MARK) for f in path.rglob("*.py")):
        return path
    dest = tmp / "built" / ("honest" if path.parent.name == "honest" else "attack") / path.name
    shutil.copytree(path, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for f in dest.rglob("*.py"):
        first = f.read_text().split("\n", 1)[0]
        if first.startswith(REFERENCE_MARK):
            f.write_text((catalog.ROOT / first[len(REFERENCE_MARK):].strip()).read_text())
    return dest


def doc_of(path: Path) -> str:
    if path.is_dir():
        for inner in ("__init__.py", "_doc.py"):
            if (path / inner).is_file():
                path = path / inner
                break
        else:
            return ""
    return ast.get_docstring(ast.parse(source_of(path))) or ""


def doc_field(path: Path, field: str, required: bool = True) -> str:
    found = re.search(rf"^{field}:\s*(.+)$", doc_of(path), re.MULTILINE)
    if found is None:
        assert not required, f"{path.name}: the docstring needs a '{field}:' line"
        return ""
    return found.group(1).strip()


def code_key(path: Path) -> str:
    """The same code under another docstring grades the same: key a baseline by its code."""
    files = sorted(p for p in path.rglob("*.py")) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for f in files:
        tree = ast.parse(source_of(f))
        if tree.body and isinstance(tree.body[0], ast.Expr) and \
                isinstance(getattr(tree.body[0], "value", None), ast.Constant):
            tree.body = tree.body[1:]
        digest.update(str(f.relative_to(path) if path.is_dir() else "").encode())
        digest.update(ast.dump(tree).encode())
    return digest.hexdigest()


def sleepers() -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            # leave_children's ``sleep 987654`` exactly: a test id holding the number (a
            # pytest command line on another xdist worker) is no leftover
            if cmd.startswith(b"sleep\x00987654\x00"):
                out.append(int(entry))
    return out


def orphan_workers() -> list[int]:
    """Worker processes of this checkout whose scratch folder is gone: left behind."""
    scratch = str(catalog.ROOT / ".nox" / "sandbox")
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        home = next((e[5:].decode(errors="replace") for e in env if e.startswith(b"HOME=")), "")
        if home.startswith(scratch) and not os.path.isdir(home):
            found.append(int(entry))
    return found


def top_level() -> set[str]:
    return {p for p in os.listdir(catalog.ROOT) if p not in TOP_LEVEL_NOISE}


_baselines: dict[tuple[str, str, str, bool, str], Any] = {}


def grade_one(kata: str, path: Path, targets: str | None, hidden: bool) -> grade.Grade:
    # the mode (KATA_ZYGOTE) is read from the environment, which the test sets per mode
    return grade.run(kata, str(path), include_hidden=hidden, rubric=targets,
                     per_test_timeout=PER_TEST_S, grace=GRACE_S, total_timeout=TOTAL_S)


def grade_batch(kata: str, path: Path, out: Path, targets: str | None) -> Any:
    try:
        batch.grade_folder(kata, path, out, jobs=2, per_test_timeout=PER_TEST_S,
                           rubric=targets, include_hidden=False)
    except batch.BatchError as exc:
        return exc
    scores = {}
    for entry in batch.entries(path):
        data = check_results_json(out / entry.name / "results.json")
        check_junit(out / entry.name / "junit.xml", len(data["tests"]) - len(
            [t for t in data["tests"] if t["name"].startswith("rubric: ")]))
        scores[entry.name] = data
    return scores


def baseline(kata: str, name: str, targets: str | None, hidden: bool, tmp: Path) -> Any:
    path = attack_path(kata, name, honest=True)
    key = (kata, code_key(path), targets or "", hidden,
           os.environ.get("KATA_ZYGOTE", "1"))
    if key not in _baselines:
        path = built(path, tmp)
        if doc_field(attack_path(kata, name), "Class") == "batch":
            _baselines[key] = grade_batch(kata, path, tmp / "baseline-out", targets)
        else:
            _baselines[key] = grade_one(kata, path, targets, hidden)
    return _baselines[key]


def test_the_suite_has_every_attack() -> None:
    assert len(CASES) >= 21
    classes = {doc_field(attack_path(k, n), "Class") for k, n in CASES}
    for needed in ("progress", "batch", "replies", "visibility", "isolation-spill"):
        assert needed in classes, f"no attack of class {needed}"


@pytest.mark.parametrize(("kata", "name"), CASES)
def test_every_attack_follows_the_convention(kata: str, name: str) -> None:
    path = attack_path(kata, name)
    assert doc_field(path, "Attack"), f"{name}: empty Attack line"
    assert doc_field(path, "Class") in CLASSES, f"{name}: Class must be one of {CLASSES}"
    honest = attack_path(kata, name, honest=True)
    assert honest.exists(), f"{name}: no honest baseline at {honest}"
    assert honest.is_dir() == path.is_dir(), f"{name}: attack and baseline differ in form"
    targets = doc_field(path, "Targets", required=False)
    kata_meta = catalog.load(kata)
    for item in filter(None, targets.split(",")):
        assert kata_meta.item(item.strip()).graded_by == "tests", f"{name}: {item}"
    assert code_key(path) != code_key(honest), f"{name}: the baseline is the attack itself"
    if path.suffix == ".patch":   # the attack is its honest twin plus the cheat, nothing else
        base = patches.load(path, PATCH_KEYS).base
        assert catalog.ROOT / base == honest, f"{name}: a patch attack's base is its twin, not {base}"
    if honest.suffix == ".patch":
        base = patches.load(honest, PATCH_KEYS).base
        assert base.startswith("solutions/"), f"{name}: a patch baseline's base is the reference"


def test_root_on_linux_gets_the_whole_sandbox() -> None:
    """Where the grader can have every protection, a silent fallback is a defect."""
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("the full sandbox needs root on Linux")
    caps = sandbox.capabilities()
    assert caps.separate_uid and caps.mount_namespace and caps.network_namespace, caps.notes


def _listen() -> tuple[socket.socket, list[object], threading.Event, threading.Thread]:
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    for port in range(47600, 47650):  # the range graders/hostile/*/network.py tries
        try:
            listener.bind(("127.0.0.1", port))
            break
        except OSError:
            continue
    else:
        pytest.skip("no free port in 47600..47649 for the loopback listener")
    listener.listen(8)
    listener.settimeout(0.2)
    connections: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                connections.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return listener, connections, stop, thread


def _per_item(g: grade.Grade) -> dict[str, int]:
    return {r.item.id: r.score for r in g.items}


def _check_batch(name: str, got: Any, base: Any, out: Path) -> None:
    if isinstance(got, batch.BatchError):
        assert "refusing to grade" in str(got) and not (out / "summary.csv").exists(), got
        return
    assert not isinstance(base, batch.BatchError), f"{name}: the honest batch was refused: {base}"
    assert (out / "summary.csv").is_file(), f"{name}: no summary.csv"
    assert len(got) == len(base), f"{name}: attack and baseline hold different numbers of entries"
    for (entry, data), (honest_entry, honest_data) in zip(sorted(got.items()),
                                                          sorted(base.items())):
        assert data["score"] == honest_data["score"], (
            f"{name}: {entry!r} scored {data['score']}, its honest counterpart "
            f"{honest_entry!r} {honest_data['score']}: a report was overwritten or mixed")


def _check_visibility(name: str, g: grade.Grade, tmp: Path) -> None:
    grade.write_reports(g, tmp / "vis")
    data = json.loads((tmp / "vis" / "results.json").read_text())
    hidden = [t for t in g.tests if t.visibility == "hidden" and t.outcome == "failed"]
    secrets = {"graders/hidden"} | {t.nodeid.split("::")[-1] for t in hidden}
    for t in hidden:
        secrets.update(x.strip() for x in t.message.splitlines() if len(x.strip()) > 25)
    public = "\n".join(t.message for t in g.tests if t.visibility != "hidden")
    secrets = {s for s in secrets if s not in public}  # harness lines both kinds share
    assert secrets, f"{name}: the check needs a failed hidden test"
    visible = [json.dumps(t) for t in data["tests"] if t["visibility"] == "visible"]
    for text in visible + [data["output"]]:
        leaked = [s for s in secrets if s in text]
        assert not leaked, f"{name}: hidden detail in a visible entry: {leaked[:3]}"


MODED_CASES = [(k, n, z) for k, n in CASES
               for z in (("1", "0") if doc_field(attack_path(k, n), "Modes", required=False)
                         == "both" else (None,))]


def _unsafe_chars(text: str) -> list[str]:
    return sorted({repr(c) for c in scoring._UNSAFE.findall(text)})


def _check_reports(name: str, g: grade.Grade, tmp: Path) -> None:
    table = grade.table(g) + "\n".join(grade.failure_details(g))
    assert "\x1b" not in table and not _unsafe_chars(table), (
        f"{name}: the terminal table carries {_unsafe_chars(table)}")
    for report in ("junit.xml", "results.json"):
        text = (tmp / report).read_text(encoding="utf-8")
        assert not _unsafe_chars(text), f"{name}: {report} carries {_unsafe_chars(text)}"
    assert any("\ufffd" in t.message for t in g.tests), f"{name}: the attack never reached a report"


# one xdist worker runs every attack, one at a time: each checks that no process holding
# the leave_children attack's marker is left, which another attack running beside it would
# fail (the same group as test_candidate_tests' hostile cases)
@pytest.mark.xdist_group("hostile")
@pytest.mark.parametrize(("kata", "name", "zygote"), MODED_CASES)
def test_attack_scores_no_more_than_its_baseline(kata: str, name: str, zygote: str | None,
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    if zygote is not None:
        monkeypatch.setenv("KATA_ZYGOTE", zygote)
    path = attack_path(kata, name)
    cls = doc_field(path, "Class")
    targets = doc_field(path, "Targets", required=False).replace(" ", "") or None
    hidden = cls == "visibility"
    caps = sandbox.capabilities()
    if name in NEEDS_UID and not caps.separate_uid:
        pytest.skip(f"{name} is only safe to run where the worker gets its own uid "
                    f"(root with namespaces): {caps.notes}")
    base = baseline(kata, name, targets, hidden, tmp_path)
    for trace in TRACES:
        if trace.exists() and trace.is_file() and "PWNED" in trace.name:
            trace.unlink()
    before = top_level()
    # leave_children's sleepers already running belong to another run on this machine (a
    # second checkout's suite): only those that appear during this grade count
    asleep = set(sleepers())
    listener, connections, stop, thread = _listen()
    out = tmp_path / "attack-out"
    path = built(path, tmp_path)
    try:
        if cls == "batch":
            got: Any = grade_batch(kata, path, out, targets)
        else:
            got = grade_one(kata, path, targets, hidden)
    finally:
        stop.set()
        thread.join()
        listener.close()

    if cls == "batch":
        _check_batch(name, got, base, out)
    else:
        g: grade.Grade = got
        grade.write_reports(g, tmp_path)
        check_results_json(tmp_path / "results.json")
        check_junit(tmp_path / "junit.xml", len(g.tests))
        assert g.seconds < TOTAL_S
        assert all(t.outcome in ("passed", "failed", "skipped") for t in g.tests)
        honest, attack = _per_item(base), _per_item(g)
        gained = {i: (attack[i], honest.get(i, 0)) for i in attack if attack[i] > honest.get(i, 0)}
        assert not gained, f"{name} scored more than its honest baseline: {gained}"
        iso = json.loads((tmp_path / "results.json").read_text())["extra_data"]["isolation"]
        assert iso["process"] is True
        if cls == "replies":
            failed = [t for t in g.tests if t.outcome == "failed"]
            assert failed and all(re.search(r"reply|nested|elements|lists and dicts|did not "
                                            r"return|[Tt]imeout", t.message) for t in failed), (
                f"{name}: a reply failure must say what was wrong: "
                + (failed[0].message[:500] if failed else "nothing failed"))
        if cls == "visibility":
            _check_visibility(name, g, tmp_path)
        if cls == "reports":
            _check_reports(name, g, tmp_path)
    if caps.network_namespace:
        assert not connections, f"{name} reached the loopback listener"
    if caps.separate_uid:
        written = [str(t) for t in TRACES if t.exists() and (
            "PWNED" in t.name or "FORGED" in t.name or t.name == "replay.json"
            or t.parent == catalog.ROOT)]
        assert not written, f"{name} wrote outside its folder: {written}"
        assert not set(sleepers()) - asleep, f"{name} left processes running"
    assert top_level() <= before, f"{name} wrote into the repository: {top_level() - before}"
    assert not orphan_workers(), f"{name} left worker processes behind"


def test_no_trace_of_an_attack_is_committed() -> None:
    """A report or marker an attack writes (forge_reports: results.json, junit.xml,
    FORGED-BY-SUBMISSION) was once committed at the repository's root after an in-process
    run; none may be tracked there."""
    tracked = subprocess.run(["git", "-C", str(catalog.ROOT), "ls-files"], capture_output=True,
                             text=True, check=True).stdout.splitlines()
    traces = {str(t.relative_to(catalog.ROOT)) for t in TRACES if t.parent == catalog.ROOT}
    assert traces >= {"results.json", "junit.xml", "FORGED-BY-SUBMISSION"}
    assert sorted(traces & set(tracked)) == []


@pytest.mark.xdist_group("hostile")
def test_the_hostile_group_reaches_the_scheduler(request: pytest.FixtureRequest) -> None:
    """Under ``--dist loadgroup`` (``nox -s tests``) a grouped test's nodeid carries its
    group, the only thing the scheduler reads: without it the attacks run side by side and
    one's leftover processes fail another (selftest/conftest.py writes it for pytest 9)."""
    config = request.config
    if not getattr(config.option, "loadgroup", False) or not hasattr(config, "workerinput"):
        pytest.skip("not run under --dist loadgroup")
    assert request.node.nodeid.endswith("@hostile"), request.node.nodeid
