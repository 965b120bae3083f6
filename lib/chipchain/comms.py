"""Talking between chips: the α–β cost model, the collectives, a ring all-reduce that runs, and collectives on a
cluster of nodes.

The α–β (latency–bandwidth, or Hockney) model prices one message of ``M`` bytes over a link as ``α + M/B``: a fixed
start-up cost α (seconds) plus the bytes divided by the link's bandwidth ``B`` (bytes per second). Collectives are
sequences of such messages; their costs below are the standard ones from Thakur, Rabenseifner & Gropp (2005),
"Optimization of collective communication operations in MPICH" (IJHPCA 19(1)), and Patarasuk & Yuan (2009),
"Bandwidth optimal all-reduce algorithms for clusters of workstations" (JPDC 69(2)).

Conventions (the most common source of factor-of-two errors in this field):

* ``bandwidth`` is the **per-direction** bandwidth of each rank's link, in bytes/s. In a ring every rank sends and
  receives at the same time, so a link quoted as "900 GB/s bidirectional" (NVLink 4) gives ``B = 450e9``.
  :class:`chipchain.links.Link` carries both numbers, so code says which it uses.
* ``nbytes`` (``M``) is the size of the full buffer each rank contributes (for all-reduce), or the full, gathered
  buffer (for all-gather and reduce-scatter).
* ``n_ranks`` is the number of ranks taking part in the collective (a group's size, not the cluster's GPU count).
* ``latency`` (α) is in seconds per message step.

The collectives are element-wise (pass arrays to price many sizes at once). A ring all-reduce that runs is
:mod:`chipchain.ringsim` (re-exported here). Links are :mod:`chipchain.links`, nodes
and clusters :mod:`chipchain.systems`, tables and figures :mod:`chipchain.views.comms`.

>>> round(ring_allreduce_time(14e9, 8, 300e9), 4)     # 7B FP16 gradients, 8 GPUs, 300 GB/s per direction
0.0817
>>> ring_allreduce_time(np.array([1e9, 2e9]), 8, 50e9).round(3).tolist()
[0.035, 0.07]
"""
from __future__ import annotations


from ._lazy import np

from . import _check, systems
from .ringsim import RingAllreduce, simulate_ring_allreduce      # re-exported: the ring that runs

__all__ = [
    "ring_allreduce_time", "allgather_time", "reduce_scatter_time", "tree_allreduce_time",
    "double_tree_allreduce_time", "alltoall_time",
    "p2p_time", "hierarchical_allreduce_time", "allreduce_bytes_per_rank", "dp_scaling_efficiency",
    "RingAllreduce", "simulate_ring_allreduce", "ALGORITHMS", "cluster_allreduce_time", "fastest_allreduce",
]


# --- the α–β model ------------------------------------------------------------------------------------------------

def _common(nbytes, n_ranks, bandwidth, latency):
    return (_check.values("nbytes", nbytes), _check.values("n_ranks", n_ranks, _check.integer),
            _check.values("bandwidth", bandwidth, _check.positive), _check.values("latency", latency))


def p2p_time(nbytes, bandwidth, latency=0.0) -> float:
    """Time to send one message point to point: ``T = α + M/B``.

    Args: ``nbytes`` M in bytes; ``bandwidth`` B in bytes/s (one direction); ``latency`` α in seconds.
    Returns seconds. Source: Hockney (1994), "The communication challenge for MPP", Parallel Computing 20(3).

    >>> round(p2p_time(1e9, 50e9, latency=5e-6), 6)     # 1 GB over one 400 Gb/s InfiniBand port
    0.020005
    """
    m = _check.values("nbytes", nbytes)
    b = _check.values("bandwidth", bandwidth, _check.positive)
    a = _check.values("latency", latency)
    return _check.result(a + m / b)


