"""Scheduling a shared cluster: a topology-aware placement simulation (seed 000 §9).

A simulated cluster of nodes grouped in well-connected blocks (one leaf switch each) receives a stream of jobs: many
small ones (1–8 GPUs on one node) and large ones that need whole nodes inside one block. First-fit placement scatters
small jobs over the blocks; utilisation stays high while the capacity left for large jobs — whole free nodes together
in one block — collapses and large jobs queue. Packing small jobs (best fit) and reserving a block for the oldest
waiting large job keeps that capacity.

The simulation is small (a 1,024-GPU cluster over four weeks, stepped hour by hour) so that a chapter runs in
seconds; it is a model, not a measurement of any production scheduler. Arguments and results are in seconds.

>>> ff = simulate_schedule("first-fit", seconds=14 * 86400, warmup_seconds=3 * 86400)
>>> round(ff.utilisation, 2) > 0.7
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from ._lazy import np

from . import _check, systems
from .units import DAY, HOUR

__all__ = ["POLICIES", "ScheduleResult", "PolicySummary", "arrival_rates", "simulate_schedule", "compare_policies"]

#: placement policies of :func:`simulate_schedule`
POLICIES = ("first-fit", "best-fit", "topology-aware")


@dataclass(frozen=True)
class ScheduleResult:
    """Outcome of :func:`simulate_schedule` (averages over the measured period, after the warm-up)."""

    policy: str
    utilisation: float          #: busy GPU-hours / GPU-hours available
    large_share: float          #: GPU-hours that went to large jobs / GPU-hours available
    large_capacity: float       #: mean fraction of GPUs that a new large job could start on at once
    fragmentation: float        #: mean fraction of idle GPUs that no large job can use (stranded)
    large_wait_seconds: float   #: mean wait of large jobs arriving after the warm-up (queued ones counted to the end)
    small_wait_seconds: float   #: the same for small jobs
    large_unstarted: int        #: large jobs still waiting at the end
    large_arrived: int
    hourly_utilisation: tuple   #: one value per hour of the whole run, for plots
    hourly_large_capacity: tuple
    hourly_large_queue: tuple


def _rates(load, small_share, n_gpus, small_sizes, small_mean, large_gpus, large_mean):
    """Arrival rates per unit of time of the mean durations given (arguments already checked)."""
    mean_small = sum(small_sizes) / len(small_sizes)
    return (load * small_share * n_gpus / (mean_small * small_mean),
            load * (1 - small_share) * n_gpus / (large_gpus * large_mean))


def arrival_rates(load, small_share, n_gpus, small_sizes, small_seconds, large_gpus, large_seconds):
    """Arrival rates (jobs per second) that offer ``load`` × the cluster, a share ``small_share`` of it as small jobs:
    λ_small = ρ·s·G / (E[g_small]·E[d_small]),  λ_large = ρ·(1 − s)·G / (g_large·E[d_large]).

    ``small_seconds`` and ``large_seconds`` are the mean job durations. Per hour, for 1,024 GPUs at 80 % load:

    >>> [round(x * 3600, 3) for x in arrival_rates(0.8, 0.5, 1024, (1, 2, 4, 8), 12 * 3600, 64, 48 * 3600)]
    [9.102, 0.133]
    """
    sizes = [_check.integer("small_sizes", x) for x in small_sizes]
    if not sizes:
        raise ValueError("small_sizes must hold at least one size")
    return _rates(_check.fraction("load", load), _check.probability("small_share", small_share),
                  _check.integer("n_gpus", n_gpus), sizes, _check.positive("small_seconds", small_seconds),
                  _check.integer("large_gpus", large_gpus), _check.positive("large_seconds", large_seconds))


def _whole_hours(name, seconds, minimum=1) -> int:
    s = _check.nonnegative(name, seconds)
    if s % HOUR:
        raise ValueError(f"{name} must be a whole number of hours (the simulation steps hourly), got {seconds!r}")
    return _check.integer(name, s / HOUR, minimum=minimum)


def simulate_schedule(policy="first-fit", small_share=0.5, load=0.85, *, cluster=None, seconds=28 * DAY,
                      warmup_seconds=7 * DAY, nodes_per_block=16, large_nodes=8, small_sizes=(1, 2, 4, 8),
                      small_seconds=DAY, large_seconds=2 * DAY, seed=0) -> ScheduleResult:
    """Simulate a shared cluster hour by hour under one placement ``policy`` (results are cached: a simulation is
    deterministic given its arguments, and the chapter and its explorer reuse the same runs).

    ``cluster``: a cluster name or :class:`chipchain.systems.Cluster` (default 1,024 A100 GPUs in DGX-A100 nodes of
    8), its nodes grouped in blocks of ``nodes_per_block`` (default 128 nodes = 8 blocks of 16). Small jobs take
    1–8 GPUs on one node; a large job takes ``large_nodes`` whole nodes inside one block. Arrivals are Poisson (rates
    from :func:`arrival_rates`), durations exponential with means ``small_seconds``/``large_seconds`` (rounded up to
    whole hours); the job stream depends only on ``seed``, so policies are compared on the same jobs. Jobs wait in
    one queue and any job that fits starts (backfilling). Policies:

    * ``"first-fit"`` — topology-blind: a small job goes on the first node with room in host-name order, which
      interleaves the blocks; a large job in the first block with enough whole free nodes ("any free GPU will do");
    * ``"best-fit"`` — a small job goes on the fullest node that fits, preferring blocks that are already broken up;
      a large job in the block with the fewest spare whole nodes that still fits (topology-aware placement);
    * ``"topology-aware"`` — best fit plus a reservation: while a large job waits, the block nearest to fitting it
      takes no new small jobs.

    >>> ff = simulate_schedule("first-fit", seconds=14 * 86400, warmup_seconds=3 * 86400)
    >>> ta = simulate_schedule("topology-aware", seconds=14 * 86400, warmup_seconds=3 * 86400)
    >>> ta.large_capacity > ff.large_capacity and ta.large_wait_seconds < ff.large_wait_seconds
    True
    """
    policy = _check.choice("policy", policy, POLICIES)
    c = systems.cluster("A100", 1024) if cluster is None else systems.cluster(cluster)
    gpn = c.gpus_per_node
    if c.n_gpus % gpn:
        raise ValueError(f"cluster must hold whole nodes: {c.n_gpus} GPUs in nodes of {gpn}")
    npb = _check.integer("nodes_per_block", nodes_per_block)
    if (c.n_gpus // gpn) % npb:
        raise ValueError(f"the cluster's {c.n_gpus // gpn} nodes do not divide into blocks of {npb}")
    ln = _check.integer("large_nodes", large_nodes)
    if ln > npb:
        raise ValueError(f"large_nodes ({ln}) must fit in one block of {npb} nodes")
    if isinstance(small_sizes, (str, bytes)) or not hasattr(small_sizes, "__iter__"):
        raise ValueError(f"small_sizes must be a sequence of integers, got {small_sizes!r}")
    sizes = tuple(_check.integer("small_sizes", x) for x in small_sizes)
    if not sizes or max(sizes) > gpn:
        raise ValueError(f"small_sizes must be 1 to {gpn} GPUs (one node), got {list(small_sizes)}")
    hours = _whole_hours("seconds", seconds)
    warmup = _whole_hours("warmup_seconds", warmup_seconds, minimum=0)
    if warmup >= hours:
        raise ValueError(f"warmup_seconds ({warmup_seconds}) must be shorter than seconds ({seconds})")
    if hours * c.n_gpus > 5e8:
        raise ValueError(f"{hours:,} hours on {c.n_gpus:,} GPUs is too long a simulation; shorten seconds")
    nodes = c.n_gpus // gpn
    jobs = sum(arrival_rates(load, small_share, c.n_gpus, sizes, small_seconds, ln * gpn, large_seconds)) * hours * HOUR
    if 2e-5 * jobs + 4.5e-7 * hours * nodes + 3e-8 * jobs * nodes + 5e-6 * nodes > 0.4:   # measured costs, seconds
        raise ValueError(f"about {jobs:,.0f} jobs over {hours:,} hours on {nodes:,} nodes is more than this simulation "
                         "answers within a second; shorten seconds, lengthen the jobs or simulate fewer GPUs")
    return _simulate_schedule(policy, _check.probability("small_share", small_share), _check.fraction("load", load),
                              hours, warmup, c.n_gpus // gpn // npb, npb, gpn, ln, sizes,
                              _check.positive("small_seconds", small_seconds) / HOUR,
                              _check.positive("large_seconds", large_seconds) / HOUR,
                              _check.integer("seed", seed, minimum=0))


@lru_cache(maxsize=256)
def _simulate_schedule(policy, small_share, load, hours, warmup, nb, npb, gpn, ln, small_sizes, small_hours,
                       large_hours, seed) -> ScheduleResult:
    """The simulation behind :func:`simulate_schedule` (cached; arguments already checked, times in hours)."""
    sizes = np.array(small_sizes)
    n_nodes, total = nb * npb, nb * npb * gpn
    large_gpus = ln * gpn
    lam_s, lam_l = _rates(load, small_share, total, small_sizes, small_hours, large_gpus, large_hours)  # per hour

    # the job stream (common to all policies)
    rng = np.random.default_rng(seed)
    n_s = rng.poisson(lam_s, hours)
    n_l = rng.poisson(lam_l, hours)
    s_size = rng.choice(sizes, n_s.sum())
    s_dur = np.maximum(1, np.ceil(rng.exponential(small_hours, n_s.sum()))).astype(int)
    l_dur = np.maximum(1, np.ceil(rng.exponential(large_hours, n_l.sum()))).astype(int)
    s_arr = np.repeat(np.arange(hours), n_s.astype(np.intp))   # Poisson counts are int64; np.repeat takes intp,
    l_arr = np.repeat(np.arange(hours), n_l.astype(np.intp))   # which is 32-bit in WebAssembly (Pyodide)
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
    work = 0                                    # jobs looked at, summed over the hours (the simulation's cost)

    for h in range(hours):
        for nodes, g, kind in ends[h]:
            for n in nodes:
                change(n, g)
            n_free += g * len(nodes)
            large_busy -= large_gpus if kind == 1 else 0
        queue.extend(jobs_by_hour[h])
        work += len(queue)
        if work > 1.2e5:                        # a long queue over many hours would take minutes: refuse instead
            raise ValueError(f"the simulation would look at more than 120,000 queued jobs (the queue held "
                             f"{len(queue):,} at hour {h:,}), more than it answers within a second; lower the load "
                             "or shorten seconds")
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
        float(np.mean(frag[m])), float(np.mean(waits[1])) * HOUR if waits[1] else 0.0,
        float(np.mean(waits[0])) * HOUR if waits[0] else 0.0, sum(1 for j in queue if j[1] == 1), arrived_large,
        tuple(util), tuple(cap), tuple(lq))


@dataclass(frozen=True)
class PolicySummary:
    """One policy's means over several seeds (:func:`compare_policies`)."""

    policy: str
    utilisation: float
    large_share: float
    large_capacity: float
    fragmentation: float
    large_wait_seconds: float
    large_wait_se: float | None     #: standard error of the mean wait, seconds (None with a single seed)
    small_wait_seconds: float
    large_unstarted: float


