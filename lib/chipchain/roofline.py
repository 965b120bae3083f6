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

from . import _check
from .hardware import Accelerator, get

__all__ = [
    "arithmetic_intensity", "matmul_flops", "matmul_bytes", "matmul_intensity", "elementwise_intensity",
    "ridge_point", "attainable", "attainable_flops", "fraction_of_peak", "bound", "plot_roofline",
]


def arithmetic_intensity(flops, nbytes) -> float:
    """I = F / Q, in FLOP per byte.

    ``flops``: operations performed (FLOP); ``nbytes``: bytes moved to and from main memory (> 0).

    >>> arithmetic_intensity(1, 12)
    0.08333333333333333
    """
    return _check.nonnegative("flops", flops) / _check.positive("nbytes", nbytes)


def matmul_flops(m, n, k) -> float:
    """FLOPs of C[m×n] = A[m×k] · B[k×n]: F = 2·m·n·k (one multiply and one add per term).

    >>> matmul_flops(1024, 1024, 1024)
    2147483648.0
    """
    return 2.0 * _check.positive("m", m) * _check.positive("n", n) * _check.positive("k", k)


def matmul_bytes(m, n, k, bytes_per_element=2) -> float:
    """Minimum bytes moved by a matmul that reads A and B once and writes C once: Q = b·(mk + kn + mn).

    >>> matmul_bytes(1024, 1024, 1024, 4)
    12582912.0
    """
    m, n, k = (_check.positive(x, v) for x, v in (("m", m), ("n", n), ("k", k)))
    return _check.positive("bytes_per_element", bytes_per_element) * (m * k + k * n + m * n)


def matmul_intensity(m, n, k, bytes_per_element=2) -> float:
    """Arithmetic intensity of a matmul with ideal reuse: I = 2mnk / (b·(mk + kn + mn)).

    For a square FP32 matmul (m = n = k, b = 4) this is n/6 (source: seed 002, memory-wall section).

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

    >>> round(ridge_point("A100", "bf16"))
    153
    """
    peak, bw = _peak_and_bandwidth(accelerator, dtype, sparse)
    return peak / bw


def attainable(intensity, peak, bandwidth) -> float:
    """Roofline bound from raw numbers: min(peak, bandwidth × I), in FLOP/s.

    ``intensity`` FLOP/byte (> 0), ``peak`` FLOP/s, ``bandwidth`` bytes/s.

    >>> attainable(0.5, 100e12, 2e12) / 1e12
    1.0
    """
    i = _check.positive("intensity", intensity)
    return min(_check.positive("peak", peak), _check.positive("bandwidth", bandwidth) * i)


def attainable_flops(accelerator, intensity, dtype="bf16", sparse=False) -> float:
    """Attainable FLOP/s of a kernel of the given intensity on ``accelerator`` at ``dtype``.

    >>> round(attainable_flops("A100", 1 / 12, "bf16") / 1e9)
    170
    """
    peak, bw = _peak_and_bandwidth(accelerator, dtype, sparse)
    return attainable(intensity, peak, bw)


def fraction_of_peak(accelerator, intensity, dtype="bf16", sparse=False) -> float:
    """Attainable throughput as a fraction of the peak at ``dtype`` (1.0 when compute-bound).

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


def plot_roofline(accelerators=("A100", "H100"), dtype="bf16", operators=None, ax=None,
                  intensity_range=(1e-2, 1e4), sparse=False):
    """Draw log–log rooflines for one or more accelerators, with operators placed on them.

    ``operators``: a mapping label → arithmetic intensity (FLOP/byte); each is drawn at its attainable
    throughput on the first accelerator. Returns the matplotlib Axes.
    """
    import numpy as np

    from . import plotting

    lo, hi = (_check.positive("intensity_range[0]", intensity_range[0]),
              _check.positive("intensity_range[1]", intensity_range[1]))
    if lo >= hi:
        raise ValueError(f"intensity_range must be increasing, got {intensity_range!r}")
    accs = [get(a) for a in ([accelerators] if isinstance(accelerators, (str, Accelerator)) else accelerators)]
    if not accs:
        raise ValueError("accelerators must name at least one accelerator")
    ax = plotting.axes(ax)
    x = np.logspace(np.log10(lo), np.log10(hi), 200)
    for i, acc in enumerate(accs):
        peak, bw = _peak_and_bandwidth(acc, dtype, sparse)
        color = plotting.color(i)
        ax.loglog(x, np.minimum(peak, bw * x) / 1e12, color=color, lw=2,
                  label=f"{acc.name} ({peak / 1e12:,.0f} TFLOP/s, {bw / 1e12:.2f} TB/s)")
        ridge = peak / bw
        ax.axvline(ridge, color=color, ls=":", lw=1)
        ax.annotate(f"ridge {ridge:.0f}", (ridge, peak / 1e12), textcoords="offset points", xytext=(4, -12),
                    fontsize=8, color=color)
    for label, intensity in (operators or {}).items():
        y = attainable_flops(accs[0], intensity, dtype, sparse) / 1e12
        ax.plot([intensity], [y], "o", color="black", ms=5)
        ax.annotate(label, (intensity, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.set_xlabel("arithmetic intensity (FLOP/byte, log scale)")
    ax.set_ylabel(f"attainable {dtype.upper()} TFLOP/s (dense, log scale)")
    ax.legend(loc="lower right", fontsize=8)
    return ax
