"""GPU measurements for the hardware-backed katas: fixtures, timing, the recorder.

- ``fixtures``: the schema of ``hardware_fixtures/*.json`` and its validator; ``find``.
- ``timing``: the measurement protocol (warm-up, L2 flush, repetitions, median), written
  against a small backend interface so that the CPU suite tests it with a fake clock.
- ``kernels``: the workloads timed (a Triton split-KV decode, a bf16 GEMM).
- ``sweeps``: which shapes each recording covers.
- ``live``: timings on the GPU present, for tests that grade against the live device.
- ``record``: ``nox -s record -- NAME`` writes a ``measured`` fixture.
torch and triton are imported lazily, only where a GPU is used.
"""
