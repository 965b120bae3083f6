"""Talking between chips: the α–β cost model, the collectives, a ring all-reduce that runs, and a link catalog.

The α–β (latency–bandwidth, or Hockney) model prices one message of ``M`` bytes over a link as ``α + M/B``: a fixed
start-up cost α (seconds) plus the bytes divided by the link's bandwidth ``B`` (bytes per second). Collectives are
sequences of such messages; their costs below are the standard ones from Thakur, Rabenseifner & Gropp (2005),
"Optimization of collective communication operations in MPICH" (IJHPCA 19(1)), and Patarasuk & Yuan (2009),
"Bandwidth optimal all-reduce algorithms for clusters of workstations" (JPDC 69(2)).

Conventions (the most common source of factor-of-two errors in this field):

* ``bandwidth`` is the **per-direction** bandwidth of each rank's link, in bytes/s. In a ring every rank sends and
  receives at the same time, so a link quoted as "900 GB/s bidirectional" (NVLink 4) gives ``B = 450e9``.
  :class:`Link` carries both numbers, so code says which it uses.
* ``nbytes`` (``M``) is the size of the full buffer each rank contributes (for all-reduce), or the full, gathered
  buffer (for all-gather and reduce-scatter).
* ``latency`` (α) is in seconds per message step.

>>> round(ring_allreduce_time(14e9, 8, 300e9), 4)     # 7B FP16 gradients, 8 GPUs, 300 GB/s per direction
0.0817
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from . import _check, widgets

__all__ = [
    "ring_allreduce_time", "allgather_time", "reduce_scatter_time", "tree_allreduce_time", "alltoall_time",
    "p2p_time", "hierarchical_allreduce_time", "allreduce_bytes_per_rank", "Link", "link", "links", "link_names",
    "dp_scaling_efficiency", "RingAllreduce", "simulate_ring_allreduce", "ALGORITHMS", "cluster_allreduce_time",
    "dp_step_times", "dp_scaling_curve", "plot_allreduce_vs_size", "plot_links", "plot_scaling_efficiency", "allreduce_explorer",
    "scaling_explorer",
]


# --- the α–β model ------------------------------------------------------------------------------------------------

def _common(nbytes, n, bandwidth, latency):
    return (_check.nonnegative("nbytes", nbytes), _check.integer("n", n), _check.positive("bandwidth", bandwidth),
            _check.nonnegative("latency", latency))


def p2p_time(nbytes, bandwidth, latency=0.0) -> float:
    """Time to send one message point to point: ``T = α + M/B``.

    Args: ``nbytes`` M in bytes; ``bandwidth`` B in bytes/s (one direction); ``latency`` α in seconds.
    Returns seconds. Source: Hockney (1994), "The communication challenge for MPP", Parallel Computing 20(3).

    >>> round(p2p_time(1e9, 50e9, latency=5e-6), 6)     # 1 GB over one 400 Gb/s InfiniBand port
    0.020005
    """
    m = _check.nonnegative("nbytes", nbytes)
    b = _check.positive("bandwidth", bandwidth)
    a = _check.nonnegative("latency", latency)
    return a + m / b


def ring_allreduce_time(nbytes, n, bandwidth, latency=0.0) -> float:
    """Ring all-reduce: ``T = 2(n−1)/n · M/B + 2(n−1)·α``.

    A reduce-scatter (n−1 steps, each rank sends M/n bytes per step) followed by an all-gather (n−1 more steps).
    Every rank sends 2(n−1)/n · M bytes in total — the bandwidth-optimal amount (Patarasuk & Yuan 2009).

    Args: ``nbytes`` M, the buffer each rank contributes (bytes); ``n`` ranks; ``bandwidth`` B per direction of each
    rank's link (bytes/s); ``latency`` α per step (s). Returns seconds; 0.0 for ``n = 1``.
    Source: Thakur, Rabenseifner & Gropp (2005); Patarasuk & Yuan (2009).

    >>> round(ring_allreduce_time(14e9, 8, 300e9), 4)     # 14 GB of FP16 gradients
    0.0817
    >>> ring_allreduce_time(1e9, 1, 50e9)
    0.0
    """
    m, n, b, a = _common(nbytes, n, bandwidth, latency)
    if n == 1:
        return 0.0
    return 2 * (n - 1) / n * m / b + 2 * (n - 1) * a


def allgather_time(nbytes, n, bandwidth, latency=0.0) -> float:
    """Ring all-gather: ``T = (n−1)/n · M/B + (n−1)·α``, with M the full, gathered buffer.

    Each rank starts with M/n bytes and ends with all M; it forwards n−1 pieces of M/n bytes.

    Args: ``nbytes`` M (bytes, the gathered size); ``n`` ranks; ``bandwidth`` B per direction (bytes/s);
    ``latency`` α per step (s). Returns seconds; 0.0 for ``n = 1``. Source: Thakur et al. (2005) (ring algorithm).

    >>> round(allgather_time(14e9, 8, 300e9), 5)
    0.04083
    """
    m, n, b, a = _common(nbytes, n, bandwidth, latency)
    if n == 1:
        return 0.0
    return (n - 1) / n * m / b + (n - 1) * a


def reduce_scatter_time(nbytes, n, bandwidth, latency=0.0) -> float:
    """Ring reduce-scatter: ``T = (n−1)/n · M/B + (n−1)·α``, with M the full buffer each rank contributes.

    Each rank ends with the sum of one M/n piece. The same traffic as :func:`allgather_time`, run in reverse, plus
    the additions (free in this model).

    Args and units as :func:`allgather_time`. Source: Thakur et al. (2005) (ring reduce-scatter).

    >>> reduce_scatter_time(8e9, 8, 100e9) == allgather_time(8e9, 8, 100e9)
    True
    """
    return allgather_time(nbytes, n, bandwidth, latency)


def tree_allreduce_time(nbytes, n, bandwidth, latency=0.0) -> float:
    """Binary-tree all-reduce (reduce up a tree, broadcast down it): ``T = 2⌈log₂ n⌉ · (α + M/B)``.

    Each of the ⌈log₂ n⌉ levels passes the whole buffer, once up and once down, so the latency term grows only with
    log n (good for small messages) but the bandwidth term is 2⌈log₂ n⌉ · M/B instead of the ring's ≈ 2M/B (bad
    for large ones). Unpipelined; NCCL's pipelined double binary tree gets close to the ring's bandwidth term.

    Args and units as :func:`ring_allreduce_time`. Returns seconds; 0.0 for ``n = 1``.
    Source: Thakur et al. (2005) (binomial-tree reduce followed by broadcast, ⌈log p⌉(α + nβ) each).

    >>> round(tree_allreduce_time(14e9, 8, 300e9), 3)
    0.28
    >>> tree_allreduce_time(1e3, 1024, 50e9, 5e-6) < ring_allreduce_time(1e3, 1024, 50e9, 5e-6)
    True
    """
    m, n, b, a = _common(nbytes, n, bandwidth, latency)
    if n == 1:
        return 0.0
    depth = math.ceil(math.log2(n))
    return 2 * depth * (a + m / b)


def alltoall_time(nbytes, n, bandwidth, latency=0.0) -> float:
    """All-to-all (pairwise exchange): ``T = (n−1)/n · M/B + (n−1)·α``.

    Each rank holds M bytes split into n pieces of M/n, one for every rank (its own stays home); in n−1 rounds it
    sends one piece to each peer. The pattern of expert parallelism (tokens to experts and back).

    Args: ``nbytes`` M, each rank's send buffer (bytes); ``n`` ranks; ``bandwidth`` B per direction (bytes/s);
    ``latency`` α per round (s). Returns seconds; 0.0 for ``n = 1``. Source: Thakur et al. (2005) (pairwise
    exchange all-to-all for long messages).

    >>> round(alltoall_time(1e9, 8, 50e9, 5e-6), 6)
    0.017535
    """
    m, n, b, a = _common(nbytes, n, bandwidth, latency)
    if n == 1:
        return 0.0
    return (n - 1) / n * m / b + (n - 1) * a


def hierarchical_allreduce_time(nbytes, gpus_per_node, nodes, intra_bandwidth, inter_bandwidth,
                                intra_latency=0.0, inter_latency=0.0) -> float:
    """Two-level all-reduce: reduce-scatter inside each node, all-reduce across nodes, all-gather inside each node.

    ``T = RS(M, g, B_intra, α_intra) + AR_ring(M/g, N, B_inter, α_inter) + AG(M, g, B_intra, α_intra)``

    where g = ``gpus_per_node`` and N = ``nodes``. After the in-node reduce-scatter each GPU owns M/g bytes of
    node-summed gradient; the g GPUs of a node then run g independent ring all-reduces across the N nodes at the same
    time, each through that GPU's own NIC (one NIC per GPU, as in DGX H100), so ``inter_bandwidth`` is the
    per-direction bandwidth of one GPU's NIC. Finally each node all-gathers the result over NVLink.

    Args: ``nbytes`` M (bytes per GPU); ``gpus_per_node`` g ≥ 1; ``nodes`` N ≥ 1; ``intra_bandwidth`` and
    ``inter_bandwidth`` per direction (bytes/s); ``intra_latency``, ``inter_latency`` α per step (s).
    Returns seconds. Source: the two-level scheme of Jia et al. (2018), "Highly scalable deep learning training
    system with mixed-precision" (arXiv:1807.11205); each stage priced with Thakur et al. (2005).

    >>> t = hierarchical_allreduce_time(14e9, 8, 16, 450e9, 50e9)
    >>> round(t, 4)       # 27 ms in the node + 66 ms across 16 nodes + 27 ms in the node
    0.1201
    >>> hierarchical_allreduce_time(1e9, 8, 1, 450e9, 50e9) == ring_allreduce_time(1e9, 8, 450e9)
    True
    """
    m = _check.nonnegative("nbytes", nbytes)
    g = _check.integer("gpus_per_node", gpus_per_node)
    nodes = _check.integer("nodes", nodes)
    b_in = _check.positive("intra_bandwidth", intra_bandwidth)
    b_out = _check.positive("inter_bandwidth", inter_bandwidth)
    a_in = _check.nonnegative("intra_latency", intra_latency)
    a_out = _check.nonnegative("inter_latency", inter_latency)
    return (reduce_scatter_time(m, g, b_in, a_in)
            + ring_allreduce_time(m / g, nodes, b_out, a_out)
            + allgather_time(m, g, b_in, a_in))


def allreduce_bytes_per_rank(nbytes, n) -> float:
    """Bytes each rank sends in a ring all-reduce: ``2(n−1)/n · M``.

    Args: ``nbytes`` M (bytes); ``n`` ranks. Returns bytes. Source: Patarasuk & Yuan (2009), the lower bound the
    ring attains.

    >>> allreduce_bytes_per_rank(14e9, 8) / 1e9
    24.5
    """
    m = _check.nonnegative("nbytes", nbytes)
    n = _check.integer("n", n)
    return 2 * (n - 1) / n * m


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

    >>> dp_scaling_efficiency(1.0, 0.25)
    0.8
    >>> dp_scaling_efficiency(1.0, 0.25, overlap=1.0)
    1.0
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

    >>> import numpy as np
    >>> bufs = np.arange(12.0).reshape(3, 4)
    >>> r = simulate_ring_allreduce(bufs)
    >>> r.result.tolist(), r.bytes_sent.tolist(), r.steps
    ([12.0, 15.0, 18.0, 21.0], [40, 48, 40], 4)
    """
    import numpy as np

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

    steps = 0
    for s in range(n - 1):                      # reduce-scatter
        messages = [(r, (r - s) % n, work[r, chunk((r - s) % n)].copy()) for r in range(n)]
        for r, c, payload in messages:
            work[(r + 1) % n, chunk(c)] += payload
            sent[r] += payload.size * item
        steps += 1
    for s in range(n - 1):                      # all-gather
        messages = [(r, (r + 1 - s) % n, work[r, chunk((r + 1 - s) % n)].copy()) for r in range(n)]
        for r, c, payload in messages:
            work[(r + 1) % n, chunk(c)] = payload
            sent[r] += payload.size * item
        steps += 1
    if not all(np.array_equal(work[0], work[r]) for r in range(1, n)):   # pragma: no cover - a bug, not an input
        raise RuntimeError("ring all-reduce left ranks with different buffers")
    return RingAllreduce(result=work[0].copy(), outputs=work, bytes_sent=sent, steps=steps)


