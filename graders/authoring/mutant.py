"""Mutants: known-wrong solutions kept as small patches against a correct base.

    python -m graders.authoring.mutant list KATA              names, rubric items, bases
    python -m graders.authoring.mutant show KATA NAME         print the built mutant
    python -m graders.authoring.mutant check [KATA...]        every mutant applies, compiles, differs
    python -m graders.authoring.mutant refresh KATA           rewrite stale hunk line numbers
    python -m graders.authoring.mutant convert KATA FILE...   whole-file mutants -> patches

A mutant is ``graders/mutants/<kata>/<name>.patch``: a few header lines, then one unified
diff against its base::

    Bug: finish refunds but never forgets the request, so finishing it again refunds again.
    Rubric: reserve_refund

    --- a/solutions/token_bucket/__init__.py
    +++ b/solutions/token_bucket/__init__.py
    @@ -80,7 +80,7 @@ class TokenBucket:
    ...

Header: an optional ``Blind:`` line first (who wrote the bug without seeing the hidden tests,
and when), then ``Bug:`` (one sentence), then ``Rubric:`` (the item that must catch it; ``*``
means every item), then free notes after a blank line. The base is the file the diff names:
the reference, an alternative in ``graders/alternatives/<kata>/``, or, for a ``*`` mutant
(trivial answers everywhere), the stub.

Application is strict and needs no external tool: each hunk's old lines must stand exactly at
the line its header gives and nowhere else in the base, hunks come in order, and the result
must differ from the base. A mutant that breaks any rule raises ``MutantError`` naming it, so a
stale mutant can never pass silently. ``refresh`` moves hunk headers to where their unchanged
old lines now stand (after an edit elsewhere in the base), and only then.
"""

from __future__ import annotations

import argparse
import ast
import atexit
import difflib
import re
import json
import shutil
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from graders import catalog
from graders.authoring import patches
from graders.authoring.patches import Hunk

SUFFIX = ".patch"
SPEC_PREFIX = "mutant:"
_FIELD = re.compile(r"^(Blind|Bug|Rubric):[ \t]*(.*?)\s*$")
_BLIND_WORDS = re.compile(r"\bblind\b|blind-", re.IGNORECASE)
_BLIND_ASIDE = re.compile(r"\s*\(([^()]*\bblind[^()]*)\)\s*$", re.IGNORECASE)


class MutantError(patches.PatchError):
    """A mutant file is malformed, or does not apply exactly once to its base."""


@dataclass(frozen=True)
class Mutant:
    kata: str
    name: str
    path: Path
    bug: str
    rubric: str
    blind: str | None       # provenance of a blind-written bug, None otherwise
    notes: str
    base: str               # the base's path relative to the repository root
    hunks: tuple[Hunk, ...]

    @property
    def base_path(self) -> Path:
        return catalog.ROOT / self.base


# -- where mutants and their bases live -------------------------------------------------

def folder(kata: str) -> Path:
    return catalog.MUTANTS_DIR / kata


def names(kata: str) -> list[str]:
    """The mutants of ``kata``, sorted."""
    return sorted(p.stem for p in folder(kata).glob(f"*{SUFFIX}"))


# which tests caught each mutant the last time they were recorded (python -m
# graders.authoring.mutantrun KATA --record): the mutant check runs those first. A hint for
# speed only: a stale or missing entry costs time, never a verdict.
CATCHERS = "catchers.json"


def catchers(kata: str) -> dict[str, list[str]]:
    """mutant name -> the nodeids that caught it last time (empty when none are recorded)."""
    path = folder(kata) / CATCHERS
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [str(n) for n in v] for k, v in data.items() if isinstance(v, list)}


def write_catchers(kata: str, found: dict[str, list[str]]) -> Path:
    """Record ``found`` (mutant -> nodeids) for ``kata``, keeping other mutants' entries
    that are still mutants of the kata."""
    have = set(names(kata))
    merged = {k: v for k, v in catchers(kata).items() if k in have}
    merged.update({k: v for k, v in found.items() if k in have and v})
    path = folder(kata) / CATCHERS
    path.write_text(json.dumps(dict(sorted(merged.items())), indent=1) + "\n", encoding="utf-8")
    return path


