"""The sandbox itself (graders/sandbox/): the backend it picks and states, what a sandboxed
process can reach, the seccomp filter, run_command, and submissions copied, never linked.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

import pytest

from graders import catalog, grade, measure, sandbox
from graders.sandbox import backends, processes
from graders.sandbox import scratch as scratch_mod

LINUX = sys.platform == "linux"
REFERENCE = catalog.SOLUTIONS_DIR / "radix_cache.py"
STUB = catalog.KATAS_DIR / "radix_cache" / "__init__.py"
HOSTILE = catalog.HOSTILE_DIR / "radix_cache"

# Each line: a kernel call the filter denies, made through ctypes; prints its errno name.
# ptrace(PTRACE_TRACEME) and keyctl succeed in any sandbox without the filter.
DENIED = r"""
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
calls = {
    "ptrace": (libc.ptrace, (0, 0, None, None)),                       # PTRACE_TRACEME
    "keyctl": (libc.syscall, (250, 0, -3, 0)),                         # KEYCTL_GET_KEYRING_ID
    "unshare": (libc.unshare, (0x10000000,)),                          # CLONE_NEWUSER
    "mount": (libc.mount, (b"none", b"/tmp", b"tmpfs", 0, None)),
    "bpf": (libc.syscall, (321, 0, 0, 0)),
    "setns": (libc.setns, (0, 0)),
    "chroot": (libc.chroot, (b"/",)),
}
for name, (fn, args) in calls.items():
    ctypes.set_errno(0)
    ok = fn(*args) >= 0
    print(name, "ok" if ok else errno.errorcode.get(ctypes.get_errno(), "?"))
