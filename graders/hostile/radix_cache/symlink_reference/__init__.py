"""A folder submission whose implementation is a symbolic link to the reference.

Attack: impl.py is a symbolic link to solutions/radix_cache.py, so a copy that follows links grades the reference as the candidate's work.
Class: links
Honest: 0
Stopped by: the copy opens every entry with O_NOFOLLOW and refuses links; every test fails
with a message that names the link.
"""
from .impl import *  # noqa: F401,F403