def path_of(kata: str, name: str) -> Path:
    path = folder(kata) / f"{name}{SUFFIX}"
    if not path.is_file():
        known = ", ".join(names(kata)) or "(none)"
        raise MutantError(f"kata {kata!r} has no mutant {name!r} ({path} does not exist); "
                          f"its mutants: {known}")
    return path


def reference_file(kata: str) -> Path:
    single = catalog.SOLUTIONS_DIR / f"{kata}.py"
    return single if single.is_file() else catalog.SOLUTIONS_DIR / kata / "__init__.py"


def stub_file(kata: str) -> Path:
    return catalog.KATAS_DIR / kata / "__init__.py"


def alternative_files(kata: str) -> list[Path]:
    """Independent correct solutions: single files, or folders (whose __init__.py is the
    implementation)."""
    alt = catalog.ALTERNATIVES_DIR / kata
    files = [p for p in alt.glob("*.py") if p.name != "__init__.py"]
    files += list(alt.glob("*/__init__.py"))
    return sorted(files)


def alternative_specs(kata: str) -> list[str]:
    """The independent correct solutions as ``--impl`` takes them: a file, or a folder."""
    return [str(p.parent if p.name == "__init__.py" else p) for p in alternative_files(kata)]


def suite_alternative_specs(kata: str) -> list[str]:
    """The independent solutions the suite grades (``nox -s deep`` grades them all): those
    written blind (``blind_*``: only the prompt, the stub and the public tests seen), the
    ones that test a prompt's openness; where a kata has none, every one."""
    specs = alternative_specs(kata)
    blind = [s for s in specs if Path(s).name.startswith("blind")]
    return blind or specs


def bases(kata: str) -> list[Path]:
    """The files a mutant of ``kata`` may patch: the reference, then each alternative."""
    return [reference_file(kata), *alternative_files(kata)]


def _rel(path: Path) -> str:
    return path.resolve().relative_to(catalog.ROOT).as_posix()


def _show(path: Path) -> str:
    try:
        return _rel(path)
    except ValueError:
        return str(path)


# -- reading ----------------------------------------------------------------------------

def parse(text: str, kata: str, name: str, path: Path) -> Mutant:
    """Read one mutant file; ``MutantError`` says what is wrong and where."""
    where = f"mutant {kata}/{name} ({_show(path)})"
    try:
        p = patches.parse(text, where, keys=("Blind", "Bug", "Rubric"))
    except patches.PatchError as exc:
        raise MutantError(str(exc)) from None
    fields = p.fields
    expected = (["Blind"] if "Blind" in fields else []) + ["Bug", "Rubric"]
    if list(p.order) != expected:
        raise MutantError(f"{where}: the header must be {': ... / '.join(expected)}: ... "
                          f"(an optional 'Blind:' first), in that order; found {list(p.order)}")
    if name.startswith("blind_") and "Blind" not in fields:
        raise MutantError(f"{where}: a blind_ mutant's first line is 'Blind: <who, when>'")
    allowed = {_rel(b): b for b in bases(kata)}
    if fields["Rubric"] == "*":
        allowed[_rel(stub_file(kata))] = stub_file(kata)
    if p.base not in allowed:
        raise MutantError(f"{where}: base {p.base!r} is neither the reference nor an alternative "
                          f"of {kata!r} (nor the stub, for a '*' mutant); "
                          f"allowed: {sorted(allowed)}")
    return Mutant(kata, name, path, fields["Bug"], fields["Rubric"], fields.get("Blind"),
                  p.notes, p.base, p.hunks)


def load(kata: str, name: str) -> Mutant:
    """The metadata and change of one mutant (not yet applied)."""
    path = path_of(kata, name)
    return parse(path.read_text(encoding="utf-8"), kata, name, path)


# -- applying ---------------------------------------------------------------------------

def _patch(m: Mutant) -> patches.Patch:
    return patches.Patch(f"mutant {m.kata}/{m.name}", m.base, m.hunks)


