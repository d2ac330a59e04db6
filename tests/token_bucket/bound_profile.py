"""A pytest plugin for running a bound test in a subprocess (``-p`` this module).

For each of the harness's Hypothesis profiles it registers ``bound_<profile>``: the same
examples without the shrink phase. Shrinking only makes a failing example smaller; whether
the file passes or fails is the same, and skipping it keeps a run against a broken bucket
short. ``grade_seeded`` maps to ``bound_grade`` (the seed is not passed on).
"""

from __future__ import annotations

import os

from hypothesis import Phase, settings

import graders.plugin  # noqa: F401 - registers the harness's profiles first

for _name in ("kata", "selftest", "grade"):
    settings.register_profile(
        f"bound_{_name}",
        settings.get_profile(_name),
        phases=[Phase.explicit, Phase.generate, Phase.target],
    )


def profile_for(parent: str | None) -> str:
    """The subprocess profile for a parent run under ``parent`` (None: the parent's default)."""
    if parent is None:
        parent = os.environ.get("KATA_HYPOTHESIS_PROFILE", "kata")
    if parent in ("kata", "selftest", "grade"):
        return f"bound_{parent}"
    return "bound_grade"
