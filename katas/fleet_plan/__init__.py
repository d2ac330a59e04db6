"""fleet_plan: the arithmetic of a serving fleet, done before the router is drawn.

Fill in every function. The prompt is katas/fleet_plan/README.md; run the public tests with
``nox -s kata -- fleet_plan``.

Plain data only. Regions are numbered 0..R-1; ``demand[u]`` is the replicas' worth of load
region u's users bring, ``near[u]`` lists the *other* regions whose replicas may serve
region u's users (a region's own replicas always may). Numbers are Python ints or floats (a
bool is not a number), finite (an int too large for a float is not); counts are ints. Bad
input raises ValueError. The functions never modify their arguments.
"""

from __future__ import annotations

from collections.abc import Sequence

_PROMPT = "see katas/fleet_plan/README.md"


def survives(demand: Sequence[int], near: Sequence[Sequence[int]],
             placement: Sequence[int]) -> bool:
    """Whether ``placement`` (replicas per region) serves all demand after the loss of any
    one region: for every region f, the replicas outside f can take every unit of demand,
    f's users included, each unit on a replica of its own region or of a region near it."""
    raise NotImplementedError(f"survives ({_PROMPT})")


def smallest_fleet(demand: Sequence[int], near: Sequence[Sequence[int]],
                   caps: Sequence[int]) -> list[int] | None:
    """A placement with at most ``caps[r]`` replicas in region r that survives any single
    region loss, with the smallest total; any such placement is accepted. None when even
    the caps do not survive."""
    raise NotImplementedError(f"smallest_fleet ({_PROMPT})")


def headroom(growth_per_min: float, lead_min: float, model: str = "compound") -> float:
    """The load's relative growth over ``lead_min`` minutes: (1 + g) ** lead_min - 1 for
    ``model="compound"``, g x lead_min for ``model="linear"`` (graded to 1e-12 of 1 + h; any
    float method that meets it, e.g. expm1(lead_min x log1p(g)), is accepted). A growth
    factor 1 + h too large for a float is bad input."""
    raise NotImplementedError(f"headroom ({_PROMPT})")


def scale_target(ceiling: float, growth_per_min: float, lead_min: float,
                 model: str = "compound") -> float:
    """The utilisation to scale up at, so that the load reached when the new replica is
    serving stays at or below ``ceiling``: ceiling / (1 + headroom)."""
    raise NotImplementedError(f"scale_target ({_PROMPT})")


def replicas_ahead(load: float, per_replica: float, growth_per_min: float, lead_min: float,
                   model: str = "compound") -> int:
    """The replicas to hold now so the load ``lead_min`` minutes ahead fits at
    ``per_replica`` each (its capacity at the ceiling), by the prompt's rounding rule; 0 for
    no load."""
    raise NotImplementedError(f"replicas_ahead ({_PROMPT})")


def idle_share(loads: Sequence[float], replicas: Sequence[int]) -> float:
    """The fraction of the fleet's capacity that sits idle: 1 - sum(loads) / sum(replicas),
    ``loads[i]`` in replicas' worth of model i's load (graded to an absolute 1e-12)."""
    raise NotImplementedError(f"idle_share ({_PROMPT})")


def pack_tail(loads: Sequence[int], mems: Sequence[int], copies: int, gpu_load: int,
              gpu_mem: int) -> list[list[int]]:
    """Place ``copies`` replicas of every tail model on the fewest GPUs: per GPU the loads
    sum to at most ``gpu_load`` and the memories to at most ``gpu_mem``; two replicas of one
    model never share a GPU. Returns, per model, the GPU index of each of its replicas
    (GPUs numbered 0..G-1, every one used). Any packing on the fewest GPUs is accepted. No
    models: [] (the other arguments are still checked)."""
    raise NotImplementedError(f"pack_tail ({_PROMPT})")


def token_prices(replica: dict[str, float], gpu_hour_usd: float, mfu: float, batch: int,
                 ctx_len: int, utilisation: float) -> tuple[float, float]:
    """(USD per million input tokens, USD per million output tokens) for one replica (a
    dict with ``gpus``, ``params``, ``weight_bytes``, ``kv_bytes_per_token``, ``peak_flops``
    and ``bandwidth`` per GPU), as the prompt's "Pricing" section derives them."""
    raise NotImplementedError(f"token_prices ({_PROMPT})")


def prompt_share(price_in: float, price_out: float, input_tokens: float,
                 output_tokens: float) -> float:
    """The share of a workload's bill paid for its input tokens (token counts may be
    fractional: an average per request)."""
    raise NotImplementedError(f"prompt_share ({_PROMPT})")


def canary_size(base_rate: float, bad_rate: float, alpha: float, power: float) -> int:
    """Requests per arm for a one-sided two-proportion z-test to detect a failure rate
    rising from ``base_rate`` to ``bad_rate`` (the prompt's formula, rounded up)."""
    raise NotImplementedError(f"canary_size ({_PROMPT})")


def canary_minutes(per_arm: int, requests_per_s: float, canary_share: float) -> float:
    """Minutes until both arms hold ``per_arm`` requests when the canary takes
    ``canary_share`` of ``requests_per_s`` and the baseline the rest."""
    raise NotImplementedError(f"canary_minutes ({_PROMPT})")
