"""A worker's scratch folder: a copy of the submission (copied, never linked; links, devices,
FIFOs and sockets refused), the worker's own files and graders/support."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from graders import catalog
from graders.sandbox.errors import UnsafeSubmission


SUBMISSION_BYTES = 64 << 20       # a submission larger than this is refused


SUBMISSION_ENTRIES = 2000


def scratch_base() -> Path:
    base = catalog.ROOT / ".nox" / "sandbox"
    base.mkdir(parents=True, exist_ok=True)
    return base


_KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}


def _refuse(path: Path, st: os.stat_result) -> UnsafeSubmission:
    kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a plain file or folder")
    return UnsafeSubmission(f"submission refused: {path} is {kind}; submissions must hold "
                            "plain files and folders only (copied, never linked)")


def _open_entry(path: Path, dir_fd: int | None, name: str) -> tuple[int, os.stat_result]:
    """Open one entry without following a link, and check that what was opened is the
    plain file or folder that was looked at (no swap between the look and the open)."""
    before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if not (stat.S_ISREG(before.st_mode) or stat.S_ISDIR(before.st_mode)):
        raise _refuse(path, before)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | (
        os.O_DIRECTORY if stat.S_ISDIR(before.st_mode) else 0)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        raise UnsafeSubmission(f"submission refused: {path} changed while it was being "
                               f"copied ({exc.strerror})") from None
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise UnsafeSubmission(f"submission refused: {path} changed while it was being copied")
    return fd, st


class _Copy:
    """Walk (and, given a destination, copy) one submission tree through file descriptors
    opened without following links; count bytes, entries and hard links on the way."""

    def __init__(self) -> None:
        self.bytes = 0
        self.entries = 0
        self.links: dict[tuple[int, int], tuple[int, list[Path]]] = {}

    def entry(self, path: Path, dir_fd: int | None, name: str, dest: Path | None) -> None:
        self.entries += 1
        if self.entries > SUBMISSION_ENTRIES:
            raise UnsafeSubmission(f"submission refused: more than {SUBMISSION_ENTRIES} "
                                   "files and folders")
        fd, st = _open_entry(path, dir_fd, name)
        try:
            if stat.S_ISDIR(st.st_mode):
                if dest is not None:
                    dest.mkdir(mode=0o755)
                for child in sorted(os.listdir(fd)):
                    if child == "__pycache__" or child.endswith(".pyc"):
                        continue
                    self.entry(path / child, fd, child, None if dest is None else dest / child)
                return
            nlink, seen = self.links.setdefault((st.st_dev, st.st_ino), (st.st_nlink, []))
            seen.append(path)
            self.bytes += st.st_size
            if self.bytes > SUBMISSION_BYTES:
                raise UnsafeSubmission(f"submission refused: larger than "
                                       f"{SUBMISSION_BYTES >> 20} MiB")
            if dest is not None:
                with open(dest, "xb") as out:
                    while chunk := os.read(fd, 1 << 20):
                        out.write(chunk)
        finally:
            os.close(fd)

    def check_links(self) -> None:
        for nlink, seen in self.links.values():
            if nlink > len(seen):
                raise UnsafeSubmission(
                    f"submission refused: {seen[0]} is a hard link to a file outside the "
                    f"submission ({nlink} names, {len(seen)} inside); submissions must hold "
                    "plain files only (copied, never linked)")


def _source(submission: Path) -> Path:
    """What of a submission is copied: its package folder, or its one file."""
    return submission.parent if submission.name == "__init__.py" else submission


def copy_submission(submission: Path, dest: Path | None, root: Path | None = None,
                    check_links: bool = True) -> None:
    """Copy the submission (``submission`` is the file the worker loads; a package's whole
    folder is copied) to ``dest``; with ``dest`` None, only check it. Symbolic links, hard
    links to files outside it, devices, FIFOs and sockets are refused (UnsafeSubmission,
    naming the path). Nothing is followed: every entry is opened with O_NOFOLLOW relative
    to its folder, from ``root`` (the path the grader was given, trusted up to there)
    down, so a link swapped in after a check cannot pull in a file from elsewhere. The
    project's own reference (``check_links`` False) is copied whatever other names its
    files have: a hard link made to it elsewhere must not stop the baseline."""
    src = _source(submission)
    root = src if root is None else root
    try:
        parts = src.relative_to(root).parts
    except ValueError:
        raise UnsafeSubmission(f"submission refused: {src} lies outside {root}") from None
    chain = [root.joinpath(*parts[:i]) for i in range(len(parts))]   # folders above src
    walker = _Copy()
    fds: list[int] = []
    try:
        dir_fd: int | None = None
        for folder in chain:
            fd, st = _open_entry(folder, dir_fd, str(folder) if dir_fd is None else folder.name)
            fds.append(fd)
            if not stat.S_ISDIR(st.st_mode):
                raise UnsafeSubmission(f"submission refused: {folder} is not a folder")
            dir_fd = fd
        walker.entry(src, dir_fd, str(src) if dir_fd is None else src.name, dest)
    finally:
        for fd in fds:
            os.close(fd)
    if check_links:
        walker.check_links()


def prepare_scratch(submission: Path, trusted_copy: bool,
                    bound: Path | None = None) -> tuple[Path, Path]:
    """A fresh scratch folder holding the worker's code, graders.support and a copy of the
    submission; returns (the folder, the file the worker loads). ``bound``: the path the
    grader was given, which bounds the copy; the project's own reference (a baseline
    worker, ``trusted_copy``) is checked from its own file."""
    root = None if trusted_copy else bound
    scratch = Path(tempfile.mkdtemp(prefix="kata-worker-", dir=scratch_base()))
    try:
        here = catalog.ROOT / "graders"
        shutil.copy(here / "worker.py", scratch / "_kata_worker.py")
        shutil.copy(here / "wire.py", scratch / "_kata_wire.py")
        support = catalog.SUPPORT_DIR
        if support.is_dir():
            dest = scratch / "_support" / "graders"
            shutil.copytree(support, dest / "support",
                            ignore=shutil.ignore_patterns("__pycache__"))
            (dest / "__init__.py").write_text("")
        if submission.name == "__init__.py":
            copy_submission(submission, scratch / "submission", root, not trusted_copy)
            target = scratch / "submission" / "__init__.py"
        else:
            target = scratch / "submission.py"
            copy_submission(submission, target, root, not trusted_copy)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return scratch, target