def _base_lines(m: Mutant) -> list[str]:
    try:
        return patches.base_text(_patch(m))[:-1].split("\n")
    except patches.PatchError as exc:
        raise MutantError(str(exc)) from None


def _locate(m: Mutant, lines: list[str], relocate: bool) -> list[int]:
    """The 0-based index where each hunk's old lines stand; strict unless ``relocate``."""
    try:
        return patches.locate(_patch(m), lines, relocate, _refresh_hint(m))
    except patches.PatchError as exc:
        raise MutantError(str(exc)) from None


def _refresh_hint(m: Mutant) -> str:
    return f"; run `python -m graders.authoring.mutant refresh {m.kata}`"


def build(m: Mutant) -> str:
    """The mutant's source: its base with every hunk applied, strictly."""
    try:
        return patches.build(_patch(m), _refresh_hint(m))
    except patches.PatchError as exc:
        raise MutantError(str(exc)) from None


def materialise(kata: str, name: str, dest: Path) -> Path:
    """Build mutant ``name`` of ``kata`` into the folder ``dest`` (made if missing) and
    return the file: ``dest/<name>.py``, gradable like any submission file."""
    text = build(load(kata, name))
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / f"{name}.py"
    part = dest / f".{name}.py.part"
    part.write_text(text, encoding="utf-8")
    part.replace(out)   # whole or not at all, for a grade reading it at the same time
    return out


_scratch: list[Path] = []


def scratch_file(kata: str, name: str) -> Path:
    """``materialise`` into a folder that lives as long as this process (for
    ``--impl mutant:NAME``)."""
    if not _scratch:
        tmp = Path(tempfile.mkdtemp(prefix="kata-mutants-"))
        atexit.register(shutil.rmtree, tmp, True)
        _scratch.append(tmp)
    return materialise(kata, name, _scratch[0] / kata)


def problems(kata: str) -> list[str]:
    """Everything wrong with the mutants of ``kata`` (empty when all is well): each applies
    strictly, compiles, differs from its base, and no two make the same change."""
    out: list[str] = []
    built: dict[str, str] = {}
    stray = sorted(p.name for p in folder(kata).glob("*") if p.is_file()
                   and p.suffix != SUFFIX and p.name not in ("__init__.py", CATCHERS))
    if stray:
        out.append(f"{kata}: not a mutant patch (convert it: python -m graders.authoring.mutant convert "
                   f"{kata} FILE): {', '.join(stray)}")
    unrecorded = sorted(set(names(kata)) - set(catchers(kata)))
    if unrecorded:
        out.append(f"{kata}: no recorded catcher for {', '.join(unrecorded)} (the suite's "
                   f"mutant check runs it first; record: python -m graders.authoring.mutantrun "
                   f"{kata} --record)")
    for name in names(kata):
        try:
            m = load(kata, name)
            text = build(m)
            compile(text, f"{kata}/{name}.py", "exec")
        except (MutantError, SyntaxError) as exc:
            out.append(str(exc))
            continue
        for other, other_text in built.items():
            if other_text == text:
                out.append(f"mutants {kata}/{other} and {kata}/{name} make the same change")
        built[name] = text
    return out


def refresh(kata: str) -> list[str]:
    """Rewrite the hunk headers of every mutant of ``kata`` whose old lines moved (the base
    changed elsewhere); the lines themselves must still match exactly once. Returns the
    names rewritten."""
    done: list[str] = []
    for name in names(kata):
        m = load(kata, name)
        lines = _base_lines(m)
        starts = _locate(m, lines, relocate=True)
        text = m.path.read_text(encoding="utf-8")
        delta = 0
        for h, at in zip(m.hunks, starts):
            moved = Hunk(at + 1, at + delta + 1, h.section, h.lines)
            delta += len(h.new) - len(h.old)
            if moved.header() != h.header():
                text = text.replace(h.header() + "\n", moved.header() + "\n", 1)
        if text != m.path.read_text(encoding="utf-8"):
            m.path.write_text(text, encoding="utf-8")
            build(load(kata, name))
            done.append(name)
    return done


# -- writing (and converting whole-file mutants) ----------------------------------------

