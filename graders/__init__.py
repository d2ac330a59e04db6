"""The harness: everything that runs, grades and packages the katas. A map in one screen.

Layers, bottom first; a module imports only from the layers before it
(selftest/test_architecture.py enforces it, docs/ARCHITECTURE.md draws it):

  0  catalog.py          kata.toml -> Kata, RubricItem; every folder constant; what a stub is
     launch.py           how a kata's pytest is launched: profiles, plugins, argv, env
     wire.py, worker.py  the plain-data wire, and the only process that runs submission code
     measure.py          a worker's CPU time and memory, read from the kernel (/proc)
     support/            code a kata's stub, tests and reference share (ships to the worker)
     hardware/           fixture schema, timing protocol, sweeps, the GPU recorder
  1  sandbox             isolation: bubblewrap | namespaces | limits, the worker, the proxy
  2  impl.py             how tests reach an implementation (kata_impl, measured_call, ...)
     plugin.py           the pytest plugin every kata run loads: rubric marks, progress
     candidate_tests.py  running a test file the candidate wrote, in the sandbox
     outside.py          sockets in a worker's network namespace
  3  grade/              the grade engine: run, channel, scoring, reports, the warm server
  4  grade/__main__.py   python -m graders.grade (nox -s grade)
     batch.py            a folder of submissions, shards, summary.csv
     cli.py              nox -s kata | list; typecheck.py: nox -s typecheck
     interview/          the mock interview (nox -s interview)
  5  packaging/          what hiring teams deploy: the candidate bundle, the Gradescope zip
     authoring/          maintainers' tools: mutants, the mutant runner, the prompt lint
     bench/              the references beside production engines (nox -s bench)

The trust boundary: everything here is trusted except what worker.py loads. The trusted
pytest never imports submission code; it talks to the worker through sandbox's proxy over
wire.py, and a grade is made only from what it observes from outside the worker.

Per-kata content lives beside the harness, not in it: hidden/NAME (hidden tests),
mutants/NAME (known-wrong solutions as patches), alternatives/NAME (independent correct
solutions), hostile/NAME (attacks on the grader, each beside its honest twin).

What ships to a candidate: packaging/bundle.py's HARNESS (modules, and packages whole);
authoring/ and packaging/ never do. The public surface kata content may import:
graders.impl, graders.support, graders.catalog, graders.measure, graders.outside,
graders.candidate_tests, graders.hardware.
"""
