"""Faults operators live with besides crashes: stragglers, hangs, and hardware that computes wrongly in silence.

* **Stragglers.** A synchronous step ends when the slowest rank finishes: T_step = max over n ranks of T_i. If each
  rank's time is a base b plus an independent exponential delay with mean s, the expected maximum is exact,
  E[T_step] = b + s·H_n, with H_n = 1 + 1/2 + … + 1/n the n-th harmonic number (≈ ln n + 0.5772): the tail cost
  grows with the logarithm of the rank count (Rényi's representation of exponential order statistics).
* **Hangs.** A collective that never completes raises no error; a watchdog kills the job after a timeout T_w. A
  hang then costs the timeout on top of what a crash costs: T_w + (τ + C)/2 + R (:mod:`chipchain.checkpoint`).
* **Silent data corruption and health checks.** A device that miscomputes without an error, or a bad node that
  burn-in did not catch: with a per-device defect probability p and a screen that catches the fraction c, a job on
  n devices starts clean with probability (1 − p·(1 − c))ⁿ and expects n·p·(1 − c) bad devices.

Seconds in, seconds out; rates are per device. The scalar equations are element-wise over NumPy arrays.

>>> round(straggler_step_seconds(1.0, 0.05, 1024), 3)       # 1 s steps, 50 ms mean jitter, 1,024 ranks
1.375
"""
from __future__ import annotations

import math

from ._lazy import np

from . import _check, checkpoint

__all__ = ["harmonic_number", "straggler_step_seconds", "straggler_overhead", "simulate_step_seconds",
           "hang_seconds_lost", "expected_faulty", "clean_start_probability"]

_EULER_GAMMA = 0.5772156649015329
_EXACT_UP_TO = 10**6
_MAX_SAMPLES = 2 * 10**7


def harmonic_number(n) -> float:
    """H_n = Σ_{k=1}^{n} 1/k, summed term by term (NumPy pairwise summation, error ~10⁻¹⁵) up to n = 10⁶ and from the asymptotic series
    ln n + γ + 1/(2n) − 1/(12n²) + 1/(120n⁴) beyond (error below 10⁻²⁴ there). ``n`` a positive whole number.

    >>> harmonic_number(1), round(harmonic_number(4), 12), round(harmonic_number(10**5), 4)   # 1 + 1/2 + 1/3 + 1/4
    (1.0, 2.083333333333, 12.0901)
    """
    n = _check.integer("n", n)
    if n <= _EXACT_UP_TO:
        if n <= 64:
            return math.fsum(1.0 / k for k in range(1, n + 1))
        return float(np.sum(1.0 / np.arange(n, 0, -1, dtype=float)))          # pairwise summation
    return math.log(n) + _EULER_GAMMA + 1 / (2 * n) - 1 / (12 * n**2) + 1 / (120 * n**4)


def straggler_step_seconds(base_seconds, jitter_seconds, n_ranks) -> float:
    """Expected synchronous step time when each of ``n_ranks`` ranks takes ``base_seconds`` b plus an independent
    exponential delay of mean ``jitter_seconds`` s: E[max] = b + s·H_n (seconds; :func:`harmonic_number`).

    >>> round(straggler_step_seconds(1.0, 0.05, 1), 3), round(straggler_step_seconds(1.0, 0.05, 100_000), 3)
    (1.05, 1.605)
    """
    b = _check.positive("base_seconds", base_seconds)
    s = _check.nonnegative("jitter_seconds", jitter_seconds)
    return b + s * harmonic_number(n_ranks)


def straggler_overhead(base_seconds, jitter_seconds, n_ranks) -> float:
    """Fraction of each step lost to waiting for the slowest rank: 1 − (b + s)/E[max], where b + s is one rank's
    mean time. Zero for one rank; rises like s·ln n / (b + s·ln n).

    >>> round(straggler_overhead(1.0, 0.05, 1024), 3)
    0.237
    """
    t = straggler_step_seconds(base_seconds, jitter_seconds, n_ranks)
    return 1.0 - (float(base_seconds) + float(jitter_seconds)) / t