def diff(base: str, base_text: str, new_text: str) -> str:
    """A unified diff of one base file (graders/authoring/patches.py ``diff``)."""
    try:
        return patches.diff(base, base_text, new_text)
    except patches.PatchError as exc:
        raise MutantError(str(exc)) from None


def render(bug: str, rubric: str, base: str, base_text: str, new_text: str,
           blind: str | None = None, notes: str = "") -> str:
    """The text of a mutant file."""
    head = ([f"Blind: {blind}"] if blind else []) + [f"Bug: {bug}", f"Rubric: {rubric}"]
    if notes.strip():
        head += ["", notes.strip()]
    return "\n".join(head) + "\n\n" + diff(base, base_text, new_text)


def _docstring_span(tree: ast.Module) -> tuple[int, int] | None:
    """0-based [start, end) lines of a module docstring."""
    if tree.body and isinstance(tree.body[0], ast.Expr) and \
            isinstance(tree.body[0].value, ast.Constant) and \
            isinstance(tree.body[0].value.value, str):
        node = tree.body[0]
        return node.lineno - 1, (node.end_lineno or node.lineno)
    return None


def _with_docstring_of(source: str, donor: str) -> str:
    """``source`` with its module docstring replaced by ``donor``'s (or removed)."""
    lines = source.split("\n")
    span = _docstring_span(ast.parse(source))
    donor_span = _docstring_span(ast.parse(donor))
    donor_lines = donor.split("\n")[donor_span[0]:donor_span[1]] if donor_span else []
    if span is None:
        return "\n".join(donor_lines + lines)
    return "\n".join(lines[:span[0]] + donor_lines + lines[span[1]:])


@dataclass(frozen=True)
class Header:
    bug: str
    rubric: str
    blind: str | None
    notes: str


