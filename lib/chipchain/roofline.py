"""Arithmetic intensity and the roofline model.

The roofline (Williams, Waterman and Patterson 2009) bounds the throughput of a kernel that performs ``F`` FLOPs
while moving ``Q`` bytes to and from main memory:

    attainable = min(peak, bandwidth × I),  with arithmetic intensity I = F / Q  (FLOP/byte)

The **ridge point** ``peak / bandwidth`` is the intensity at which the two roofs meet: a kernel below it is
memory-bound, one above it compute-bound.

>>> round(ridge_point("H100", "bf16"))
295
"""
from __future__ import annotations

import math

from . import _check, units
from . import links as _links
from .hardware import get

__all__ = [
    "arithmetic_intensity", "matmul_flops", "matmul_bytes", "matmul_intensity", "elementwise_intensity",
    "ridge_point", "attainable", "attainable_flops", "fraction_of_peak", "bound", "matmul_speedup",
    "tiled_matmul",
    "transformer_matmul_intensity", "tokens_to_compute_bound", "link_ridge_point",
]


def _positive(name, value):
    return _check.values(name, value, _check.positive)


def _nonnegative(name, value):
    return _check.values(name, value)


def arithmetic_intensity(flops, nbytes):
    """I = F / Q, in FLOP per byte.

    ``flops``: operations performed (FLOP, ≥ 0); ``nbytes``: bytes moved to and from main memory (> 0). Either may
    be a NumPy array (element-wise). Source: Williams, Waterman and Patterson 2009, "Roofline", CACM 52(4).

    >>> arithmetic_intensity(1, 12)
    0.08333333333333333
    """
    return _nonnegative("flops", flops) / _positive("nbytes", nbytes)


def matmul_flops(m, n, k) -> float:
    """FLOPs of C[m×n] = A[m×k] · B[k×n]: F = 2·m·n·k (one multiply and one add per term).

    >>> matmul_flops(1024, 1024, 1024)
    2147483648.0
    """
    return 2.0 * _positive("m", m) * _positive("n", n) * _positive("k", k)


def matmul_bytes(m, n, k, bytes_per_element=2) -> float:
    """Minimum bytes moved by a matmul that reads A and B once and writes C once: Q = b·(mk + kn + mn).

    >>> matmul_bytes(1024, 1024, 1024, 4)
    12582912.0
    """
    m, n, k = (_positive(x, v) for x, v in (("m", m), ("n", n), ("k", k)))
    return _positive("bytes_per_element", bytes_per_element) * (m * k + k * n + m * n)


def matmul_intensity(m, n, k, bytes_per_element=2) -> float:
    """Arithmetic intensity of a matmul with ideal reuse: I = 2mnk / (b·(mk + kn + mn)).

    For a square FP32 matmul (m = n = k, b = 4) this is n/6 (source: seed 002, memory-wall section). Sizes may be
    NumPy arrays (element-wise).

    >>> round(matmul_intensity(1024, 1024, 1024, 4), 1)
    170.7
    """
    return matmul_flops(m, n, k) / matmul_bytes(m, n, k, bytes_per_element)


def elementwise_intensity(flops_per_element=1, inputs=2, outputs=1, bytes_per_element=4) -> float:
    """Intensity of an element-wise kernel: I = f / (b·(inputs + outputs)).

    The default is an FP32 ``c = a + b``: 1 FLOP for 2 reads and 1 write of 4 bytes = 1/12 FLOP/byte.

    >>> round(elementwise_intensity(), 3)
    0.083
    """
    f = _check.positive("flops_per_element", flops_per_element)
    io = _check.nonnegative("inputs", inputs) + _check.nonnegative("outputs", outputs)
    if io == 0:
        raise ValueError("inputs + outputs must be greater than zero, got 0")
    return f / (_check.positive("bytes_per_element", bytes_per_element) * io)


def _peak_and_bandwidth(accelerator, dtype, sparse):
    acc = get(accelerator)
    return acc.peak_flops(dtype, sparse=sparse), acc.require("memory_bandwidth")