def ring_allreduce_time(nbytes, n_ranks, bandwidth, latency=0.0) -> float:
    """Ring all-reduce: ``T = 2(n−1)/n · M/B + 2(n−1)·α`` for n = ``n_ranks``.

    A reduce-scatter (n−1 steps, each rank sends M/n bytes per step) followed by an all-gather (n−1 more steps).
    Every rank sends 2(n−1)/n · M bytes in total — the bandwidth-optimal amount (Patarasuk & Yuan 2009).

    The factor 2(n−1)/n is NCCL's "bus bandwidth" correction for all-reduce (busBw = algBw · 2(n−1)/n, NCCL
    tests' PERFORMANCE.md): B here is the bus bandwidth, M/T the algorithm bandwidth.

    Args: ``nbytes`` M, the buffer each rank contributes (bytes); ``n_ranks`` n; ``bandwidth`` B per direction of
    each rank's link (bytes/s); ``latency`` α per step (s); each may be an array. Returns seconds; 0.0 for n = 1.
    Source: Thakur, Rabenseifner & Gropp (2005); Patarasuk & Yuan (2009).

    >>> round(ring_allreduce_time(14e9, 8, 300e9), 4)     # 14 GB of FP16 gradients
    0.0817
    >>> ring_allreduce_time(1e9, 1, 50e9)
    0.0
    """
    m, n, b, a = _common(nbytes, n_ranks, bandwidth, latency)
    return _check.result(2 * (n - 1) / n * m / b + 2 * (n - 1) * a)


def allgather_time(nbytes, n_ranks, bandwidth, latency=0.0) -> float:
    """Ring all-gather: ``T = (n−1)/n · M/B + (n−1)·α``, with M the full, gathered buffer.

    Each rank starts with M/n bytes and ends with all M; it forwards n−1 pieces of M/n bytes.

    Args: ``nbytes`` M (bytes, the gathered size); ``n_ranks`` n; ``bandwidth`` B per direction (bytes/s);
    ``latency`` α per step (s); element-wise. Returns seconds; 0.0 for n = 1. Source: Thakur et al. (2005) (ring
    algorithm).

    >>> round(allgather_time(14e9, 8, 300e9), 5)
    0.04083
    """
    m, n, b, a = _common(nbytes, n_ranks, bandwidth, latency)
    return _check.result((n - 1) / n * m / b + (n - 1) * a)


def reduce_scatter_time(nbytes, n_ranks, bandwidth, latency=0.0) -> float:
    """Ring reduce-scatter: ``T = (n−1)/n · M/B + (n−1)·α``, with M the full buffer each rank contributes.

    Each rank ends with the sum of one M/n piece. The same traffic as :func:`allgather_time`, run in reverse, plus
    the additions (free in this model).

    Args and units as :func:`allgather_time`. Source: Thakur et al. (2005) (ring reduce-scatter).

    >>> reduce_scatter_time(8e9, 8, 100e9) == allgather_time(8e9, 8, 100e9)
    True
    """
    return allgather_time(nbytes, n_ranks, bandwidth, latency)


def tree_allreduce_time(nbytes, n_ranks, bandwidth, latency=0.0) -> float:
    """The unpipelined textbook binary tree (reduce up, broadcast down): ``T = 2⌈log₂ n⌉ · (α + M/B)``.

    Each of the ⌈log₂ n⌉ levels passes the whole buffer, once up and once down, so the latency term grows only with
    log n (good for small messages) but the bandwidth term is 2⌈log₂ n⌉ · M/B instead of the ring's ≈ 2M/B (bad
    for large ones). This is not what NCCL runs: its pipelined double binary tree is
    :func:`double_tree_allreduce_time`.

    Args and units as :func:`ring_allreduce_time` (element-wise). Returns seconds; 0.0 for n = 1.
    Source: Thakur et al. (2005) (binomial-tree reduce followed by broadcast, ⌈log p⌉(α + nβ) each).

    >>> round(tree_allreduce_time(14e9, 8, 300e9), 3)
    0.28
    >>> tree_allreduce_time(1e3, 1024, 50e9, 5e-6) < ring_allreduce_time(1e3, 1024, 50e9, 5e-6)
    True
    """
    m, n, b, a = _common(nbytes, n_ranks, bandwidth, latency)
    return _check.result(2 * np.ceil(np.log2(n)) * (a + m / b))               # ⌈log₂ n⌉ levels, up and down


