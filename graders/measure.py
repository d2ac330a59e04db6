"""Measurements of a grading worker taken from outside it: CPU time and memory from the kernel.

A submission can replace anything inside its own interpreter (a clock, a tracer, a driver),
so work and growth checks read what the kernel accounts to the worker's processes instead:

- CPU time: each process's CPU clock (``clock_gettime`` on the process clock of a pid:
  nanoseconds, every thread, live or exited) plus the CPU of the children it has reaped
  (``cutime + cstime`` in /proc/<pid>/stat). Every process of the worker's tree is found
  from ``Worker.proc.pid`` (the ``children`` files where the kernel has them, else the
  parent links of every process) and, once seen, followed by identity (pid and start time)
  even after it has been re-parented; a process re-parented before it was ever seen is
  still found by the worker's session (it leads one) and, where it has one, its own uid. Counting a reaped child twice (its own clock, then
  its parent's ``cutime``) can only raise the figure, never lower it.
- Memory: resident plus swapped-out memory (VmRSS, VmSwap) summed over the worker.

``Meter.watch`` polls while the trusted side waits for a reply (graders/sandbox/), so a
process that lives only for part of a call is still counted, and a call that runs past its
CPU budget is ended at once instead of at the wall-clock limit.

In-process mode (trusted code only: practice runs, mutants) measures the test process
itself with ``time.process_time``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_SCAN_EVERY_S = 0.1      # a full walk of /proc at most this often while watching


def _process_clock(pid: int) -> float | None:
    """CPU seconds of process ``pid`` (all its threads), or None when it is gone."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)   # CPUCLOCK_SCHED of the whole process
    except (OSError, OverflowError):
        return None


