"""Hidden stateful tests for deferred_reclaim: random interleavings against a model.

One machine drives add/grow/launch/complete/abort/finish with a small id alphabet (ids are
reused all the time), several steps in flight per request completing in any order,
duplicate and unknown completions, ends of ended and unknown ids, and a short pool. The
model tracks every incarnation, every step in flight and the pages each step read when it
was launched (what the GPU may still be touching). After every call the machine compares
what the implementation shows (free_pages, pages_of of every live id, outputs, errors)
with the model, and checks that no page handed out is held by a live request, waiting, or
read by a step in flight. At the end a drain completes every step, ends every request and
takes back the whole pool: it must come back, every page once.

The machine runs once per rubric item. Each check belongs to the rubric item of the rule
it tests, decided by the call and the situation (an end of a live id with a step in
flight: deferred_free; an end of an id that is not live: racing_ends; ...). A run scores
against its own item only: the first discrepancy of another item ends the run quietly,
since the model and the implementation no longer agree from there on. So one bug costs
the item of the rule it breaks, not every item.
"""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from graders.impl import kata_impl

dr = kata_impl("deferred_reclaim")

IDS = ["a", "b", "c"]
GHOST = "ghost"  # never added


class _Stop(Exception):
    """The implementation broke a rule of another rubric item: stop this run quietly."""


class Inc:
    """A model incarnation: one life of a request id."""

    def __init__(self, rid: str, gen: int, pages: list[int]) -> None:
        self.rid, self.gen, self.pages = rid, gen, pages
        self.steps: set[int] = set()   # steps in flight that it was launched in
        self.ended = False
        self.overlapped = False  # one of its steps completed while another was in flight

    def __repr__(self) -> str:
        return f"<{self.rid!r} gen {self.gen}>"


class Step:
    def __init__(self, sid: int, incs: list[Inc]) -> None:
        self.sid, self.incs = sid, incs
        self.reads = {p for inc in incs for p in inc.pages}  # what the GPU touches


def as_pairs(out):
    """complete()'s result as a sorted list of (id, token) tuples; None if malformed."""
    try:
        pairs = [tuple(x) for x in out]
        return sorted(pairs) if all(len(x) == 2 for x in pairs) else None
    except TypeError:
        return None


def guarded(fn):
    """Skip the rule once the run has stopped; turn _Stop into a quiet stop."""
    def wrapper(self, *args, **kwargs):
        if self.stopped:
            return
        try:
            fn(self, *args, **kwargs)
        except _Stop:
            self.stopped = True
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    return wrapper


