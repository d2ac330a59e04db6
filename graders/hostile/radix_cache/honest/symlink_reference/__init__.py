"""A folder submission whose implementation is the candidate's own, unfinished (the stub).

Honest: 0
"""
from .impl import *  # noqa: F401,F403
