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


def state(r, ids=()) -> tuple:
    """What the Reclaimer shows: free count and the pages of the given live ids."""
    return (r.free_pages(), {rid: list(r.pages_of(rid)) for rid in ids})


# -- deferred_free ------------------------------------------------------------------------
@pytest.mark.rubric("deferred_free")
@pytest.mark.parametrize("how", ENDS)
def test_abort_after_launch_then_reuse_then_late_completion_pages(how):
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
    r.complete(s1, {"a": 1})
    assert r.free_pages() == 3, "s1 completed: the old a's 3 pages are free now"


@pytest.mark.rubric("deferred_free")
@pytest.mark.parametrize("how", ENDS)
def test_waiting_pages_are_never_handed_out(how):
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
@given(k=st.integers(1, 4), ended_after=st.integers(0, 4), how=st.sampled_from(ENDS),
       pages=st.integers(1, 4))
def test_freed_exactly_when_last_step_completes(k, ended_after, how, pages):
    """k steps launched one after another and completed in launch order; the request ends
    after ``ended_after`` of them completed. Pages are free exactly from the moment both
    the end and the last completion have happened."""
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
def test_step_over_several_requests_frees_only_the_ended_ones():
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


@pytest.mark.rubric("generation_identity")
def test_late_completion_does_not_free_the_new_incarnation():
    r = dr.Reclaimer(6)
    r.add("a", 3)
    s1 = r.launch(["a"])
    r.abort("a")
    r.add("a", 3)
    s2 = r.launch(["a"])
    r.finish("a")                      # the new 'a' ends with s2 in flight
    r.complete(s1, {})                 # only the old a's pages may come back
    assert r.free_pages() == 3, ("s1 completed: the old a's 3 pages are free; the new a's "
                                 f"wait for s2. free_pages() is {r.free_pages()}")
    r.add("b", 3)
    r.complete(s2, {})
    assert r.free_pages() == 3


@pytest.mark.rubric("generation_identity")
def test_old_incarnations_wait_independently():
    """Three incarnations of 'a' end in turn, each with its own step in flight; every
    completion frees exactly the pages of the incarnation it was launched for."""
    r = dr.Reclaimer(12)
    steps = []
    for n in (1, 2, 3):
        r.add("a", n)
        steps.append(r.launch(["a"]))
        r.abort("a")
    assert r.free_pages() == 6
    for step, n, want in ((steps[1], 2, 8), (steps[0], 1, 9), (steps[2], 3, 12)):
        r.complete(step, {"a": 0})
        assert r.free_pages() == want, (
            f"completing the step of the incarnation with {n} pages must free those {n}: "
            f"free_pages() is {r.free_pages()}, expected {want}")


@pytest.mark.rubric("generation_identity")
def test_output_only_for_live_incarnations_of_the_step():
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
def test_generations_differ_across_many_reuses():
    r = dr.Reclaimer(4)
    gens = []
    for i in range(30):
        gens.append(r.add("a", 1))
        step = r.launch(["a"]) if i % 3 == 0 else None
        r.abort("a")
        if step is not None and i % 2 == 0:
            r.complete(step, {})
    assert len(set(gens)) == len(gens), f"incarnations of 'a' shared a generation: {gens}"


@pytest.mark.rubric("generation_identity")
@pytest.mark.parametrize("how", ENDS)
def test_ended_id_cannot_be_launched_or_grown_while_waiting(how):
    r = dr.Reclaimer(6)
    r.add("a", 2)
    r.add("b", 1)
    step = r.launch(["a"])
    end(r, how, "a")
    before = state(r, ["b"])
    with pytest.raises(KeyError):
        r.launch(["b", "a"])
    with pytest.raises(KeyError):
        r.grow("a", 1)
    with pytest.raises(KeyError):
        r.pages_of("a")
    assert state(r, ["b"]) == before
    r.complete(step, {})
    assert r.free_pages() == 5, "the refused launch must not have kept a's pages in a step"


@pytest.mark.rubric("generation_identity")
def test_add_of_live_id_is_refused():
    r = dr.Reclaimer(6)
    r.add("a", 2)
    before = state(r, ["a"])
    with pytest.raises(ValueError):
        r.add("a", 1)
    assert state(r, ["a"]) == before, "a refused add must change nothing"


# -- idempotent_completion ------------------------------------------------------------------
@pytest.mark.rubric("idempotent_completion")
def test_duplicate_completion_after_pages_were_reused():
    r = dr.Reclaimer(4)
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


@pytest.mark.rubric("idempotent_completion")
def test_duplicate_does_not_emit_for_a_live_request_again():
    r = dr.Reclaimer(4)
    r.add("a", 1)
    s1 = r.launch(["a"])
    s2 = r.launch(["a"])
    assert r.complete(s1, {"a": 1}) == [("a", 1)]
    assert r.complete(s1, {"a": 1}) == [], "s1 already completed"
    r.abort("a")
    assert r.free_pages() == 3, "s2 is in flight: the duplicate of s1 must not count as s2"
    r.complete(s2, {})
    assert r.free_pages() == 4


@pytest.mark.rubric("idempotent_completion")
@pytest.mark.parametrize("step_id", [-1, 0, 1, 7, 10**9])
def test_unknown_completion_changes_nothing(step_id):
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
    """r ends 'a' twice; twin ends it once. They must agree after every later call."""
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


