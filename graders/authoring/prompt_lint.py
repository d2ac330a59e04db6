"""Prompt lint: every rule of a prompt is cited by a test, and its hints are kata.toml's.

Rules. A kata's ``kata.toml`` names the prompt's rule sections by heading text::

    rule_sections = ["Rules", "Errors"]

Inside a rule section each rule opens a paragraph or a list item with a bold label that
ends in a period, ``**Time never runs backwards.** The bucket's clock ...``; everything up to
the next label or heading belongs to that rule. Text before a section's first label is an
unlabelled rule, and an error. A test cites a rule with a line in its docstring (the test
function's, or a class's in a test file: stateful machines)::

    Rule: Time never runs backwards
    Rules: Reserve; Refund

or, for a label of two words or more, by its name holding the label's slug
(``test_time_never_runs_backwards``; a one-word label is too common a word). Every rule
must be cited by a public or hidden test, and every citation must name a rule.

Hints. The prompt's hints are the folded blocks ``<details><summary>Hint N</summary>``, one
per hint, in kata.toml's order and words (whitespace aside): interview mode reveals
kata.toml's list one at a time, and a candidate reading the prompt sees the same list.
``python -m graders.authoring.prompt_lint --write-hints NAME`` rewrites the prompt's blocks from
kata.toml.

Real engines. The prompt's last ``##`` section is ``## Real engines``: the production code the
kata is drawn from and, point by point, where the kata's rule matches it and where it differs.
It cites at least one file or doc: a path with a ``/`` and a file extension
(``vllm/v1/core/sched/scheduler.py``) or a URL.

Read-only inputs. A kata with ``read_only_inputs = true`` hands every argument over
read-only (graders/wire.py: lists and dicts as subclasses that refuse changes, arrays that
cannot be written), so the prompt must say so in words that hold the phrase "read-only": a
candidate whose in-place sort raises, or whose ``type(x) is list`` check refuses a frozen
list, must have been told.

    python -m graders.authoring.prompt_lint [NAME ...]          report problems (exit 1 if any)
    python -m graders.authoring.prompt_lint --write-hints NAME  regenerate the prompt's hint blocks
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from graders import catalog

HIDDEN_DIR = catalog.HIDDEN_TESTS_DIR
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
# a paragraph or list item that opens with a bold label ending in a period
LABEL = re.compile(r"^(?:[-*]\s+|\d+\.\s+)?\*\*([^*\n]+?)\.\*\*")
CITE = re.compile(r"^\s*Rules?:\s*(.+?)\s*$", re.MULTILINE)
HINT_BLOCK = re.compile(
    r"<details>\s*<summary>\s*Hint[^<]*</summary>(.*?)</details>", re.DOTALL)
WRAP = 92
REAL_ENGINES = "Real engines"
# a file path with at least one '/' and an extension, or a URL
SOURCE = re.compile(r"https?://[^\s)>`]+|[\w.-]+(?:/[\w.-]+)*/[\w-]+\.[A-Za-z][A-Za-z0-9]*")


@dataclass
class Rule:
    label: str
    section: str
    line: int

    @property
    def slug(self) -> str:
        return slug(self.label)


@dataclass
class Report:
    kata: str
    rules: list[Rule] = field(default_factory=list)
    cited: dict[str, list[str]] = field(default_factory=dict)   # slug -> citing tests
    problems: list[str] = field(default_factory=list)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _norm(text: str) -> str:
    return " ".join(text.split())


def rule_sections(kata: catalog.Kata) -> list[str]:
    sections = kata.raw.get("rule_sections")
    if not isinstance(sections, list) or not sections or \
            not all(isinstance(s, str) and s.strip() for s in sections):
        raise catalog.CatalogError(
            f"{kata.folder / 'kata.toml'}: 'rule_sections' must be a non-empty list of the "
            "prompt's rule headings (top level, before the first [[rubric]])")
    return sections


def parse_rules(kata: catalog.Kata) -> tuple[list[Rule], list[str]]:
    """The labelled rules of the prompt's rule sections, and what is wrong with them."""
    return parse_rules_text(kata.prompt_path.read_text(encoding="utf-8"), rule_sections(kata))


