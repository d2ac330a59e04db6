"""Evidence taken from outside the implementation's process (issue 14, part 4).

- graders/measure.py counts the CPU of a worker's whole process tree from the kernel,
  including a grandchild that was orphaned and a child that was reaped during the call;
- graders/wire.py decodes a read-only kata's arguments as buffers the implementation cannot
  make writeable, and in-process tests get the same (graders.impl);
- graders.impl.measured_call stops a call that runs past its CPU budget from outside.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from graders import impl, measure, wire

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"


def _tree_cpu(script: str) -> float:
    # a session of its own, as a grading worker has (graders/sandbox/)
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)],
                            start_new_session=True)
    meter = measure.Meter(proc.pid).start()
    watch = meter.watch()
    while proc.poll() is None:
        watch()
        time.sleep(0.02)
    return meter.seconds()


BURNER = """
    import os, time

    def burn(seconds):
        t = time.process_time()
        while time.process_time() - t < seconds:
            pass
"""


def test_meter_counts_a_grandchild_orphaned_before_it_was_seen() -> None:
    # the middle process exits at once, so the grandchild is re-parented away from the
    # tree before any scan can see it as a descendant; it still belongs to the session
    used = _tree_cpu(BURNER + """
    r, w = os.pipe()
    if os.fork() == 0:
        if os.fork() == 0:
            burn(0.4)
            os.write(w, b"x")
            os._exit(0)
        os._exit(0)
    os.wait()
    os.read(r, 1)
    """)
    assert used >= 0.35, f"the grandchild used 0.4 CPU seconds; the meter saw {used:.3f}"


def test_meter_counts_a_child_reaped_during_the_call() -> None:
    used = _tree_cpu(BURNER + """
    if os.fork() == 0:
        burn(0.3)
        os._exit(0)
    os.wait()
    """)
    assert used >= 0.28, f"the child used 0.3 CPU seconds; the meter saw {used:.3f}"


def test_meter_does_not_count_other_processes() -> None:
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.8)"])
    busy = subprocess.Popen([sys.executable, "-c", BURN.format(s=0.5)])
    try:
        meter = measure.Meter(idle.pid).start()
        busy.wait()
        assert meter.seconds() < 0.1
    finally:
        idle.kill()
        idle.wait()


def _read_only(value: object) -> object:
    return wire.decode(wire.encode(value, lambda v: {"$": "h", "id": 0}), lambda d: None,
                       read_only=True)


def test_read_only_arrays_cannot_be_made_writeable() -> None:
    arr = _read_only(np.arange(6.0).reshape(2, 3))
    assert isinstance(arr, np.ndarray)
    with pytest.raises(ValueError, match="read-only"):
        arr[0, 0] = 1.0
    with pytest.raises(ValueError):
        arr.setflags(write=True)
    with pytest.raises(ValueError, match="read-only"):
        np.add(arr, 1.0, out=arr)
    assert np.asarray(arr, dtype=np.float64) is arr     # no hidden copy to write into
    # what the trusted side decodes from replies stays writeable
    back = wire.decode(wire.encode(arr, lambda v: {}), lambda d: None)
    back[0, 0] = 5.0


def test_frozen_lists_and_dicts_refuse_every_mutation_and_copy_plain() -> None:
    data = _read_only({"cfg": {"a": 1}, "lens": [3, 1, 2]})
    assert isinstance(data, dict) and isinstance(data["lens"], list)
    lens, cfg = data["lens"], data["cfg"]
    for mutate in (lambda: lens.sort(), lambda: lens.append(4), lambda: lens.__setitem__(0, 9),
                   lambda: lens.reverse(), lambda: lens.pop(), lambda: cfg.__setitem__("b", 2),
                   lambda: cfg.setdefault("b", 2), lambda: cfg.update(b=2),
                   lambda: cfg.pop("a"), lambda: data.clear()):
        with pytest.raises(TypeError, match="read-only"):
            mutate()
    assert sorted(lens) == [1, 2, 3] and lens == [3, 1, 2] and cfg == {"a": 1}
    plain = copy.deepcopy(data)
    assert type(plain) is dict and type(plain["lens"]) is list
    plain["lens"].sort()
    assert wire.encode(data, lambda v: {}) == wire.encode(
        {"cfg": {"a": 1}, "lens": [3, 1, 2]}, lambda v: {})


def test_in_process_functions_of_a_read_only_kata_get_read_only_arguments() -> None:
    def writes(cfg: dict[str, int], x: np.ndarray) -> None:
        x[0] = 1.0

    def writes_cfg(cfg: dict[str, int], x: np.ndarray) -> None:
        cfg["head_dim"] = 128

    x, cfg = np.zeros(3), {"a": 1}
    with pytest.raises(ValueError, match="read-only"):
        impl._read_only_args("kv_capacity", writes)(cfg, x)
    with pytest.raises(TypeError, match="read-only"):
        impl._read_only_args("kv_capacity", writes_cfg)(cfg, x)
    assert x.flags.writeable and not x.any() and cfg == {"a": 1}
    # a kata without the flag is left alone
    assert impl._read_only_args("radix_cache", writes) is writes


SPIN = '''
import numpy as np


def kept_mask(logits, temperature, top_p, top_k=None):
    x = np.asarray(logits)
    if x.shape[1] > 1000:
        while True:
            pass
    return np.isfinite(x)


def sample(logits, temperature, top_p, u, top_k=None):
    return np.zeros(len(logits), dtype=np.int64)
'''


def test_a_call_past_its_cpu_budget_is_stopped_from_outside(tmp_path: Path) -> None:
    sub = tmp_path / "spin.py"
    sub.write_text(SPIN)
    impl.configure(str(sub), isolate=True)
    try:
        x = np.zeros((1, 4096), dtype=np.float32)
        one = np.ones(1)
        small, _ = impl.measured_call("top_p", None, "kept_mask", x[:, :8], one, one,
                                      check=lambda got: None)
        assert small.shape == (1, 8)
        start = time.monotonic()
        with pytest.raises(impl.OverBudget) as info:
            impl.measured_call("top_p", None, "kept_mask", x, one, one, budget=0.3,
                               check=lambda got: None)
        assert info.value.seconds >= 0.3
        assert time.monotonic() - start < 20, "the budget must stop the call, not the wall limit"
    finally:
        impl.configure("katas")
