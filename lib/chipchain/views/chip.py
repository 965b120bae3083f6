"""Views for chapter 1 (one chip): the spec sheet, the number-format table, the roofline figure and explorer, and
the precision ladder. Every number comes from :mod:`~chipchain.hardware`, :mod:`~chipchain.roofline` and
:mod:`~chipchain.numerics`; nothing here re-derives a formula.
"""
from __future__ import annotations

import html

from .. import _check, hardware, numerics, plotting, roofline, units, widgets
from . import _layout
from ._figure import Figure
from ..hardware import Accelerator
from ..units import fmt_percent

__all__ = ["spec_sheet", "format_table", "roofline_figure", "roofline_view", "roofline_explorer", "precision_view",
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


def roofline_figure(accelerators=("A100", "H100"), dtype="bf16", operators=None, intensity_range=(1e-2, 1e4),
                    sparse=False, measured=None, title=None):
    """Log–log rooflines (:func:`chipchain.roofline.attainable_flops`) of one or more accelerators at ``dtype`` as a
    chart-system figure (:class:`~chipchain.views._figure.Figure`), each with its ridge point
    (:func:`chipchain.roofline.ridge_point`), and operators placed on the first accelerator's roof.

    ``operators``: a mapping label → arithmetic intensity (FLOP/byte). ``measured``: an optional roofline measured on
    a machine, ``(label, peak_flops, bandwidth)`` in FLOP/s and byte/s (:func:`chipchain.roofline.attainable`),
    drawn dashed. ``intensity_range``: the x axis (FLOP/byte).

    >>> f = roofline_figure(["A100", "H100"], "bf16", {"matmul n=256 (BF16)": 85.3})
    >>> [round(r) for _, r in f.data["ridges"]], round(f.data["points"][0][2])
    ([153, 295], 174)
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
    ridges = [(acc.name, roofline.ridge_point(acc, dtype, sparse)) for acc in accs]
    base = [float(v) for v in np.logspace(np.log10(lo), np.log10(hi), 61)]
    lines, vlines, summary = [], [], []
    kind = "sparse" if sparse else "dense"
    for i, (acc, (_, ridge)) in enumerate(zip(accs, ridges)):
        peak, bw = acc.peak_flops(dtype, sparse=sparse), acc.require("memory_bandwidth")
        xs = sorted(set(base) | ({ridge} if lo < ridge < hi else set()))
        ys = [float(v) for v in _tera(roofline.attainable_flops(acc, np.array(xs), dtype, sparse))]
        lines.append({"x": xs, "y": ys, "color": plotting.color(i),
                      "label": f"{acc.name} ({_tera(peak):,.0f} TFLOP/s {kind}, {bw / units.TB:.2f} TB/s)"})
        if lo < ridge < hi:
            vlines.append({"x": ridge, "color": plotting.color(i),
                           "label": f"{acc.name} ridge {ridge:,.0f}" if len(accs) > 1 else f"ridge {ridge:,.0f}"})
        summary.append(f"{acc.name}: {_tera(peak):,.1f} TFLOP/s, {bw / units.TB:.2f} TB/s, ridge {ridge:,.0f} FLOP/byte")
    if measured is not None:
        label, m_peak, m_bw = measured
        m_peak, m_bw = _check.positive("measured peak_flops", m_peak), _check.positive("measured bandwidth", m_bw)
        ys = [float(v) for v in _tera(roofline.attainable(np.array(base), m_peak, m_bw))]
        lines.append({"x": base, "y": ys, "color": "#000", "dash": True, "label": str(label)})
        summary.append(f"{label}: {units.fmt_rate(m_peak)}, {units.fmt_bandwidth(m_bw)}, ridge "
                       f"{m_peak / m_bw:,.1f} FLOP/byte")
    pts = []
    for label, intensity in sorted((operators or {}).items(), key=lambda kv: kv[1]):
        intensity = _check.positive(f"operators[{label!r}]", intensity)
        pts.append((str(label), float(intensity),
                    float(_tera(roofline.attainable_flops(accs[0], intensity, dtype, sparse)))))
    all_y = [y for d in lines for y in d["y"]] + [y for _, _, y in pts]
    top = max(all_y)
    ylim = (max(min(all_y), top * 1e-7) / 1.5, top * 8)
    points = [{"x": i, "y": y, "label": l, "color": "#000"} for l, i, y in pts]
    where = (" Operators on the " + accs[0].name + "'s roof: "
             + "; ".join(f"{l} at {i:,.2f} FLOP/byte, {y:,.2f} TFLOP/s" for l, i, y in pts) + ".") if pts else ""
    alt = (f"Log–log rooflines at {dtype.upper()} ({kind}): " + "; ".join(summary) + "." + where)
    html = plotting.svg_chart(
        lines=lines, points=points, vlines=vlines, xlog=True, ylog=True, xlim=(lo, hi), ylim=ylim,
        xlabel="arithmetic intensity (FLOP/byte)", ylabel=f"attainable {dtype.upper()} TFLOP/s ({kind})",
        height=340, alt=alt, title=title or "")
    text = f"Rooflines at {dtype.upper()} ({kind}): " + "; ".join(summary) + ("." + where if pts else "")
    return Figure(html, text, {"ridges": ridges, "points": pts, "lines": [(d["label"], d["x"], d["y"]) for d in lines]})


def roofline_view(accelerator, dtype, n) -> str:
    """HTML for one view of the roofline explorer: the roofline of ``accelerator`` at ``dtype`` with a square
    n×n×n matmul and an element-wise add placed on it."""
    import numpy as np

    acc = hardware.get(accelerator)
    if dtype not in acc.precisions():          # a plain sentence, not the catalog's error (issue 27, reader #10)
        matrix = "Tensor Cores" if acc.vendor == "NVIDIA" else "matrix engines"
        return widgets.message(f"The {acc.name} has no {dtype.upper()} {matrix}: no {dtype.upper()} peak is "
                               f"published for it, so there is no {dtype.upper()} roofline to draw. Pick another "
                               "precision, or a newer chip.")
    peak = acc.peak_flops(dtype)
    ridge = roofline.ridge_point(acc, dtype)
    bpe = units.bytes_per_element(dtype)
    gemm_i = roofline.matmul_intensity(n, n, n, bpe)
    ew_i = roofline.elementwise_intensity(bytes_per_element=bpe)
    xs = np.array(sorted([10 ** (e / 4) for e in range(-8, 17)] + [ridge]))     # the corner itself, drawn sharp
    verdict = roofline.bound(acc, gemm_i, dtype)
    chart = plotting.svg_chart(
        lines=[{"x": list(xs), "y": list(_tera(roofline.attainable_flops(acc, xs, dtype))),
                "label": f"{acc.name} {dtype.upper()} roofline"}],
        points=[{"x": gemm_i, "y": _tera(roofline.attainable_flops(acc, gemm_i, dtype)), "label": f"matmul n={n}",
                 "color": "#D55E00"},
                {"x": ew_i, "y": _tera(roofline.attainable_flops(acc, ew_i, dtype)), "label": "element-wise add",
                 "color": "#009E73"}],
        vlines=[{"x": ridge, "label": f"ridge {ridge:.0f}"}], xlog=True, ylog=True, xlim=(0.01, 1e4),
        ylim=(1e-3, 1e4), xlabel="arithmetic intensity (FLOP/byte)", ylabel="attainable TFLOP/s", legend="none",
        alt=(f"Roofline of the {acc.name} at {dtype.upper()}: a {n}-sized matmul at {gemm_i:.0f} FLOP/byte is "
             f"{verdict}; the ridge point is {ridge:.0f} FLOP/byte."))
    got = roofline.attainable_flops(acc, gemm_i, dtype)
    side = "below" if gemm_i < ridge else "above"
    head = _layout.verdict(
        f"Matmul n = {n:,}: {gemm_i:,.1f} FLOP/byte, {side} the ridge at {ridge:,.0f} → {verdict}: "
        f"{units.fmt_rate(got)}, {units.fmt_percent(got / peak)} of the {units.fmt_rate(peak)} dense peak.", None)
    tail = _layout.para(f"An element-wise add reaches {fmt_percent(roofline.fraction_of_peak(acc, ew_i, dtype), decimals=2)} of peak "
                        f"({ew_i:.3f} FLOP/byte).", small=True)
    return head + chart + tail


@widgets.explorer
def roofline_explorer():
    """Chapter 1: choose an accelerator and precision, move the matrix size, watch a matmul cross the ridge."""
    return widgets.explore(
        roofline_view,
        [widgets.Choice("accelerator", "Accelerator", {hardware.get(n).name: n for n in EXPLORER_ACCELERATORS},
                        value="H100-SXM"),
         widgets.Choice("dtype", "Precision", _EXPLORER_DTYPES, value="bf16"),
         widgets.Slider("n", "Matrix size n", [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192], value=256,
                        fmt=lambda v: f"{v:,}")],
        title="Roofline explorer: where does a matmul of size n sit?")


def _label(dtype: str, acc: Accelerator) -> str:
    """``fp64_tensor`` -> ``FP64 (Tensor Core)``: every peak names the unit it is for (``hardware.UNIT``); other
    vendors' matrix units are called matrix engines."""
    matrix = "Tensor Core" if acc.vendor == "NVIDIA" else "matrix engine"
    unit = matrix if hardware.UNIT[dtype] == "tensor" else "vector"
    return f"{dtype.split('_')[0].upper()} ({unit})"


def precision_view(accelerator, sparse) -> str:
    """HTML bars of ``accelerator``'s peak at every precision it has (dense, or with 2:4 sparsity), on one linear
    scale from zero, coloured by the unit that reaches each peak (vector units or Tensor Cores/matrix engines)."""
    acc, asked = hardware.get(accelerator), bool(sparse)
    sparse = asked and bool(acc.sparse_factor)   # no published 2:4 figure: the dense bars, and a note saying so
    rows = [(d, acc.peak_flops(d, sparse=sparse and d in hardware.SPARSE_DTYPES)) for d in acc.precisions()]
    matrix = "Tensor Cores" if acc.vendor == "NVIDIA" else "matrix engines"
    colours = {"vector": plotting.color(0), "tensor": plotting.color(1)}
    bars = [(_label(d, acc), _tera(v), colours["tensor" if hardware.UNIT[d] == "tensor" else "vector"])
            for d, v in rows]
    used = list(dict.fromkeys(hardware.UNIT[d] if hardware.UNIT[d] == "tensor" else "vector" for d, _ in rows))
    note = ("with 2:4 structured sparsity (Tensor Core formats only; FP64 and FP32 have none)" if sparse else
            "dense (no structured-sparsity figure is published for this part)" if asked and not sparse else "dense")
    chart = plotting.svg_hbars(
        bars, xlabel="peak TFLOP/s (TOPS for INT8)",
        unit_format=lambda v: f"{v:,.1f}" if v < 100 else f"{v:,.0f}",
        legend=[("vector units" if u == "vector" else matrix, colours[u]) for u in used],
        alt=f"{acc.name} peaks, {note}: " + "; ".join(f"{_label(d, acc)} {_tera(v):,.1f}" for d, v in rows))
    return f"<p>{html.escape(acc.name)}, {note}.</p>{chart}"


@widgets.explorer
def precision_explorer():
    """Chapter 1: the precision ladder of a chip, dense or sparse."""
    return widgets.explore(
        precision_view,
        [widgets.Choice("accelerator", "Accelerator", {hardware.get(n).name: n for n in EXPLORER_ACCELERATORS},
                        value="H100-SXM"),
         widgets.Toggle("sparse", "Counting", labels=["dense", "sparse (2:4)"])],
        title="The precision ladder")