"""


def scratch(tmp_path: Path) -> Path:
    folder = tmp_path / "scratch"
    folder.mkdir()
    return folder


# -- copied, never linked ----------------------------------------------------------------

def package(tmp_path: Path, name: str = "sub") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("from .impl import *\n")
    shutil.copy(STUB, folder / "impl.py")
    return folder


def test_a_plain_package_is_copied_whole(tmp_path: Path) -> None:
    folder = package(tmp_path)
    (folder / "data").mkdir()
    (folder / "data" / "table.txt").write_text("1 2 3\n")
    os.link(folder / "impl.py", folder / "data" / "same_file.py")  # both names inside
    dest = tmp_path / "copy"
    sandbox.copy_submission(folder / "__init__.py", dest, folder)
    assert (dest / "data" / "table.txt").read_text() == "1 2 3\n"
    assert (dest / "impl.py").read_bytes() == STUB.read_bytes()
    assert not (dest / "impl.py").is_symlink() and os.stat(dest / "impl.py").st_nlink == 1


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "fifo", "socket", "dir_symlink"])
def test_links_and_special_files_are_refused_naming_the_path(tmp_path: Path, kind: str) -> None:
    folder = package(tmp_path)
    bad = folder / "impl.py"
    bad.unlink()
    if kind == "symlink":
        bad.symlink_to(REFERENCE)
    elif kind == "hardlink":
        outside = tmp_path / "reference_copy.py"
        shutil.copy(REFERENCE, outside)
        os.link(outside, bad)
    elif kind == "fifo":
        os.mkfifo(bad)
    elif kind == "socket":
        bad = folder / "sock"
        shutil.copy(STUB, folder / "impl.py")
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(bad))
    else:
        shutil.copy(STUB, folder / "impl.py")
        bad = folder / "more"
        bad.symlink_to(catalog.SOLUTIONS_DIR, target_is_directory=True)
    dest = tmp_path / "copy"
    with pytest.raises(sandbox.UnsafeSubmission, match=str(bad)):
        sandbox.copy_submission(folder / "__init__.py", dest, folder)
    with pytest.raises(sandbox.UnsafeSubmission, match=str(bad)):
        sandbox.copy_submission(folder / "__init__.py", None, folder)


def test_a_linked_folder_above_the_file_is_refused(tmp_path: Path) -> None:
    """--impl DIR where DIR/radix_cache.py is found through a link to solutions/: the copy
    walks down from the given path without following links, so even a link swapped in
    after the check in grade.run cannot pull the reference in."""
    given = tmp_path / "given"
    given.mkdir()
    (given / "radix_cache").symlink_to(catalog.SOLUTIONS_DIR, target_is_directory=True)
    with pytest.raises(sandbox.UnsafeSubmission, match="radix_cache"):
        sandbox.copy_submission(given / "radix_cache" / "radix_cache.py",
                                tmp_path / "copy.py", given)
    assert not (tmp_path / "copy.py").exists()


def test_a_single_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "radix_cache.py"
    link.symlink_to(REFERENCE)
    with pytest.raises(sandbox.UnsafeSubmission, match="symbolic link"):
        sandbox.copy_submission(link, tmp_path / "copy.py", link)


@pytest.mark.parametrize("isolate", [True, False])
def test_a_hard_link_to_the_reference_scores_nothing(tmp_path: Path, isolate: bool) -> None:
    """The hard-link variant of graders/hostile/radix_cache/symlink_reference (git cannot
    store a hard link, so it is built here), against its honest baseline. The link goes to
    a copy of the reference beside the attack, on the same file system: a second name for
    the real solutions/radix_cache.py would refuse, for as long as it lasts, every other
    grade that copies that file as a submission (the suite runs in parallel), and the
    refusal is the same for any file outside the submission."""
    base = catalog.ROOT / ".nox" / "sandbox"   # the reference's file system
    base.mkdir(parents=True, exist_ok=True)
    attack = base / f"hardlink-{os.getpid()}-{isolate}"
    shutil.rmtree(attack, ignore_errors=True)
    outside = base / f"hardlink-{os.getpid()}-{isolate}-reference.py"
    try:
        honest = HOSTILE / "honest" / "symlink_reference"
        shutil.copytree(honest, attack)
        (attack / "impl.py").unlink()
        shutil.copy(REFERENCE, outside)
        os.link(outside, attack / "impl.py")
        g = grade.run("radix_cache", str(attack), include_hidden=False, isolate=isolate)
        h = grade.run("radix_cache", str(honest), include_hidden=False, isolate=isolate)
    finally:
        shutil.rmtree(attack, ignore_errors=True)
        outside.unlink(missing_ok=True)
    assert g.score <= h.score == 0
    assert g.tests and all(t.outcome == "failed" and "hard link" in t.message
                           and str(attack / "impl.py") in t.message for t in g.tests)


# -- the backend -------------------------------------------------------------------------

@pytest.fixture
def fresh_choice(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setattr(backends, "_capabilities", None)
    monkeypatch.delenv(sandbox.PROBED_ENV, raising=False)
    return monkeypatch


def test_an_unknown_forced_backend_is_an_error(fresh_choice: pytest.MonkeyPatch) -> None:
    fresh_choice.setenv("KATA_SANDBOX", "docker")
    with pytest.raises(sandbox.SandboxUnavailable, match="docker"):
        sandbox.capabilities()


def test_a_forced_backend_that_cannot_run_is_an_error(fresh_choice: pytest.MonkeyPatch) -> None:
    fresh_choice.setenv("KATA_SANDBOX", "bwrap")
    fresh_choice.setattr(backends.shutil, "which", lambda name: None)
    with pytest.raises(sandbox.SandboxUnavailable, match="bwrap is not on PATH"):
        sandbox.capabilities()
    with pytest.raises(grade.GradeError, match="bwrap is not on PATH"):
        grade.isolation_env(True, False)


def test_require_isolation_refuses_limits_only(fresh_choice: pytest.MonkeyPatch) -> None:
    fresh_choice.setattr(backends, "_capabilities", sandbox.Capabilities("limits"))
    assert grade.isolation_env(True, False)["KATA_SANDBOX"] == "limits"
    with pytest.raises(grade.GradeError, match="only resource limits"):
        grade.isolation_env(True, True)
    with pytest.raises(grade.GradeError, match="in-process"):
        grade.isolation_env(False, True)
    fresh_choice.setattr(backends, "_capabilities", sandbox.Capabilities("bwrap", True, True, True,
                                                                        True, True))
    assert grade.isolation_env(True, True)["KATA_SANDBOX"] == "bwrap"


def test_the_test_process_takes_the_grades_tried_sandbox(
        fresh_choice: pytest.MonkeyPatch) -> None:
    """A grade tries the sandbox, then pins it for its test process with what it found; that
    process does not try it again, unless what it is handed names another backend."""
    tried = sandbox.Capabilities("limits", notes=["a note"])
    env = sandbox.probed_env(tried)
    for key, value in env.items():
        fresh_choice.setenv(key, value)
    fresh_choice.setattr(backends, "_probe", lambda caps: pytest.fail("tried again"))
    caps = sandbox.capabilities()
    assert (caps.backend, caps.seccomp, caps.notes) == ("limits", False, ["a note"])
    fresh_choice.setattr(backends, "_capabilities", None)
    fresh_choice.setenv("KATA_SANDBOX", "bwrap")
    fresh_choice.setattr(backends, "_probe", lambda caps: "probed")
    fresh_choice.setattr(backends.shutil, "which", lambda name: "/bin/true")
    with pytest.raises(sandbox.SandboxUnavailable, match="probed"):
        sandbox.capabilities()


def test_the_choice_is_stated() -> None:
    caps = sandbox.capabilities()
    if os.environ.get("KATA_SANDBOX"):
        assert caps.backend == os.environ["KATA_SANDBOX"]
    elif LINUX and shutil.which("bwrap"):
        assert caps.backend == "bwrap", caps.notes
    elif LINUX and os.geteuid() == 0:
        assert caps.backend == "namespaces", caps.notes
    summary = caps.summary()
    assert summary["backend"] == sandbox.BACKENDS[caps.backend]
    assert (summary["lacks"] == []) == (caps.backend == "bwrap" and caps.seccomp)


# -- what a sandboxed process can reach ----------------------------------------------------

def full_sandbox() -> sandbox.Capabilities:
    caps = sandbox.capabilities()
    if caps.backend == "limits":
        pytest.skip(f"only resource limits here: {caps.notes}")
    return caps


def test_denied_calls_fail_with_eperm(tmp_path: Path) -> None:
    caps = sandbox.capabilities()
    if not caps.seccomp:
        pytest.skip(f"no seccomp filter here: {caps.notes}")
    folder = scratch(tmp_path)
    (folder / "calls.py").write_text(DENIED)
    code, out = sandbox.run_command([sys.executable, "calls.py"], folder, sandbox.Limits(), 30)
    assert code == 0, out
    results = dict(line.split() for line in out.splitlines())
    assert results == {name: "EPERM" for name in results} and len(results) == 7, out


def test_without_the_filter_the_same_calls_get_through(tmp_path: Path) -> None:
    """The control for the test above: it can fail."""
    caps = full_sandbox()
    folder = scratch(tmp_path)
    (folder / "calls.py").write_text(DENIED)
    bare = sandbox.Capabilities(caps.backend, caps.separate_uid, caps.network_namespace,
                                caps.mount_namespace, caps.pid_namespace, seccomp=False)
    code, out = processes.run_sandboxed(bare, [sys.executable, "calls.py"], folder, sandbox.Limits(), 30,
                             None)
    assert code == 0, out
    assert "ptrace ok" in out and "keyctl ok" in out, out


def test_run_command_sees_only_its_scratch(tmp_path: Path) -> None:
    full_sandbox()
    folder = scratch(tmp_path)
    probe = f"""
