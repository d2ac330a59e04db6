"""What the references are measured against: the approach a production engine takes (a
peer) and the least work the task physically needs (a floor). Written for this project from
the public descriptions cited on each; none is a copy of the project it follows.

torch is imported only inside the top_p peers, so importing this module costs nothing.
"""

from __future__ import annotations

import codecs
import hashlib
import pickle
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

# -- top_p ------------------------------------------------------------------------------


def torch_single_thread() -> Any:
    """torch, limited to one thread: numpy and the references run on one core, so a
    comparison with a multi-threaded torch would measure the core count."""
    import torch

    torch.set_num_threads(1)
    return torch


def vllm_top_p(logits: torch.Tensor, temperature: torch.Tensor,
               top_p: torch.Tensor) -> torch.Tensor:
    """vLLM's PyTorch top-p path (``apply_top_k_top_p_pytorch`` in
    vllm/v1/sample/ops/topk_topp_sampler.py): sort each row ascending, softmax over the
    sorted row, cumulative sum, mask the positions whose cumulative mass is at most
    ``1 - p`` (never the last, the largest logit), scatter the masked row back to token
    order. Temperature divides the logits first, as vLLM's sampler does before top-p.
    Returns the (B, V) kept mask."""
    import torch

    scaled = logits / temperature.unsqueeze(1)
    ordered, order = scaled.sort(dim=-1)
    mass = ordered.softmax(dim=-1)
    torch.cumsum(mass, dim=-1, out=mass)
    drop = mass <= (1 - top_p).unsqueeze(1)
    drop[:, -1] = False
    ordered.masked_fill_(drop, float("-inf"))
    kept = torch.empty_like(scaled).scatter_(-1, order, ordered)
    return kept > float("-inf")


def pivot_top_p(logits: np.ndarray, temperature: np.ndarray, top_p: np.ndarray,
                max_passes: int = 200) -> np.ndarray:
    """Sort-free top-p in the style of FlashInfer's ``TopPRenormProbKernel``
    (include/flashinfer/sampling.cuh), in numpy. With f(x) = the mass of the probabilities
    above x, keep an interval (low, high] with f(low) >= p > f(high); each pass tries two
    pivots at its thirds and also finds the smallest probability above low and the largest
    at or below high; the search stops when no probability lies strictly between those two.
    The kept set is every probability above low.

    The kernel re-reads the whole row on every pass, which costs a GPU little; on a CPU
    each pass here keeps only the probabilities still inside (low, high] and carries the
    mass above high as a number, so later passes touch a shrinking candidate set. Rows are
    searched one at a time. Returns the (B, V) kept mask."""
    z = logits / temperature[:, None].astype(logits.dtype)
    z -= z.max(axis=1, keepdims=True)
    probs = np.exp(z)
    probs /= probs.sum(axis=1, keepdims=True)
    lows = np.empty(len(probs), dtype=probs.dtype)
    for r, row in enumerate(probs):
        p = float(top_p[r])
        low, high, base = 0.0, float(row.max()), 0.0
        cand = row                        # the probabilities in (low, high]
        for _ in range(max_passes):
            pivot0, pivot1 = (high + 2 * low) / 3, (2 * high + low) / 3
            above0 = base + float(cand.sum(where=cand > pivot0))
            above1 = base + float(cand.sum(where=cand > pivot1))
            min_gt_low = float(cand.min()) if cand.size else high
            max_le_high = float(cand.max()) if cand.size else low
            if above1 >= p:
                low = pivot1
            elif above0 >= p:
                low, high = pivot0, min(pivot1, max_le_high)
            else:
                high = min(pivot0, max_le_high)
            gap = np.nextafter(np.float32(min_gt_low), np.float32(max_le_high))
            if not (min_gt_low < max_le_high and gap < max_le_high):
                break
            over = cand > high
            base += float(cand.sum(where=over))
            cand = cand[(cand > low) & ~over]
        lows[r] = low
    kept: np.ndarray = probs > lows[:, None]
    return kept


