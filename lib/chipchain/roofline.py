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

from . import _check, widgets
from .hardware import Accelerator, get

__all__ = [
    "arithmetic_intensity", "matmul_flops", "matmul_bytes", "matmul_intensity", "elementwise_intensity",
    "ridge_point", "attainable", "attainable_flops", "fraction_of_peak", "bound", "plot_roofline",
    "tiled_matmul", "measure_matmul", "measure_triad", "roofline_explorer", "precision_explorer",
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


# --- the reader's own machine ------------------------------------------------------------------------------------

def measure_matmul(n=512, repeats=3) -> float:
    """Best-of-``repeats`` FLOP/s of a float64 n×n NumPy matmul on this machine (2n³ FLOPs per product)."""
    import time

    import numpy as np

    n = _check.integer("n", n, minimum=16)
    repeats = _check.integer("repeats", repeats)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    a @ b
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n**3 / best


def measure_triad(n=10_000_000, repeats=3) -> float:
    """Best-of-``repeats`` memory bandwidth (bytes/s) of a STREAM-like triad a = b + s·c in float64.

    NumPy does it in two passes (``a = s·c``, then ``a += b``): five arrays of 8-byte elements cross memory per
    element (read c, write a; read a, read b, write a), so 40·n bytes are counted — not STREAM's 24·n.
    """
    import time

    import numpy as np

    n = _check.integer("n", n, minimum=1000)
    repeats = _check.integer("repeats", repeats)
    b, c, a = np.ones(n), np.full(n, 2.0), np.empty(n)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)
        best = min(best, time.perf_counter() - t0)
    return 40.0 * n / best


# --- explorables ---------------------------------------------------------------------------------------------------

_EXPLORER_CHIPS = ("A100-SXM-80GB", "H100-SXM", "B200", "MI300X", "RTX-4090")
_EXPLORER_DTYPES = {"FP32 (no Tensor Cores)": "fp32", "TF32": "tf32", "BF16": "bf16", "FP8": "fp8"}
_ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp8": 1}


def roofline_view(accelerator, dtype, n) -> str:
    """HTML for one view of the roofline explorer: the roofline of ``accelerator`` at ``dtype`` with a square
    n×n×n matmul and an element-wise add placed on it."""
    from . import plotting
    from .units import fmt_rate

    acc = get(accelerator)
    peak, bw = _peak_and_bandwidth(acc, dtype, False)
    bpe = _ELEMENT_BYTES[dtype]
    gemm_i = matmul_intensity(n, n, n, bpe)
    ew_i = elementwise_intensity(bytes_per_element=bpe)
    ridge = peak / bw
    xs = [10 ** (e / 4) for e in range(-8, 17)]
    chart = plotting.svg_chart(
        lines=[{"x": xs, "y": [min(peak, bw * x) / 1e12 for x in xs], "label": f"{acc.name} {dtype.upper()} roofline"}],
        points=[{"x": gemm_i, "y": attainable(gemm_i, peak, bw) / 1e12, "label": f"matmul n={n}", "color": "#D55E00"},
                {"x": ew_i, "y": attainable(ew_i, peak, bw) / 1e12, "label": "element-wise add", "color": "#009E73"}],
        vlines=[{"x": ridge, "label": f"ridge {ridge:.0f}"}], xlog=True, ylog=True, xlim=(0.01, 1e4),
        ylim=(1e-3, 1e4), xlabel="arithmetic intensity (FLOP/byte)", ylabel="attainable TFLOP/s",
        alt=(f"Roofline of the {acc.name} at {dtype.upper()}: a {n}-sized matmul at {gemm_i:.0f} FLOP/byte is "
             f"{bound(acc, gemm_i, dtype)}; the ridge point is {ridge:.0f} FLOP/byte."))
    got = attainable(gemm_i, peak, bw)
    return (f"<p>Matmul n = {n}: intensity <b>{gemm_i:,.1f}</b> FLOP/byte vs ridge <b>{ridge:,.0f}</b> → "
            f"<b>{bound(acc, gemm_i, dtype)}</b>, attainable {fmt_rate(got)} = {got / peak:.0%} of the "
            f"{fmt_rate(peak)} dense peak. Element-wise add: {attainable(ew_i, peak, bw) / peak:.2%} of peak.</p>"
            + chart)


@widgets.explorer
def roofline_explorer():
    """Chapter 1: choose an accelerator and precision, move the matrix size, watch a matmul cross the ridge."""
    return widgets.explore(
        roofline_view,
        [widgets.Choice("accelerator", "Accelerator", {get(n).name: n for n in _EXPLORER_CHIPS}, value="H100-SXM"),
         widgets.Choice("dtype", "Precision", _EXPLORER_DTYPES, value="bf16"),
         widgets.Slider("n", "Matrix size n", [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192], value=256)],
        title="Roofline explorer: where does a matmul of size n sit?")


def precision_view(accelerator, sparse) -> str:
    """HTML bars of ``accelerator``'s peak at every precision it has (dense, or with 2:4 sparsity)."""
    import html

    acc = get(accelerator)
    rows = []
    for d in acc.precisions():
        try:
            rows.append((d, acc.peak_flops(d, sparse=sparse and d not in ("fp64", "fp32"))))
        except ValueError:
            rows.append((d, acc.peak_flops(d)))
    top = max(v for _, v in rows)
    bars = "".join(
        f'<div style="display:flex;align-items:center;gap:.5em;margin:2px 0"><span style="width:4em">{d.upper()}'
        f'</span><span role="img" aria-label="{d} {v / 1e12:,.0f} TFLOPS" style="display:inline-block;height:1em;'
        f'width:{max(v / top, 0.003) * 70:.2f}%;background:#0072B2"></span><span>{v / 1e12:,.1f} '
        f'{"TOPS" if d == "int8" else "TFLOP/s"}</span></div>' for d, v in rows)
    note = ("with 2:4 structured sparsity (FP64/FP32 have none)" if sparse else "dense")
    return f"<p>{html.escape(acc.name)}, {note}:</p>{bars}"


@widgets.explorer
def precision_explorer():
    """Chapter 1: the precision ladder of a chip, dense or sparse."""
    return widgets.explore(
        precision_view,
        [widgets.Choice("accelerator", "Accelerator", {get(n).name: n for n in _EXPLORER_CHIPS}, value="H100-SXM"),
         widgets.Toggle("sparse", "Counting", labels=["dense", "sparse (2:4)"])],
        title="The precision ladder")