# --- the link catalog ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Link:
    """One kind of link, in SI units: bandwidths in bytes/s (per direction and both directions summed), latency in s.

    ``latency`` is an order-of-magnitude estimate of the per-message cost α (see the row's notes), not a datasheet
    figure.
    """

    name: str
    kind: str
    line_rate: str
    bandwidth_per_direction: float   #: bytes/s, one direction
    bidirectional_bandwidth: float   #: bytes/s, both directions summed (how NVLink and PCIe are marketed)
    latency: float                   #: seconds (α, estimate)
    scope: str
    verdict: str
    source: str
    checked: str
    notes: str
    aliases: tuple = ()


@lru_cache(maxsize=1)
def _rows() -> tuple:
    with resources.files("chipchain").joinpath("data/links.csv").open(encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


def _row_to_link(row: dict) -> Link:
    return Link(
        name=row["name"], kind=row["kind"], line_rate=row["line_rate"],
        bandwidth_per_direction=float(row["bandwidth_per_direction_GBps"]) * 1e9,
        bidirectional_bandwidth=float(row["bidirectional_GBps"]) * 1e9,
        latency=float(row["latency_us"]) * 1e-6, scope=row["scope"], verdict=row["verdict"],
        source=row["source"], checked=row["checked"], notes=row["notes"],
        aliases=tuple(a for a in row["aliases"].split(";") if a),
    )


@lru_cache(maxsize=1)
def _index() -> dict:
    index = {}
    for row in _rows():
        lk = _row_to_link(row)
        for key in (lk.name, *lk.aliases):
            index[_check.key(key)] = lk
    return index


def link_names() -> list[str]:
    """Canonical names of every link in the catalog, in file order.

    >>> link_names()[:3]
    ['NVLink3', 'NVLink4', 'NVLink5']
    """
    return [row["name"] for row in _rows()]


def link(name) -> Link:
    """Look up a link by name or alias, ignoring case, spaces and underscores; a :class:`Link` passes through.

    Unknown names raise ``KeyError`` listing the nearest known names. Source: each row's ``source`` column in
    ``data/links.csv``.

    >>> lk = link("nvlink 4")
    >>> lk.bidirectional_bandwidth / 1e9, lk.bandwidth_per_direction / 1e9
    (900.0, 450.0)
    >>> link("IB-NDR").bandwidth_per_direction * 8 / 1e9     # 400 Gb/s per direction
    400.0
    >>> link("NVLink6")
    Traceback (most recent call last):
    ...
    KeyError: "unknown link 'NVLink6'; nearest known names: NVLink5, NVLink4, NVLink3"
    """
    if isinstance(name, Link):
        return name
    return _check.lookup(_index(), name, "link")


def links():
    """The link catalog as a pandas DataFrame (human units: GB/s, µs), indexed by name.

    >>> df = links()
    >>> float(df.loc["PCIe5-x16", "bidirectional_GBps"])
    128.0
    """
    import pandas as pd

    df = pd.DataFrame(_rows()).set_index("name")
    for c in ("bandwidth_per_direction_GBps", "bidirectional_GBps", "latency_us"):
        df[c] = pd.to_numeric(df[c]).astype(float)
    return df


# --- collectives on a two-level cluster ------------------------------------------------------------------------------

#: all-reduce algorithms :func:`cluster_allreduce_time` knows
ALGORITHMS = ("ring", "tree", "hierarchical")


def cluster_allreduce_time(nbytes, n_gpus, gpus_per_node=8, intra="NVLink4", inter="IB-NDR", algorithm="ring",
                           efficiency=1.0, nics_per_node=None) -> float:
    """All-reduce time of ``nbytes`` on ``n_gpus`` GPUs in nodes of ``gpus_per_node``, by algorithm.

    Links are catalog names (or :class:`Link`); bandwidths are per direction, times ``efficiency`` (the share of the
    nominal figure collectives really reach, 50–70 % per seed 002), latencies the links' α.

    * Inside one node (n ≤ g): every algorithm runs over the intra-node link alone.
    * ``ring`` across nodes: one ring per NIC rail (k rings for k NICs per node, each carrying M/k), the way NCCL
      lays rings on a rail-optimised cluster, so ``B = min(B_intra, k · B_inter)`` and each of the 2(n−1) steps
      pays α_inter.
    * ``tree``: a binary tree inside each node (⌈log₂ g⌉ levels over the intra link) under a binary tree of nodes
      (⌈log₂ N⌉ levels over one NIC), reduce then broadcast: ``2·Σ_levels (α + M/B)``.
    * ``hierarchical``: :func:`hierarchical_allreduce_time`, with each GPU's share of the node's NICs,
      ``k · B_inter / g``, as its inter-node bandwidth.

    Args: ``nbytes`` M (bytes per GPU); ``n_gpus`` ≥ 1, a multiple of ``gpus_per_node`` once above it;
    ``algorithm`` one of :data:`ALGORITHMS`; ``efficiency`` in (0, 1]; ``nics_per_node`` k (default one per GPU,
    as in DGX A100/H100; a cheap cluster may have one per node). Returns seconds. Source: the α–β costs of
    Thakur et al. (2005) with NCCL's multi-ring layout (Jeaugey 2017, "NCCL 2.0", GTC talk).

    >>> round(cluster_allreduce_time(14e9, 8, algorithm="ring"), 4)      # one DGX H100: NVLink 4 only
    0.0545
    >>> round(cluster_allreduce_time(14e9, 1024, algorithm="hierarchical"), 3)
    0.125
    """
    m = _check.nonnegative("nbytes", nbytes)
    n = _check.integer("n_gpus", n_gpus)
    g = _check.integer("gpus_per_node", gpus_per_node)
    algo = _check.choice("algorithm", algorithm, ALGORITHMS)
    eff = _check.fraction("efficiency", efficiency)
    k = g if nics_per_node is None else _check.integer("nics_per_node", nics_per_node)
    li, lo = link(intra), link(inter)
    b_in, b_out = li.bandwidth_per_direction * eff, lo.bandwidth_per_direction * eff
    if n <= g:
        return {"ring": ring_allreduce_time, "tree": tree_allreduce_time,
                "hierarchical": ring_allreduce_time}[algo](m, n, b_in, li.latency)
    if n % g:
        raise ValueError(f"n_gpus must be a multiple of gpus_per_node={g} once it spans several nodes, got {n}")
    nodes = n // g
    if algo == "ring":
        return ring_allreduce_time(m, n, min(b_in, k * b_out), lo.latency)
    if algo == "tree":
        return (tree_allreduce_time(m, g, b_in, li.latency) + tree_allreduce_time(m, nodes, b_out, lo.latency))
    return hierarchical_allreduce_time(m, g, nodes, b_in, k * b_out / g, li.latency, lo.latency)


def dp_step_times(params, n_gpus, global_batch_tokens, peak_flops, mfu=0.4, grad_bytes_per_param=2,
                  gpus_per_node=8, intra="NVLink4", inter="IB-NDR", algorithm="hierarchical", efficiency=1.0,
                  nics_per_node=None):
    """Compute time and gradient all-reduce time of one data-parallel step with a fixed global batch.

    ``T_compute = 6·P·B / (n · peak · MFU)`` (each GPU does 1/n of the 6PB FLOPs of the step) and
    ``T_comm = all-reduce of P · grad_bytes_per_param`` by :func:`cluster_allreduce_time`. With the global batch
    fixed (it is capped by what the optimiser tolerates), adding GPUs shrinks each GPU's work but not its
    gradient: this is why efficiency falls as GPUs are added.

    Args: ``params`` P; ``n_gpus``; ``global_batch_tokens`` B (tokens per step); ``peak_flops`` per GPU (FLOP/s);
    ``mfu`` in (0, 1]; ``grad_bytes_per_param`` (2 for BF16/FP16 gradients); topology as
    :func:`cluster_allreduce_time`. Returns ``(T_compute, T_comm)`` in seconds. Source: 6ND (Kaplan et al. 2020);
    all-reduce as above.

    >>> tc, tm = dp_step_times(7e9, 1024, 4e6, 989.4e12)
    >>> round(tc, 3), round(tm, 3)
    (0.415, 0.125)
    """
    p = _check.positive("params", params)
    n = _check.integer("n_gpus", n_gpus)
    b = _check.positive("global_batch_tokens", global_batch_tokens)
    peak = _check.positive("peak_flops", peak_flops)
    u = _check.fraction("mfu", mfu)
    gb = _check.positive("grad_bytes_per_param", grad_bytes_per_param)
    from .compute import training_flops, training_time

    compute = training_time(training_flops(p, b), n, peak, u)       # 6ND over this step's tokens
    comm = cluster_allreduce_time(p * gb, n, gpus_per_node, intra, inter, algorithm, efficiency, nics_per_node)
    return compute, comm


def dp_scaling_curve(params, gpu_counts, global_batch_tokens, peak_flops, mfu=0.4, overlap=0.0, **topology):
    """Scaling efficiency (speedup / N) of data parallelism over a list of GPU counts, as a DataFrame.

    Columns: ``compute s``, ``comm s``, ``comm / compute``, ``efficiency`` (:func:`dp_scaling_efficiency`) and
    ``speedup`` (relative to one GPU's ideal). Args as :func:`dp_step_times`; ``overlap`` in [0, 1]; other keyword
    arguments go to :func:`dp_step_times` (``intra``, ``inter``, ``algorithm``, ``efficiency``, ...).

    >>> df = dp_scaling_curve(7e9, [8, 4096], 4e6, 989.4e12)
    >>> df["efficiency"].round(2).tolist()
    [1.0, 0.44]
    """
    import pandas as pd

    rows = []
    for n in gpu_counts:
        tc, tm = dp_step_times(params, n, global_batch_tokens, peak_flops, mfu, **topology)
        e = dp_scaling_efficiency(tc, tm, overlap)
        rows.append({"gpus": int(n), "compute s": tc, "comm s": tm, "comm / compute": tm / tc, "efficiency": e,
                     "speedup": e * n})
    if not rows:
        raise ValueError("gpu_counts must list at least one GPU count")
    return pd.DataFrame(rows).set_index("gpus")


def plot_allreduce_vs_size(n_gpus=64, gpus_per_node=8, intra="NVLink4", inter="IB-NDR", sizes=None, ax=None):
    """Log-log plot of all-reduce time against message size for ring, tree and hierarchical. Returns the Axes."""
    import numpy as np

    from . import plotting

    ax = plotting.axes(ax)
    sizes = np.logspace(3, 10.5, 60) if sizes is None else np.asarray(sizes, dtype=float)
    for i, algo in enumerate(ALGORITHMS):
        t = [cluster_allreduce_time(m, n_gpus, gpus_per_node, intra, inter, algo) for m in sizes]
        ax.loglog(sizes, t, label=algo, color=plotting.color(i), lw=2)
    ax.set_xlabel("message size M (bytes per GPU)")
    ax.set_ylabel("all-reduce time (s)")
    ax.set_title(f"{n_gpus} GPUs, {gpus_per_node} per node: {link(intra).name} inside, {link(inter).name} between")
    ax.legend(frameon=False)
    return ax


def plot_scaling_efficiency(params, global_batch_tokens, peak_flops, mfu=0.4, gpu_counts=None,
                            setups=(("NVLink4", "IB-NDR"), ("NVLink3", "IB-HDR"), ("PCIe4-x16", "Ethernet-100G")),
                            overlap=0.0, ax=None):
    """Scaling efficiency against GPU count for several (intra, inter) link pairs. Returns the Axes."""
    from . import plotting

    ax = plotting.axes(ax)
    counts = gpu_counts or [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    for i, (a, b) in enumerate(setups):
        df = dp_scaling_curve(params, counts, global_batch_tokens, peak_flops, mfu, overlap, intra=a, inter=b)
        ax.semilogx(df.index, df["efficiency"], marker="o", label=f"{link(a).name} + {link(b).name}",
                    color=plotting.color(i))
    ax.set_xlabel("GPUs")
    ax.set_ylabel("scaling efficiency (speedup / GPUs)")
    ax.set_ylim(0, 1.05)
    ax.legend(frameon=False)
    return ax


def plot_links(names=("NVLink5", "NVLink4", "NVLink3", "PCIe5-x16", "PCIe4-x16", "IB-NDR", "IB-HDR", "RoCE-400G",
                        "Ethernet-100G", "Ethernet-10G", "Home-100Mbps"), ax=None):
    """Horizontal bars of per-direction bandwidth (log scale) for catalog links, bidirectional marked. Returns Axes."""
    from . import plotting

    ax = plotting.axes(ax)
    lks = [link(n) for n in names]
    ys = range(len(lks))[::-1]
    kinds = list(dict.fromkeys(lk.kind for lk in lks))
    for y, lk in zip(ys, lks):
        ax.barh(y, lk.bandwidth_per_direction / 1e9, color=plotting.color(kinds.index(lk.kind)))
        ax.plot(lk.bidirectional_bandwidth / 1e9, y, "k|", ms=12)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([lk.name for lk in lks])
    ax.set_xscale("log")
    ax.set_xlabel("GB/s per direction (bar); both directions summed (tick)")
    return ax


# --- explorables ----------------------------------------------------------------------------------------------------

TOPOLOGIES = {
    "DGX H100: NVLink 4 + InfiniBand NDR": ("NVLink4", "IB-NDR"),
    "DGX A100: NVLink 3 + InfiniBand HDR": ("NVLink3", "IB-HDR"),
    "PCIe Gen5 cards + RoCE 400G": ("PCIe5-x16", "RoCE-400G"),
    "PCIe Gen4 cards + 100 GbE (TCP)": ("PCIe4-x16", "Ethernet-100G"),
}


@widgets.explorer
def allreduce_explorer():
    """Topology, message size, GPUs and compute per step → all-reduce time by algorithm and its share of a step."""
    from . import plotting, units

    sizes = [1e6, 1e8, 1e9, 14e9, 140e9]

    def render(topology, nbytes, n_gpus, compute):
        intra, inter = topology
        curve = [10 ** (3 + 0.25 * i) for i in range(35)]
        lines, rows = [], []
        for i, algo in enumerate(ALGORITHMS):
            lines.append({"x": curve, "y": [cluster_allreduce_time(m, n_gpus, 8, intra, inter, algo) for m in curve],
                          "label": algo, "color": plotting.color(i)})
            t = cluster_allreduce_time(nbytes, n_gpus, 8, intra, inter, algo)
            rows.append((algo, t))
        best = min(rows, key=lambda r: r[1])
        svg = plotting.svg_chart(lines=lines, vlines=[{"x": nbytes, "label": units.fmt_bytes(nbytes)}],
                                 xlog=True, ylog=True, xlabel="message size (bytes per GPU)",
                                 ylabel="all-reduce time (s)",
                                 alt=f"all-reduce time against message size on {n_gpus} GPUs: ring, tree, "
                                     f"hierarchical; {best[0]} is fastest at {units.fmt_bytes(nbytes)}")
        items = "".join(
            f"<li><b>{a}</b>: {units.fmt_duration(t)} — {units.fmt_percent(t / (compute + t))} of a step with "
            f"{units.fmt_duration(compute)} of compute</li>" for a, t in rows)
        verdict = ("communication above ~20 % of compute: time for bigger local batches, gradient accumulation, "
                   "a faster fabric or another split" if best[1] > 0.2 * compute else
                   "communication below ~20 % of compute: fine for data parallelism")
        return svg + f"<ul>{items}</ul><p>Fastest: <b>{best[0]}</b>; {verdict}.</p>"

    return widgets.explore(render, [
        widgets.Choice("topology", "Topology", TOPOLOGIES),
        widgets.Slider("nbytes", "Message (bytes per GPU)", sizes, value=14e9, fmt=lambda v: str(units.fmt_bytes(v))),
        widgets.Slider("n_gpus", "GPUs", [8, 64, 1024], value=64),
        widgets.Choice("compute", "Compute per step", {"0.25 s": 0.25, "1 s": 1.0}, value=1.0),
    ], title="All-reduce: ring vs tree vs hierarchical")


@widgets.explorer
def scaling_explorer():
    """GPUs → scaling efficiency of data parallelism with a fixed global batch (H100 peak, 40 % MFU)."""
    from . import hardware, plotting, units

    peak = hardware.get("H100-SXM").peak_flops("bf16")
    counts = [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]

    def render(topology, params, batch, overlap):
        intra, inter = topology
        df = dp_scaling_curve(params, counts, batch, peak, 0.4, overlap, intra=intra, inter=inter)
        eff = df["efficiency"]
        svg = plotting.svg_chart(
            lines=[{"x": counts, "y": list(eff), "label": "efficiency"}],
            points=[{"x": n, "y": e} for n, e in eff.items()],
            hlines=[{"y": 0.5, "label": "0.5"}], xlog=True, ylim=(0, 1.05), xlabel="GPUs",
            ylabel="speedup / GPUs",
            alt=f"scaling efficiency from {eff.iloc[0]:.2f} at 8 GPUs to {eff.iloc[-1]:.2f} at 4096 GPUs")
        half = [n for n, e in eff.items() if e < 0.5]
        tail = (f"Efficiency drops below 0.5 at {half[0]:,} GPUs." if half else
                "Efficiency stays above 0.5 up to 4,096 GPUs.")
        shown = df[["compute s", "comm s", "efficiency"]].loc[[8, 64, 512, 4096]]
        return (svg + f"<p>{units.fmt_number(params / 1e9)}B parameters, {units.fmt_number(batch / 1e6)}M tokens per "
                f"step, gradients in BF16, {units.fmt_percent(overlap)} of communication overlapped. {tail}</p>"
                + widgets.table(shown, caption="step times (s) and efficiency"))

    return widgets.explore(render, [
        widgets.Choice("topology", "Topology", TOPOLOGIES),
        widgets.Choice("params", "Model", {"1.3B": 1.3e9, "7B": 7e9, "70B": 70e9}, value=7e9),
        widgets.Choice("batch", "Global batch", {"1M tokens": 1e6, "4M tokens": 4e6, "16M tokens": 16e6}, value=4e6),
        widgets.Slider("overlap", "Overlap", [0.0, 0.5, 0.9], value=0.0, fmt=lambda v: f"{v:.0%}"),
    ], title="Data parallelism: GPUs → scaling efficiency")
