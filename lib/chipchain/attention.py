"""Attention, computed two ways: the standard algorithm and the tiled, fused one (FlashAttention).

Both compute the same thing, ``O = softmax(τ·Q·Kᵀ)·V`` with ``τ = 1/√d`` (Vaswani et al. 2017), row by row:

* :func:`naive_attention` follows Dao et al. (2022), Algorithm 0: it materialises the N×N score matrix ``S``, writes
  it, reads it back to build the N×N probabilities ``P``, and reads ``P`` again to form ``O``.
* :func:`flash_attention` tiles Q into row blocks and K, V into column blocks and keeps only one block of scores
  at a time. The softmax is computed *online* (Milakov and Gimelshein 2018): each row keeps a running maximum ``m``
  and a running sum ``ℓ``; when a new block raises the maximum, the earlier partial sum and partial output are
  rescaled by ``exp(m_old − m_new)``. The result is the same to rounding error. The loop order (Q blocks outside,
  K/V blocks inside) is FlashAttention-2's (Dao 2023).

The IO model of both (HBM accesses, Dao et al. 2022 Theorem 2), the sizes of the score matrix and the running
example live in :mod:`chipchain.attention_io`; tables, figures and the explorer in :mod:`chipchain.views.attention`.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> q, k, v = rng.standard_normal((3, 2, 100, 16))      # 2 heads, N = 100, d = 16
>>> bool(np.abs(flash_attention(q, k, v, block_q=32, block_k=24) - naive_attention(q, k, v)).max() < 1e-12)
True
"""
from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass

from ._lazy import np

from . import _check

__all__ = [
    "IOCounter", "naive_attention", "flash_attention", "SoftmaxStep", "online_softmax_steps", "peak_extra_memory",
    "naive_extra_memory", "flash_extra_memory",
]


@dataclass
class IOCounter:
    """Tally of elements read from and written to "HBM" by an instrumented attention call.

    Pass one as ``counter=`` to :func:`naive_attention` or :func:`flash_attention`; it is updated in place.

    >>> c = IOCounter()
    >>> c.read(10); c.write(4)
    >>> c.total
    14
    """

    reads: int = 0
    writes: int = 0

    def read(self, elements: int) -> None:
        self.reads += int(elements)

    def write(self, elements: int) -> None:
        self.writes += int(elements)

    @property
    def total(self) -> int:
        """reads + writes, in elements."""
        return self.reads + self.writes


# --- input checks -------------------------------------------------------------------------------------------------

def _as_float(name, x):
    try:
        a = np.asarray(x)
    except Exception as exc:  # pragma: no cover - numpy raises many kinds
        raise ValueError(f"{name} must be an array of real numbers, got {type(x).__name__}") from exc
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise ValueError(f"{name} must hold real numbers, got dtype {a.dtype}")
    if a.ndim < 2:
        raise ValueError(f"{name} must have shape (..., N, d) with at least 2 dimensions, got shape {a.shape}")
    if 0 in a.shape:
        raise ValueError(f"{name} must not be empty, got shape {a.shape}")
    return a


def _inputs(q, k, v, scale):
    q, k, v = _as_float("q", q), _as_float("k", k), _as_float("v", v)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same head dimension d, got q {q.shape} and k {k.shape}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of keys, got k {k.shape} and v {v.shape}")
    if not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]):
        raise ValueError(f"q, k and v must have the same leading (batch, head) dimensions, got "
                         f"{q.shape[:-2]}, {k.shape[:-2]} and {v.shape[:-2]}")
    dt = np.result_type(q.dtype, k.dtype, v.dtype, np.float32)
    if dt not in (np.float32, np.float64):
        raise ValueError(f"q, k and v must be float32 or float64 (or integers), got {dt}")
    q, k, v = (a.astype(dt, copy=False) for a in (q, k, v))
    for name, a in (("q", q), ("k", k), ("v", v)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} must hold only finite values (found NaN or infinity)")
    d = q.shape[-1]
    tau = 1.0 / math.sqrt(d) if scale is None else _check.positive("scale", scale)
    return q, k, v, dt.type(tau)


