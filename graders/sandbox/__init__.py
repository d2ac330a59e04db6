"""Process isolation for grading: the submission runs in a worker process, never here.

The trusted test process (hidden tests, references, expected values) talks to the worker
through ``RemoteModule``, a stand-in for the submission's module: attribute access, calls,
method calls and a few operators are sent as plain data (graders/wire.py) and the answers
come back as plain data or handles. Exceptions come back by type and message: built-in
types are raised as themselves, exception classes the kata defines as local classes of the
same name and built-in base.

The worker starts in a fresh scratch folder holding only a copy of the submission (copied,
never linked), the worker's own two files (graders/worker.py, graders/wire.py) and
graders/support, with a minimal environment, an import path without the repository,
resource limits, a wall-clock limit per call, and its output going to a file, truncated.
Around it runs the best of three backends this machine allows (``capabilities()``;
``KATA_SANDBOX=bwrap``, ``namespaces`` or ``limits`` forces one, and a forced backend that
cannot run is an error, never a quiet downgrade): bubblewrap, the root namespaces built by
hand, or resource limits only. Every backend also loads a seccomp filter that makes the
kernel calls no submission needs fail with EPERM. docs/SECURITY.md is the whole model.

    errors.py     WorkerError, UnsafeSubmission, SandboxUnavailable
    jail.py       limits, the seccomp filter, bubblewrap's argv, the hand-built root, the launcher
    processes.py  a sandboxed process's uid, spawn, wait, kill and sweep
    backends.py   which sandbox this machine allows, pinned per grade; run_command
    scratch.py    a worker's scratch folder and the copy of the submission
    workers.py    Worker (one per test file), Zygote and ForkedWorker (one per test)
    session.py    Session and the proxy: RemoteModule, RemoteObject

One worker serves the tests of one test file; a crashed or killed worker fails the test it
was serving and a fresh one serves the next test.
"""

from __future__ import annotations

from graders.sandbox.backends import PROBED_ENV, capabilities, probed_env, run_command
from graders.sandbox.errors import SandboxUnavailable, UnsafeSubmission, WorkerError
from graders.sandbox.jail import BACKENDS, Capabilities, Limits
from graders.sandbox.processes import OUTPUT_TAIL_BYTES
from graders.sandbox.scratch import copy_submission
from graders.sandbox.session import RemoteModule, RemoteObject, Session
from graders.sandbox.workers import Worker, Zygote

__all__ = ["BACKENDS", "OUTPUT_TAIL_BYTES", "PROBED_ENV", "Capabilities", "Limits",
           "RemoteModule", "RemoteObject", "SandboxUnavailable", "Session", "UnsafeSubmission",
           "Worker", "WorkerError", "Zygote", "capabilities", "copy_submission", "probed_env",
           "run_command"]
