"""python -m graders.interview (nox -s interview): a session, the interviewer's view, and the
commands run after a session (mark, grade, summary)."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from pathlib import Path

from graders import catalog
from graders.interview.companion import companion
from graders.interview.marks import record_mark
from graders.interview.record import (EVENTS_FILE, MarkError, SUMMARY_FILE, WORK_DIR, check_name,
                                      is_running, points_text, read_events, read_json,
                                      session_info, write_atomic)
from graders.interview.report import (SUMMARY_COLUMNS, csv_safe, grade_summary, grade_workspace,
                                      summary_rows, total_line, write_report)
from graders.interview.session import run_session


def mark_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="nox -s interview -- mark",
        description="Record the interviewer's mark for an interviewer-graded item of an "
                    "interview (finished or running); the latest mark of an item counts, "
                    "every one is kept; a written report is rewritten.")
    parser.add_argument("folder", type=Path, help="the interview's folder, interviews/KATA-...")
    parser.add_argument("item", help="the rubric item (graded_by = \"interviewer\")")
    parser.add_argument("points", help="from 0 to the item's points")
    parser.add_argument("--note", default="", help="what the candidate said, in a sentence")
    parser.add_argument("--by", default="interviewer", help="who marks (default: interviewer)")
    args = parser.parse_args(argv)
    try:
        mark = record_mark(args.folder, args.item, args.points, args.note, args.by,
                           "after the session")
        info = session_info(args.folder)
        data = read_json(args.folder / "report.json") \
            if (args.folder / "report.json").is_file() else None
    except (MarkError, OSError, ValueError) as exc:
        print(f"interview mark: {exc}", file=sys.stderr)
        return 2
    print(f"marked {args.item}: {points_text(mark['points'])}/{mark['max']} by {mark['by']}")
    if data is not None:
        tot = data["totals"]
        print(f"report rewritten: {args.folder / 'report.md'}; total "
              f"{points_text(tot['score'])}/{tot['max_score']}"
              + (f" (not marked yet: {', '.join(tot['unmarked'])})" if tot["unmarked"] else ""))
    elif is_running(args.folder, info):
        print("the session is still running: its report will include the mark")
    else:
        print("the session ended without a report (its process is gone): nox -s interview "
              f"-- grade {args.folder} writes one, with this mark")
    return 0


def grade_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="nox -s interview -- grade",
        description="Grade the workspace of a session that ended without a submission "
                    "(quit, Ctrl-C, a closed terminal, a killed process), or one run in a "
                    "candidate bundle (public tests only there), with the public and hidden "
                    "tests, and write its reports, keeping how it ended, its time and marks.")
    parser.add_argument("folder", type=Path, help="the interview's folder, interviews/KATA-...")
    parser.add_argument("--profile", default=None, choices=("grade", "selftest", "kata"),
                        help="Hypothesis profile (default: the session's own)")
    args = parser.parse_args(argv)
    from graders import grade

    folder = args.folder
    try:
        info = session_info(folder)
        catalog.load(info["kata"])
        old = read_json(folder / "report.json") if (folder / "report.json").is_file() \
            else None
    except (MarkError, catalog.CatalogError, OSError, ValueError) as exc:
        print(f"interview grade: {exc}", file=sys.stderr)
        return 2
    if old is None and is_running(folder, info):
        print(f"interview grade: the session is still running (process {info.get('pid')}): "
              "it is graded when the candidate submits", file=sys.stderr)
        return 2
    if old is not None and old.get("grade") is not None \
            and not old["grade"].get("public_only"):
        print(f"interview grade: {folder} is graded already ({old['ended']}): "
              f"{total_line(folder)}; nothing changed", file=sys.stderr)
        return 2
    if not catalog.load(info["kata"]).hidden_tests.is_dir():
        print(f"interview grade: the hidden tests of {info['kata']} are not here (a candidate "
              "bundle): grade the session from the full repository", file=sys.stderr)
        return 2
    work = Path(info.get("workspace", folder / WORK_DIR))
    if not work.is_dir() and (folder / WORK_DIR).is_dir():
        work = folder / WORK_DIR       # the session's folder was moved or copied here
    if not work.is_dir():
        print(f"interview grade: the session's workspace {work} is gone", file=sys.stderr)
        return 2
    if old is not None:   # quit, Ctrl-C, end of input; or a bundle's public-only grade
        ended, used = old["ended"], float(old["time_used_s"])
    else:   # the process died before writing anything: its log says how far it got
        events = read_events(folder)
        used = min(max((float(e.get("at", 0)) for e in events), default=0.0),
                   float(info.get("minutes", 0)) * 60)
        ended = "the session's process ended without a report"
    print(f"grading {work} ({info['kata']}, {info.get('candidate', 'candidate')})...",
          flush=True)
    try:
        result, seconds = grade_workspace(info["kata"], work,
                                          args.profile or info.get("profile", "grade"))
    except grade.GradeError as exc:
        print(f"interview grade: grading failed: {exc}", file=sys.stderr)
        return 2
    print(grade.table(result))
    summary = grade_summary(result)
    with open(folder / EVENTS_FILE, "a", encoding="utf-8") as f:   # for a view following it
        f.write(json.dumps({"event": "graded", "at": round(used, 2), "afterwards": True,
                            "summary": summary, "score": result.score,
                            "max_score": result.max_score}) + "\n")
    write_report(folder, f"{ended}; graded afterwards", used, summary, seconds)
    print(f"\nreport: {folder / 'report.md'}; {total_line(folder)}")
    return 0


def summary_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="nox -s interview -- summary",
        description="One table over every session in a folder (default interviews/), and "
                    "the same as CSV in DIR/summary.csv.")
    parser.add_argument("folder", type=Path, nargs="?", default=catalog.ROOT / "interviews")
    parser.add_argument("--csv", type=Path, default=None,
                        help="where to write the CSV (default: FOLDER/summary.csv)")
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        print(f"interview summary: {args.folder} is not a folder", file=sys.stderr)
        return 2
    rows = summary_rows(args.folder)
    if not rows:
        print(f"interview summary: no sessions in {args.folder}", file=sys.stderr)
        return 2
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in SUMMARY_COLUMNS}
    print("  ".join(c.ljust(widths[c]) for c in SUMMARY_COLUMNS).rstrip())
    print("  ".join("-" * widths[c] for c in SUMMARY_COLUMNS))
    for r in rows:
        print("  ".join(r[c].ljust(widths[c]) for c in SUMMARY_COLUMNS).rstrip())
    path = args.csv or args.folder / SUMMARY_FILE
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(SUMMARY_COLUMNS))
    writer.writeheader()
    for r in rows:
        writer.writerow({k: csv_safe(v) for k, v in r.items()})
    write_atomic(path, buffer.getvalue())
    print(f"\n{len(rows)} sessions; CSV: {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"mark": mark_main, "grade": grade_main, "summary": summary_main}
    if argv and argv[0] in commands:
        return commands[argv[0]](argv[1:])
    parser = argparse.ArgumentParser(
        prog="nox -s interview --",
        epilog="afterwards: mark DIR ITEM POINTS [--note T] [--by NAME]; grade DIR (a session "
               "that ended without a submission); summary [DIR] (a table and CSV over all "
               "sessions). docs/INTERVIEW.md is the guide.")
    parser.add_argument("kata")
    parser.add_argument("--candidate", default="candidate",
                        help="the candidate's name: it names the session's folder and reports")
    parser.add_argument("--minutes", type=float, default=None)
    parser.add_argument("--no-hints", action="store_true")
    parser.add_argument("--interviewer", action="store_true",
                        help="the interviewer's view (never show it to the candidate): the "
                             "notes, then the candidate's live session, and marks")
    parser.add_argument("--by", default="interviewer",
                        help="with --interviewer: your name, on your marks and in the report")
    parser.add_argument("--session", type=Path, default=None,
                        help="with --interviewer: the session folder to follow (default: "
                             "the newest running one of this kata under --out, or the next)")
    parser.add_argument("--impl", default=None,
                        help="the folder the candidate edits (default: a fresh workspace in "
                             "the session's folder; 'katas' for katas/NAME); it must hold "
                             "the stub or nothing")
    parser.add_argument("--out", type=Path, default=catalog.ROOT / "interviews")
    parser.add_argument("--profile", default=None, choices=("grade", "selftest", "kata"),
                        help="Hypothesis profile of the final grade: grade (150 examples, "
                             "as hiring teams grade; the default), selftest (60) or kata (25)")
    args = parser.parse_args(argv)
    try:
        kata = catalog.load(args.kata)
    except catalog.CatalogError as exc:
        print(f"interview: {exc}", file=sys.stderr)
        return 2
    if args.minutes is not None and not (math.isfinite(args.minutes) and args.minutes > 0):
        print("interview: --minutes must be a positive number", file=sys.stderr)
        return 2
    if args.interviewer:
        misplaced = [flag for flag, given in (
            ("--minutes", args.minutes is not None), ("--no-hints", args.no_hints),
            ("--impl", args.impl is not None), ("--profile", args.profile is not None),
            ("--candidate", args.candidate != "candidate")) if given]
        if misplaced:
            print(f"interview: {', '.join(misplaced)} set the candidate's session: give them "
                  f"on the candidate's command (nox -s interview -- {kata.name} "
                  f"{' '.join(misplaced)} ...); --interviewer follows that session as it is",
                  file=sys.stderr)
            return 2
        try:
            by = check_name(args.by, "--by")
        except ValueError as exc:
            print(f"interview: {exc}", file=sys.stderr)
            return 2
        if args.session is not None:
            try:
                followed = session_info(args.session).get("kata")
            except MarkError as exc:
                print(f"interview: {exc}", file=sys.stderr)
                return 2
            if followed != kata.name:
                print(f"interview: {args.session} is a session of {followed!r}, not of "
                      f"{kata.name!r}", file=sys.stderr)
                return 2
        return companion(kata, args.out, args.session, by)
    for flag, given in (("--session", args.session is not None),
                        ("--by", args.by != "interviewer")):
        if given:
            print(f"interview: {flag} goes with --interviewer", file=sys.stderr)
            return 2
    return run_session(kata, args)


if __name__ == "__main__":
    sys.exit(main())
