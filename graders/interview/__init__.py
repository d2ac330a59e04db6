"""Mock interview mode: a timed kata with watch-and-test, hints on request, the
interviewer's marks, and reports a hiring team can compare. docs/INTERVIEW.md is the guide.

    nox -s interview -- NAME [--candidate C] [--minutes M] [--no-hints] [--impl DIR] [--profile P]
    nox -s interview -- NAME --interviewer [--by NAME] [--session DIR]
    nox -s interview -- mark DIR ITEM POINTS [--note TEXT] [--by NAME]
    nox -s interview -- grade DIR          grade a session that ended without a submission
    nox -s interview -- summary [DIR]      one table (and DIR/summary.csv) over all sessions

Candidate view: the prompt, a countdown, the public tests re-run on every save with the
failing items and each one's first public failure line, and commands at the prompt:
hint, test, submit, quit (which asks first). At time-out it submits by itself; Ctrl-C,
a closed terminal or the end of input end the session with a report (not graded: ``grade
DIR`` grades it afterwards).

Each session has a workspace of its own: by default ``<session>/work/``, a fresh copy of the
committed stub (git HEAD, or a bundle's ``graders/stubs/NAME.py``), so no candidate starts on
another's code. ``--impl DIR`` (``katas`` for ``katas/NAME``) edits DIR instead: created from
the stub when absent or empty, refused (naming the files) when it is not the stub.

Interviewer view (--interviewer), for a second terminal the candidate does not see: the
notes (rubric, follow-ups, good answers, hints), then the candidate's live session in the
same --out folder, with a prompt of its own; commands: mark ITEM POINTS [NOTE], marks,
notes, next, quit. Marks come only from here or from ``mark``: the candidate's prompt has no
such command. Every mark is kept with who gave it, when, where, its value and note.

A session's folder, ``interviews/KATA-CANDIDATE-YYYYmmdd-HHMMSS/``, holds session.json
(kata, candidate, settings, the stub), events.jsonl (the live log), marks.json (the marks'
history), work/ (the workspace) and, when it ends, report.md/.html/.json (the hiring
team's copy: hidden tests' first failures, the interviewer's notes and marks) and
candidate-report.md/.html (no hidden-test detail, no interviewer notes).

The package, one concept a module:

    record.py      a session's folder: session.json, events.jsonl, marks.json as read, the lock
    workspace.py   one candidate, one workspace: the committed stub, a fresh copy, the diff
    report.py      the grade as reports keep it, report.md/.html/.json, the candidate's copy,
                   the summary rows across sessions
    marks.py       the interviewer's marks, checked and kept with their history
    session.py     the candidate's session
    companion.py   the interviewer's companion view
    __main__.py    the command line (nox -s interview): session, view, mark, grade, summary
"""

from __future__ import annotations

from graders.interview.record import Session, open_record, write_session_info
from graders.interview.report import grade_summary, markdown_to_html, write_report
from graders.interview.session import interviewer_notes
from graders.interview.workspace import candidate_prompt, prepare_workspace, pristine_stub

__all__ = ["Session", "candidate_prompt", "grade_summary", "interviewer_notes",
           "markdown_to_html", "open_record", "prepare_workspace", "pristine_stub",
           "write_report", "write_session_info"]
