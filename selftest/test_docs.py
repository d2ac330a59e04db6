"""What the README says about the environment is what pyproject.toml installs."""

from __future__ import annotations

import re
import sys

from graders import catalog

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _names(reqs: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\[ ]", r.strip(), maxsplit=1)[0] for r in reqs}


def test_the_readme_names_every_requirement() -> None:
    project = tomllib.loads((catalog.ROOT / "pyproject.toml").read_text())["project"]
    wanted = _names(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        wanted |= _names(extra)
    readme = (catalog.ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("Each builds the shared environment")
    section = readme[start:readme.index("\n## ", start)]
    missing = sorted(n for n in wanted if not re.search(rf"\b{re.escape(n)}\b", section))
    assert not missing, f"README's list of what the environment holds lacks {missing}"
    for extra in project["optional-dependencies"]:
        assert f"`{extra}`" in section, f"README does not say when the {extra!r} extra is installed"
