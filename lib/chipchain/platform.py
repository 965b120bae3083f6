"""The training platform: scheduling a shared cluster, feeding it data, organising experiments, recording recipes.

* **Topology-aware scheduling.** A simulated cluster of nodes grouped in well-connected blocks (one leaf switch
  each) receives a stream of jobs: many small ones (1–8 GPUs on one node) and large ones that need whole nodes inside
  one block. First-fit placement scatters small jobs over the blocks; utilisation stays high while the capacity left
  for large jobs — whole free nodes together in one block — collapses and large jobs queue. Packing small jobs
  (best fit) and reserving a block for the oldest waiting large job keeps that capacity (seed 000 §9).
* **The data path.** Padding waste for a length distribution under naive batching, length bucketing and sequence
  packing (first-fit decreasing, FFD); the tokens per second a loader must deliver to keep the GPUs fed.
* **Experiment tiers.** How many ideas a budget can screen at small scale before confirming at full scale.
* **Recipes as configuration.** :class:`TrainingRecipe`, saved to and loaded from JSON, and diffed.

The simulations are small (a 1,024-GPU cluster over four weeks, a few thousand documents) so that a chapter runs
in seconds; they are models, not measurements of any production scheduler.

>>> round(padding_efficiency([100, 300, 200, 400], batch_size=2), 3)
0.714
"""
from __future__ import annotations

import csv
import difflib
import io
import json
import math
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from importlib import resources

from . import _check, widgets

__all__ = [
    "POLICIES", "ScheduleResult", "arrival_rates", "simulate_schedule", "compare_policies",
    "sample_lengths", "padding_efficiency", "bucket_efficiency", "pack_ffd", "packing_efficiency",
    "loader_tokens_per_second", "loader_bytes_per_second",
    "experiment_gpu_hours", "tier_plan",
    "Stage", "TrainingRecipe", "diff_recipes",
    "troubleshooting",
    "plot_schedule", "plot_padding",
    "schedule_explorer", "packing_explorer",
]

#: placement policies of :func:`simulate_schedule`
POLICIES = ("first-fit", "best-fit", "topology-aware")


# --- scheduling ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ScheduleResult:
    """Outcome of :func:`simulate_schedule` (averages over the measured period, after the warm-up)."""

    policy: str
    utilisation: float          #: busy GPU-hours / GPU-hours available
    large_share: float          #: GPU-hours that went to large jobs / GPU-hours available
    large_capacity: float       #: mean fraction of GPUs that a new large job could start on at once
    fragmentation: float        #: mean fraction of idle GPUs that no large job can use (stranded)
    large_wait_hours: float     #: mean wait of large jobs arriving after the warm-up (queued ones counted to the end)
    small_wait_hours: float     #: the same for small jobs
    large_unstarted: int        #: large jobs still waiting at the end
    large_arrived: int
    hourly_utilisation: tuple   #: per hour of the whole run, for plots
    hourly_large_capacity: tuple
    hourly_large_queue: tuple


def arrival_rates(load, small_share, total_gpus, small_sizes, small_hours, large_gpus, large_hours):
    """Arrival rates (jobs per hour) that offer ``load`` × the cluster, a share ``small_share`` of it as small jobs:
    λ_small = ρ·s·G / (E[g_small]·E[d_small]),  λ_large = ρ·(1 − s)·G / (g_large·E[d_large]).

    >>> [round(x, 3) for x in arrival_rates(0.8, 0.5, 1024, (1, 2, 4, 8), 12, 64, 48)]
    [9.102, 0.133]
    """
    rho = _check.fraction("load", load)
    s = _check.probability("small_share", small_share)
    g = _check.integer("total_gpus", total_gpus)
    sizes = [_check.integer("small_sizes", x) for x in small_sizes]
    if not sizes:
        raise ValueError("small_sizes must hold at least one size")
    mean_small = sum(sizes) / len(sizes)
    return (rho * s * g / (mean_small * _check.positive("small_hours", small_hours)),
            rho * (1 - s) * g / (_check.integer("large_gpus", large_gpus)
                                 * _check.positive("large_hours", large_hours)))


