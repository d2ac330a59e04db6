"""Public tests for deferred_reclaim: the prompt's example and the basic behaviours.

Run: nox -s kata -- deferred_reclaim
"""

import pytest

from graders.impl import kata_impl

dr = kata_impl("deferred_reclaim")


def held(r, *ids):
    """Every page the given live requests hold, checking that none is held twice."""
    pages = [p for rid in ids for p in r.pages_of(rid)]
    assert len(pages) == len(set(pages)), f"a page is held twice: {ids} hold {pages}"
    return set(pages)


def prompt_example():
    """The prompt's example; returns what each call showed."""
    seen = {}
    r = dr.Reclaimer(4)
    r.add("a", 2)
    seen["old"] = set(r.pages_of("a"))
    s1 = r.launch(["a"])
    r.abort("a")
    seen["free after abort"] = r.free_pages()
    r.add("a", 2)
    seen["new"] = set(r.pages_of("a"))
    seen["late"] = r.complete(s1, {"a": 5})
    seen["free after late"] = r.free_pages()
    seen["duplicate"] = r.complete(s1, {"a": 5})
    seen["free after duplicate"] = r.free_pages()
    seen["new after duplicate"] = set(r.pages_of("a"))
    return seen


@pytest.mark.rubric("deferred_free")
def test_prompt_example_pages():
    """Rules: Deferred free; Incarnations"""
    seen = prompt_example()
    assert seen["free after abort"] == 2, "a's 2 pages must wait for step s1, which still reads them"
    assert not seen["new"] & seen["old"], (
        f"the new 'a' got {sorted(seen['new'])}, but s1 still reads {sorted(seen['old'])}")


@pytest.mark.rubric("generation_identity")
def test_prompt_example_late_output():
    """Rules: Incarnations; Output"""
    seen = prompt_example()
    assert seen["late"] == [], (
        f"s1 ran for the old 'a': no output for the new one, got {seen['late']}")
    assert seen["free after late"] == 2, (
        "s1 was the old a's last step: the old a's 2 pages are free now, even though the id "
        "'a' is live again")


@pytest.mark.rubric("idempotent_completion")
def test_prompt_example_duplicate():
    """Rule: Idempotent completion"""
    seen = prompt_example()
    assert seen["duplicate"] == [], f"a duplicate completion emits nothing, got {seen['duplicate']}"
    assert seen["free after duplicate"] == seen["free after late"], (
        "a duplicate completion changes nothing")
    assert seen["new after duplicate"] == seen["new"], "a duplicate completion touched a's pages"


@pytest.mark.rubric("deferred_free")
def test_end_with_no_step_in_flight_frees_at_once():
    """Rule: Deferred free"""
    r = dr.Reclaimer(8)
    r.add("a", 3)
    r.finish("a")
    assert r.free_pages() == 8, "nothing reads a's pages: finish must free them at once"
    r.add("b", 2)
    r.abort("b")
    assert r.free_pages() == 8, "nothing reads b's pages: abort must free them at once"


@pytest.mark.rubric("deferred_free")
def test_pages_wait_for_the_step_in_flight():
    """Rules: Deferred free; Three states"""
    r = dr.Reclaimer(6)
    r.add("a", 3)
    read = set(r.pages_of("a"))
    step = r.launch(["a"])
    r.finish("a")
    assert r.free_pages() == 3, "a's pages must wait: step is still in flight"
    r.add("b", 3)
    assert not held(r, "b") & read, "b was handed a page the step in flight still reads"
    with pytest.raises(dr.OutOfPages):
        r.add("c", 1)
    r.complete(step, {"a": 1})
    assert r.free_pages() == 3, "the step completed: a's pages are free now"


@pytest.mark.rubric("generation_identity")
def test_live_request_gets_its_tokens():
    """Rule: Output"""
    r = dr.Reclaimer(8)
    r.add("a", 1)
    r.add("b", 1)
    step = r.launch(["a", "b"])
    out = r.complete(step, {"a": 11, "b": 22})
    assert sorted(out) == [("a", 11), ("b", 22)], f"both requests are live: got {out}"


