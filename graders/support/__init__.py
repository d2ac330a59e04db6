"""Support code shared by a kata's stub and its tests (plain, module-level functions).

Katas that take a function (a hash function, ...) take one of these, so that tests never
pass their own callbacks into a submission.
"""
