"""The bench (``nox -s bench``): each kata's reference against a production engine's
approach and the physical floor, as ratios measured in one run (graders/bench/run.py)."""
