"""collectives: an independent correct solution, written blind.

Written by a blind tester session, 2026-12-04, from the prompt, stub and public tests only
(it saw neither the reference nor the hidden tests); kept as the tester wrote it, untyped,
with only this docstring changed.

How it differs from the reference (solutions/collectives.py):

- times are computed from the prompt's float formulas directly (no coefficient table for
  the float functions); the exact functions use (steps, bytes per link) Fractions as
  lines, and ``best_allreduce`` keeps the first strict minimum in a loop;
- the config is read by one helper that checks the three fields (present, int, >= 1) in
  every config-taking function, and ``best_layout`` prices each layout through a shared
  private step helper;
- the slow-link search probes the *larger* half of the suspects (ceil(s/2), the reference
  probes floor(s/2)), remembers one GPU it has cleared to pad a lone suspect, and sends
  max(1024 k, ceil(20 k alpha link)) bytes (twenty times the latency term, the reference
  ten, with no 2**53 cap); it decides "slow" against the midpoint between the healthy ring
  time and the time at half the link rate, as the reference does.
"""
from __future__ import annotations

import math
from fractions import Fraction

ALGOS = ("one_shot", "two_shot", "ring")   # tie order: fewer steps first


def _int(x, what, lo=None):
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(f"{what} must be an int, got {x!r}")
    if lo is not None and x < lo:
        raise ValueError(f"{what} must be >= {lo}, got {x!r}")
    return x


def _num(x, what):
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ValueError(f"{what} must be a finite number, got {x!r}")
    return x


def _nonneg(x, what):
    _num(x, what)
    if x < 0:
        raise ValueError(f"{what} must be >= 0")
    return x


def _pos(x, what):
    _num(x, what)
    if x <= 0:
        raise ValueError(f"{what} must be > 0")
    return x


def _algo(a):
    if not isinstance(a, str) or a not in ALGOS:
        raise ValueError(f"unknown algorithm {a!r}")
    return a


def _coef(algo, n):
    """(steps, bytes over the busiest link per message byte) as exact values."""
    if algo == "ring":
        return 2 * (n - 1), Fraction(2 * (n - 1), n)
    if algo == "one_shot":
        return 1, Fraction(n - 1)
    return 2, Fraction(2 * (n - 1), n)


def _time_float(algo, n, s, alpha, link):
    if algo == "ring":
        return 2 * (n - 1) * (alpha + s / (n * link))
    if algo == "one_shot":
        return alpha + (n - 1) * s / link
    return 2 * (alpha + (n - 1) * s / (n * link))


def allreduce_time_ns(algo, n, nbytes, alpha_ns, link_gb_s):
    _algo(algo)
    _int(n, "n", 2)
    _int(nbytes, "nbytes", 0)
    _nonneg(alpha_ns, "alpha_ns")
    _pos(link_gb_s, "link_gb_s")
    return float(_time_float(algo, n, nbytes, alpha_ns, link_gb_s))


def bus_bandwidth_gb_s(n, nbytes, time_ns):
    _int(n, "n", 2)
    _int(nbytes, "nbytes", 0)
    _pos(time_ns, "time_ns")
    return nbytes / time_ns * (2 * (n - 1) / n)


def _exact_checks(n, alpha_ns, link_gb_s):
    _int(n, "n", 2)
    _int(alpha_ns, "alpha_ns", 0)
    _int(link_gb_s, "link_gb_s", 1)


def _line(algo, n, alpha, link):
    steps, per = _coef(algo, n)
    return Fraction(steps * alpha), per / link


def crossover_bytes(small_algo, large_algo, n, alpha_ns, link_gb_s):
    _algo(small_algo)
    _algo(large_algo)
    _exact_checks(n, alpha_ns, link_gb_s)
    a0, a1 = _line(small_algo, n, alpha_ns, link_gb_s)
    b0, b1 = _line(large_algo, n, alpha_ns, link_gb_s)
    # large strictly faster at S  <=>  (a0 - b0) + (a1 - b1) S > 0
    d0, d1 = a0 - b0, a1 - b1
    if d1 > 0:
        x = -d0 / d1
        return max(1, math.floor(x) + 1)
    if d1 == 0:
        return 1 if d0 > 0 else None
    return None


def best_allreduce(n, nbytes, alpha_ns, link_gb_s):
    _exact_checks(n, alpha_ns, link_gb_s)
    _int(nbytes, "nbytes", 0)
    best, best_t = None, None
    for algo in ALGOS:
        c0, c1 = _line(algo, n, alpha_ns, link_gb_s)
        t = c0 + c1 * nbytes
        if best_t is None or t < best_t:
            best, best_t = algo, t
    return best


def _cfg(cfg):
    if not isinstance(cfg, dict):
        raise ValueError("cfg must be a dict")
    out = []
    for key in ("hidden_size", "num_hidden_layers", "num_attention_heads"):
        if key not in cfg:
            raise ValueError(f"config lacks {key}")
        out.append(_int(cfg[key], key, 1))
    return out