@pytest.mark.rubric("racing_ends")
@pytest.mark.parametrize("how", ENDS)
def test_end_of_unknown_or_reclaimed_id_is_quiet(how):
    r = dr.Reclaimer(4)
    end(r, how, "ghost")
    r.add("a", 2)
    end(r, "finish", "a")
    end(r, how, "a")
    end(r, how, "ghost")
    assert r.free_pages() == 4


@pytest.mark.rubric("racing_ends")
def test_late_disconnect_after_pages_were_reused():
    r, twin = dr.Reclaimer(4), dr.Reclaimer(4)
    for x in (r, twin):
        x.add("a", 4)
        x.finish("a")
        x.add("b", 4)       # b holds a's old pages
    r.abort("a")            # a's disconnect arrives late
    assert state(r, ["b"]) == state(twin, ["b"]), "a late abort of 'a' touched b's pages"
    with pytest.raises(dr.OutOfPages):
        r.add("c", 1)


# -- pipelined_steps ------------------------------------------------------------------------
@pytest.mark.rubric("pipelined_steps")
@pytest.mark.parametrize("order", ["launch order", "newest first"])
def test_two_pipelined_steps_with_an_abort_between_them(order):
    r = dr.Reclaimer(8)
    r.add("a", 2)
    r.add("b", 2)
    s1 = r.launch(["a", "b"])
    r.abort("a")
    s2 = r.launch(["b"])
    r.abort("b")
    first, last = (s1, s2) if order == "launch order" else (s2, s1)
    r.complete(first, {})
    want = 6 if first == s1 else 4
    assert r.free_pages() == want, (
        f"a was only in s1, b in s1 and s2; after completing {'s1' if first == s1 else 's2'} "
        f"free_pages() must be {want}, got {r.free_pages()}")
    r.complete(last, {})
    assert r.free_pages() == 8


@pytest.mark.rubric("pipelined_steps")
@given(k=st.integers(2, 5), data=st.data(), how=st.sampled_from(ENDS))
def test_pages_wait_for_the_last_step_in_any_order(k, data, how):
    r = dr.Reclaimer(6)
    r.add("a", 3)
    steps = [r.launch(["a"]) for _ in range(k)]
    order = data.draw(st.permutations(steps), label="completion order")
    cut = data.draw(st.integers(0, k - 1), label="steps completed before the end")
    for s in order[:cut]:
        r.complete(s, {"a": 1})
    end(r, how, "a")
    for j, s in enumerate(order[cut:], start=cut):
        assert r.free_pages() == 3, (
            f"{k} steps launched over a, completed in order {order}; {how}('a') after {cut} "
            f"completions; after {j} completions a's pages must still wait, but "
            f"free_pages() is {r.free_pages()}")
        r.complete(s, {})
    assert r.free_pages() == 6


@pytest.mark.rubric("pipelined_steps")
def test_live_request_in_several_steps_gets_each_token():
    r = dr.Reclaimer(4)
    r.add("a", 1)
    s1, s2, s3 = (r.launch(["a"]) for _ in range(3))
    got = [r.complete(s, {"a": t}) for s, t in ((s2, 20), (s1, 10), (s3, 30))]
    assert got == [[("a", 20)], [("a", 10)], [("a", 30)]], f"one token per completed step: {got}"


# -- accounting ---------------------------------------------------------------------------
@pytest.mark.rubric("accounting")
def test_grow_is_all_or_nothing():
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


@pytest.mark.rubric("accounting")
@pytest.mark.parametrize("bad", [
    lambda r: r.add("x", 0), lambda r: r.add("x", -2), lambda r: r.grow("a", -1),
    lambda r: r.launch([]), lambda r: r.launch(["a", "a"]), lambda r: r.launch(["a", "nope"]),
    lambda r: r.grow("nope", 1), lambda r: r.pages_of("nope"),
], ids=["add 0", "add -2", "grow -1", "launch []", "launch repeat", "launch unknown",
        "grow unknown", "pages_of unknown"])
def test_bad_input_raises_and_changes_nothing(bad):
    r = dr.Reclaimer(5)
    r.add("a", 2)
    before = state(r, ["a"])
    with pytest.raises((ValueError, KeyError)):
        bad(r)
    assert state(r, ["a"]) == before
    r.abort("a")
    assert r.free_pages() == 5, "a refused launch must not leave a step in flight over a"


@pytest.mark.rubric("accounting")
@pytest.mark.parametrize("n", [0, -1, 2.0, "3", None])
def test_bad_pool_size(n):
    with pytest.raises((ValueError, TypeError)):
        dr.Reclaimer(n)


@pytest.mark.rubric("accounting")
def test_pages_are_the_pool_and_come_back_once():
    r = dr.Reclaimer(7)
    r.add("a", 3)
    r.add("b", 2)
    r.grow("b", 2)
    pages = r.pages_of("a") + r.pages_of("b")
    assert sorted(pages) == list(range(7)), f"the 7 pages handed out must be 0..6 once: {pages}"
    s = r.launch(["a", "b"])
    r.finish("a")
    r.abort("b")
    r.complete(s, {})
    r.add("c", 7)
    assert sorted(r.pages_of("c")) == list(range(7)), "after the drain the whole pool comes back once"