@pytest.mark.rubric("generation_identity")
def test_reused_id_is_a_new_incarnation():
    """Rule: Incarnations"""
    r = dr.Reclaimer(8)
    g1 = r.add("a", 2)
    step = r.launch(["a"])
    r.abort("a")
    g2 = r.add("a", 2)
    assert g1 != g2, f"two incarnations of 'a' got the same generation {g1}"
    mine = r.pages_of("a")
    assert r.complete(step, {"a": 3}) == [], "the step was launched for the old 'a'"
    assert r.pages_of("a") == mine, "the old step's completion touched the new a's pages"
    step2 = r.launch(["a"])
    assert r.complete(step2, {"a": 4}) == [("a", 4)]


@pytest.mark.rubric("generation_identity")
def test_ended_id_is_not_live():
    """Rules: Incarnations; Errors change nothing"""
    r = dr.Reclaimer(8)
    r.add("a", 1)
    r.finish("a")
    for call in (lambda: r.launch(["a"]), lambda: r.grow("a", 1), lambda: r.pages_of("a")):
        with pytest.raises(KeyError):
            call()
    r.add("b", 1)
    with pytest.raises(ValueError):
        r.add("b", 1)  # b is live


@pytest.mark.rubric("idempotent_completion")
def test_duplicate_and_unknown_completions_change_nothing():
    """Rule: Idempotent completion"""
    r = dr.Reclaimer(8)
    r.add("a", 2)
    step = r.launch(["a"])
    assert r.complete(step, {"a": 1}) == [("a", 1)]
    assert r.complete(step, {"a": 1}) == [], "a duplicate completion must emit nothing"
    assert r.complete(step + 1000, {"a": 1}) == [], "an unknown step id must emit nothing"
    assert r.free_pages() == 6
    step2 = r.launch(["a"])
    assert step2 != step, "step ids are never reused"


@pytest.mark.rubric("racing_ends")
def test_ending_twice_changes_nothing():
    # twin: the same story, but "a" ends only once
    """Rule: Racing ends"""
    r, twin = dr.Reclaimer(8), dr.Reclaimer(8)
    steps = {}
    for x in (r, twin):
        x.add("a", 2)
        steps[x] = x.launch(["a"])
        x.finish("a")
    r.abort("a")        # the disconnect arrives after the normal end
    assert r.free_pages() == twin.free_pages(), "the second end of 'a' must change nothing"
    for x in (r, twin):
        x.complete(steps[x], {})
    r.abort("a")
    r.finish("a")
    r.finish("never-added")
    assert r.free_pages() == twin.free_pages(), (
        "ending an id that is not live (again, or never added) must change nothing")


@pytest.mark.rubric("pipelined_steps")
@pytest.mark.parametrize("order", ["in launch order", "newest first"])
def test_pages_wait_for_the_last_of_two_steps(order):
    """Rule: Pipelining"""
    r = dr.Reclaimer(8)
    r.add("a", 2)
    s1 = r.launch(["a"])
    s2 = r.launch(["a"])
    r.abort("a")
    first = s1 if order == "in launch order" else s2
    r.complete(first, {"a": 1})
    assert r.free_pages() == 6, f"one of a's two steps completed ({order}); the other still reads a's pages"


@pytest.mark.rubric("accounting")
def test_add_grow_and_free_pages():
    """Rule: Three states"""
    r = dr.Reclaimer(10)
    r.add("a", 3)
    new = r.grow("a", 2)
    assert len(new) == 2 and r.pages_of("a")[-2:] == new, "grow appends its pages"
    r.add("b", 4)
    assert len(held(r, "a", "b")) == 9 and r.free_pages() == 1
    assert held(r, "a", "b") <= set(range(10)), "pages are numbered 0 .. num_pages-1"


@pytest.mark.rubric("accounting")
def test_errors_change_nothing():
    """Rule: Errors change nothing"""
    r = dr.Reclaimer(4)
    r.add("a", 3)
    with pytest.raises(dr.OutOfPages):
        r.grow("a", 2)
    with pytest.raises(dr.OutOfPages):
        r.add("b", 2)
    with pytest.raises(ValueError):
        r.launch([])
    with pytest.raises(ValueError):
        r.grow("a", -1)
    assert r.free_pages() == 1 and len(r.pages_of("a")) == 3
    with pytest.raises(ValueError):
        dr.Reclaimer(0)
