"""moe_dispatch: expert-parallel all-to-all in bytes, NVLink against the NIC, two-batch overlap.

Fill in every function. The prompt is katas/moe_dispatch/README.md; run the public tests with
``nox -s kata -- moe_dispatch``.

Units: bytes, nanoseconds and GB/s (10^9 bytes per second, exactly one byte per ns, so
``nbytes / link_gb_s`` is a time in ns). ``cfg`` is a DeepSeek-style Hugging Face
``config.json`` as a dict (``data/models/deepseek-ai--DeepSeek-V3.json`` holds the real one
under ``"config"``). A GPU id ``g`` lives on node ``g // gpus_per_node`` at local index
``g % gpus_per_node``. Bad input raises ValueError (a bool is not an int).
"""

from __future__ import annotations

from typing import Any

_PROMPT = "see katas/moe_dispatch/README.md"


def moe_layers(cfg: dict[str, Any]) -> int:
    """How many layers of the model are MoE layers (the others are dense and send nothing)."""
    raise NotImplementedError(f"moe_layers ({_PROMPT})")


def dispatch_bytes_per_copy(cfg: dict[str, Any]) -> int:
    """Bytes of one token's hidden state as the dispatch sends it: FP8 values plus one FP32
    scale per block of 128 elements."""
    raise NotImplementedError(f"dispatch_bytes_per_copy ({_PROMPT})")


def combine_bytes_per_copy(cfg: dict[str, Any]) -> int:
    """Bytes of one expert result as the combine sends it back: BF16 values."""
    raise NotImplementedError(f"combine_bytes_per_copy ({_PROMPT})")


def token_step_bytes(cfg: dict[str, Any]) -> int:
    """Bytes one token sends over all MoE layers of one forward pass, dispatch and combine,
    when every routed expert is on another GPU and each gets its own copy."""
    raise NotImplementedError(f"token_step_bytes ({_PROMPT})")


def max_nic_copies(cfg: dict[str, Any], node_dedup: bool) -> int:
    """The most copies of one token that cross the NIC in one direction in one MoE layer,
    under the config's group-limited routing with one expert group per node; ``node_dedup``
    says whether a node receives one copy however many of its GPUs are targets."""
    raise NotImplementedError(f"max_nic_copies ({_PROMPT})")


def link_copies(routes: list[list[int]], homes: list[int], expert_gpu: list[int],
                gpus_per_node: int, mode: str) -> tuple[int, int]:
    """(NVLink copies, NIC copies) of one direction of one MoE layer, summed over the tokens.

    ``routes[t]`` lists the routed expert ids of token t (distinct), ``homes[t]`` is its home
    GPU, ``expert_gpu[e]`` the GPU that hosts expert e; ``mode`` is ``"per_expert"``,
    ``"per_gpu"`` or ``"per_node"``.
    """
    raise NotImplementedError(f"link_copies ({_PROMPT})")


def layer_traffic(cfg: dict[str, Any], routes: list[list[int]], homes: list[int],
                  expert_gpu: list[int], gpus_per_node: int, mode: str) -> dict[str, int]:
    """Bytes of one MoE layer on each link: a dict with the keys ``"dispatch_nvlink"``,
    ``"dispatch_nic"``, ``"combine_nvlink"`` and ``"combine_nic"``.

    Every route names exactly ``num_experts_per_tok`` experts and ``expert_gpu`` places all
    ``n_routed_experts``.
    """
    raise NotImplementedError(f"layer_traffic ({_PROMPT})")


def tbo_step_ns(batch: int, layers: int, compute_fixed_ns: int, compute_per_token_ns: int,
                comm_fixed_ns: int, comm_bytes_per_token: int,
                link_gb_s: int) -> tuple[float, float]:
    """(one batch, two overlapped micro-batches): the time of ``layers`` MoE layers for a
    batch of ``batch`` tokens, under the prompt's model. All arguments are ints."""
    raise NotImplementedError(f"tbo_step_ns ({_PROMPT})")


def tbo_min_batch(layers: int, compute_fixed_ns: int, compute_per_token_ns: int,
                  comm_fixed_ns: int, comm_bytes_per_token: int, link_gb_s: int,
                  max_batch: int) -> int | None:
    """The smallest batch B in 1..max_batch such that two micro-batches are strictly faster
    than one at every batch from B to max_batch; None when they are not at max_batch.

    Compared exactly (the arguments are ints).
    """
    raise NotImplementedError(f"tbo_min_batch ({_PROMPT})")
