"""What each recording covers: the shapes, and the rows they become.

``split_kv``: decode attention (one query token per sequence, bf16 KV) for batch x heads x
context shapes where splitting matters (few thread blocks, long context) and where it does
not (the grid already fills the GPU), timed at every split count from 1 to the number of
KV blocks (capped at ``MAX_SPLITS``). A kata's chosen count is scored by its regret against
the best count of the same shape.

``gemm_waves``: bf16 ``[M, K] @ [K, N]`` through torch (cuBLAS) for Llama-style projection
shapes, M swept in steps of 16 tokens across the first few wave boundaries of the usual
128 x 128 / 128 x 256 output tiles, so that the steps the wave model predicts (and the
ones it does not) are visible in the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from graders.hardware.kernels import BLOCK_N, kv_blocks

MAX_SPLITS = 64
NAMES = ("split_kv", "gemm_waves")
SWEEP_OF = {"split_kv": "split_kv_decode", "gemm_waves": "gemm_m_sweep"}
DESCRIPTION = {
    "split_kv": ("Decode attention (one query token per sequence, bf16 KV, the Triton split-KV "
                 "reference in graders/hardware/kernels.py) timed at every split count from 1 "
                 "to the number of 64-key KV blocks (at most 64), for batch x heads x context "
                 "shapes; the split_kv kata scores a chosen count by its regret against the "
                 "fastest count of the same shape."),
    "gemm_waves": ("bf16 [M, K] @ [K, N] through torch.matmul (cuBLAS) for Llama-3.1-8B "
                   "projection shapes, M from 16 to 4096 in steps of 16 tokens, across the "
                   "wave boundaries of the usual output tiles; the gemm_waves kata checks its "
                   "wave predictions against the steps in this table."),
}


@dataclass(frozen=True)
class DecodeShape:
    batch: int
    q_heads: int
    kv_heads: int
    context: int
    head_dim: int = 128

    def split_counts(self) -> list[int]:
        return list(range(1, min(MAX_SPLITS, kv_blocks(self.context, BLOCK_N)) + 1))

    def row(self, num_splits: int) -> dict[str, object]:
        return {"batch": self.batch, "q_heads": self.q_heads, "kv_heads": self.kv_heads,
                "context": self.context, "head_dim": self.head_dim, "num_splits": num_splits,
                "kv_blocks": kv_blocks(self.context, BLOCK_N), "block_n": BLOCK_N}


# (batch, q_heads, kv_heads, context): Llama-3.1-8B (32/8), Llama-70B per GPU at TP8 (8/1),
# an MHA model (12/12, the FlashAttention #609 case) and grids that already fill 132 SMs.
DECODE_SHAPES = tuple(DecodeShape(*s) for s in (
    (1, 32, 8, 4096), (1, 32, 8, 32768), (1, 8, 1, 8192), (1, 8, 1, 65536),
    (1, 12, 12, 16384), (2, 32, 8, 16384), (4, 8, 1, 32768), (4, 32, 8, 8192),
    (8, 32, 8, 4096), (16, 32, 8, 2048),
))


@dataclass(frozen=True)
class GemmShape:
    n: int
    k: int
    label: str

    def ms(self) -> list[int]:
        return list(range(16, 4096 + 1, 16))


# Llama-3.1-8B's projections (hidden 4096, intermediate 14336) as N x K.
GEMM_SHAPES = (
    GemmShape(14336, 4096, "llama-3.1-8b mlp up/gate (one of them)"),
    GemmShape(4096, 14336, "llama-3.1-8b mlp down"),
    GemmShape(4096, 4096, "llama-3.1-8b attention o_proj"),
)


def plan(name: str) -> list[dict[str, object]]:
    """Every row (without its timing) the recording ``name`` will produce, in order."""
    if name == "split_kv":
        return [s.row(n) for s in DECODE_SHAPES for n in s.split_counts()]
    if name == "gemm_waves":
        return [{"m": m, "n": g.n, "k": g.k, "dtype": "bf16", "label": g.label}
                for g in GEMM_SHAPES for m in g.ms()]
    raise ValueError(f"unknown recording {name!r}; choose one of {', '.join(NAMES)}")
