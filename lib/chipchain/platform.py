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
    "POLICIES", "ScheduleResult", "arrival_rates", "simulate_schedule",
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
    large_wait_hours: float     #: mean wait of large jobs that arrived in the measured period (queued ones counted to the end)
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
            rho * (1 - s) * g / (_check.integer("large_gpus", large_gpus) * _check.positive("large_hours", large_hours)))


def simulate_schedule(policy="first-fit", small_share=0.5, load=0.85, *, hours=24 * 28, warmup=24 * 7,
                      n_blocks=8, nodes_per_block=16, gpus_per_node=8, large_nodes=8, small_sizes=(1, 2, 4, 8),
                      small_hours=12.0, large_hours=48.0, seed=0) -> ScheduleResult:
    """Simulate a shared cluster hour by hour under one placement ``policy``.

    The cluster has ``n_blocks`` blocks of ``nodes_per_block`` nodes of ``gpus_per_node`` GPUs (default 8 × 16 × 8 =
    1,024 GPUs). Small jobs take 1–8 GPUs on one node; a large job takes ``large_nodes`` whole nodes inside one block.
    Arrivals are Poisson (rates from :func:`arrival_rates`), durations exponential (rounded up to whole hours); the
    job stream depends only on ``seed``, so policies are compared on the same jobs. Jobs wait in one queue and any
    job that fits starts (backfilling). Policies:

    * ``"first-fit"`` — a small job goes on the lowest-numbered node with room; a large job in the first block with
      enough whole free nodes ("any free GPU will do");
    * ``"best-fit"`` — a small job goes on the fullest node that fits, preferring blocks that are already broken up;
      a large job in the block with the fewest spare whole nodes that still fits (topology-aware placement);
    * ``"topology-aware"`` — best fit plus a reservation: while a large job waits, the block nearest to fitting it
      takes no new small jobs.

    >>> ff = simulate_schedule("first-fit", hours=24 * 14, warmup=24 * 3)
    >>> ta = simulate_schedule("topology-aware", hours=24 * 14, warmup=24 * 3)
    >>> ta.large_capacity > ff.large_capacity and ta.large_wait_hours < ff.large_wait_hours
    True
    """
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

