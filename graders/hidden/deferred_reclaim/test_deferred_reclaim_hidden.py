"""Hidden targeted tests for deferred_reclaim: the corner cases of KATAS.md and issue 6.

Each test names the rule it checks in its rubric mark and asserts only that rule, so one
bug costs the item it breaks. Where a rule is "changes nothing", a twin Reclaimer that
skips the call is the oracle.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graders.impl import kata_impl

dr = kata_impl("deferred_reclaim")

ENDS = ["abort", "finish"]


def end(r, how: str, rid: str) -> None:
    getattr(r, how)(rid)


def attempt(fn, *args):
    """Call fn; its result, or the name of the exception it raised."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - compared between twins
        return type(exc).__name__


def state(r, ids=()) -> tuple:
    """What the Reclaimer shows: free count and the pages of the given live ids."""
    return (r.free_pages(), {rid: attempt(r.pages_of, rid) for rid in ids})


# -- deferred_free ------------------------------------------------------------------------
@pytest.mark.rubric("deferred_free")
@pytest.mark.parametrize("how", ENDS)
def test_abort_after_launch_then_reuse_then_late_completion_pages(how):
    """Rules: Deferred free; Incarnations"""
    r = dr.Reclaimer(6)
    r.add("a", 3)
    old = set(r.pages_of("a"))
    s1 = r.launch(["a"])
    end(r, how, "a")
    assert r.free_pages() == 3, f"{how} with s1 in flight: a's 3 pages must wait, not be free"
    r.add("a", 3)
    new = set(r.pages_of("a"))
    assert not old & new, (f"the reused 'a' got pages {sorted(old & new)} that s1 (launched "
                           "for the old 'a', still in flight) reads")


@pytest.mark.rubric("deferred_free")
@pytest.mark.parametrize("how", ENDS)
def test_waiting_pages_are_never_handed_out(how):
    """Rules: Three states; Deferred free"""
    r = dr.Reclaimer(5)
    r.add("a", 2)
    r.grow("a", 1)
    read = set(r.pages_of("a"))
    step = r.launch(["a"])
    end(r, how, "a")
    r.add("b", 2)
    assert not set(r.pages_of("b")) & read, "b got a page that the step in flight reads"
    for n in (1, 3):
        with pytest.raises(dr.OutOfPages):
            r.grow("b", n)   # the 3 waiting pages are not free
    r.complete(step, {})
    assert r.free_pages() == 3


@pytest.mark.rubric("deferred_free")
@given(k=st.integers(0, 1), ended_after=st.integers(0, 1), how=st.sampled_from(ENDS),
       pages=st.integers(1, 4))
def test_freed_exactly_when_last_step_completes(k, ended_after, how, pages):
    """k steps (none or one: several in flight is pipelined_steps) launched and completed;
    the request ends after ``ended_after`` of them completed. Pages are free exactly from
    the moment both the end and the last completion have happened.
    Rule: Deferred free"""
    ended_after = min(ended_after, k)
    r = dr.Reclaimer(8)
    r.add("a", pages)
    steps = [r.launch(["a"]) for _ in range(k)]
    log = [f"add('a', {pages})", f"{k} steps launched: {steps}"]
    for i in range(k + 1):
        if i == ended_after:
            end(r, how, "a")
            log.append(f"{how}('a')")
            want = 8 if i == k else 8 - pages
            assert r.free_pages() == want, (
                f"{'; '.join(log)}: free_pages() is {r.free_pages()}, expected {want} "
                f"({k - i} steps still in flight)")
        if i < k:
            r.complete(steps[i], {})
            log.append(f"complete({steps[i]})")
            if i + 1 > ended_after:
                want = 8 if i + 1 == k else 8 - pages
                assert r.free_pages() == want, (
                    f"{'; '.join(log)}: free_pages() is {r.free_pages()}, expected {want}")


