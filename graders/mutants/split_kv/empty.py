"""Trivial answers: every call returns something of the right shape and type, computing nothing.

Rubric: *
"""

from __future__ import annotations

import numpy as np


def attend_partial(q, k, v, scale, valid=None):
    q = np.asarray(q)
    v = np.asarray(v)
    return np.zeros((q.shape[0], v.shape[2])), np.zeros(q.shape[0])


def merge_partials(outs, lses):
    return np.asarray(outs, dtype=np.float64)[0], np.asarray(lses, dtype=np.float64)[0]


def split_ranges(num_keys, block_size, num_splits):
    return [(0, num_keys)] + [(num_keys, num_keys)] * (num_splits - 1)


def decode_partials(q, k_cache, v_cache, context_lens, scale, block_size, num_splits):
    q = np.asarray(q)
    v = np.asarray(v_cache)
    return (np.zeros((num_splits, q.shape[0], q.shape[1], v.shape[3])),
            np.zeros((num_splits, q.shape[0], q.shape[1])))


def split_kv_decode(q, k_cache, v_cache, context_lens, scale, block_size, num_splits):
    q = np.asarray(q)
    v = np.asarray(v_cache)
    return np.zeros((q.shape[0], q.shape[1], v.shape[3])), np.zeros(q.shape[:2])


def wave_efficiency(work, num_splits, num_sms):
    return (1, 1)


def choose_num_splits(batch, q_heads, num_kv_blocks, num_sms, max_splits=128,
                      fill_fraction=(4, 5), efficiency_fraction=(17, 20)):
    return 1

def plan_splits(batch, q_heads, kv_heads, context, num_sms):
    return 1