def _check_counter(counter):
    if counter is not None and not isinstance(counter, IOCounter):
        raise ValueError(f"counter must be an IOCounter or None, got {type(counter).__name__}")


def _causal_flag(causal):
    _check.flag("causal", causal)
    return causal


# --- the two algorithms -------------------------------------------------------------------------------------------

def naive_attention(q, k, v, causal=False, scale=None, counter=None):
    """Standard attention, O = softmax(τ·Q·Kᵀ + mask)·V, materialising the N×N matrices S and P.

    ``q``: array (..., N, d); ``k``: (..., N_k, d); ``v``: (..., N_k, d_v); the leading (batch, head) dimensions
    must agree. ``causal``: query i attends to keys j ≤ i (top-left aligned). ``scale`` τ defaults to 1/√d.
    Computed in float64 if any input is float64, else float32. Result: array (..., N, d_v).

    Steps (Dao et al. 2022, Algorithm 0): S = τ·Q·Kᵀ is written to HBM; S is read back and P = softmax(S) written;
    P and V are read and O = P·V written. With ``counter`` the elements read and written are tallied:
    N·d + N_k·d (Q, K) + N·N_k (S written) + 2·N·N_k (S read, P written) + N·N_k + N_k·d_v (P, V read) + N·d_v.

    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]]); v = np.array([[1.0], [3.0]])
    >>> naive_attention(q, q, v, scale=1.0).round(4).ravel().tolist()
    [1.5379, 2.4621]
    >>> naive_attention(q, q, v, causal=True, scale=1.0).round(4).ravel().tolist()
    [1.0, 2.4621]
    """
    q, k, v, tau = _inputs(q, k, v, scale)
    causal = _causal_flag(causal)
    _check_counter(counter)
    n, nk = q.shape[-2], k.shape[-2]
    s = np.matmul(q, np.swapaxes(k, -1, -2))               # S: (..., N, N_k), written to HBM
    s *= tau
    if causal:
        s[..., np.arange(nk)[None, :] > np.arange(n)[:, None]] = -np.inf
    np.subtract(s, s.max(axis=-1, keepdims=True), out=s)    # S read back; max subtracted for safety
    p = np.exp(s)                                            # P: a second (..., N, N_k) array
    p /= p.sum(axis=-1, keepdims=True)
    o = np.matmul(p, v)
    if counter is not None:
        heads = math.prod(q.shape[:-2])
        d, dv = q.shape[-1], v.shape[-1]
        counter.read(heads * (n * d + nk * d))          # Q, K
        counter.write(heads * n * nk)                    # S
        counter.read(heads * n * nk)                     # S
        counter.write(heads * n * nk)                    # P
        counter.read(heads * (n * nk + nk * dv))         # P, V
        counter.write(heads * n * dv)                    # O
    return o


@functools.lru_cache(maxsize=1)
def _openblas_set_threads_local():
    """OpenBLAS's ``openblas_set_num_threads_local`` from the copy NumPy loaded, or None (other BLAS, other OS)."""
    import ctypes
    import glob
    import os

    here = os.path.dirname(np.__file__)
    for path in sorted(glob.glob(os.path.join(here, os.pardir, "numpy.libs", "*openblas*"))
                       + glob.glob(os.path.join(here, ".dylibs", "*openblas*"))):
        try:
            fn = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
        return fn
    return None


@contextlib.contextmanager
def _single_threaded_blas():
    """Run the tile products on one BLAS thread (this thread only; restored afterwards).

    The tiles are small (e.g. 128×64 by 64×128): waking OpenBLAS's worker threads for each costs more than it
    saves, and on a loaded 2-core machine it turned a 0.15 s call into several seconds."""
    fn = _openblas_set_threads_local()
    if fn is None:
        yield
        return
    old = fn(1)
    try:
        yield
    finally:
        fn(old)


def _block(name, value):
    return _check.integer(name, value, minimum=1)


