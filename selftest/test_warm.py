"""The warm start of a grade's test process (graders/grade/warm.py): forked from a server that
has imported pytest once, and otherwise the same as a fresh interpreter."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from graders import grade
from graders.grade import warm
from graders.launch import test_env as _child_env

KATA = "radix_cache"


def _statuses(g: grade.Grade) -> dict[str, str]:
    return {r.item.id: r.status for r in g.items}


def _run(tmp_path: Path, body: str) -> int:
    """Start ``pytest`` on a one-test file through a warm server; its exit code."""
    test = tmp_path / "test_one.py"
    test.write_text(body)
    log = tmp_path / "out.log"
    read_fd, write_fd = os.pipe()
    try:
        with open(log, "ab") as out:
            child = warm.spawn([str(test), "-q", "-p", "no:cacheprovider"], _child_env(),
                               tmp_path, out.fileno(), write_fd)
        os.close(write_fd)
        write_fd = -1
        return child.wait(timeout=60)
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)


def test_a_warm_grade_scores_as_a_fresh_one(monkeypatch: pytest.MonkeyPatch) -> None:
    warm_grade = grade.run(KATA, "solutions", rubric="edge_split,prefix_match", profile="smoke")
    assert any(s.alive for s in warm._servers.values()), "no warm server was started"
    monkeypatch.setenv("KATA_WARM", "0")
    fresh = grade.run(KATA, "solutions", rubric="edge_split,prefix_match", profile="smoke")
    assert _statuses(warm_grade) == _statuses(fresh) == {"edge_split": "passed",
                                                         "prefix_match": "passed"}
    stub = grade.run(KATA, "katas", rubric="edge_split", profile="smoke")
    assert _statuses(stub) == {"edge_split": "failed"}


def test_exit_codes_and_signals_come_back(tmp_path: Path) -> None:
    assert _run(tmp_path, "def test_ok():\n    pass\n") == 0
    assert _run(tmp_path, "def test_no():\n    assert False\n") == 1
    assert _run(tmp_path, "import os\ndef test_exit():\n    os._exit(3)\n") == 3
    assert _run(tmp_path, "import os, signal\ndef test_kill():\n"
                          "    os.kill(os.getpid(), signal.SIGKILL)\n") == -signal.SIGKILL


def test_the_child_gets_the_grades_environment_and_folder(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KATA_SANDBOX", "limits")   # a per-grade variable: the same server
    body = ("import os\ndef test_env():\n"
            "    assert os.environ['KATA_SANDBOX'] == 'limits'\n"
            f"    assert os.getcwd() == {str(tmp_path)!r}\n"
            "    assert os.getsid(0) == os.getpid()\n")
    assert _run(tmp_path, body) == 0


def test_a_dead_server_is_replaced() -> None:
    grade.run(KATA, "solutions", rubric="edge_split", profile="smoke")
    servers = [s for s in warm._servers.values() if s.alive]
    assert servers
    for s in servers:
        os.kill(s.proc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(s.alive for s in servers) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(s.alive for s in servers), "a killed server must be seen as gone"
    g = grade.run(KATA, "solutions", rubric="edge_split", profile="smoke")
    assert _statuses(g) == {"edge_split": "passed"}
    assert any(s.alive for s in warm._servers.values())
