"""Views for chapter 1 (one chip): the spec sheet, the number-format table, the roofline figure and explorer, and
the precision ladder. Every number comes from :mod:`~chipchain.hardware`, :mod:`~chipchain.roofline` and
:mod:`~chipchain.numerics`; nothing here re-derives a formula.
"""
from __future__ import annotations

import html

from .. import _check, hardware, numerics, plotting, roofline, units, widgets
from ..hardware import Accelerator

__all__ = ["spec_sheet", "format_table", "plot_roofline", "roofline_view", "roofline_explorer", "precision_view",
           "precision_explorer", "EXPLORER_ACCELERATORS"]

#: the parts offered by the chapter-1 explorers (catalog names)
EXPLORER_ACCELERATORS = ("A100-SXM-80GB", "H100-SXM", "B200", "MI300X", "RTX-4090")
_EXPLORER_DTYPES = {"FP32 (no Tensor Cores)": "fp32", "TF32": "tf32", "BF16": "bf16", "FP8": "fp8"}
_CHECKED = {"V": "primary source", "V2": "secondary source quoting the primary", "U": "unverified: estimate"}


def _tera(x):
    return x / units.TERA


def spec_sheet(accelerator):
    """One accelerator's spec sheet as a two-column pandas DataFrame (quantity → value with its convention).

    Rows for figures the catalog lacks are left out (the sheet says which at the end).

    >>> spec_sheet("H100").loc["Memory bandwidth", "value"]
    '3.35 TB/s'
    >>> spec_sheet("B200").loc["Not in the catalog", "value"]
    'die area, streaming multiprocessors, CUDA cores, Tensor Cores'
    """
    import pandas as pd

    acc = hardware.get(accelerator)
    rows, missing = [("Vendor, year", f"{acc.vendor}, {acc.year}"), ("Process", acc.process or "—")], []

    def add(value, label, text, missing_name):
        if value:
            rows.append((label, text()))
        else:
            missing.append(missing_name)

    add(acc.transistors, "Transistors", lambda: f"{acc.transistors / units.GIGA:g} billion", "transistors")
    add(acc.die_area_mm2, "Die area", lambda: f"{acc.die_area_mm2:g} mm²", "die area")
    add(acc.sms, "Streaming multiprocessors", lambda: f"{acc.sms}", "streaming multiprocessors")
    add(acc.cuda_cores, "CUDA cores (FP32 lanes)", lambda: units.fmt_number(acc.cuda_cores), "CUDA cores")
    add(acc.tensor_cores, "Tensor Cores", lambda: units.fmt_number(acc.tensor_cores), "Tensor Cores")
    add(acc.memory_bytes, "Memory", lambda: f"{units.fmt_capacity(acc.memory_bytes)} {acc.memory_type}", "memory")
    add(acc.memory_bandwidth, "Memory bandwidth", lambda: str(units.fmt_bandwidth(acc.memory_bandwidth)),
        "memory bandwidth")
    add(acc.interconnect_bandwidth, "Chip-to-chip link",
        lambda: f"{acc.interconnect}, {units.fmt_bandwidth(acc.interconnect_bandwidth)} bidirectional",
        "chip-to-chip bandwidth")
    add(acc.tdp, "Power (TDP)", lambda: str(units.fmt_power(acc.tdp)), "power (TDP)")
    for d in acc.precisions():
        unit = "TOPS" if d == "int8" else "TFLOP/s"
        rows.append((f"Peak {_label(d, acc)}, dense", f"{_tera(acc.peak_flops(d)):,.1f} {unit}"))
    rows.append(("Checked", _CHECKED[acc.checked]))
    rows.append(("Source", acc.source))
    if missing:
        rows.append(("Not in the catalog", ", ".join(missing)))
    return pd.DataFrame(rows, columns=["quantity", "value"]).set_index("quantity")