def flash_attention(q, k, v, block_q=128, block_k=128, causal=False, scale=None, counter=None):
    """Tiled attention with the online softmax: the same O as :func:`naive_attention`, one block of scores at a time.

    ``q`` (..., N, d), ``k`` (..., N_k, d), ``v`` (..., N_k, d_v); ``block_q`` B_r and ``block_k`` B_c are the tile
    sizes (rows of Q and of K/V per tile, integers ≥ 1; N need not be a multiple). For each Q block i the running
    maximum m, running sum ℓ and un-normalised output Õ start at (−∞, 0, 0); for each K/V block j::

        S_ij = τ·Q_i·K_jᵀ                 (B_r × B_c, the only score block alive)
        m'   = max(m, rowmax(S_ij))
        P̃_ij = exp(S_ij − m')
        ℓ    = exp(m − m')·ℓ + rowsum(P̃_ij)
        Õ    = exp(m − m')·Õ + P̃_ij·V_j
        m    = m'

    and finally O_i = Õ / ℓ (Dao et al. 2022, Algorithm 1; loop order of Dao 2023, Algorithm 1). With ``causal``
    the K/V blocks entirely above the diagonal are skipped and the others masked (keys j ≤ i). With ``counter``
    the HBM traffic is tallied as a GPU kernel would incur it: each Q block read once, every K/V block it needs
    read once per Q block, each O block written once (in elements; see :func:`flash_hbm_accesses`).

    >>> rng = np.random.default_rng(1)
    >>> q, k, v = rng.standard_normal((3, 37, 8))
    >>> o = flash_attention(q, k, v, block_q=16, block_k=10, causal=True)
    >>> bool(np.abs(o - naive_attention(q, k, v, causal=True)).max() < 1e-12)
    True
    """
    q, k, v, tau = _inputs(q, k, v, scale)
    bq, bk = _block("block_q", block_q), _block("block_k", block_k)
    causal = _causal_flag(causal)
    _check_counter(counter)
    out = np.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    kt = np.swapaxes(k, -1, -2)
    with _single_threaded_blas():
        _flash_loop(q, kt, v, out, tau, bq, bk, causal, counter)
    return out


def _flash_loop(q, kt, v, out, tau, bq, bk, causal, counter, lse=None):
    """The tile loop of :func:`flash_attention` (Q blocks outside, K/V blocks inside), filling ``out`` (and the
    per-row log-sum-exp m + log ℓ into ``lse`` when given, for the backward pass)."""
    n, nk, d, dv = q.shape[-2], kt.shape[-1], q.shape[-1], v.shape[-1]
    lead = q.shape[:-2]
    heads = math.prod(lead)
    for qs in range(0, n, bq):
        qe = min(qs + bq, n)
        qi = q[..., qs:qe, :] * tau
        m = np.full(lead + (qe - qs,), -np.inf, dtype=q.dtype)
        ell = np.zeros(lead + (qe - qs,), dtype=q.dtype)
        acc = np.zeros(lead + (qe - qs, dv), dtype=q.dtype)
        kstop = min(nk, qe) if causal else nk                      # keys j ≤ i < qe
        if counter is not None:
            counter.read(heads * (qe - qs) * d)
        for ks in range(0, kstop, bk):
            ke = min(ks + bk, nk)
            s = np.matmul(qi, kt[..., ks:ke])
            if causal and ke - 1 > qs:                              # the block touches the diagonal
                s[..., np.arange(ks, ke)[None, :] > np.arange(qs, qe)[:, None]] = -np.inf
            m_new = np.maximum(m, s.max(axis=-1))
            base = np.where(np.isneginf(m_new), 0.0, m_new)        # a row with no key yet stays at zero
            s -= base[..., None]
            p = np.exp(s, out=s)
            alpha = np.exp(m - base)
            ell = alpha * ell + p.sum(axis=-1)
            acc *= alpha[..., None]
            acc += np.matmul(p, v[..., ks:ke, :])
            m = m_new
            if counter is not None:
                counter.read(heads * (ke - ks) * (d + dv))
        out[..., qs:qe, :] = acc / ell[..., None]
        if lse is not None:
            lse[..., qs:qe] = m + np.log(ell)
        if counter is not None:
            counter.write(heads * (qe - qs) * dv)


# --- memory -------------------------------------------------------------------------------------------------------

