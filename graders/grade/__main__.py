"""Grade one implementation of one kata: public + hidden tests, a score per rubric item.

    python -m graders.grade NAME [--impl katas|solutions|PATH] [--out DIR] [--seed N]

The command line of a grade (nox -s grade): one implementation, or a folder of submissions
(graders/batch.py). Grading is deterministic: Hypothesis is derandomized (or seeded with
--seed) and tests run in a fixed order, so the same submission gets the same score every
time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graders import catalog, launch
from graders.grade.model import GradeError
from graders.grade.report import HIDDEN_DETAILS, HIDDEN_VISIBILITIES, table, write_reports
from graders.grade.run import PER_TEST_TIMEOUT_S, isolation_env, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nox -s grade --", description=__doc__.split("\n")[0])
    parser.add_argument("kata", help="kata name (nox -s list shows them)")
    parser.add_argument("--impl", default="katas",
                        help="katas (default), solutions, mutant:NAME (one of the kata's "
                             "known-wrong solutions), or a submission file/folder")
    parser.add_argument("--out", type=Path, default=None,
                        help="write results.json and junit.xml here")
    parser.add_argument("--seed", type=int, default=None,
                        help="hypothesis seed (default: derandomized)")
    parser.add_argument("--rubric", default=None,
                        help="grade only this rubric item (or several: a,b,c)")
    parser.add_argument("--timeout", type=float, default=PER_TEST_TIMEOUT_S,
                        help="seconds per test (default %(default)s)")
    parser.add_argument("--in-process", action="store_true",
                        help="run the submission inside the test process (faster, unsafe "
                             "for untrusted code; the default isolates it in a worker)")
    parser.add_argument("--require-isolation", action="store_true",
                        help="fail (exit 2) rather than run the submission with less than "
                             "bubblewrap or the root namespaces around it")
    parser.add_argument("--profile", default=None, choices=launch.GRADE_PROFILES,
                        help="hypothesis profile (default: grade, or grade_seeded with --seed)")
    parser.add_argument("--fail-under", type=float, default=None,
                        help="exit 1 when the score is below this")
    parser.add_argument("--jobs", type=int, default=1,
                        help="a folder of submissions: grade N at a time")
    parser.add_argument("--shard", default=None, metavar="I/K",
                        help="a folder of submissions: grade only shard I of K, I counting "
                             "from 0 (0/4, 1/4, 2/4, 3/4 cover a folder)")
    parser.add_argument("--hidden-visibility", default="hidden", choices=HIDDEN_VISIBILITIES,
                        help="results.json visibility of the hidden tests' own entries "
                             "(default hidden; after_published shows them to a candidate "
                             "once grades are published)")
    parser.add_argument("--hidden-detail", default="rules", choices=HIDDEN_DETAILS,
                        help="what the candidate's view says of an item failed by hidden "
                             "tests alone: rules (default: the labels of the prompt's rules "
                             "they check, never a test's name, input or message) or none")
    args = parser.parse_args(argv)
    from graders import batch

    if batch.is_batch(args.kata, Path(args.impl)) and args.impl not in ("katas", "solutions"):
        try:
            catalog.load(args.kata)
            shard = batch.parse_shard(args.shard)
            isolation_env(not args.in_process, args.require_isolation)
        except (catalog.CatalogError, ValueError, GradeError) as exc:
            print(f"grade: {exc}", file=sys.stderr)
            return 2
        out = args.out or Path("grade-out")
        print(f"grading every submission in {args.impl} ({args.jobs} at a time)")
        try:
            rows = batch.grade_folder(args.kata, Path(args.impl), out, args.jobs, shard,
                                      seed=args.seed, per_test_timeout=args.timeout,
                                      isolate=not args.in_process,
                                      hidden_visibility=args.hidden_visibility,
                                      rubric=args.rubric,
                                      require_isolation=args.require_isolation,
                                      profile=args.profile,
                                      hidden_detail=args.hidden_detail)
        except batch.BatchError as exc:
            print(f"grade: {exc}", file=sys.stderr)
            return 2
        print(f"\n  {len(rows)} submissions; summary: {out / 'summary.csv'}")
        return 0
    try:
        grade = run(args.kata, args.impl, seed=args.seed, rubric=args.rubric,
                    profile=args.profile,
                    per_test_timeout=args.timeout, isolate=not args.in_process,
                    require_isolation=args.require_isolation)
    except (catalog.CatalogError, GradeError) as exc:
        print(f"grade: {exc}", file=sys.stderr)
        return 2
    grade.hidden_detail = args.hidden_detail
    print(table(grade))
    if args.out:
        write_reports(grade, args.out, args.hidden_visibility)
        print(f"\n  reports: {args.out / 'results.json'}, {args.out / 'junit.xml'}")
    if args.fail_under is not None and grade.score < args.fail_under:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
