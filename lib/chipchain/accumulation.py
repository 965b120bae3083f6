"""Limited-precision accumulation, emulated in NumPy: why DeepSeek-V3 promotes FP8 GEMM partial sums to FP32.

DeepSeek-V3's report says the H800's tensor cores keep only about 14 bits when they accumulate an FP8 matrix
multiply, and that for an inner dimension K = 4,096 this gave a maximum relative error of nearly 2 % in their test;
the fix copies the tensor cores' partial sum into FP32 registers every N_C = 128 elements and accumulates there
(DeepSeek-AI 2024, Sec. 3.3.2). This module emulates both, as a *model* of the hardware, not the hardware itself:

* an accumulator with ``acc_bits`` significant bits (implicit bit included) that *truncates* after every addition
  (the aligned bits below its last place are dropped, never rounded up);
* products added ``group`` at a time (default 4, the width of one tensor-core dot-product step), each group's sum
  exact;
* promotion: every ``promote_every`` elements the limited accumulator is added into an FP32 total and reset.

The error is measured normwise — the largest absolute error over a block of outputs divided by the largest output —
so that outputs that happen to cancel to nearly zero do not dominate:

>>> e = accumulation_error(4096, acc_bits=14)
>>> round(e, 3)
0.021
>>> accumulation_error(4096, acc_bits=14, promote_every=128) < e / 10
True
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check
from ._lazy import np
from .units import fmt_percent

def _signed(name, value):
    return _check.number(name, value, allow_negative=True)


__all__ = ["round_to_bits", "limited_dot", "accumulation_error", "AccumulationComparison", "compare_promotion"]


def round_to_bits(x, bits, mode="truncate"):
    """``x`` with only ``bits`` significant bits (implicit leading bit included): ``"truncate"`` drops the rest
    (towards zero), ``"nearest"`` rounds half to even. FP32 keeps 24, BF16 8, FP16 11.

    >>> round_to_bits(1 + 2**-20, 14), round_to_bits(1 + 2**-13, 14), round_to_bits(3.0, 1)
    (1.0, 1.0001220703125, 2.0)
    >>> float(round_to_bits(1 + 3 * 2**-15, 14, "nearest")) == 1 + 2**-13
    True
    """
    b = _check.integer("bits", bits)
    m = _check.choice("mode", mode, ("truncate", "nearest"))
    v = np.asarray(_check.values("x", x, _signed), dtype=float)
    return _check.result(_round(v, b, m == "truncate"))


def _round(v, bits, truncate):
    frac, exp = np.frexp(v)                                   # v = frac · 2^exp, 0.5 ≤ |frac| < 1
    scaled = np.ldexp(frac, bits)
    return np.ldexp(np.trunc(scaled) if truncate else np.rint(scaled), exp - bits)


def limited_dot(a, b, acc_bits=14, promote_every=None, group=4, mode="truncate"):
    """Row-wise dot products ``Σ_k a[..., k] · b[..., k]`` as the emulated tensor core computes them: products summed
    ``group`` at a time into an accumulator of ``acc_bits`` significant bits; with ``promote_every`` (a multiple of
    ``group``) the accumulator is added into an FP32 total and reset every that many elements.

    With 24 accumulator bits (FP32) small integers sum exactly:

    >>> float(limited_dot([1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 1.0, 1.0], acc_bits=24, group=1))
    10.0
    """
    A = np.atleast_2d(np.asarray(_check.values("a", a, _signed), dtype=float))
    B = np.atleast_2d(np.asarray(_check.values("b", b, _signed), dtype=float))
    if A.shape[-1] != B.shape[-1]:
        raise ValueError(f"a and b must have the same last dimension, got {A.shape[-1]} and {B.shape[-1]}")
    bits = _check.integer("acc_bits", acc_bits)
    g = _check.integer("group", group)
    k = A.shape[-1]
    if promote_every is not None:
        nc = _check.integer("promote_every", promote_every)
        if nc % g:
            raise ValueError(f"promote_every ({nc}) must be a multiple of group ({g})")
    _check.choice("mode", mode, ("truncate", "nearest"))
    truncate = mode == "truncate"
    products = A * B
    pad = (-k) % g
    if pad:
        products = np.concatenate([products, np.zeros(products.shape[:-1] + (pad,))], axis=-1)
    sums = products.reshape(products.shape[:-1] + (-1, g)).sum(-1)      # each group's exact sum
    acc = np.zeros(products.shape[:-1])
    total = np.zeros(products.shape[:-1], dtype=np.float32)
    for j in range(0, k, g):
        acc = _round(acc + sums[..., j // g], bits, truncate)
        if promote_every is not None and ((j + g) % nc == 0 or j + g >= k):
            total = (total + acc.astype(np.float32)).astype(np.float32)
            acc = np.zeros_like(acc)
    out = total.astype(float) + acc
    return _check.result(out[0] if np.ndim(a) == 1 and np.ndim(b) == 1 else out)


def accumulation_error(k, acc_bits=14, promote_every=None, group=4, mode="truncate", n_outputs=128, seed=0) -> float:
    """Normwise relative error of ``n_outputs`` emulated dot products of length ``k`` with standard-normal inputs
    (seeded): max |ĉ − c| / max |c|, c computed in float64.

    >>> accumulation_error(128, acc_bits=24) < 1e-6
    True
    """
    kk = _check.integer("k", k)
    n = _check.integer("n_outputs", n_outputs)
    rng = np.random.default_rng(_check.integer("seed", seed, minimum=0))
    a, b = rng.standard_normal((n, kk)), rng.standard_normal((n, kk))
    exact = (a * b).sum(-1)
    got = limited_dot(a, b, acc_bits, promote_every, group, mode)
    return float(np.abs(got - exact).max() / np.abs(exact).max())


@dataclass(frozen=True)
class AccumulationComparison:
    """Errors at each inner dimension ``k``: without promotion (``limited``), with promotion every ``promote_every``
    elements (``promoted``), and with a full FP32 accumulator (``fp32``)."""

    ks: tuple
    limited: tuple
    promoted: tuple
    fp32: tuple
    acc_bits: int
    promote_every: int

    def __str__(self) -> str:
        rows = [f"K = {k:,}: {fmt_percent(l, decimals=2)} with {self.acc_bits}-bit accumulation, {fmt_percent(p, decimals=3)} promoted every "
                f"{self.promote_every}, {f:.1e} in FP32" for k, l, p, f in zip(self.ks, self.limited, self.promoted,
                                                                           self.fp32)]
        return "\n".join(rows)


def compare_promotion(ks=(1024, 2048, 4096), acc_bits=14, promote_every=128, group=4,
                      n_outputs=128, seed=0) -> AccumulationComparison:
    """:func:`accumulation_error` for each ``k`` in ``ks``, with and without promotion and in FP32 (24 bits).

    >>> c = compare_promotion((4096,))
    >>> c.limited[0] > 10 * c.promoted[0] > 10 * c.fp32[0]
    True
    """
    kk = tuple(_check.integer("ks", k) for k in ks)
    nc = _check.integer("promote_every", promote_every)
    lim = tuple(accumulation_error(k, acc_bits, None, group, "truncate", n_outputs, seed) for k in kk)
    pro = tuple(accumulation_error(k, acc_bits, nc, group, "truncate", n_outputs, seed) for k in kk)
    f32 = tuple(accumulation_error(k, 24, None, group, "nearest", n_outputs, seed) for k in kk)
    return AccumulationComparison(kk, lim, pro, f32, int(acc_bits), nc)
