"""``python -m graders.bench``: see graders/bench/run.py."""

from graders.bench.run import main

raise SystemExit(main())
