"""The bench's workloads, one builder per kata: the reference (imported from ``solutions``,
so the bench always times the reference as it is now), the kata's independent solutions
where the case says so, the production peers and the floor, all on the same inputs.

Each builder takes ``quick`` (tiny sizes, for the self-test of the bench's plumbing) and
``alts``: also time the kata's independent solutions (graders/alternatives/KATA/) against
the reference; top_p always does.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import itertools
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from graders.bench import peers
from graders.bench.timing import Case, Comparison, Contender


def reference(kata: str) -> ModuleType:
    return importlib.import_module(f"solutions.{kata}")


def alternatives(kata: str) -> list[tuple[str, ModuleType]]:
    """The kata's independent correct solutions (graders/alternatives/KATA/), by name."""
    from graders.authoring import mutant

    out = []
    for path in mutant.alternative_files(kata):
        name = path.parent.name if path.name == "__init__.py" else path.stem
        mod_name = f"_bench_alternative_{kata}_{name}"
        spec = importlib.util.spec_from_file_location(
            mod_name, path,
            submodule_search_locations=[str(path.parent)] if path.name == "__init__.py" else None)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
        out.append((name, module))
    return out


def _missing(module: str) -> str | None:
    """None when ``module`` can be imported, else why not (the bench then skips it)."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        return f"{module} is not installed ({exc}); `nox -s bench` installs it"
    return None


class Skipped(Exception):
    """A case that cannot run here (a missing optional library); the message says why."""


# -- top_p ------------------------------------------------------------------------------

def _try_alternatives(kata: str, notes: list[str],
                      add: Callable[[str, ModuleType], None]) -> None:
    """``add`` each alternative's contenders; one that fails to set up is noted, not fatal."""
    for name, alt in alternatives(kata):
        try:
            add(name, alt)
        except Exception as exc:  # noqa: BLE001 - any failure of a third solution is a note
            notes.append(f"alternative {name} left out: {exc!r}")


def top_p(quick: bool, alts: bool = True) -> Case:
    """kept_mask at T = 1, p = 0.9 on 64 x 131072 float32 logits (a 128K vocabulary); the
    alternatives are always timed (``alts`` is accepted for a uniform signature)."""
    rows, vocab = (4, 4096) if quick else (64, 131072)
    rng = np.random.default_rng(0)
    logits = (rng.standard_normal((rows, vocab)) * 3).astype(np.float32)
    t, p = np.ones(rows), np.full(rows, 0.9)
    ref = reference("top_p")
    want = np.asarray(ref.kept_mask(logits, t, p))
    notes: list[str] = []

    def agrees(name: str, mask: Any) -> None:
        got = np.asarray(mask, dtype=bool)
        wrong = int((got != want).sum())
        if wrong:
            notes.append(f"{name}: {wrong} of {want.size} mask entries differ from the "
                         f"reference's ({int(want.sum())} kept)")

    contenders = [Contender("reference", "reference kept_mask", "reference",
                            lambda: ref.kept_mask(logits, t, p))]
    comparisons = []

    def add(name: str, alt: ModuleType) -> None:
        key = f"alt:{name}"
        agrees(key, alt.kept_mask(logits, t, p))
        contenders.append(Contender(key, f"alternative {name}", "alternative",
                                    functools.partial(alt.kept_mask, logits, t, p)))
        comparisons.append(Comparison(key, "reference", "alternative"))

    _try_alternatives("top_p", notes, add)   # always: the sort-free alternative's case
    agrees("pivot", peers.pivot_top_p(logits, t, p))
    contenders.append(Contender("pivot", "sort-free pivot search, FlashInfer-style (numpy)",
                                "peer", lambda: peers.pivot_top_p(logits, t, p)))
    comparisons[:0] = [Comparison("reference", "pivot", "peer")]
    why = _missing("torch")
    if why is None:
        torch = peers.torch_single_thread()
        lt, tt = torch.from_numpy(logits), torch.from_numpy(t.astype(np.float32))
        pt = torch.from_numpy(p.astype(np.float32))
        agrees("vllm", peers.vllm_top_p(lt, tt, pt).numpy())
        contenders.append(Contender("vllm", "vLLM sort + cumsum (torch, 1 thread)", "peer",
                                    lambda: peers.vllm_top_p(lt, tt, pt)))
        comparisons[:0] = [Comparison("reference", "vllm", "peer")]
    else:
        notes.append(f"vLLM's peer skipped: {why}")
    contenders.append(Contender("floor", "one pass over the logits (row max)", "floor",
                                lambda: peers.one_pass_max(logits)))
    comparisons.insert(1 if why else 2, Comparison("reference", "floor", "floor"))
    return Case("top_p", f"kept_mask, {rows} x {vocab} float32 logits, T = 1, p = 0.9",
                "call", contenders, comparisons, notes)


