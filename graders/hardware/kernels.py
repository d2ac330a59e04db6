# mypy: disallow-untyped-defs=False, disallow-incomplete-defs=False, disallow-untyped-decorators=False
# (Triton kernels: parameters are device pointers and tl.constexpr, not Python types.)
"""Reference GPU workloads the recorder times: a split-KV decode and a bf16 GEMM.

The split-KV decode is a two-kernel Triton program, so that the split count is a real
grid dimension (what the split_kv kata reasons about): kernel 1 runs one program per
(sequence, query head, split), streams that split's keys with an online softmax and writes
a partial output and its log-sum-exp; kernel 2 runs one program per (sequence, query head)
and merges the partials exactly. Grouped-query attention: query head h reads KV head
h // (q_heads // kv_heads).

torch and triton are imported inside the functions: this module is imported by the
project's CPU tests, where neither may be installed. On the CPU the Triton interpreter
(TRITON_INTERPRET=1, set before triton is imported) runs the same kernels, which is how the
project's suite checks them against a float64 numpy attention.
"""

from __future__ import annotations

import math
from typing import Any

BLOCK_N = 64  # keys per inner step; also the KV block the split count is counted in


def kv_blocks(context: int, block_n: int = BLOCK_N) -> int:
    """KV blocks of ``block_n`` keys covering ``context`` keys."""
    return -(-context // block_n)


def split_ranges(context: int, num_splits: int, block_n: int = BLOCK_N) -> list[tuple[int, int]]:
    """Contiguous key ranges, whole blocks each: ceil(blocks / splits) blocks per split.

    Trailing splits may be empty (9 blocks over 4 splits: 3, 3, 3, 0 blocks).
    """
    if context < 1 or num_splits < 1:
        raise ValueError("context and num_splits must be positive")
    per = -(-kv_blocks(context, block_n) // num_splits) * block_n
    return [(min(context, i * per), min(context, (i + 1) * per)) for i in range(num_splits)]


_KERNELS: dict[str, Any] = {}


def _build() -> dict[str, Any]:
    if _KERNELS:
        return _KERNELS
    import triton  # type: ignore[import-untyped, import-not-found, unused-ignore]
    import triton.language as tl  # type: ignore[import-untyped, import-not-found, unused-ignore]

    @triton.jit
    def partial_kernel(q_ptr, k_ptr, v_ptr, out_ptr, lse_ptr, context, per_split, group,
                       q_heads, kv_heads, num_splits, scale,
                       HEAD_DIM: tl.constexpr, BLOCK: tl.constexpr):
        pid_bh = tl.program_id(0)
        split = tl.program_id(1)
        b = pid_bh // q_heads
        h = pid_bh % q_heads
        kvh = h // group
        d = tl.arange(0, HEAD_DIM)
        q = tl.load(q_ptr + (b * q_heads + h) * HEAD_DIM + d).to(tl.float32)
        start = split * per_split
        end = tl.minimum(start + per_split, context)
        m_i = -float("inf")
        l_i = 0.0
        acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
        kv_base = (b * kv_heads + kvh) * context * HEAD_DIM
        for n0 in range(start, end, BLOCK):
            n = n0 + tl.arange(0, BLOCK)
            valid = n < end
            offs = kv_base + n[:, None] * HEAD_DIM + d[None, :]
            k = tl.load(k_ptr + offs, mask=valid[:, None], other=0.0).to(tl.float32)
            s = tl.sum(k * q[None, :], axis=1) * scale
            s = tl.where(valid, s, -float("inf"))
            m_new = tl.maximum(m_i, tl.max(s, axis=0))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new)
            v = tl.load(v_ptr + offs, mask=valid[:, None], other=0.0).to(tl.float32)
            acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
            l_i = l_i * alpha + tl.sum(p, axis=0)
            m_i = m_new
        row = (b * q_heads + h) * num_splits + split
        has = l_i > 0.0
        safe_l = tl.where(has, l_i, 1.0)
        tl.store(out_ptr + row * HEAD_DIM + d, acc / safe_l)
        tl.store(lse_ptr + row, tl.where(has, m_i + tl.log(safe_l), -float("inf")))

    @triton.jit
    def merge_kernel(part_ptr, lse_ptr, out_ptr, num_splits,
                     HEAD_DIM: tl.constexpr, SPLITS: tl.constexpr):
        row = tl.program_id(0)
        s = tl.arange(0, SPLITS)
        d = tl.arange(0, HEAD_DIM)
        ok = s < num_splits
        lse = tl.load(lse_ptr + row * num_splits + s, mask=ok, other=-float("inf"))
        top = tl.max(lse, axis=0)
        top = tl.where(top == -float("inf"), 0.0, top)
        w = tl.exp(lse - top)
        total = tl.sum(w, axis=0)
        parts = tl.load(part_ptr + (row * num_splits + s[:, None]) * HEAD_DIM + d[None, :],
                        mask=ok[:, None], other=0.0)
        merged = tl.sum(w[:, None] * parts, axis=0) / tl.where(total > 0.0, total, 1.0)
        tl.store(out_ptr + row * HEAD_DIM + d, merged)

    _KERNELS.update(partial=partial_kernel, merge=merge_kernel, triton=triton)
    return _KERNELS


def split_kv_decode(q: Any, k: Any, v: Any, num_splits: int, block_n: int = BLOCK_N) -> Any:
    """One decode step: q [B, Hq, D], k and v [B, Hkv, L, D] (torch tensors, same device).

    Returns the attention output [B, Hq, D] in float32, computed with ``num_splits`` splits.
    """
    import torch

    kernels = _build()
    batch, q_heads, head_dim = q.shape
    kv_heads, context = k.shape[1], k.shape[2]
    if q_heads % kv_heads:
        raise ValueError("q_heads must be a multiple of kv_heads")
    if num_splits < 1 or num_splits > kv_blocks(context, block_n):
        raise ValueError(f"num_splits must be in 1..{kv_blocks(context, block_n)}")
    per_split = -(-kv_blocks(context, block_n) // num_splits) * block_n
    rows = batch * q_heads
    part = torch.empty((rows * num_splits, head_dim), device=q.device, dtype=torch.float32)
    lse = torch.empty((rows * num_splits,), device=q.device, dtype=torch.float32)
    out = torch.empty((batch, q_heads, head_dim), device=q.device, dtype=torch.float32)
    kernels["partial"][(rows, num_splits)](
        q.contiguous(), k.contiguous(), v.contiguous(), part, lse, context, per_split,
        q_heads // kv_heads, q_heads, kv_heads, num_splits, 1.0 / math.sqrt(head_dim),
        HEAD_DIM=head_dim, BLOCK=block_n)
    splits_pow2 = kernels["triton"].next_power_of_2(num_splits)
    kernels["merge"][(rows,)](part, lse, out, num_splits, HEAD_DIM=head_dim,
                              SPLITS=splits_pow2)
    return out


def make_decode_inputs(batch: int, q_heads: int, kv_heads: int, context: int, head_dim: int,
                       device: str, dtype: Any = None, seed: int = 0) -> tuple[Any, Any, Any]:
    """Random q, k, v for one decode step (bf16 by default)."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(seed)
    dtype = dtype or torch.bfloat16
    q = torch.randn((batch, q_heads, head_dim), generator=gen).to(device=device, dtype=dtype)
    k = torch.randn((batch, kv_heads, context, head_dim), generator=gen).to(device=device, dtype=dtype)
    v = torch.randn((batch, kv_heads, context, head_dim), generator=gen).to(device=device, dtype=dtype)
    return q, k, v


def make_gemm_inputs(m: int, n: int, k: int, device: str, dtype: Any = None,
                     seed: int = 0) -> tuple[Any, Any]:
    """A [M, K] and B [K, N] (bf16 by default): the recorder times A @ B."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(seed)
    dtype = dtype or torch.bfloat16
    a = torch.randn((m, k), generator=gen).to(device=device, dtype=dtype)
    b = torch.randn((k, n), generator=gen).to(device=device, dtype=dtype)
    return a, b