def simulate_schedule(policy="first-fit", small_share=0.5, load=0.85, *, hours=24 * 28, warmup=24 * 7,
                      n_blocks=8, nodes_per_block=16, gpus_per_node=8, large_nodes=8, small_sizes=(1, 2, 4, 8),
                      small_hours=24.0, large_hours=48.0, seed=0) -> ScheduleResult:
    """Simulate a shared cluster hour by hour under one placement ``policy`` (results are cached: a simulation is
    deterministic given its arguments, and the chapter and its explorer reuse the same runs).

    The cluster has ``n_blocks`` blocks of ``nodes_per_block`` nodes of ``gpus_per_node`` GPUs (default 8 × 16 × 8 =
    1,024 GPUs). Small jobs take 1–8 GPUs on one node; a large job takes ``large_nodes`` whole nodes inside one block.
    Arrivals are Poisson (rates from :func:`arrival_rates`), durations exponential (rounded up to whole hours); the
    job stream depends only on ``seed``, so policies are compared on the same jobs. Jobs wait in one queue and any
    job that fits starts (backfilling). Policies:

    * ``"first-fit"`` — topology-blind: a small job goes on the first node with room in host-name order, which
      interleaves the blocks; a large job in the first block with enough whole free nodes ("any free GPU will do");
    * ``"best-fit"`` — a small job goes on the fullest node that fits, preferring blocks that are already broken up;
      a large job in the block with the fewest spare whole nodes that still fits (topology-aware placement);
    * ``"topology-aware"`` — best fit plus a reservation: while a large job waits, the block nearest to fitting it
      takes no new small jobs.

    >>> ff = simulate_schedule("first-fit", hours=24 * 14, warmup=24 * 3)
    >>> ta = simulate_schedule("topology-aware", hours=24 * 14, warmup=24 * 3)
    >>> ta.large_capacity > ff.large_capacity and ta.large_wait_hours < ff.large_wait_hours
    True
    """
    sizes = tuple(small_sizes) if not isinstance(small_sizes, (str, bytes)) else small_sizes
    try:
        hash(sizes)
    except TypeError:
        raise ValueError(f"small_sizes must be a sequence of integers, got {small_sizes!r}") from None
    return _simulate_schedule(policy, small_share, load, hours, warmup, n_blocks, nodes_per_block, gpus_per_node,
                              large_nodes, sizes, small_hours, large_hours, seed)