def header_of_docstring(doc: str, where: str) -> Header:
    """Split an old whole-file mutant's docstring into the fields of a patch's header."""
    paragraphs: list[list[str]] = [[]]
    for ln in doc.strip().split("\n"):
        if ln.strip():
            paragraphs[-1].append(ln.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    first = paragraphs[0].pop(0)
    bug = first[len("Bug:"):].strip() if first.startswith("Bug:") else first
    rubric = None
    blind: list[str] = []
    aside = _BLIND_ASIDE.search(bug)
    if aside:
        bug, blind = bug[:aside.start()], [aside.group(1)]
    notes: list[str] = []
    for para in paragraphs:
        kept: list[str] = []
        for ln in para:
            if ln.startswith("Rubric:"):
                rubric = ln[len("Rubric:"):].strip()
            else:
                kept.append(ln)
        text = " ".join(kept)
        if not text:
            continue
        if _BLIND_WORDS.search(text) and not blind:
            blind.append(text)
        else:
            notes.append("\n".join(kept))
    if rubric is None:
        raise MutantError(f"{where}: the docstring names no 'Rubric: <item>'")
    return Header(bug, rubric, " ".join(blind) or None, "\n\n".join(notes))


def _function_bodies(source: str) -> dict[str, tuple[int, int, int]]:
    """qualified name -> (0-based first line, end line, indent) of each function's body
    without its docstring."""
    out: dict[str, tuple[int, int, int]] = {}

    def walk(nodes: list[ast.stmt], prefix: str) -> None:
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body
                if len(body) > 1 and isinstance(body[0], ast.Expr) and \
                        isinstance(body[0].value, ast.Constant) and \
                        isinstance(body[0].value.value, str):
                    body = body[1:]
                out[prefix + node.name] = (body[0].lineno - 1, body[-1].end_lineno or 0,
                                           body[0].col_offset)
    walk(ast.parse(source).body, "")
    return out


def trivial_from_stub(stub: str, trivial: str, where: str) -> str:
    """The stub with each ``raise NotImplementedError`` body replaced by the body of the same
    function in ``trivial`` (an old whole-file ``empty`` mutant)."""
    stub_lines = stub.split("\n")
    triv_lines = trivial.split("\n")
    theirs = _function_bodies(trivial)
    edits: list[tuple[int, int, list[str]]] = []
    for qual, (start, end, indent) in _function_bodies(stub).items():
        if "NotImplementedError" not in "\n".join(stub_lines[start:end]):
            continue
        if qual not in theirs:
            raise MutantError(f"{where}: no trivial body for {qual}")
        t_start, t_end, _ = theirs[qual]
        body = textwrap.dedent("\n".join(triv_lines[t_start:t_end]))
        edits.append((start, end, textwrap.indent(body, " " * indent).split("\n")))
    for start, end, new in sorted(edits, reverse=True):
        stub_lines[start:end] = new
    return "\n".join(stub_lines)


def convert(kata: str, file: Path, keep: bool = False) -> tuple[Path, str, int]:
    """Turn the whole-file mutant ``file`` of ``kata`` into a patch against the base it is
    closest to (the stub, for a ``*`` mutant). Writes ``<stem>.patch`` beside the mutants,
    checks that it builds back to the same code, and removes ``file`` unless ``keep``.
    Returns (patch path, base, lines changed)."""
    source = file.read_text(encoding="utf-8")
    if not source.endswith("\n"):
        source += "\n"
    where = str(file)
    head = header_of_docstring(ast.get_docstring(ast.parse(source)) or "", where)
    if head.rubric == "*":
        candidates = [stub_file(kata)]
    else:
        candidates = bases(kata)
    best: tuple[int, Path, str] | None = None
    for base in candidates:
        base_text = base.read_text(encoding="utf-8")
        if head.rubric == "*":
            wanted = trivial_from_stub(base_text, source, where)
        else:
            wanted = _with_docstring_of(source, base_text)
        changed = sum(1 for ln in difflib.unified_diff(base_text.split("\n"), wanted.split("\n"),
                                                       lineterm="", n=0)
                      if ln[:1] in "+-" and not ln.startswith(("+++", "---")))
        if best is None or changed < best[0]:
            best = (changed, base, wanted)
    assert best is not None
    changed, base, wanted = best
    base_rel = _rel(base)
    text = render(head.bug, head.rubric, base_rel, base.read_text(encoding="utf-8"), wanted,
                  head.blind, head.notes)
    name = file.stem
    out = folder(kata) / f"{name}{SUFFIX}"
    m = parse(text, kata, name, out)
    if build(m) != (wanted if wanted.endswith("\n") else wanted + "\n"):
        raise MutantError(f"{where}: the patch does not build back to the mutant")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    if not keep and file.resolve() != out.resolve():
        file.unlink()
    return out, base_rel, changed


# -- command line -----------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.authoring.mutant",
                                     description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the mutants of a kata").add_argument("kata")
    show = sub.add_parser("show", help="print a built mutant")
    show.add_argument("kata")
    show.add_argument("name")
    sub.add_parser("check", help="every mutant applies, compiles and differs").add_argument(
        "katas", nargs="*")
    sub.add_parser("refresh", help="rewrite moved hunk headers").add_argument("kata")
    conv = sub.add_parser("convert", help="whole-file mutants -> patches")
    conv.add_argument("kata")
    conv.add_argument("files", nargs="+", type=Path)
    conv.add_argument("--keep", action="store_true", help="keep the whole files")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            for name in names(args.kata):
                m = load(args.kata, name)
                print(f"{name:<40} {m.rubric:<24} {m.base}{'  (blind)' if m.blind else ''}")
        elif args.command == "show":
            sys.stdout.write(build(load(args.kata, args.name)))
        elif args.command == "check":
            found = [p for k in (args.katas or catalog.kata_names()) for p in problems(k)]
            print("\n".join(found) or "every mutant applies exactly once, compiles and differs")
            return 1 if found else 0
        elif args.command == "refresh":
            done = refresh(args.kata)
            print(f"rewrote {len(done)} mutant(s): {', '.join(done)}" if done else "all current")
        elif args.command == "convert":
            catalog.load(args.kata)
            for file in args.files:
                out, base, changed = convert(args.kata, file, keep=args.keep)
                print(f"{_show(out)}: {changed} lines changed against {base}")
    except (MutantError, catalog.CatalogError) as exc:
        print(f"mutant: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