def ridge_point(accelerator, dtype="bf16", sparse=False) -> float:
    """Ridge point = peak / memory bandwidth, in FLOP/byte (dense peak unless ``sparse``).

    ``accelerator``: a catalog name or :class:`~chipchain.hardware.Accelerator`. Source: Williams et al. 2009.
    A part without a memory-bandwidth figure raises ``ValueError`` naming the part and the field.

    >>> round(ridge_point("A100", "bf16"))
    153
    """
    peak, bw = _peak_and_bandwidth(accelerator, dtype, sparse)
    return peak / bw


def attainable(intensity, peak_flops, bandwidth):
    """Roofline bound from raw numbers: P = min(peak_flops, bandwidth × I), in FLOP/s.

    ``intensity`` FLOP/byte (> 0; a number or a NumPy array, element-wise), ``peak_flops`` FLOP/s, ``bandwidth``
    bytes/s. Source: Williams et al. 2009, Eq. (1). Their Fig. 1 machine (AMD Opteron X2: 17.6 GFLOP/s,
    15 GB/s) at 0.5 FLOP/byte is memory-bound at 7.5 GFLOP/s:

    >>> attainable(0.5, 17.6e9, 15e9) / 1e9
    7.5
    """
    i = _positive("intensity", intensity)
    p = _check.positive("peak_flops", peak_flops)
    b = _check.positive("bandwidth", bandwidth)
    if isinstance(i, float):
        return min(p, b * i)
    import numpy as np

    return np.minimum(p, b * i)


def attainable_flops(accelerator, intensity, dtype="bf16", sparse=False):
    """Attainable FLOP/s of a kernel of the given intensity on ``accelerator`` at ``dtype``: min(peak, B × I).

    ``intensity`` may be a NumPy array (element-wise); the result has its shape.

    >>> round(attainable_flops("A100", 1 / 12, "bf16") / 1e9)
    170
    """
    peak, bw = _peak_and_bandwidth(accelerator, dtype, sparse)
    return attainable(intensity, peak, bw)


def fraction_of_peak(accelerator, intensity, dtype="bf16", sparse=False):
    """Attainable throughput as a fraction of the peak at ``dtype``: min(1, I / ridge) (1.0 when compute-bound).

    An FP32 element-wise add on an A100 reaches 0.05 % of the 312 TFLOPS BF16 peak, 0.9 % of its FP32 peak:

    >>> round(fraction_of_peak("A100", 1 / 12, "bf16") * 100, 3)
    0.054
    """
    peak, _ = _peak_and_bandwidth(accelerator, dtype, sparse)
    return attainable_flops(accelerator, intensity, dtype, sparse) / peak


def bound(accelerator, intensity, dtype="bf16", sparse=False) -> str:
    """``"memory-bound"`` below the ridge point, ``"compute-bound"`` at or above it.

    >>> bound("H100", 170.7, "bf16"), bound("H100", 300, "bf16")
    ('memory-bound', 'compute-bound')
    """
    i = _check.positive("intensity", intensity)
    return "compute-bound" if i >= ridge_point(accelerator, dtype, sparse) else "memory-bound"


def matmul_speedup(accelerator, n, dtype="bf16", to="fp8"):
    """Roofline speed-up of a square n×n×n matmul moved from ``dtype`` to the narrower format ``to``: the ratio of
    attainable FLOP/s, each format on its own roof with its own bytes per element (``n`` may be a NumPy array).

    Halving the bytes doubles the intensity and a doubled peak doubles the ridge, so on the H100 (BF16 989.4,
    FP8 1,979 TFLOP/s dense) every square matmul gains 2× — from bandwidth below the ridge, from the peak above it:

    >>> [round(float(matmul_speedup("H100", n)), 3) for n in (64, 886, 887, 8192)]
    [2.0, 2.0, 2.0, 2.0]
    """
    before, after = (matmul_intensity(n, n, n, units.bytes_per_element(d)) for d in (dtype, to))
    return attainable_flops(accelerator, after, to) / attainable_flops(accelerator, before, dtype)


# --- intensity in tokens, and the communication roofline ---------------------------------------------------------