def format_table():
    """The number formats of :data:`chipchain.numerics.FORMATS` as a pandas DataFrame: bits, exponent and mantissa
    bits, range and epsilon, one row per format.

    >>> format_table().loc["FP16", "largest"]
    np.float64(65504.0)
    """
    import pandas as pd

    rows = []
    for key, f in numerics.FORMATS.items():
        rows.append({"format": f.name, "bits": f.bits, "exponent bits": f.exponent_bits,
                     "mantissa bits": f.mantissa_bits, "largest": numerics.largest(key),
                     "smallest normal": numerics.smallest_normal(key),
                     "smallest subnormal": numerics.smallest_subnormal(key), "epsilon": numerics.epsilon(key)})
    return pd.DataFrame(rows).set_index("format")


def plot_roofline(accelerators=("A100", "H100"), dtype="bf16", operators=None, ax=None,
                  intensity_range=(1e-2, 1e4), sparse=False):
    """Draw log–log rooflines (:func:`chipchain.roofline.attainable_flops`) for one or more accelerators, with
    operators placed on them.

    ``operators``: a mapping label → arithmetic intensity (FLOP/byte); each is drawn at its attainable
    throughput on the first accelerator. Returns the matplotlib Axes.
    """
    import numpy as np

    lo = _check.positive("intensity_range[0]", intensity_range[0])
    hi = _check.positive("intensity_range[1]", intensity_range[1])
    if lo >= hi:
        raise ValueError(f"intensity_range must be increasing, got {intensity_range!r}")
    accs = [hardware.get(a) for a in ([accelerators] if isinstance(accelerators, (str, Accelerator))
                                      else accelerators)]
    if not accs:
        raise ValueError("accelerators must name at least one accelerator")
    ax = plotting.axes(ax)
    x = np.logspace(np.log10(lo), np.log10(hi), 200)
    for i, acc in enumerate(accs):
        peak, bw = acc.peak_flops(dtype, sparse=sparse), acc.require("memory_bandwidth")
        color = plotting.color(i)
        ax.loglog(x, _tera(roofline.attainable_flops(acc, x, dtype, sparse)), color=color, lw=2,
                  label=f"{acc.name} ({_tera(peak):,.0f} TFLOP/s, {bw / units.TB:.2f} TB/s)")
        ridge = roofline.ridge_point(acc, dtype, sparse)
        ax.axvline(ridge, color=color, ls=":", lw=1)
        ax.annotate(f"ridge {ridge:.0f}", (ridge, _tera(peak)), textcoords="offset points", xytext=(4, -12),
                    fontsize=8, color=color)
    for label, intensity in (operators or {}).items():
        y = _tera(roofline.attainable_flops(accs[0], intensity, dtype, sparse))
        ax.plot([intensity], [y], "o", color="black", ms=5)
        ax.annotate(label, (intensity, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.set_xlabel("arithmetic intensity (FLOP/byte, log scale)")
    ax.set_ylabel(f"attainable {dtype.upper()} TFLOP/s (dense, log scale)")
    ax.legend(loc="lower right", fontsize=8)
    return ax


def roofline_view(accelerator, dtype, n) -> str:
    """HTML for one view of the roofline explorer: the roofline of ``accelerator`` at ``dtype`` with a square
    n×n×n matmul and an element-wise add placed on it."""
    import numpy as np

    acc = hardware.get(accelerator)
    peak = acc.peak_flops(dtype)
    ridge = roofline.ridge_point(acc, dtype)
    bpe = units.bytes_per_element(dtype)
    gemm_i = roofline.matmul_intensity(n, n, n, bpe)
    ew_i = roofline.elementwise_intensity(bytes_per_element=bpe)
    xs = np.array([10 ** (e / 4) for e in range(-8, 17)])
    verdict = roofline.bound(acc, gemm_i, dtype)
    chart = plotting.svg_chart(
        lines=[{"x": list(xs), "y": list(_tera(roofline.attainable_flops(acc, xs, dtype))),
                "label": f"{acc.name} {dtype.upper()} roofline"}],
        points=[{"x": gemm_i, "y": _tera(roofline.attainable_flops(acc, gemm_i, dtype)), "label": f"matmul n={n}",
                 "color": "#D55E00"},
                {"x": ew_i, "y": _tera(roofline.attainable_flops(acc, ew_i, dtype)), "label": "element-wise add",
                 "color": "#009E73"}],
        vlines=[{"x": ridge, "label": f"ridge {ridge:.0f}"}], xlog=True, ylog=True, xlim=(0.01, 1e4),
        ylim=(1e-3, 1e4), xlabel="arithmetic intensity (FLOP/byte)", ylabel="attainable TFLOP/s",
        alt=(f"Roofline of the {acc.name} at {dtype.upper()}: a {n}-sized matmul at {gemm_i:.0f} FLOP/byte is "
             f"{verdict}; the ridge point is {ridge:.0f} FLOP/byte."))
    got = roofline.attainable_flops(acc, gemm_i, dtype)
    return (f"<p>Matmul n = {n}: intensity <b>{gemm_i:,.1f}</b> FLOP/byte vs ridge <b>{ridge:,.0f}</b> → "
            f"<b>{verdict}</b>, attainable {units.fmt_rate(got)} = {got / peak:.0%} of the "
            f"{units.fmt_rate(peak)} dense peak. Element-wise add: "
            f"{roofline.fraction_of_peak(acc, ew_i, dtype):.2%} of peak.</p>" + chart)


@widgets.explorer
def roofline_explorer():
    """Chapter 1: choose an accelerator and precision, move the matrix size, watch a matmul cross the ridge."""
    return widgets.explore(
        roofline_view,
        [widgets.Choice("accelerator", "Accelerator", {hardware.get(n).name: n for n in EXPLORER_ACCELERATORS},
                        value="H100-SXM"),
         widgets.Choice("dtype", "Precision", _EXPLORER_DTYPES, value="bf16"),
         widgets.Slider("n", "Matrix size n", [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192], value=256)],
        title="Roofline explorer: where does a matmul of size n sit?")


def _label(dtype: str, acc: Accelerator) -> str:
    """``fp64_tensor`` -> ``FP64 (Tensor Core)``: every peak names the unit it is for (``hardware.UNIT``); other
    vendors' matrix units are called matrix engines."""
    matrix = "Tensor Core" if acc.vendor == "NVIDIA" else "matrix engine"
    unit = matrix if hardware.UNIT[dtype] == "tensor" else "vector"
    return f"{dtype.split('_')[0].upper()} ({unit})"


def precision_view(accelerator, sparse) -> str:
    """HTML bars of ``accelerator``'s peak at every precision it has (dense, or with 2:4 sparsity)."""
    acc, asked = hardware.get(accelerator), bool(sparse)
    sparse = asked and bool(acc.sparse_factor)   # no published 2:4 figure: the dense bars, and a note saying so
    rows = [(d, acc.peak_flops(d, sparse=sparse and d in hardware.SPARSE_DTYPES)) for d in acc.precisions()]
    top = max(v for _, v in rows)
    bars = "".join(
        f'<div style="display:flex;align-items:center;gap:.5em;margin:2px 0"><span style="width:11em">{_label(d, acc)}'
        f'</span><span role="img" aria-label="{d} {_tera(v):,.0f} TFLOPS" style="display:inline-block;height:1em;'
        f'width:{max(v / top, 0.003) * 70:.2f}%;background:#0072B2"></span><span>{_tera(v):,.1f} '
        f'{"TOPS" if d == "int8" else "TFLOP/s"}</span></div>' for d, v in rows)
    note = ("with 2:4 structured sparsity (Tensor Core formats only; FP64 and FP32 have none)" if sparse else
            "dense (no structured-sparsity figure is published for this part)" if asked and not sparse else "dense")
    return f"<p>{html.escape(acc.name)}, {note}:</p>{bars}"


@widgets.explorer
def precision_explorer():
    """Chapter 1: the precision ladder of a chip, dense or sparse."""
    return widgets.explore(
        precision_view,
        [widgets.Choice("accelerator", "Accelerator", {hardware.get(n).name: n for n in EXPLORER_ACCELERATORS},
                        value="H100-SXM"),
         widgets.Toggle("sparse", "Counting", labels=["dense", "sparse (2:4)"])],
        title="The precision ladder")
