"""The bench's plumbing (``nox -s bench``), cheaply: one quick run at tiny sizes and one
round writes a JSON record with finite positive ratios, a Markdown table and a PNG; the
README section is replaced between its markers; the production peers compute what the
references compute. No test here compares a time with anything: timings at these sizes
measure nothing. Tests that need matplotlib, torch or tokenizers skip without them.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graders.bench import cases, peers, report, run, timing

ROOT = Path(__file__).resolve().parents[1]


def _ratios_ok(record: dict[str, Any]) -> None:
    for case in record["cases"]:
        assert case["comparisons"], case["kata"]
        for cmp in case["comparisons"]:
            r = cmp["ratio"]
            assert all(math.isfinite(r[k]) and r[k] > 0 for k in ("median", "min", "max")), cmp
            assert r["min"] <= r["median"] <= r["max"], cmp
            assert len(cmp["per_round"]) == case["rounds"]


def test_quick_run_writes_record_table_and_plot(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib", reason="the plot needs matplotlib (nox -s bench has it)")
    code = run.main(["block_hash", "radix_cache", "--quick", "--rounds", "1",
                     "--out", str(tmp_path)])
    assert code == 0
    record = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert {"date", "command", "machine", "software", "cases", "elapsed_s"} <= set(record)
    assert record["machine"]["cores"] == os.cpu_count()
    assert record["command"].startswith("nox -s bench -- block_hash radix_cache")
    assert [c["kata"] for c in record["cases"]] == ["block_hash", "radix_cache"]
    kinds = sorted((c["kata"], cmp["kind"]) for c in record["cases"] for cmp in c["comparisons"])
    assert kinds == [("block_hash", "floor"), ("block_hash", "floor"), ("block_hash", "growth"),
                     ("block_hash", "peer"), ("block_hash", "peer"), ("radix_cache", "growth")]
    _ratios_ok(record)
    for case in record["cases"]:
        for c in case["contenders"]:
            assert c["cpu_s_per_unit"]["median"] > 0 and c["calls_per_sample"] >= 1
    table = (tmp_path / "results.md").read_text(encoding="utf-8")
    assert "| kata | measured | against | kind | ratio | min - max |" in table
    assert sum(line.startswith("| block_hash |") for line in table.splitlines()) == 5
    assert f"{os.cpu_count()}-core machine" in table and record["date"] in table
    assert table in capsys.readouterr().out            # the table is printed as well
    assert (tmp_path / "results.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_every_kata_builds_at_quick_size_with_its_alternatives() -> None:
    """Each case's inputs, peers, alternatives and agreement checks, without timing: a peer
    or an alternative that disagreed with the reference, or failed to set up, leaves a
    note."""
    for kata, build in cases.BUILDERS.items():
        if kata == "top_p":
            continue   # its own test below
        try:
            case = build(True, True)
        except cases.Skipped:
            continue   # tokenizers missing: stream_detok's own test below says so
        assert case.kata == kata and case.comparisons
        assert case.notes == [], case.notes
        alts = {c.name for c in case.contenders if c.role == "alternative"}
        assert {f"alt:{p.stem}" for p in (ROOT / "graders" / "alternatives" / kata).glob("*.py")
                if p.name != "__init__.py"} <= alts
        for c in case.contenders:
            c.run()
        assert build(True, False).contenders[0].role == "reference"
        assert not [c for c in build(True, False).contenders if c.role == "alternative"]


def test_unknown_kata_and_bad_rounds_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        run.main(["no_such_kata"])
    assert exc.value.code == 2 and "no bench for no_such_kata" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run.main(["spec_decode", "--rounds", "0"])


def test_ratios_are_per_round_and_per_unit() -> None:
    case = timing.Case("k", "w", "unit", [
        timing.Contender("a", "A", "reference", lambda: None, units=2),
        timing.Contender("b", "B", "peer", lambda: None)],
        [timing.Comparison("a", "b", "peer")])
    m = timing.measure(case, rounds=3, target=1e-4)
    assert len(m.per_unit["a"]) == 3 and len(m.ratios(case.comparisons[0])) == 3
    m.per_unit = {"a": [2.0, 4.0, 9.0], "b": [1.0, 1.0, 3.0]}
    assert m.ratios(case.comparisons[0]) == [2.0, 4.0, 3.0]
    s = timing.summarise(m.ratios(case.comparisons[0]))
    assert (s.median, s.low, s.high) == (3.0, 2.0, 4.0)
    with pytest.raises(ValueError, match="unknown contender"):
        timing.Case("k", "w", "u", case.contenders, [timing.Comparison("a", "zz", "peer")])
    with pytest.raises(ValueError, match="role"):
        timing.Contender("x", "X", "bystander", lambda: None)


def test_readme_section_is_replaced_between_the_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# t\n\nbefore\n{report.README_BEGIN}\nold table\n{report.README_END}\n"
                      "after\n", encoding="utf-8")
    report.update_readme(readme, "| new |\n", "docs/bench/results.png")
    text = readme.read_text(encoding="utf-8")
    assert "old table" not in text and "| new |" in text and "before" in text
    assert text.endswith(f"{report.README_END}\nafter\n")
    assert "![the bench's ratios](docs/bench/results.png)" in text
    bare = tmp_path / "BARE.md"
    bare.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no bench section"):
        report.update_readme(bare, "| new |\n", "x.png")
    assert bare.read_text(encoding="utf-8") == "no markers\n"
    # the bench's own page carries the section `--readme` pastes into
    assert report.README_BEGIN in (ROOT / "docs" / "bench" / "README.md").read_text(encoding="utf-8")


# -- the peers compute what the references compute ------------------------------------

def _logits(rows: int = 6, vocab: int = 3000) -> np.ndarray:
    out: np.ndarray = (np.random.default_rng(1).standard_normal((rows, vocab)) * 3
                       ).astype(np.float32)
    return out


def test_top_p_peers_keep_the_references_set() -> None:
    from solutions import top_p

    x = _logits()
    t = np.array([1.0, 0.7, 1.3, 1.0, 2.0, 0.5])
    runs = [(p, np.full(len(x), p), top_p.kept_mask(x, t, np.full(len(x), p)))
            for p in (0.5, 0.9, 0.99)]
    for p, pp, want in runs:
        got = peers.pivot_top_p(x, t, pp)
        assert (got != want).sum() <= 1 and got.sum() > len(x), p  # float32 sums at the edge
    torch = pytest.importorskip("torch")
    for p, pp, want in runs:
        vllm = peers.vllm_top_p(torch.from_numpy(x), torch.from_numpy(t.astype(np.float32)),
                                torch.from_numpy(pp.astype(np.float32))).numpy()
        assert (vllm != want).sum() <= 1 and vllm.sum() > len(x), p


def test_top_p_case_times_the_alternatives_and_the_peers() -> None:
    case = cases.top_p(True)
    names = {c.name for c in case.contenders}
    alts = {f"alt:{p.stem}" for p in (ROOT / "graders" / "alternatives" / "top_p").glob("*.py")
            if p.name != "__init__.py"}
    assert alts and alts <= names and {"reference", "pivot", "floor"} <= names
    assert {(c.numer, c.denom) for c in case.comparisons} >= {
        ("reference", "pivot"), ("reference", "floor"), *((a, "reference") for a in alts)}
    assert not [n for n in case.notes if "differ" in n], case.notes


def test_stream_detok_peers_send_the_whole_text_and_stop_where_the_reference_stops() -> None:
    pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer

    from solutions import stream_detok
    from tests.stream_detok.vocab import TOKENIZER_JSON, corpus, load_vocab

    tok = Tokenizer.from_file(str(TOKENIZER_JSON))
    vocab = list(load_vocab())
    text = corpus()[:1500]
    ids = tok.encode(text).ids
    assert "".join(peers.decode_stream(tok, ids)) == text
    assert "".join(peers.utf8_floor(vocab, ids)) == text
    assert "".join(peers.decode_stream_stops(tok, ids, cases.STOPS)) == text
    stops = ("\n\nEmoji", "€")      # both occur: the first to complete wins
    d = stream_detok.StreamDetokenizer(vocab, stops)
    want = "".join(d.push([t]) for t in ids) + d.finish()
    assert want and want != text
    assert "".join(peers.decode_stream_stops(tok, ids, stops)) == want


def test_block_hash_chains_hash_every_full_block_and_chain_them() -> None:
    tokens = list(range(100, 170))     # 4 full blocks of 16, 6 tokens over
    for chain in (peers.vllm_block_chain, peers.hashlib_chain):
        a = chain(tokens, 16)
        assert len(a) == 4 and len(set(a)) == 4
        b = chain(tokens[:33] + [7] + tokens[34:], 16)   # a token of block 2 changed
        assert a[:2] == b[:2] and a[2] != b[2] and a[3] != b[3]
