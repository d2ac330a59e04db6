"""Helpers shared by the public and hidden tests of the chunked_prefill kata.

The simulator always runs here, in the test process: its clock, its state and its log are
the test's own. Only ``plan_step`` and the metric functions run next to the
implementation (across the wire when grading isolated); each step's decision comes back
as plain data, which the simulator checks before executing it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from graders.support import chunked_prefill as sim

H100 = sim.H100_LLAMA_8B
# A model in powers of two: every time in a run is exact, so ties can be hit on purpose.
DYADIC: dict[str, float] = {"a": 1 / 64, "b": 1 / 1024, "c": 1 / 256}


def config(policy: str = "fcfs", budget: int = 8, chunked: bool = True,
           starvation_s: float | None = None) -> dict[str, Any]:
    return {"policy": policy, "budget": budget, "chunked": chunked,
            "starvation_s": starvation_s}


def waiting(rid: str, arrival: float, prompt: int, prefilled: int = 0) -> dict[str, Any]:
    return {"id": rid, "arrival": arrival, "prompt": prompt, "prefilled": prefilled}


def decoding(rid: str, arrival: float, generated: int = 1) -> dict[str, Any]:
    return {"id": rid, "arrival": arrival, "generated": generated}


def request(rid: str, arrival: float, prompt: int, output: int) -> dict[str, Any]:
    return {"id": rid, "arrival": arrival, "prompt": prompt, "output": output}


def decision(raw: Any) -> tuple[dict[str, int], list[str]]:
    """A plan_step answer as ``({id: tokens}, [decode ids])``, checking its shape."""
    assert isinstance(raw, (list, tuple)) and len(raw) == 2, \
        f"plan_step must return (chunks, decodes), got {raw!r}"
    chunks, decodes = raw
    assert isinstance(chunks, (list, tuple)) and isinstance(decodes, (list, tuple)), \
        f"plan_step must return two lists, got {raw!r}"
    out: dict[str, int] = {}
    for c in chunks:
        assert isinstance(c, (list, tuple)) and len(c) == 2, f"a chunk is (id, tokens), got {c!r}"
        assert c[0] not in out, f"request {c[0]!r} has two chunks in one step: {raw!r}"
        out[c[0]] = c[1]
    assert len(set(decodes)) == len(decodes), f"a request decodes twice in one step: {raw!r}"
    return out, list(decodes)


def run(module: Any, requests: list[dict[str, Any]], cfg: dict[str, Any],
        model: dict[str, float] = H100,
        check: Callable[..., None] | None = None) -> dict[str, Any]:
    """Simulate ``requests`` here with the implementation's ``plan_step``; ``check(cfg,
    now, waiting, decoding, answer)`` sees every step's state and answer."""
    def plan(c: dict[str, Any], now: float, w: list[dict[str, Any]],
             d: list[dict[str, Any]]) -> Any:
        answer = module.plan_step(c, now, w, d)
        if check is not None:
            check(c, now, w, d, answer)
        return answer
    return sim.simulate(requests, cfg, model, plan, max_steps=20_000)


def close(got: Any, want: float, what: str, rel: float = 1e-9) -> None:
    ok = isinstance(got, (int, float)) and not isinstance(got, bool) \
        and math.isclose(got, want, rel_tol=rel, abs_tol=1e-12)
    assert ok, f"{what}: got {got!r}, want {want!r}"


def close_lists(got: Any, want: list[float], what: str) -> None:
    assert isinstance(got, (list, tuple)) and len(got) == len(want), \
        f"{what}: got {got!r}, want {want!r}"
    for i, (g, w) in enumerate(zip(got, want)):
        close(g, w, f"{what}[{i}] (want the whole series {want!r})")
