"""Views for chapter 1 (one chip): the spec sheet, the number-format table, the roofline figure and explorer, and
the precision ladder. Every number comes from :mod:`~chipchain.hardware`, :mod:`~chipchain.roofline` and
:mod:`~chipchain.numerics`; nothing here re-derives a formula.
"""
from __future__ import annotations

import html

from .. import _check, hardware, numerics, plotting, roofline, units, widgets
from .._i18n import gettext as _, has_cjk
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


def _then(first: str, second: str) -> str:
    """Two sentences in a row: a space between them after an English full stop, none after a Chinese one."""
    if not second:
        return first
    return first + ("" if has_cjk(first[-1:]) else " ") + second


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
        lambda: _("{link}, {bandwidth} bidirectional").format(link=acc.interconnect,
                                                               bandwidth=units.fmt_bandwidth(acc.interconnect_bandwidth)),
        "chip-to-chip bandwidth")
    add(acc.tdp, "Power (TDP)", lambda: str(units.fmt_power(acc.tdp)), "power (TDP)")
    for d in acc.precisions():
        unit = "TOPS" if d == "int8" else "TFLOP/s"
        rows.append((_("Peak {format}, dense").format(format=_label(d, acc)), f"{_tera(acc.peak_flops(d)):,.1f} {unit}"))
    rows.append(("Checked", _CHECKED[acc.checked]))
    rows.append(("Source", acc.source))
    if missing:
        rows.append(("Not in the catalog", _(", ").join(_(m) for m in missing)))
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
    for i, (acc, (_name, ridge)) in enumerate(zip(accs, ridges)):
        peak, bw = acc.peak_flops(dtype, sparse=sparse), acc.require("memory_bandwidth")
        xs = sorted(set(base) | ({ridge} if lo < ridge < hi else set()))
        ys = [float(v) for v in _tera(roofline.attainable_flops(acc, np.array(xs), dtype, sparse))]
        line_label = (_("{name} ({peak} TFLOP/s sparse, {bw} TB/s)") if sparse else
                      _("{name} ({peak} TFLOP/s dense, {bw} TB/s)"))
        lines.append({"x": xs, "y": ys, "color": plotting.color(i),
                      "label": line_label.format(name=acc.name, peak=f"{_tera(peak):,.0f}", bw=f"{bw / units.TB:.2f}")})
        if lo < ridge < hi:
            vlines.append({"x": ridge, "color": plotting.color(i),
                           "label": _("{name} ridge {ridge}").format(name=acc.name, ridge=f"{ridge:,.0f}")
                           if len(accs) > 1 else _("ridge {ridge}").format(ridge=f"{ridge:,.0f}")})
        summary.append(_("{name}: {peak} TFLOP/s, {bw} TB/s, ridge {ridge} FLOP/byte").format(
            name=acc.name, peak=f"{_tera(peak):,.1f}", bw=f"{bw / units.TB:.2f}", ridge=f"{ridge:,.0f}"))
    if measured is not None:
        label, m_peak, m_bw = measured
        m_peak, m_bw = _check.positive("measured peak_flops", m_peak), _check.positive("measured bandwidth", m_bw)
        ys = [float(v) for v in _tera(roofline.attainable(np.array(base), m_peak, m_bw))]
        lines.append({"x": base, "y": ys, "color": "#000", "dash": True, "label": str(label)})
        summary.append(_("{name}: {peak}, {bw}, ridge {ridge} FLOP/byte").format(
            name=_(str(label)), peak=units.fmt_rate(m_peak), bw=units.fmt_bandwidth(m_bw), ridge=f"{m_peak / m_bw:,.1f}"))
    pts = []
    for label, intensity in sorted((operators or {}).items(), key=lambda kv: kv[1]):
        intensity = _check.positive(f"operators[{label!r}]", intensity)
        pts.append((str(label), float(intensity),
                    float(_tera(roofline.attainable_flops(accs[0], intensity, dtype, sparse)))))
    all_y = [y for d in lines for y in d["y"]] + [y for _, _, y in pts]
    top = max(all_y)
    ylim = (max(min(all_y), top * 1e-7) / 1.5, top * 8)
    points = [{"x": i, "y": y, "label": l, "color": "#000"} for l, i, y in pts]
    where = _("Operators on the {name}'s roof: {points}.").format(name=accs[0].name, points=_("; ").join(
        _("{label} at {ai} FLOP/byte, {tflops} TFLOP/s").format(label=_(str(l)), ai=f"{i:,.2f}", tflops=f"{y:,.2f}")
        for l, i, y in pts)) if pts else ""
    summary_text = _("; ").join(summary)
    alt = _then((_("Log–log rooflines at {dtype} (sparse): {summary}.") if sparse else
                 _("Log–log rooflines at {dtype} (dense): {summary}.")).format(dtype=dtype.upper(),
                                                                              summary=summary_text), where)
    html = plotting.svg_chart(
        lines=lines, points=points, vlines=vlines, xlog=True, ylog=True, xlim=(lo, hi), ylim=ylim,
        xlabel="arithmetic intensity (FLOP/byte)",
        ylabel=(_("attainable {dtype} TFLOP/s (sparse)") if sparse else
                _("attainable {dtype} TFLOP/s (dense)")).format(dtype=dtype.upper()),
        height=340, alt=alt, title=title or "")
    if pts:          # the summary's full stop, then where the operators sit
        said = _then((_("Rooflines at {dtype} (sparse): {summary}.") if sparse else
                      _("Rooflines at {dtype} (dense): {summary}.")).format(dtype=dtype.upper(), summary=summary_text),
                     where)
    else:
        said = (_("Rooflines at {dtype} (sparse): {summary}") if sparse else
                _("Rooflines at {dtype} (dense): {summary}")).format(dtype=dtype.upper(), summary=summary_text)
    return Figure(html, said, {"ridges": ridges, "points": pts, "lines": [(d["label"], d["x"], d["y"]) for d in lines]})