def _stat(pid: int) -> tuple[int, int, float, int] | None:
    """(parent pid, start time in ticks, CPU seconds of reaped children, session id)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()
    # fields[0] is the state (field 3 of proc(5)); ppid is field 4, cutime 16, cstime 17,
    # starttime 22
    try:
        return (int(fields[1]), int(fields[19]), (int(fields[13]) + int(fields[14])) / TICKS,
                int(fields[3]))
    except (IndexError, ValueError):
        return None


def _children_of(pid: int) -> list[int] | None:
    """Child pids from /proc/<pid>/task/*/children, or None where the kernel lacks them."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                kids.extend(int(x) for x in fh.read().split())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            continue
    return kids


def _all_parents() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None:
                kids.setdefault(st[0], []).append(int(entry))
    return kids


def _kin(root: int, uid: int | None) -> list[int]:
    """Processes that left ``root``'s tree but not its session (``root`` leads one, as a
    grading worker does: an orphan re-parented elsewhere keeps it), or that run as ``uid``
    (the worker's own uid, where it has one: no process of it belongs to anyone else)."""
    st = _stat(root)
    leader = st is not None and st[3] == root
    if not leader and uid is None:
        return []
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if uid is not None:
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found.append(pid)
                    continue
            except OSError:
                continue
        if leader:
            other = _stat(pid)
            if other is not None and other[3] == root:
                found.append(pid)
    return found


def tree(root: int) -> list[int]:
    """``root`` and every process below it, by parent links."""
    found, i = [root], 0
    table: dict[int, list[int]] | None = None
    while i < len(found):
        kids = _children_of(found[i]) if table is None else None
        if kids is None:
            if table is None:
                table = _all_parents()
            kids = table.get(found[i], [])
        found.extend(k for k in kids if k not in found)
        i += 1
    return found


@dataclass
class Meter:
    """CPU seconds used by the process tree under ``root`` since ``start``."""

    root: int
    uid: int | None = None
    start_cpu: dict[tuple[int, int], float] = field(default_factory=dict)
    last_cpu: dict[tuple[int, int], float] = field(default_factory=dict)
    over: bool = False
    _last_scan: float = 0.0

    def _read(self, pid: int) -> tuple[tuple[int, int], float] | None:
        st = _stat(pid)
        cpu = _process_clock(pid)
        if st is None or cpu is None:
            return None
        again = _stat(pid)   # the pid was not reused between the two reads
        if again is None or again[1] != st[1]:
            return None
        return (pid, st[1]), cpu + st[2]

    def _poll(self, scan: bool) -> None:
        pids = {pid for pid, _ in self.last_cpu}
        if scan:
            pids.update(tree(self.root))
            pids.update(_kin(self.root, self.uid))
            for pid, _ in list(self.last_cpu):
                pids.update(tree(pid))
            self._last_scan = time.monotonic()
        for pid in pids:
            got = self._read(pid)
            if got is not None:
                key, cpu = got
                self.last_cpu[key] = max(cpu, self.last_cpu.get(key, 0.0))

    def start(self) -> "Meter":
        self.last_cpu.clear()
        self._poll(scan=True)
        self.start_cpu = dict(self.last_cpu)
        return self

    def seconds(self, scan: bool = True) -> float:
        """CPU seconds since ``start`` (polls once more first; ``scan=False`` reads only the
        processes already seen, without walking /proc for new ones)."""
        self._poll(scan=scan)
        return sum(cpu - self.start_cpu.get(key, 0.0) for key, cpu in self.last_cpu.items())

    def watch(self, budget: float | None = None) -> Callable[[], str | None]:
        """A callback for ``Worker.request``: keeps the tally current while the trusted side
        waits and, past ``budget`` CPU seconds, returns the reason to end the worker."""
        def check() -> str | None:
            self._poll(scan=time.monotonic() - self._last_scan >= _SCAN_EVERY_S)
            if budget is None:
                return None
            used = sum(cpu - self.start_cpu.get(key, 0.0) for key, cpu in self.last_cpu.items())
            if used > budget:
                self.over = True
                return (f"the call used more than its CPU budget of {budget:.3f} s "
                        "(measured from outside the worker): the worker was stopped")
            return None
        return check


def worker_pids(root: int, uid: int | None = None) -> list[int]:
    """The worker's processes: ``root`` and its tree (breadth first), then those that left
    the tree but not its session, or that run as its own ``uid``."""
    pids = tree(root)
    pids += [p for p in _kin(root, uid) if p not in pids]
    return pids


def cpu_seconds(root: int, uid: int | None = None) -> float:
    """CPU seconds the worker's processes have used so far (a snapshot; ``Meter`` follows
    a call)."""
    total = 0.0
    for pid in worker_pids(root, uid):
        st, cpu = _stat(pid), _process_clock(pid)
        if st is not None and cpu is not None:
            total += cpu + st[2]
    return total


def memory_bytes(root: int, uid: int | None = None) -> int:
    """Resident plus swapped-out memory of the worker's processes, in bytes."""
    total = 0
    for pid in worker_pids(root, uid):
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith(("VmRSS:", "VmSwap:")):
                        total += int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            continue
    return total


class ProcessMeter:
    """The same interface for in-process tests: this process's CPU time."""

    def __init__(self) -> None:
        self.begin = time.process_time()

    def start(self) -> "ProcessMeter":
        self.begin = time.process_time()
        return self

    def seconds(self, scan: bool = True) -> float:
        return time.process_time() - self.begin


# -- the kernel's account of a whole sandbox: a cgroup v2 per sandbox ---------------------

_cgroup_home: dict[int, str | None] = {}   # per process (a forked grade probes its own)
_cgroup_count = 0


def _cgroup2_root() -> str | None:
    """The folder of this process's own cgroup on a cgroup2 mount, or None."""
    try:
        with open("/proc/self/cgroup") as fh:
            own = next((line.strip()[3:] for line in fh if line.startswith("0::")), None)
        with open("/proc/self/mountinfo") as fh:
            mounts = [line.split() for line in fh]
    except OSError:
        return None
    if own is None:
        return None
    for fields in mounts:
        sep = fields.index("-") if "-" in fields else -1
        if sep < 0 or fields[sep + 1] != "cgroup2":
            continue
        root, point = fields[3], fields[4]
        if own == root or own.startswith(root.rstrip("/") + "/"):
            rel = own[len(root.rstrip("/")):].lstrip("/")
            return os.path.join(point, rel) if rel else point
    return None


def cgroup_home() -> str | None:
    """A cgroup (v2) of this process's own, under which each sandbox gets one: made once per
    trusted process (``kata-<pid>-...`` beside or below this process's own cgroup), or None
    where cgroup2 is not mounted or not writable (an unprivileged grader without a delegated
    cgroup). ``KATA_CGROUP=0`` turns it off (the fallback is then used, as on such machines).

    Only the core files are used (``cpu.stat``'s ``usage_usec``, ``cgroup.procs``,
    ``cgroup.kill``), which need no controller: no controller is enabled anywhere, so the
    no-internal-process rule never applies and this process need not move into a leaf."""
    if os.getpid() in _cgroup_home:
        return _cgroup_home[os.getpid()]
    home: str | None = None
    base = None if os.environ.get("KATA_CGROUP", "1") == "0" else _cgroup2_root()
    if base is not None:
        _remove_stale(base)
        path = os.path.join(base, f"kata-{os.getpid()}-{time.monotonic_ns() % 10**9}")
        try:
            os.mkdir(path, 0o755)
            with open(os.path.join(path, "cpu.stat")) as fh:
                if "usage_usec" in fh.read():
                    home = path
            if home is None:
                os.rmdir(path)
        except OSError:
            home = None
    if home is not None:
        import atexit

        atexit.register(_remove_home, home, os.getpid())
    _cgroup_home[os.getpid()] = home
    return home


def _remove_stale(base: str) -> None:
    """Remove what graders that are gone left here (a test process ended by os._exit or a
    signal never runs its exit hooks): ``kata-<pid>-...`` folders whose pid is not running."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        if len(parts) == 3 and parts[0] == "kata" and parts[1].isdigit() \
                and not os.path.exists(f"/proc/{parts[1]}"):
            _remove_home(os.path.join(base, name), os.getpid())


def _remove_home(home: str, owner: int) -> None:
    if os.getpid() != owner:   # a forked child's exit never touches its parent's sandboxes
        return
    try:
        for name in os.listdir(home):
            if os.path.isdir(os.path.join(home, name)):
                remove_cgroup(os.path.join(home, name))
        os.rmdir(home)
    except OSError:
        pass


def new_cgroup() -> str | None:
    """A fresh, empty cgroup for one sandbox, or None where cgroups cannot be used."""
    global _cgroup_count
    home = cgroup_home()
    if home is None:
        return None
    _cgroup_count += 1
    path = os.path.join(home, f"s{_cgroup_count}")
    try:
        os.mkdir(path, 0o755)
    except OSError:
        return None
    return path


def join_cgroup(path: str) -> None:
    """Move the calling process into ``path`` (run between fork and exec: everything the
    sandbox starts is then in it, and only root outside can move a process out)."""
    fd = os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY)
    try:
        os.write(fd, b"0")
    finally:
        os.close(fd)


def cgroup_usage(path: str) -> float:
    """CPU seconds every process that ever ran in ``path`` has used (the kernel's count:
    live, exited and reaped processes alike, wherever they were re-parented)."""
    with open(os.path.join(path, "cpu.stat"), "rb") as fh:
        for line in fh:
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) / 1e6
    raise OSError(f"no usage_usec in {path}/cpu.stat")


def cgroup_pids(path: str) -> list[int]:
    try:
        with open(os.path.join(path, "cgroup.procs")) as fh:
            return [int(x) for x in fh.read().split()]
    except (OSError, ValueError):
        return []


def kill_cgroup(path: str, timeout: float = 5.0) -> None:
    """SIGKILL every process in ``path`` (``cgroup.kill``, or one by one before Linux 5.14)
    and wait until none is left."""
    deadline = time.monotonic() + timeout
    try:
        with open(os.path.join(path, "cgroup.kill"), "w") as fh:
            fh.write("1")
    except OSError:
        pass
    while time.monotonic() < deadline:
        pids = cgroup_pids(path)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        time.sleep(0.002)


def remove_cgroup(path: str) -> None:
    kill_cgroup(path)
    for _ in range(200):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.005)


def survivors(worker: int, top: int, cgroup: str | None, uid: int | None) -> list[int]:
    """Processes of the worker's sandbox other than the worker itself and the sandbox's own
    processes above it (bwrap, its init, the zygote): what the submission started and left
    running. Read from the cgroup where there is one, else from the tree under ``top`` and
    the worker's own ``uid``."""
    above = set()
    pid = worker
    for _ in range(64):
        st = _stat(pid)
        if st is None or pid == top:
            break
        pid = st[0]
        above.add(pid)
    above.add(top)
    if cgroup is not None:
        pids = cgroup_pids(cgroup)
    else:
        pids = tree(top) + (_kin(worker, uid) if uid is not None else [])
    out = []
    for p in pids:
        if p == worker or p in above:
            continue
        st = _stat(p)
        if st is not None and _state(p) != "Z":
            out.append(p)
    return out


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
        return data[data.rindex(b")") + 2:].split()[0].decode()
    except (OSError, ValueError, IndexError):
        return "?"


@dataclass
class CgroupMeter:
    """CPU seconds of a whole sandbox since ``start``: its cgroup's ``usage_usec``. Nothing
    the submission starts can leave the cgroup (it cannot see or write cgroupfs), so a
    double fork, an orphan or a reaped child is counted like the worker itself."""

    path: str
    begin: float = 0.0
    last: float = 0.0
    over: bool = False

    def start(self) -> "CgroupMeter":
        self.begin = self.last = cgroup_usage(self.path)
        return self

    def seconds(self, scan: bool = True) -> float:
        try:   # once the sandbox is gone, the last reading stands
            self.last = max(self.last, cgroup_usage(self.path))
        except OSError:
            pass
        return self.last - self.begin

    def watch(self, budget: float | None = None) -> Callable[[], str | None]:
        def check() -> str | None:
            if budget is None:
                return None
            if self.seconds() > budget:
                self.over = True
                return (f"the call used more than its CPU budget of {budget:.3f} s "
                        "(measured from outside the worker): the worker was stopped")
            return None
        return check
