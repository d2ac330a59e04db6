"""Hypothesis building blocks for the hidden token_bucket tests.

Rates and times are chosen so that float rounding matters (1/3, 0.7, times far from 0),
sizes land next to the current balance and next to capacity, and time steps are tiny
(many small refills), zero (several calls at one instant) or large (the bucket fills up).
"""

from __future__ import annotations

from hypothesis import strategies as st

CAPACITIES = st.sampled_from([1, 3, 10, 64, 100, 1000, 99_991])
RATES = st.sampled_from([0.1, 0.3, 1 / 3, 0.7, 1.0, 2.9, 10 / 7, 64.0, 123.456, 1e4 / 3])
STARTS = st.sampled_from([0.0, 0.1, 7.3, 1000.1, 12345.678])
IDS = ["a", "b", "c", "d", ""]
ID = st.sampled_from(IDS)

# Seconds between calls: zero, tiny, awkward fractions, and long enough to fill up.
DT = st.one_of(
    st.sampled_from([0.0, 0.0, 1e-7, 1e-3, 0.1, 0.2, 1 / 3, 0.7, 2.5]),
    st.floats(0, 4, allow_nan=False),
    st.sampled_from([60.0, 1000.0]),
)
BACK = st.sampled_from([1e-6, 0.05, 0.5, 3.0, 1e4])

# How a request's need is chosen: next to the balance, at capacity, or a fraction of it.
NEED_KIND = st.sampled_from(["balance-1", "balance", "balance+1", "balance+2", "capacity",
                             "fraction"])


def pick_need(kind: str, balance: float, capacity: int, fraction: float) -> int:
    if kind == "capacity":
        need = capacity
    elif kind == "fraction":
        need = round(fraction * capacity)
    else:
        offset = {"balance-1": -1, "balance": 0, "balance+1": 1, "balance+2": 2}[kind]
        need = int(balance) + offset
    return max(0, min(capacity, need))


def split(need: int, share: float) -> tuple[int, int]:
    """(prompt, max_new) adding up to need."""
    prompt = round(need * share)
    return prompt, need - prompt