def _tp(cfg, tp):
    H, L, heads = _cfg(cfg)
    _int(tp, "tp", 1)
    if heads % tp:
        raise ValueError(f"tp {tp} does not divide {heads} heads")
    return H, L, heads


def allreduces_per_token(cfg, tp):
    _, L, _ = _tp(cfg, tp)
    return 0 if tp == 1 else 2 * L


def allreduce_bytes(cfg, batch, act_bytes=2):
    H, _, _ = _cfg(cfg)
    _int(batch, "batch", 1)
    _int(act_bytes, "act_bytes", 1)
    return batch * H * act_bytes


def _step(cfg, batch, tp, pp, step_bytes, hbm_gb_s, alpha_ns, link_gb_s, act_bytes):
    H, L, _ = _tp(cfg, tp)
    _int(pp, "pp", 1)
    if pp > L:
        raise ValueError(f"pp {pp} above {L} layers")
    _int(batch, "batch", 1)
    _int(act_bytes, "act_bytes", 1)
    _nonneg(step_bytes, "step_bytes")
    _pos(hbm_gb_s, "hbm_gb_s")
    _nonneg(alpha_ns, "alpha_ns")
    _pos(link_gb_s, "link_gb_s")
    s = batch * H * act_bytes
    t = step_bytes / (tp * hbm_gb_s)
    if tp > 1:
        t += 2 * L * min(_time_float(a, tp, s, alpha_ns, link_gb_s) for a in ALGOS)
    t += (pp - 1) * (alpha_ns + s / link_gb_s)
    return float(t)


def step_time_ns(cfg, batch, tp, pp, step_bytes, hbm_gb_s, alpha_ns, link_gb_s, act_bytes=2):
    return _step(cfg, batch, tp, pp, step_bytes, hbm_gb_s, alpha_ns, link_gb_s, act_bytes)


def best_layout(cfg, batch, layouts, step_bytes, hbm_gb_s, alpha_ns, link_gb_s, act_bytes=2):
    if not isinstance(layouts, (list, tuple)) or len(layouts) == 0:
        raise ValueError("layouts must be a non-empty list")
    best, best_t = None, None
    for entry in layouts:
        if not isinstance(entry, (list, tuple)) or len(entry) != 2:
            raise ValueError(f"layout {entry!r} is not a (tp, pp) pair")
        tp, pp = entry
        t = _step(cfg, batch, tp, pp, step_bytes, hbm_gb_s, alpha_ns, link_gb_s, act_bytes)
        if best_t is None or t < best_t:
            best, best_t = (tp, pp), t
    return best


def step_slowdown(comm_share, link_slowdown):
    _num(comm_share, "comm_share")
    _num(link_slowdown, "link_slowdown")
    if not 0 <= comm_share <= 1:
        raise ValueError("comm_share outside [0, 1]")
    if link_slowdown < 1:
        raise ValueError("link_slowdown below 1")
    return (1 - comm_share) + comm_share * link_slowdown


class SlowLinkSearch:
    def __init__(self, n_gpus, alpha_ns, link_gb_s):
        _int(n_gpus, "n_gpus", 3)
        _nonneg(alpha_ns, "alpha_ns")
        _pos(link_gb_s, "link_gb_s")
        self.n, self.alpha, self.link = n_gpus, alpha_ns, link_gb_s
        self.suspects = list(range(n_gpus))   # increasing, contiguous bookkeeping not needed
        self.cleared = None                   # any GPU known healthy
        self.pending = None                   # (gpus, nbytes, probed_suspects)

    def _done(self):
        return len(self.suspects) == 1

    def _make_probe(self):
        s = self.suspects
        half = s[:(len(s) + 1) // 2]          # probe ceil(s/2); the rest is floor(s/2)
        members = list(half)
        if len(members) < 2:
            members = sorted(members + [self.cleared])
        k = len(members)
        nbytes = max(1024 * k, math.ceil(20 * k * self.alpha * self.link))
        return members, int(nbytes), half

    def next_probe(self):
        if self._done():
            return None
        if self.pending is None:
            self.pending = self._make_probe()
        gpus, nbytes, _ = self.pending
        return list(gpus), nbytes

    def record(self, measured_ns):
        if self.pending is None or self._done():
            raise RuntimeError("no probe pending")
        _pos(measured_ns, "measured_ns")
        gpus, nbytes, half = self.pending
        k = len(gpus)
        healthy = 2 * (k - 1) * (self.alpha + nbytes / (k * self.link))
        slow = 2 * (k - 1) * (self.alpha + 2 * nbytes / (k * self.link))
        is_slow = measured_ns > (healthy + slow) / 2
        hs = set(half)
        rest = [g for g in self.suspects if g not in hs]
        if is_slow:
            self.suspects, cleared = half, rest
        else:
            self.suspects, cleared = rest, half
        if cleared:
            self.cleared = cleared[0]
        self.pending = None

    def culprit(self):
        if not self._done():
            raise RuntimeError("search not done")
        return self.suspects[0]
