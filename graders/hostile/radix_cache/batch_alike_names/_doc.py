"""A batch whose entry names collide with each other's reports and with the batch's own
outputs: alice.py (a correct solution) beside alice/ (an empty one), summary.csv.py,
errors.py (a summary column's name) and prefix_match.py (a rubric item's name).

Attack: Names entries so that one overwrites another's report (alice/ vs alice.py) or the batch's summary (summary.csv.py), or duplicates a summary column (errors, prefix_match).
Class: batch
Targets: edge_split
Stopped by: each entry's reports go to a folder named by its whole entry name, rubric
columns are named rubric.<item>, summary.csv is written apart from every report folder;
names that would still collide are refused before grading.
"""
