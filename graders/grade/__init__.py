"""The grade engine: run a kata's public and hidden tests against one implementation in a
trusted pytest, survive and resume it whatever the submission does, score each rubric
item, and write the reports.

    run.py        run(): start, watch and resume the trusted pytest; isolation_env()
    channel.py    Channel: the progress pipe's protocol, checked event by event
    model.py      Grade, TestResult, ItemResult, GradeError: what a grade is
    scoring.py    score(): rubric items from test outcomes
    report.py     the terminal table, results.json (Gradescope), junit.xml
    warm.py       the trusted fork server of test processes (pytest already imported)
    __main__.py   python -m graders.grade / nox -s grade (and folders of submissions, through
                  graders.batch)

Importers use the names below; the modules are the package's own business.
"""

from __future__ import annotations

from graders.grade.model import (LOAD_POINTER, MESSAGE_CHARS, MISSING_POINTER, NOT_IMPLEMENTED,
                                 Grade, GradeError, ItemResult, TestResult, items_that_differ)
from graders.grade.report import (DETAIL_LINES, HIDDEN_DETAILS, HIDDEN_VISIBILITIES,
                                  failure_details, hidden_failure, item_note, junit_xml,
                                  results_json, status_label, table, write_reports)
from graders.grade.run import GRACE_S, PER_TEST_TIMEOUT_S, isolation_env, run
from graders.grade.scoring import safe_text, score

__all__ = ["DETAIL_LINES", "GRACE_S", "HIDDEN_DETAILS", "HIDDEN_VISIBILITIES", "LOAD_POINTER",
           "MESSAGE_CHARS", "MISSING_POINTER", "NOT_IMPLEMENTED", "PER_TEST_TIMEOUT_S", "Grade",
           "GradeError", "ItemResult", "TestResult", "failure_details", "hidden_failure",
           "isolation_env", "item_note", "items_that_differ", "junit_xml", "results_json", "run",
           "safe_text", "score", "status_label", "table", "write_reports"]
