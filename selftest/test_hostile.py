"""The hostile-submission suite: each submission in graders/hostile/KATA/ tries one attack
on the grader. Graded in isolated mode, each must score no more than honest behaviour
would (its docstring's 'Honest:' line), the grade must finish within its bound and write
valid reports, and the attack must leave no trace (files, processes, connections).
"""

from __future__ import annotations

import ast
import os
import re
import socket
import sys
import threading
from pathlib import Path

import pytest

from graders import catalog, grade, sandbox
from selftest.test_harness import check_junit, check_results_json

HOSTILE = catalog.ROOT / "graders" / "hostile"
CASES = sorted((p.parent.name, p.stem) for p in HOSTILE.glob("*/*.py") if p.name != "__init__.py")
NEEDS_UID = {"fork_bomb"}
TRACES = [Path("/work/main/PWNED-BY-SUBMISSION"), Path("/tmp/PWNED-BY-SUBMISSION"),
          Path("/root/PWNED-BY-SUBMISSION"), Path("/work/PWNED-BY-SUBMISSION"),
          catalog.ROOT / "PWNED-BY-SUBMISSION", catalog.ROOT.parent / "PWNED-BY-SUBMISSION",
          catalog.ROOT / "results.json", catalog.ROOT / "FORGED-BY-SUBMISSION",
          Path("/tmp/results.json"), Path("/tmp/replay.json")]


def doc_field(path: Path, field: str) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    found = re.search(rf"^{field}:\s*(.+)$", doc, re.MULTILINE)
    assert found, f"{path.name}: the docstring needs a '{field}:' line"
    return found.group(1).strip()


def sleepers() -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if b"987654" in cmd:
                out.append(int(entry))
    return out


def test_the_suite_has_every_attack() -> None:
    assert len(CASES) >= 15


def test_root_on_linux_gets_the_whole_sandbox() -> None:
    """Where the grader can have every protection, a silent fallback is a defect."""
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("the full sandbox needs root on Linux")
    caps = sandbox.capabilities()
    assert caps.separate_uid and caps.mount_namespace and caps.network_namespace, caps.notes


@pytest.mark.xdist_group("hostile")  # shared trace paths and listener ports
@pytest.mark.parametrize(("kata", "name"), CASES)
def test_hostile_submission_gains_nothing(kata: str, name: str, tmp_path: Path) -> None:
    path = HOSTILE / kata / f"{name}.py"
    honest = int(doc_field(path, "Honest"))
    doc_field(path, "Stopped by")
    caps = sandbox.capabilities()
    if name in NEEDS_UID and not caps.separate_uid:
        pytest.skip(f"{name} is only safe to run where the worker gets its own uid "
                    f"(root with namespaces): {caps.notes}")
    for trace in TRACES:
        if trace.exists() and trace.is_file() and "PWNED" in trace.name:
            trace.unlink()
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
    try:
        g = grade.run(kata, str(path), include_hidden=False, per_test_timeout=2.0, grace=3.0,
                      total_timeout=240)
    finally:
        stop.set()
        thread.join()
        listener.close()
    grade.write_reports(g, tmp_path)
    data = check_results_json(tmp_path / "results.json")
    check_junit(tmp_path / "junit.xml", len(g.tests))
    assert data["score"] <= honest, f"{name} scored {data['score']} > honest {honest}"
    assert g.seconds < 240
    assert all(t.outcome in ("passed", "failed", "skipped") for t in g.tests)
    if caps.network_namespace:
        assert not connections, f"{name} reached the loopback listener"
    if caps.separate_uid:
        written = [str(t) for t in TRACES if t.exists() and (
            "PWNED" in t.name or "FORGED" in t.name or t.name == "replay.json")]
        assert not written, f"{name} wrote outside its folder: {written}"
        assert not sleepers(), f"{name} left processes running"
    iso = data["extra_data"]["isolation"]
    assert iso["process"] is True