import os, socket
print("repo", os.path.exists({str(catalog.ROOT / 'solutions')!r}))
print("grade", os.path.exists({str(tmp_path / 'secret.txt')!r}))
open("mine.txt", "w").write("x")
for path in ("/x", "/usr/x", {str(catalog.ROOT / 'PWNED-BY-SUBMISSION')!r}):
    try:
        open(path, "w")
        print("wrote", path)
    except OSError:
        pass
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("network")
except OSError:
    pass
print("uid", os.getuid() != {os.getuid()})
"""
    (tmp_path / "secret.txt").write_text("expected values")
    (folder / "probe.py").write_text(probe)
    code, out = sandbox.run_command([sys.executable, "probe.py"], folder, sandbox.Limits(), 30)
    assert code == 0, out
    assert out.split() == ["repo", "False", "grade", "False", "uid", "True"], out
    assert (folder / "mine.txt").read_text() == "x"
    assert not (catalog.ROOT / "PWNED-BY-SUBMISSION").exists()


def test_run_command_status_and_timeout(tmp_path: Path) -> None:
    folder = scratch(tmp_path)
    limits = sandbox.Limits()
    assert sandbox.run_command([sys.executable, "-c", "print('hi'); raise SystemExit(3)"],
                               folder, limits, 30) == (3, "hi\n")
    code, _ = sandbox.run_command([sys.executable, "-c", "import os; os.kill(os.getpid(), 9)"],
                                  folder, limits, 30)
    assert code == -9
    code, out = sandbox.run_command(
        ["/bin/sh", "-c", "echo start; sleep 876541 & sleep 876541"], folder, limits, 1.0)
    assert code < 0 and out == "start\n"
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _sleeper(p, b"876541")]
    code, out = sandbox.run_command([sys.executable, "-c", "print('y' * 200000)"], folder,
                                    limits, 30)
    assert code == 0 and len(out.encode()) == sandbox.OUTPUT_TAIL_BYTES


def _sleeper(pid: str, mark: bytes = b"876543") -> bool:
    """A sleeper this file's tests started (a number of their own: the hostile suite looks
    for its own sleepers machine-wide, and the two files may run side by side)."""
    try:
        return mark in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def test_every_process_of_a_worker_is_gone_after_kill(tmp_path: Path) -> None:
    sub = tmp_path / "radix_cache.py"
    sub.write_text("import subprocess\n"
                   "subprocess.Popen(['/bin/sh', '-c', 'sleep 876543 & sleep 876543'],"
                   " start_new_session=True)\n"
                   "class RadixCache: pass\nclass OutOfSlots(Exception): pass\n")
    worker = sandbox.Worker(sub, "_submission_radix_cache", sandbox.Limits())
    try:
        assert worker.request({"op": "module_attr", "name": "OutOfSlots"}).get("ok")
        for _ in range(200):
            tree = measure.tree(worker.proc.pid)
            if sum(_sleeper(str(p)) for p in tree) >= 2:
                break
            time.sleep(0.01)
        assert sum(_sleeper(str(p)) for p in tree) >= 2, "the tree walk misses processes"
    finally:
        worker.kill()
    assert not any(processes.running(p) for p in tree)
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _sleeper(p)]


ZYGOTE_PROBE = '''
import ctypes, os, signal, subprocess
libc = ctypes.CDLL(None, use_errno=True)
HERE = os.path.dirname(os.path.abspath(__file__))
MARKS = ["/tmp/mark", os.path.join(os.getcwd(), "mark"), os.path.join(os.environ["HOME"], "mark"),
         os.path.join(os.path.dirname(os.getcwd()), "mark"), os.path.join(HERE, "mark"),
         "/dev/shm/mark"]


def probe():
    found = [p for p in MARKS if os.path.exists(p)]
    wrote = []
    for path in MARKS:
        try:
            with open(path, "w") as fh:
                fh.write("x")
            wrote.append(path)
        except OSError:
            pass
    ctypes.set_errno(0)
    shm = libc.shmget(0x4B415441, 4096, 0o1666)      # IPC_CREAT | 0666: a shared segment
    ppid = os.getppid()
    try:
        os.kill(ppid, signal.SIGSTOP)
        stopped = True
    except OSError:
        stopped = False
    try:
        open(f"/proc/{ppid}/mem", "rb").close()
        mem = True
    except OSError:
        mem = False
    try:
        os.kill(-1, signal.SIGKILL)                  # every process it may signal
    except OSError:
        pass
    subprocess.Popen(["/bin/sh", "-c", "sleep 876542"], start_new_session=True)
    return {"found": found, "wrote": wrote, "shm": shm, "stopped": stopped, "mem": mem,
            "uid": os.getuid()}
'''


@pytest.mark.skipif(not LINUX, reason="Linux sandbox")
def test_forked_workers_share_nothing_and_cannot_reach_the_zygote(tmp_path: Path) -> None:
    """Where workers are forked by a zygote (bwrap as root), a worker finds nothing an
    earlier one left (files in /tmp, its folder, the folder above, its code's folder;
    processes; a SysV segment), cannot signal or read the zygote, runs under a uid of its
    own, and a worker that signals every process it can reach does not stop the next one."""
    if not sandbox.Zygote.usable(sandbox.capabilities()):
        pytest.skip("workers are not forked by a zygote here (needs bwrap as root)")
    sub = tmp_path / "radix_cache.py"
    sub.write_text(ZYGOTE_PROBE)
    session = sandbox.Session("radix_cache", sub)
    seen = []
    try:
        for _ in range(3):
            seen.append(sandbox.RemoteModule(session).probe())
            zygote = session.zygote
            assert zygote is not None and zygote.alive()
            first = zygote.host_pid
            for _ in range(200):   # the worker's own sleeper, in the sandbox's tree
                mine = [p for p in measure.tree(zygote.proc.pid) if p not in zygote.infra]
                if any(_sleeper(str(p), b"876542") for p in mine):
                    break
                time.sleep(0.01)
            assert any(_sleeper(str(p), b"876542") for p in mine), \
                "the tree walk misses the sleeper"
            session.reset()
            assert session.zygote is zygote and zygote.host_pid == first
            assert not [p for p in mine if processes.running(p)], "a process outlived its test"
    finally:
        session.close()
    for got in seen:
        assert got["found"] == [], got
        assert got["shm"] < 0 and not got["stopped"] and not got["mem"], got
        assert got["wrote"], "the worker could write nowhere (its own folder at least)"
    assert len({got["uid"] for got in seen}) == 3 and all(got["uid"] > 0 for got in seen)


@pytest.mark.skipif(not LINUX, reason="Linux sandbox")
def test_emptying_tmp_between_workers_spares_binds_under_tmp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the checkout (so the scratch folder) lives under /tmp, bwrap makes the folders
    above its binds inside the sandbox's /tmp: emptying /tmp between workers must remove
    only what workers made, never reach through to the real scratch folder."""
    if not sandbox.Zygote.usable(sandbox.capabilities()):
        pytest.skip("workers are not forked by a zygote here (needs bwrap as root)")
    base = Path(tempfile.mkdtemp(prefix="kata-tmp-checkout-", dir="/tmp"))
    monkeypatch.setattr(scratch_mod, "scratch_base", lambda: base)
    sub = tmp_path / "radix_cache.py"
    sub.write_text(ZYGOTE_PROBE)
    session = sandbox.Session("radix_cache", sub)
    try:
        seen = [sandbox.RemoteModule(session).probe()]
        zygote = session.zygote
        assert zygote is not None
        code = zygote.scratch / "_kata_worker.py"
        session.reset()
        assert code.is_file(), "emptying /tmp removed the zygote's own folder"
        seen.append(sandbox.RemoteModule(session).probe())
        assert session.zygote is zygote
    finally:
        session.close()
        shutil.rmtree(base, ignore_errors=True)
    assert "/tmp/mark" in seen[0]["wrote"] and seen[1]["found"] == [], seen


