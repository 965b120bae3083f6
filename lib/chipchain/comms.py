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
import difflib
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from . import _check

__all__ = [
    "ring_allreduce_time", "allgather_time", "reduce_scatter_time", "tree_allreduce_time", "alltoall_time",
    "p2p_time", "hierarchical_allreduce_time", "allreduce_bytes_per_rank", "Link", "link", "links", "link_names",
    "dp_scaling_efficiency", "RingAllreduce", "simulate_ring_allreduce",
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
    Every rank sends 2(n−1)/n · M bytes in total — the bandwidth-optimal amount (Patarasuk & Yuan 2009, Theorem 1).

    Args: ``nbytes`` M, the buffer each rank contributes (bytes); ``n`` ranks; ``bandwidth`` B per direction of each
    rank's link (bytes/s); ``latency`` α per step (s). Returns seconds; 0.0 for ``n = 1``.
    Source: Thakur, Rabenseifner & Gropp (2005) §4 ; Patarasuk & Yuan (2009) eq. (1).

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
    ``latency`` α per step (s). Returns seconds; 0.0 for ``n = 1``. Source: Thakur et al. (2005) §3 (ring algorithm).

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

    Args and units as :func:`allgather_time`. Source: Thakur et al. (2005) §4 (ring reduce-scatter).

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
    Source: Thakur et al. (2005) §4 (binomial-tree reduce followed by broadcast, ⌈log p⌉(α + nβ) each).

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
    ``latency`` α per round (s). Returns seconds; 0.0 for ``n = 1``. Source: Thakur et al. (2005) §3 (pairwise
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
    system with mixed-precision" (arXiv:1807.11205) §3.3; each stage priced with Thakur et al. (2005).

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

    With N GPUs each doing the same per-GPU work (weak scaling), one step takes ``T_compute`` of arithmetic plus the
    part of the gradient all-reduce that is not hidden behind it:
    ``T_exposed = T_comm − min(overlap · T_comm, T_compute)``. ``overlap`` is the fraction of the communication
    that can run concurrently with the backward pass (0: none, as in a naive implementation; PyTorch DDP's bucketed
    all-reduce hides most of it). Speedup = N · T_compute / T_step, so speedup / N = E.

    Args: ``compute_time`` (s, > 0), ``comm_time`` (s, ≥ 0), ``overlap`` in [0, 1]. Returns a fraction in (0, 1].
    Source: Li et al. (2020), "PyTorch Distributed: experiences on accelerating data parallel training", VLDB 13(12)
    §3.2 (overlapping computation with communication).

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
    Returns a :class:`RingAllreduce`. Source: Patarasuk & Yuan (2009) §3; Baidu's ring all-reduce (Gibiansky 2017).

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


def _key(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().lower())


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
            index[_key(key)] = lk
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
    if not isinstance(name, str):
        raise ValueError(f"name must be a link name (str), got {name!r}")
    index = _index()
    key = _key(name)
    if key in index:
        return index[key]
    canonical = {k: lk.name for k, lk in index.items()}
    near = difflib.get_close_matches(key, list(canonical), n=8, cutoff=0.4)
    hint = ", ".join(list(dict.fromkeys(canonical[k] for k in near))[:4]) if near else ", ".join(link_names())
    raise KeyError(f"unknown link {name!r}; nearest known names: {hint}")


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
