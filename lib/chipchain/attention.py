"""Attention, computed two ways: the standard algorithm and the tiled, fused one (FlashAttention).

Both compute the same thing, ``O = softmax(τ·Q·Kᵀ)·V`` with ``τ = 1/√d`` (Vaswani et al. 2017), row by row:

* :func:`naive_attention` follows Dao et al. (2022), Algorithm 0: it materialises the N×N score matrix ``S``, writes
  it, reads it back to build the N×N probabilities ``P``, and reads ``P`` again to form ``O``.
* :func:`flash_attention` tiles Q into row blocks and K, V into column blocks and keeps only one block of scores
  at a time. The softmax is computed *online* (Milakov and Gimelshein 2018): each row keeps a running maximum ``m``
  and a running sum ``ℓ``; when a new block raises the maximum, the earlier partial sum and partial output are
  rescaled by ``exp(m_old − m_new)``. The result is the same to rounding error. The loop order (Q blocks outside,
  K/V blocks inside) is FlashAttention-2's (Dao 2023).

The IO model counts **elements** moved between "HBM" (the full arrays) and an "SRAM" that holds ``sram`` elements
(Dao et al. count the same way; multiply by the bytes per element for bytes). Theorem 2 of Dao et al. (2022):
standard attention needs Θ(N·d + N²) HBM accesses, FlashAttention Θ(N²·d²/M) for d ≤ M ≤ N·d.

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

import numpy as np

from . import _check, widgets

__all__ = [
    "IOCounter", "naive_attention", "flash_attention", "block_sizes", "standard_hbm_accesses",
    "flash_hbm_accesses", "theorem2_standard", "theorem2_flash", "score_matrix_bytes", "score_memory_table",
    "attention_activation_bytes", "peak_extra_memory", "naive_extra_memory", "flash_extra_memory",
    "online_softmax_trace", "traffic_table", "plot_hbm_traffic", "plot_peak_memory", "traffic_explorer",
    "AttentionStep", "running_example", "SRAM_PER_SM",
]

#: on-chip SRAM (shared memory / L1) per streaming multiprocessor, bytes. A100: 192 KB (NVIDIA's KB = 1024
#: bytes) of combined L1/shared memory per SM, the figure Dao et al. (2022, Sec. 2.1) use; H100: 228 KB of shared
#: memory per SM (NVIDIA Hopper architecture whitepaper).
SRAM_PER_SM = {"A100": 192 * 1024, "H100": 228 * 1024}


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


def _flash_loop(q, kt, v, out, tau, bq, bk, causal, counter):
    """The tile loop of :func:`flash_attention` (Q blocks outside, K/V blocks inside), filling ``out``."""
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
        if counter is not None:
            counter.write(heads * (qe - qs) * dv)


# --- the IO model -------------------------------------------------------------------------------------------------

def block_sizes(d, sram) -> tuple:
    """Tile sizes (B_r, B_c) that fit an SRAM of ``sram`` elements for head dimension ``d``.

    B_c = min(d, ⌊M/(4d)⌋) rows of K and V; then B_r, the largest integer with
    2·B_r·d (Q_i, Õ_i) + 2·B_c·d (K_j, V_j) + B_r·B_c (S_ij) + 2·B_r (m, ℓ) ≤ M.
    This is Dao et al. (2022) Algorithm 1's choice (B_c = ⌈M/4d⌉, B_r = min(B_c, d)) with the roles of the
    two loops swapped, as in FlashAttention-2, and the budget made exact. Raises ValueError if even one row
    of each tile does not fit (M < 4d + 3).

    >>> block_sizes(64, 98304)          # 192 KiB of fp16 elements, d = 64
    (464, 64)
    """
    d = _check.integer("d", d)
    m = _check.integer("sram", sram)
    bc = min(d, m // (4 * d))
    br = (m - 2 * bc * d) // (2 * d + bc + 2) if bc >= 1 else 0
    if br < 1:
        raise ValueError(f"sram must hold at least one row of Q, K, V and O (4·d + 3 = {4 * d + 3} elements "
                         f"for d = {d}), got {sram!r}")
    return br, bc


def _loaded_keys(n, nk, bq, bk, causal):
    """Σ over Q blocks of the number of keys in the K/V blocks that Q block loads."""
    tr = -(-n // bq)
    if not causal:
        return tr * nk
    qe = np.minimum(np.arange(1, tr + 1, dtype=np.int64) * bq, n)
    kstop = np.minimum(qe, nk)
    return int(np.minimum(-(-kstop // bk) * bk, nk).sum())


def flash_hbm_accesses(n, d, sram=None, block_q=None, block_k=None, causal=False, n_k=None, d_v=None) -> int:
    """HBM accesses (elements) of :func:`flash_attention` for one head, counted block by block.

    A = N·d (read Q) + Σ_i keys(i)·(d + d_v) (read K_j, V_j for every block j that Q block i needs) + N·d_v
    (write O). Without a mask keys(i) = N_k for each of the ⌈N/B_r⌉ Q blocks. Give either ``sram`` (elements;
    the tiles come from :func:`block_sizes`) or both ``block_q`` and ``block_k``. Equals the tally of an
    instrumented run (``flash_attention(..., counter=IOCounter())``) for one head.
    Source: the access pattern of Dao et al. (2022), Algorithm 1 / Theorem 2, in FlashAttention-2's loop order.

    >>> flash_hbm_accesses(1024, 64, block_q=256, block_k=64)     # 64K + 4·1024·128 + 64K
    655360
    """
    n = _check.integer("n", n)
    d = _check.integer("d", d)
    nk = n if n_k is None else _check.integer("n_k", n_k)
    dv = d if d_v is None else _check.integer("d_v", d_v)
    causal = _causal_flag(causal)
    if sram is not None:
        if block_q is not None or block_k is not None:
            raise ValueError("give either sram or block_q and block_k, not both")
        bq, bk = block_sizes(d, sram)
    elif block_q is None or block_k is None:
        raise ValueError("give sram, or both block_q and block_k")
    else:
        bq, bk = _block("block_q", block_q), _block("block_k", block_k)
    return n * d + _loaded_keys(n, nk, bq, bk, causal) * (d + dv) + n * dv


def standard_hbm_accesses(n, d, sram=None) -> int:
    """HBM accesses (elements) of standard attention (Algorithm 0) for one head, with tiled matrix products.

    Three kernels, each tiled to fit ``sram`` elements with the tiles of :func:`block_sizes` (T_r = ⌈N/B_r⌉):
    S = τ·Q·Kᵀ reads Q once and K once per row block and writes S: N·d + T_r·N·d + N²;
    softmax reads S (once if a row of N scores fits in SRAM, else twice with the online normaliser of Milakov
    and Gimelshein 2018) and writes P: (1 or 2)·N² + N²; O = P·V reads P, V once per row block, writes O:
    N² + T_r·N·d + N·d. With ``sram=None`` (unlimited) T_r = 1 and the count equals the tally of
    :func:`naive_attention`: 4·N² + 4·N·d. Theorem 2 of Dao et al. (2022): Θ(N·d + N²).

    >>> standard_hbm_accesses(1024, 64)
    4456448
    """
    n = _check.integer("n", n)
    d = _check.integer("d", d)
    if sram is None:
        tr, passes = 1, 1
    else:
        br, _ = block_sizes(d, sram)
        tr, passes = -(-n // br), (1 if n <= sram else 2)
    return (n * d + tr * n * d + n * n) + (passes * n * n + n * n) + (n * n + tr * n * d + n * d)


def theorem2_standard(n, d) -> float:
    """The order of standard attention's HBM accesses in Dao et al. (2022), Theorem 2: N·d + N² (elements).

    >>> theorem2_standard(1024, 64)
    1114112.0
    """
    n, d = _check.positive("n", n), _check.positive("d", d)
    return n * d + n * n


def theorem2_flash(n, d, sram) -> float:
    """The order of FlashAttention's HBM accesses in Dao et al. (2022), Theorem 2: N²·d²/M (elements),
    valid for d ≤ M ≤ N·d (``sram`` M in elements).

    >>> theorem2_flash(1024, 64, 98304)
    43690.666666666664
    """
    n, d, m = _check.positive("n", n), _check.positive("d", d), _check.positive("sram", sram)
    return n * n * d * d / m


# --- memory -------------------------------------------------------------------------------------------------------

def score_matrix_bytes(seq, heads, batch=1, bytes_per_element=2) -> float:
    """Bytes of one layer's attention score matrix S: B·a·N²·b (one N×N matrix per head and sequence).

    ``seq`` N tokens, ``heads`` a, ``batch`` B sequences, ``bytes_per_element`` b (2 for fp16/bf16).
    GPT-3 175B (96 heads, Brown et al. 2020) at 2,048 tokens in bf16:

    >>> score_matrix_bytes(2048, 96) / 1e9
    0.805306368
    """
    n = _check.integer("seq", seq)
    return (_check.integer("batch", batch) * _check.integer("heads", heads) * n * n
            * _check.positive("bytes_per_element", bytes_per_element))


def attention_activation_bytes(seq, heads, batch=1, flash=False) -> float:
    """Bytes one layer's attention core keeps for the backward pass, beyond Q, K, V and O.

    Standard (Korthikanti et al. 2022, Sec. 4.1, 16-bit activations): softmax output 2·a·s²·b, dropout mask
    a·s²·b, dropout output 2·a·s²·b → 5·a·s²·b bytes. FlashAttention keeps only the softmax statistics, one fp32
    log-sum-exp per row (Dao et al. 2022, Sec. 3.1; FlashAttention-2 stores L = m + log ℓ): 4·a·s·b bytes; the
    N×N matrices are recomputed in the backward pass.

    >>> attention_activation_bytes(2048, 96) / 1e9, attention_activation_bytes(2048, 96, flash=True) / 1e6
    (2.01326592, 0.786432)
    """
    s = _check.integer("seq", seq)
    a = _check.integer("heads", heads)
    b = _check.integer("batch", batch)
    _check.flag("flash", flash)
    return 4.0 * a * s * b if flash else 5.0 * a * s * s * b


def score_memory_table(seqs=(2048, 8192, 32768, 131072), heads=None, bytes_per_element=2):
    """One layer's N×N score matrix S (all heads, one sequence) at each sequence length, as a pandas DataFrame of
    bytes: rows are sequence lengths, columns the models in ``heads`` (name → attention heads).

    Default heads: Llama 3 8B 32, GPT-3 175B 96, Llama 3 405B 128 (Dubey et al. 2024, Table 3; Brown et al. 2020,
    Table 2.1). Each entry is :func:`score_matrix_bytes`; ``bytes_per_element`` 2 for bf16.

    >>> float(score_memory_table([2048], {"GPT-3 175B": 96}).iloc[0, 0]) / 1e6
    805.306368
    """
    import pandas as pd

    if heads is None:
        heads = {"Llama 3 8B (32 heads)": 32, "GPT-3 175B (96 heads)": 96, "Llama 3 405B (128 heads)": 128}
    if not isinstance(heads, dict) or not heads:
        raise ValueError(f"heads must be a non-empty mapping of model name to head count, got {heads!r}")
    rows = {n: {name: score_matrix_bytes(n, a, 1, bytes_per_element) for name, a in heads.items()} for n in seqs}
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "sequence length N"
    return out


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


# --- for the chapter ----------------------------------------------------------------------------------------------

def online_softmax_trace(scores, values, block=2):
    """Step-by-step table of the online softmax over one row, ``block`` scores at a time.

    ``scores``: the row x (numbers); ``values``: one number per score (a d_v = 1 value column). Returns a pandas
    DataFrame, one row per block: the block's scores, its maximum, the running maximum m, the correction
    exp(m_old − m_new), the running sum ℓ and un-normalised output õ, and õ/ℓ. The last row's õ/ℓ equals
    Σ softmax(x)_j·v_j (Milakov and Gimelshein 2018, Algorithm 3; Dao et al. 2022, Sec. 3.1).

    >>> t = online_softmax_trace([1, 2, 4, 3], [10, 20, 30, 40], block=2)
    >>> round(float(t["o/l"].iloc[-1]), 4)
    30.8562
    """
    import pandas as pd

    x = [_check.number("scores", s, allow_negative=True) for s in scores]
    vals = [_check.number("values", s, allow_negative=True) for s in values]
    if not x:
        raise ValueError("scores must not be empty")
    if len(vals) != len(x):
        raise ValueError(f"values must have one entry per score, got {len(vals)} values for {len(x)} scores")
    b = _block("block", block)
    m, ell, o, rows = -math.inf, 0.0, 0.0, []
    for start in range(0, len(x), b):
        xs, vs = x[start:start + b], vals[start:start + b]
        m_new = max(m, max(xs))
        corr = math.exp(m - m_new)
        ell = corr * ell + sum(math.exp(s - m_new) for s in xs)
        o = corr * o + sum(math.exp(s - m_new) * w for s, w in zip(xs, vs))
        rows.append({"block": ", ".join(f"{s:g}" for s in xs), "block max": max(xs), "m": m_new,
                     "exp(m_old - m)": corr, "l": ell, "o": o, "o/l": o / ell})
        m = m_new
    return pd.DataFrame(rows)


def traffic_table(ns, d=64, sram=SRAM_PER_SM["A100"] // 2, bytes_per_element=2):
    """HBM traffic per head of both algorithms at each sequence length, counted and modelled, in bytes.

    ``ns``: sequence lengths; ``d`` head dimension; ``sram`` in elements (default: 192 KiB of 2-byte elements);
    ``bytes_per_element`` converts elements to bytes. Columns: N, standard and flash counted
    (:func:`standard_hbm_accesses`, :func:`flash_hbm_accesses`), Theorem 2's orders (:func:`theorem2_standard`,
    :func:`theorem2_flash`, constant 1), and the counted ratio.

    >>> traffic_table([1024]).round(1).iloc[0].tolist()[:3]
    [1024.0, 9437184.0, 1048576.0]
    """
    import pandas as pd

    b = _check.positive("bytes_per_element", bytes_per_element)
    rows = []
    for n in ns:
        std, fl = standard_hbm_accesses(n, d, sram), flash_hbm_accesses(n, d, sram)
        rows.append({"N": n, "standard (counted)": std * b, "flash (counted)": fl * b,
                     "standard (Theorem 2 order)": theorem2_standard(n, d) * b,
                     "flash (Theorem 2 order)": theorem2_flash(n, d, sram) * b, "ratio": std / fl})
    return pd.DataFrame(rows)


def plot_hbm_traffic(ns, d=64, sram=SRAM_PER_SM["A100"] // 2, bytes_per_element=2, ax=None):
    """Log–log plot of HBM traffic per head vs N: counted (solid) and Theorem 2's order (dashed) for both
    algorithms, with a dotted line at N = M/d, the lower end of the theorem's range. Returns the matplotlib Axes."""
    from . import plotting

    t = traffic_table(ns, d, sram, bytes_per_element)
    ax = plotting.axes(ax)
    for i, name in enumerate(("standard", "flash")):
        label = "standard attention" if name == "standard" else "FlashAttention"
        ax.loglog(t["N"], t[f"{name} (counted)"], "-o", color=plotting.color(i), label=f"{label}, counted")
        ax.loglog(t["N"], t[f"{name} (Theorem 2 order)"], "--", color=plotting.color(i),
                  label=f"{label}, Theorem 2 order")
    if min(ns) < sram / d < max(ns):
        ax.axvline(sram / d, color="#555", linestyle=":", linewidth=1)
        ax.annotate("N = M/d", (sram / d, t["standard (counted)"].max()), xytext=(-4, 0),
                    textcoords="offset points", ha="right", va="top", fontsize=8, color="#555")
    ax.set_xlabel("sequence length N (tokens)")
    ax.set_ylabel("HBM traffic per head (bytes)")
    ax.set_title(f"d = {d}, SRAM = {sram * bytes_per_element / 1024:g} KiB")
    ax.legend(fontsize=8)
    return ax


