"""Failures, checkpoints and goodput: why a long training run must be built to fail gracefully.

Four ideas, in the order chapter 7 uses them:

* **Failure arithmetic.** Components fail independently as Poisson processes; rates add. A cluster of ``n_i``
  components with rate ``λ_i`` each is interrupted at ``λ = Σ n_i·λ_i`` and its mean time between interruptions is
  ``1/λ``. Llama 3's 54-day snapshot (Dubey et al. 2024, §3.3.4, Table 5) gives a measured per-GPU rate.
* **Checkpoint interval.** Young (1974): ``τ ≈ √(2·C·M)`` for checkpoint write time ``C`` and mean time between
  failures ``M``; Daly (2006) refines it. Goodput — the fraction of wall-clock time that becomes kept progress —
  follows from the same renewal argument (the wall-clock model of Daly 2006).
* **A Monte Carlo run** with random failures, seeded, whose mean agrees with the model.
* **Exact resume.** A small but real NumPy training loop (two-layer network, Adam, shuffling, dropout) whose
  checkpoint holds the four things a restart must restore: parameters, optimizer state, RNG state and the data
  loader's position.

Rates are per second, times in seconds, sizes in bytes, bandwidths in bytes per second.

>>> round(llama3_hours_between(), 2)
3.09
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from . import _check, widgets
from .units import DAY, HOUR, YEAR

__all__ = [
    "rate_from_daily_probability", "cluster_failure_rate", "mtbf", "expected_failures", "prob_no_failure",
    "daily_failures", "seed_back_of_envelope",
    "failure_logs", "log_value", "llama3_interruptions", "llama3_hours_between", "llama3_per_gpu_rate",
    "per_gpu_rate", "cluster_mtbf", "root_cause_check",
    "young_interval", "daly_interval", "optimal_interval", "goodput", "goodput_first_order",
    "time_lost_per_failure", "hours_lost_per_week", "spare_nodes",
    "simulate_goodput", "MonteCarloResult", "simulate_timeline",
    "checkpoint_bytes", "write_time", "required_write_bandwidth",
    "PARTS", "TinyTrainer", "save_checkpoint", "load_checkpoint", "train_with_restart", "ResumeResult",
    "plot_root_causes", "plot_goodput", "plot_timeline",
    "resume_explorer", "goodput_explorer",
]


# --- failure arithmetic ------------------------------------------------------------------------------------------

def rate_from_daily_probability(p_per_day) -> float:
    """Poisson rate (per second) of a component that fails on a given day with probability ``p``:
    λ = −ln(1 − p) / day (≈ p / day for small p).

    >>> round(rate_from_daily_probability(1e-4) * 86400, 8)
    0.00010001
    """
    p = _check.probability("p_per_day", p_per_day)
    if p >= 1:
        raise ValueError(f"p_per_day must be below 1 (a component that always fails has no rate), got {p_per_day!r}")
    return -math.log1p(-p) / DAY


def cluster_failure_rate(components) -> float:
    """Interruption rate of a cluster whose components fail independently: λ = Σ nᵢ·λᵢ (per second).

    ``components``: mapping name → (count, rate per second per component). Independent Poisson processes add.

    >>> lam = cluster_failure_rate({"gpu": (1024, 1 / (5 * 365 * 86400))})
    >>> round(1 / lam / 3600, 1)     # hours between interruptions for 1,024 GPUs with a 5-year MTBF each
    42.8
    """
    if not hasattr(components, "items") or not components:
        raise ValueError(f"components must be a non-empty mapping name -> (count, rate), got {components!r}")
    total = 0.0
    for name, spec in components.items():
        try:
            count, rate = spec
        except (TypeError, ValueError):
            raise ValueError(f"components[{name!r}] must be a (count, rate) pair, got {spec!r}") from None
        total += _check.integer(f"count of {name}", count, minimum=0) * _check.nonnegative(f"rate of {name}", rate)
    return total


def mtbf(rate) -> float:
    """Mean time between failures of a Poisson process: M = 1/λ (seconds).

    >>> mtbf(1 / 3600)
    3600.0
    """
    return 1.0 / _check.positive("rate", rate)


def expected_failures(rate, seconds) -> float:
    """Expected number of failures in a period: E[N] = λ·T.

    >>> expected_failures(1 / 3600, 86400)
    24.0
    """
    return _check.nonnegative("rate", rate) * _check.nonnegative("seconds", seconds)


def prob_no_failure(rate, seconds) -> float:
    """Probability of no failure in a period: P = exp(−λ·T).

    >>> round(prob_no_failure(1 / 3600, 3600), 4)
    0.3679
    """
    return math.exp(-expected_failures(rate, seconds))


def daily_failures(components) -> tuple[float, float]:
    """Expected failures per day and the probability of at least one, for components that each fail on a given day
    with probability ``p``: E = Σ nᵢ·pᵢ and P(≥1) = 1 − Π(1 − pᵢ)^nᵢ.

    ``components``: mapping name → (count, probability per day).

    >>> e, p = daily_failures({"cards": (10_000, 1e-4)})
    >>> e, round(p, 3)
    (1.0, 0.632)
    """
    if not hasattr(components, "items") or not components:
        raise ValueError(f"components must be a non-empty mapping name -> (count, probability), got {components!r}")
    expected, log_none = 0.0, 0.0
    for name, spec in components.items():
        try:
            count, p = spec
        except (TypeError, ValueError):
            raise ValueError(f"components[{name!r}] must be a (count, probability) pair, got {spec!r}") from None
        n = _check.integer(f"count of {name}", count, minimum=0)
        p = _check.probability(f"probability of {name}", p)
        expected += n * p
        log_none += n * math.log1p(-p) if p < 1 else (-math.inf if n else 0.0)
    return expected, 1.0 - math.exp(log_none)


def seed_back_of_envelope(fans=20_000, cards=10_000, cables=10_000, p_per_day=1e-4) -> dict:
    """The source's back-of-envelope (seed 000 §8): 10,000 cards, 10,000 cables and "tens of thousands" of fans,
    each failing with probability 1e-4 per day. Returns expected failures per day, the probability of a day with
    at least one, and the mean hours between failures.

    ``fans`` reads "tens of thousands" as 20,000 by default (the smallest reading); the chapter varies it.

    >>> r = seed_back_of_envelope()
    >>> r["per_day"], round(r["p_at_least_one"], 3), r["hours_between"]
    (4.0, 0.982, 6.0)
    """
    p = _check.probability("p_per_day", p_per_day)
    comps = {"cards": (cards, p), "cables": (cables, p), "fans": (fans, p)}
    e, p1 = daily_failures(comps)
    return {"per_day": e, "p_at_least_one": p1, "hours_between": 24.0 / e if e else math.inf,
            "components": sum(c for c, _ in comps.values())}


# --- published failure logs ----------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _rows(filename: str) -> tuple:
    text = resources.files("chipchain").joinpath("data", filename).read_text(encoding="utf-8")
    return tuple(csv.DictReader(io.StringIO(text)))


def failure_logs():
    """Run-level figures from published training logs (Llama 3 405B, OPT-175B) as a DataFrame, with source and
    check level per row (``data/failure_logs.csv``).

    >>> df = failure_logs()
    >>> int(df.query("run == 'Llama 3 405B' and quantity == 'unexpected_interruptions'").value.iloc[0])
    419
    """
    import pandas as pd

    df = pd.DataFrame(list(_rows("failure_logs.csv")))
    df["value"] = df["value"].astype(float)
    return df


def log_value(run: str, quantity: str) -> float:
    """One figure from ``data/failure_logs.csv``; unknown names raise ``KeyError`` listing the nearest.

    >>> log_value("Llama 3 405B", "interruptions")
    466.0
    """
    import difflib

    rows = _rows("failure_logs.csv")
    for r in rows:
        if r["run"].lower() == str(run).lower() and r["quantity"] == quantity:
            return float(r["value"])
    keys = [f"{r['run']}/{r['quantity']}" for r in rows]
    near = difflib.get_close_matches(f"{run}/{quantity}", keys, n=4, cutoff=0.3)
    raise KeyError(f"no figure {run!r}/{quantity!r} in failure_logs.csv; nearest: {', '.join(near) or 'none'}")


def llama3_interruptions():
    """Llama 3's root-cause table (Dubey et al. 2024, Table 5): counts, the printed percentages, and the
    percentages the counts imply (count / 419). Returns a DataFrame sorted as printed.

    >>> df = llama3_interruptions()
    >>> int(df["count"].sum()), round(float(df["printed_percent"].sum()), 1)
    (419, 94.9)
    """
    import pandas as pd

    df = pd.DataFrame(list(_rows("llama3_interruptions.csv")))
    df["count"] = df["count"].astype(int)
    df["printed_percent"] = df["printed_percent"].astype(float)
    df["recomputed_percent"] = 100.0 * df["count"] / df["count"].sum()
    df["difference_pp"] = df["printed_percent"] - df["recomputed_percent"]
    return df


def root_cause_check(tolerance_pp=0.05):
    """Rows of Table 5 whose printed percentage differs from count/total by more than rounding allows
    (``tolerance_pp`` percentage points beyond the printed one-decimal rounding).

    >>> bad = root_cause_check()
    >>> list(bad.component), int(bad["count"].iloc[0]), float(bad.printed_percent.iloc[0])
    (['Faulty GPU'], 148, 30.1)
    """
    tol = _check.nonnegative("tolerance_pp", tolerance_pp)
    df = llama3_interruptions()
    return df[(df["difference_pp"].abs() > 0.05 + tol)].reset_index(drop=True)


def per_gpu_rate(interruptions, seconds, n_gpus) -> float:
    """Per-GPU interruption rate implied by a log: λ_gpu = N / (T · n) (per GPU-second).

    Charging every interruption to the GPUs is a simplification: Llama 3's table includes switches, hosts and
    software. The rate then scales with the cluster as long as the cluster has the same mix of parts per GPU.

    >>> round(per_gpu_rate(419, 54 * 86400, 16384) * 86400, 6)   # per GPU-day
    0.000474
    """
    n_int = _check.nonnegative("interruptions", interruptions)
    return n_int / (_check.positive("seconds", seconds) * _check.integer("n_gpus", n_gpus))


def cluster_mtbf(per_gpu_rate_, n_gpus) -> float:
    """Mean time between interruptions of a cluster of ``n`` GPUs: M = 1 / (n · λ_gpu) (seconds).

    Llama 3's rate on the running example's 1,024 GPUs:

    >>> round(cluster_mtbf(llama3_per_gpu_rate(), 1024) / 3600, 1)
    49.5
    """
    return 1.0 / (_check.integer("n_gpus", n_gpus) * _check.positive("per_gpu_rate", per_gpu_rate_))


def llama3_hours_between(kind: str = "unexpected") -> float:
    """Hours between interruptions in Llama 3's 54-day snapshot: 54 × 24 / N (N = 419 unexpected, 466 all).

    >>> round(llama3_hours_between("all"), 2)
    2.78
    """
    kind = _check.choice("kind", kind, ("unexpected", "all"))
    n = log_value("Llama 3 405B", "unexpected_interruptions" if kind == "unexpected" else "interruptions")
    return log_value("Llama 3 405B", "snapshot_days") * 24.0 / n


def llama3_per_gpu_rate(kind: str = "unexpected") -> float:
    """Per-GPU interruption rate (per second) from Llama 3's snapshot: N / (54 days × 16,384 GPUs).

    >>> round(1 / llama3_per_gpu_rate() / YEAR, 2)    # per-GPU mean time between interruptions, years
    5.79
    """
    kind = _check.choice("kind", kind, ("unexpected", "all"))
    n = log_value("Llama 3 405B", "unexpected_interruptions" if kind == "unexpected" else "interruptions")
    return per_gpu_rate(n, log_value("Llama 3 405B", "snapshot_days") * DAY, int(log_value("Llama 3 405B", "gpus")))


# --- checkpoint interval and goodput -------------------------------------------------------------------------------

def young_interval(write_time, mtbf_) -> float:
    """Young's first-order optimum checkpoint interval: τ = √(2·C·M) (Young 1974).

    ``write_time`` C and ``mtbf_`` M in seconds; τ is the compute time between checkpoints.

    >>> round(young_interval(60, 24 * 3600))
    3220
    """
    return math.sqrt(2.0 * _check.positive("write_time", write_time) * _check.positive("mtbf", mtbf_))


def daly_interval(write_time, mtbf_) -> float:
    """Daly's higher-order optimum checkpoint interval (Daly 2006):
    τ = √(2CM)·[1 + ⅓·√(C/2M) + (1/9)·(C/2M)] − C for C < 2M, else τ = M.

    >>> round(daly_interval(60, 24 * 3600))
    3180
    """
    c = _check.positive("write_time", write_time)
    m = _check.positive("mtbf", mtbf_)
    if c >= 2 * m:
        return m
    x = c / (2 * m)
    return math.sqrt(2 * c * m) * (1 + math.sqrt(x) / 3 + x / 9) - c


def goodput(interval, write_time, restart_time, mtbf_) -> float:
    """Expected goodput — kept progress per wall-clock second — for periodic checkpoints with Poisson failures:

    G = τ / (M · e^{R/M} · (e^{(τ+C)/M} − 1))

    Each segment is τ seconds of work followed by a C-second checkpoint write; a failure (at any time, also during
    a write or a restart) loses the segment in progress and costs a restart of R seconds before the segment is
    tried again. The denominator is the expected wall time to finish one segment: (e^{(τ+C)/M} − 1) failures are
    expected before a segment completes, each followed by a restart that itself completes only after
    (e^{R/M} − 1) interrupted tries on average (the renewal model of Daly 2006). ``interval`` τ, ``write_time`` C,
    ``restart_time`` R and ``mtbf_`` M in seconds; G is a fraction in (0, 1).

    >>> round(goodput(3600, 60, 600, 24 * 3600), 4)
    0.9563
    """
    t = _check.positive("interval", interval)
    c = _check.nonnegative("write_time", write_time)
    r = _check.nonnegative("restart_time", restart_time)
    m = _check.positive("mtbf", mtbf_)
    return t / (m * math.exp(r / m) * math.expm1((t + c) / m))


def goodput_first_order(interval, write_time, restart_time, mtbf_) -> float:
    """First-order goodput, G ≈ 1 − C/τ − τ/(2M) − R/M: checkpoint overhead, half an interval of rework per failure,
    and the restart. Accurate while τ + C + R ≪ M; it is the expression Young's τ maximises. Times in seconds.

    >>> round(goodput_first_order(3600, 60, 600, 24 * 3600), 4)
    0.9556
    """
    t = _check.positive("interval", interval)
    c = _check.nonnegative("write_time", write_time)
    r = _check.nonnegative("restart_time", restart_time)
    m = _check.positive("mtbf", mtbf_)
    return 1.0 - c / t - t / (2 * m) - r / m


def optimal_interval(write_time, restart_time, mtbf_) -> float:
    """The interval that maximises :func:`goodput`, found numerically (golden-section search on log τ).

    Close to Daly's estimate; the restart time does not move the optimum (it multiplies every segment equally).
    Arguments and result in seconds.

    >>> round(optimal_interval(60, 600, 24 * 3600))
    3180
    """
    c = _check.positive("write_time", write_time)
    r = _check.nonnegative("restart_time", restart_time)
    m = _check.positive("mtbf", mtbf_)
    lo, hi = math.log(max(c, m) * 1e-6), math.log(10 * m)
    g = (math.sqrt(5) - 1) / 2
    f = lambda x: -goodput(math.exp(x), c, r, m)          # noqa: E731
    a, b = lo, hi
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


def time_lost_per_failure(interval, write_time, restart_time) -> float:
    """Expected wall time one failure costs, to first order: half a segment of rework plus the restart,
    L ≈ (τ + C)/2 + R (seconds).

    >>> time_lost_per_failure(3600, 60, 600)
    2430.0
    """
    t = _check.positive("interval", interval)
    c = _check.nonnegative("write_time", write_time)
    return (t + c) / 2 + _check.nonnegative("restart_time", restart_time)


def hours_lost_per_week(goodput_) -> float:
    """Wall-clock hours per week that do not become kept progress: (1 − G) × 168 h.

    >>> round(hours_lost_per_week(0.95), 1)
    8.4
    """
    return (1.0 - _check.fraction("goodput", goodput_, allow_zero=True)) * 168.0


def spare_nodes(n_nodes, node_rate, repair_seconds, confidence=0.99) -> int:
    """Spare nodes to hold so that a job of ``n_nodes`` nodes can always be refilled while broken nodes are repaired:
    the smallest k with P(N ≤ k) ≥ ``confidence`` for N ~ Poisson(n · λ_node · T_repair) nodes out at a time.

    ``node_rate`` failures per node-second that take a node out of service; ``repair_seconds`` time to swap or fix
    it. With Llama 3's hardware share (≈ 78 % of its per-GPU rate, 8 GPUs per node), 128 nodes and a 3-day repair:

    >>> lam = 0.78 * 8 * llama3_per_gpu_rate()
    >>> spare_nodes(128, lam, 3 * 86400)
    4
    """
    n = _check.integer("n_nodes", n_nodes)
    mean = n * _check.nonnegative("node_rate", node_rate) * _check.nonnegative("repair_seconds", repair_seconds)
    q = _check.probability("confidence", confidence)
    if q >= 1:
        raise ValueError(f"confidence must be below 1, got {confidence!r}")
    k, term = 0, math.exp(-mean)
    cdf = term
    while cdf < q:
        k += 1
        term *= mean / k
        cdf += term
    return k


# --- Monte Carlo -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MonteCarloResult:
    """Outcome of :func:`simulate_goodput`: per-run wall times and the goodput they imply."""

    work: float                 #: seconds of useful compute each run must complete
    wall_times: tuple           #: seconds, one per simulated run
    mean_wall: float
    stderr_wall: float          #: standard error of ``mean_wall``
    failures_mean: float        #: failures per run, averaged
    goodput: float              #: work / mean_wall
    goodput_model: float        #: :func:`goodput` for the same inputs
    z: float                    #: (mean_wall − expected wall) / stderr_wall


def _complete(rng, np, length: float, m: float, n: int):
    """Wall time to complete ``n`` independent blocks of ``length`` seconds that restart from zero on each
    failure; returns (times, failures)."""
    times = np.zeros(n)
    fails = np.zeros(n, dtype=np.int64)
    pending = np.arange(n)
    while pending.size:
        t = rng.exponential(m, size=pending.size)
        ok = t >= length
        times[pending[ok]] += length
        bad = pending[~ok]
        times[bad] += t[~ok]
        fails[bad] += 1
        pending = bad
    return times, fails


def simulate_goodput(interval, write_time, restart_time, mtbf_, segments=200, runs=200, seed=0) -> MonteCarloResult:
    """Simulate ``runs`` training runs of ``segments`` checkpointed segments each, with exponential failures of mean
    ``mtbf_``; a failure loses the segment in progress and costs a restart (which can itself be hit by a failure).

    The model's expected wall time per run is ``segments × τ / goodput``; ``z`` measures the simulated mean against it
    in standard errors (|z| < 4 in tests). Seeded with NumPy's ``default_rng(seed)``. Times in seconds.

    >>> r = simulate_goodput(3600, 60, 600, 24 * 3600, segments=100, runs=100, seed=1)
    >>> round(r.goodput_model, 4), abs(r.z) < 4
    (0.9563, True)
    """
    import numpy as np

    t = _check.positive("interval", interval)
    c = _check.nonnegative("write_time", write_time)
    r = _check.nonnegative("restart_time", restart_time)
    m = _check.positive("mtbf", mtbf_)
    k = _check.integer("segments", segments)
    n = _check.integer("runs", runs, minimum=2)
    rng = np.random.default_rng(_check.integer("seed", seed, minimum=0))
    seg_times, seg_fails = _complete(rng, np, t + c, m, n * k)
    total_fails = int(seg_fails.sum())
    restart = np.zeros(n * k)
    if total_fails and r > 0:
        rt, _ = _complete(rng, np, r, m, total_fails)
        owner = np.repeat(np.arange(n * k), seg_fails)
        np.add.at(restart, owner, rt)
    wall = (seg_times + restart).reshape(n, k).sum(axis=1)
    mean = float(wall.mean())
    se = float(wall.std(ddof=1) / math.sqrt(n))
    g_model = goodput(t, c, r, m)
    expected = k * t / g_model
    fails_per_run = float(seg_fails.reshape(n, k).sum(1).mean())
    return MonteCarloResult(k * t, tuple(float(w) for w in wall), mean, se, fails_per_run,
                            k * t / mean, g_model, (mean - expected) / se if se > 0 else 0.0)


def simulate_timeline(interval, write_time, restart_time, mtbf_, work, seed=0):
    """One simulated run as a timeline: returns (wall_times, progress) arrays in seconds, where progress is the work
    done including work not yet saved; it drops back to the last checkpoint at every failure. Also returns the
    failure times. Seeded; for figures.

    >>> w, p, f = simulate_timeline(3600, 60, 600, 6 * 3600, 20 * 3600, seed=0)
    >>> float(p[-1]) == 20 * 3600 and len(f) > 0
    True
    """
    import numpy as np

    t = _check.positive("interval", interval)
    c = _check.nonnegative("write_time", write_time)
    r = _check.nonnegative("restart_time", restart_time)
    m = _check.positive("mtbf", mtbf_)
    total = _check.positive("work", work)
    rng = np.random.default_rng(_check.integer("seed", seed, minimum=0))
    now, saved = 0.0, 0.0
    wall, prog, fails = [0.0], [0.0], []
    next_fail = rng.exponential(m)
    while saved < total - 1e-9:
        seg = min(t, total - saved)
        end = now + seg + c
        if next_fail >= end:                       # segment and its checkpoint complete
            wall += [now + seg, end]
            prog += [saved + seg, saved + seg]
            now, saved = end, saved + seg
            continue
        done = min(next_fail - now, seg)           # failure: progress falls back to the checkpoint
        wall += [next_fail, next_fail]
        prog += [saved + done, saved]
        fails.append(next_fail)
        now = next_fail
        next_fail = now + rng.exponential(m)
        while next_fail < now + r:                 # restart interrupted: start it again
            now = next_fail
            fails.append(now)
            next_fail = now + rng.exponential(m)
        now += r
        wall.append(now)
        prog.append(saved)
    return np.array(wall), np.array(prog), np.array(fails)


# --- checkpoint size and bandwidth ----------------------------------------------------------------------------------

def checkpoint_bytes(params, bytes_per_param) -> float:
    """Size of a checkpoint: S = N × b. With mixed precision and Adam a full restart needs the BF16 weights (2 B),
    the FP32 master weights (4 B) and both Adam moments (4 + 4 B): b = 14; weights alone are b = 2. Counting the
    16 B/parameter of training states (Rajbhandari et al. 2020) also counts gradients, which a checkpoint need not save.

    >>> checkpoint_bytes(70e9, 14) / 1e9
    980.0
    """
    return _check.positive("params", params) * _check.positive("bytes_per_param", bytes_per_param)


def write_time(nbytes, bandwidth) -> float:
    """Seconds to write a checkpoint: C = S / B (``bandwidth`` in bytes per second, aggregate over writers).

    >>> write_time(2.8e12, 50e9)
    56.0
    """
    return _check.nonnegative("nbytes", nbytes) / _check.positive("bandwidth", bandwidth)


def required_write_bandwidth(nbytes, interval, overhead) -> float:
    """Write bandwidth needed so that a blocking checkpoint every ``interval`` seconds costs at most the fraction
    ``overhead`` of the time: B = S / (overhead × interval).

    Seed 002: a 70B model's 140 GB of BF16 weights every 30 minutes. Finishing within the 30 minutes needs only
    78 MB/s; "tens of GB/s" is what the full 980 GB state needs if the stall is to stay near 1 %:

    >>> round(required_write_bandwidth(140e9, 1800, 1.0) / 1e6)
    78
    >>> round(required_write_bandwidth(980e9, 1800, 0.01) / 1e9, 1)
    54.4
    """
    return (_check.nonnegative("nbytes", nbytes)
            / (_check.fraction("overhead", overhead) * _check.positive("interval", interval)))


# --- exact resume: a small real training loop --------------------------------------------------------------------

#: the four things a checkpoint must hold for an exact resume
PARTS = ("params", "optimizer", "rng", "loader")


class TinyTrainer:
    """A two-layer network (ReLU, dropout) trained with Adam on a synthetic regression set, in NumPy.

    Everything a run depends on lives in four places, which :func:`save_checkpoint` can save separately:

    * ``params`` — W1, b1, W2, b2, initialised from ``default_rng(seed)``;
    * ``optimizer`` — Adam's first and second moments and its step count;
    * ``rng`` — the generator that draws the dropout masks, seeded ``default_rng([seed, 1])``;
    * ``loader`` — the epoch and the position within it; epoch e is shuffled with ``default_rng([seed, 2, e])``
      (as a distributed sampler does with ``set_epoch``).

    >>> t = TinyTrainer(seed=0)
    >>> losses = [t.step() for _ in range(3)]
    >>> len(losses), t.t
    (3, 3)
    """

    def __init__(self, seed: int = 0, n_samples: int = 256, n_in: int = 8, hidden: int = 32, batch: int = 32,
                 lr: float = 1e-2, dropout: float = 0.2):
        import numpy as np

        self.seed = _check.integer("seed", seed, minimum=0)
        self.n_samples = _check.integer("n_samples", n_samples)
        self.batch = _check.integer("batch", batch)
        if self.batch > self.n_samples:
            raise ValueError(f"batch ({batch}) must not exceed n_samples ({n_samples})")
        self.lr = _check.positive("lr", lr)
        self.dropout = _check.probability("dropout", dropout)
        if self.dropout >= 1:
            raise ValueError(f"dropout must be below 1, got {dropout!r}")
        n_in, hidden = _check.integer("n_in", n_in), _check.integer("hidden", hidden)
        data = np.random.default_rng([self.seed, 0])
        self.X = data.standard_normal((self.n_samples, n_in))
        w_true = data.standard_normal(n_in)
        self.y = np.sin(self.X @ w_true)[:, None] + 0.1 * data.standard_normal((self.n_samples, 1))
        init = np.random.default_rng(self.seed)
        self.params = {"W1": init.standard_normal((n_in, hidden)) / math.sqrt(n_in), "b1": np.zeros(hidden),
                       "W2": init.standard_normal((hidden, 1)) / math.sqrt(hidden), "b2": np.zeros(1)}
        self.m = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.t = 0
        self.rng = np.random.default_rng([self.seed, 1])
        self.epoch, self.cursor = 0, 0
        self.batches_per_epoch = self.n_samples // self.batch

    def _next_batch(self):
        import numpy as np

        order = np.random.default_rng([self.seed, 2, self.epoch]).permutation(self.n_samples)
        idx = order[self.cursor * self.batch:(self.cursor + 1) * self.batch]
        self.cursor += 1
        if self.cursor == self.batches_per_epoch:
            self.epoch, self.cursor = self.epoch + 1, 0
        return self.X[idx], self.y[idx]

    def step(self) -> float:
        """One Adam step on the next mini-batch; returns the mini-batch loss (mean squared error) before the step."""
        import numpy as np

        x, y = self._next_batch()
        p = self.params
        h = x @ p["W1"] + p["b1"]
        a = np.maximum(h, 0.0)
        keep = 1.0 - self.dropout
        mask = (self.rng.random(a.shape) < keep) / keep
        d = a * mask
        out = d @ p["W2"] + p["b2"]
        err = out - y
        loss = float(np.mean(err ** 2))
        g_out = 2.0 * err / err.shape[0]
        g = {"W2": d.T @ g_out, "b2": g_out.sum(0)}
        g_h = (g_out @ p["W2"].T) * mask * (h > 0)
        g["W1"], g["b1"] = x.T @ g_h, g_h.sum(0)
        self.t += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        for k in p:
            self.m[k] = b1 * self.m[k] + (1 - b1) * g[k]
            self.v[k] = b2 * self.v[k] + (1 - b2) * g[k] ** 2
            m_hat = self.m[k] / (1 - b1 ** self.t)
            v_hat = self.v[k] / (1 - b2 ** self.t)
            p[k] = p[k] - self.lr * m_hat / (np.sqrt(v_hat) + eps)
        return loss

    def flat_params(self):
        """All parameters as one float64 vector (for bit-for-bit comparison)."""
        import numpy as np

        return np.concatenate([self.params[k].ravel() for k in ("W1", "b1", "W2", "b2")])


def save_checkpoint(trainer: TinyTrainer, parts=PARTS) -> bytes:
    """Serialise the chosen ``parts`` of a trainer's state (a subset of :data:`PARTS`) to bytes (NumPy ``.npz``;
    the RNG state as JSON). Arrays are stored bit for bit.

    >>> blob = save_checkpoint(TinyTrainer(), ("params",))
    >>> isinstance(blob, bytes) and len(blob) > 1000
    True
    """
    import numpy as np

    if not isinstance(trainer, TinyTrainer):
        raise ValueError(f"trainer must be a TinyTrainer, got {type(trainer).__name__}")
    parts = tuple(_check.choice("parts", p, PARTS) for p in parts)
    arrays = {"__parts__": np.array(json.dumps(list(parts)))}
    if "params" in parts:
        arrays.update({f"params.{k}": v for k, v in trainer.params.items()})
    if "optimizer" in parts:
        arrays.update({f"m.{k}": v for k, v in trainer.m.items()})
        arrays.update({f"v.{k}": v for k, v in trainer.v.items()})
        arrays["t"] = np.array(trainer.t)
    if "rng" in parts:
        arrays["rng"] = np.array(json.dumps(trainer.rng.bit_generator.state))
    if "loader" in parts:
        arrays["loader"] = np.array([trainer.epoch, trainer.cursor])
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def load_checkpoint(trainer: TinyTrainer, blob: bytes) -> TinyTrainer:
    """Restore into ``trainer`` (a freshly started one) whatever parts ``blob`` holds; the rest keeps the fresh
    process's values — which is exactly what happens when a checkpoint forgets something. Returns the trainer.

    >>> t = load_checkpoint(TinyTrainer(), save_checkpoint(TinyTrainer(), PARTS))
    >>> t.t
    0
    """
    import numpy as np

    if not isinstance(trainer, TinyTrainer):
        raise ValueError(f"trainer must be a TinyTrainer, got {type(trainer).__name__}")
    if not isinstance(blob, (bytes, bytearray)):
        raise ValueError(f"blob must be bytes from save_checkpoint, got {type(blob).__name__}")
    with np.load(io.BytesIO(blob)) as z:
        parts = json.loads(str(z["__parts__"]))
        if "params" in parts:
            trainer.params = {k: z[f"params.{k}"].copy() for k in trainer.params}
        if "optimizer" in parts:
            trainer.m = {k: z[f"m.{k}"].copy() for k in trainer.m}
            trainer.v = {k: z[f"v.{k}"].copy() for k in trainer.v}
            trainer.t = int(z["t"])
        if "rng" in parts:
            trainer.rng.bit_generator.state = json.loads(str(z["rng"]))
        if "loader" in parts:
            trainer.epoch, trainer.cursor = (int(v) for v in z["loader"])
    return trainer


@dataclass(frozen=True)
class ResumeResult:
    """Outcome of :func:`train_with_restart`."""

    kept: tuple                 #: the parts the checkpoint held
    stop_at: int | None
    losses: tuple               #: mini-batch loss at every step, across the restart
    params: object              #: final parameters, one flat float64 array
    checkpoint_bytes: int       #: size of the serialised checkpoint (0 without a restart)


def train_with_restart(steps=120, stop_at=None, keep=PARTS, seed=0) -> ResumeResult:
    """Train :class:`TinyTrainer` for ``steps`` steps; if ``stop_at`` is given, stop there, save a checkpoint holding
    only the parts in ``keep``, throw the process away, start a fresh one and load the checkpoint, and finish.

    With all four parts the final weights are bit-identical to an uninterrupted run; leaving any one out makes the
    runs diverge (for any ``0 < stop_at < steps``).

    >>> ref = train_with_restart(40)
    >>> full = train_with_restart(40, stop_at=17)
    >>> bool((ref.params == full.params).all())
    True
    >>> no_rng = train_with_restart(40, stop_at=17, keep=("params", "optimizer", "loader"))
    >>> bool((ref.params == no_rng.params).all())
    False
    """
    n = _check.integer("steps", steps)
    keep = tuple(_check.choice("keep", p, PARTS) for p in keep)
    if stop_at is not None:
        stop_at = _check.integer("stop_at", stop_at, minimum=0)
        if stop_at > n:
            raise ValueError(f"stop_at ({stop_at}) must not exceed steps ({n})")
    trainer = TinyTrainer(seed=seed)
    losses, size = [], 0
    for i in range(n):
        if stop_at is not None and i == stop_at:
            blob = save_checkpoint(trainer, keep)
            size = len(blob)
            trainer = load_checkpoint(TinyTrainer(seed=seed), blob)
        losses.append(trainer.step())
    return ResumeResult(keep, stop_at, tuple(losses), trainer.flat_params(), size)


# --- figures -----------------------------------------------------------------------------------------------------

def plot_root_causes(ax=None, top=8):
    """Horizontal bars of Llama 3's unexpected interruptions by root cause (Table 5), with the printed and the
    recomputed percentage for each bar. Returns the Axes."""
    from . import plotting

    top = _check.integer("top", top)
    df = llama3_interruptions().head(top).iloc[::-1]
    ax = plotting.axes(ax)
    ax.barh(df["component"], df["count"], color=plotting.color(0))
    for y, (c, pp, rp) in enumerate(zip(df["count"], df["printed_percent"], df["recomputed_percent"])):
        flag = "  ≠ printed" if abs(pp - rp) > 0.1 else ""
        ax.text(c + 2, y, f"{c}  (printed {pp:.1f} %, counts give {rp:.1f} %){flag}", va="center", fontsize=8)
    ax.set_xlabel("unexpected interruptions in 54 days (of 419)")
    ax.set_xlim(0, df["count"].max() * 2.1)
    ax.grid(axis="y", visible=False)
    return ax


def plot_goodput(write_time, restart_time, mtbf_, ax=None):
    """Goodput against checkpoint interval (log axis), with Young's and Daly's intervals marked. Returns the Axes."""
    import numpy as np

    from . import plotting

    c, r, m = (_check.positive("write_time", write_time), _check.nonnegative("restart_time", restart_time),
               _check.positive("mtbf", mtbf_))
    taus = np.geomspace(max(c / 4, 1.0), m, 200)
    ax = plotting.axes(ax)
    ax.plot(taus / 60, [goodput(t, c, r, m) for t in taus], label="exact model")
    ax.plot(taus / 60, [goodput_first_order(t, c, r, m) for t in taus], "--", label="first order")
    for name, t, i in (("Young", young_interval(c, m), 1), ("Daly", daly_interval(c, m), 2)):
        ax.axvline(t / 60, color=plotting.color(i), lw=1, ls=":")
        ax.text(t / 60 * 1.05, 0.05 + 0.07 * i, f"{name} {t / 60:.0f} min", color=plotting.color(i), fontsize=8,
                transform=ax.get_xaxis_transform())
    ax.set_xscale("log")
    ax.set_ylim(0, 1)
    ax.set_xlabel("checkpoint interval τ (minutes)")
    ax.set_ylabel("goodput")
    ax.legend(loc="lower center")
    return ax


def plot_timeline(interval, write_time, restart_time, mtbf_, work, seed=0, ax=None):
    """Progress against wall-clock time for one simulated run (saw-tooth drops at failures). Returns the Axes."""
    from . import plotting

    w, p, f = simulate_timeline(interval, write_time, restart_time, mtbf_, work, seed)
    ax = plotting.axes(ax)
    ax.plot(w / HOUR, p / HOUR, lw=1.2, label="work done (incl. unsaved)")
    ax.plot([0, work / HOUR], [0, work / HOUR], ":", color="grey", lw=1, label="no failures, no checkpoints")
    for x in f:
        ax.axvline(x / HOUR, color=plotting.color(1), lw=0.6, alpha=0.5)
    ax.set_xlabel("wall-clock time (hours)")
    ax.set_ylabel("training progress (hours of work)")
    ax.legend(loc="upper left")
    return ax


# --- explorables -------------------------------------------------------------------------------------------------

_RESUME_STEPS, _RESUME_STOP = 120, 50


@lru_cache(maxsize=1)
def _resume_grid():
    """The 16 checkpoint contents × one restart at step 50 of 120, plus the uninterrupted reference."""
    import itertools

    ref = train_with_restart(_RESUME_STEPS)
    runs = {}
    for flags in itertools.product((False, True), repeat=4):
        keep = tuple(p for p, f in zip(PARTS, flags) if f)
        runs[flags] = train_with_restart(_RESUME_STEPS, _RESUME_STOP, keep)
    return ref, runs


def resume_view(params, optimizer, rng, loader) -> str:
    """HTML for one view of the exact-resume explorer."""
    import numpy as np

    from . import plotting

    ref, runs = _resume_grid()
    run = runs[(params, optimizer, rng, loader)]
    steps = list(range(1, _RESUME_STEPS + 1))
    smooth = lambda xs: np.convolve(xs, np.ones(5) / 5, mode="valid")   # noqa: E731
    xs = steps[4:]
    same = bool((run.params == ref.params).all())
    dmax = float(np.max(np.abs(run.params - ref.params)))
    missing = [p for p in PARTS if p not in run.kept]
    chart = plotting.svg_chart(
        lines=[{"x": xs, "y": smooth(ref.losses), "label": "uninterrupted run"},
               {"x": xs, "y": smooth(run.losses), "label": "stopped at step 50, resumed", "dash": True}],
        vlines=[{"x": _RESUME_STOP, "label": "restart"}], ylog=True, xlabel="training step",
        ylabel="mini-batch loss (5-step mean)",
        alt=f"Loss curves of an uninterrupted run and a run resumed at step 50 from a checkpoint missing "
            f"{', '.join(missing) or 'nothing'}; the curves {'coincide' if same else 'separate after the restart'}.")
    if same:
        verdict = (f"<p><strong>Bit-identical.</strong> All {run.params.size:,} final weights equal the "
                   "uninterrupted run's, bit for "
                   f"bit. Checkpoint size: {run.checkpoint_bytes:,} bytes.</p>")
    else:
        verdict = (f"<p><strong>Diverged.</strong> Missing: {', '.join(missing)}. Largest final-weight difference "
                   f"{dmax:.2e}; final loss {run.losses[-1]:.4f} vs {ref.losses[-1]:.4f} uninterrupted. "
                   f"Checkpoint size: {run.checkpoint_bytes:,} bytes.</p>")
    return chart + verdict


@widgets.explorer
def resume_explorer():
    """Chapter 7: tick which of the four parts the checkpoint saves; see whether the resumed run matches."""
    _resume_grid()
    return widgets.explore(
        resume_view,
        [widgets.Toggle("params", "parameters", value=True, labels=["not saved", "saved"]),
         widgets.Toggle("optimizer", "optimizer state", value=True, labels=["not saved", "saved"]),
         widgets.Toggle("rng", "RNG state", value=True, labels=["not saved", "saved"]),
         widgets.Toggle("loader", "data-loader position", value=True, labels=["not saved", "saved"])],
        title="Exact resume: what must a checkpoint hold?")


_GOODPUT_RESTART = 10 * 60.0


def goodput_view(n_gpus, gpu_mtbf_years, write_seconds) -> str:
    """HTML for one view of the Young/Daly goodput explorer (restart time fixed at 10 minutes)."""
    from . import plotting
    from .units import fmt_duration, fmt_percent

    m = cluster_mtbf(1.0 / (gpu_mtbf_years * YEAR), n_gpus)
    c, r = float(write_seconds), _GOODPUT_RESTART
    if c >= m:
        raise ValueError(f"a checkpoint write of {fmt_duration(c)} is longer than the cluster's mean time between "
                         f"failures ({fmt_duration(m)}): the job would rarely finish a segment")
    ty, td = young_interval(c, m), daly_interval(c, m)
    g = goodput(td, c, r, m)
    lo = max(c / 4, 5.0)
    taus = [lo * (m / lo) ** (i / 59) for i in range(60)]
    chart = plotting.svg_chart(
        lines=[{"x": [t / 60 for t in taus], "y": [max(goodput(t, c, r, m), 0.0) for t in taus],
                "label": "goodput"}],
        points=[{"x": td / 60, "y": g, "label": f"Daly {td / 60:.0f} min", "color": plotting.color(1)}],
        vlines=[{"x": ty / 60, "label": "Young"}], xlog=True, ylim=(0, 1), xlabel="checkpoint interval (minutes)",
        ylabel="goodput",
        alt=f"Goodput against checkpoint interval for {n_gpus} GPUs; the best interval is about {td / 60:.0f} minutes "
            f"with goodput {g:.1%}.")
    lost = hours_lost_per_week(g)
    rows = [("cluster mean time between interruptions", fmt_duration(m)),
            ("interruptions per week", f"{7 * DAY / m:.1f}"),
            ("Young interval √(2CM)", fmt_duration(ty)), ("Daly interval", fmt_duration(td)),
            ("goodput at Daly's interval", fmt_percent(g, 3)),
            ("wall-clock hours lost per week", f"{lost:.1f} h ({lost * n_gpus:,.0f} GPU-hours)")]
    body = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
    return chart + f'<table class="cc-table"><tbody>{body}</tbody></table>'


@widgets.explorer
def goodput_explorer():
    """Chapter 7: cluster size, per-GPU MTBF and checkpoint write time → interval, goodput, hours lost per week."""
    return widgets.explore(
        goodput_view,
        [widgets.Slider("n_gpus", "GPUs", [256, 1024, 4096, 16384, 65536], value=1024, fmt=","),
         widgets.Slider("gpu_mtbf_years", "per-GPU MTBF (years)", [1.0, 2.0, 5.8, 10.0, 20.0], value=5.8),
         widgets.Slider("write_seconds", "checkpoint write", [10.0, 30.0, 60.0, 120.0, 300.0, 600.0], value=60.0,
                        fmt=lambda s: f"{s:g} s" if s < 60 else f"{s / 60:g} min")],
        title="Young/Daly: how often to checkpoint, and what failures cost")
