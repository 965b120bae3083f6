"""FlashAttention's backward pass: gradients of attention recomputed tile by tile from the saved log-sum-exp.

Forward: S = τ·Q·Kᵀ, P = softmax(S) row by row, O = P·V. Given the gradient dO of the loss with respect to O, the
backward pass needs (Dao et al. 2022, Appendix B.2; Dao 2023, Algorithm 2):

    dV = Pᵀ·dO,   dP = dO·Vᵀ,   dS = P ∘ (dP − D),   D_i = Σ_j dO_ij·O_ij (= rowsum(dP ∘ P)),
    dQ = τ·dS·K,  dK = τ·dSᵀ·Q.

The standard implementation reads the N×N matrix P it stored in the forward pass. FlashAttention stored only O and
one number per row, the log-sum-exp L_i = m_i + log ℓ_i; it recomputes each tile P_ij = exp(τ·Q_i·K_jᵀ − L_i) on
chip, so nothing N×N is read or written. :func:`flash_attention_backward` does this in NumPy with FlashAttention-2's
loop order for the backward pass (K/V blocks outside, Q blocks inside; dK, dV accumulate on chip, dQ in HBM).

FLOPs per head (:func:`attention_flops`): the forward pass runs two N×N×d products, 4N²d FLOPs; the backward pass five
(dV, dP, dQ, dK and the recomputed S), 10N²d — 2.5 times the forward (Dao 2023, Sec. 4.1).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> q, k, v, do = rng.standard_normal((4, 2, 50, 8))
>>> o, lse = flash_attention_forward(q, k, v, block_q=16, block_k=12)
>>> got = flash_attention_backward(q, k, v, o, do, lse, block_q=16, block_k=12)
>>> want = naive_attention_backward(q, k, v, do)
>>> max(float(np.abs(a - b).max()) for a, b in zip(got, want)) < 1e-12
True
"""
from __future__ import annotations

import math

from ._lazy import np

from . import _check, attention

__all__ = ["flash_attention_forward", "naive_attention_backward", "flash_attention_backward", "attention_flops",
           "flash_backward_hbm_accesses", "standard_backward_hbm_accesses"]


def flash_attention_forward(q, k, v, block_q=128, block_k=128, causal=False, scale=None):
    """:func:`chipchain.attention.flash_attention` that also returns the per-row log-sum-exp of the scores,
    L = m + log ℓ (shape (..., N)), the one extra number per row FlashAttention saves for the backward pass.
    Result: ``(O, L)``.

    >>> o, lse = flash_attention_forward(np.zeros((3, 2)), np.zeros((3, 2)), np.ones((3, 1)))
    >>> o.ravel().tolist(), np.round(lse, 4).tolist()
    ([1.0, 1.0, 1.0], [1.0986, 1.0986, 1.0986])
    """
    q, k, v, tau = attention._inputs(q, k, v, scale)
    bq, bk = attention._block("block_q", block_q), attention._block("block_k", block_k)
    causal = attention._causal_flag(causal)
    out = np.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    lse = np.empty(q.shape[:-1], dtype=q.dtype)
    with attention._single_threaded_blas():
        attention._flash_loop(q, np.swapaxes(k, -1, -2), v, out, tau, bq, bk, causal, None, lse)
    return out, lse


def _grad_input(name, x, shape, dtype):
    a = attention._as_float(name, x)
    if a.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must hold only finite values (found NaN or infinity)")
    return a.astype(dtype, copy=False)