@lru_cache(maxsize=256)
def _simulate_schedule(policy, small_share, load, hours, warmup, n_blocks, nodes_per_block, gpus_per_node,
                       large_nodes, small_sizes, small_hours, large_hours, seed) -> ScheduleResult:
    """The simulation behind :func:`simulate_schedule` (cached)."""
    import numpy as np

    policy = _check.choice("policy", policy, POLICIES)
    hours = _check.integer("hours", hours)
    warmup = _check.integer("warmup", warmup, minimum=0)
    if warmup >= hours:
        raise ValueError(f"warmup ({warmup}) must be shorter than hours ({hours})")
    nb, npb = _check.integer("n_blocks", n_blocks), _check.integer("nodes_per_block", nodes_per_block)
    gpn, ln = _check.integer("gpus_per_node", gpus_per_node), _check.integer("large_nodes", large_nodes)
    if ln > npb:
        raise ValueError(f"large_nodes ({ln}) must fit in one block of {npb} nodes")
    sizes = np.array([_check.integer("small_sizes", x) for x in small_sizes])
    if sizes.max() > gpn:
        raise ValueError(f"small_sizes must not exceed gpus_per_node ({gpn}), got {list(small_sizes)}")
    n_nodes, total = nb * npb, nb * npb * gpn
    large_gpus = ln * gpn
    lam_s, lam_l = arrival_rates(load, small_share, total, sizes, small_hours, large_gpus, large_hours)

    # the job stream (common to all policies)
    rng = np.random.default_rng(_check.integer("seed", seed, minimum=0))
    n_s = rng.poisson(lam_s, hours)
    n_l = rng.poisson(lam_l, hours)
    s_size = rng.choice(sizes, n_s.sum())
    s_dur = np.maximum(1, np.ceil(rng.exponential(small_hours, n_s.sum()))).astype(int)
    l_dur = np.maximum(1, np.ceil(rng.exponential(large_hours, n_l.sum()))).astype(int)
    s_arr = np.repeat(np.arange(hours), n_s)
    l_arr = np.repeat(np.arange(hours), n_l)
    # one list of arrivals per hour: (arrival hour, kind, size, duration); small jobs listed first within the hour
    jobs_by_hour = [[] for _ in range(hours)]
    for a, g, d in zip(s_arr.tolist(), s_size.tolist(), s_dur.tolist()):
        jobs_by_hour[a].append((a, 0, g, d))
    for a, d in zip(l_arr.tolist(), l_dur.tolist()):
        jobs_by_hour[a].append((a, 1, large_gpus, d))

    # cluster state, kept in plain Python structures (a few µs per placement): free GPUs per node, the nodes with
    # each free count, and the wholly free nodes of each block
    block_of = [n // npb for n in range(n_nodes)]
    # a topology-blind scheduler scans nodes by host name, which here interleaves the blocks
    scan_order = sorted(range(n_nodes), key=lambda n: ((n % npb), block_of[n]))
    free = [gpn] * n_nodes
    by_free = [set() for _ in range(gpn + 1)]
    by_free[gpn] = set(range(n_nodes))
    whole = [set(range(b * npb, (b + 1) * npb)) for b in range(nb)]
    n_free = total

    def change(n, delta):
        f = free[n]
        by_free[f].discard(n)
        if f == gpn:
            whole[block_of[n]].discard(n)
        f += delta
        free[n] = f
        by_free[f].add(n)
        if f == gpn:
            whole[block_of[n]].add(n)

    ends = [[] for _ in range(hours + 1)]          # ends[h]: (nodes, gpus per node, kind) released at hour h
    queue = []
    waits = {0: [], 1: []}
    large_busy = 0
    util, cap, lq, frag, large_hours_used = [], [], [], [], 0.0
    packing = policy != "first-fit"
    reserve = policy == "topology-aware"

    for h in range(hours):
        for nodes, g, kind in ends[h]:
            for n in nodes:
                change(n, g)
            n_free += g * len(nodes)
            large_busy -= large_gpus if kind == 1 else 0
        queue.extend(jobs_by_hour[h])
        remaining = []
        rb = -1                                 # the block reserved for the oldest waiting large job
        min_failed_small = gpn + 1              # a small job of this size or larger cannot fit this hour
        large_failed = False
        for job in queue:
            a, kind, g, d = job
            nodes = None
            if kind == 1:
                if not large_failed:
                    counts = [len(w) for w in whole]
                    ok = [b for b in range(nb) if counts[b] >= ln]
                    if ok:
                        b = min(ok, key=lambda x: (counts[x], x)) if packing else ok[0]
                        nodes, per = sorted(whole[b])[:ln], gpn
                    else:
                        large_failed = True
                        if reserve and rb < 0:
                            rb = max(range(nb), key=lambda x: (counts[x], -x))
            elif g < min_failed_small:
                node = -1
                if packing:                     # the fullest node that fits, then the most broken-up block
                    for f in range(g, gpn + 1):
                        cands = [n for n in by_free[f] if block_of[n] != rb]
                        if cands:
                            node = min(cands, key=lambda n: (len(whole[block_of[n]]), n))
                            break
                else:
                    for n in scan_order:
                        if free[n] >= g and block_of[n] != rb:
                            node = n
                            break
                if node >= 0:
                    nodes, per = [node], g
                else:
                    min_failed_small = g
            if nodes is None:
                remaining.append(job)
                continue
            for n in nodes:
                change(n, -per)
            n_free -= per * len(nodes)
            ends[min(h + d, hours)].append((nodes, per, kind))
            if a >= warmup:
                waits[kind].append(h - a)
            large_busy += large_gpus if kind == 1 else 0
        queue = remaining
        busy = total - n_free
        util.append(busy / total)
        placeable = sum(len(w) // ln for w in whole) * large_gpus
        cap.append(placeable / total)
        frag.append((n_free - placeable) / n_free if n_free else 0.0)
        lq.append(sum(1 for j in queue if j[1] == 1))
        if h >= warmup:
            large_hours_used += large_busy
    for a, kind, g, d in queue:                    # censored: still waiting at the end
        if a >= warmup:
            waits[kind].append(hours - a)
    m = slice(warmup, hours)
    n_meas = hours - warmup
    arrived_large = int(sum(1 for h in range(warmup, hours) for j in jobs_by_hour[h] if j[1] == 1))
    return ScheduleResult(
        policy, float(np.mean(util[m])), large_hours_used / (n_meas * total), float(np.mean(cap[m])),
        float(np.mean(frag[m])), float(np.mean(waits[1])) if waits[1] else 0.0,
        float(np.mean(waits[0])) if waits[0] else 0.0, sum(1 for j in queue if j[1] == 1), arrived_large,
        tuple(util), tuple(cap), tuple(lq))



def compare_policies(small_share=0.4, load=0.85, seeds=(0, 1, 2, 3), policies=POLICIES, **kwargs):
    """Run :func:`simulate_schedule` for each of ``policies`` on the same job streams (one per seed) and average;
    returns a DataFrame with one row per policy (means over seeds; ``large_wait_se`` is the standard error of the
    mean wait).

    >>> df = compare_policies(0.4, seeds=(0, 1))
    >>> list(df.index)
    ['first-fit', 'best-fit', 'topology-aware']
    """
    import pandas as pd

    seeds = [_check.integer("seeds", x, minimum=0) for x in seeds]
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    policies = [_check.choice("policies", p, POLICIES) for p in policies]
    rows = {}
    for p in policies:
        rs = [simulate_schedule(p, small_share, load, seed=sd, **kwargs) for sd in seeds]
        waits = [r.large_wait_hours for r in rs]
        mean_w = sum(waits) / len(waits)
        se = (math.sqrt(sum((w - mean_w) ** 2 for w in waits) / (len(waits) - 1) / len(waits))
              if len(waits) > 1 else float("nan"))
        rows[p] = {"utilisation": sum(r.utilisation for r in rs) / len(rs),
                   "large_share": sum(r.large_share for r in rs) / len(rs),
                   "large_capacity": sum(r.large_capacity for r in rs) / len(rs),
                   "fragmentation": sum(r.fragmentation for r in rs) / len(rs),
                   "large_wait_hours": mean_w, "large_wait_se": se,
                   "small_wait_hours": sum(r.small_wait_hours for r in rs) / len(rs),
                   "large_unstarted": sum(r.large_unstarted for r in rs) / len(rs)}
    return pd.DataFrame.from_dict(rows, orient="index")


# --- the data path: padding, bucketing, packing ----------------------------------------------------------------------

def sample_lengths(n, median=600, sigma=1.2, max_len=4096, seed=0):
    """``n`` document lengths (tokens) from a log-normal distribution with the given ``median`` and log-space
    ``sigma``, rounded and clipped to [1, ``max_len``]. Web-text lengths are heavy-tailed and roughly log-normal;
    the parameters here are illustrative, not fitted to a particular corpus. Returns an int64 array.

    >>> x = sample_lengths(1000, median=600, sigma=1.2, max_len=4096, seed=0)
    >>> len(x), int(x.min()) >= 1, int(x.max()) <= 4096
    (1000, True, True)
    """
    import numpy as np

    n = _check.integer("n", n)
    med = _check.positive("median", median)
    sig = _check.positive("sigma", sigma)
    mx = _check.integer("max_len", max_len)
    rng = np.random.default_rng(_check.integer("seed", seed, minimum=0))
    x = np.rint(rng.lognormal(math.log(med), sig, n))
    return np.clip(x, 1, mx).astype(np.int64)


def _lengths(lengths):
    import numpy as np

    if isinstance(lengths, (str, bytes)):
        raise ValueError("lengths must be a sequence of positive integers")
    x = np.asarray(lengths)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"lengths must be a non-empty 1-D sequence, got shape {x.shape}")
    if x.dtype.kind not in "iu" and not (x.dtype.kind == "f" and np.all(np.isfinite(x)) and np.all(x == np.rint(x))):
        raise ValueError("lengths must be whole numbers of tokens")
    if np.any(x < 1):
        raise ValueError(f"lengths must be at least 1 token, got a minimum of {x.min()}")
    return x.astype(np.int64)


def padding_efficiency(lengths, batch_size, pad_to=None) -> float:
    """Fraction of token slots holding real tokens when documents are batched in arrival order and each batch is
    padded to its longest member (or to a fixed ``pad_to``, the static-shape case):
    E = Σ ℓᵢ / Σ_batches (b · max ℓ in batch).

    >>> padding_efficiency([100, 300, 200, 400], batch_size=2)   # (100+300+200+400) / (2·300 + 2·400)
    0.7142857142857143
    >>> padding_efficiency([100, 300, 200, 400], batch_size=2, pad_to=512)
    0.48828125
    """
    import numpy as np

    x = _lengths(lengths)
    b = _check.integer("batch_size", batch_size)
    if pad_to is not None:
        p = _check.integer("pad_to", pad_to)
        if x.max() > p:
            raise ValueError(f"pad_to ({p}) is shorter than the longest document ({x.max()}); truncate first")
        return float(x.sum() / (x.size * p))
    n_full = x.size // b * b
    slots = int(x[:n_full].reshape(-1, b).max(1).sum()) * b
    if n_full < x.size:
        rest = x[n_full:]
        slots += int(rest.max()) * rest.size
    return float(x.sum() / slots)


def bucket_efficiency(lengths, batch_size, n_buckets=8) -> float:
    """Padding efficiency with length bucketing: documents go to one of ``n_buckets`` buckets by length quantile,
    batches are formed within a bucket (in arrival order) and padded to their longest member.

    >>> x = [10, 1000, 12, 990, 11, 1010, 9, 1005]
    >>> round(padding_efficiency(x, 2), 3), round(bucket_efficiency(x, 2, n_buckets=2), 3)
    (0.505, 0.995)
    """
    import numpy as np

    x = _lengths(lengths)
    b = _check.integer("batch_size", batch_size)
    k = _check.integer("n_buckets", n_buckets)
    edges = np.quantile(x, np.linspace(0, 1, k + 1)[1:-1])
    which = np.searchsorted(edges, x, side="left")
    slots = 0
    for j in range(k):
        xs = x[which == j]
        if xs.size == 0:
            continue
        n_full = xs.size // b * b
        slots += int(xs[:n_full].reshape(-1, b).max(1).sum()) * b if n_full else 0
        if n_full < xs.size:
            slots += int(xs[n_full:].max()) * (xs.size - n_full)
    return float(x.sum() / slots)


def pack_ffd(lengths, capacity):
    """First-fit decreasing packing of documents into sequences of ``capacity`` tokens: sort by length, longest
    first; put each into the first sequence with room, or open a new one. Documents longer than ``capacity`` are
    cut into ``capacity``-sized pieces first (as pre-training does). Returns the tokens used in each sequence
    (int64 array). FFD uses at most 11/9·OPT + 6/9 bins (Dósa 2007).

    >>> pack_ffd([500, 400, 300, 300, 200, 200, 100], capacity=1000).tolist()
    [1000, 1000]
    """
    import numpy as np

    x = _lengths(lengths)
    cap = _check.integer("capacity", capacity)
    whole, rest = np.divmod(x, cap)
    pieces = np.sort(rest[rest > 0])[::-1]
    used = np.zeros(pieces.size + 1, dtype=np.int64)
    n_bins = 0
    for length in pieces.tolist():
        room = cap - used[:n_bins]
        hits = np.flatnonzero(room >= length)
        if hits.size:
            used[hits[0]] += length
        else:
            used[n_bins] = length
            n_bins += 1
    return np.concatenate([np.full(int(whole.sum()), cap, dtype=np.int64), used[:n_bins]])


def packing_efficiency(lengths, capacity) -> float:
    """Fraction of token slots filled by FFD packing: Σ ℓᵢ / (sequences × capacity).

    >>> packing_efficiency([500, 400, 300, 300, 200, 200, 100], 1000)
    1.0
    """
    used = pack_ffd(lengths, capacity)
    return float(used.sum() / (used.size * _check.integer("capacity", capacity)))


def loader_tokens_per_second(n_gpus, peak_flops, mfu, params, flops_per_param_token=6.0) -> float:
    """Training tokens per second the cluster consumes, which the data loader must sustain:
    r = n · peak · MFU / (6 · N)  (each token costs 6N FLOPs, Kaplan et al. 2020).

    The running example (1,024 GPUs at 3e14 FLOP/s, 50 % MFU, 175B parameters):

    >>> round(loader_tokens_per_second(1024, 3e14, 0.5, 175e9))
    146286
    """
    n = _check.integer("n_gpus", n_gpus)
    return (n * _check.positive("peak_flops", peak_flops) * _check.fraction("mfu", mfu)
            / (_check.positive("flops_per_param_token", flops_per_param_token) * _check.positive("params", params)))


def loader_bytes_per_second(tokens_per_second, bytes_per_token=4.0, efficiency=1.0) -> float:
    """Bytes per second the loader reads: tokens/s × bytes per token (≈ 4 bytes of UTF-8 text per token for English
    with a BPE tokenizer; 2–4 bytes if pre-tokenized ids are stored) ÷ the fraction of slots holding real tokens.

    >>> round(loader_bytes_per_second(146286, 4.0) / 1e6, 2)
    0.59
    """
    return (_check.nonnegative("tokens_per_second", tokens_per_second)
            * _check.positive("bytes_per_token", bytes_per_token)
            / _check.fraction("efficiency", efficiency))


# --- experiment tiers ----------------------------------------------------------------------------------------------

def experiment_gpu_hours(params, tokens, peak_flops, mfu) -> float:
    """GPU-hours of one training experiment: 6·N·D / (peak · MFU) / 3600 (see :mod:`chipchain.compute`).

    A 1B-parameter model on 20B tokens on A100s (312 TFLOP/s BF16 dense) at 40 % MFU:

    >>> round(experiment_gpu_hours(1e9, 20e9, 312e12, 0.4))
    267
    """
    from . import compute

    return compute.gpu_hours(compute.training_flops(params, tokens), peak_flops, mfu)


def tier_plan(budget, costs, promote) -> dict:
    """How many ideas a budget can take through a funnel of experiment tiers.

    ``budget`` (GPU-hours); ``costs`` the GPU-hours of one experiment at each tier, smallest first; ``promote`` the
    fraction of ideas passed from each tier to the next (one fewer entry than ``costs``). Each idea screened costs
    c₁ + p₁·c₂ + p₁p₂·c₃ + … in expectation, so ideas screened = budget / that. Returns the ideas entering each tier,
    the budget share each tier takes, and — for comparison — how many ideas the budget would test at full scale alone.

    >>> plan = tier_plan(1e6, [100, 2_000, 100_000], [0.1, 0.2])
    >>> round(plan["ideas"][0]), round(plan["ideas"][-1], 1), plan["full_scale_only"]
    (435, 8.7, 10.0)
    """
    b = _check.positive("budget", budget)
    cs = [_check.positive("costs", c) for c in costs]
    ps = [_check.fraction("promote", p) for p in promote]
    if len(cs) < 1 or len(ps) != len(cs) - 1:
        raise ValueError(f"promote must have one entry fewer than costs ({len(cs)}), got {len(ps)}")
    reach = [1.0]
    for p in ps:
        reach.append(reach[-1] * p)
    per_idea = sum(r * c for r, c in zip(reach, cs))
    n = b / per_idea
    ideas = [n * r for r in reach]
    shares = [n * r * c / b for r, c in zip(reach, cs)]
    return {"ideas": ideas, "budget_share": shares, "per_idea_gpu_hours": per_idea, "full_scale_only": b / cs[-1]}


# --- recipes as configuration --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stage:
    """One stage of a training recipe: a token budget with its own data mixture (weights summing to 1)."""

    name: str
    tokens: float
    mixture: dict

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"stage name must be a non-empty string, got {self.name!r}")
        _check.positive("tokens", self.tokens)
        _mixture(f"mixture of stage {self.name!r}", self.mixture)


