"""Collectives as practitioners meet them: bus bandwidth, in-network reduction, ring against tree, all-to-all across
nodes, and how much communication can hide behind the backward pass.

:mod:`chipchain.comms` prices the textbook algorithms with the α–β model (a message of M bytes costs α + M/B, B per
direction). This module adds what reading an ``nccl-tests`` report or planning expert and data parallelism needs:

* **algorithm and bus bandwidth** as nccl-tests prints them: ``algbw = M / T`` and ``busbw = algbw × factor``, with
  factor 2(n−1)/n for all-reduce, so that busbw compares directly with a link's per-direction bandwidth;
* **in-network reduction** (NVLink SHARP inside an NVSwitch domain, InfiniBand SHARP in the switches): the switch
  adds, so each GPU sends M once instead of the ring's 2(n−1)/n·M;
* the **message size** at which the ring starts to beat NCCL's double binary tree;
* the **all-to-all** of expert parallelism when it spans nodes;
* **overlap** of a bucketed gradient all-reduce with the backward pass (PyTorch DDP).

>>> round(bus_bandwidth(275e9, 8) / 1e9)      # NCCL on 8 H100s with NVLink SHARP: algbw ~275, busbw ~480 GB/s
481
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check, comms, units
from ._lazy import np
from .units import fmt_percent

__all__ = ["BUS_FACTORS", "bus_factor", "algorithm_bandwidth", "bus_bandwidth", "sharp_allreduce_time",
           "ring_tree_crossover", "moe_dispatch_bytes", "cluster_alltoall_time", "Overlap", "bucketed_overlap",
           "best_bucket_count"]

#: nccl-tests' bus-bandwidth factors (PERFORMANCE.md): busbw = algbw × factor(n).
BUS_FACTORS = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
}


def _ranks(n_ranks, minimum=1):
    return _check.values("n_ranks", n_ranks, lambda name, v: _check.integer(name, v, minimum=minimum))


def bus_factor(collective, n_ranks) -> float:
    """The factor nccl-tests multiplies algorithm bandwidth by to report bus bandwidth.

    All-reduce 2(n−1)/n; reduce-scatter, all-gather and all-to-all (n−1)/n; broadcast and reduce 1. With it, the
    bus bandwidth of a bandwidth-bound ring equals the per-direction bandwidth of its slowest link, whatever n is.
    Source: NVIDIA nccl-tests, PERFORMANCE.md. ``n_ranks`` may be an array.

    >>> bus_factor("all_reduce", 8), bus_factor("all_gather", 8)
    (1.75, 0.875)
    """
    key = _check.choice("collective", collective, BUS_FACTORS)
    return _check.result(BUS_FACTORS[key](_ranks(n_ranks)) + 0.0 * _ranks(n_ranks))


def algorithm_bandwidth(nbytes, seconds):
    """nccl-tests' algorithm bandwidth: ``algbw = M / T`` (bytes/s), M the buffer size per rank.

    >>> algorithm_bandwidth(1e9, 0.004) / 1e9
    250.0
    """
    return _check.result(_check.values("nbytes", nbytes, _check.positive)
                         / _check.values("seconds", seconds, _check.positive))


def bus_bandwidth(algbw, n_ranks, collective="all_reduce"):
    """nccl-tests' bus bandwidth: ``busbw = algbw × bus_factor(collective, n)`` (bytes/s).

    >>> round(bus_bandwidth(200e9, 8) / 1e9)
    350
    """
    return _check.result(_check.values("algbw", algbw, _check.positive) * bus_factor(collective, n_ranks))


def sharp_allreduce_time(nbytes, n_ranks, bandwidth, latency=0.0):
    """All-reduce with in-network reduction (NVLink SHARP, InfiniBand SHARP): ``T = M/B + 2α``.

    Each GPU sends its M bytes once up to the switch, which adds the n contributions, and receives the sum once
    (multicast); sending and receiving overlap on the full-duplex link, so the bandwidth term is M/B instead of the
    ring's 2(n−1)/n · M/B — at most 2(n−1)/n faster (1.75× on 8 GPUs). α is one pass up and one down. Args as
    :func:`chipchain.comms.ring_allreduce_time`; returns seconds (0.0 for n = 1). Sources: Graham et al. (2016),
    "Scalable Hierarchical Aggregation Protocol (SHArP)"; NVIDIA Hopper architecture whitepaper (NVLink SHARP in
    third-generation NVSwitch).

    >>> round(comms.ring_allreduce_time(1e9, 8, 450e9) / sharp_allreduce_time(1e9, 8, 450e9), 2)
    1.75
    """
    m = _check.values("nbytes", nbytes)
    n = _ranks(n_ranks)
    b = _check.values("bandwidth", bandwidth, _check.positive)
    a = _check.values("latency", latency)
    return _check.result(np.where(n > 1, m / b + 2 * a, 0.0))


def ring_tree_crossover(n_ranks, bandwidth, latency):
    """Message size (bytes) above which the ring all-reduce beats the pipelined double binary tree.

    Equating ``2(n−1)/n·M/B + 2(n−1)α`` (ring) with ``2M/B + 2⌈log₂ n⌉α`` (double tree) gives
    ``M* = n·B·α·(n − 1 − ⌈log₂ n⌉)``: below M* the tree's fewer latencies win, above it the ring's smaller bandwidth
    term. 0.0 when n − 1 ≤ ⌈log₂ n⌉ (n ≤ 3: the ring always wins). M* grows like n²: across thousands of GPUs the
    ring is latency-bound for any realistic gradient, which is why NCCL added trees (Jeaugey 2019).

    >>> round(ring_tree_crossover(8, 450e9, 3e-6) / 1e6, 1)          # one DGX H100 node: 43 MB
    43.2
    """
    n = _ranks(n_ranks)
    b = _check.values("bandwidth", bandwidth, _check.positive)
    a = _check.values("latency", latency)
    return _check.result(np.maximum(n * b * a * (n - 1 - np.ceil(np.log2(n))), 0.0))


def moe_dispatch_bytes(tokens, hidden, top_k, ep, dtype="bf16"):
    """Bytes one rank sends to other ranks in one expert-parallel dispatch (the first all-to-all of an MoE layer).

    ``tokens`` T routed on this rank, each to ``top_k`` k experts spread uniformly over ``ep`` ranks; each copy is a
    ``hidden``-wide vector of ``dtype``: ``T·k·h·b·(ep−1)/ep`` (the 1/ep that lands on local experts stays home).
    The combine all-to-all sends the same back; the backward pass repeats both. Source: the expert-parallel
    pattern of GShard (Lepikhin et al. 2021) and DeepSeek-V3 (which dispatches in FP8).

    >>> round(moe_dispatch_bytes(4096, 7168, 8, 64, "fp8") / 1e6)       # DeepSeek-V3's shape, EP 64
    231
    """
    t = _check.values("tokens", tokens, _check.positive)
    h = _check.values("hidden", hidden, _check.positive)
    k = _check.values("top_k", top_k, _check.integer)
    e = _check.values("ep", ep, _check.integer)
    return _check.result(t * k * h * units.bytes_per_element(dtype) * (e - 1) / e)


def cluster_alltoall_time(nbytes, n_ranks, gpus_per_node, intra_bandwidth, inter_bandwidth,
                          intra_latency=0.0, inter_latency=0.0):
    """All-to-all over n ranks on nodes of g GPUs: the in-node and the network shares run at once.

    Each rank splits its M bytes evenly over the n ranks: (g−1)/n·M goes over NVLink, (n−g)/n·M through its own NIC:
    ``T = max((g−1)/n·M/B_intra + (g−1)α_intra, (n−g)/n·M/B_inter + (n−g)α_inter)``. Unlike the ring all-reduce
    there is no neighbour structure to exploit: once the group leaves the node, almost all the traffic crosses the
    slow link. ``gpus_per_node`` is capped at n. Reduces to :func:`chipchain.comms.alltoall_time` inside one node.

    >>> round(cluster_alltoall_time(1e9, 64, 8, 450e9, 50e9) * 1e3, 1)      # 56/64 of 1 GB through 50 GB/s
    17.5
    """
    m = _check.values("nbytes", nbytes)
    n = _ranks(n_ranks)
    g = np.minimum(_check.values("gpus_per_node", gpus_per_node, _check.integer), n)
    b_in = _check.values("intra_bandwidth", intra_bandwidth, _check.positive)
    b_out = _check.values("inter_bandwidth", inter_bandwidth, _check.positive)
    a_in = _check.values("intra_latency", intra_latency)
    a_out = _check.values("inter_latency", inter_latency)
    inside = (g - 1) / n * m / b_in + (g - 1) * a_in
    outside = (n - g) / n * m / b_out + (n - g) * a_out
    return _check.result(np.maximum(inside, outside))


@dataclass(frozen=True)
class Overlap:
    """A bucketed gradient all-reduce beside the backward pass (seconds unless stated)."""

    buckets: int
    bucket_seconds: float       #: one bucket's all-reduce
    comm_seconds: float         #: all buckets, back to back
    exposed_seconds: float      #: communication still running when the backward pass ends
    contention_seconds: float   #: compute slowed by the SMs the communication kernels take
    hidden_fraction: float      #: share of the communication that ran during the backward pass

    @property
    def added_seconds(self) -> float:
        """What the communication adds to the step: exposed time plus the contention cost."""
        return self.exposed_seconds + self.contention_seconds

    def __str__(self):
        return (f"{self.buckets} buckets: {units.fmt_duration(self.comm_seconds)} of all-reduce, "
                f"{fmt_percent(self.hidden_fraction, decimals=0)} hidden, {units.fmt_duration(self.added_seconds)} added to the step")


def bucketed_overlap(nbytes, n_ranks, bandwidth, backward_seconds, buckets, latency=0.0,
                     compute_slowdown=0.0) -> Overlap:
    """Overlap of a gradient all-reduce cut into K buckets with a backward pass of duration T_b (PyTorch DDP).

    Bucket i (i = 1…K) is ready at i·T_b/K and all-reduced in turn on one communication stream, each taking
    ``t = ring_allreduce_time(M/K, n, B, α)``. The queue ends at max over i of (i·T_b/K + (K−i+1)·t), so the time left
    exposed after the backward pass is ``max(t, T_b/K + K·t − T_b)``: the last bucket can never hide, and every
    bucket pays the ring's 2(n−1)α again. While communication runs, its kernels occupy SMs;
    ``compute_slowdown`` s (a fraction) charges s × the overlapped time to the compute (first order). Sources:
    Li et al. (2020), "PyTorch Distributed", §3.2 (buckets, 25 MB default); DeepSeek-V3 §3.2 (20 of 132 SMs
    given to communication).

    >>> print(bucketed_overlap(14e9, 64, 50e9, 0.5, 16, 5e-6))     # 7B model's BF16 gradients, 64 GPUs on NDR
    16 buckets: 561 ms of all-reduce, 84 % hidden, 92.6 ms added to the step
    """
    m = _check.positive("nbytes", nbytes)
    n = _check.integer("n_ranks", n_ranks)
    b = _check.positive("bandwidth", bandwidth)
    t_b = _check.positive("backward_seconds", backward_seconds)
    k = _check.integer("buckets", buckets)
    a = _check.nonnegative("latency", latency)
    s = _check.fraction("compute_slowdown", compute_slowdown, allow_zero=True)
    t = comms.ring_allreduce_time(m / k, n, b, a)
    exposed = max(t, t_b / k + k * t - t_b) if n > 1 else 0.0
    total = k * t
    overlapped = max(total - exposed, 0.0)
    return Overlap(k, t, total, exposed, s * overlapped, overlapped / total if total > 0 else 1.0)


def best_bucket_count(nbytes, n_ranks, bandwidth, backward_seconds, latency=0.0, max_buckets=4096) -> Overlap:
    """The bucket count (1 … ``max_buckets``) that adds least to the step, with its :class:`Overlap`.

    Few buckets leave a large last bucket exposed; many pay the ring's latency once each. Evaluated for every K
    with the closed form of :func:`bucketed_overlap` (vectorised; well under a second for 10⁶ GPUs).

    >>> best_bucket_count(14e9, 64, 50e9, 0.5, 5e-6).buckets
    28
    """
    m = _check.positive("nbytes", nbytes)
    n = _check.integer("n_ranks", n_ranks)
    b = _check.positive("bandwidth", bandwidth)
    t_b = _check.positive("backward_seconds", backward_seconds)
    a = _check.nonnegative("latency", latency)
    k = np.arange(1, _check.integer("max_buckets", max_buckets) + 1, dtype=float)
    t = comms.ring_allreduce_time(m / k, n, b, a)
    exposed = np.maximum(t, t_b / k + k * t - t_b)
    return bucketed_overlap(m, n, b, t_b, int(k[int(np.argmin(exposed))]), a)

