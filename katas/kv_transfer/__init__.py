"""kv_transfer: recompute a cached prefix or fetch its KV, and what the link must carry.

Fill in every function. The prompt is katas/kv_transfer/README.md; run the public tests with
``nox -s kata -- kv_transfer``.

Units: bytes, FLOPs and seconds; GB/s = 10^9 bytes/s; TFLOP/s = 10^12 FLOP/s. ``cfg`` is a
model's Hugging Face ``config.json`` as a dict (``data/models/*.json`` hold real ones under
``"config"``); ``gpu`` is a datasheet entry (``data/gpus/*.json``), read at
``gpu["tensor_tflops"][dtype]["dense"]``. ``active_params`` is the parameter count one
token multiplies through (an int, given by the caller). Numbers are ints or floats (the
tests give no other numeric type);
compute exactly (``fractions.Fraction``; a float stands for its exact binary value) and
return times and rates as floats.
Bad input raises ValueError: a bool is not a number, NaN and infinities are not numbers,
and a config with sliding-window attention is refused. The config is checked whole: every
function that takes a ``cfg`` checks every field the prompt's rules read for that kind of
config (GQA/MHA or MLA), whether or not its own formula uses it; only ``fetch_wins_from``
reads ``max_position_embeddings``.
"""

from __future__ import annotations

from typing import Any

_PROMPT = "see katas/kv_transfer/README.md"


def kv_bytes_per_token(cfg: dict[str, Any], kv_dtype_bytes: int) -> int:
    """Bytes of KV cache one token leaves in the whole model (every layer, every KV head).

    GQA/MHA: 2 x layers x KV heads x head_dim x kv_dtype_bytes. MLA (``kv_lora_rank`` set):
    (kv_lora_rank + qk_rope_head_dim) x layers x kv_dtype_bytes.
    """
    raise NotImplementedError(f"kv_bytes_per_token ({_PROMPT})")


def recompute_flops(cfg: dict[str, Any], active_params: int, prefix_len: int) -> int:
    """FLOPs to prefill a ``prefix_len``-token prefix: the linear term 2 x active_params per
    token plus the causal attention term (the prompt's formula)."""
    raise NotImplementedError(f"recompute_flops ({_PROMPT})")


def recompute_time_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                     prefix_len: int, mfu: float, dtype: str = "bf16") -> float:
    """Seconds to recompute the prefix on one GPU: FLOPs / (dense peak x mfu), mfu in (0, 1]."""
    raise NotImplementedError(f"recompute_time_s ({_PROMPT})")


def fetch_time_s(cfg: dict[str, Any], kv_dtype_bytes: int, prefix_len: int,
                 latency_s: float, link_gb_s: float) -> float:
    """Seconds to fetch the prefix's KV: latency_s + bytes / (link_gb_s x 10^9)."""
    raise NotImplementedError(f"fetch_time_s ({_PROMPT})")


def break_even_gb_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, dtype: str = "bf16") -> float:
    """The link rate (GB/s) at which fetching a token's KV costs exactly what recomputing its
    linear term costs: KV bytes per token / (2 x active_params / (peak x mfu)) / 10^9."""
    raise NotImplementedError(f"break_even_gb_s ({_PROMPT})")


def fetch_wins_from(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                    kv_dtype_bytes: int, mfu: float, latency_s: float, link_gb_s: float,
                    dtype: str = "bf16") -> int | None:
    """The smallest prefix length T >= 1 at which fetching is strictly faster than
    recomputing; None when no T up to the model's ``max_position_embeddings`` has it.

    Exact: a tie is not a win. Raises ValueError when the config has no
    ``max_position_embeddings`` (or not an int >= 1), even when T = 1 wins.
    """
    raise NotImplementedError(f"fetch_wins_from ({_PROMPT})")


def pd_link_gb_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                 kv_dtype_bytes: int, mfu: float, prompt_len: int,
                 dtype: str = "bf16") -> float:
    """GB/s one prefill GPU sends to decode while it prefills ``prompt_len``-token prompts
    back to back: the prompt's KV bytes / its prefill time / 10^9."""
    raise NotImplementedError(f"pd_link_gb_s ({_PROMPT})")


def links_too_slow(models: dict[str, tuple[dict[str, Any], int]],
                   gpus: dict[str, dict[str, Any]], links: dict[str, float],
                   kv_dtype_bytes: int, mfu: float,
                   dtype: str = "bf16") -> list[tuple[str, str, str]]:
    """Every (model, gpu, link) name triple whose link cannot carry that model's P/D
    transfer on that GPU at every prompt length (the prompt's rule), sorted in Python's
    order of tuples of str.

    ``models`` maps a name to (cfg, active_params); ``gpus`` a name to a datasheet entry;
    ``links`` a name to its GB/s. Every entry of the three tables is checked, even when an
    empty table leaves no triple to price.
    """
    raise NotImplementedError(f"links_too_slow ({_PROMPT})")


def handoff_ttft_s(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                   kv_dtype_bytes: int, mfu: float, prompt_len: int, latency_s: float,
                   link_gb_s: float, dtype: str = "bf16") -> tuple[float, float]:
    """Seconds the KV hand-off adds to the time to first token: (sent whole after the
    prefill, sent layer by layer during it), by the prompt's pipeline model."""
    raise NotImplementedError(f"handoff_ttft_s ({_PROMPT})")


def tier_values(cfg: dict[str, Any], gpu: dict[str, Any], active_params: int,
                kv_dtype_bytes: int, mfu: float, prefix_len: int,
                tiers: list[tuple[str, float, float]],
                dtype: str = "bf16") -> list[tuple[str, float]]:
    """For each tier (name, latency_s, link_gb_s), in the order given: (name, seconds saved
    per prefix token) = (recompute time - fetch time) / prefix_len. Negative: the tier
    costs more than it saves. ``tiers`` is a list or tuple; each tier a tuple or a list."""
    raise NotImplementedError(f"tier_values ({_PROMPT})")


def ssd_endurance_tb(dwpd: float, capacity_tb: float, years: float) -> float:
    """Terabytes (10^12 bytes) a drive rated for ``dwpd`` drive writes per day over a
    ``years``-year warranty may write: dwpd x capacity_tb x 365 x years."""
    raise NotImplementedError(f"ssd_endurance_tb ({_PROMPT})")


def ssd_days(endurance_tb: float, write_gb_s: float) -> float:
    """Days until ``endurance_tb`` terabytes are written at a steady ``write_gb_s`` GB/s."""
    raise NotImplementedError(f"ssd_days ({_PROMPT})")