# -- stream_detok -----------------------------------------------------------------------

STOPS = ("<|endoftext|>", "\n\nHuman:", "</response>")   # prefixes occur, none completes


def _stream_ids(tokenizer: Any, corpus: str, n: int) -> list[int]:
    """BPE's own encoding of the shipped corpus, repeated, cut to ``n`` tokens."""
    once: list[int] = list(tokenizer.encode(corpus).ids)
    return (once * (n // len(once) + 1))[:n]


def stream_detok(quick: bool, alts: bool = False) -> Case:
    """One token per push over the shipped byte-level BPE vocabulary and corpus."""
    why = _missing("tokenizers")
    if why is not None:
        raise Skipped(why)
    from tokenizers import Tokenizer

    from tests.stream_detok.vocab import TOKENIZER_JSON, corpus, load_vocab

    n, small, large = (300, 100, 1000) if quick else (20_000, 1_000, 100_000)
    tokenizer = Tokenizer.from_file(str(TOKENIZER_JSON))
    vocab = list(load_vocab())
    ids = _stream_ids(tokenizer, corpus(), n)
    text = tokenizer.decode(ids)
    if any(s in text for s in STOPS):
        raise AssertionError("a stop string occurs in the bench's stream")
    ref = reference("stream_detok")
    streams = {"small": ids[:small], "large": _stream_ids(tokenizer, corpus(), large)}

    def push_all(stream: list[int], stops: tuple[str, ...], mod: ModuleType = ref) -> list[str]:
        d = mod.StreamDetokenizer(vocab, stops)
        out = [d.push([t]) for t in stream]
        out.append(d.finish())
        return out

    runs: dict[str, Callable[[], list[str]]] = {
        "reference": lambda: push_all(ids, ()),
        "reference_stops": lambda: push_all(ids, STOPS),
        "decode_stream": lambda: peers.decode_stream(tokenizer, ids),
        "decode_stream_stops": lambda: peers.decode_stream_stops(tokenizer, ids, STOPS),
        "floor": lambda: peers.utf8_floor(vocab, ids),
    }
    notes = [f"{name}: its text differs from the whole decode"
             for name, run in runs.items() if "".join(run()) != text]
    contenders = [
        Contender("reference", "reference, no stop strings", "reference",
                  runs["reference"], len(ids)),
        Contender("reference_stops", "reference, 3 stop strings", "reference",
                  runs["reference_stops"], len(ids)),
        Contender("decode_stream", "tokenizers DecodeStream", "peer",
                  runs["decode_stream"], len(ids)),
        Contender("decode_stream_stops", "DecodeStream + vLLM-style stop check", "peer",
                  runs["decode_stream_stops"], len(ids)),
        Contender("floor", "incremental UTF-8 decode", "floor", runs["floor"], len(ids)),
        Contender("stops_small", f"reference, 3 stops, {_k(small)}-token stream", "reference",
                  lambda: push_all(streams["small"], STOPS), small),
        Contender("stops_large", f"reference, 3 stops, {_k(large)}-token stream", "reference",
                  lambda: push_all(streams["large"], STOPS), large),
    ]
    comparisons = [
        Comparison("reference", "decode_stream", "peer"),
        Comparison("reference", "floor", "floor"),
        Comparison("reference_stops", "decode_stream", "peer"),
        Comparison("reference_stops", "decode_stream_stops", "peer"),
        Comparison("reference_stops", "floor", "floor"),
        Comparison("stops_large", "stops_small", "growth",
                   f"per token: a {_k(large)}-token stream vs {_k(small)}",
                   "reference, 3 stop strings"),
    ]

    def add(name: str, alt: ModuleType) -> None:
        run = functools.partial(push_all, ids, STOPS, alt)
        if "".join(run()) != text:
            notes.append(f"alternative {name}: its text differs from the whole decode")
        contenders.append(Contender(f"alt:{name}", f"alternative {name}, 3 stop strings",
                                    "alternative", run, len(ids)))
        comparisons.append(Comparison(f"alt:{name}", "reference_stops", "alternative"))

    if alts:
        _try_alternatives("stream_detok", notes, add)
    return Case("stream_detok", f"{n} tokens of the shipped corpus, one per push; stops "
                f"{', '.join(repr(s) for s in STOPS)}", "token", contenders, comparisons,
                notes)


# -- block_hash -------------------------------------------------------------------------

class _Prompts:
    """Prompts made ahead of the clock: ``prepare(n)`` makes the next n, ``take`` hands
    one out. Prompt ``i`` is ``head`` (shared, may be empty) + ``unique`` fresh random
    tokens; the same seed gives every contender the same sequence."""

    def __init__(self, seed: int, unique: int, heads: list[list[int]] | None = None,
                 vocab: int = 32_000) -> None:
        self._rng = np.random.default_rng(seed)
        self._unique, self._heads, self._vocab = unique, heads or [[]], vocab
        self._count = itertools.count()
        self._ready: list[list[int]] = []

    def prepare(self, n: int) -> None:
        fresh = []
        for _ in range(n):
            head = self._heads[next(self._count) % len(self._heads)]
            fresh.append(head + self._rng.integers(0, self._vocab, self._unique).tolist())
        self._ready[:0] = fresh[::-1]   # take() pops from the end

    def take(self) -> list[int]:
        if not self._ready:
            self.prepare(1)
        return self._ready.pop()


def block_hash(quick: bool, alts: bool = False) -> Case:
    """Hashing a fresh prompt, and a whole request (allocate + free) on a pool at capacity."""
    bs = 16
    prompt_len, small, large = (64, 256, 2048) if quick else (512, 1024, 100_000)
    ref = reference("block_hash")
    ids = itertools.count()

    def pool_at_capacity(tokens: int, seed: int,
                         mod: ModuleType = ref) -> tuple[Callable[[], None], _Prompts]:
        pool = mod.BlockPool(-(-tokens // bs), bs)
        prompts = _Prompts(seed, prompt_len)

        def request() -> None:
            rid = f"r{next(ids)}"
            pool.allocate(rid, prompts.take())
            pool.free(rid)

        prompts.prepare(tokens // prompt_len + 2)
        for _ in range(tokens // prompt_len + 2):   # every block used once: all cached
            request()
        if pool.num_free_blocks() != -(-tokens // bs) or not pool.cached_blocks():
            raise AssertionError("block_hash bench: the pool is not at capacity")
        return request, prompts

    small_req, small_prompts = pool_at_capacity(small, 1)
    large_req, large_prompts = pool_at_capacity(large, 1)
    chains = {name: _Prompts(1, prompt_len) for name in ("hashes", "vllm", "floor")}
    sample = _Prompts(1, prompt_len).take()
    n_ref = len(ref.block_hashes(sample, bs))
    notes = [f"{name}: {len(fn(sample, bs))} hashes, the reference {n_ref}"
             for name, fn in (("vllm", peers.vllm_block_chain), ("floor", peers.hashlib_chain))
             if len(fn(sample, bs)) != n_ref]
    contenders = [
        Contender("allocate", f"reference allocate + free, {_k(large)} cached tokens",
                  "reference", large_req),
        Contender("hashes", "reference block_hashes", "reference",
                  lambda: ref.block_hashes(chains["hashes"].take(), bs)),
        Contender("vllm", "vLLM-style chain (sha256 of pickled parent + block)", "peer",
                  lambda: peers.vllm_block_chain(chains["vllm"].take(), bs)),
        Contender("floor", "hashlib chain over the block bytes", "floor",
                  lambda: peers.hashlib_chain(chains["floor"].take(), bs)),
        Contender("allocate_small", f"reference allocate + free, {_k(small)} cached tokens",
                  "reference", small_req),
    ]
    prepare = {"allocate": large_prompts, "allocate_small": small_prompts, **chains}
    for c in contenders:
        c.prepare = prepare[c.name].prepare
    comparisons = [
        Comparison("allocate", "vllm", "peer"),
        Comparison("allocate", "floor", "floor"),
        Comparison("hashes", "vllm", "peer"),
        Comparison("hashes", "floor", "floor"),
        Comparison("allocate", "allocate_small", "growth",
                   f"per request: {_k(large)} cached tokens vs {_k(small)}",
                   "reference allocate + free"),
    ]

    def add(name: str, alt: ModuleType) -> None:
        request, prompts = pool_at_capacity(large, 1, alt)
        contenders.append(Contender(f"alt:{name}", f"alternative {name} allocate + free, "
                                    f"{_k(large)} cached tokens", "alternative", request,
                                    prepare=prompts.prepare))
        comparisons.append(Comparison(f"alt:{name}", "allocate", "alternative"))

    if alts:
        _try_alternatives("block_hash", notes, add)
    return Case("block_hash", f"fresh {prompt_len}-token prompts (all misses), block size "
                f"{bs}, sha256", "prompt", contenders, comparisons, notes)


def _k(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 < 100 else str(n)


# -- radix_cache ------------------------------------------------------------------------

def radix_cache(quick: bool, alts: bool = False) -> Case:
    """Requests on a cache at capacity: acquire, extend by the generated tokens, release."""
    if quick:
        head, unique, gen, small, large, systems = 8, 8, 4, 256, 2048, 4
    else:
        head, unique, gen, small, large, systems = 64, 64, 16, 1024, 100_000, 16
    ref = reference("radix_cache")
    rng = np.random.default_rng(7)
    heads = [rng.integers(0, 32_000, head).tolist() for _ in range(systems)]

    def cache_at_capacity(slots: int,
                          mod: ModuleType = ref) -> tuple[Callable[[], None], _Prompts]:
        cache = mod.RadixCache(slots)
        prompts = _Prompts(3, unique + gen, heads)

        def request() -> None:
            tokens = prompts.take()
            lease, _, _ = cache.acquire(tokens[:-gen])
            cache.extend(lease, gen)
            cache.release(lease, tokens)

        need = slots // (unique + gen) + 2 * systems + 2
        prompts.prepare(need)
        for _ in range(need):
            request()
        if cache.stats()["free"] >= unique + gen:
            raise AssertionError("radix_cache bench: the cache is not at capacity")
        return request, prompts

    small_req, small_prompts = cache_at_capacity(small)
    large_req, large_prompts = cache_at_capacity(large)
    contenders = [
        Contender("large", f"reference, {_k(large)} cached tokens", "reference", large_req),
        Contender("small", f"reference, {_k(small)} cached tokens", "reference", small_req),
    ]
    contenders[0].prepare, contenders[1].prepare = large_prompts.prepare, small_prompts.prepare
    grew = f"per request: {_k(large)} cached tokens vs {_k(small)}"
    comparisons = [Comparison("large", "small", "growth", grew,
                              "reference acquire + extend + release")]
    notes: list[str] = []

    def add(name: str, alt: ModuleType) -> None:
        (big, big_prompts), (little, little_prompts) = (cache_at_capacity(large, alt),
                                                        cache_at_capacity(small, alt))
        contenders.extend([
            Contender(f"alt:{name}", f"alternative {name}, {_k(large)} cached tokens",
                      "alternative", big, prepare=big_prompts.prepare),
            Contender(f"alt:{name}:small", f"alternative {name}, {_k(small)} cached tokens",
                      "alternative", little, prepare=little_prompts.prepare)])
        comparisons.extend([
            Comparison(f"alt:{name}", "large", "alternative"),
            Comparison(f"alt:{name}", f"alt:{name}:small", "growth", grew,
                       f"alternative {name}")])

    if alts:
        _try_alternatives("radix_cache", notes, add)
    return Case("radix_cache", f"{systems} shared {head}-token system prompts + {unique} "
                f"fresh tokens, {gen} generated; acquire, extend, release", "request",
                contenders, comparisons, notes)


# -- spec_decode ------------------------------------------------------------------------

def spec_decode(quick: bool, alts: bool = False) -> Case:
    """verify_sampled over float32 probabilities, every draft live."""
    rows, k, vocab = (2, 2, 512) if quick else (8, 4, 32_000)
    rng = np.random.default_rng(5)

    def dist(*shape: int) -> np.ndarray:
        w = rng.random((*shape, vocab), dtype=np.float32) ** 4
        out: np.ndarray = w / w.sum(axis=-1, keepdims=True)
        return out

    p, q = dist(rows, k + 1), dist(rows, k)
    draft = rng.integers(0, vocab, (rows, k))
    num = np.full(rows, k)
    ua, us = rng.random((rows, k)), rng.random(rows)
    ref = reference("spec_decode")
    contenders = [
        Contender("reference", "reference verify_sampled", "reference",
                  lambda: ref.verify_sampled(draft, num, q, p, ua, us)),
        Contender("floor", "one pass over p and q (max)", "floor",
                  lambda: peers.one_pass_pq(p, q)),
    ]
    comparisons = [Comparison("reference", "floor", "floor")]
    notes: list[str] = []
    want = ref.verify_sampled(draft, num, q, p, ua, us)

    def add(name: str, alt: ModuleType) -> None:
        run = functools.partial(alt.verify_sampled, draft, num, q, p, ua, us)
        if [(a, list(e)) for a, e in run()] != [(a, list(e)) for a, e in want]:
            notes.append(f"alternative {name}: its rows differ from the reference's")
        contenders.append(Contender(f"alt:{name}", f"alternative {name} verify_sampled",
                                    "alternative", run))
        comparisons.append(Comparison(f"alt:{name}", "reference", "alternative"))

    if alts:
        _try_alternatives("spec_decode", notes, add)
    return Case("spec_decode", f"verify_sampled, B = {rows}, K = {k}, V = {vocab}, float32",
                "call", contenders, comparisons, notes)


BUILDERS: dict[str, Callable[[bool, bool], Case]] = {
    "top_p": top_p,
    "stream_detok": stream_detok,
    "block_hash": block_hash,
    "radix_cache": radix_cache,
    "spec_decode": spec_decode,
}