def double_tree_allreduce_time(nbytes, n_ranks, bandwidth, latency=0.0) -> float:
    """Pipelined double binary tree all-reduce (NCCL's "tree"): ``T = 2M/B + 2⌈log₂ n⌉·α``.

    Two binary trees, each carrying half the buffer, are built so that every rank is a leaf in one and an inner node
    in the other; the halves are cut into small chunks that stream up (reduce) and down (broadcast) the trees at
    once. Each rank then receives and sends about M per phase — a bandwidth term 2M/B, within n/(n−1) of the ring's
    2(n−1)/n · M/B — while a chunk crosses only 2⌈log₂ n⌉ levels. Modelled in the limit of fine pipelining (the
    fill time of the last chunk is neglected). Sanders, Speck & Träff (2009), "Two-tree algorithms for full
    bandwidth broadcast, reduction and scan", Parallel Computing 35(12); Jeaugey (2019), "Massively scale your deep
    learning training with NCCL 2.4", NVIDIA technical blog.

    Args and units as :func:`ring_allreduce_time` (element-wise). Returns seconds; 0.0 for n = 1.

    >>> round(double_tree_allreduce_time(14e9, 8, 300e9), 4), round(ring_allreduce_time(14e9, 8, 300e9), 4)
    (0.0933, 0.0817)
    >>> double_tree_allreduce_time(1e6, 1024, 50e9, 5e-6) < ring_allreduce_time(1e6, 1024, 50e9, 5e-6)
    True
    """
    m, n, b, a = _common(nbytes, n_ranks, bandwidth, latency)
    return _check.result(np.where(n > 1, 2 * m / b + 2 * np.ceil(np.log2(n)) * a, 0.0))


def alltoall_time(nbytes, n_ranks, bandwidth, latency=0.0) -> float:
    """All-to-all (pairwise exchange): ``T = (n−1)/n · M/B + (n−1)·α``.

    Each rank holds M bytes split into n pieces of M/n, one for every rank (its own stays home); in n−1 rounds it
    sends one piece to each peer. The pattern of expert parallelism (tokens to experts and back).

    Args: ``nbytes`` M, each rank's send buffer (bytes); ``n_ranks`` n; ``bandwidth`` B per direction (bytes/s);
    ``latency`` α per round (s); element-wise. Returns seconds; 0.0 for n = 1. Source: Thakur et al. (2005)
    (pairwise exchange all-to-all for long messages).

    >>> round(alltoall_time(1e9, 8, 50e9, 5e-6), 6)
    0.017535
    """
    return allgather_time(nbytes, n_ranks, bandwidth, latency)      # the same α–β cost as the ring all-gather


def hierarchical_allreduce_time(nbytes, gpus_per_node, n_nodes, intra_bandwidth, inter_bandwidth,
                                intra_latency=0.0, inter_latency=0.0) -> float:
    """Two-level all-reduce: reduce-scatter inside each node, all-reduce across nodes, all-gather inside each node.

    ``T = RS(M, g, B_intra, α_intra) + AR_ring(M/g, N, B_inter, α_inter) + AG(M, g, B_intra, α_intra)``

    where g = ``gpus_per_node`` and N = ``n_nodes``. After the in-node reduce-scatter each GPU owns M/g bytes of
    node-summed gradient; the g GPUs of a node then run g independent ring all-reduces across the N nodes at the same
    time, each through that GPU's own NIC (one NIC per GPU, as in DGX H100), so ``inter_bandwidth`` is the
    per-direction bandwidth of one GPU's NIC. Finally each node all-gathers the result over NVLink.

    Args: ``nbytes`` M (bytes per GPU); ``gpus_per_node`` g ≥ 1; ``n_nodes`` N ≥ 1; ``intra_bandwidth`` and
    ``inter_bandwidth`` per direction (bytes/s); ``intra_latency``, ``inter_latency`` α per step (s); element-wise.
    Returns seconds. Source: the two-level scheme of Jia et al. (2018), "Highly scalable deep learning training
    system with mixed-precision" (arXiv:1807.11205); each stage priced with Thakur et al. (2005).

    >>> round(hierarchical_allreduce_time(14e9, 8, 16, 450e9, 50e9), 4)       # 27 ms in the node + 66 ms across 16 nodes + 27 ms in the node
    0.1201
    >>> hierarchical_allreduce_time(1e9, 8, 1, 450e9, 50e9) == ring_allreduce_time(1e9, 8, 450e9)
    True
    """
    m = _check.values("nbytes", nbytes)
    g = _check.values("gpus_per_node", gpus_per_node, _check.integer)
    nodes = _check.values("n_nodes", n_nodes, _check.integer)
    b_in = _check.values("intra_bandwidth", intra_bandwidth, _check.positive)
    b_out = _check.values("inter_bandwidth", inter_bandwidth, _check.positive)
    a_in = _check.values("intra_latency", intra_latency)
    a_out = _check.values("inter_latency", inter_latency)
    return _check.result(reduce_scatter_time(m, g, b_in, a_in)
                + ring_allreduce_time(m / g, nodes, b_out, a_out)
                + allgather_time(m, g, b_in, a_in))


