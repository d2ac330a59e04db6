# REFERENCE: solutions/radix_cache.py
# selftest/test_hostile.py copies the reference here before grading this case (a copy kept
# in the repository would drift from the reference and duplicate it).