def simulate_step_seconds(base_seconds, jitter_seconds, n_ranks, steps=200, seed=0):
    """Monte Carlo of the same model: ``steps`` synchronous steps, each the maximum over ``n_ranks`` independent
    draws of b + Exp(mean s), every rank drawn (no shortcut through the distribution of the maximum). Returns the
    array of step times in seconds. At most 2 × 10⁷ draws (n_ranks × steps) so that it answers within a second.

    >>> t = simulate_step_seconds(1.0, 0.05, 1024, steps=400, seed=1)
    >>> bool(abs(t.mean() - straggler_step_seconds(1.0, 0.05, 1024)) < 3 * t.std() / 20)
    True
    """
    b = _check.positive("base_seconds", base_seconds)
    s = _check.nonnegative("jitter_seconds", jitter_seconds)
    n = _check.integer("n_ranks", n_ranks)
    k = _check.integer("steps", steps)
    if n * k > _MAX_SAMPLES:
        raise ValueError(f"n_ranks × steps must be at most {_MAX_SAMPLES:,} draws, got {n:,} × {k:,}")
    rng = np.random.default_rng(_check.integer("seed", seed, minimum=0))
    out = np.empty(k)
    chunk = max(1, _MAX_SAMPLES // 10 // n)
    for i in range(0, k, chunk):
        m = min(chunk, k - i)
        out[i:i + m] = rng.exponential(s, size=(m, n)).max(axis=1) if s > 0 else 0.0
    return b + out


def hang_seconds_lost(timeout_seconds, interval, checkpoint_seconds, restart_seconds):
    """Expected wall time one hang costs: the watchdog's ``timeout_seconds`` T_w (nothing progresses while it runs)
    plus what any failure costs, (τ + C)/2 of rework and the restart R (:func:`checkpoint.time_lost_per_failure`):
    L = T_w + (τ + C)/2 + R, seconds. Element-wise.

    PyTorch's NCCL default timeout of 10 minutes, hourly checkpoints written in a minute and a 10-minute restart:

    >>> hang_seconds_lost(600, 3600, 60, 600) / 60
    50.5
    """
    w = _check.values("timeout_seconds", timeout_seconds, _check.nonnegative)
    return _check.result(w + checkpoint.time_lost_per_failure(interval, checkpoint_seconds, restart_seconds))


def expected_faulty(n_devices, defect_rate, coverage=0.0):
    """Expected number of faulty devices in a job of ``n_devices``: n·p·(1 − c), with ``defect_rate`` p the
    probability that a device is faulty (silently corrupting, or bad from the factory) and ``coverage`` c the
    fraction of such devices that burn-in or health checks catch before the job starts. Element-wise.

    At about one faulty device in a thousand (Meta's fleet figure for silent data corruption):

    >>> round(expected_faulty(16_384, 1e-3), 3), round(expected_faulty(16_384, 1e-3, coverage=0.9), 3)
    (16.384, 1.638)
    """
    n = _check.values("n_devices", n_devices, _check.integer)
    p = _check.values("defect_rate", defect_rate, _check.probability)
    c = _check.values("coverage", coverage, _check.probability)
    return _check.result(n * p * (1 - c))


def clean_start_probability(n_devices, defect_rate, coverage=0.0):
    """Probability that none of ``n_devices`` is faulty after screening: (1 − p·(1 − c))ⁿ, computed in log space
    so that it stays exact for a million devices. Element-wise.

    >>> round(clean_start_probability(1024, 1e-3), 3), round(clean_start_probability(1024, 1e-3, 0.99), 3)
    (0.359, 0.99)
    """
    n = _check.values("n_devices", n_devices, _check.integer)
    p = _check.values("defect_rate", defect_rate, _check.probability)
    c = _check.values("coverage", coverage, _check.probability)
    q = p * (1 - c)
    with np.errstate(divide="ignore"):
        return _check.result(np.exp(n * np.log1p(-q)))
