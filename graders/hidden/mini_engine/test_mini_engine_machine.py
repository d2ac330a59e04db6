"""Hidden stateful tests for mini_engine.

A hypothesis state machine drives add / abort / step (and bad calls) on tiny pools (3 to 8
blocks of 1 to 4 tokens) with small budgets, so preemption happens all the time. Before
every step it reads the engine's stats and runs the model of the rules (model.py) from that
state; after the step it compares the engine's record and stats with the model's. Every
output is checked against the toy model, every stream against ``reference_generation``, and
at the end the machine drains the engine within the bound the prompt gives.

The same machine runs once per rubric item; each run enforces the checks of its item.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from graders.hidden.mini_engine.model import Config, Req, State, expect_step, next_token, state_of
from graders.impl import kata_impl
from graders.support.mini_engine import VOCAB, reference_generation
from tests.mini_engine.helpers import GREEDY, block_problems, ceil_div

me = kata_impl("mini_engine")

EVERYTHING = {"budget_order", "block_accounting", "preemption", "sampling_stop", "abort",
              "errors", "exact_streams"}
SAMPLINGS = st.one_of(
    st.just(GREEDY),
    st.builds(lambda t, p, seed: {"temperature": t, "top_p": p, "seed": seed},
              st.sampled_from([0.5, 1.0, 2.0]), st.sampled_from([0.3, 0.9, 1.0]),
              st.integers(0, 1000)))


class EngineMachine(RuleBasedStateMachine):
    """Random interleavings of add, abort and step against the model of the rules.

    Rules: Queues; One step; Decodes first; Token budget; Block accounting
    Rules: Preemption by recompute; Resume; Sampling; Stopping; Abort; Refusal; Bad input
    """

    ITEM = ""

    def __init__(self) -> None:
        super().__init__()
        self.engine: Any = None
        self.cfg = Config(1, 1, 1, 1)
        self.reqs: dict[str, Req] = {}        # live requests (the test's knowledge)
        self.gone: set[str] = set()           # finished or aborted ids
        self.finished: dict[str, Req] = {}
        self.refs: dict[str, list[int]] = {}   # reference_generation, once per request
        self.count = 0

    def check(self, items: set[str], ok: bool, message: str) -> None:
        if not ok and self.ITEM in items:
            raise AssertionError(message)

    # -- observation ---------------------------------------------------------------
    def stats(self, what: str) -> dict[str, Any]:
        s = self.engine.stats()
        problems = block_problems(s, self.cfg.num_blocks, self.cfg.block_size)
        shape = [p for p in problems if "keys" in p]
        self.check(EVERYTHING, not shape, f"{what}: {shape}")
        if shape:
            raise AssertionError(f"{what}: {shape}")
        self.check({"block_accounting"}, not problems, f"{what}: {'; '.join(problems)}")
        live = set(s["requests"])
        self.check({"abort", "sampling_stop", "errors"}, live == set(self.reqs),
                   f"{what}: stats() lists the requests {sorted(live)}, but the live ones "
                   f"(added, not finished, not aborted) are {sorted(self.reqs)}")
        self.check({"budget_order", "preemption", "abort"},
                   sorted(s["running"] + s["waiting"]) == sorted(self.reqs),
                   f"{what}: running {s['running']} + waiting {s['waiting']} must hold every "
                   f"live request once: {sorted(self.reqs)}")
        for rid, r in s["requests"].items():
            req = self.reqs.get(rid)
            if req is None:
                continue
            self.check({"preemption", "sampling_stop"}, r["generated"] == len(req.stream),
                       f"{what}: request {rid!r} has streamed {len(req.stream)} tokens "
                       f"{req.stream}, but stats() says generated={r['generated']}")
            self.check({"block_accounting", "preemption"},
                       0 <= r["computed"] <= req.length - 1,
                       f"{what}: request {rid!r} has computed={r['computed']}, outside "
                       f"0..{req.length - 1} (its sequence has {req.length} tokens and the "
                       "last one is computed by the step that samples the next)")
            if rid in s["waiting"]:
                self.check({"preemption", "block_accounting"}, r["computed"] == 0,
                           f"{what}: waiting request {rid!r} has computed={r['computed']}: "
                           "a waiting request holds no KV")
        return s

    def consistent(self, s: dict[str, Any]) -> bool:
        """Whether the model can start from these stats (every item fails otherwise)."""
        return (set(s["requests"]) == set(self.reqs)
                and sorted(s["running"] + s["waiting"]) == sorted(self.reqs)
                and all(0 <= r["computed"] <= self.reqs[k].length - 1
                        for k, r in s["requests"].items()))

    # -- rules ---------------------------------------------------------------------
    @initialize(num_blocks=st.integers(3, 8), block_size=st.sampled_from([1, 1, 2, 2, 3, 4]),
                max_running=st.sampled_from([1, 2, 3, 3, 4, 4]), extra=st.integers(0, 5))
    def start(self, num_blocks: int, block_size: int, max_running: int, extra: int) -> None:
        self.configure(num_blocks, block_size, max_running + extra, max_running)

    def configure(self, num_blocks: int, block_size: int, max_batched_tokens: int,
                  max_running: int) -> None:
        self.cfg = Config(num_blocks, block_size, max_batched_tokens, max_running)
        self.engine = me.Engine(num_blocks, block_size, max_batched_tokens, max_running)

    @rule(data=st.data(), n=st.integers(1, 3))
    def add(self, data: st.DataObject, n: int) -> None:
        for _ in range(n):
            self.add_one(data)

    def add_one(self, data: st.DataObject) -> None:
        sampling = data.draw(SAMPLINGS, label="sampling")
        capacity = self.cfg.num_blocks * self.cfg.block_size
        small = min(capacity, 12)
        total = data.draw(st.one_of(st.integers(max(2, capacity // 3), small),
                                    st.integers(capacity - 1, capacity + 1)), label="total")
        total = max(total, 2)
        prompt_len = data.draw(st.integers(1, total - 1), label="prompt_len")
        prompt = data.draw(st.lists(st.integers(0, VOCAB - 1), min_size=prompt_len,
                                    max_size=prompt_len), label="prompt")
        self.add_request(prompt, total - prompt_len, sampling)

    def add_request(self, prompt: list[int], max_tokens: int, sampling: dict[str, Any]) -> None:
        total = len(prompt) + max_tokens
        rid = f"r{self.count}"
        self.count += 1
        before = self.stats("before add")
        too_large = ceil_div(total, self.cfg.block_size) > self.cfg.num_blocks
        what = (f"add({rid!r}, {prompt}, max_tokens={max_tokens}, {sampling}) with "
                f"num_blocks={self.cfg.num_blocks}, block_size={self.cfg.block_size}")
        try:
            self.engine.add(rid, list(prompt), max_tokens, dict(sampling))
        except ValueError as e:
            self.check({"errors"}, too_large,
                       f"{what} raised ValueError({e}), but ceil((len(prompt) + max_tokens) "
                       f"/ block_size) = {ceil_div(total, self.cfg.block_size)} blocks fit "
                       "the pool")
            self.check({"errors"}, self.engine.stats() == before,
                       f"{what} raised but changed the stats")
            if not too_large:   # the engine refused it: it is not live
                self.gone.add(rid)
            return
        self.check({"errors"}, not too_large,
                   f"{what} must raise ValueError: it needs ceil({total} / "
                   f"{self.cfg.block_size}) = {ceil_div(total, self.cfg.block_size)} blocks")
        self.reqs[rid] = Req(list(prompt), max_tokens, dict(sampling))
        s = self.stats(f"after {what}")
        self.check({"budget_order", "preemption"},
                   list(s["waiting"]) == list(before["waiting"]) + [rid],
                   f"after {what}: the waiting queue must be {before['waiting'] + [rid]} "
                   f"(a new request goes to the back), got {s['waiting']}")

    @precondition(lambda self: self.reqs)
    @rule(data=st.data())
    def abort(self, data: st.DataObject) -> None:
        self.abort_request(data.draw(st.sampled_from(sorted(self.reqs)), label="abort"))

    def abort_request(self, rid: str) -> None:
        before = self.stats("before abort")
        held = len(before["requests"][rid]["blocks"])
        self.engine.abort(rid)
        del self.reqs[rid]
        self.gone.add(rid)
        s = self.stats(f"after abort({rid!r})")
        self.check({"abort"}, s["free_blocks"] == before["free_blocks"] + held,
                   f"abort({rid!r}) must return its {held} blocks: free_blocks went "
                   f"{before['free_blocks']} -> {s['free_blocks']}")
        self.check({"abort"}, s["running"] == [r for r in before["running"] if r != rid]
                   and s["waiting"] == [r for r in before["waiting"] if r != rid],
                   f"abort({rid!r}) must only remove it from its queue: running "
                   f"{before['running']} -> {s['running']}, waiting {before['waiting']} -> "
                   f"{s['waiting']}")

    @rule(data=st.data())
    def bad_call(self, data: st.DataObject) -> None:
        """Bad input raises and changes nothing."""
        before = self.stats("before a bad call")
        kinds = ["abort_gone", "empty_prompt", "token_range", "max_tokens", "sampling"]
        if self.reqs:
            kinds.append("duplicate")
        kind = data.draw(st.sampled_from(kinds), label="bad")
        fresh = f"bad{self.count}"
        if kind == "abort_gone":
            rid = data.draw(st.sampled_from(sorted(self.gone | {"never"})), label="rid")
            what, exc, call = f"abort({rid!r}) (not live)", KeyError, lambda: self.engine.abort(rid)
        else:
            rid, prompt, max_tokens, sampling = fresh, [1], 1, dict(GREEDY)
            if kind == "duplicate":
                rid = data.draw(st.sampled_from(sorted(self.reqs)), label="rid")
            elif kind == "empty_prompt":
                prompt = []
            elif kind == "token_range":
                prompt = [1, data.draw(st.sampled_from([-1, VOCAB, VOCAB + 7]), label="tok")]
            elif kind == "max_tokens":
                max_tokens = data.draw(st.sampled_from([0, -1]), label="max_tokens")
            else:
                sampling = data.draw(st.sampled_from([
                    {"temperature": -1.0, "top_p": 0.9, "seed": 1},
                    {"temperature": 1.0, "top_p": 0.0, "seed": 1},
                    {"temperature": 1.0, "top_p": 0.9}]), label="sampling")
            what, exc = f"add({rid!r}, {prompt}, {max_tokens}, {sampling}) ({kind})", ValueError
            call = lambda: self.engine.add(rid, prompt, max_tokens, sampling)  # noqa: E731
        try:
            call()
        except exc:
            pass
        except Exception as e:   # noqa: BLE001
            self.check({"errors"}, False, f"{what} must raise {exc.__name__}, got {e!r}")
        else:
            self.check({"errors"}, False, f"{what} must raise {exc.__name__}")
        self.check({"errors"}, self.engine.stats() == before, f"{what} changed the stats")

    @precondition(lambda self: self.reqs)
    @rule(k=st.integers(1, 3))
    def step(self, k: int) -> None:
        for _ in range(k):
            self.do_step("step()")


    def do_step(self, what: str) -> None:
        cfg = self.cfg
        before = self.stats(f"before {what}")
        if not self.consistent(before):
            raise AssertionError(f"before {what}: the stats are inconsistent: {before}")
        exp = expect_step(cfg, self.reqs, state_of(before))
        record = self.engine.step()
        self.check(EVERYTHING, isinstance(record, dict) and set(record) == {
            "decodes", "prefills", "preempted", "outputs"},
            f"{what} must return a dict with the keys decodes, prefills, preempted, outputs: "
            f"{record}")
        decodes = [str(r) for r in record["decodes"]]
        prefills = [(str(r), int(n)) for r, n in record["prefills"]]
        preempted = [str(r) for r in record["preempted"]]
        outputs = [(str(r), int(t), bool(f)) for r, t, f in record["outputs"]]
        ctx = (f"{what} from running={before['running']} waiting={before['waiting']} "
               f"free_blocks={before['free_blocks']} requests={before['requests']} "
               f"(num_blocks={cfg.num_blocks}, block_size={cfg.block_size}, "
               f"max_batched_tokens={cfg.max_batched_tokens}, max_running={cfg.max_running})")
        mentioned = set(decodes) | {r for r, _ in prefills} | set(preempted) | \
            {r for r, _, _ in outputs}
        self.check({"abort", "sampling_stop"}, mentioned <= set(self.reqs),
                   f"{ctx}: the record mentions {sorted(mentioned - set(self.reqs))}, which "
                   "are not live (finished or aborted)")
        tokens = len(decodes) + sum(n for _, n in prefills)
        self.check({"budget_order"}, tokens <= cfg.max_batched_tokens,
                   f"{ctx}: the step computed {tokens} tokens (decodes {decodes}, prefills "
                   f"{prefills}), over max_batched_tokens={cfg.max_batched_tokens}")
        self.check({"budget_order"}, decodes == exp.decodes,
                   f"{ctx}: decodes must be {exp.decodes} (every decoding request, oldest "
                   f"first), got {decodes}")
        self.check({"budget_order"}, prefills == exp.prefills,
                   f"{ctx}: prefills must be {exp.prefills} (the budget left after the "
                   f"decodes, first come first served), got {prefills}")
        self.check({"preemption"}, preempted == exp.preempted,
                   f"{ctx}: preempted must be {exp.preempted} (the most recently admitted "
                   f"first, and only while the pool is short), got {preempted}")
        # the outputs the engine's own schedule implies
        computed = {r: v["computed"] for r, v in before["requests"].items()}
        implied = []
        for rid, n in [(r, 1) for r in decodes] + prefills:
            if rid not in self.reqs:
                continue
            start = 0 if rid in before["waiting"] else computed[rid]
            if start + n >= self.reqs[rid].length:
                token, finished = next_token(self.reqs[rid])
                implied.append((rid, token, finished))
        self.check({"sampling_stop"}, outputs == implied,
                   f"{ctx}: the step computed decodes {decodes} and prefills {prefills}, so "
                   f"its outputs must be {implied} (token k = sample(model_logits(sequence), "
                   f"sampling, k); finished on EOS or the max_tokens-th token), got {outputs}")
        # streams
        for rid, token, finished in outputs:
            req = self.reqs.get(rid)
            if req is None or rid in self.finished:
                continue
            req.stream.append(token)
            if rid not in self.refs:
                self.refs[rid] = reference_generation(req.prompt, req.max_tokens, req.sampling)
            ref = self.refs[rid]
            self.check({"exact_streams", "preemption"}, req.stream == ref[:len(req.stream)],
                       f"{ctx}: request {rid!r} (prompt {req.prompt}, max_tokens "
                       f"{req.max_tokens}, {req.sampling}) has streamed {req.stream}; the "
                       f"model's generation is {ref}")
            if finished:
                self.check({"exact_streams"}, req.stream == ref,
                           f"{ctx}: request {rid!r} finished with {req.stream}; the model's "
                           f"generation is {ref}")
                self.finished[rid] = self.reqs.pop(rid)
                self.gone.add(rid)
        after = self.stats(f"after {what}")
        want: State = exp.after
        self.check({"budget_order", "preemption"}, after["running"] == want.running,
                   f"{ctx}: running must then be {want.running}, got {after['running']}")
        self.check({"preemption", "budget_order"}, after["waiting"] == want.waiting,
                   f"{ctx}: waiting must then be {want.waiting} (preempted requests at the "
                   f"front in admission order, admitted ones gone), got {after['waiting']}")
        self.check({"budget_order"}, len(after["running"]) <= cfg.max_running,
                   f"{ctx}: {len(after['running'])} running requests, over max_running")
        got = {r: v["computed"] for r, v in after["requests"].items()}
        self.check({"block_accounting", "preemption"}, got == want.computed,
                   f"{ctx}: computed must then be {want.computed}, got {got}")
        self.check({"block_accounting"}, after["free_blocks"] == want.free,
                   f"{ctx}: free_blocks must then be {want.free}, got {after['free_blocks']}")
        for rid, held in before["requests"].items():     # blocks are listed in sequence
            if rid in preempted or rid not in after["requests"]:   # order: a sequence only
                continue                                           # grows at its end
            now_held = after["requests"][rid]["blocks"]
            self.check({"block_accounting"}, list(now_held[:len(held["blocks"])]) ==
                       list(held["blocks"]),
                       f"{ctx}: request {rid!r} held blocks {held['blocks']} (in sequence "
                       f"order) and now lists {now_held}: its first blocks must stay first")

    def teardown(self) -> None:
        """Drain: every live request finishes within sum(len(prompt) + max_tokens) steps."""
        if self.engine is None:
            return
        bound = sum(len(r.prompt) + r.max_tokens for r in self.reqs.values())
        for _ in range(bound):
            if not self.reqs:
                break
            self.do_step("step() (drain)")
        self.check({"exact_streams"}, not self.reqs,
                   f"the engine did not drain in {bound} steps (the sum of len(prompt) + "
                   f"max_tokens over the live requests): {self.engine.stats()}")


def _machine(item: str) -> Any:
    cls = type(f"Engine_{item}", (EngineMachine,), {"ITEM": item})
    case = cls.TestCase
    case.settings = settings(stateful_step_count=20,
                             max_examples=max(10, settings.default.max_examples // 5))
    return pytest.mark.rubric(item)(case)


TestMachineBudgetOrder = _machine("budget_order")
TestMachineBlockAccounting = _machine("block_accounting")
TestMachinePreemption = _machine("preemption")
TestMachineSamplingStop = _machine("sampling_stop")
TestMachineAbort = _machine("abort")
TestMachineErrors = _machine("errors")
TestMachineExactStreams = _machine("exact_streams")