PRECOMPILED_INIT = '''
import sys
from . import helper


def probe():
    main = sys.modules["__main__"]
    compiled = getattr(main, "_compiled", {})
    mine = compiled.get(__file__)
    theirs = compiled.get(helper.__file__)
    try:
        from . import broken  # noqa: F401
        broken_error = ""
    except SyntaxError as exc:
        broken_error = type(exc).__name__
    return {
        "files": sorted(p.rsplit("/", 1)[-1] for p in compiled),
        # the functions run are the ones in the fork server's code objects (identity)
        "mine": mine is not None and probe.__code__ in mine[2].co_consts,
        "theirs": theirs is not None and helper.value.__code__ in theirs[2].co_consts,
        "broken": broken_error,
        "value": helper.value(),
    }
'''


@pytest.mark.skipif(not LINUX, reason="Linux sandbox")
def test_forked_workers_run_the_code_the_zygote_compiled(tmp_path: Path) -> None:
    """A package submission's files are compiled once per sandbox (by a child of the zygote
    under a uid of its own, never running them) and each worker runs those code objects; a
    file that does not compile is left to the worker, whose import reports the error as
    before."""
    if not sandbox.Zygote.usable(sandbox.capabilities()):
        pytest.skip("workers are not forked by a zygote here (needs bwrap as root)")
    pkg = tmp_path / "radix_cache"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(PRECOMPILED_INIT)
    (pkg / "helper.py").write_text("def value():\n    return 41 + 1\n")
    (pkg / "broken.py").write_text("def oops(:\n")
    session = sandbox.Session("radix_cache", pkg / "__init__.py")
    try:
        seen = []
        for _ in range(2):
            seen.append(sandbox.RemoteModule(session).probe())
            session.reset()
    finally:
        session.close()
    for got in seen:
        assert got == {"files": ["__init__.py", "helper.py"], "mine": True, "theirs": True,
                       "broken": "SyntaxError", "value": 42}, got