def compare_policies(small_share=0.4, load=0.85, seeds=(0, 1, 2, 3), policies=POLICIES, **kwargs):
    """Run :func:`simulate_schedule` for each of ``policies`` on the same job streams (one per seed) and average;
    returns one :class:`PolicySummary` per policy, in order.

    >>> [s.policy for s in compare_policies(0.4, seeds=(0, 1))]
    ['first-fit', 'best-fit', 'topology-aware']
    """
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
        raise ValueError(f"seeds must be a sequence of integers, got {seeds!r}")
    seeds = [_check.integer("seeds", x, minimum=0) for x in seeds]
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    out = []
    for p in (_check.choice("policies", p, POLICIES) for p in policies):
        rs = [simulate_schedule(p, small_share, load, seed=sd, **kwargs) for sd in seeds]
        mean = lambda attr: sum(getattr(r, attr) for r in rs) / len(rs)   # noqa: E731
        waits = [r.large_wait_seconds for r in rs]
        mean_w = sum(waits) / len(waits)
        se = (math.sqrt(sum((w - mean_w) ** 2 for w in waits) / (len(waits) - 1) / len(waits))
              if len(waits) > 1 else None)
        out.append(PolicySummary(p, mean("utilisation"), mean("large_share"), mean("large_capacity"),
                                 mean("fragmentation"), mean_w, se, mean("small_wait_seconds"),
                                 mean("large_unstarted")))
    return tuple(out)