def plot_peak_memory(measured, d=64, block_q=128, block_k=128, bytes_per_element=8, ax=None):
    """Peak extra memory vs N: measured points (a DataFrame with columns N, naive, flash in bytes, e.g. from
    :func:`peak_extra_memory`) and the models :func:`naive_extra_memory` and :func:`flash_extra_memory` (lines).
    Returns the matplotlib Axes."""
    from . import plotting

    ax = plotting.axes(ax)
    ns = list(measured["N"])
    ax.loglog(ns, measured["naive"], "o", color=plotting.color(0), label="standard, measured")
    ax.loglog(ns, [naive_extra_memory(n, d, bytes_per_element=bytes_per_element) for n in ns], "-",
              color=plotting.color(0), label="standard, model 2N² + Nd")
    ax.loglog(ns, measured["flash"], "s", color=plotting.color(1), label="flash, measured")
    ax.loglog(ns, [flash_extra_memory(n, d, block_q, block_k, bytes_per_element=bytes_per_element) for n in ns],
              "-", color=plotting.color(1), label="flash, model Nd + tiles")
    ax.set_xlabel("sequence length N (tokens)")
    ax.set_ylabel("peak extra memory (bytes)")
    ax.legend(fontsize=8)
    return ax


_EX_NS = (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
_EX_SRAM = {"48 KiB": 48 * 1024, "100 KB (Dao et al.'s 'around 100KB')": 100_000,
            "192 KiB (A100 SM)": SRAM_PER_SM["A100"], "228 KiB (H100 SM)": SRAM_PER_SM["H100"]}


def _sram_label(nbytes):
    from . import units

    return f"{nbytes // 1024} KiB" if nbytes % 1024 == 0 else str(units.fmt_bytes(nbytes))


def _traffic_view(n, d, sram_bytes, bytes_per_element=2):
    from . import plotting, units

    m = int(sram_bytes // bytes_per_element)
    block_sizes(d, m)                                         # raises for an SRAM too small for d
    std = [standard_hbm_accesses(x, d, m) * bytes_per_element for x in _EX_NS]
    fl = [flash_hbm_accesses(x, d, m) * bytes_per_element for x in _EX_NS]
    th_s = [theorem2_standard(x, d) * bytes_per_element for x in _EX_NS]
    th_f = [theorem2_flash(x, d, m) * bytes_per_element for x in _EX_NS]
    i = _EX_NS.index(n)
    br, bc = block_sizes(d, m)
    chart = plotting.svg_chart(
        lines=[{"x": _EX_NS, "y": std, "label": "standard, counted"},
               {"x": _EX_NS, "y": fl, "label": "FlashAttention, counted"},
               {"x": _EX_NS, "y": th_s, "label": "N·d + N² (Theorem 2)", "dash": True, "color": plotting.color(0)},
               {"x": _EX_NS, "y": th_f, "label": "N²d²/M (Theorem 2)", "dash": True, "color": plotting.color(1)}],
        points=[{"x": n, "y": std[i], "color": plotting.color(0)}, {"x": n, "y": fl[i], "color": plotting.color(1)}],
        xlog=True, ylog=True, xlabel="sequence length N", ylabel="HBM traffic per head (bytes, BF16)",
        alt=f"HBM traffic per head against sequence length for d = {d} and SRAM {_sram_label(sram_bytes)}: "
            f"at N = {n}, standard attention moves {units.fmt_bytes(std[i])}, FlashAttention "
            f"{units.fmt_bytes(fl[i])}")
    regime = ("inside Theorem 2's range d ≤ M ≤ N·d" if d <= m <= n * d else
              "outside Theorem 2's range: the SRAM holds all of K and V (M > N·d), so both read them about once")
    return (f"<p>N = {n:,}, d = {d}, SRAM M = {m:,} two-byte (BF16) elements ({regime}); tiles B_r = {br}, B_c = {bc}.<br>"
            f"Standard attention moves <strong>{units.fmt_bytes(std[i])}</strong> per head, FlashAttention "
            f"<strong>{units.fmt_bytes(fl[i])}</strong>: {std[i] / fl[i]:.1f}× less. "
            f"Score matrix per head: {units.fmt_bytes(n * n * bytes_per_element)} (standard) vs "
            f"none kept (FlashAttention keeps one {br}×{bc} tile).</p>" + chart)


@widgets.explorer
def traffic_explorer():
    """Explorable: counted HBM traffic of standard attention and FlashAttention against N, head dimension and
    SRAM size (BF16 elements, one head), with Theorem 2's orders (Dao et al. 2022)."""
    from . import units

    return widgets.explore(_traffic_view, [
        widgets.Slider("n", "sequence length N", list(_EX_NS), value=2048, fmt=lambda x: f"{x:,}"),
        widgets.Slider("d", "head dimension d", [32, 64, 128, 256], value=64),
        widgets.Choice("sram_bytes", "SRAM per SM", _EX_SRAM, value=SRAM_PER_SM["A100"]),
    ], title="HBM traffic of attention: standard vs FlashAttention")


@dataclass(frozen=True)
class AttentionStep:
    """Attention-score memory of the running example, with and without FlashAttention (bytes)."""

    scores_per_layer: float          #: one layer's S for all heads, one sequence (bf16)
    saved_per_layer: float           #: kept for backward per layer, standard (5·a·s²)
    saved_per_layer_flash: float     #: kept for backward per layer, FlashAttention (fp32 log-sum-exp per row)
    saved_model: float               #: all layers, standard
    saved_model_flash: float         #: all layers, FlashAttention
    saved_per_gpu: float             #: standard, on one GPU of the tp × pp plan (heads / tp, layers / pp)
    saved_per_gpu_flash: float


def running_example(walkthrough=None, batch=1) -> AttentionStep:
    """The running example's attention memory for ``batch`` sequences: GPT-3 175B shape (96 layers, 96 heads)
    at sequence length 2,048 from :class:`chipchain.walkthrough.Walkthrough`, per GPU under its 8 × 16 plan.

    >>> r = running_example()
    >>> round(r.saved_model / 1e9), round(r.saved_model_flash / 1e6, 1)
    (193, 75.5)
    """
    from .walkthrough import Walkthrough

    w = Walkthrough() if walkthrough is None else walkthrough
    if not isinstance(w, Walkthrough):
        raise ValueError(f"walkthrough must be a Walkthrough or None, got {type(w).__name__}")
    b = _check.integer("batch", batch)
    per_layer = attention_activation_bytes(w.seq, w.heads, b)
    per_layer_f = attention_activation_bytes(w.seq, w.heads, b, flash=True)
    share = (1 / w.tp) * (math.ceil(w.layers / w.pp))
    return AttentionStep(score_matrix_bytes(w.seq, w.heads, b), per_layer, per_layer_f, per_layer * w.layers,
                         per_layer_f * w.layers, per_layer * share, per_layer_f * share)