def transformer_matmul_intensity(tokens, d_in, d_out, dtype="bf16"):
    """Intensity of a weight matmul Y[B×F] = X[B×D] · W[D×F] over a batch of B tokens:
    ``I = 2BDF / (b·(BD + DF + BF))`` FLOP/byte, with b bytes per element of ``dtype``.

    ``tokens`` B (the tokens the matmul processes at once, per GPU), ``d_in`` D and ``d_out`` F (the weight's
    shape); element-wise. As D, F → ∞ the weight bytes dominate and I → 2B/b: in BF16, **I ≈ B** — each weight
    byte fetched from HBM is used once per token. Source: the roofline of Williams et al. (2009) applied to a
    transformer layer, as in Austin et al. (2025), "How to Scale Your Model", ch. 1.

    >>> round(transformer_matmul_intensity(256, 8192, 28672), 1)     # 256 tokens through a Llama-70B MLP weight
    246.1
    """
    return matmul_intensity(tokens, d_out, d_in, units.bytes_per_element(dtype))


def tokens_to_compute_bound(accelerator, dtype="bf16", d_in=None, d_out=None, sparse=False) -> float:
    """Tokens B* a weight matmul needs (per GPU) to reach the ridge point R = peak / bandwidth.

    For large weights (``d_in``, ``d_out`` omitted: D, F → ∞) ``B* = R·b/2``; in BF16 the token count equals the
    ridge point (H100 ≈ 295, "about 300 tokens"). With a finite D×F weight, solving I(B) = R gives
    ``B* = R·b·D·F / (2DF − R·b·(D + F))``, and ``math.inf`` when 2DF ≤ R·b·(D + F): then no batch makes the
    matmul compute-bound. Returns tokens (a float, not rounded).

    >>> round(tokens_to_compute_bound("H100", "bf16")), round(tokens_to_compute_bound("H100", "fp8"))
    (295, 295)
    >>> round(tokens_to_compute_bound("H100", "bf16", 8192, 28672))
    310
    """
    r = ridge_point(accelerator, dtype, sparse) * units.bytes_per_element(dtype)
    if (d_in is None) != (d_out is None):
        raise ValueError("give both d_in and d_out (the weight's shape) or neither (the large-weight limit)")
    if d_in is None:
        return r / 2
    d, f = _check.positive("d_in", d_in), _check.positive("d_out", d_out)
    denominator = 2 * d * f - r * (d + f)
    return r * d * f / denominator if denominator > 0 else math.inf


def link_ridge_point(accelerator, link, dtype="bf16", sparse=False) -> float:
    """The communication roofline's ridge: FLOPs a GPU must do per byte it sends over ``link`` (per direction)
    to stay compute-bound, ``peak / B_link``.

    The same roofline as for memory, with the link in place of HBM: a computation that moves Q bytes over the
    link while doing F FLOPs hides its communication only if F/Q exceeds this. ``link``: a name in
    :mod:`chipchain.links` or the record; its per-direction bandwidth is used.

    >>> round(link_ridge_point("H100", "NVLink4")), round(link_ridge_point("H100", "IB-NDR"))
    (2199, 19788)
    """
    acc = get(accelerator)
    return acc.peak_flops(dtype, sparse=sparse) / _links.get(link).bandwidth_per_direction


# --- data reuse: what a tile buys ---------------------------------------------------------------------------------

def tiled_matmul(a, b, tile):
    """C = A·B computed tile by tile, counting elements loaded from "global memory" (HBM).

    Each output tile of t×t needs a t×K strip of A and a K×t strip of B; loaded once into fast memory ("shared
    memory"), each loaded element is reused t times. Loads = 2·M·N·K / t, against 2·M·N·K for a kernel that fetches
    both operands of every multiply–add from global memory. Returns ``(C, loads, naive_loads)``; the reuse factor
    ``naive_loads / loads`` equals ``t`` when t divides the sizes.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.standard_normal((64, 32)), rng.standard_normal((32, 48))
    >>> c, loads, naive = tiled_matmul(a, b, 16)
    >>> bool(np.allclose(c, a @ b)), naive // loads
    (True, 16)
    """
    import numpy as np

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"a and b must be matrices with matching inner size, got shapes {a.shape} and {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a and b must be finite")
    t = _check.integer("tile", tile)
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n))
    loads = 0
    for i in range(0, m, t):
        for j in range(0, n, t):
            a_strip, b_strip = a[i:i + t, :], b[:, j:j + t]       # brought on chip once ...
            loads += a_strip.size + b_strip.size
            c[i:i + t, j:j + t] = a_strip @ b_strip                 # ... and reused for every output element
    return c, loads, 2 * m * n * k