@pytest.mark.rubric("deferred_free")
@pytest.mark.parametrize("how", ENDS)
def test_pages_grown_after_the_launch_wait_too(how):
    """Review: only the pages held at launch waited; pages grown later came back at once.
    Rule: Deferred free"""
    r = dr.Reclaimer(6)
    r.add("a", 2)
    step = r.launch(["a"])
    r.grow("a", 2)
    held = set(r.pages_of("a"))
    end(r, how, "a")
    assert r.free_pages() == 2, (
        f"add('a', 2), launch, grow('a', 2), {how}('a') with the step in flight: all 4 of "
        f"a's pages wait together for the step, so 2 are free; free_pages() is "
        f"{r.free_pages()}")
    r.add("b", 2)
    assert not set(r.pages_of("b")) & held, "b got one of a's waiting pages"
    r.complete(step, {})
    assert r.free_pages() == 4


@pytest.mark.rubric("deferred_free")
def test_step_over_several_requests_frees_only_the_ended_ones():
    """Rule: Deferred free"""
    r = dr.Reclaimer(9)
    for rid in "abc":
        r.add(rid, 3)
    step = r.launch(["a", "b", "c"])
    r.abort("b")
    r.complete(step, {"a": 1, "b": 2, "c": 3})
    assert r.free_pages() == 3, "only b ended: exactly b's 3 pages come back"
    assert len(r.pages_of("a")) == 3 and len(r.pages_of("c")) == 3


# -- generation_identity --------------------------------------------------------------------
@pytest.mark.rubric("generation_identity")
@pytest.mark.parametrize("how", ENDS)
def test_abort_after_launch_then_reuse_then_late_completion_output(how):
    """Rules: Incarnations; Output"""
    r = dr.Reclaimer(6)
    r.add("a", 3)
    s1 = r.launch(["a"])
    end(r, how, "a")
    r.add("a", 3)
    mine = r.pages_of("a")
    out = r.complete(s1, {"a": 7})
    assert out == [], f"s1 was launched for the old 'a'; its token must not reach the new one: {out}"
    assert r.pages_of("a") == mine, "the late completion changed the new a's pages"
    s2 = r.launch(["a"])
    assert r.complete(s2, {"a": 8}) == [("a", 8)], "the new 'a' gets the tokens of its own steps"


def tokens_of(out):
    return sorted(tok for _, tok in out) if isinstance(out, list) else out


def pages_count(r, rid):
    pages = attempt(r.pages_of, rid)
    return len(pages) if isinstance(pages, list) else pages


def reuse_story(r, ids: list[str]) -> list:
    """Three incarnations with 1, 2, 3 pages, named ``ids``, each launched in a step; the
    first two end with the step in flight, then the steps complete out of order. Returns
    what r showed, without the names."""
    seen = []
    steps = []
    for i, rid in enumerate(ids):
        attempt(r.add, rid, i + 1)
        steps.append((rid, attempt(r.launch, [rid])))
        if i < 2:
            attempt(r.abort, rid)
        seen.append((f"incarnation {i} added", r.free_pages()))
    for j in (1, 0, 2):
        rid, step = steps[j]
        out = attempt(r.complete, step, {rid: 10 + j})
        seen.append((f"step of incarnation {j} completed", tokens_of(out), r.free_pages(),
                     pages_count(r, ids[2])))
    attempt(r.finish, ids[2])
    seen.append(("last one finished", r.free_pages()))
    return seen


@pytest.mark.rubric("generation_identity")
def test_reused_id_behaves_like_fresh_ids():
    """The same story twice: once reusing 'a', once with fresh ids. Whatever else the
    implementation does, reusing the id must not change what it shows.
    Rule: Incarnations"""
    r, twin = dr.Reclaimer(12), dr.Reclaimer(12)
    got, want = reuse_story(r, ["a", "a", "a"]), reuse_story(twin, ["x", "y", "z"])
    for g, w in zip(got, want):
        assert g == w, (f"reusing the id changed what the Reclaimer shows at '{g[0]}': {g} "
                        f"with 'a' reused, {w} with fresh ids.\nreused: {got}\nfresh:  {want}")


def both_waiting_story(r, old: str, new: str, new_first: bool) -> list:
    """The old and the new incarnation both end with a step in flight; the steps complete
    in either order. Returns the free counts."""
    seen = []
    attempt(r.add, old, 3)
    s1 = attempt(r.launch, [old])
    attempt(r.abort, old)
    attempt(r.add, new, 2)
    s2 = attempt(r.launch, [new])
    attempt(r.finish, new)
    seen.append(r.free_pages())
    for s in ((s2, s1) if new_first else (s1, s2)):
        attempt(r.complete, s, {})
        seen.append(r.free_pages())
    return seen


