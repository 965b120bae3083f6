"""A ring all-reduce that runs: n simulated ranks exchange real chunks step by step, so the α–β formula of
:func:`chipchain.comms.ring_allreduce_time` can be checked against the bytes actually sent and the sum actually
computed (re-exported by :mod:`chipchain.comms`).

>>> r = simulate_ring_allreduce(np.ones((4, 8)))
>>> r.result.tolist() == [4.0] * 8, r.steps
(True, 6)
"""
from __future__ import annotations

from dataclasses import dataclass

from ._lazy import np

__all__ = ["RingAllreduce", "simulate_ring_allreduce"]


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