def test_a_second_name_for_the_reference_does_not_stop_its_baseline(tmp_path: Path) -> None:
    """The reference's worker (a baseline of a growth check) copies solutions/ whatever other
    names its file has; a submission holding such a link is still refused."""
    base = catalog.ROOT / ".nox" / "sandbox"
    base.mkdir(parents=True, exist_ok=True)
    source = base / f"second-name-{os.getpid()}.py"
    shutil.copy(REFERENCE, source)
    extra = base / f"second-name-{os.getpid()}-link.py"
    os.link(source, extra)
    try:
        scratch, target = scratch_mod.prepare_scratch(source, trusted_copy=True)
        try:
            assert target.read_bytes() == REFERENCE.read_bytes()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        with pytest.raises(sandbox.UnsafeSubmission, match="hard link"):
            sandbox.copy_submission(source, None, base)
    finally:
        source.unlink(missing_ok=True)
        extra.unlink(missing_ok=True)


ORPHAN_BURN = '''
import os, time
def kept_mask(logits, temperature, top_p, top_k=None):
    """A double fork: the grandchild burns CPU, re-parented away from the worker."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        if os.fork() == 0:
            end = time.process_time() + 0.4
            while time.process_time() < end:
                pass
            os.write(w, b"x")
        os._exit(0)
    os.waitpid(pid, 0)
    os.read(r, 1)
    time.sleep(0.05)   # the orphan has exited: only its CPU is left to find
    return logits == logits
def sample(*args):
    os.fork() or (time.sleep(30), os._exit(0))   # a child left running after the call
    return 0
'''


