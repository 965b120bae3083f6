"""A ring all-reduce that runs: n simulated ranks exchange real chunks step by step, so the α–β formula of
:func:`chipchain.comms.ring_allreduce_time` can be checked against the bytes actually sent and the sum actually
computed (re-exported by :mod:`chipchain.comms`).

>>> r = simulate_ring_allreduce(np.ones((4, 8)))
>>> r.result.tolist() == [4.0] * 8, r.steps
(True, 6)
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check
from ._lazy import np

__all__ = ["RingAllreduce", "simulate_ring_allreduce", "ring_schedule", "tree_schedule", "CollectiveStep",
           "allreduce_steps"]


def ring_schedule(n_ranks) -> list:
    """The ring all-reduce's 2(n−1) steps as ``(phase, step, sends)``, each send ``(src, dst, chunk)``.

    Reduce-scatter (steps 0 … n−2): rank r sends chunk (r − s) mod n to rank r + 1, which adds it to its copy.
    All-gather (steps n−1 … 2n−3): rank r forwards chunk (r + 1 − s') mod n (s' the all-gather step), which the
    receiver stores. Source: Patarasuk & Yuan (2009).

    >>> [(p, s, sends[0]) for p, s, sends in ring_schedule(3)]
    [('reduce-scatter', 0, (0, 1, 0)), ('reduce-scatter', 1, (0, 1, 2)), ('all-gather', 2, (0, 1, 1)), ('all-gather', 3, (0, 1, 0))]
    """
    n = _check.integer("n_ranks", n_ranks)
    out = [("reduce-scatter", s, tuple((r, (r + 1) % n, (r - s) % n) for r in range(n))) for s in range(n - 1)]
    out += [("all-gather", n - 1 + s, tuple((r, (r + 1) % n, (r + 1 - s) % n) for r in range(n)))
            for s in range(n - 1)]
    return out


def tree_schedule(n_ranks) -> list:
    """The unpipelined binomial-tree all-reduce's 2⌈log₂ n⌉ steps as ``(phase, step, sends)``, each send
    ``(src, dst, None)`` (the whole buffer): reduce up the tree to rank 0 (in level k, every rank r with
    r mod 2^(k+1) = 2^k sends to r − 2^k, which adds), then broadcast down (the reverse). The model of
    :func:`chipchain.comms.tree_allreduce_time`; Thakur, Rabenseifner & Gropp (2005).

    >>> [(p, s, sends) for p, s, sends in tree_schedule(4)]
    [('reduce', 0, ((1, 0, None), (3, 2, None))), ('reduce', 1, ((2, 0, None),)), ('broadcast', 2, ((0, 2, None),)), ('broadcast', 3, ((0, 1, None), (2, 3, None)))]
    """
    n = _check.integer("n_ranks", n_ranks)
    levels = (n - 1).bit_length()                     # ⌈log₂ n⌉
    up = [tuple((r, r - 2 ** k, None) for r in range(n) if r % 2 ** (k + 1) == 2 ** k) for k in range(levels)]
    down = [tuple((dst, src, None) for src, dst, _ in sends) for sends in reversed(up)]
    return ([("reduce", k, sends) for k, sends in enumerate(up)]
            + [("broadcast", levels + k, sends) for k, sends in enumerate(down)])


@dataclass(frozen=True)
class CollectiveStep:
    """One step of :func:`allreduce_steps`: ``phase`` and ``step`` (−1: before the first send); ``sends``
    ``(src, dst, chunk)`` (chunk ``None``: the whole buffer); ``holds[r][c]``: the ranks whose data rank r's copy of
    chunk c sums, after this step; ``sent``: bytes each rank sent in this step; ``total``: bytes each rank has sent
    so far."""

    phase: str
    step: int
    sends: tuple
    holds: tuple
    sent: tuple
    total: tuple


def allreduce_steps(n_ranks, nbytes, algorithm="ring") -> list:
    """Simulate an all-reduce chunk by chunk and return every state, the first before any send.

    Each rank's buffer of ``nbytes`` M is cut into n chunks; rank r's data is the bit 2^r in every chunk, so adding
    two chunks (the reduction) is the union of their contributor sets and the state after each step says exactly
    whose data each copy holds. ``algorithm``: "ring" (:func:`ring_schedule`, each send M/n bytes) or "tree"
    (:func:`tree_schedule`, the whole M). After a ring all-reduce every rank has sent 2(n−1)/n · M
    (:func:`chipchain.comms.allreduce_bytes_per_rank`) and every rank holds every chunk of all n ranks; a tree sends
    the same 2(n−1)·M in all, concentrated on fewer ranks and steps. n from 2 to 62.

    >>> st = allreduce_steps(4, 8e9)
    >>> len(st), st[-1].total, all(len(h) == 4 for row in st[-1].holds for h in row)
    (7, (12000000000.0, 12000000000.0, 12000000000.0, 12000000000.0), True)
    >>> [t / 1e9 for t in allreduce_steps(4, 8e9, "tree")[-1].total]
    [16.0, 8.0, 16.0, 8.0]
    """
    n = _check.integer("n_ranks", n_ranks, minimum=2)
    if n > 62:
        raise ValueError(f"n_ranks must be at most 62 (one bit per rank in an int64), got {n_ranks!r}")
    m = _check.positive("nbytes", nbytes)
    if algorithm not in ("ring", "tree"):
        raise ValueError(f"algorithm must be 'ring' or 'tree', got {algorithm!r}")
    work = np.array([[1 << r] * n for r in range(n)], dtype=np.int64)      # rank × chunk: contributor bits

    def holds():
        return tuple(tuple(tuple(k for k in range(n) if int(v) >> k & 1) for v in row) for row in work)

    total = [0.0] * n
    out = [CollectiveStep("start", -1, (), holds(), (0.0,) * n, tuple(total))]
    schedule = ring_schedule(n) if algorithm == "ring" else tree_schedule(n)
    for phase, step, sends in schedule:
        sent = [0.0] * n
        payloads = [(src, dst, c, (work[src].copy() if c is None else work[src, c])) for src, dst, c in sends]
        for src, dst, c, payload in payloads:
            where = slice(None) if c is None else c
            if phase in ("reduce-scatter", "reduce"):
                work[dst, where] |= payload                    # the sum: the union of contributors
            else:
                work[dst, where] = payload
            sent[src] += m if c is None else m / n
        total = [t + s for t, s in zip(total, sent)]
        out.append(CollectiveStep(phase, step, sends, holds(), tuple(sent), tuple(total)))
    return out


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

    for phase, _, sends in ring_schedule(n):
        messages = [(src, dst, c, work[src, chunk(c)].copy()) for src, dst, c in sends]
        for src, dst, c, payload in messages:
            if phase == "reduce-scatter":
                work[dst, chunk(c)] += payload
            else:
                work[dst, chunk(c)] = payload
            sent[src] += payload.size * item
    if not all(np.array_equal(work[0], work[r]) for r in range(1, n)):   # pragma: no cover - a bug, not an input
        raise RuntimeError("ring all-reduce left ranks with different buffers")
    return RingAllreduce(result=work[0].copy(), outputs=work, bytes_sent=sent, steps=2 * (n - 1))