def allreduce_bytes_per_rank(nbytes, n_ranks) -> float:
    """Bytes each rank sends in a ring all-reduce: ``2(n−1)/n · M``.

    Args: ``nbytes`` M (bytes); ``n_ranks`` n; element-wise. Returns bytes. Source: Patarasuk & Yuan (2009), the
    lower bound the ring attains.

    >>> allreduce_bytes_per_rank(14e9, 8) / 1e9
    24.5
    """
    m = _check.values("nbytes", nbytes)
    n = _check.values("n_ranks", n_ranks, _check.integer)
    return _check.result(2 * (n - 1) / n * m)


# --- data parallelism -------------------------------------------------------------------------------------------

def exposed_seconds(comm_seconds, overlap=0.0, compute_seconds=None):
    """The part of a communication that computation does not hide, the one definition of exposed communication:
    ``T_exposed = T_comm − min(overlap · T_comm, T_compute)`` (no cap when ``compute_seconds`` is None). ``overlap``
    in [0, 1] is the share that can run during the backward pass (Li et al. 2020); s in and out. Element-wise.

    >>> exposed_seconds(1.0, 0.5), exposed_seconds(1.0, 1.0, compute_seconds=0.25)
    (0.5, 0.75)
    """
    tm = _check.values("comm_seconds", comm_seconds, _check.nonnegative)
    hidden = _check.values("overlap", overlap, _check.probability) * tm
    if compute_seconds is not None:
        cap = _check.values("compute_seconds", compute_seconds, _check.nonnegative)
        hidden = min(hidden, cap) if type(hidden) is float and type(cap) is float else np.minimum(hidden, cap)
    return _check.result(tm - hidden)


def dp_scaling_efficiency(compute_time, comm_time, dp_overlap=0.0) -> float:
    """Scaling efficiency of data parallelism, speedup / N: ``E = T_compute / (T_compute + T_exposed)``.

    With N GPUs, one step takes ``T_compute`` (each GPU's share of the step's arithmetic) plus the part of the
    gradient all-reduce that is not hidden behind it:
    ``T_exposed = T_comm − min(dp_overlap · T_comm, T_compute)`` (:func:`exposed_seconds`). ``dp_overlap`` is the
    fraction of the gradient all-reduce
    that can run concurrently with the backward pass (0: none, as in a naive implementation; PyTorch DDP's bucketed
    all-reduce hides most of it). One GPU alone would need N · T_compute per step, so speedup = N · T_compute /
    T_step and speedup / N = E.

    Args: ``compute_time`` (s, > 0), ``comm_time`` (s, ≥ 0), ``dp_overlap`` in [0, 1]. Returns a fraction in (0, 1].
    Source: Li et al. (2020), "PyTorch Distributed: experiences on accelerating data parallel training", VLDB 13(12)
    (overlapping computation with communication).

    >>> dp_scaling_efficiency(1.0, 0.25), dp_scaling_efficiency(1.0, 0.25, dp_overlap=1.0)
    (0.8, 1.0)
    >>> round(dp_scaling_efficiency(0.5, 1.0, dp_overlap=1.0), 3)     # can hide only 0.5 s of the 1 s
    0.5
    """
    tc = _check.positive("compute_time", compute_time)
    tm = _check.nonnegative("comm_time", comm_time)
    return tc / (tc + exposed_seconds(tm, _check.probability("dp_overlap", dp_overlap), tc))


# --- collectives on a cluster of nodes -------------------------------------------------------------------------------

#: all-reduce algorithms :func:`cluster_allreduce_time` knows ("tree" is the unpipelined textbook tree, "double-tree"
#: NCCL's pipelined double binary tree)
ALGORITHMS = ("ring", "tree", "double-tree", "hierarchical")


def _topology(cluster, n_gpus):
    """(node, GPU count) of a Cluster, or of a node or accelerator and ``n_gpus`` (default: one node)."""
    if isinstance(cluster, systems.Cluster):
        c = systems.cluster(cluster, n_gpus)
        return c.node, c.n_gpus
    node = systems.node(cluster)
    return node, (node.gpus_per_node if n_gpus is None else _check.integer("n_gpus", n_gpus))