@pytest.mark.parametrize("zygote", ["1", "0"])
def test_a_measured_call_is_charged_all_its_sandbox_cpu(tmp_path: Path, zygote: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """CPU a double-forked orphan burns during a measured call is charged to it (the
    sandbox's cgroup, or the walk that follows the pid namespace's init), and a process
    left running after a measured call fails it."""
    import numpy as np

    from graders import impl

    if sys.platform != "linux" or not sandbox.capabilities().pid_namespace:
        pytest.skip("needs a sandbox with its own pid namespace")
    monkeypatch.setenv("KATA_ZYGOTE", zygote)
    sub = tmp_path / "top_p.py"
    sub.write_text(ORPHAN_BURN)
    impl.configure(str(sub), isolate=True)
    try:
        x = np.zeros((1, 4))
        _, used = impl.measured_call("top_p", None, "kept_mask", x, np.ones(1), np.ones(1),
                                     None, check=lambda got: None)
        assert used >= 0.3, f"the orphan's CPU was not charged: {used:.3f} s"
        with pytest.raises(sandbox.WorkerError, match="outlive a measured call"):
            impl.measured_call("top_p", None, "sample", x, check=lambda got: None)
    finally:
        impl.reset_workers(final=True)
        impl.configure("solutions")


def test_measured_calls_must_be_checked() -> None:
    from graders import impl

    with pytest.raises(TypeError, match="checked call"):
        impl.measured_call("top_p", None, "kept_mask")


def test_uid_blocks_are_claimed_once_per_machine() -> None:
    """Two live processes never hold the same block of worker uids."""
    if sys.platform != "linux":
        pytest.skip("Linux only")
    mine = processes.uid_block()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            processes._uid_block.clear()
            os.write(w, str(processes.uid_block()).encode())
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    theirs = int(os.read(r, 64))
    os.close(r)
    os.close(w)
    assert theirs != mine


def test_every_measured_call_in_the_tests_is_checked() -> None:
    """Every measured call is a checked call (docs/AUTHORING.md): each ``measured_call`` in
    the public and hidden tests passes ``check=`` or measures the reference."""
    import ast

    unchecked = []
    for top in ("tests", "graders/hidden"):
        for path in sorted((catalog.ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if not (isinstance(node, ast.Call) and (
                        getattr(node.func, "id", None) == "measured_call"
                        or getattr(node.func, "attr", None) == "measured_call")):
                    continue
                kw = {k.arg: k.value for k in node.keywords}
                ref = kw.get("reference")
                if "check" not in kw and not (isinstance(ref, ast.Constant) and ref.value):
                    unchecked.append(f"{path.relative_to(catalog.ROOT)}:{node.lineno}")
    assert not unchecked, f"measured calls whose result is not checked: {unchecked}"