def peak_extra_memory(func, *args, **kwargs) -> int:
    """Peak bytes allocated while ``func(*args, **kwargs)`` runs, measured with :mod:`tracemalloc`.

    NumPy reports its array buffers to tracemalloc, so this counts every array the call creates, its result
    included, above what was allocated before the call. Result in bytes.

    >>> peak_extra_memory(np.zeros, (1000, 1000)) >= 8_000_000
    True
    """
    import tracemalloc

    if not callable(func):
        raise ValueError(f"func must be callable, got {func!r}")
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = func(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
        del result
    finally:
        if started:
            tracemalloc.stop()
    return peak - before


def naive_extra_memory(n, d, heads=1, bytes_per_element=8) -> float:
    """Model of :func:`naive_attention`'s peak extra memory: S and P alive together, plus O:
    heads·(2·N² + N·d)·b bytes — Θ(N²).

    >>> naive_extra_memory(4096, 64) / 1e6
    270.532608
    """
    n, d = _check.integer("n", n), _check.integer("d", d)
    return _check.integer("heads", heads) * (2.0 * n * n + n * d) * _check.positive("bytes_per_element",
                                                                                  bytes_per_element)


def flash_extra_memory(n, d, block_q=128, block_k=128, heads=1, bytes_per_element=8) -> float:
    """Model of :func:`flash_attention`'s peak extra memory: the output O plus one tile's temporaries,
    heads·(N·d + 2·B_r·B_c + 4·B_r·d)·b bytes — Θ(N·d) for fixed tiles. (The temporaries: the score tile and its
    mask; the scaled Q block, the running output, its update and one product.)

    >>> flash_extra_memory(4096, 64) / 1e6
    2.62144
    """
    n, d = _check.integer("n", n), _check.integer("d", d)
    bq, bk = min(_block("block_q", block_q), n), _block("block_k", block_k)
    return (_check.integer("heads", heads) * (n * d + 2.0 * bq * bk + 4.0 * bq * d)
            * _check.positive("bytes_per_element", bytes_per_element))


# --- the online softmax, step by step (for the chapter's worked example) ---------------------------------------------

@dataclass(frozen=True)
class SoftmaxStep:
    """One block of the online softmax over a row: the block's scores, its maximum, the running maximum ``m``, the
    correction exp(m_old − m), the running sum ``l`` and un-normalised output ``o``, and ``o/l`` so far."""

    block: tuple
    block_max: float
    m: float
    correction: float
    l: float
    o: float

    @property
    def output(self) -> float:
        """o / l: the softmax-weighted average of the values seen so far."""
        return self.o / self.l


def online_softmax_steps(scores, values, block=2) -> tuple:
    """The online softmax over one row, ``block`` scores at a time: a tuple of :class:`SoftmaxStep`.

    ``scores``: the row x (numbers); ``values``: one number per score (a d_v = 1 value column). The last step's
    ``output`` equals Σ softmax(x)_j·v_j (Milakov and Gimelshein 2018, Algorithm 3; Dao et al. 2022, Sec. 3.1).

    >>> steps = online_softmax_steps([1, 2, 4, 3], [10, 20, 30, 40], block=2)
    >>> [s.m for s in steps], round(steps[-1].output, 4)
    ([2.0, 4.0], 30.8562)
    """
    x = [_check.number("scores", s, allow_negative=True) for s in scores]
    vals = [_check.number("values", s, allow_negative=True) for s in values]
    if not x:
        raise ValueError("scores must not be empty")
    if len(vals) != len(x):
        raise ValueError(f"values must have one entry per score, got {len(vals)} values for {len(x)} scores")
    b = _block("block", block)
    m, ell, o, steps = -math.inf, 0.0, 0.0, []
    for start in range(0, len(x), b):
        xs, vs = x[start:start + b], vals[start:start + b]
        m_new = max(m, max(xs))
        corr = math.exp(m - m_new)
        ell = corr * ell + sum(math.exp(s - m_new) for s in xs)
        o = corr * o + sum(math.exp(s - m_new) * w for s, w in zip(xs, vs))
        steps.append(SoftmaxStep(tuple(xs), max(xs), m_new, corr, ell, o))
        m = m_new
    return tuple(steps)