class ReclaimMachine(RuleBasedStateMachine):
    """Random interleavings of every call against the model of what the GPU still reads.

    Rules: Three states; Deferred free; Pipelining; Incarnations
    Rules: Output; Idempotent completion; Racing ends; Errors change nothing
    """

    RUBRIC = ""

    def __init__(self) -> None:
        super().__init__()
        self.r = None
        self.stopped = False
        self.failed = False
        self.log: list[str] = []
        self.live: dict[str, Inc] = {}
        self.waiting: list[Inc] = []          # ended, pages held back by steps in flight
        self.steps: dict[int, Step] = {}      # in flight
        self.issued: set[int] = set()         # every step id launch returned
        self.done: list[int] = []             # completed step ids
        self.gens: dict[str, set[int]] = {}
        self.latest: dict[str, Inc] = {}      # newest incarnation of each id
        self.num_pages = 0
        self.token_seq = 0

    # -- reporting ----------------------------------------------------------------
    def check(self, item: str, ok: bool, msg: str) -> None:
        if ok:
            return
        if item != self.RUBRIC:
            raise _Stop()
        self.failed = True
        calls = "\n  ".join(self.log[-30:])
        raise AssertionError(
            f"[{item}] {msg}\nmodel: live={self.live} waiting={self.waiting} "
            f"steps in flight={ {s: st_.incs for s, st_ in self.steps.items()} }\n"
            f"calls (last 30):\n  {calls}")

    def call(self, item: str, what: str, fn, *args):
        """Call the implementation, expecting success."""
        try:
            result = fn(*args)
        except Exception as exc:  # noqa: BLE001 - any exception is a finding
            self.log.append(f"{what} -> raised {type(exc).__name__}: {exc}")
            self.check(item, False, f"{what} raised {type(exc).__name__}: {exc}; "
                                    "the model expects it to succeed")
            raise AssertionError("unreachable") from exc
        self.log.append(f"{what} -> {result!r}")
        return result

    def call_raises(self, item: str, what: str, exc_type: type, fn, *args) -> None:
        try:
            result = fn(*args)
        except exc_type as exc:
            self.log.append(f"{what} -> raised {type(exc).__name__} (expected)")
            return
        except Exception as exc:  # noqa: BLE001
            self.log.append(f"{what} -> raised {type(exc).__name__}: {exc}")
            self.check(item, False, f"{what} raised {type(exc).__name__}: {exc}; "
                                    f"expected {exc_type.__name__}")
            return
        self.log.append(f"{what} -> {result!r}")
        self.check(item, False, f"{what} returned {result!r}; expected {exc_type.__name__}")

    # -- the model's view -----------------------------------------------------------
    def model_free(self) -> int:
        used = sum(len(i.pages) for i in self.live.values())
        used += sum(len(i.pages) for i in self.waiting)
        return self.num_pages - used

    def observe(self, item: str, after: str) -> None:
        """Compare free_pages() and every live pages_of() with the model."""
        free = self.call(item, "r.free_pages()", self.r.free_pages)
        want = self.model_free()
        self.check(item, free == want,
                   f"after {after}: free_pages() is {free}, expected {want} (live: "
                   f"{ {k: len(v.pages) for k, v in self.live.items()} } pages, waiting for "
                   f"steps in flight: {sum(len(i.pages) for i in self.waiting)} pages)")
        for rid, inc in self.live.items():
            got = self.call(item, f"r.pages_of({rid!r})", self.r.pages_of, rid)
            self.check(item, list(got) == inc.pages,
                       f"after {after}: pages_of({rid!r}) is {got}, expected {inc.pages} "
                       f"(the live incarnation {inc}'s pages, in the order handed out)")

    def check_fresh(self, what: str, pages, n: int, owner: str) -> list[int]:
        """Pages just handed out: n distinct pages in range, and free in the model."""
        pages = list(pages)
        self.check("accounting", len(pages) == n and len(set(pages)) == n,
                   f"{what} handed out {pages}; expected {n} distinct pages")
        self.check("accounting", all(isinstance(p, int) and 0 <= p < self.num_pages
                                     for p in pages),
                   f"{what} handed out {pages}: pages lie in 0..{self.num_pages - 1}")
        reads = {p for s in self.steps.values() for p in s.reads}
        for p in pages:
            self.check("deferred_free", p not in reads,
                       f"{what} handed page {p} to {owner!r}, but a step in flight still reads "
                       f"it (steps: { {s: sorted(x.reads) for s, x in self.steps.items()} })")
            waiting = [i for i in self.waiting if p in i.pages]
            self.check("deferred_free", not waiting,
                       f"{what} handed page {p} to {owner!r}, but it still waits for the "
                       f"steps in flight of the ended {waiting}")
            holders = [rid for rid, i in self.live.items() if p in i.pages]
            self.check("accounting", not holders,
                       f"{what} handed page {p} to {owner!r}, but live {holders} hold it")
        return pages

    # -- rules --------------------------------------------------------------------
    @initialize(num_pages=st.integers(3, 12))
    def setup(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.r = dr.Reclaimer(num_pages)
        self.log.append(f"r = Reclaimer({num_pages})")

    @rule(rid=st.sampled_from(IDS), n=st.integers(1, 6))
    @guarded
    def add(self, rid: str, n: int) -> None:
        what = f"r.add({rid!r}, {n})"
        if rid in self.live:
            self.call_raises("generation_identity", what, ValueError, self.r.add, rid, n)
            self.observe("generation_identity", f"{what} of a live id (an error)")
            return
        if n > self.model_free():
            self.call_raises("accounting", what, dr.OutOfPages, self.r.add, rid, n)
            self.observe("accounting", f"{what} with {self.model_free()} pages free (an error)")
            return
        gen = self.call("accounting", what, self.r.add, rid, n)
        seen = self.gens.setdefault(rid, set())
        self.check("generation_identity", isinstance(gen, int) and gen not in seen,
                   f"{what} returned generation {gen!r}; earlier incarnations of {rid!r} "
                   f"got {sorted(seen)}: each incarnation needs a new one")
        seen.add(gen)
        pages = self.call("accounting", f"r.pages_of({rid!r})", self.r.pages_of, rid)
        pages = self.check_fresh(what, pages, n, rid)
        self.live[rid] = self.latest[rid] = Inc(rid, gen, pages)
        self.observe("accounting", what)

    @rule(rid=st.sampled_from(IDS), n=st.integers(0, 4))
    @guarded
    def grow(self, rid: str, n: int) -> None:
        what = f"r.grow({rid!r}, {n})"
        if rid not in self.live:
            item = "generation_identity" if rid in self.gens else "accounting"
            self.call_raises(item, what, KeyError, self.r.grow, rid, n)
            self.observe(item, f"{what} of an id that is not live (an error)")
            return
        if n > self.model_free():
            self.call_raises("accounting", what, dr.OutOfPages, self.r.grow, rid, n)
            self.observe("accounting", f"{what} with {self.model_free()} pages free (an error)")
            return
        new = self.call("accounting", what, self.r.grow, rid, n)
        new = self.check_fresh(what, new, n, rid)
        self.live[rid].pages.extend(new)
        self.observe("accounting", what)

    @precondition(lambda self: self.live)
    @rule()
    @guarded
    def launch_all(self) -> None:
        """A step over every live request, the usual batch."""
        self.launch_ids(sorted(self.live))

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    @guarded
    def launch(self, data) -> None:
        ids = data.draw(st.lists(st.sampled_from(sorted(self.live)), min_size=1, unique=True),
                        label="ids")
        self.launch_ids(ids)

    def launch_ids(self, ids: list[str]) -> None:
        what = f"r.launch({ids!r})"
        sid = self.call("accounting", what, self.r.launch, ids)
        self.check("idempotent_completion", sid not in self.issued,
                   f"{what} returned step id {sid!r}, which an earlier step already had "
                   f"(issued: {sorted(self.issued)}); step ids are never reused")
        self.issued.add(sid)
        step = Step(sid, [self.live[rid] for rid in ids])
        for inc in step.incs:
            inc.steps.add(sid)
        self.steps[sid] = step
        self.observe("accounting", what)

    def launch_not_live(self, data) -> None:
        dead = data.draw(st.sampled_from([rid for rid in IDS if rid not in self.live]),
                         label="dead")
        others = data.draw(st.lists(st.sampled_from(sorted(self.live)), unique=True)
                           if self.live else st.just([]), label="others")
        ids = others + [dead]
        ids = data.draw(st.permutations(ids), label="order")
        item = "generation_identity" if dead in self.gens else "accounting"
        what = f"r.launch({ids!r}) with {dead!r} not live"
        self.call_raises(item, what, KeyError, self.r.launch, ids)
        self.observe(item, f"{what} (an error)")

    def tokens_for(self, data) -> dict[str, int]:
        self.token_seq += 1
        keep = data.draw(st.lists(st.sampled_from(IDS + [GHOST]), unique=True, max_size=4)
                         | st.just(IDS + [GHOST]), label="tokens for")
        return {rid: 1000 * self.token_seq + i for i, rid in enumerate(keep)}

    @precondition(lambda self: self.steps)
    @rule(data=st.data())
    @guarded
    def complete_oldest(self, data) -> None:
        self.complete_step(min(self.steps), self.tokens_for(data))

    @precondition(lambda self: self.steps)
    @rule(data=st.data())
    @guarded
    def complete(self, data) -> None:
        sid = data.draw(st.sampled_from(sorted(self.steps)), label="step")
        self.complete_step(sid, self.tokens_for(data))

    def complete_step(self, sid: int, tokens: dict[str, int]) -> None:
        step = self.steps[sid]
        what = f"r.complete({sid!r}, {tokens!r})"
        out = self.call("generation_identity", what, self.r.complete, sid, tokens)
        want = sorted((i.rid, tokens[i.rid]) for i in step.incs
                      if self.live.get(i.rid) is i and i.rid in tokens)
        self.check("generation_identity", as_pairs(out) == want,
                   f"{what} returned {out}, expected {want} in any order: a token goes only "
                   f"to a request of the step that is still the same live incarnation "
                   f"(step {sid} launched {step.incs}; live now: {self.live})")
        # which rule a page-state discrepancy here breaks
        reused = any(self.latest[i.rid] is not i for i in step.incs)  # the id came back
        still_waiting = any(i.ended and len(i.steps) > 1 for i in step.incs)
        del self.steps[sid]
        self.done.append(sid)
        for inc in step.incs:
            inc.steps.discard(sid)
            inc.overlapped |= bool(inc.steps)
            if inc.ended and not inc.steps:
                self.waiting.remove(inc)
        got = self.call("deferred_free", "r.free_pages()", self.r.free_pages)
        if still_waiting and isinstance(got, int) and got > self.model_free():
            item = "pipelined_steps"  # freed while another step still reads the pages
        elif reused:
            item = "generation_identity"
        else:
            item = "deferred_free"
        self.observe(item, what)

    @precondition(lambda self: self.issued)
    @rule(data=st.data())
    @guarded
    def complete_again_or_unknown(self, data) -> None:
        top = max(self.issued)
        choices = [s for s in (top + 1, top + 7, -1) if s not in self.steps] + self.done
        sid = data.draw(st.sampled_from(choices), label="stale step")
        tokens = self.tokens_for(data)
        kind = "a duplicate" if sid in self.issued else "an unknown"
        what = f"r.complete({sid!r}, {tokens!r}), {kind} completion"
        out = self.call("idempotent_completion", what, self.r.complete, sid, tokens)
        self.check("idempotent_completion", as_pairs(out) == [],
                   f"{what} returned {out}; it must emit nothing")
        self.observe("idempotent_completion", what)

    @precondition(lambda self: self.live)
    @rule(data=st.data(), how=st.sampled_from(["abort", "finish"]))
    @guarded
    def end_live(self, data, how: str) -> None:
        rid = data.draw(st.sampled_from(sorted(self.live)), label="rid")
        self.end_one(rid, how)

    @precondition(lambda self: any(i.steps for i in self.live.values()))
    @rule(data=st.data(), how=st.sampled_from(["abort", "finish"]), n=st.integers(1, 3))
    @guarded
    def end_in_flight_and_reuse(self, data, how: str, n: int) -> None:
        """The story of the kata: a disconnect after launch, then the id comes back."""
        rid = data.draw(st.sampled_from(sorted(r for r, i in self.live.items() if i.steps)),
                        label="rid")
        self.end_one(rid, how)
        self.add(rid, n)

    def end_one(self, rid: str, how: str) -> None:
        inc = self.live.pop(rid)
        inc.ended = True
        what = f"r.{how}({rid!r})"
        if inc.steps:
            self.waiting.append(inc)
            what += f" with steps {sorted(inc.steps)} in flight"
        else:
            what += " with no step in flight"
        self.call("deferred_free", what, getattr(self.r, how), rid)
        got = self.call("deferred_free", "r.free_pages()", self.r.free_pages)
        if any(i.rid == rid for i in self.waiting if i is not inc):
            # an older incarnation of the same id still waits: a slip here is about identity
            item = "generation_identity"
        elif inc.overlapped and inc.steps and isinstance(got, int) and got > self.model_free():
            # freed although a step still reads the pages, after one of several overlapping
            # steps completed: the implementation lost count of the steps in flight
            item = "pipelined_steps"
        else:
            item = "deferred_free"
        self.observe(item, what)

    @rule(data=st.data(), how=st.sampled_from(["abort", "finish"]))
    @guarded
    def end_not_live(self, data, how: str) -> None:
        rid = data.draw(st.sampled_from([x for x in IDS + [GHOST] if x not in self.live]),
                        label="rid")
        state = "never added" if rid not in self.gens else "already ended"
        what = f"r.{how}({rid!r}) of an id that is not live ({state})"
        self.call("racing_ends", what, getattr(self.r, how), rid)
        self.observe("racing_ends", what)

    @rule(kind=st.sampled_from(["launch_not_live", "launch_not_live", "launch_empty",
                                "launch_repeat", "grow_negative", "add_zero"]), data=st.data())
    @guarded
    def bad_call(self, kind: str, data) -> None:
        live = sorted(self.live)
        if kind == "launch_not_live":
            if len(live) < len(IDS):
                self.launch_not_live(data)
            return
        if kind == "launch_empty":
            self.call_raises("accounting", "r.launch([])", ValueError, self.r.launch, [])
        elif kind == "launch_repeat" and live:
            ids = [live[0], live[0]]
            self.call_raises("accounting", f"r.launch({ids!r})", ValueError, self.r.launch, ids)
        elif kind == "grow_negative" and live:
            self.call_raises("accounting", f"r.grow({live[0]!r}, -1)", ValueError,
                             self.r.grow, live[0], -1)
        elif kind == "add_zero":
            rid = next((x for x in IDS if x not in self.live), None)
            if rid is None:
                return
            self.call_raises("accounting", f"r.add({rid!r}, 0)", ValueError, self.r.add, rid, 0)
        else:
            return
        self.observe("accounting", f"a bad call ({kind}, an error)")

    # -- the drain ------------------------------------------------------------------
    def teardown(self) -> None:
        if self.r is None or self.stopped or self.failed:
            return
        try:
            # complete the newest steps first: completion order is free
            for sid in sorted(self.steps, reverse=True):
                self.complete_step(sid, {})
            for rid in sorted(self.live):
                inc = self.live.pop(rid)
                inc.ended = True
                self.call("deferred_free", f"r.finish({rid!r}) (drain)", self.r.finish, rid)
                self.observe("deferred_free", f"r.finish({rid!r}) in the drain")
            free = self.call("accounting", "r.free_pages()", self.r.free_pages)
            self.check("accounting", free == self.num_pages,
                       f"after the drain (every step completed, every request ended) "
                       f"free_pages() is {free}, expected all {self.num_pages}")
            self.call("accounting", f"r.add('drain', {self.num_pages})", self.r.add,
                      "drain", self.num_pages)
            pages = self.call("accounting", "r.pages_of('drain')", self.r.pages_of, "drain")
            self.check("accounting", sorted(pages) == list(range(self.num_pages)),
                       f"after the drain, one request took the whole pool and got "
                       f"{sorted(pages)}; expected every page 0..{self.num_pages - 1} once")
        except _Stop:
            return


# Six machines run the same rules; each costs about 10 calls per step, and graded runs
# cross a process boundary on every call. A third of the profile's examples, of 30 steps
# each, keeps the whole file near 15 s under the grade profile (not isolated).
MACHINE_SETTINGS = settings(max_examples=max(10, settings.default.max_examples // 3),
                            stateful_step_count=30)


def _machine_for(item: str):
    machine = type(f"ReclaimMachine_{item}", (ReclaimMachine,), {"RUBRIC": item})
    case = machine.TestCase
    case.settings = MACHINE_SETTINGS
    return pytest.mark.rubric(item)(case)


TestMachineDeferredFree = _machine_for("deferred_free")
TestMachineGenerationIdentity = _machine_for("generation_identity")
TestMachineIdempotentCompletion = _machine_for("idempotent_completion")
TestMachineRacingEnds = _machine_for("racing_ends")
TestMachinePipelinedSteps = _machine_for("pipelined_steps")
TestMachineAccounting = _machine_for("accounting")