def one_pass_max(logits: np.ndarray) -> np.ndarray:
    """The floor: read every logit once (a row maximum, which any softmax needs)."""
    out: np.ndarray = logits.max(axis=1)
    return out


# -- stream_detok -----------------------------------------------------------------------


def decode_stream(tokenizer: Any, ids: Sequence[int]) -> list[str]:
    """tokenizers' ``DecodeStream``, one ``step`` per token; the pieces it returns."""
    from tokenizers.decoders import DecodeStream

    stream = DecodeStream(skip_special_tokens=False)
    out: list[str] = []
    for t in ids:
        piece = stream.step(tokenizer, t)
        if piece is not None:
            out.append(piece)
    return out


def decode_stream_stops(tokenizer: Any, ids: Sequence[int], stops: Sequence[str]) -> list[str]:
    """``DecodeStream`` plus the stop-string handling of vLLM's v1 detokenizer
    (``check_stop_strings`` and the stop buffer in vllm/v1/engine/detokenizer.py): search
    each stop only in the new text and the ``len(stop) - 1`` characters before it, and hold
    back the last ``len(longest stop) - 1`` characters until they can no longer start one.
    Returns what was sent, ending right before the first stop."""
    from tokenizers.decoders import DecodeStream

    stream = DecodeStream(skip_special_tokens=False)
    hold = max(len(s) for s in stops) - 1
    pending = ""   # the held-back end of the text: at most ``hold`` characters
    out: list[str] = []
    for t in ids:
        piece = stream.step(tokenizer, t)
        if not piece:
            continue
        window = pending + piece
        first = -1
        for s in stops:
            at = window.find(s, max(0, len(pending) - len(s) + 1))
            if at >= 0 and (first < 0 or at < first):
                first = at
        if first >= 0:
            out.append(window[:first])
            return out
        cut = max(0, len(window) - hold)
        out.append(window[:cut])
        pending = window[cut:]
    out.append(pending)
    return out


def utf8_floor(vocab: Sequence[bytes], ids: Sequence[int]) -> list[str]:
    """The floor: the standard incremental UTF-8 decoder over each token's bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    out = [decoder.decode(vocab[t]) for t in ids]
    out.append(decoder.decode(b"", final=True))
    return out


# -- block_hash -------------------------------------------------------------------------

#: The chain's root, as vLLM's NONE_HASH (random per process there; fixed here).
ROOT_HASH = hashlib.sha256(b"inference-katas bench root").digest()


def vllm_block_chain(tokens: list[int], block_size: int) -> list[bytes]:
    """vLLM's prefix-cache hash chain (``hash_block_tokens`` in
    vllm/v1/core/kv_cache_utils.py with its ``sha256`` hash function): each full block's
    hash is SHA-256 of the pickled tuple (parent hash, the block's tokens, extra keys), the
    first block's parent a fixed root."""
    parent, out = ROOT_HASH, []
    for start in range(0, len(tokens) - block_size + 1, block_size):
        key = (parent, tuple(tokens[start:start + block_size]), None)
        parent = hashlib.sha256(pickle.dumps(key, protocol=pickle.HIGHEST_PROTOCOL)).digest()
        out.append(parent)
    return out


def hashlib_chain(tokens: list[int], block_size: int) -> list[bytes]:
    """The floor: the token ids packed once as 4-byte integers, then SHA-256 of (parent
    digest + block bytes) per full block."""
    data = memoryview(array("I", tokens).tobytes())
    step, parent, out = 4 * block_size, ROOT_HASH, []
    for start in range(0, len(data) - step + 1, step):
        h = hashlib.sha256(parent)
        h.update(data[start:start + step])
        parent = h.digest()
        out.append(parent)
    return out


# -- spec_decode ------------------------------------------------------------------------


def one_pass_pq(p: np.ndarray, q: np.ndarray) -> float:
    """The floor of ``verify_sampled``: read both probability arrays once."""
    return float(p.max()) + float(q.max())