def parse_rules_text(prompt: str, sections: list[str]) -> tuple[list[Rule], list[str]]:
    wanted = {_norm(s).lower(): s for s in sections}
    lines = prompt.splitlines()
    rules: list[Rule] = []
    problems: list[str] = []
    found: set[str] = set()
    section: str | None = None
    level = 0
    labelled = False
    in_code = False
    prev_blank = True
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            prev_blank = False
            continue
        if in_code:
            continue
        head = HEADING.match(line)
        if head:
            depth, text = len(head.group(1)), _norm(head.group(2)).lower()
            if section is not None and depth <= level:
                section = None
            if text in wanted:
                section, level, labelled = wanted[text], depth, False
                found.add(text)
            prev_blank = True
            continue
        if section is None:
            prev_blank = not line.strip()
            continue
        if not line.strip():
            prev_blank = True
            continue
        label = LABEL.match(line.strip())
        starts_block = prev_blank or bool(re.match(r"^(?:[-*]|\d+\.)\s", line))
        if label and starts_block:
            rules.append(Rule(_norm(label.group(1)), section, number))
            labelled = True
        elif not labelled:
            problems.append(f"README.md:{number}: section {section!r}: text before the "
                            f"first rule label (start a rule with **Label.**): {line.strip()[:70]!r}")
            labelled = True  # one report per section
        prev_blank = False
    for text, name in wanted.items():
        if text not in found:
            problems.append(f"kata.toml names rule section {name!r}, which the prompt lacks")
    seen: dict[str, Rule] = {}
    for rule in rules:
        if rule.slug in seen:
            problems.append(f"README.md:{rule.line}: rule label {rule.label!r} appears twice "
                            f"(first at line {seen[rule.slug].line})")
        seen.setdefault(rule.slug, rule)
    if not rules:
        problems.append("the prompt's rule sections hold no labelled rule")
    return rules, problems


def test_files(name: str) -> list[Path]:
    out: list[Path] = []
    for folder in (catalog.PUBLIC_TESTS_DIR / name, HIDDEN_DIR / name):
        if folder.is_dir():
            out += sorted(folder.rglob("test_*.py"))
    return out


def citations(name: str) -> list[tuple[str, str, str]]:
    """(test, cited label or name, how) for every citation in the kata's test files."""
    out: list[tuple[str, str, str]] = []
    for path in test_files(name):
        out += citations_in(path.read_text(encoding="utf-8"),
                            str(path.relative_to(catalog.ROOT)))
    return out


