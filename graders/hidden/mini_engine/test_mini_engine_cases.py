"""Hidden fixed scenarios for mini_engine: short interleavings that hit one trap each,
replayed through the state machine's checks (every step against the model of the rules,
then a drain). They run before the machines, so a bug they hit costs little time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from graders.hidden.mini_engine.test_mini_engine_machine import EngineMachine
from graders.impl import kata_impl
from tests.mini_engine.helpers import GREEDY, seeded

me = kata_impl("mini_engine")

Op = tuple[Any, ...]


def replay(item: str, cfg: tuple[int, int, int, int], ops: list[Op]) -> None:
    machine = type(f"Replay_{item}", (EngineMachine,), {"ITEM": item})()
    machine.configure(*cfg)
    for op in ops:
        if op[0] == "add":
            machine.add_request(op[1], op[2], op[3])
        elif op[0] == "abort":
            machine.abort_request(op[1])
        else:
            for _ in range(op[1]):
                machine.do_step("step()")
    machine.teardown()


def add(prompt: list[int], max_tokens: int, sampling: dict[str, Any] = GREEDY) -> Op:
    return ("add", prompt, max_tokens, sampling)


def steps(n: int = 1) -> Op:
    return ("step", n)


# two decodes and a prefill on a 4-block pool: the newest gives way, and the step that
# preempts admits nothing even though the victim's first chunk would fit
CROWDED = ((4, 1, 3, 2), [steps(), add([11], 2), add([26, 6], 2, seeded(38)),
                          add([13], 2, seeded(25))])
# a request whose blocks are not free holds back the smaller one behind it
HEAD_BLOCKS = ((3, 1, 3, 2), [add([29], 2, seeded(15)), steps(), add([26, 15], 1, seeded(16)),
                              add([26], 1, seeded(28))])
# a decode and a long prompt: the decode is planned first
DECODE_AND_PROMPT = ((6, 3, 3, 2), [add([25], 3, seeded(83)),
                                    add([13, 9, 23, 9, 22], 1)])
THREE_SMALL = ((3, 1, 5, 3), [add([12], 2, seeded(47)), add([25], 2, seeded(16)), steps()])
FULL_POOL = ((5, 1, 6, 3), [add([9], 3), add([23], 1, seeded(85)), add([13, 21], 3)])
# three decodes on a full pool of 1-token blocks: the oldest's decode preempts the newest,
# the second's preempts itself; both end up at the front in admission order
TWO_VICTIMS = ((4, 1, 4, 3), [add([1, 2], 2), add([3], 3), add([6], 3), steps(2)])
# a recompute in chunks of 1 leaves one token: it is computed as a decode
RECOMPUTE_TAIL = ((5, 1, 2, 2), [add([7], 3), add([17, 28], 2, seeded(29))])
# a newest request whose chunk needs more blocks than it holds plus the free ones preempts
# itself, and that ends its allocation: no older request gives way for a request that is no
# longer running (found blind: blind1_bug_1)
SELF_SHORT = ((4, 2, 6, 4), [add([30, 5, 4, 3], 2), add([30, 8, 7, 1, 12], 1), steps(12)])
# b's first chunk needs two blocks and one is free: b preempts itself, the chunk is not cut
# to the free blocks (found blind: hunt_2)
SHRINK = ((3, 2, 3, 2), [add([5, 20], 4), add([7, 11, 28], 3), steps(2)])
# b, preempted after its first token, recomputes past its prompt in one chunk of 2 when
# the budget allows: it is prefilling until its last token is computed (found blind: hunt_5)
RECOMPUTE_PAST_PROMPT = ((5, 1, 2, 2), [add([25], 4), add([3], 3), steps(5)])
# after a's blocks come back, b's next block is appended: blocks stay in sequence order
# (found blind: hunt_3)
SEQUENCE_ORDER = ((5, 1, 4, 2), [add([1], 3), add([2, 3], 3), steps(), ("abort", "r0"),
                                 steps(2)])
PROMPT_EXAMPLE = ((4, 2, 4, 2), [add([1, 2, 3], 3), add([4, 5, 6], 3), steps(5)])


@pytest.mark.rubric("budget_order")
@pytest.mark.parametrize("case", [HEAD_BLOCKS, DECODE_AND_PROMPT, CROWDED, TWO_VICTIMS,
                                  RECOMPUTE_TAIL, PROMPT_EXAMPLE, RECOMPUTE_PAST_PROMPT])
def test_budget_and_order_cases(case: tuple[Any, list[Op]]) -> None:
    """Rules: One step; Decodes first; Token budget; Queues"""
    replay("budget_order", *case)


@pytest.mark.rubric("preemption")
@pytest.mark.parametrize("case", [CROWDED, TWO_VICTIMS, PROMPT_EXAMPLE, THREE_SMALL,
                                  FULL_POOL, SELF_SHORT, SHRINK])
def test_preemption_cases(case: tuple[Any, list[Op]]) -> None:
    """Rules: Preemption by recompute; Resume; One step"""
    replay("preemption", *case)


@pytest.mark.rubric("block_accounting")
@pytest.mark.parametrize("case", [THREE_SMALL, CROWDED, PROMPT_EXAMPLE, SEQUENCE_ORDER])
def test_block_accounting_cases(case: tuple[Any, list[Op]]) -> None:
    """Rule: Block accounting"""
    replay("block_accounting", *case)


@pytest.mark.rubric("abort")
def test_abort_a_waiting_request() -> None:
    """Rule: Abort"""
    replay("abort", (3, 1, 3, 3), [add([12], 1), add([7, 7], 1), ("abort", "r1"), steps(2)])


@pytest.mark.rubric("abort")
def test_abort_a_preempted_request() -> None:
    """Rules: Abort; Preemption by recompute"""
    replay("abort", (4, 2, 4, 2), [add([1, 2, 3], 3), add([4, 5, 6], 3), steps(3),
                                   ("abort", "r1"), steps(1)])


@pytest.mark.rubric("exact_streams")
@pytest.mark.parametrize("case", [FULL_POOL, CROWDED, THREE_SMALL])
def test_streams_and_drain_cases(case: tuple[Any, list[Op]]) -> None:
    """Rules: Refusal; Resume; Sampling"""
    replay("exact_streams", *case)


@pytest.mark.rubric("errors")
@pytest.mark.parametrize("args", [(0, 1, 1, 1), (1, 0, 1, 1), (4, 1, 0, 1), (4, 1, 1, 0),
                                  (-3, 1, 1, 1), (4.0, 1, 1, 1), (4, 1, 2, 3), (4, "2", 2, 1),
                                  # found blind: hunt2_1 (a bool), hunt2_3 (TypeError)
                                  (4, 2, 4, True), (True, 2, 4, 1), (4, 2, None, 2),
                                  (4, 2, "8", 2), (None, 2, 4, 2)])
def test_bad_engine_parameters(args: tuple[Any, ...]) -> None:
    """Rule: Bad input"""
    with pytest.raises(ValueError):
        me.Engine(*args)


@pytest.mark.rubric("errors")
def test_the_refusal_uses_the_exact_quantity() -> None:
    """Rules: Refusal; Bad input"""
    engine = me.Engine(num_blocks=3, block_size=4, max_batched_tokens=4, max_running=2)
    engine.add("fits", [1] * 5, 7, GREEDY)            # ceil(12 / 4) = 3 blocks: accepted
    before = engine.stats()
    for prompt, max_tokens in (([1] * 5, 8), ([1] * 12, 1), ([1], 12)):   # 13 tokens: 4 blocks
        with pytest.raises(ValueError):
            engine.add("big", prompt, max_tokens, GREEDY)
        assert engine.stats() == before, "a refused add changed the stats"
    engine.abort("fits")
    engine.add("fits", [2] * 11, 1, GREEDY)           # an aborted id may be used again
    with pytest.raises(KeyError):
        engine.abort("big")
    assert engine.stats()["waiting"] == ["fits"]


@pytest.mark.rubric("errors")
def test_a_live_id_and_a_prompt_that_is_no_list_are_refused() -> None:
    """An id is refused while its request is waiting or running, and a prompt must be a list
    (found blind: hunt_1, hunt_4).

    Rule: Bad input
    """
    engine = me.Engine(num_blocks=4, block_size=2, max_batched_tokens=4, max_running=2)
    engine.add("a", [1, 2, 3], 2, GREEDY)
    engine.step()                                      # "a" is running now
    before = engine.stats()
    assert before["running"] == ["a"], "the check needs 'a' running"
    for args in (("a", [5], 1), ("b", (1, 2), 2), ("b", [], 2),
                 ("b", [1], True), ("b", [1.5], 1), ("b", [True], 1),   # hunt2_4, hunt2_5
                 # numpy: an integer is not an int, an array is not a list
                 ("b", [1, np.int64(2)], 1), ("b", np.array([1, 2]), 1)):
        with pytest.raises(ValueError):
            engine.add(args[0], args[1], args[2], GREEDY)
        assert engine.stats() == before, f"add{args} was refused but changed the stats"
