"""The GitHub Actions workflows: the repository's own (.github/workflows/) and the template a
hiring team copies (examples/github-actions/), linted with zizmor (schema, template
injection, permissions, pinned actions), and no ``${{ }}`` expression inside a ``run:``
script (inputs reach the shell through ``env:``)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graders import catalog

WORKFLOWS = sorted([*(catalog.ROOT / ".github" / "workflows").glob("*.yml"),
                    *(catalog.ROOT / "examples" / "github-actions").glob("*.yml")])


def _zizmor() -> str:
    found = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or \
        shutil.which("zizmor")
    if found is None:
        pytest.skip("zizmor is not installed (it is in the dev extra: nox -s tests installs it)")
    try:
        subprocess.run([found, "--version"], check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"the zizmor binary cannot run here: {exc}")
    return found


def _lint(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_zizmor(), "--offline", "--strict-collection", "--no-progress",
                           "--format", "plain", *map(str, paths)],
                          capture_output=True, text=True, timeout=120)


def test_there_are_workflows_to_lint() -> None:
    names = {p.name for p in WORKFLOWS}
    assert {"grade-batch.yml", "grade-submission.yml"} <= names, names


def test_every_workflow_passes_the_linter() -> None:
    proc = _lint(WORKFLOWS)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    for path in WORKFLOWS:
        assert f"completed {path}" in proc.stderr + proc.stdout, \
            f"zizmor did not audit {path}"


def test_the_linter_catches_an_input_expanded_in_a_script(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    text = (catalog.ROOT / ".github" / "workflows" / "grade-batch.yml").read_text()
    bad.write_text(text.replace('run: python -m pip install "nox>=2024.4.15" "uv>=0.4"',
                                'run: echo "${{ inputs.kata }}"', 1))
    assert bad.read_text() != text
    proc = _lint([bad])
    assert proc.returncode != 0 and "template-injection" in proc.stdout, proc.stdout[-3000:]
    bad.write_text(text.replace("runs-on:", "runs-onn:", 1))
    proc = _lint([bad])
    assert proc.returncode != 0 and "runs-onn" in proc.stdout + proc.stderr


def run_scripts(text: str) -> list[tuple[int, str]]:
    """(line number, script) of every ``run:`` step: the value on its line and the lines
    indented deeper below it."""
    lines = text.splitlines()
    found = []
    for n, line in enumerate(lines):
        m = re.match(r"^(\s*)(- )?run:\s*(.*)$", line)
        if not m:
            continue
        indent = len(m.group(1)) + (2 if m.group(2) else 0)
        body = [m.group(3)]
        for follow in lines[n + 1:]:
            if follow.strip() and len(follow) - len(follow.lstrip()) <= indent:
                break
            body.append(follow)
        found.append((n + 1, "\n".join(body)))
    return found


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_expression_inside_a_script(path: Path) -> None:
    scripts = run_scripts(path.read_text())
    assert scripts
    inside = [(n, s.strip()[:80]) for n, s in scripts if "${{" in s]
    assert not inside, f"{path.name}: pass these through env: instead: {inside}"


def test_the_script_check_sees_expressions() -> None:
    text = "jobs:\n  a:\n    steps:\n      - run: |\n          echo hi\n          echo ${{ x }}\n" \
           "      - env:\n          A: ${{ y }}\n        run: echo \"$A\"\n"
    scripts = run_scripts(text)
    assert [n for n, s in scripts if "${{" in s] == [4]
    assert len(scripts) == 2