def citations_in(source: str, rel: str) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for node in ast.walk(ast.parse(source, rel)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        where = f"{rel}::{node.name}"
        for match in CITE.finditer(ast.get_docstring(node) or ""):
            for label in match.group(1).split(";"):
                label = _norm(label).rstrip(".")
                if label:
                    out.append((where, label, "docstring"))
        if node.name.startswith("test_"):
            out.append((where, node.name[len("test_"):], "name"))
    return out


def check_rules(kata: catalog.Kata) -> Report:
    report = Report(kata.name)
    try:
        report.rules, report.problems = parse_rules(kata)
    except catalog.CatalogError as exc:
        report.problems.append(str(exc))
        return report
    return match_citations(report, citations(kata.name))


def match_citations(report: Report, cites: list[tuple[str, str, str]]) -> Report:
    """Record which tests cite which rule; a rule nobody cites, or a citation of no rule,
    is a problem."""
    by_slug = {r.slug: r for r in report.rules}
    for where, label, how in cites:
        if how == "docstring":
            if slug(label) not in by_slug:
                report.problems.append(f"{where} cites rule {label!r}, which the prompt's rule "
                                       f"sections do not have (rules: "
                                       f"{', '.join(r.label for r in report.rules)})")
                continue
            report.cited.setdefault(slug(label), []).append(where)
        else:
            for s in by_slug:   # by name only for labels of two words or more
                if "_" in s and f"_{s}_" in f"_{label}_":
                    report.cited.setdefault(s, []).append(where)
    for rule in report.rules:
        if rule.slug not in report.cited:
            report.problems.append(
                f"README.md:{rule.line}: rule {rule.label!r} ({rule.section}) is cited by no "
                f"test (add 'Rule: {rule.label}' to the docstring of a test that checks it)")
    return report


def readme_hints(kata: catalog.Kata) -> list[str]:
    text = kata.prompt_path.read_text(encoding="utf-8")
    return [_norm(m.group(1)) for m in HINT_BLOCK.finditer(text)]


def check_hints(kata: catalog.Kata) -> list[str]:
    mine = readme_hints(kata)
    theirs = [_norm(h) for h in kata.hints]
    if mine == theirs:
        return []
    problems = [f"the prompt's hints ({len(mine)}) differ from kata.toml's ({len(theirs)}); "
                f"edit kata.toml and run python -m graders.authoring.prompt_lint --write-hints {kata.name}"]
    for i, (a, b) in enumerate(zip(mine, theirs), 1):
        if a != b:
            problems.append(f"  hint {i}: prompt {a[:60]!r} vs kata.toml {b[:60]!r}")
    return problems


def hint_blocks(hints: tuple[str, ...] | list[str]) -> str:
    blocks = []
    for i, hint in enumerate(hints, 1):
        body = textwrap.fill(_norm(hint), WRAP, break_long_words=False, break_on_hyphens=False)
        blocks.append(f"<details><summary>Hint {i}</summary>\n\n{body}\n</details>")
    return "\n\n".join(blocks)


def write_hints(kata: catalog.Kata) -> None:
    """Replace the prompt's hint blocks (from the first to the last) with kata.toml's."""
    text = kata.prompt_path.read_text(encoding="utf-8")
    spans = [m.span() for m in HINT_BLOCK.finditer(text)]
    new = hint_blocks(kata.hints)
    if spans:
        text = text[:spans[0][0]] + new + text[spans[-1][1]:]
    else:
        closing = re.search(rf"^## {REAL_ENGINES}\s*$", text, re.MULTILINE)
        if closing:   # the Real engines section stays last
            text = (text[:closing.start()] + "## Hints\n\n" + new + "\n\n"
                    + text[closing.start():])
        else:
            text = text.rstrip("\n") + "\n\n## Hints\n\n" + new + "\n"
    kata.prompt_path.write_text(text, encoding="utf-8")


def real_engines_problems(prompt: str) -> list[str]:
    """What is wrong with the prompt's closing ``## Real engines`` section."""
    heads: list[tuple[int, str]] = []
    in_code = False
    lines = prompt.splitlines()
    for number, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        head = HEADING.match(line)
        if head and not in_code and len(head.group(1)) == 2:
            heads.append((number, _norm(head.group(2))))
    if not heads or heads[-1][1].lower() != REAL_ENGINES.lower():
        last = heads[-1][1] if heads else "none"
        return [f"the prompt must end with a '## {REAL_ENGINES}' section naming the production "
                f"code the kata is drawn from (its last ## section is {last!r})"]
    body = "\n".join(lines[heads[-1][0] + 1:])
    if not SOURCE.search(body):
        return [f"the '## {REAL_ENGINES}' section cites no file or doc (a path like "
                "`vllm/v1/core/sched/scheduler.py`, or a URL)"]
    return []


def read_only_problems(kata: catalog.Kata, prompt: str) -> list[str]:
    """A kata that hands its arguments over read-only must say so in its prompt."""
    if kata.read_only_inputs and "read-only" not in prompt.lower():
        return ["kata.toml sets read_only_inputs: the prompt must say that the arguments "
                "arrive read-only (lists and dicts that refuse changes: test them with "
                "isinstance; arrays that cannot be written)"]
    return []


def lint(name: str) -> list[str]:
    kata = catalog.load(name)
    prompt = kata.prompt_path.read_text(encoding="utf-8")
    return (check_rules(kata).problems + check_hints(kata) + real_engines_problems(prompt)
            + read_only_problems(kata, prompt))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.authoring.prompt_lint",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="katas (default: all)")
    parser.add_argument("--write-hints", action="store_true",
                        help="rewrite each named prompt's hint blocks from kata.toml")
    parser.add_argument("--rules", action="store_true",
                        help="list each rule and the tests that cite it")
    args = parser.parse_args(argv)
    names = args.names or catalog.kata_names()
    bad = 0
    for name in names:
        kata = catalog.load(name)
        if args.write_hints:
            write_hints(kata)
            print(f"{name}: wrote {len(kata.hints)} hint blocks into {kata.prompt_path}")
            continue
        if args.rules:
            report = check_rules(kata)
            for rule in report.rules:
                tests = report.cited.get(rule.slug, [])
                print(f"{name}: {rule.label!r}: {len(tests)} test(s)"
                      + "".join(f"\n    {t}" for t in tests[:4]))
        problems = lint(name)
        bad += bool(problems)
        for p in problems:
            print(f"{name}: {p}")
        if not problems:
            print(f"{name}: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