def naive_attention_backward(q, k, v, do, causal=False, scale=None):
    """Gradients (dQ, dK, dV) of standard attention for the output gradient ``do`` (shape of O), from the stored
    N×N matrix P (Dao et al. 2022, Algorithm 3): the reference the tiled version is checked against.

    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]]); v = np.array([[1.0], [3.0]])
    >>> [g.round(4).ravel().tolist() for g in naive_attention_backward(q, q, v, np.ones((2, 1)), scale=1.0)]
    [[-0.3932, 0.3932, -0.3932, 0.3932], [-0.3932, -0.3932, 0.3932, 0.3932], [1.0, 1.0]]
    """
    q, k, v, tau = attention._inputs(q, k, v, scale)
    causal = attention._causal_flag(causal)
    do = _grad_input("do", do, q.shape[:-1] + (v.shape[-1],), q.dtype)
    n, nk = q.shape[-2], k.shape[-2]
    s = tau * np.matmul(q, np.swapaxes(k, -1, -2))
    if causal:
        s[..., np.arange(nk)[None, :] > np.arange(n)[:, None]] = -np.inf
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    dv = np.matmul(np.swapaxes(p, -1, -2), do)
    dp = np.matmul(do, np.swapaxes(v, -1, -2))
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
    return tau * np.matmul(ds, k), tau * np.matmul(np.swapaxes(ds, -1, -2), q), dv


def flash_attention_backward(q, k, v, o, do, lse, block_q=128, block_k=128, causal=False, scale=None, counter=None):
    """Gradients (dQ, dK, dV) of attention, recomputing every score tile from the saved log-sum-exp ``lse``.

    ``o`` and ``lse`` come from :func:`flash_attention_forward` with the same inputs. First D = rowsum(dO ∘ O)
    (one pass over dO and O); then for each K/V block j (outer loop) and each Q block i (inner loop)::

        P_ij  = exp(τ·Q_i·K_jᵀ − L_i)          (recomputed, never read from HBM)
        dV_j += P_ijᵀ·dO_i
        dP_ij = dO_i·V_jᵀ
        dS_ij = P_ij ∘ (dP_ij − D_i)
        dQ_i += τ·dS_ij·K_j                    (read and written in HBM)
        dK_j += τ·dS_ijᵀ·Q_i

    (Dao 2023, Algorithm 2). With ``counter`` (an :class:`chipchain.attention.IOCounter`) the HBM elements are
    tallied as :func:`flash_backward_hbm_accesses` counts them.

    >>> rng = np.random.default_rng(3)
    >>> q, k, v, do = rng.standard_normal((4, 33, 4))
    >>> o, lse = flash_attention_forward(q, k, v, causal=True)
    >>> got = flash_attention_backward(q, k, v, o, do, lse, 8, 8, causal=True)
    >>> bool(np.abs(got[0] - naive_attention_backward(q, k, v, do, causal=True)[0]).max() < 1e-12)
    True
    """
    q, k, v, tau = attention._inputs(q, k, v, scale)
    bq, bk = attention._block("block_q", block_q), attention._block("block_k", block_k)
    causal = attention._causal_flag(causal)
    attention._check_counter(counter)
    oshape = q.shape[:-1] + (v.shape[-1],)
    o = _grad_input("o", o, oshape, q.dtype)
    do = _grad_input("do", do, oshape, q.dtype)
    lse = _grad_input("lse", lse, q.shape[:-1], q.dtype) if np.ndim(lse) >= 2 else _lse_1d(lse, q)
    n, nk, d, dv_ = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    heads = math.prod(q.shape[:-2])
    dsum = (do * o).sum(axis=-1)
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    if counter is not None:
        counter.read(heads * 2 * n * dv_)
        counter.write(heads * n)
    with attention._single_threaded_blas():
        for ks in range(0, nk, bk):
            ke = min(ks + bk, nk)
            kj, vj = k[..., ks:ke, :], v[..., ks:ke, :]
            if counter is not None:
                counter.read(heads * (ke - ks) * (d + dv_))
            for qs in range(ks - ks % bq if causal else 0, n, bq):
                qe = min(qs + bq, n)
                s = tau * np.matmul(q[..., qs:qe, :], np.swapaxes(kj, -1, -2))
                if causal and ke - 1 > qs:
                    s[..., np.arange(ks, ke)[None, :] > np.arange(qs, qe)[:, None]] = -np.inf
                p = np.exp(s - lse[..., qs:qe, None])
                doi = do[..., qs:qe, :]
                dv[..., ks:ke, :] += np.matmul(np.swapaxes(p, -1, -2), doi)
                ds = p * (np.matmul(doi, np.swapaxes(vj, -1, -2)) - dsum[..., qs:qe, None])
                dq[..., qs:qe, :] += tau * np.matmul(ds, kj)
                dk[..., ks:ke, :] += tau * np.matmul(np.swapaxes(ds, -1, -2), q[..., qs:qe, :])
                if counter is not None:
                    counter.read(heads * (qe - qs) * (d + dv_ + 2 + d))     # Q_i, dO_i, L_i, D_i, dQ_i
                    counter.write(heads * (qe - qs) * d)                     # dQ_i
            if counter is not None:
                counter.write(heads * (ke - ks) * (d + dv_))                 # dK_j, dV_j
    return dq, dk, dv


