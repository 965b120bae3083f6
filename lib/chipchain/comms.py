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

The collectives are element-wise (pass arrays to price many sizes at once). Links are :mod:`chipchain.links`, nodes
and clusters :mod:`chipchain.systems`, tables and figures :mod:`chipchain.views.comms`.

>>> round(ring_allreduce_time(14e9, 8, 300e9), 4)     # 7B FP16 gradients, 8 GPUs, 300 GB/s per direction
0.0817
>>> ring_allreduce_time(np.array([1e9, 2e9]), 8, 50e9).round(3).tolist()
[0.035, 0.07]
"""
from __future__ import annotations

from dataclasses import dataclass

from ._lazy import np

from . import _check, compute, systems

__all__ = [
    "ring_allreduce_time", "allgather_time", "reduce_scatter_time", "tree_allreduce_time", "alltoall_time",
    "p2p_time", "hierarchical_allreduce_time", "allreduce_bytes_per_rank", "dp_scaling_efficiency",
    "RingAllreduce", "simulate_ring_allreduce", "ALGORITHMS", "cluster_allreduce_time", "DPStep", "dp_step_times",
]


# --- element-wise validation ----------------------------------------------------------------------------------------

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
    """Binary-tree all-reduce (reduce up a tree, broadcast down it): ``T = 2⌈log₂ n⌉ · (α + M/B)``.

    Each of the ⌈log₂ n⌉ levels passes the whole buffer, once up and once down, so the latency term grows only with
    log n (good for small messages) but the bandwidth term is 2⌈log₂ n⌉ · M/B instead of the ring's ≈ 2M/B (bad
    for large ones). Unpipelined; NCCL's pipelined double binary tree gets close to the ring's bandwidth term.

    Args and units as :func:`ring_allreduce_time` (element-wise). Returns seconds; 0.0 for n = 1.
    Source: Thakur et al. (2005) (binomial-tree reduce followed by broadcast, ⌈log p⌉(α + nβ) each).

    >>> round(tree_allreduce_time(14e9, 8, 300e9), 3)
    0.28
    >>> tree_allreduce_time(1e3, 1024, 50e9, 5e-6) < ring_allreduce_time(1e3, 1024, 50e9, 5e-6)
    True
    """
    m, n, b, a = _common(nbytes, n_ranks, bandwidth, latency)
    return _check.result(2 * np.ceil(np.log2(n)) * (a + m / b))               # ⌈log₂ n⌉ levels, up and down


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

def dp_scaling_efficiency(compute_time, comm_time, overlap=0.0) -> float:
    """Scaling efficiency of data parallelism, speedup / N: ``E = T_compute / (T_compute + T_exposed)``.

    With N GPUs, one step takes ``T_compute`` (each GPU's share of the step's arithmetic) plus the part of the
    gradient all-reduce that is not hidden behind it:
    ``T_exposed = T_comm − min(overlap · T_comm, T_compute)``. ``overlap`` is the fraction of the communication
    that can run concurrently with the backward pass (0: none, as in a naive implementation; PyTorch DDP's bucketed
    all-reduce hides most of it). One GPU alone would need N · T_compute per step, so speedup = N · T_compute /
    T_step and speedup / N = E.

    Args: ``compute_time`` (s, > 0), ``comm_time`` (s, ≥ 0), ``overlap`` in [0, 1]. Returns a fraction in (0, 1].
    Source: Li et al. (2020), "PyTorch Distributed: experiences on accelerating data parallel training", VLDB 13(12)
    (overlapping computation with communication).

    >>> dp_scaling_efficiency(1.0, 0.25), dp_scaling_efficiency(1.0, 0.25, overlap=1.0)
    (0.8, 1.0)
    >>> round(dp_scaling_efficiency(0.5, 1.0, overlap=1.0), 3)     # can hide only 0.5 s of the 1 s
    0.5
    """
    tc = _check.positive("compute_time", compute_time)
    tm = _check.nonnegative("comm_time", comm_time)
    ov = _check.probability("overlap", overlap)
    exposed = tm - min(ov * tm, tc)
    return tc / (tc + exposed)


# --- a ring all-reduce that runs ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class RingAllreduce:
    """What :func:`simulate_ring_allreduce` returns.

    ``result``: the reduced array (every rank's copy is checked to be identical); ``outputs``: every rank's final
    buffer, shape (n, L); ``bytes_sent``: bytes each rank sent, shape (n,); ``steps``: communication steps, 2(n−1).
    """

    result: object
    outputs: object
    bytes_sent: object
    steps: int


def simulate_ring_allreduce(buffers) -> RingAllreduce:
    """Run a ring all-reduce on ``n`` simulated ranks, chunk by chunk, counting the bytes each rank sends.

    The buffer is split into n chunks. Reduce-scatter: in step s (0 … n−2) rank r sends chunk (r − s) mod n to rank
    r + 1, which adds it to its own copy; after n − 1 steps rank r owns the full sum of chunk (r + 1) mod n.
    All-gather: in step s rank r forwards chunk (r + 1 − s) mod n, which the receiver stores. All sends of a step
    happen "at once" (messages are copied before anyone updates). The result equals ``numpy.sum(buffers, axis=0)``
    and each rank sends 2(n−1)/n · M bytes when the length divides by n (otherwise chunk sizes differ by one element).

    Args: ``buffers``: a sequence of n ≥ 1 equal-length 1-D numeric arrays (or an (n, L) array), one per rank.
    Returns a :class:`RingAllreduce`. Source: Patarasuk & Yuan (2009); Baidu's ring all-reduce (Gibiansky 2017).

    >>> bufs = np.arange(12.0).reshape(3, 4)
    >>> r = simulate_ring_allreduce(bufs)
    >>> r.result.tolist(), r.bytes_sent.tolist(), r.steps
    ([12.0, 15.0, 18.0, 21.0], [40, 48, 40], 4)
    """
    try:
        data = np.array(buffers)
    except ValueError as exc:
        raise ValueError(f"buffers must be n equal-length 1-D arrays: {exc}") from None
    if data.ndim != 2 or data.shape[0] < 1 or data.shape[1] < 1:
        raise ValueError(f"buffers must be n ≥ 1 non-empty, equal-length 1-D arrays; got shape {data.shape}")
    if not (np.issubdtype(data.dtype, np.number) and not np.issubdtype(data.dtype, np.bool_)):
        raise ValueError(f"buffers must hold numbers, got dtype {data.dtype}")
    if np.issubdtype(data.dtype, np.floating) and not np.all(np.isfinite(data)):
        raise ValueError("buffers must be finite (no NaN or infinity)")
    n, length = data.shape
    work = data.copy()
    sent = np.zeros(n, dtype=np.int64)
    if n == 1:
        return RingAllreduce(result=work[0].copy(), outputs=work, bytes_sent=sent, steps=0)
    bounds = np.linspace(0, length, n + 1).round().astype(int)   # chunk c is work[:, bounds[c]:bounds[c+1]]
    item = work.dtype.itemsize

    def chunk(c):
        return slice(bounds[c], bounds[c + 1])

    for s in range(n - 1):                      # reduce-scatter
        messages = [(r, (r - s) % n, work[r, chunk((r - s) % n)].copy()) for r in range(n)]
        for r, c, payload in messages:
            work[(r + 1) % n, chunk(c)] += payload
            sent[r] += payload.size * item
    for s in range(n - 1):                      # all-gather
        messages = [(r, (r + 1 - s) % n, work[r, chunk((r + 1 - s) % n)].copy()) for r in range(n)]
        for r, c, payload in messages:
            work[(r + 1) % n, chunk(c)] = payload
            sent[r] += payload.size * item
    if not all(np.array_equal(work[0], work[r]) for r in range(1, n)):   # pragma: no cover - a bug, not an input
        raise RuntimeError("ring all-reduce left ranks with different buffers")
    return RingAllreduce(result=work[0].copy(), outputs=work, bytes_sent=sent, steps=2 * (n - 1))


# --- collectives on a cluster of nodes -------------------------------------------------------------------------------

#: all-reduce algorithms :func:`cluster_allreduce_time` knows
ALGORITHMS = ("ring", "tree", "hierarchical")


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

    * Inside one node (n ≤ g): the ring or tree runs over the intra-node link alone.
    * ``ring`` across nodes: one ring per NIC rail (k rings for k NICs per node, each carrying M/k), the way NCCL
      lays rings on a rail-optimised cluster, so ``B = min(B_intra, k · B_inter)`` and each of the 2(n−1) steps
      pays α_inter.
    * ``tree``: a binary tree inside each node (⌈log₂ g⌉ levels over the intra link) under a binary tree of nodes
      (⌈log₂ N⌉ levels over one NIC), reduce then broadcast: ``2·Σ_levels (α + M/B)``.
    * ``hierarchical``: :func:`hierarchical_allreduce_time`, with each GPU's share of the node's NICs,
      ``k · B_inter / g``, as its inter-node bandwidth.

    Args: ``nbytes`` M (bytes per GPU; may be an array); ``n_gpus`` ≥ 1, a multiple of the node's GPUs once above
    it; ``algorithm`` one of :data:`ALGORITHMS`; ``efficiency`` in (0, 1]. Returns seconds. Source: the α–β costs
    of Thakur et al. (2005) with NCCL's multi-ring layout (Jeaugey 2017, "NCCL 2.0", GTC talk).

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
        one_node = tree_allreduce_time if algo == "tree" else ring_allreduce_time
        return one_node(m, n, b_in, li.latency)
    if n % g:
        raise ValueError(f"n_gpus must be a multiple of gpus_per_node={g} once it spans several nodes, got {n}")
    nodes = n // g
    if algo == "ring":
        return ring_allreduce_time(m, n, min(b_in, k * b_out), lo.latency)
    if algo == "tree":
        return _check.result(tree_allreduce_time(m, g, b_in, li.latency) + tree_allreduce_time(m, nodes, b_out, lo.latency))
    return hierarchical_allreduce_time(m, g, nodes, b_in, k * b_out / g, li.latency, lo.latency)


@dataclass(frozen=True)
class DPStep:
    """One data-parallel step: each GPU's share of the compute and the gradient all-reduce, seconds."""

    compute_seconds: float
    comm_seconds: float

    def efficiency(self, overlap=0.0) -> float:
        """Scaling efficiency of this step, :func:`dp_scaling_efficiency` with ``overlap`` in [0, 1]."""
        return dp_scaling_efficiency(self.compute_seconds, self.comm_seconds, overlap)


def dp_step_times(params, batch_tokens, cluster, n_gpus=None, *, peak_flops=None, mfu=0.4,
                  grad_bytes_per_param=2.0, algorithm="hierarchical", efficiency=1.0) -> DPStep:
    """Compute time and gradient all-reduce time of one data-parallel step with a fixed global batch.

    ``T_compute = 6·P·B / (n · peak · MFU)`` (each GPU does 1/n of the 6PB FLOPs of the step) and
    ``T_comm = all-reduce of P · grad_bytes_per_param`` by :func:`cluster_allreduce_time`. With the global batch
    fixed (it is capped by what the optimiser tolerates), adding GPUs shrinks each GPU's work but not its
    gradient: this is why efficiency falls as GPUs are added.

    Args: ``params`` P; ``batch_tokens`` B (tokens per step); ``cluster`` and ``n_gpus`` as
    :func:`cluster_allreduce_time`; ``peak_flops`` per GPU (FLOP/s; default the cluster accelerator's BF16 dense
    peak); ``mfu`` in (0, 1]; ``grad_bytes_per_param`` (2 for BF16/FP16 gradients); ``algorithm`` and
    ``efficiency`` as :func:`cluster_allreduce_time`. Returns a :class:`DPStep` (seconds). Source: 6ND (Kaplan
    et al. 2020); all-reduce as above.

    >>> s = dp_step_times(7e9, 4e6, "H100", 1024)          # H100 BF16 dense peak, 989.4 TFLOP/s
    >>> round(s.compute_seconds, 3), round(s.comm_seconds, 3), round(s.efficiency(), 3)
    (0.415, 0.125, 0.768)
    """
    p = _check.positive("params", params)
    b = _check.positive("batch_tokens", batch_tokens)
    node, n = _topology(cluster, n_gpus)
    if peak_flops is None:
        if node.accelerator is None:
            raise ValueError(f"peak_flops is needed: the {node.name} node names no accelerator")
        peak_flops = node.accelerator.peak_flops("bf16")
    peak = _check.positive("peak_flops", peak_flops)
    u = _check.fraction("mfu", mfu)
    gb = _check.positive("grad_bytes_per_param", grad_bytes_per_param)
    step = compute.training_time(compute.training_flops(p, b), n, peak, u)       # 6ND over this step's tokens
    return DPStep(step, cluster_allreduce_time(p * gb, node, n, algorithm, efficiency))
