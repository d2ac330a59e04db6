"""Small patches against a base file, applied strictly: the format mutants and the hostile
suite's attacks share.

A patch file is a few header lines (``Key: value``, then free notes), then one unified diff
of one base file::

    Attack: answers the timed calls with a cheap wrong answer.
    Class: evidence

    --- a/graders/hostile/top_p/honest/timed_call_detect.py
    +++ b/graders/hostile/top_p/honest/timed_call_detect.py
    @@ -12,7 +12,9 @@ def top_p_mask(logits, p):
    ...

Application needs no external tool and is strict: each hunk's old lines must stand exactly
at the line its header gives and nowhere else in the base, hunks come in order, and the result
must differ from the base. A base may itself be a patch (``.patch``), built first.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from graders import catalog

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
SECTION = re.compile(r"^[ \t]*(class|(async[ \t]+)?def)[ \t]")
FIELD = re.compile(r"^([A-Z][A-Za-z]*):[ \t]*(.*?)\s*$")


class PatchError(ValueError):
    """A patch that cannot be read or applied exactly; the message says where and why."""


@dataclass(frozen=True)
class Hunk:
    old_start: int          # 1-based line of the first old line (as in the header)
    new_start: int
    section: str            # the text after the second @@ (a reader's hint, not checked)
    lines: tuple[str, ...]  # each begins with ' ', '-' or '+'

    @property
    def old(self) -> list[str]:
        return [ln[1:] for ln in self.lines if ln[0] in " -"]

    @property
    def new(self) -> list[str]:
        return [ln[1:] for ln in self.lines if ln[0] in " +"]

    def header(self) -> str:
        return (f"@@ -{self.old_start},{len(self.old)} +{self.new_start},{len(self.new)} @@"
                f"{self.section}")


@dataclass(frozen=True)
class Patch:
    where: str                                   # how messages name it
    base: str                                    # the base's path below the repository root
    hunks: tuple[Hunk, ...]
    fields: dict[str, str] = field(default_factory=dict)   # the header's Key: value lines
    order: tuple[str, ...] = ()                  # the header's keys, in order
    notes: str = ""

    @property
    def base_path(self) -> Path:
        return catalog.ROOT / self.base


def parse(text: str, where: str, keys: tuple[str, ...] | None = None) -> Patch:
    """Read a patch file's text; ``PatchError`` says what is wrong and where. ``keys``: the
    header fields the format has (any ``Key: value`` line when None); a line of another key
    starts the free notes."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    try:
        diff_at = next(i for i, ln in enumerate(lines) if ln.startswith("--- "))
    except StopIteration:
        raise PatchError(f"{where}: no diff (a line '--- a/<base>' starts it)") from None
    fields: dict[str, str] = {}
    order: list[str] = []
    notes: list[str] = []
    for ln in lines[:diff_at]:
        found = FIELD.match(ln)
        if found and keys is not None and found.group(1) not in keys:
            found = None
        if found and not notes:
            key, value = found.groups()
            if key in fields:
                raise PatchError(f"{where}: '{key}:' appears twice")
            if not value:
                raise PatchError(f"{where}: '{key}:' is empty")
            fields[key] = value
            order.append(key)
        elif ln.strip() or notes:
            notes.append(ln)
    old_line, new_line = lines[diff_at], lines[diff_at + 1] if diff_at + 1 < len(lines) else ""
    if not old_line.startswith("--- a/") or not new_line.startswith("+++ b/"):
        raise PatchError(f"{where}: the diff must start with '--- a/<base>' and "
                         f"'+++ b/<base>' lines")
    base = old_line[len("--- a/"):].split("\t")[0].strip()
    if new_line[len("+++ b/"):].split("\t")[0].strip() != base:
        raise PatchError(f"{where}: '---' and '+++' must name the same base file")
    hunks: list[Hunk] = []
    i = diff_at + 2
    while i < len(lines):
        head = HUNK.match(lines[i])
        if head is None:
            if not lines[i].strip():
                i += 1
                continue
            raise PatchError(f"{where}: line {i + 1}: expected a hunk header '@@ -a,b +c,d @@', "
                             f"got {lines[i]!r} (one base file per patch)")
        old_n = int(head.group(2) or "1")
        new_n = int(head.group(4) or "1")
        body: list[str] = []
        i += 1
        seen_old = seen_new = 0
        while i < len(lines) and (seen_old < old_n or seen_new < new_n):
            ln = lines[i]
            if ln.startswith("\\"):
                raise PatchError(f"{where}: line {i + 1}: bases end with a newline; "
                                 f"'\\ No newline at end of file' is not supported")
            if ln == "":
                ln = " "   # an editor that strips trailing blanks leaves an empty context line
            if ln[0] not in " -+":
                raise PatchError(f"{where}: line {i + 1}: a hunk line starts with ' ', '-' or "
                                 f"'+'; got {lines[i]!r} (the header's counts are wrong?)")
            seen_old += ln[0] in " -"
            seen_new += ln[0] in " +"
            body.append(ln)
            i += 1
        if (seen_old, seen_new) != (old_n, new_n):
            raise PatchError(f"{where}: hunk {len(hunks) + 1} ({head.group(0)}) has "
                             f"{seen_old} old and {seen_new} new lines")
        if not any(ln[0] in "-+" for ln in body):
            raise PatchError(f"{where}: hunk {len(hunks) + 1} changes nothing")
        hunks.append(Hunk(int(head.group(1)), int(head.group(3)), head.group(5), tuple(body)))
    if not hunks:
        raise PatchError(f"{where}: the diff has no hunk")
    return Patch(where, base, tuple(hunks), fields, tuple(order), "\n".join(notes).strip())


