"""moe_dispatch, written from the prompt and the stub only (by the kata's author, after the
reference, without looking at it again): a second solution in a different style.

Differences from the reference: the copies are counted as sets of (source, destination) hops
per token, classified by node afterwards; the two-batch time comes from a small stream
simulator (each stream a queue of ops, an op runs when its stream is free and its input is
ready) over exact Fractions; the smallest paying batch is found by evaluating every batch
from 1 to max_batch and keeping the start of the final run of paying batches.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _need(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


def _read(cfg: Any) -> dict[str, int]:
    _need(isinstance(cfg, dict), "cfg must be a dict")
    floors = {"hidden_size": 1, "num_hidden_layers": 1, "first_k_dense_replace": 0,
              "moe_layer_freq": 1, "n_routed_experts": 1, "num_experts_per_tok": 1,
              "n_group": 1, "topk_group": 1}
    out = {}
    for key, low in floors.items():
        value = cfg.get(key)
        _need(_is_int(value) and value >= low, f"bad or missing {key}: {value!r}")
        out[key] = value
    _need(out["moe_layer_freq"] == 1, "moe_layer_freq must be 1")
    _need(out["first_k_dense_replace"] <= out["num_hidden_layers"], "too many dense layers")
    _need(out["num_experts_per_tok"] <= out["n_routed_experts"], "top-k above expert count")
    _need(out["topk_group"] <= out["n_group"], "topk_group above n_group")
    return out


def moe_layers(cfg: dict[str, Any]) -> int:
    c = _read(cfg)
    return c["num_hidden_layers"] - c["first_k_dense_replace"]


def dispatch_bytes_per_copy(cfg: dict[str, Any]) -> int:
    h = _read(cfg)["hidden_size"]
    blocks = (h + 127) // 128
    return h + 4 * blocks


def combine_bytes_per_copy(cfg: dict[str, Any]) -> int:
    return 2 * _read(cfg)["hidden_size"]


def token_step_bytes(cfg: dict[str, Any]) -> int:
    per_layer = _read(cfg)["num_experts_per_tok"] * (
        dispatch_bytes_per_copy(cfg) + combine_bytes_per_copy(cfg))
    return moe_layers(cfg) * per_layer


def max_nic_copies(cfg: dict[str, Any], node_dedup: bool) -> int:
    _need(isinstance(node_dedup, bool), "node_dedup must be a bool")
    c = _read(cfg)
    k = c["num_experts_per_tok"]
    return min(k, c["topk_group"]) if node_dedup else k


def _hops(route: Any, home: int, expert_gpu: Any, gpn: int, mode: str) -> list[tuple[int, int]]:
    if mode == "per_expert":
        return [(home, expert_gpu[e]) for e in route if expert_gpu[e] != home]
    targets = {expert_gpu[e] for e in route}
    if mode == "per_gpu":
        return [(home, g) for g in targets if g != home]
    hops: set[tuple[int, int]] = set()
    for g in targets:
        if g // gpn == home // gpn:
            hops.add((home, g))
        else:
            relay = (g // gpn) * gpn + home % gpn
            hops.add((home, relay))
            hops.add((relay, g))
    return [h for h in hops if h[0] != h[1]]


def link_copies(routes: list[list[int]], homes: list[int], expert_gpu: list[int],
                gpus_per_node: int, mode: str) -> tuple[int, int]:
    _need(_is_int(gpus_per_node) and gpus_per_node >= 1, "gpus_per_node must be an int >= 1")
    _need(mode in ("per_expert", "per_gpu", "per_node"), f"unknown mode {mode!r}")
    for name, seq in (("routes", routes), ("homes", homes), ("expert_gpu", expert_gpu)):
        _need(isinstance(seq, (list, tuple)), f"{name} must be a list")
    _need(len(routes) == len(homes), "routes and homes differ in length")
    _need(all(_is_int(g) and g >= 0 for g in expert_gpu), "bad GPU id in expert_gpu")
    _need(all(_is_int(h) and h >= 0 for h in homes), "bad home GPU")
    n = len(expert_gpu)
    for r in routes:
        _need(isinstance(r, (list, tuple)), "a route must be a list")
        _need(all(_is_int(e) and 0 <= e < n for e in r), f"bad expert id in {r!r}")
        _need(len(set(r)) == len(r), f"repeated expert in {r!r}")
    nvlink = nic = 0
    for r, home in zip(routes, homes):
        for src, dst in _hops(r, home, expert_gpu, gpus_per_node, mode):
            if src // gpus_per_node == dst // gpus_per_node:
                nvlink += 1
            else:
                nic += 1
    return nvlink, nic


def layer_traffic(cfg: dict[str, Any], routes: list[list[int]], homes: list[int],
                  expert_gpu: list[int], gpus_per_node: int, mode: str) -> dict[str, int]:
    c = _read(cfg)
    _need(isinstance(expert_gpu, (list, tuple)) and len(expert_gpu) == c["n_routed_experts"],
          "expert_gpu must place every routed expert")
    _need(isinstance(routes, (list, tuple)), "routes must be a list")
    for r in routes:
        _need(isinstance(r, (list, tuple)) and len(r) == c["num_experts_per_tok"],
              "every route needs num_experts_per_tok experts")
    v, n = link_copies(routes, homes, expert_gpu, gpus_per_node, mode)
    d, b = dispatch_bytes_per_copy(cfg), combine_bytes_per_copy(cfg)
    return {"dispatch_nvlink": v * d, "dispatch_nic": n * d,
            "combine_nvlink": v * b, "combine_nic": n * b}


def _ints(values: tuple[Any, ...], lows: tuple[int, ...]) -> None:
    for v, low in zip(values, lows):
        _need(_is_int(v) and v >= low, f"expected an int >= {low}, got {v!r}")


def _simulate(batch: int, layers: int, c0: int, c1: int, m0: int, mb: int,
              link: int) -> tuple[Fraction, Fraction]:
    def cost(kind: str, n: int) -> Fraction:
        return Fraction(c0 + c1 * n) if kind == "compute" else m0 + Fraction(n * mb, link)

    one = layers * (cost("compute", batch) + cost("comm", batch))
    size = {"A": batch // 2, "B": batch - batch // 2}
    queues = {s: [(layer, mbatch) for layer in range(layers) for mbatch in "AB"]
              for s in ("compute", "comm")}
    done: dict[tuple[str, int, str], Fraction] = {}
    free = {"compute": Fraction(0), "comm": Fraction(0)}
    while queues["compute"] or queues["comm"]:
        progressed = False
        for stream in ("compute", "comm"):
            if not queues[stream]:
                continue
            layer, mbatch = queues[stream][0]
            dep = ("comm", layer - 1, mbatch) if stream == "compute" else ("compute", layer, mbatch)
            if stream == "compute" and layer == 0:
                ready: Fraction | None = Fraction(0)
            else:
                ready = done.get(dep)
            if ready is None:
                continue
            start = max(free[stream], ready)
            free[stream] = done[(stream, layer, mbatch)] = start + cost(stream, size[mbatch])
            queues[stream].pop(0)
            progressed = True
        assert progressed
    return one, free["comm"]


def tbo_step_ns(batch: int, layers: int, compute_fixed_ns: int, compute_per_token_ns: int,
                comm_fixed_ns: int, comm_bytes_per_token: int,
                link_gb_s: int) -> tuple[float, float]:
    args = (batch, layers, compute_fixed_ns, compute_per_token_ns, comm_fixed_ns,
            comm_bytes_per_token, link_gb_s)
    _ints(args, (1, 1, 0, 0, 0, 0, 1))
    one, two = _simulate(*args)
    return float(one), float(two)


def tbo_min_batch(layers: int, compute_fixed_ns: int, compute_per_token_ns: int,
                  comm_fixed_ns: int, comm_bytes_per_token: int, link_gb_s: int,
                  max_batch: int) -> int | None:
    rest = (layers, compute_fixed_ns, compute_per_token_ns, comm_fixed_ns,
            comm_bytes_per_token, link_gb_s)
    _ints(rest + (max_batch,), (1, 0, 0, 0, 0, 1, 1))
    start: int | None = None
    for b in range(1, max_batch + 1):
        one, two = _simulate(b, *rest)
        if two < one:
            if start is None:
                start = b
        else:
            start = None
    return start