@pytest.mark.rubric("generation_identity")
def test_each_incarnation_waits_for_its_own_step():
    """Rule: Incarnations"""
    for new_first in (False, True):
        order = "new step first" if new_first else "old step first"
        r, twin = dr.Reclaimer(8), dr.Reclaimer(8)
        got = both_waiting_story(r, "a", "a", new_first)
        want = both_waiting_story(twin, "a", "b", new_first)
        assert got == want, (
            f"{order}: free_pages() along the story was {got} with 'a' reused but {want} "
            "with a fresh id: each completion must free the pages of the incarnation it was "
            "launched for, and only those")


@pytest.mark.rubric("generation_identity")
def test_output_only_for_live_incarnations_of_the_step():
    """Rule: Output"""
    r = dr.Reclaimer(8)
    for rid in "abc":
        r.add(rid, 1)
    step = r.launch(["a", "b", "c"])
    r.abort("a")
    r.finish("b")
    r.add("b", 1)                       # reused while the step is in flight
    out = r.complete(step, {"a": 1, "b": 2, "c": 3, "z": 4})
    assert sorted(out) == [("c", 3)], (
        f"a aborted, b finished (and was re-added), z was never in the step: only c gets "
        f"its token; got {out}")


@pytest.mark.rubric("generation_identity")
def test_token_zero_is_delivered():
    """Review: a truthiness test on the token dropped token id 0.
    Rule: Output"""
    r = dr.Reclaimer(4)
    r.add("a", 1)
    r.add("b", 1)
    step = r.launch(["a", "b"])
    out = r.complete(step, {"a": 0, "b": 0})
    assert sorted(out) == [("a", 0), ("b", 0)], (
        f"token id 0 is a token like any other: both live requests get it; got {out}")


@pytest.mark.rubric("generation_identity")
def test_generations_differ_across_many_reuses():
    """Rule: Incarnations"""
    r = dr.Reclaimer(64)
    gens = []
    for i in range(30):
        gens.append(r.add("a", 1))
        step = r.launch(["a"]) if i % 3 == 0 else None
        r.abort("a")
        if step is not None:
            r.complete(step, {})
    assert len(set(gens)) == len(gens), f"incarnations of 'a' shared a generation: {gens}"


def refused_launch_story(r, how: str, refused: bool) -> list:
    attempt(r.add, "a", 2)
    attempt(r.add, "b", 1)
    step = attempt(r.launch, ["a"])
    end(r, how, "a")
    seen = [state(r, ["b"])]
    if refused:
        seen.append(("launch", attempt(r.launch, ["b", "a"])))
        seen.append(("grow", attempt(r.grow, "a", 1)))
        seen.append(("pages_of", attempt(r.pages_of, "a")))
        seen.append(state(r, ["b"]))
    attempt(r.complete, step, {})
    attempt(r.finish, "b")
    seen.append(r.free_pages())
    return seen


@pytest.mark.rubric("generation_identity")
@pytest.mark.parametrize("how", ENDS)
def test_ended_id_cannot_be_launched_or_grown_while_waiting(how):
    """Rules: Incarnations; Errors change nothing"""
    got = refused_launch_story(dr.Reclaimer(6), how, True)
    twin = refused_launch_story(dr.Reclaimer(6), how, False)
    assert got[1:4] == [("launch", "KeyError"), ("grow", "KeyError"), ("pages_of", "KeyError")], (
        f"after {how}('a'), 'a' is not live (its pages wait for a step): launch(['b', 'a']), "
        f"grow('a', 1) and pages_of('a') must raise KeyError; got {got[1:4]}")
    assert got[0] == got[4], "a refused call must change nothing"
    assert got[-1] == twin[-1], (
        f"after the step completed and b finished, free_pages() is {got[-1]}, but {twin[-1]} "
        "without the refused calls: the refused launch must not have put a's pages in a step")