def roofline_view(accelerator, dtype, n) -> str:
    """HTML for one view of the roofline explorer: the roofline of ``accelerator`` at ``dtype`` with a square
    n×n×n matmul and an element-wise add placed on it."""
    import numpy as np

    acc = hardware.get(accelerator)
    if dtype not in acc.precisions():          # a plain sentence, not the catalog's error (issue 27, reader #10)
        text = (_("The {name} has no {dtype} Tensor Cores: no {dtype} peak is published for it, so there is no "
                  "{dtype} roofline to draw. Pick another precision, or a newer chip.") if acc.vendor == "NVIDIA" else
                _("The {name} has no {dtype} matrix engines: no {dtype} peak is published for it, so there is no "
                  "{dtype} roofline to draw. Pick another precision, or a newer chip."))
        return widgets.message(text.format(name=acc.name, dtype=dtype.upper()))
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
        points=[{"x": gemm_i, "y": _tera(roofline.attainable_flops(acc, gemm_i, dtype)),
                 "label": _("matmul n={n}").format(n=n),
                 "color": "#D55E00"},
                {"x": ew_i, "y": _tera(roofline.attainable_flops(acc, ew_i, dtype)), "label": "element-wise add",
                 "color": "#009E73"}],
        vlines=[{"x": ridge, "label": _("ridge {ridge}").format(ridge=f"{ridge:.0f}")}], xlog=True, ylog=True,
        xlim=(0.01, 1e4),
        ylim=(1e-3, 1e4), xlabel="arithmetic intensity (FLOP/byte)", ylabel="attainable TFLOP/s", legend="none",
        alt=_("Roofline of the {name} at {dtype}: a {n}-sized matmul at {ai} FLOP/byte is {verdict}; the ridge point "
              "is {ridge} FLOP/byte.").format(name=acc.name, dtype=dtype.upper(), n=n, ai=f"{gemm_i:.0f}",
                                              verdict=_(verdict), ridge=f"{ridge:.0f}"))
    got = roofline.attainable_flops(acc, gemm_i, dtype)
    said = (_("Matmul n = {n}: {ai} FLOP/byte, below the ridge at {ridge} → memory-bound: {got}, {pct} of the "
              "{peak} dense peak.") if gemm_i < ridge else        # roofline.bound's test: below it, memory-bound
            _("Matmul n = {n}: {ai} FLOP/byte, above the ridge at {ridge} → compute-bound: {got}, {pct} of the "
              "{peak} dense peak."))
    head = _layout.verdict(said.format(n=f"{n:,}", ai=f"{gemm_i:,.1f}", ridge=f"{ridge:,.0f}", got=units.fmt_rate(got),
                                       pct=units.fmt_percent(got / peak), peak=units.fmt_rate(peak)), None)
    tail = _layout.para(_("An element-wise add reaches {pct} of peak ({ai} FLOP/byte).").format(
        pct=fmt_percent(roofline.fraction_of_peak(acc, ew_i, dtype), decimals=2), ai=f"{ew_i:.3f}"), small=True)
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
    """``fp64_tensor`` -> ``FP64 (Tensor Core)``, in the reader's language: every peak names the unit it is for
    (``hardware.UNIT``); other vendors' matrix units are called matrix engines."""
    matrix = _("{format} (Tensor Core)") if acc.vendor == "NVIDIA" else _("{format} (matrix engine)")
    return (matrix if hardware.UNIT[dtype] == "tensor" else _("{format} (vector)")).format(
        format=dtype.split("_")[0].upper())


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
        alt=_("{name} peaks, {note}: {peaks}").format(name=acc.name, note=_(note), peaks=_("; ").join(
            f"{_label(d, acc)} {_tera(v):,.1f}" for d, v in rows)))
    return f"<p>{html.escape(_('{name}, {note}.').format(name=acc.name, note=_(note)))}</p>{chart}"


@widgets.explorer
def precision_explorer():
    """Chapter 1: the precision ladder of a chip, dense or sparse."""
    return widgets.explore(
        precision_view,
        [widgets.Choice("accelerator", "Accelerator", {hardware.get(n).name: n for n in EXPLORER_ACCELERATORS},
                        value="H100-SXM"),
         widgets.Toggle("sparse", "Counting", labels=["dense", "sparse (2:4)"])],
        title="The precision ladder")
