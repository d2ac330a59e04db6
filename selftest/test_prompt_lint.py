"""The prompts' rules are each cited by a test, and their hints are kata.toml's
(graders/authoring/prompt_lint.py); the lint itself is checked on small made-up prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from graders import catalog
from graders.authoring import prompt_lint

PROMPT = """# x

## Interface
**Not a rule.** Outside the rule sections labels mean nothing.

## Rules

**Balance.** A new bucket is full.
It grows.

- **Wait.** A request that could fit waits.
- plain item that belongs to Wait

```python
**Not a rule either.** code
```

### Errors
**Bad input.** raises.

## Example
**Also not.** text
"""


def _rules(text: str, sections: list[str]) -> tuple[list[str], list[str]]:
    rules, problems = prompt_lint.parse_rules_text(text, sections)
    return [r.label for r in rules], problems


def test_rules_are_the_labels_of_the_rule_sections_only() -> None:
    labels, problems = _rules(PROMPT, ["Rules"])
    assert labels == ["Balance", "Wait", "Bad input"] and problems == []
    labels, problems = _rules(PROMPT, ["Errors"])
    assert labels == ["Bad input"] and problems == []


def test_unlabelled_text_missing_sections_and_twice_used_labels_are_problems() -> None:
    text = PROMPT.replace("**Balance.** A new", "A new")
    assert any("before the first rule label" in p for p in _rules(text, ["Rules"])[1])
    assert any("lacks" in p for p in _rules(PROMPT, ["Rules", "Nope"])[1])
    twice = PROMPT.replace("**Bad input.**", "**Balance.**")
    assert any("appears twice" in p for p in _rules(twice, ["Rules"])[1])
    assert any("no labelled rule" in p for p in _rules("## Rules\n", ["Rules"])[1])


def test_citations_by_docstring_or_name_cover_rules_and_stale_ones_fail() -> None:
    source = '''
def test_bad_input_is_refused():
    pass

def test_wait_for_it():
    pass

class TestMachine:
    """Rules: Wait; Balance."""

def test_other():
    """Rule: Refund"""
'''
    report = prompt_lint.Report("x")
    report.rules, _ = prompt_lint.parse_rules_text(PROMPT, ["Rules"])
    prompt_lint.match_citations(report, prompt_lint.citations_in(source, "t.py"))
    assert set(report.cited) == {"balance", "wait", "bad_input"}
    assert report.problems == ["t.py::test_other cites rule 'Refund', which the prompt's rule "
                               "sections do not have (rules: Balance, Wait, Bad input)"]
    report = prompt_lint.Report("x")
    report.rules, _ = prompt_lint.parse_rules_text(PROMPT, ["Rules"])
    prompt_lint.match_citations(report, prompt_lint.citations_in(
        "def test_balance_and_wait():\n    pass\n", "t.py"))   # one-word labels: no
    assert len([p for p in report.problems if "is cited by no test" in p]) == 3


def test_hint_blocks_round_trip() -> None:
    hints = ["Keep a `balance`   and a clock.", "Refund " + "x " * 80]
    text = "# p\n\n" + prompt_lint.hint_blocks(hints) + "\n"
    found = [m.group(1) for m in prompt_lint.HINT_BLOCK.finditer(text)]
    assert [" ".join(f.split()) for f in found] == [" ".join(h.split()) for h in hints]
    assert all(len(line) <= prompt_lint.WRAP for line in text.splitlines())


@pytest.mark.parametrize("name", catalog.kata_names())
def test_every_rule_is_cited_and_hints_agree(name: str) -> None:
    problems = prompt_lint.lint(name)
    assert not problems, "\n".join(problems)


def test_the_prompt_ends_with_a_real_engines_section_citing_a_file_or_doc() -> None:
    ok = PROMPT + "\n## Real engines\n\nSGLang's `python/sglang/srt/mem_cache/radix_cache.py` ...\n"
    assert prompt_lint.real_engines_problems(ok) == []
    url = PROMPT + "\n## Real engines\n\nSee https://docs.vllm.ai/en/latest/design/x.html.\n"
    assert prompt_lint.real_engines_problems(url) == []
    missing = prompt_lint.real_engines_problems(PROMPT)
    assert len(missing) == 1 and "must end with" in missing[0] and "'Example'" in missing[0]
    not_last = PROMPT.replace("## Example", "## Real engines\n\n`a/b.py`\n\n## Example")
    assert "must end with" in prompt_lint.real_engines_problems(not_last)[0]
    uncited = PROMPT + "\n## Real engines\n\nvLLM does it differently (no file named).\n"
    assert "cites no file" in prompt_lint.real_engines_problems(uncited)[0]
    no_ext = PROMPT + "\n## Real engines\n\nSee vllm/v1/core and block_pool.\n"
    assert "cites no file" in prompt_lint.real_engines_problems(no_ext)[0]
    in_code = ok + "\n```\n## Not a heading\n```\n"      # headings inside code do not count
    assert prompt_lint.real_engines_problems(in_code) == []
    deeper = ok + "\n### Notes\n\nmore\n"                 # a subsection stays inside it
    assert prompt_lint.real_engines_problems(deeper) == []


def test_write_hints_keeps_real_engines_last(tmp_path: Path) -> None:
    """A prompt without hint blocks gains its Hints section before Real engines."""
    text = "# p\n\n## Rules\n\n**A.** b\n\n## Real engines\n\n`a/b.py`\n"
    path = tmp_path / "README.md"
    path.write_text(text, encoding="utf-8")

    class K:
        prompt_path = path
        hints = ("one",)
    prompt_lint.write_hints(K())  # type: ignore[arg-type]
    out = path.read_text(encoding="utf-8")
    assert out.index("## Hints") < out.index("## Real engines")
    assert prompt_lint.hint_blocks(["one"]) in out
    assert prompt_lint.real_engines_problems(out) == []


def test_a_kata_with_read_only_inputs_says_so_in_its_prompt() -> None:
    """kata.toml's read_only_inputs hands the arguments over frozen (graders/wire.py): a
    prompt that does not say "read-only" is a problem; one that does, or a kata without
    the setting, is not."""
    from types import SimpleNamespace

    frozen, plain = SimpleNamespace(read_only_inputs=True), SimpleNamespace(read_only_inputs=False)
    silent = "# k\n\nThe function returns a list.\n"
    told = silent + "\nArguments arrive Read-only: copy what you change.\n"
    assert "read_only_inputs" in prompt_lint.read_only_problems(frozen, silent)[0]  # type: ignore[arg-type]
    assert prompt_lint.read_only_problems(frozen, told) == []  # type: ignore[arg-type]
    assert prompt_lint.read_only_problems(plain, silent) == []  # type: ignore[arg-type]