@pytest.mark.rubric("generation_identity")
def test_add_of_live_id_is_refused():
    """Rule: Errors change nothing"""
    r = dr.Reclaimer(6)
    r.add("a", 2)
    before = state(r, ["a"])
    with pytest.raises(ValueError):
        r.add("a", 1)
    with pytest.raises(ValueError):
        r.add("a", 99)              # also more than is free: the live id decides the error
    assert state(r, ["a"]) == before, "a refused add must change nothing"


# -- idempotent_completion ------------------------------------------------------------------
@pytest.mark.rubric("idempotent_completion")
def test_duplicate_completion_after_pages_were_reused():
    """Rule: Idempotent completion"""
    r = dr.Reclaimer(8)
    r.add("a", 4)
    s1 = r.launch(["a"])
    r.finish("a")
    r.complete(s1, {"a": 1})           # a's pages come back...
    r.add("b", 4)                      # ...and go to b
    s2 = r.launch(["b"])
    r.abort("b")                       # b's pages wait for s2
    before = state(r)
    out = r.complete(s1, {"a": 1, "b": 2})
    assert out == [], f"s1 already completed: a duplicate emits nothing, got {out}"
    assert state(r) == before, "a duplicate completion must not free b's waiting pages"
    assert s2 != s1


def duplicate_story(r, duplicate: bool) -> list:
    attempt(r.add, "a", 1)
    s1 = attempt(r.launch, ["a"])
    s2 = attempt(r.launch, ["a"])
    seen = [attempt(r.complete, s1, {"a": 1})]
    if duplicate:
        seen.append(attempt(r.complete, s1, {"a": 1}))
    attempt(r.abort, "a")
    seen.append(r.free_pages())
    attempt(r.complete, s2, {})
    seen.append(r.free_pages())
    return seen


@pytest.mark.rubric("idempotent_completion")
def test_duplicate_does_not_emit_or_count_again():
    """Rule: Idempotent completion"""
    got = duplicate_story(dr.Reclaimer(4), True)
    want = duplicate_story(dr.Reclaimer(4), False)
    assert got[1] == [], f"s1 already completed: its duplicate must emit nothing, got {got[1]}"
    assert [got[0]] + got[2:] == want, (
        f"the duplicate completion of s1 changed what happened next: {got} (with the "
        f"duplicate) vs {want} (without): it must not count as a completion of s2")


@pytest.mark.rubric("idempotent_completion")
@pytest.mark.parametrize("step_id", [-1, 0, 1, 7, 10**9])
def test_unknown_completion_changes_nothing(step_id):
    """Rule: Idempotent completion"""
    r = dr.Reclaimer(4)
    assert r.complete(step_id, {"a": 1}) == [], "no step was ever launched"
    r.add("a", 2)
    s = r.launch(["a"])
    r.abort("a")
    if step_id == s:
        return
    before = state(r)
    assert r.complete(step_id, {"a": 1}) == []
    assert state(r) == before, f"step {step_id} was never launched: nothing may change"


@pytest.mark.rubric("idempotent_completion")
def test_step_ids_are_never_reused():
    """Rule: Idempotent completion"""
    r = dr.Reclaimer(4)
    r.add("a", 1)
    r.add("b", 1)
    seen = []
    pending = []
    for i in range(60):
        pending.append(r.launch(["a"] if i % 2 else ["a", "b"]))
        seen.append(pending[-1])
        if i % 3 != 1:
            r.complete(pending.pop(0), {})
    assert len(set(seen)) == len(seen), f"a step id came back: {seen}"