def load(path: Path, keys: tuple[str, ...] | None = None) -> Patch:
    try:
        where = str(path.relative_to(catalog.ROOT))
    except ValueError:
        where = str(path)
    return parse(path.read_text(encoding="utf-8"), where, keys)


def base_text(p: Patch) -> str:
    """The base's text: the file, or, for a base that is itself a patch, that patch built."""
    if p.base.endswith(".patch"):
        return build(load(p.base_path))
    if not p.base_path.is_file():
        raise PatchError(f"{p.where}: its base {p.base} does not exist")
    text = p.base_path.read_text(encoding="utf-8")
    if not text.endswith("\n"):
        raise PatchError(f"{p.where}: its base {p.base} does not end with a newline")
    return text


def occurrences(lines: list[str], block: list[str]) -> list[int]:
    n = len(block)
    return [i for i in range(len(lines) - n + 1) if lines[i:i + n] == block]


def locate(p: Patch, lines: list[str], relocate: bool, stale_hint: str = "") -> list[int]:
    """The 0-based index where each hunk's old lines stand; strict unless ``relocate``."""
    starts: list[int] = []
    end = 0
    for n, h in enumerate(p.hunks, 1):
        old = h.old
        if not old:
            raise PatchError(f"{p.where}: hunk {n} has no old lines to anchor it")
        found = occurrences(lines, old)
        if not found:
            raise PatchError(f"{p.where}: hunk {n} ({h.header()}) does not apply: its old lines "
                             f"are not in {p.base} (the base changed there; rewrite the patch)")
        if len(found) > 1:
            raise PatchError(f"{p.where}: hunk {n} ({h.header()}) is ambiguous: its old lines "
                             f"stand {len(found)} times in {p.base} (at lines "
                             f"{', '.join(str(f + 1) for f in found)}); give it more context")
        at = found[0]
        if at != h.old_start - 1 and not relocate:
            raise PatchError(f"{p.where}: hunk {n} ({h.header()}) is stale: its old lines now "
                             f"stand at line {at + 1} of {p.base}{stale_hint}")
        if at < end:
            raise PatchError(f"{p.where}: hunk {n} overlaps or precedes the hunk before it")
        starts.append(at)
        end = at + len(old)
    return starts


def patched(p: Patch, lines: list[str], starts: list[int]) -> list[str]:
    out: list[str] = []
    pos = 0
    for h, at in zip(p.hunks, starts):
        out += lines[pos:at] + h.new
        pos = at + len(h.old)
    return out + lines[pos:]


def build(p: Patch, stale_hint: str = "") -> str:
    """The patched text: the base with every hunk applied, strictly."""
    lines = base_text(p)[:-1].split("\n")
    starts = locate(p, lines, relocate=False, stale_hint=stale_hint)
    delta = 0
    for n, (h, at) in enumerate(zip(p.hunks, starts), 1):
        if h.new_start - 1 != at + delta:
            raise PatchError(f"{p.where}: hunk {n} ({h.header()}) gives new line "
                             f"{h.new_start}, but it lands at {at + delta + 1}{stale_hint}")
        delta += len(h.new) - len(h.old)
    out = patched(p, lines, starts)
    if out == lines:
        raise PatchError(f"{p.where} leaves {p.base} unchanged")
    return "\n".join(out) + "\n"


def diff(base: str, base_text: str, new_text: str) -> str:
    """A unified diff of one base file with as much context as makes every hunk unique
    (three lines at least); each hunk header names its enclosing def or class, as git's
    Python diff driver does."""
    old_lines = base_text[:-1].split("\n")
    new_lines = new_text[:-1].split("\n") if new_text.endswith("\n") else new_text.split("\n")
    for context in range(3, 40):
        out = list(difflib.unified_diff(old_lines, new_lines, n=context, lineterm=""))
        if not out:
            raise PatchError(f"the change leaves {base} unchanged")
        hunks: list[tuple[str, list[str]]] = []
        for line in out[2:]:
            if line.startswith("@@"):
                hunks.append((line, []))
            else:
                hunks[-1][1].append(line)
        if all(len(occurrences(old_lines, [ln[1:] for ln in body if ln[:1] in " -"])) == 1
               for _, body in hunks):
            lines = [f"--- a/{base}", f"+++ b/{base}"]
            for head, body in hunks:
                found = HUNK.match(head)
                above = old_lines[:int(found.group(1)) - 1] if found else []
                section = next((ln.strip() for ln in reversed(above) if SECTION.match(ln)), "")
                # a blank context line is written empty: no trailing whitespace to strip
                lines += [head + (f" {section}" if section else ""),
                          *("" if ln == " " else ln for ln in body)]
            return "\n".join(lines) + "\n"
    raise PatchError(f"no context up to 40 lines makes every hunk of the change to {base} "
                     "unique")


def render(fields: list[tuple[str, str]], base: str, base_text: str, new_text: str,
           notes: str = "") -> str:
    """The text of a patch file: its header fields, notes, and the diff."""
    head = [f"{k}: {v}" for k, v in fields]
    if notes.strip():
        head += ["", notes.strip()]
    return "\n".join(head) + "\n\n" + diff(base, base_text, new_text)
