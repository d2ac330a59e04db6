"""Which sandbox this machine allows: probing bubblewrap, the root namespaces and plain limits,
choosing the best (or the one KATA_SANDBOX forces), pinning the choice for a test process,
and run_command (any command in the chosen sandbox)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from graders.sandbox.errors import SandboxUnavailable
from graders.sandbox.jail import BACKENDS, Capabilities, INNER_UID, Limits, seccomp_filter
from graders.sandbox.processes import run_sandboxed
from graders.sandbox.scratch import scratch_base


def run_command(argv: list[str], scratch: Path, limits: Limits, timeout: float,
                env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run argv with cwd=scratch in the same sandbox as a worker: scratch is the only
    writable path and nothing of the repository or the grade's files is visible (under
    bwrap and the root fallback; see capabilities()). Waits at most ``timeout`` s, then
    kills the whole process tree. Returns the exit status (negative: killed by that
    signal, as subprocess reports it) and the last 64 KiB of its output (stdout and
    stderr together). As root, scratch is handed to the sandbox's uid."""
    return run_sandboxed(capabilities(), argv, Path(scratch), limits, timeout, env)


_capabilities: Capabilities | None = None


def _unavailable(backend: str) -> str | None:
    if backend != "limits" and sys.platform != "linux":
        return f"Linux only (this is {sys.platform})"
    if backend == "bwrap" and shutil.which("bwrap") is None:
        return "bwrap is not on PATH (install bubblewrap; see the README)"
    if backend == "namespaces" and os.geteuid() != 0:
        return "needs root"
    return None


def _describe(backend: str, seccomp: bool) -> Capabilities:
    full = backend != "limits"
    caps = Capabilities(backend, separate_uid=full, network_namespace=full,
                        mount_namespace=full, pid_namespace=backend == "bwrap", seccomp=seccomp)
    if backend == "bwrap" and os.geteuid() != 0:
        caps.notes.append(f"not root: the worker is uid {INNER_UID} of its own user "
                          "namespace, this user outside it")
    return caps


def _probe(caps: Capabilities) -> str | None:
    """Run a small program in this sandbox; None when it worked, else why not."""
    scratch = Path(tempfile.mkdtemp(prefix="probe-", dir=scratch_base()))
    try:
        code, out = run_sandboxed(caps, [sys.executable, "-I", "-c",
                                "import numpy, os; print('ok', os.getcwd())"],
                         scratch, Limits(), 60.0, None)
    except (OSError, subprocess.SubprocessError, SandboxUnavailable) as exc:
        return f"could not start: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if code == 0 and out.startswith("ok"):
        return None
    return f"a test program failed (exit {code}): {out.strip()[-300:]}"


PROBED_ENV = "KATA_SANDBOX_PROBED"


def probed_env(caps: Capabilities) -> dict[str, str]:
    """What a grade passes to the test process it starts (with KATA_SANDBOX): the sandbox
    it has just tried with a real program, so that the test process need not try it again
    (a sandbox and an interpreter, a fifth of a second, on every grade)."""
    return {"KATA_SANDBOX": caps.backend,
            PROBED_ENV: json.dumps({"backend": caps.backend, "seccomp": caps.seccomp,
                                    "notes": caps.notes})}


def _probed(forced: str) -> Capabilities | None:
    try:
        data = json.loads(os.environ.get(PROBED_ENV, ""))
    except ValueError:
        return None
    if not isinstance(data, dict) or not forced or data.get("backend") != forced:
        return None
    caps = _describe(forced, seccomp=bool(data.get("seccomp")) and seccomp_filter()[0] is not None)
    caps.notes = [str(n) for n in data.get("notes") or []]
    return caps


def capabilities() -> Capabilities:
    """The backend this process's workers run under, chosen once: bwrap, else the root
    fallback, else limits only; or the one KATA_SANDBOX names (SandboxUnavailable when it
    cannot run here). Each candidate is tried with a real program before it is chosen."""
    global _capabilities
    if _capabilities is not None:
        return _capabilities
    forced = os.environ.get("KATA_SANDBOX", "").strip()
    if forced and forced not in BACKENDS:
        raise SandboxUnavailable(f"KATA_SANDBOX={forced!r}: choose bwrap, namespaces or limits")
    _, _, no_filter = seccomp_filter()
    notes = [no_filter] if no_filter else []
    probed = _probed(forced)
    if probed is not None:   # the grade that started this process tried it moments ago
        _capabilities = probed
        return probed
    for backend in [forced] if forced else list(BACKENDS):
        why = _unavailable(backend)
        if why is None:
            caps = _describe(backend, seccomp=not no_filter)
            why = _probe(caps)
            if why is not None and caps.seccomp:
                caps = _describe(backend, seccomp=False)
                if _probe(caps) is None:
                    notes.append(f"the seccomp filter could not be loaded: {why}")
                    why = None
            if why is None:
                caps.notes = notes + caps.notes
                _capabilities = caps
                return caps
        if forced:
            raise SandboxUnavailable(f"KATA_SANDBOX={forced}: the {BACKENDS[forced]} sandbox "
                                     f"cannot run here: {why}")
        notes.append(f"{BACKENDS[backend]}: {why}")
    caps = _describe("limits", seccomp=False)
    caps.notes = notes
    _capabilities = caps
    return caps