# -- racing_ends --------------------------------------------------------------------------
@pytest.mark.rubric("racing_ends")
@pytest.mark.parametrize("first,second", [(a, b) for a in ENDS for b in ENDS])
@pytest.mark.parametrize("in_flight", [False, True])
def test_second_end_changes_nothing(first, second, in_flight):
    """r ends 'a' twice; twin ends it once. They must agree after every later call.
    Rule: Racing ends"""
    r, twin = dr.Reclaimer(6), dr.Reclaimer(6)
    steps = {}
    for x in (r, twin):
        x.add("a", 2)
        x.add("b", 2)
        if in_flight:
            steps[x] = x.launch(["a", "b"])
        end(x, first, "a")
    end(r, second, "a")
    story = f"{first}('a'), then {second}('a') with{'' if in_flight else 'out'} a step in flight"
    assert state(r, ["b"]) == state(twin, ["b"]), f"{story}: the second end changed something"
    if in_flight:
        for x in (r, twin):
            x.complete(steps[x], {})
        assert state(r, ["b"]) == state(twin, ["b"]), f"{story}, then the step completed"
        end(r, second, "a")
        assert state(r, ["b"]) == state(twin, ["b"]), f"{story}, and {second} again"
    for x in (r, twin):
        x.add("c", 2)
    assert state(r, ["b", "c"]) == state(twin, ["b", "c"])


def quiet_story(r, how: str, extra: bool) -> list:
    seen = []
    if extra:
        seen.append(attempt(getattr(r, how), "ghost"))
    attempt(r.add, "a", 2)
    attempt(r.finish, "a")
    if extra:
        seen.append(attempt(getattr(r, how), "a"))
        seen.append(attempt(getattr(r, how), "ghost"))
    attempt(r.add, "b", 4)                      # b may hold a's old pages
    if extra:
        seen.append(attempt(getattr(r, how), "a"))  # a's disconnect arrives late
    seen.append(state(r, ["b"]))
    seen.append(("add c", attempt(r.add, "c", 1)))
    seen.append(state(r, ["b"]))
    return seen


@pytest.mark.rubric("racing_ends")
@pytest.mark.parametrize("how", ENDS)
def test_end_of_unknown_or_reclaimed_id_is_quiet(how):
    """Rule: Racing ends"""
    got = quiet_story(dr.Reclaimer(4), how, True)
    want = quiet_story(dr.Reclaimer(4), how, False)
    assert got[:4] == [None] * 4, (
        f"{how} of an id that is not live ('ghost' never added, 'a' already finished) must "
        f"return None and raise nothing; got {got[:4]}")
    assert got[4:] == want, (
        f"ending 'ghost' and the finished 'a' (even after b got a's pages) must change "
        f"nothing: {got[4:]} with those calls, {want} without")


# -- pipelined_steps ------------------------------------------------------------------------
@pytest.mark.rubric("pipelined_steps")
@pytest.mark.parametrize("order", ["launch order", "newest first"])
def test_two_pipelined_steps_with_an_abort_between_them(order):
    """Rule: Pipelining"""
    r = dr.Reclaimer(8)
    r.add("a", 2)
    r.add("b", 2)
    s1 = r.launch(["a", "b"])
    r.abort("a")
    s2 = r.launch(["b"])
    r.abort("b")
    first = s1 if order == "launch order" else s2
    r.complete(first, {})
    most = 6 if first == s1 else 4
    assert r.free_pages() <= most, (
        f"a was in s1, b in s1 and s2; after only {'s1' if first == s1 else 's2'} completed "
        f"{'b' if first == s1 else 'a and b'} must still wait, so at most {most} pages are "
        f"free; free_pages() is {r.free_pages()}")


@pytest.mark.rubric("pipelined_steps")
@given(k=st.integers(2, 5), data=st.data(), how=st.sampled_from(ENDS))
def test_pages_wait_for_the_last_step_in_any_order(k, data, how):
    """Rule: Pipelining"""
    r = dr.Reclaimer(6)
    r.add("a", 3)
    steps = [r.launch(["a"]) for _ in range(k)]
    order = data.draw(st.permutations(steps), label="completion order")
    cut = data.draw(st.integers(0, k - 1), label="steps completed before the end")
    for s in order[:cut]:
        r.complete(s, {"a": 1})
    before_end = r.free_pages()
    end(r, how, "a")
    assert r.free_pages() == before_end, (
        f"{k} steps launched over a, completed in order {order}; {how}('a') after {cut} "
        f"completions, with {k - cut} of them still in flight (the newest may be done): "
        f"free_pages() went from {before_end} to {r.free_pages()}; a's pages must wait for "
        "the last step to complete")
    for j, s in enumerate(order[cut:-1], start=cut):
        before = r.free_pages()
        r.complete(s, {})
        assert r.free_pages() == before, (
            f"{k} steps launched over a, completed in order {order}; {how}('a') after {cut} "
            f"completions; completion number {j + 1} is not the last, yet free_pages() went "
            f"from {before} to {r.free_pages()}: a's pages must wait for the last step")


