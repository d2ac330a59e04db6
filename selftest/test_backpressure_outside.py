"""The backpressure kata graded on evidence from outside the worker.

The pieces the trusted side relies on (the engine served from the test process, tokens
only the engine can produce, /proc measurements of a process tree) each get a check that
can fail, and the hostile backpressure cases are graded on the rubric item they target,
beside their honest baselines (the generic suite in test_hostile.py grades whole reports;
these name the item, which is faster and says more).
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import time

import pytest

from graders import measure, outside
from graders.support import backpressure as support

def _end_tree(parent: subprocess.Popen[bytes]) -> None:
    """Kill ``parent`` and every process under it (found before the parent goes)."""
    pids = measure.worker_pids(parent.pid)
    for pid in reversed(pids):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    parent.wait()


def test_a_salted_engine_produces_bytes_only_the_engine_knows() -> None:
    engine = support.FakeEngine(salt=b"secret")
    engine.add("s0", b"alice 3 40")
    out = b"".join(data for _ in range(3) for _, data, _ in engine.step())
    assert out == engine.expected(b"alice 3 40")
    assert out != support.expected_output(b"alice 3 40"), "the salt changes the padding"
    assert out.startswith(b"<alice:0>"), "a token still names its position"
    other = support.FakeEngine(salt=b"other")
    assert other.expected(b"alice 3 40") != out
    assert support.FakeEngine().expected(b"a 2 1") == b"<<", "no salt: the readable format"


def test_the_engine_host_serves_the_api_and_drops_malformed_requests() -> None:
    engine = support.FakeEngine(salt=b"k")
    host = support.EngineHost(engine, socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    try:
        link = support.EngineLink(host.port)
        assert not link.busy()
        link.add("s0", b"bob 2 16")
        with pytest.raises(ValueError):
            link.add("s0", b"bob 2 16")       # an id the engine has seen
        with pytest.raises(ValueError):
            link.add("s1", b"not a prompt")
        assert link.busy()
        first = link.step()
        link.cancel("s0")
        link.cancel("s0")
        late = link.step()
        assert [(sid, done) for sid, _, done in first + late] == [("s0", False), ("s0", True)]
        assert b"".join(d for _, d, _ in first + late) == engine.expected(b"bob 2 16")
        assert engine.cancels["s0"] == 2, "every cancel is recorded on the trusted side"
        link.close()
        # a malformed request closes its connection and changes nothing
        raw = socket.create_connection((support.HOST, host.port), timeout=5)
        body = b'{"op": "cancel"}'
        raw.sendall(struct.pack("<I", len(body)) + body)
        assert raw.recv(64) == b""
        raw.close()
        raw = socket.create_connection((support.HOST, host.port), timeout=5)
        raw.sendall(struct.pack("<I", 1 << 30))   # an oversized frame
        assert raw.recv(64) == b""
        raw.close()
        assert dict(engine.cancels) == {"s0": 2} and set(engine.prompts) == {"s0"}
    finally:
        host.close()


def test_measurements_from_outside_cover_the_whole_process_tree() -> None:
    # a parent that starts a child; the child holds 64 MiB and burns CPU
    code = ("import subprocess, sys; subprocess.run([sys.executable, '-c', "
            "'import time; b = bytearray(64 << 20); t = time.process_time()\\n"
            "while time.process_time() - t < 0.3: pass\\ntime.sleep(30)'])")
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if len(measure.worker_pids(parent.pid)) == 2 and \
                    measure.cpu_seconds(parent.pid) >= 0.3:
                break
            time.sleep(0.05)
        pids = measure.worker_pids(parent.pid)
        assert len(pids) == 2 and pids[0] == parent.pid
        assert measure.memory_bytes(parent.pid) >= 64 << 20
        assert measure.cpu_seconds(parent.pid) >= 0.3
    finally:
        _end_tree(parent)
    with pytest.raises(ValueError):
        outside.sockets_in_netns(parent.pid, 0)


def test_sockets_reach_a_server_in_the_network_namespace_of_a_child() -> None:
    # like bubblewrap: the tree's root stays in our namespace, its child has its own with
    # a server on 127.0.0.1 that nothing in our namespace can reach
    serve = ("import socket, sys; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
             "print(s.getsockname()[1], flush=True); c, _ = s.accept(); c.sendall(b'inside')")
    parent = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys; subprocess.run(['unshare', '-rn', "
         "'sh', '-c', 'ip link set lo up 2>/dev/null; exec \"$0\" -c \"$1\"', sys.executable, "
         "sys.argv[1]])", serve], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        if not line.strip().isdigit():
            pytest.skip(f"no network namespace here: {parent.stderr.read(300)!r}"
                        if parent.stderr else "no network namespace here")
        port = int(line)
        pids = measure.worker_pids(parent.pid)
        assert len(pids) >= 2
        with socket.socket() as plain:   # from our own namespace it is not there
            plain.settimeout(2)
            with pytest.raises(OSError):
                plain.connect(("127.0.0.1", port))
                if plain.recv(16) != b"inside":
                    raise OSError("someone else")
        (inside,) = outside.sockets_in_netns(parent.pid, 1)
        with inside:
            inside.settimeout(5)
            inside.connect(("127.0.0.1", port))
            assert inside.recv(16) == b"inside"
    finally:
        _end_tree(parent)