def _mixture(name, mix):
    if not isinstance(mix, dict) or not mix:
        raise ValueError(f"{name} must be a non-empty dict source -> weight, got {mix!r}")
    for k, v in mix.items():
        _check.probability(f"{name}[{k!r}]", v)
    if abs(sum(mix.values()) - 1.0) > 1e-9:
        raise ValueError(f"{name} weights must sum to 1, got {sum(mix.values())!r}")


@dataclass(frozen=True)
class TrainingRecipe:
    """A training recipe as a record that can be saved, loaded, compared: learning rate and its schedule, warm-up,
    batch-size schedule, and the data stages with their mixtures.

    >>> r = TrainingRecipe("demo", peak_lr=3e-4, min_lr=3e-5, warmup_steps=2000, schedule="cosine",
    ...                    batch_schedule=((0, 1024), (10_000, 2048)),
    ...                    stages=(Stage("main", 1.8e12, {"web": 0.8, "code": 0.2}),))
    >>> TrainingRecipe.from_json(r.to_json()) == r
    True
    >>> diff_recipes(r, r.replace(peak_lr=2e-4))
    [('peak_lr', 0.0003, 0.0002)]
    """

    name: str
    peak_lr: float
    min_lr: float
    warmup_steps: int
    schedule: str = "cosine"
    batch_schedule: tuple = ((0, 1024),)      #: (from step, sequences per batch), steps increasing
    seq_len: int = 2048
    stages: tuple = ()
    seed: int = 0
    notes: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        _check.positive("peak_lr", self.peak_lr)
        _check.nonnegative("min_lr", self.min_lr)
        if self.min_lr > self.peak_lr:
            raise ValueError(f"min_lr ({self.min_lr}) must not exceed peak_lr ({self.peak_lr})")
        _check.integer("warmup_steps", self.warmup_steps, minimum=0)
        _check.choice("schedule", self.schedule, ("cosine", "linear", "constant", "wsd"))
        _check.integer("seq_len", self.seq_len)
        _check.integer("seed", self.seed, minimum=0)
        steps = []
        for item in self.batch_schedule:
            try:
                step, batch = item
            except (TypeError, ValueError):
                raise ValueError(f"batch_schedule entries must be (step, batch) pairs, got {item!r}") from None
            steps.append(_check.integer("batch_schedule step", step, minimum=0))
            _check.integer("batch_schedule batch", batch)
        if not steps or steps[0] != 0 or steps != sorted(set(steps)):
            raise ValueError(f"batch_schedule must start at step 0 with increasing steps, got {self.batch_schedule!r}")
        for s in self.stages:
            if not isinstance(s, Stage):
                raise ValueError(f"stages must hold Stage objects, got {s!r}")
        object.__setattr__(self, "batch_schedule", tuple((int(a), int(b)) for a, b in self.batch_schedule))
        object.__setattr__(self, "stages", tuple(self.stages))

    @property
    def total_tokens(self) -> float:
        """Tokens over all stages."""
        return float(sum(s.tokens for s in self.stages))

    def replace(self, **changes) -> "TrainingRecipe":
        """A copy with some fields changed (validated again)."""
        from dataclasses import replace

        return replace(self, **changes)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["batch_schedule"] = [list(x) for x in self.batch_schedule]
        d["stages"] = [{"name": s.name, "tokens": s.tokens, "mixture": dict(s.mixture)} for s in self.stages]
        return d

    def to_json(self) -> str:
        """The recipe as JSON text (keys sorted, so that two saves of one recipe are byte-identical)."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, d) -> "TrainingRecipe":
        if not isinstance(d, dict):
            raise ValueError(f"a recipe must be a JSON object, got {type(d).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            near = {u: difflib.get_close_matches(u, names, 1) for u in unknown}
            raise KeyError(f"unknown recipe fields {sorted(unknown)}; nearest: {near}")
        d = dict(d)
        d["batch_schedule"] = tuple(tuple(x) for x in d.get("batch_schedule", ((0, 1024),)))
        d["stages"] = tuple(Stage(**s) for s in d.get("stages", ()))
        return cls(**d)

    @classmethod
    def from_json(cls, text: str) -> "TrainingRecipe":
        return cls.from_dict(json.loads(text))

    def save(self, path) -> None:
        """Write the recipe to ``path`` as JSON."""
        from pathlib import Path

        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path) -> "TrainingRecipe":
        """Read a recipe written by :meth:`save`."""
        from pathlib import Path

        return cls.from_json(Path(path).read_text(encoding="utf-8"))


def diff_recipes(a: TrainingRecipe, b: TrainingRecipe) -> list:
    """Differences between two recipes as (path, value in a, value in b), with nested paths such as
    ``stages[0].mixture.code``; an empty list means the recipes are the same.

    >>> r = TrainingRecipe("x", 3e-4, 3e-5, 100, stages=(Stage("s", 1e9, {"web": 1.0}),))
    >>> diff_recipes(r, r.replace(stages=(Stage("s", 1e9, {"web": 0.9, "code": 0.1}),)))
    [('stages[0].mixture.code', None, 0.1), ('stages[0].mixture.web', 1.0, 0.9)]
    """
    for name, r in (("a", a), ("b", b)):
        if not isinstance(r, TrainingRecipe):
            raise ValueError(f"{name} must be a TrainingRecipe, got {type(r).__name__}")
    out = []

    def walk(path, x, y):
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y)):
                walk(f"{path}.{k}" if path else k, x.get(k), y.get(k))
        elif isinstance(x, list) and isinstance(y, list) and x and y and isinstance(x[0], dict):
            for i in range(max(len(x), len(y))):
                walk(f"{path}[{i}]", x[i] if i < len(x) else None, y[i] if i < len(y) else None)
        elif x != y:
            out.append((path, x, y))

    walk("", a.to_dict(), b.to_dict())
    return out


# --- troubleshooting -------------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _trouble_rows() -> tuple:
    text = resources.files("chipchain").joinpath("data", "troubleshooting.csv").read_text(encoding="utf-8")
    return tuple(csv.DictReader(io.StringIO(text)))


def troubleshooting():
    """Seed 004 §6's troubleshooting table as a diagnosis guide (symptom, likely causes, what to measure, what to
    do, and the chapter that explains the cause), as a DataFrame.

    >>> troubleshooting().shape[0]
    6
    """
    import pandas as pd

    return pd.DataFrame(list(_trouble_rows()))


# --- figures -----------------------------------------------------------------------------------------------------

def plot_schedule(results, ax=None):
    """Daily-mean utilisation (solid) and capacity left for large jobs (dashed) over the simulated weeks, one colour
    per :class:`ScheduleResult`. Returns the Axes."""
    import numpy as np

    from . import plotting

    ax = plotting.axes(ax)
    for i, r in enumerate(results):
        if not isinstance(r, ScheduleResult):
            raise ValueError(f"results must hold ScheduleResult objects, got {type(r).__name__}")
        days = len(r.hourly_utilisation) // 24
        u = np.array(r.hourly_utilisation[:days * 24]).reshape(days, 24).mean(1)
        c = np.array(r.hourly_large_capacity[:days * 24]).reshape(days, 24).mean(1)
        ax.plot(np.arange(days) + 0.5, u, color=plotting.color(i), label=f"{r.policy}: utilisation")
        ax.plot(np.arange(days) + 0.5, c, color=plotting.color(i), ls="--", label=f"{r.policy}: room for a large job")
    ax.set_ylim(0, 1)
    ax.set_xlabel("day")
    ax.set_ylabel("fraction of the cluster's GPUs")
    ax.legend(fontsize=8, loc="center right")
    return ax


def plot_padding(lengths, batch_size, capacity, ax=None):
    """Length histogram (log bins) with the fraction of real tokens under each batching scheme in the legend.
    Returns the Axes."""
    import numpy as np

    from . import plotting

    x = _lengths(lengths)
    ax = plotting.axes(ax)
    bins = np.geomspace(1, max(int(x.max()), 2), 40)
    ax.hist(x, bins=bins, color=plotting.color(0), alpha=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("document length (tokens)")
    ax.set_ylabel("documents")
    effs = [("pad to the longest in the batch", padding_efficiency(x, batch_size)),
            ("length buckets (8)", bucket_efficiency(x, batch_size)),
            (f"FFD packing into {capacity}", packing_efficiency(x, capacity))]
    txt = "\n".join(f"{k}: {v:.1%} real tokens" for k, v in effs)
    ax.text(0.02, 0.97, txt, transform=ax.transAxes, va="top", fontsize=8)
    return ax


# --- explorables -------------------------------------------------------------------------------------------------

_SHARES = (0.2, 0.4, 0.6, 0.8)
_LOAD, _SEEDS = 0.85, (0, 1, 2)


@lru_cache(maxsize=1)
def _schedule_grid():
    """Every (policy, small share) at 85 % offered load, three seeds each (about a second)."""
    return {(p, s, sd): simulate_schedule(p, s, _LOAD, seed=sd) for p in POLICIES for s in _SHARES for sd in _SEEDS}


def schedule_view(policy, small_share) -> str:
    """HTML for one view of the scheduling explorer: the seed-0 run as a chart, the three-seed means as a table."""
    from . import plotting

    grid = _schedule_grid()
    r = grid[(policy, small_share, 0)]
    rs = [grid[(policy, small_share, sd)] for sd in _SEEDS]
    mean = lambda attr: sum(getattr(x, attr) for x in rs) / len(rs)   # noqa: E731
    days = len(r.hourly_utilisation) // 24
    day = lambda xs: [sum(xs[d * 24:(d + 1) * 24]) / 24 for d in range(days)]   # noqa: E731
    xs = [d + 0.5 for d in range(days)]
    chart = plotting.svg_chart(
        lines=[{"x": xs, "y": day(r.hourly_utilisation), "label": "utilisation"},
               {"x": xs, "y": day(r.hourly_large_capacity), "label": "room for a new large job", "dash": True}],
        ylim=(0, 1), xlabel="day (seed 0; the first week is warm-up)", ylabel="fraction of 1,024 GPUs",
        alt=f"Daily utilisation and room for a new large job under {policy} with {small_share:.0%} of demand from "
            f"small jobs: utilisation {r.utilisation:.0%}, room {r.large_capacity:.0%}.")
    rows = [("utilisation (busy GPU-hours)", f"{mean('utilisation'):.1%}"),
            ("GPU-hours delivered to large jobs",
             f"{mean('large_share'):.1%} (offered {(1 - small_share) * _LOAD:.1%})"),
            ("room for a new 64-GPU job, time-averaged", f"{mean('large_capacity'):.1%} of the cluster"),
            ("idle GPUs stranded (no large job can use them)", f"{mean('fragmentation'):.0%}"),
            ("mean wait of a large job", f"{mean('large_wait_hours'):.1f} h"),
            ("mean wait of a small job", f"{mean('small_wait_hours'):.2f} h")]
    body = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
    return (chart + f'<table class="cc-table"><caption>means over {len(_SEEDS)} simulated months (seeds)</caption>'
            f"<tbody>{body}</tbody></table>")


@widgets.explorer
def schedule_explorer():
    """Chapter 8: job mix and placement policy → utilisation, room for large jobs, queueing (85 % offered load)."""
    _schedule_grid()
    return widgets.explore(
        schedule_view,
        [widgets.Choice("policy", "policy", {p: p for p in POLICIES}, value="first-fit"),
         widgets.Slider("small_share", "share of demand from small jobs", list(_SHARES), value=0.4,
                        fmt=lambda v: f"{v:.0%}")],
        title="Scheduling a shared 1,024-GPU cluster: does utilisation tell the truth?")


_MEDIANS = (128, 256, 512, 1024, 2048)
_SIGMAS = (0.5, 1.0, 1.5)
_CAPACITIES = (2048, 4096, 8192)
_N_DOCS, _BATCH = 2000, 16


@lru_cache(maxsize=None)
def _packing_point(median, sigma, capacity):
    import numpy as np

    x = sample_lengths(_N_DOCS, median, sigma, capacity, seed=0)
    hist, edges = np.histogram(np.log10(x), bins=24, range=(0, math.log10(capacity)))
    return (float(x.mean()), padding_efficiency(x, _BATCH, pad_to=capacity), padding_efficiency(x, _BATCH),
            bucket_efficiency(x, _BATCH), packing_efficiency(x, capacity), tuple(hist.tolist()),
            tuple(edges.tolist()))


def packing_view(median, sigma, capacity) -> str:
    """HTML for one view of the padding-vs-packing explorer."""
    from . import plotting

    if median * 2 > capacity:
        raise ValueError(f"a median document of {median} tokens is more than half the {capacity}-token sequence; "
                         "most documents would be cut — choose a longer sequence")
    mean, fixed, pad, bucket, pack, hist, edges = _packing_point(median, sigma, capacity)
    centres = [10 ** ((a + b) / 2) for a, b in zip(edges[:-1], edges[1:])]
    chart = plotting.svg_chart(
        lines=[{"x": centres, "y": hist, "label": f"{_N_DOCS} documents"}], xlog=True,
        vlines=[{"x": median, "label": "median"}], xlabel="document length (tokens)", ylabel="documents per bin",
        alt=f"Log-normal length distribution with median {median} tokens and sigma {sigma}, clipped at {capacity}.")
    rows = [("pad every sequence to the maximum", fixed), ("pad each batch to its longest", pad),
            ("length bucketing (8 buckets)", bucket), ("FFD packing", pack)]
    body = "".join(f"<tr><td>{k}</td><td>{v:.1%}</td><td>{1 / v:.2f}×</td></tr>" for k, v in rows)
    return (chart + '<table class="cc-table"><thead><tr><th>batching</th><th>real tokens</th>'
            f'<th>slots per real token</th></tr></thead><tbody>{body}</tbody></table>'
            f"<p>Mean length {mean:.0f} tokens; batch of {_BATCH} documents; sequence length {capacity}.</p>")


@widgets.explorer
def packing_explorer():
    """Chapter 8: the length distribution and sequence length → padding waste of each batching scheme."""
    for m in _MEDIANS:
        for s in _SIGMAS:
            for c in _CAPACITIES:
                if m * 2 <= c:
                    _packing_point(m, s, c)
    return widgets.explore(
        packing_view,
        [widgets.Slider("median", "median document (tokens)", list(_MEDIANS), value=512),
         widgets.Slider("sigma", "spread σ (log-normal)", list(_SIGMAS), value=1.0),
         widgets.Slider("capacity", "sequence length", list(_CAPACITIES), value=4096)],
        title="Padding, bucketing or packing?")