@pytest.mark.rubric("pipelined_steps")
def test_live_request_in_several_steps_gets_each_token():
    """Rules: Pipelining; Output"""
    r = dr.Reclaimer(4)
    r.add("a", 1)
    s1, s2, s3 = (r.launch(["a"]) for _ in range(3))
    got = [r.complete(s, {"a": t}) for s, t in ((s2, 20), (s1, 10), (s3, 30))]
    assert got == [[("a", 20)], [("a", 10)], [("a", 30)]], f"one token per completed step: {got}"


# -- accounting ---------------------------------------------------------------------------
@pytest.mark.rubric("accounting")
def test_grow_is_all_or_nothing():
    """Rule: Errors change nothing"""
    r = dr.Reclaimer(6)
    r.add("a", 2)
    r.add("b", 1)
    before = state(r, ["a", "b"])
    with pytest.raises(dr.OutOfPages):
        r.grow("a", 4)
    assert state(r, ["a", "b"]) == before, "a refused grow must hand out no page"
    assert len(r.grow("a", 3)) == 3 and r.free_pages() == 0
    assert r.grow("a", 0) == []


@pytest.mark.rubric("accounting")
def test_add_more_than_free_changes_nothing():
    """Rule: Errors change nothing"""
    r = dr.Reclaimer(5)
    r.add("a", 3)
    before = state(r, ["a"])
    with pytest.raises(dr.OutOfPages):
        r.add("b", 3)
    assert state(r, ["a"]) == before
    with pytest.raises(KeyError):
        r.pages_of("b")
    r.add("b", 2)
    assert r.free_pages() == 0


BAD_CALLS = {
    "add 0": lambda r: r.add("x", 0), "add -2": lambda r: r.add("x", -2),
    "grow -1": lambda r: r.grow("a", -1), "launch []": lambda r: r.launch([]),
    "launch repeat": lambda r: r.launch(["a", "a"]),
    "launch unknown": lambda r: r.launch(["a", "nope"]),
    "grow unknown": lambda r: r.grow("nope", 1), "pages_of unknown": lambda r: r.pages_of("nope"),
}


def bad_call_story(r, bad) -> list:
    attempt(r.add, "a", 2)
    seen = [state(r, ["a"])]
    if bad is not None:
        seen.append(attempt(bad, r))
        seen.append(state(r, ["a"]))
    attempt(r.abort, "a")
    seen.append(r.free_pages())
    return seen


@pytest.mark.rubric("accounting")
@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_input_raises_and_changes_nothing(name):
    """Rule: Errors change nothing"""
    got = bad_call_story(dr.Reclaimer(5), BAD_CALLS[name])
    want = bad_call_story(dr.Reclaimer(5), None)
    assert got[1] in ("ValueError", "KeyError"), f"{name}: expected ValueError or KeyError, got {got[1]!r}"
    assert got[0] == got[2], f"{name} must change nothing: {got[0]} before, {got[2]} after"
    assert got[3] == want[1], (
        f"{name}, then abort('a'): free_pages() is {got[3]}, but {want[1]} without the bad "
        "call: a refused launch must not leave a step in flight")


@pytest.mark.rubric("accounting")
@pytest.mark.parametrize("n", [0, -1, 2.0, "3", None])
def test_bad_pool_size(n):
    with pytest.raises((ValueError, TypeError)):
        dr.Reclaimer(n)


@pytest.mark.rubric("accounting")
def test_pages_are_the_pool_and_come_back_once():
    """Rule: Three states"""
    r = dr.Reclaimer(7)
    r.add("a", 3)
    r.add("b", 2)
    r.grow("b", 2)
    pages = r.pages_of("a") + r.pages_of("b")
    assert sorted(pages) == list(range(7)), f"the 7 pages handed out must be 0..6 once: {pages}"
    assert r.free_pages() == 0
