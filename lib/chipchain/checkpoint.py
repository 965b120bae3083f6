"""Checkpoints: how big, how fast to write, how often (Young 1974, Daly 2006), and the goodput that results.

Goodput — the fraction of wall-clock time that becomes kept progress — follows from a renewal argument (the
wall-clock model of Daly 2006): each segment is τ seconds of work followed by a C-second checkpoint write; a failure
loses the segment in progress and costs a restart of R seconds. Young's τ = √(2CM) maximises the first-order
goodput; Daly's higher-order τ sits at the optimum of the exact one.

Arguments follow the book's names: ``interval`` τ, ``checkpoint_seconds`` C, ``restart_seconds`` R, ``mtbf`` M,
all in seconds. The interval and goodput equations are element-wise over NumPy arrays, so a figure evaluates
``goodput(np.geomspace(60, 86400, 200), 60, 600, 86400)`` in one call.

>>> round(daly_interval(60, 24 * 3600) / 60)       # minutes between checkpoints for a one-day MTBF
53
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ._lazy import np

from . import _check, assumptions, memory, reliability
from .units import DAY

__all__ = [
    "young_interval", "daly_interval", "optimal_interval", "goodput", "goodput_first_order",
    "time_lost_per_failure", "lost_seconds_per_week",
    "restart_bytes_per_param", "checkpoint_bytes", "write_seconds", "required_write_bandwidth",
    "blocking_copy_seconds", "async_interval", "async_goodput", "load_bytes_per_rank", "reshard_sources",
    "RunFailures", "run_failures",
]


# --- checkpoint interval -------------------------------------------------------------------------------------------

def young_interval(checkpoint_seconds, mtbf):
    """Young's first-order optimum checkpoint interval: τ = √(2·C·M) (Young 1974).

    ``checkpoint_seconds`` C and ``mtbf`` M in seconds; τ is the compute time between checkpoints.

    >>> round(young_interval(60, 24 * 3600))
    3220
    """
    c = _check.values("checkpoint_seconds", checkpoint_seconds, _check.positive)
    return _check.result(np.sqrt(2.0 * c * _check.values("mtbf", mtbf, _check.positive)))


def daly_interval(checkpoint_seconds, mtbf):
    """Daly's higher-order optimum checkpoint interval (Daly 2006, eq. 37):
    τ = √(2CM)·[1 + ⅓·√(C/2M) + (1/9)·(C/2M)] − C for C < 2M, else τ = M.

    >>> round(daly_interval(60, 24 * 3600))
    3180
    """
    c = _check.values("checkpoint_seconds", checkpoint_seconds, _check.positive)
    m = _check.values("mtbf", mtbf, _check.positive)
    x = c / (2 * m)
    tau = np.sqrt(2 * c * m) * (1 + np.sqrt(x) / 3 + x / 9) - c
    return _check.result(np.where(c >= 2 * m, m, tau))


def goodput(interval, checkpoint_seconds, restart_seconds, mtbf):
    """Expected goodput — kept progress per wall-clock second — for periodic checkpoints with Poisson failures:

    G = τ / (M · e^{R/M} · (e^{(τ+C)/M} − 1))

    The denominator is the expected wall time to finish one segment: (e^{(τ+C)/M} − 1) failures are expected before
    a segment completes, each followed by a restart that itself completes only after (e^{R/M} − 1) interrupted tries
    on average (the renewal model of Daly 2006). A failure during a write or a restart counts too. G is a fraction in
    (0, 1); element-wise over arrays.

    >>> round(goodput(3600, 60, 600, 24 * 3600), 4)
    0.9563
    """
    t = _check.values("interval", interval, _check.positive)
    c = _check.values("checkpoint_seconds", checkpoint_seconds, _check.nonnegative)
    r = _check.values("restart_seconds", restart_seconds, _check.nonnegative)
    m = _check.values("mtbf", mtbf, _check.positive)
    with np.errstate(over="ignore"):            # a segment far longer than M: the wall time is infinite, G = 0
        return _check.result(t / (m * np.exp(r / m) * np.expm1((t + c) / m)))


def goodput_first_order(interval, checkpoint_seconds, restart_seconds, mtbf):
    """First-order goodput, G ≈ 1 − C/τ − τ/(2M) − R/M: checkpoint overhead, half an interval of rework per failure,
    and the restart. Accurate while τ + C + R ≪ M; it is the expression Young's τ maximises. Element-wise.

    >>> round(goodput_first_order(3600, 60, 600, 24 * 3600), 4)
    0.9556
    """
    t = _check.values("interval", interval, _check.positive)
    c = _check.values("checkpoint_seconds", checkpoint_seconds, _check.nonnegative)
    r = _check.values("restart_seconds", restart_seconds, _check.nonnegative)
    m = _check.values("mtbf", mtbf, _check.positive)
    return _check.result(1.0 - c / t - t / (2 * m) - r / m)


def optimal_interval(checkpoint_seconds, restart_seconds, mtbf) -> float:
    """The interval that maximises :func:`goodput`, found numerically (golden-section search on log τ).

    Close to Daly's estimate; the restart time does not move the optimum (it multiplies every segment equally).
    Arguments and result in seconds.

    >>> round(optimal_interval(60, 600, 24 * 3600))
    3180
    """
    c = _check.positive("checkpoint_seconds", checkpoint_seconds)
    r = _check.nonnegative("restart_seconds", restart_seconds)
    m = _check.positive("mtbf", mtbf)
    a, b = math.log(max(c, m) * 1e-6), math.log(10 * m)
    g = (math.sqrt(5) - 1) / 2
    f = lambda x: -goodput(math.exp(x), c, r, m)          # noqa: E731
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, f2 = f(x1), f(x2)
    for _ in range(80):
        if f1 < f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - g * (b - a)
            f1 = f(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + g * (b - a)
            f2 = f(x2)
    return math.exp((a + b) / 2)


def time_lost_per_failure(interval, checkpoint_seconds, restart_seconds):
    """Expected wall time one failure costs, to first order: half a segment of rework plus the restart,
    L ≈ (τ + C)/2 + R (seconds). Element-wise.

    >>> time_lost_per_failure(3600, 60, 600)
    2430.0
    """
    t = _check.values("interval", interval, _check.positive)
    c = _check.values("checkpoint_seconds", checkpoint_seconds, _check.nonnegative)
    return _check.result((t + c) / 2 + _check.values("restart_seconds", restart_seconds, _check.nonnegative))


def lost_seconds_per_week(goodput):
    """Wall-clock seconds per week that do not become kept progress: (1 − G) × 604,800 s. Element-wise.

    >>> round(lost_seconds_per_week(0.95) / 3600, 1)      # hours
    8.4
    """
    return _check.result((1.0 - _check.values("goodput", goodput, _check.probability)) * 7 * DAY)


# --- checkpoint size and bandwidth ----------------------------------------------------------------------------------

def restart_bytes_per_param(recipe="mixed-adam") -> float:
    """Bytes per parameter a restart needs under a precision ``recipe`` of :data:`chipchain.memory.RECIPES`: the
    weights, the FP32 master weights and the optimizer moments — every model state except the gradients, which the
    next step recomputes from scratch. Mixed precision with Adam: 2 + 4 + 8 = 14 of its 16 bytes (Rajbhandari et
    al. 2020). (A restart also needs the RNG states and the data position: a few bytes, not per parameter.)

    >>> restart_bytes_per_param(), restart_bytes_per_param("fp32-adam"), memory.recipe("mixed-adam").total
    (14.0, 12.0, 16.0)
    """
    r = memory.recipe(recipe)
    return r.total - r.gradients


def checkpoint_bytes(params, bytes_per_param):
    """Size of a checkpoint: S = N × b. With mixed precision and Adam a full restart needs the BF16 weights (2 B),
    the FP32 master weights (4 B) and both Adam moments (4 + 4 B): b = 14 (:func:`restart_bytes_per_param`); weights
    alone are b = 2. The 16 B/parameter of training states (Rajbhandari et al. 2020) also count gradients, which a
    checkpoint need not save. Element-wise.

    >>> checkpoint_bytes(70e9, 14) / 1e9
    980.0
    """
    return _check.result(_check.values("params", params, _check.positive) * _check.values("bytes_per_param", bytes_per_param, _check.positive))


def write_seconds(nbytes, bandwidth):
    """Seconds to write a checkpoint: C = S / B (``bandwidth`` in bytes per second, aggregate over writers).
    Element-wise.

    >>> write_seconds(2.8e12, 50e9)
    56.0
    """
    return _check.result(_check.values("nbytes", nbytes, _check.nonnegative) / _check.values("bandwidth", bandwidth, _check.positive))


def required_write_bandwidth(nbytes, interval, overhead):
    """Write bandwidth needed so that a blocking checkpoint every ``interval`` seconds costs at most the fraction
    ``overhead`` of the time: B = S / (overhead × interval). Element-wise.

    Seed 002: a 70B model's 140 GB of BF16 weights every 30 minutes. Finishing within the 30 minutes needs only
    78 MB/s; "tens of GB/s" is what the full 980 GB state needs if the stall is to stay near 1 %:

    >>> round(required_write_bandwidth(140e9, 1800, 1.0) / 1e6)
    78
    >>> round(required_write_bandwidth(980e9, 1800, 0.01) / 1e9, 1)
    54.4
    """
    return _check.result(_check.values("nbytes", nbytes, _check.nonnegative)
                / (_check.values("overhead", overhead, _check.fraction) * _check.values("interval", interval, _check.positive)))


# --- asynchronous checkpoints and resharding -----------------------------------------------------------------------

def blocking_copy_seconds(nbytes, n_gpus, copy_bandwidth):
    """Seconds training stalls for an asynchronous checkpoint: only the device-to-host copy of each GPU's share
    blocks, C_block = (S / n) / B_copy, with ``nbytes`` S the whole restart state (bytes), ``n_gpus`` n the GPUs
    that hold it in equal shares and ``copy_bandwidth`` B_copy one GPU's device-to-host bandwidth (bytes/s, one
    direction). The write to storage then drains in the background. Element-wise.

    The running example's 2.45 TB over 1,024 GPUs at an assumed 25 GB/s of PCIe copy per GPU:

    >>> round(blocking_copy_seconds(2.45e12, 1024, 25e9), 3)
    0.096
    """
    s = _check.values("nbytes", nbytes, _check.positive)
    n = _check.values("n_gpus", n_gpus, _check.integer)
    return _check.result(s / n / _check.values("copy_bandwidth", copy_bandwidth, _check.positive))


def async_interval(blocking_seconds, drain_seconds, mtbf):
    """Checkpoint interval for asynchronous checkpoints: Young's τ = √(2·C_block·M) with the *blocking* cost
    C_block in place of the full write, but never shorter than the background drain W (``drain_seconds``): a new
    checkpoint cannot start before the last one reached storage. τ = max(√(2·C_block·M), W), seconds. Element-wise.

    >>> round(async_interval(0.1, 49, 178_000))          # the blocking cost sets it
    189
    >>> async_interval(0.001, 49, 178_000)               # the drain does
    49.0
    """
    c = _check.values("blocking_seconds", blocking_seconds, _check.positive)
    w = _check.values("drain_seconds", drain_seconds, _check.nonnegative)
    return _check.result(np.maximum(young_interval(c, mtbf), w))


def async_goodput(interval, blocking_seconds, drain_seconds, restart_seconds, mtbf):
    """Goodput with asynchronous checkpoints: :func:`goodput` with the blocking cost C_block as the checkpoint
    cost and the restart lengthened by the drain W, because a failure during a drain falls back to the checkpoint
    before it — at most W more seconds of rework, which this charges in full (a slightly pessimistic bound):
    G = goodput(τ, C_block, R + W, M). Element-wise.

    >>> round(async_goodput(3600, 0.1, 49, 600, 178_000), 4)
    0.9863
    """
    w = _check.values("drain_seconds", drain_seconds, _check.nonnegative)
    r = _check.values("restart_seconds", restart_seconds, _check.nonnegative)
    return goodput(interval, blocking_seconds, r + w, mtbf)


def load_bytes_per_rank(nbytes, model_parallel, optimizer_shards=1, optimizer_fraction=0.0):
    """Bytes each rank reads to restart from a sharded checkpoint of ``nbytes`` S (the whole restart state).

    Ranks in one model-parallel group (``model_parallel`` = TP × PP) hold different slices; data-parallel replicas
    hold the same slice, so each reads S / (TP·PP). If the optimizer state — the fraction ``optimizer_fraction`` f of
    S (12 of 14 bytes per parameter under mixed Adam) — is further sharded over ``optimizer_shards`` Z data-parallel
    ranks (ZeRO-1 and up), that part divides by Z as well:
    b = S·(1 − f) / (TP·PP) + S·f / (TP·PP·Z). Bytes per rank. Element-wise in ``nbytes``.

    The running example (2.45 TB, TP 8 × PP 16, no optimizer sharding): 19.1 GB per rank.

    >>> round(load_bytes_per_rank(2.45e12, 128) / 1e9, 1)
    19.1
    >>> round(load_bytes_per_rank(2.45e12, 128, 8, 12 / 14) / 1e9, 2)
    4.79
    """
    s = _check.values("nbytes", nbytes, _check.nonnegative)
    mp = _check.integer("model_parallel", model_parallel)
    z = _check.integer("optimizer_shards", optimizer_shards)
    f = _check.probability("optimizer_fraction", optimizer_fraction)
    return _check.result(s * (1 - f) / mp + s * f / (mp * z))


def reshard_sources(saved_shards, new_shards) -> int:
    """How many saved shard files the busiest new rank must open when a tensor saved in ``saved_shards`` equal
    contiguous slices is loaded as ``new_shards`` slices (a change of tensor- or pipeline-parallel degree).

    New slice j covers [j/n, (j+1)/n) of the tensor; saved slice k covers [k/m, (k+1)/m); slice j overlaps
    ⌈(j+1)·m/n⌉ − ⌊j·m/n⌋ saved slices. The result is the maximum over j (exact integer arithmetic): m/n when n
    divides m, 1 when m divides n, and otherwise at most ⌈m/n⌉ + 1.

    >>> reshard_sources(8, 4), reshard_sources(4, 8), reshard_sources(8, 6), reshard_sources(16, 1)
    (2, 1, 2, 16)
    """
    m = _check.integer("saved_shards", saved_shards)
    n = _check.integer("new_shards", new_shards)
    if m > 10**7 or n > 10**7:
        raise ValueError(f"saved_shards and new_shards must be at most 10,000,000, got {m} and {n}")
    j = np.arange(n, dtype=np.int64)
    counts = -((-(j + 1) * m) // n) - (j * m) // n
    return int(counts.max())


# --- a whole run's failures ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunFailures:
    """What failures cost a run (:func:`run_failures`): rates per second, sizes in bytes, times in seconds."""

    rate: float                 #: interruptions per GPU-second
    mtbf: float                 #: s, the cluster's mean time between interruptions
    checkpoint_bytes: float     #: the restart state
    write_seconds: float        #: C, one blocking write
    restart_seconds: float      #: R
    interval: float             #: Daly's τ
    goodput: float              #: kept progress per wall-clock second at τ


def run_failures(params, n_gpus, recipe="mixed-adam", write_bandwidth=None, restart_seconds=None,
                 per_gpu_rate=None) -> RunFailures:
    """Chapter 7's failure model of a run of a ``params``-parameter model on ``n_gpus`` GPUs: M = 1 / (n · λ), the
    restart state :func:`checkpoint_bytes` (:func:`restart_bytes_per_param` of ``recipe``) written in C = S / B,
    Daly's τ, and the goodput G of :func:`goodput` at τ. λ defaults to Llama 3's unexpected interruptions per GPU
    (:func:`chipchain.reliability.llama3_per_gpu_rate`); B and R to the assumptions ``checkpoint_write_bandwidth``
    and ``restart_seconds`` (``data/assumptions.csv``). G does not depend on the run's length.

    >>> f = run_failures(175e9, 1024)
    >>> round(f.mtbf / 3600, 1), round(f.write_seconds), round(f.interval / 60), round(f.goodput, 3)
    (49.5, 49, 69, 0.973)
    """
    rate = reliability.llama3_per_gpu_rate() if per_gpu_rate is None else _check.positive("per_gpu_rate",
                                                                                           per_gpu_rate)
    m = reliability.cluster_mtbf(rate, _check.integer("n_gpus", n_gpus))
    size = checkpoint_bytes(params, restart_bytes_per_param(recipe))
    bw = assumptions.value("checkpoint_write_bandwidth") if write_bandwidth is None else write_bandwidth
    c = write_seconds(size, bw)
    r = _check.nonnegative("restart_seconds", assumptions.value("restart_seconds") if restart_seconds is None
                           else restart_seconds)
    tau = daly_interval(c, m)
    return RunFailures(rate, m, size, c, r, tau, goodput(tau, c, r, m))
