"""A pytest plugin for running a candidate's bound test in a subprocess (``-p`` this module).

It registers ``bound_grade``: the ``grade`` profile (150 examples, derandomized) without
the shrink phase. Shrinking only makes a failing example smaller; whether the file passes
or fails is the same, and skipping it keeps a run against a broken bucket short.
"""

from __future__ import annotations

from hypothesis import Phase, settings

import graders.plugin  # noqa: F401 - registers the grade profile first

settings.register_profile(
    "bound_grade",
    settings.get_profile("grade"),
    phases=[Phase.explicit, Phase.generate, Phase.target],
)