def _lse_1d(lse, q):
    a = np.asarray(lse)
    if a.shape != q.shape[:-1]:
        raise ValueError(f"lse must have shape {q.shape[:-1]}, got {a.shape}")
    return _grad_input("lse", a.reshape(a.shape + (1,)), q.shape[:-1] + (1,), q.dtype)[..., 0]


def attention_flops(n, d, heads=1, backward=False, recompute=True, causal=False) -> float:
    """Matrix-multiply FLOPs of attention for ``n`` tokens, head dimension ``d``, ``heads`` heads (2 FLOPs per
    multiply-add). Forward: Q·Kᵀ and P·V, 4·N²·d per head. Backward: dV, dP, dQ, dK, 8·N²·d, plus the recomputed
    Q·Kᵀ with ``recompute`` (FlashAttention), 10·N²·d — 2.5× the forward (Dao 2023, Sec. 4.1). ``causal`` halves
    both (only the lower triangle is computed). Element-wise in ``n``.

    >>> attention_flops(2048, 128, backward=True) / attention_flops(2048, 128)
    2.5
    """
    nn = _check.values("n", n, _check.positive)
    dd = _check.positive("d", d)
    h = _check.integer("heads", heads)
    _check.flag("backward", backward)
    _check.flag("recompute", recompute)
    _check.flag("causal", causal)
    per = (10.0 if recompute else 8.0) if backward else 4.0
    return _check.result(per * nn * nn * dd * h / (2.0 if causal else 1.0))


def flash_backward_hbm_accesses(n, d, block_q=128, block_k=128) -> int:
    """HBM elements the tiled backward pass reads and writes for one head (no mask), as
    :func:`flash_attention_backward` tallies them: D = rowsum(dO ∘ O) reads 2Nd and writes N; each of the T_c =
    ⌈N/B_c⌉ K/V blocks reads its K_j, V_j and writes dK_j, dV_j (4Nd in all) and streams every Q block past them,
    reading Q_i, dO_i, L_i, D_i and reading and writing dQ_i: T_c·(4Nd + 2N). Θ(N²d/B_c) = Θ(N²d²/M) for B_c ∝ M/d,
    Theorem 5 of Dao et al. (2022). ``block_q`` does not change the total.

    >>> flash_backward_hbm_accesses(1024, 64, 128, 128)
    2507776
    """
    nn, dd = _check.integer("n", n), _check.integer("d", d)
    _check.integer("block_q", block_q)
    tc = math.ceil(nn / _check.integer("block_k", block_k))
    return 2 * nn * dd + nn + 4 * nn * dd + tc * (4 * nn * dd + 2 * nn)


def standard_backward_hbm_accesses(n, d) -> int:
    """HBM elements of the standard backward pass for one head (Dao et al. 2022, Algorithm 3): dV = Pᵀ·dO reads P and
    dO, writes dV; dP = dO·Vᵀ reads dO and V, writes dP; dS reads P and dP, writes dS; dQ = dS·K and dK = dSᵀ·Q read
    dS twice, K and Q, write dQ and dK. 7N² + 8Nd — quadratic in N with a constant of 7.

    >>> standard_backward_hbm_accesses(1024, 64)
    7864320
    """
    nn, dd = _check.integer("n", n), _check.integer("d", d)
    return 7 * nn * nn + 8 * nn * dd
