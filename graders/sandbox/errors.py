"""What the sandbox raises: a worker that died or broke the wire, a submission it refuses to
copy, a sandbox that cannot run."""

from __future__ import annotations


class WorkerError(Exception):
    """The submission's worker failed: it died, hung, or sent something invalid."""


class UnsafeSubmission(WorkerError):
    """The submission holds something other than plain files and folders."""


class SandboxUnavailable(RuntimeError):
    """The sandbox asked for (KATA_SANDBOX) cannot run on this machine."""
