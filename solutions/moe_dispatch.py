"""Reference solution for the moe_dispatch kata: expert-parallel all-to-all in bytes, its split
between NVLink and the NIC, and the two-batch overlap model.

Bytes are exact ints; times in ns are exact rationals (``Fraction``) inside, floats outside.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

MODES = ("per_expert", "per_gpu", "per_node")
SCALE_BLOCK = 128          # elements per FP32 scale in the FP8 dispatch
SCALE_BYTES = 4            # one FP32 scale
FP8_BYTES = 1
BF16_BYTES = 2


# ------------------------------------------------------------------ checks
def _int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def _field(cfg: Any, key: str, low: int) -> int:
    if not isinstance(cfg, dict) or key not in cfg:
        raise ValueError(f"the config needs {key!r}")
    return _int(key, cfg[key], low)


def _moe(cfg: Any) -> tuple[int, int, int, int, int]:
    """(hidden, MoE layers, routed experts, top-k, top-k groups) of a DeepSeek-style config."""
    hidden = _field(cfg, "hidden_size", 1)
    layers = _field(cfg, "num_hidden_layers", 1)
    dense = _field(cfg, "first_k_dense_replace", 0)
    if _field(cfg, "moe_layer_freq", 1) != 1:
        raise ValueError("only moe_layer_freq = 1 is modelled")
    if dense > layers:
        raise ValueError("first_k_dense_replace exceeds num_hidden_layers")
    experts = _field(cfg, "n_routed_experts", 1)
    top_k = _field(cfg, "num_experts_per_tok", 1)
    groups = _field(cfg, "n_group", 1)
    top_groups = _field(cfg, "topk_group", 1)
    if top_k > experts or top_groups > groups:
        raise ValueError("top-k above the expert count, or topk_group above n_group")
    return hidden, layers - dense, experts, top_k, top_groups


# ------------------------------------------------------------------ bytes per token
def moe_layers(cfg: dict[str, Any]) -> int:
    return _moe(cfg)[1]


def dispatch_bytes_per_copy(cfg: dict[str, Any]) -> int:
    hidden = _moe(cfg)[0]
    return hidden * FP8_BYTES + math.ceil(hidden / SCALE_BLOCK) * SCALE_BYTES


def combine_bytes_per_copy(cfg: dict[str, Any]) -> int:
    return _moe(cfg)[0] * BF16_BYTES


def token_step_bytes(cfg: dict[str, Any]) -> int:
    _, layers, _, top_k, _ = _moe(cfg)
    return layers * top_k * (dispatch_bytes_per_copy(cfg) + combine_bytes_per_copy(cfg))


def max_nic_copies(cfg: dict[str, Any], node_dedup: bool) -> int:
    if not isinstance(node_dedup, bool):
        raise ValueError(f"node_dedup must be a bool, got {node_dedup!r}")
    _, _, _, top_k, top_groups = _moe(cfg)
    return min(top_k, top_groups) if node_dedup else top_k


# ------------------------------------------------------------------ copies on the links
def _check_routing(routes: Any, homes: Any, expert_gpu: Any, gpus_per_node: Any) -> int:
    per_node = _int("gpus_per_node", gpus_per_node, 1)
    if not isinstance(expert_gpu, (list, tuple)):
        raise ValueError("expert_gpu must be a list of GPU ids")
    for gpu in expert_gpu:
        _int("a GPU id in expert_gpu", gpu, 0)
    if not isinstance(routes, (list, tuple)) or not isinstance(homes, (list, tuple)):
        raise ValueError("routes and homes must be lists")
    if len(routes) != len(homes):
        raise ValueError(f"{len(routes)} routes but {len(homes)} home GPUs")
    for home in homes:
        _int("a home GPU", home, 0)
    for route in routes:
        if not isinstance(route, (list, tuple)):
            raise ValueError(f"a route is a list of expert ids, got {route!r}")
        for e in route:
            if isinstance(e, bool) or not isinstance(e, int) or not 0 <= e < len(expert_gpu):
                raise ValueError(f"expert id {e!r} outside 0..{len(expert_gpu) - 1}")
        if len(set(route)) != len(route):
            raise ValueError(f"a route names an expert twice: {route!r}")
    return per_node


def _token_copies(route: Any, home: int, expert_gpu: Any, per_node: int,
                  mode: str) -> tuple[int, int]:
    node = home // per_node
    if mode == "per_expert":
        targets = [expert_gpu[e] for e in route if expert_gpu[e] != home]
        nic = sum(1 for g in targets if g // per_node != node)
        return len(targets) - nic, nic
    gpus = {expert_gpu[e] for e in route} - {home}
    if mode == "per_gpu":
        nic = sum(1 for g in gpus if g // per_node != node)
        return len(gpus) - nic, nic
    # per_node: one NIC copy per remote node, landing on the GPU with the home's local index,
    # which forwards over NVLink to the other target GPUs of its node
    local = home % per_node
    remote_nodes = {g // per_node for g in gpus} - {node}
    forwarders = {n * per_node + local for n in remote_nodes}
    return len(gpus - forwarders), len(remote_nodes)


def link_copies(routes: list[list[int]], homes: list[int], expert_gpu: list[int],
                gpus_per_node: int, mode: str) -> tuple[int, int]:
    per_node = _check_routing(routes, homes, expert_gpu, gpus_per_node)
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
    nvlink = nic = 0
    for route, home in zip(routes, homes):
        v, n = _token_copies(route, home, expert_gpu, per_node, mode)
        nvlink += v
        nic += n
    return nvlink, nic


def layer_traffic(cfg: dict[str, Any], routes: list[list[int]], homes: list[int],
                  expert_gpu: list[int], gpus_per_node: int, mode: str) -> dict[str, int]:
    _, _, experts, top_k, _ = _moe(cfg)
    if not isinstance(expert_gpu, (list, tuple)) or len(expert_gpu) != experts:
        raise ValueError(f"expert_gpu must place all {experts} routed experts")
    if not isinstance(routes, (list, tuple)) or any(
            not isinstance(r, (list, tuple)) or len(r) != top_k for r in routes):
        raise ValueError(f"every route must name exactly {top_k} experts")
    nvlink, nic = link_copies(routes, homes, expert_gpu, gpus_per_node, mode)
    d, c = dispatch_bytes_per_copy(cfg), combine_bytes_per_copy(cfg)
    return {"dispatch_nvlink": nvlink * d, "dispatch_nic": nic * d,
            "combine_nvlink": nvlink * c, "combine_nic": nic * c}


# ------------------------------------------------------------------ two-batch overlap
def _tbo_args(batch: Any, layers: Any, compute_fixed_ns: Any, compute_per_token_ns: Any,
              comm_fixed_ns: Any, comm_bytes_per_token: Any,
              link_gb_s: Any) -> tuple[int, int, int, int, int, int, int]:
    return (_int("batch", batch, 1), _int("layers", layers, 1),
            _int("compute_fixed_ns", compute_fixed_ns, 0),
            _int("compute_per_token_ns", compute_per_token_ns, 0),
            _int("comm_fixed_ns", comm_fixed_ns, 0),
            _int("comm_bytes_per_token", comm_bytes_per_token, 0),
            _int("link_gb_s", link_gb_s, 1))


def _times(batch: int, layers: int, c0: int, c1: int, m0: int, m_bytes: int,
           link: int) -> tuple[Fraction, Fraction]:
    """(one batch, two micro-batches), exact. Every time is kept multiplied by ``link`` so
    the schedule runs on ints."""
    def compute(n: int) -> int:
        return (c0 + c1 * n) * link

    def comm(n: int) -> int:
        return m0 * link + n * m_bytes

    one = layers * (compute(batch) + comm(batch))
    a = batch // 2                          # the first micro-batch is the smaller one
    ca, cb, ma, mb = compute(a), compute(batch - a), comm(a), comm(batch - a)
    end_ca = end_cb = end_ma = end_mb = 0
    for _ in range(layers):
        end_ca = max(end_cb, end_ma) + ca   # the compute stream, and A's previous combine
        end_cb = max(end_ca, end_mb) + cb
        end_ma = max(end_mb, end_ca) + ma   # the comm stream, and A's compute
        end_mb = max(end_ma, end_cb) + mb
    return Fraction(one, link), Fraction(end_mb, link)


def tbo_step_ns(batch: int, layers: int, compute_fixed_ns: int, compute_per_token_ns: int,
                comm_fixed_ns: int, comm_bytes_per_token: int,
                link_gb_s: int) -> tuple[float, float]:
    one, two = _times(*_tbo_args(batch, layers, compute_fixed_ns, compute_per_token_ns,
                                 comm_fixed_ns, comm_bytes_per_token, link_gb_s))
    return float(one), float(two)


def tbo_min_batch(layers: int, compute_fixed_ns: int, compute_per_token_ns: int,
                  comm_fixed_ns: int, comm_bytes_per_token: int, link_gb_s: int,
                  max_batch: int) -> int | None:
    top = _int("max_batch", max_batch, 1)
    args = _tbo_args(1, layers, compute_fixed_ns, compute_per_token_ns, comm_fixed_ns,
                     comm_bytes_per_token, link_gb_s)[1:]
    answer = None
    for batch in range(top, 0, -1):
        one, two = _times(batch, *args)
        if two >= one:
            break
        answer = batch
    return answer
