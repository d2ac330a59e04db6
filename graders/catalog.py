"""The kata catalogue: every kata's metadata, read from ``katas/<name>/kata.toml``.

A kata is a folder under ``katas/`` holding ``__init__.py`` (the stub), ``README.md`` (the
prompt) and ``kata.toml``. This module is the one place that knows where each part lives.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
KATAS_DIR = ROOT / "katas"
SOLUTIONS_DIR = ROOT / "solutions"
PUBLIC_TESTS_DIR = ROOT / "tests"
HIDDEN_TESTS_DIR = ROOT / "graders" / "hidden"
MUTANTS_DIR = ROOT / "graders" / "mutants"
ALTERNATIVES_DIR = ROOT / "graders" / "alternatives"   # independent correct solutions
HOSTILE_DIR = ROOT / "graders" / "hostile"             # attacks beside their honest twins
STUBS_DIR = ROOT / "graders" / "stubs"                 # a candidate bundle's copies of the stubs
SUPPORT_DIR = ROOT / "graders" / "support"             # shared by stubs, tests, references

GRADED_BY = ("tests", "interviewer")


class CatalogError(ValueError):
    """A kata's metadata is missing or malformed."""


@dataclass(frozen=True)
class RubricItem:
    id: str
    points: int
    description: str
    graded_by: str = "tests"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def hardware(self) -> bool:
        """Graded on GPU timings (a measured fixture or the live GPU): its tests skip,
        and the item leaves the max score, when neither is present."""
        return self.extra.get("hardware") is True


@dataclass(frozen=True)
class Kata:
    name: str
    title: str
    minutes: int
    difficulty: str
    tags: tuple[str, ...]
    rubric: tuple[RubricItem, ...]
    hints: tuple[str, ...]
    requires: tuple[str, ...]
    raw: dict[str, Any]

    @property
    def folder(self) -> Path:
        return KATAS_DIR / self.name

    @property
    def prompt_path(self) -> Path:
        return self.folder / "README.md"

    @property
    def public_tests(self) -> Path:
        return PUBLIC_TESTS_DIR / self.name

    @property
    def hidden_tests(self) -> Path:
        return HIDDEN_TESTS_DIR / self.name

    @property
    def mutants_dir(self) -> Path:
        return MUTANTS_DIR / self.name

    def item(self, item_id: str) -> RubricItem:
        for item in self.rubric:
            if item.id == item_id:
                return item
        raise KeyError(f"kata {self.name!r} has no rubric item {item_id!r}; "
                       f"it has {[i.id for i in self.rubric]}")

    @property
    def read_only_inputs(self) -> bool:
        """``read_only_inputs = true`` in kata.toml: the prompt says the arguments are never
        modified, so the implementation gets them read-only in every mode (graders/wire.py):
        an in-place write raises where it happens, isolated or not."""
        return self.raw.get("read_only_inputs") is True

    @property
    def tested_items(self) -> tuple[RubricItem, ...]:
        return tuple(i for i in self.rubric if i.graded_by == "tests")

    @property
    def max_score(self) -> int:
        return sum(i.points for i in self.tested_items)


def kata_names() -> list[str]:
    """Names of every kata, sorted."""
    if not KATAS_DIR.is_dir():
        return []
    return sorted(p.parent.name for p in KATAS_DIR.glob("*/kata.toml")
                  if not p.parent.name.startswith(("_", ".")))


def load(name: str) -> Kata:
    """Read and validate one kata's metadata; a clear error names what is wrong."""
    path = KATAS_DIR / name / "kata.toml"
    if not path.is_file():
        known = ", ".join(kata_names()) or "(none)"
        raise CatalogError(f"no kata named {name!r}; known katas: {known}")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path}: {exc}") from exc

    def need(key: str, kind: type) -> Any:
        if key not in raw or not isinstance(raw[key], kind):
            raise CatalogError(f"{path}: '{key}' must be a {kind.__name__}")
        return raw[key]

    items: list[RubricItem] = []
    seen: set[str] = set()
    for entry in need("rubric", list):
        try:
            item_id, points, desc = entry["id"], entry["points"], entry["description"]
        except (KeyError, TypeError) as exc:
            raise CatalogError(f"{path}: each [[rubric]] needs id, points, description") from exc
        graded_by = entry.get("graded_by", "tests")
        if graded_by not in GRADED_BY:
            raise CatalogError(f"{path}: rubric {item_id!r}: graded_by must be one of {GRADED_BY}")
        if not isinstance(points, int) or points <= 0:
            raise CatalogError(f"{path}: rubric {item_id!r}: points must be a positive int")
        if item_id in seen:
            raise CatalogError(f"{path}: rubric item {item_id!r} appears twice")
        seen.add(item_id)
        if "hardware" in entry and (not isinstance(entry["hardware"], bool)
                                    or (entry["hardware"] and graded_by != "tests")):
            raise CatalogError(f"{path}: rubric {item_id!r}: hardware must be true or false, "
                               "and a hardware item is graded by tests")
        extra = {k: v for k, v in entry.items()
                 if k not in ("id", "points", "description", "graded_by")}
        items.append(RubricItem(item_id, points, desc, graded_by, extra))
    if not items:
        raise CatalogError(f"{path}: a kata needs at least one rubric item")
    if not isinstance(raw.get("read_only_inputs", False), bool):
        raise CatalogError(f"{path}: 'read_only_inputs' must be true or false")
    hints = raw.get("hints")
    if not isinstance(hints, list) or not hints or not all(isinstance(h, str) for h in hints):
        raise CatalogError(f"{path}: 'hints' must be a non-empty list of strings at the top "
                           "level (before the first [[rubric]] table, or TOML files it "
                           "under the last rubric item)")
    return Kata(
        name=name,
        title=need("title", str),
        minutes=need("minutes", int),
        difficulty=need("difficulty", str),
        tags=tuple(raw.get("tags", [])),
        rubric=tuple(items),
        hints=tuple(hints),
        requires=tuple(raw.get("requires", [])),
        raw=raw,
    )


def load_all() -> list[Kata]:
    return [load(n) for n in kata_names()]


def kata_of_test_path(path: Path) -> str | None:
    """The kata a test file belongs to: tests/<kata>/... or graders/hidden/<kata>/..."""
    path = path.resolve()
    for base in (PUBLIC_TESTS_DIR, HIDDEN_TESTS_DIR):
        try:
            rel = path.relative_to(base)
        except ValueError:
            continue
        if len(rel.parts) >= 2:
            return rel.parts[0]
    return None


def visibility_of_test_path(path: Path) -> str:
    """'hidden' for graders/hidden, 'public' for tests/."""
    try:
        path.resolve().relative_to(HIDDEN_TESTS_DIR)
        return "hidden"
    except ValueError:
        return "public"


def stub_problems(source: str, path: str) -> list[str]:
    """What makes ``source`` more than a stub: each function whose body (after its
    docstring) is anything but ``raise NotImplementedError(...)``."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"{path}: does not parse ({exc.msg}, line {exc.lineno})"]
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        raises = len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None \
            and "NotImplementedError" in ast.dump(body[0].exc)
        if not raises:
            found.append(f"{path}:{node.lineno}: {node.name}() does more than raise "
                         "NotImplementedError")
    return found