def cluster_allreduce_time(nbytes, cluster, n_gpus=None, algorithm="ring", efficiency=1.0) -> float:
    """All-reduce time of ``nbytes`` on ``n_gpus`` GPUs of ``cluster``, by algorithm.

    ``cluster`` is a :class:`~chipchain.systems.Cluster` (its own GPU count), or a node or accelerator name or
    record with ``n_gpus`` (default one node): it supplies g GPUs per node, the intra- and inter-node links and k NICs
    per node. Bandwidths are per direction, times ``efficiency`` (the share of the nominal figure collectives really
    reach, 50–70 % per seed 002); latencies are the links' α.

    * Inside one node (n ≤ g): the algorithm runs over the intra-node link alone (hierarchical = ring).
    * ``ring`` across nodes: one ring per NIC rail (k rings for k NICs per node, each carrying M/k), the way NCCL
      lays rings on a rail-optimised cluster, so ``B = min(B_intra, k · B_inter)``; each of the 2(n−1) steps pays
      α_inter.
    * ``tree`` (unpipelined textbook tree): a binary tree inside each node (⌈log₂ g⌉ levels over the intra link)
      under a binary tree of nodes (⌈log₂ N⌉ levels over one NIC): ``2·Σ_levels (α + M/B)``.
    * ``double-tree`` (NCCL's tree): a chain through the g GPUs of each node under a pipelined double binary tree of
      nodes, one per NIC rail: ``2M / min(B_intra, k · B_inter) + 2(g−1)·α_intra + 2⌈log₂ N⌉·α_inter``.
    * ``hierarchical``: :func:`hierarchical_allreduce_time`, with each GPU's share of the node's NICs,
      ``k · B_inter / g``, as its inter-node bandwidth.

    Args: ``nbytes`` M (bytes per GPU; may be an array); ``n_gpus`` ≥ 1, a multiple of the node's GPUs once above
    it; ``algorithm`` one of :data:`ALGORITHMS`; ``efficiency`` in (0, 1]. Returns seconds. Source: the α–β costs
    of Thakur et al. (2005) with NCCL's multi-ring layout (Jeaugey 2017, "NCCL 2.0", GTC talk) and its
    chain-plus-double-tree layout (Jeaugey 2019).

    >>> round(cluster_allreduce_time(14e9, "DGX-H100", 8, algorithm="ring"), 4)      # one node: NVLink 4 only
    0.0545
    >>> round(cluster_allreduce_time(14e9, systems.cluster("H100", 1024), algorithm="hierarchical"), 3)
    0.125
    """
    m = _check.values("nbytes", nbytes)
    node, n = _topology(cluster, n_gpus)
    g, k, li, lo = node.gpus_per_node, node.nics_per_node, node.intra, node.inter
    algo = _check.choice("algorithm", algorithm, ALGORITHMS)
    eff = _check.fraction("efficiency", efficiency)
    b_in, b_out = li.bandwidth_per_direction * eff, lo.bandwidth_per_direction * eff
    if n <= g:
        one_node = {"tree": tree_allreduce_time, "double-tree": double_tree_allreduce_time}.get(algo,
                                                                                             ring_allreduce_time)
        return one_node(m, n, b_in, li.latency)
    if n % g:
        raise ValueError(f"n_gpus must be a multiple of gpus_per_node={g} once it spans several nodes, got {n}")
    nodes, rail = n // g, min(b_in, k * b_out)
    if algo == "ring":
        return ring_allreduce_time(m, n, rail, lo.latency)
    if algo == "tree":
        return _check.result(tree_allreduce_time(m, g, b_in, li.latency) + tree_allreduce_time(m, nodes, b_out, lo.latency))
    if algo == "double-tree":
        return _check.result(double_tree_allreduce_time(m, nodes, rail, lo.latency) + 2 * (g - 1) * li.latency)
    return hierarchical_allreduce_time(m, g, nodes, b_in, k * b_out / g, li.latency, lo.latency)


def fastest_allreduce(nbytes, cluster, n_gpus=None, efficiency=1.0) -> tuple:
    """The fastest of :data:`ALGORITHMS` for one message, as ``(algorithm, seconds)`` — the choice NCCL's tuner
    makes by message size and GPU count (here from the α–β model, not from measurement).

    Args as :func:`cluster_allreduce_time` (``nbytes`` a scalar). Returns (str, seconds); ties go to the earlier
    entry of :data:`ALGORITHMS`.

    >>> [fastest_allreduce(m, "H100", 8)[0] for m in (1e4, 14e9)]
    ['double-tree', 'ring']
    """
    m = _check.nonnegative("nbytes", nbytes)
    times = [(cluster_allreduce_time(m, cluster, n_gpus, a, efficiency), i, a) for i, a in enumerate(ALGORITHMS)]
    t, _, algo = min(times)
    return algo, t
