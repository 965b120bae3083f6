"""Views for chapter 12 (inference and the future): serving tables, the serving explorer, edge devices, Moore's law.

Every number comes from :mod:`chipchain.inference` (per-token equations), :mod:`chipchain.serving` (a step on an
accelerator), :mod:`chipchain.devices` and :mod:`chipchain.moore`; this module only arranges them.
"""
from __future__ import annotations

from .. import _check, assumptions, devices, hardware, inference, models, moore, plotting, roofline, serving, units, widgets
from . import _layout
from ..units import fmt_percent
from ._figure import Figure
from .._i18n import gettext as _

__all__ = ["model_table", "batch_table", "serving_table", "quantization_table", "device_table", "edge_fit_table",
           "process_node_table", "packaging_table", "decode_roofline_points", "decode_roofline_figure",
           "moore_projection_figure",
           "serving_explorer"]

#: what every table prints in place of a throughput for a configuration whose weights + KV cache do not fit
NO_FIT = "does not fit"


def model_table(names=None):
    """The models (all of ``data/models.csv`` unless ``names`` are given) as a pandas DataFrame: parameters in
    billions, attention shape, and the KV bytes per token in BF16 (:func:`chipchain.inference.model_kv_bytes_per_token`).

    >>> model_table().loc["Llama-3.1-405B", "kv_KB_per_token_bf16"]
    np.float64(516.096)
    """
    import pandas as pd

    rows = []
    for m in map(models.get, models.names() if names is None else names):
        rows.append({"model": m.name, "params_B": m.params / 1e9, "active_B": m.active_params / 1e9,
                     "layers": m.layers, "hidden": m.hidden, "heads": m.heads, "kv_heads": m.kv_heads,
                     "head_dim": m.head_dim, "attention": m.attention.upper(),
                     "kv_KB_per_token_bf16": inference.model_kv_bytes_per_token(m, "bf16") / 1e3,
                     "checked": m.checked, "source": m.source})
    return pd.DataFrame(rows).set_index("model")


def batch_table(accelerator, model, context, batches=(1, 8, 64, 256, 1024), weight_dtype="bf16",
                kv_dtype="bf16", n_gpus=1):
    """Decode at several batch sizes as a pandas DataFrame: intensity, bound, tokens/s (all sequences and per
    sequence), share of peak FLOP/s, and whether weights + KV cache fit in the GPUs' memory. A batch that does not
    fit gets "does not fit" in place of every tokens/s figure.

    >>> t = batch_table("H100", "Llama-3-8B", 1024, (1, 64, 1024))
    >>> t.loc[64, "bound"], t.loc[1024, "tokens/s (all)"]
    ('memory-bound', 'does not fit')
    """
    import pandas as pd

    rows = []
    for b in batches:
        d = serving.decode(accelerator, model, context, b, weight_dtype, kv_dtype, n_gpus)
        rows.append({"batch": d.batch, "FLOP/byte": round(d.intensity, 1), "bound": d.bound,
                     "tokens/s (all)": round(d.tokens_per_second) if d.fits else NO_FIT,
                     "tokens/s (each)": round(d.per_sequence_tokens_per_second, 1) if d.fits else NO_FIT,
                     "share of peak": str(fmt_percent(d.utilisation, decimals=1)),
                     "fits": "yes" if d.fits else _("no: needs {bytes}").format(bytes=units.fmt_bytes(d.memory_needed))})
    return pd.DataFrame(rows).set_index("batch")


def serving_table(accelerators, model, context, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=None):
    """One model served on each accelerator at the largest batch its memory holds
    (:func:`chipchain.inference.max_batch`): memory, bandwidth, batch, and the decode tokens/s bounds — or
    "does not fit" where even one sequence's weights and KV cache exceed the usable memory.

    >>> int(serving_table(["H100", "B200"], "Llama-3-70B", 4096, "fp8").loc["B200", "max batch"])
    77
    """
    import pandas as pd

    rows = []
    for a in accelerators:
        acc = hardware.get(a)
        b = inference.max_batch(acc.require("memory_bytes"), model, context, weight_dtype, kv_dtype, usable_fraction)
        row = {"accelerator": acc.name, "memory GiB": acc.memory_bytes / units.GiB,
               "bandwidth TB/s": acc.require("memory_bandwidth") / units.TB, "max batch": b}
        if b:
            d = serving.decode(acc, model, context, b, weight_dtype, kv_dtype)
            row.update({"tokens/s (all)": round(d.tokens_per_second), "tokens/s (each)": round(
                d.per_sequence_tokens_per_second), "bound": d.bound})
        else:
            row.update({"tokens/s (all)": NO_FIT, "tokens/s (each)": NO_FIT, "bound": NO_FIT})
        rows.append(row)
    return pd.DataFrame(rows).set_index("accelerator")


def quantization_table(accelerator, model, context, batch=1, dtypes=("bf16", "fp8", "int8", "int4"),
                       kv_dtype="bf16"):
    """Weights stored at each precision: their size, the compute precision used, and the decode tokens/s bound
    relative to BF16 (KV cache kept at ``kv_dtype``). A pandas DataFrame; a precision whose weights and KV cache
    do not fit the card shows "does not fit" instead of a speed.

    >>> quantization_table("A100", "Llama-2-7B", 1024).loc["int4", "compute"]
    'bf16'
    >>> quantization_table("A100", "Llama-2-70B", 1024).loc[["bf16", "int4"], "tokens/s"].tolist()
    ['does not fit', 59]
    """
    import pandas as pd

    base = serving.decode(accelerator, model, context, batch, "bf16", kv_dtype)
    rows = []
    for d in dtypes:
        e = serving.decode(accelerator, model, context, batch, d, kv_dtype)
        rows.append({"weights": d, "GB": round(inference.weight_bytes(model, d) / 1e9, 2), "compute": e.dtype,
                     "tokens/s": round(e.tokens_per_second) if e.fits else NO_FIT,
                     "speed-up vs BF16": round(e.tokens_per_second / base.tokens_per_second, 2)
                     if e.fits and base.fits else "—", "bound": e.bound})
    return pd.DataFrame(rows).set_index("weights")


def device_table(asics=("Groq-LPU", "Cerebras-WSE-3")):
    """Serving devices as a pandas DataFrame in human units (memory in GiB, as it is built; GB/s; W; a missing power
    figure is left empty):
    the edge devices of :mod:`chipchain.devices`, then the inference ASICs ``asics`` from the accelerator catalog
    (:mod:`chipchain.hardware`, where their specs live).

    >>> float(device_table().loc["Jetson-Orin-Nano-8GB", "memory_GiB"])
    8.0
    """
    import pandas as pd

    parts = [(d, d.kind, d.power) for d in devices.all_devices()]
    parts += [(a, "inference-asic", a.tdp) for a in map(hardware.get, asics)]
    rows = [{"device": d.name, "kind": kind, "memory_GiB": round(d.memory_bytes / units.GiB, 2),
             "bandwidth_GBps": d.memory_bandwidth / units.GBPS, "power_W": power if power else None,
             "checked": d.checked, "source": d.source} for d, kind, power in parts]
    return pd.DataFrame(rows).set_index("device")


def edge_fit_table(memory_bytes=None, names=("Llama-2-7B", "Llama-3-8B", "Llama-2-13B", "Llama-2-70B"),
                   dtypes=("bf16", "int8", "int4"), context=4096, usable_fraction=None):
    """Which models fit on an edge device: :func:`chipchain.inference.memory_needed` for one ``context``-token
    conversation (16-bit cache) against ``usable_fraction`` of each memory size (by default, each memory size of
    an edge device in :mod:`chipchain.devices`). A pandas DataFrame of GB needed with a ✓ / ✗ per memory size.

    >>> t = edge_fit_table()
    >>> t.loc[("Llama-3-8B", "int4"), "8 GiB = 8.59 GB"], t.loc[("Llama-3-8B", "bf16"), "16 GiB = 17.2 GB"]
    ('✓', '✗')
    """
    import pandas as pd

    if memory_bytes is None:
        memory_bytes = sorted({d.memory_bytes for d in devices.all_devices() if d.kind == "edge"})
    mems = [_check.positive("memory_bytes", m) for m in memory_bytes]
    f = _check.fraction("usable_fraction", assumptions.value("edge_usable_memory_fraction") if usable_fraction is None
                        else usable_fraction)
    rows = []
    for m in map(models.get, names):
        for d in dtypes:
            need = inference.memory_needed(m, context, 1, d, "bf16")
            row = {"model": m.name, "weights": d, "GB needed": round(need / 1e9, 1)}
            for mem in mems:
                row[str(units.fmt_capacity(mem))] = "✓" if need <= f * mem else "✗"
            rows.append(row)
    return pd.DataFrame(rows).set_index(["model", "weights"])


def process_node_table():
    """TSMC's leading-edge nodes (:mod:`chipchain.moore`) with the year each entered volume production and the
    gap since the previous node, as a pandas DataFrame.

    >>> process_node_table()["gap_years"].round(1).tolist()[1:]
    [2.0, 2.6, 2.9]
    """
    import pandas as pd

    nodes = moore.all_process_nodes()
    gaps = [float("nan"), *moore.node_intervals().values()]
    rows = [{"node": n.name, "foundry": n.foundry, "volume_year": n.volume_year, "checked": n.checked,
             "source": n.source, "notes": n.notes, "gap_years": g} for n, g in zip(nodes, gaps)]
    return pd.DataFrame(rows).set_index("node")


def decode_roofline_points(accelerator, model, context, batches=(1, 8, 64, 512), weight_dtype="bf16",
                           kv_dtype="bf16") -> dict:
    """Labels → decode intensity (FLOP/byte) for several batch sizes, plus prefill of ``context`` tokens: the
    ``operators`` argument of :func:`chipchain.views.chip.plot_roofline`. The intensities do not depend on the
    ``accelerator``; whether the batch fits does: a batch whose weights + KV cache exceed one card's memory is
    labelled "does not fit" with the memory it would need.

    >>> {k: round(v) for k, v in decode_roofline_points("H100", "Llama-3-8B", 2048, (1, 64, 512)).items()}
    {'decode, batch 1': 1, 'decode, batch 64': 33, 'decode, batch 512 (does not fit: needs 153 GB, card holds 80 GiB = 85.9 GB)': 57, 'prefill 2048 tokens': 2082}
    """
    acc = hardware.get(accelerator)
    have = acc.require("memory_bytes")
    points = {}
    for b in batches:
        need = inference.memory_needed(model, context, b, weight_dtype, kv_dtype)
        label = (_("decode, batch {b}").format(b=b) if need <= have else
                 _("decode, batch {b} (does not fit: needs {need}, card holds {have})").format(
                     b=b, need=units.fmt_bytes(need), have=units.fmt_capacity(have)))
        points[label] = inference.decode_intensity(model, context, b, weight_dtype, kv_dtype)
    points[_("prefill {context} tokens").format(context=context)] = inference.prefill_intensity(model, context, 1, weight_dtype, kv_dtype)
    return points


def decode_roofline_figure(accelerator, model, context, batches=(1, 8, 64, 512), dtype="bf16"):
    """Prefill and decode of ``model`` on ``accelerator``'s roofline (dense peak at ``dtype``, HBM bandwidth) as a
    chart-system figure (:class:`~chipchain.views._figure.Figure`): the roofline, its ridge point
    (:func:`chipchain.roofline.ridge_point`), and the points of :func:`decode_roofline_points` at their attainable
    throughput; a batch whose weights and KV cache do not fit one card is drawn grey and says so.

    >>> f = decode_roofline_figure("H100", "Llama-3-8B", 2048)
    >>> round(f.data["ridge"]), [round(i) for _, i, _ in f.data["points"]]
    (295, [1, 8, 33, 57, 2082])
    """
    import numpy as np


    acc, m = hardware.get(accelerator), models.get(model)
    peak, bw = acc.peak_flops(dtype), acc.require("memory_bandwidth")
    ridge = roofline.ridge_point(acc, dtype)
    found = decode_roofline_points(acc.name, m.name, context, batches, dtype, dtype)
    pts = []
    have = acc.require("memory_bytes")
    for (label, intensity), b in zip(found.items(), list(batches) + [None]):
        fits = b is None or inference.memory_needed(m, context, b, dtype, dtype) <= have   # as the points say
        short = (_("prefill, {context} tokens").format(context=f"{context:,}") if b is None else
                 _("batch {b}").format(b=f"{b:,}") if fits else _("batch {b}: does not fit").format(b=f"{b:,}"))
        pts.append((short, intensity, fits, float(roofline.attainable_flops(acc, intensity, dtype)) / units.TFLOPS,
                    b is None))
    lo = min(0.3, min(p[1] for p in pts) / 2)
    hi = max(1e4, max(p[1] for p in pts) * 3)
    xs = sorted({float(x) for x in np.logspace(np.log10(lo), np.log10(hi), 61)} | {ridge})
    ys = [float(v) / units.TFLOPS for v in roofline.attainable_flops(acc, np.array(xs), dtype)]
    colour = {True: plotting.color(1), False: "#888"}
    points = [{"x": i, "y": y, "label": s, "color": plotting.color(2) if pre else colour[f]}
              for s, i, f, y, pre in pts]
    decode = [p for p in pts if not p[4]]
    alt = (_("Log–log roofline of the {acc} at {dtype}: a bandwidth slope of {bw} TB/s up to a flat roof of {peak} "
             "TFLOP/s, meeting at the ridge, {ridge} FLOP per byte. ").format(
               acc=acc.name, dtype=dtype.upper(), bw=f"{bw / units.TB:.2f}", peak=f"{peak / units.TFLOPS:,.0f}",
               ridge=f"{ridge:,.0f}")
           + _("; ").join((_("{label}: {ai} FLOP per byte, {tflops} TFLOP/s") if pre else
                           _("decode at {label}: {ai} FLOP per byte, {tflops} TFLOP/s")).format(
                               label=s, ai=f"{i:,.1f}", tflops=f"{y:,.1f}") for s, i, _f, y, pre in pts) + _(". ")
           + (_("Every decode point lies left of the ridge, memory-bound.") if all(p[1] < ridge for p in decode)
              else ""))
    html = plotting.svg_chart(
        lines=[{"x": xs, "y": ys, "label": _("{acc} {dtype} roofline ({peak} TFLOP/s dense, {bw} TB/s)").format(
            acc=acc.name, dtype=dtype.upper(), peak=f"{peak / units.TFLOPS:,.0f}", bw=f"{bw / units.TB:.2f}")}],
        points=points, vlines=[{"x": ridge, "label": _("ridge {ridge} FLOP/byte").format(ridge=f"{ridge:,.0f}")}],
        xlog=True, ylog=True, xlim=(lo, hi), ylim=(min(ys) / 1.5, peak / units.TFLOPS * 8), xlabel="arithmetic intensity (FLOP/byte)",
        ylabel=_("attainable {dtype} TFLOP/s (dense)").format(dtype=dtype.upper()), height=340,
        title=_("{model} on one {acc}, {context}-token context").format(model=m.name, acc=acc.name,
                                                                        context=f"{context:,}"), alt=alt)
    text = (f"{m.name} on the {acc.name} {dtype.upper()} roofline (ridge {ridge:,.0f} FLOP/byte): "
            + "; ".join(f"{'' if pre else 'decode '}{s}: {i:,.1f} FLOP/byte -> {y:,.1f} TFLOP/s"
                       for s, i, _f, y, pre in pts))
    return Figure(html, text, {"ridge": ridge, "peak_tflops": peak / units.TFLOPS, "bandwidth": bw,
                               "points": [(s, i, y) for s, i, _f, y, _p in pts], "line": (xs, ys)})


def _multi_die(acc) -> str:
    """"yes" when the catalog row's notes record more than one logic die (two dies, chiplets); "no" when the row
    gives the area of one whole die; otherwise "not recorded" (the catalog has no die-count column)."""
    notes = acc.notes.lower()
    if any(word in notes for word in ("two dies", "chiplet", "dies as one")):
        return "yes"
    if acc.die_area_mm2 and "compute die" not in notes:
        return "no"
    return "not recorded"


def packaging_table(names=None):
    """How each catalog accelerator (:mod:`chipchain.hardware`) is built, from its catalog row: the memory type,
    whether that memory is stacked DRAM (HBM, 3D-stacked dies beside the logic on an interposer or bridge) or not
    (GDDR, LPDDR, DDR, on-chip SRAM), and whether the row records more than one logic die (chiplets: "yes"), one
    die of a stated area ("no"), or neither ("not recorded"). A pandas DataFrame.

    >>> t = packaging_table()
    >>> t.loc["RTX-4090", "stacked DRAM (HBM)"], t.loc["B200", "multi-die logic"], t.loc["H100-SXM", "multi-die logic"]
    ('no', 'yes', 'no')
    """
    import pandas as pd

    rows = []
    for acc in map(hardware.get, hardware.names() if names is None else names):
        kind = acc.memory_type or "—"
        rows.append({"accelerator": acc.name, "market": acc.market, "memory": kind,
                     "stacked DRAM (HBM)": "yes" if str(kind).upper().startswith("HBM") else "no",
                     "multi-die logic": _multi_die(acc)})
    return pd.DataFrame(rows).set_index("accelerator")


def moore_projection_figure(doubling_times=(2.0, 3.0, 4.0), base_year=2015.0, year_range=(2005.0, 2035.0)):
    """Relative transistor budget per chip (``base_year`` = 1) under several doubling times
    (:func:`chipchain.moore.doubling_projection`), with TSMC's node dates (:func:`chipchain.moore.all_process_nodes`,
    volume production) marked — a chart-system figure (:class:`~chipchain.views._figure.Figure`). A projection
    with a stated assumption (growth follows the 2-year doubling up to ``base_year`` and each line's doubling time
    after it), not a fit to data.

    >>> f = moore_projection_figure()
    >>> [(T, round(v)) for T, v in f.data["at_end"]]
    [(2.0, 1024), (3.0, 102), (4.0, 32)]
    """
    lo = _check.number("year_range[0]", year_range[0], allow_negative=True)
    hi = _check.number("year_range[1]", year_range[1], allow_negative=True)
    if lo >= hi:
        raise ValueError(f"year_range must be increasing, got {year_range!r}")
    t0 = _check.number("base_year", base_year, allow_negative=True)
    if not lo <= t0 <= hi:
        raise ValueError(f"base_year must lie in year_range {year_range!r}, got {base_year!r}")
    Ts = [_check.positive("doubling_times", T) for T in doubling_times]
    if not Ts:
        raise ValueError("doubling_times must hold at least one doubling time")
    n = 60
    before = [lo + (t0 - lo) * k / n for k in range(n + 1)]
    after = [t0 + (hi - t0) * k / n for k in range(n + 1)]
    lines = [{"x": before, "y": [float(v) for v in moore.doubling_projection(before, 2.0, t0)], "color": "#000",
              "label": _("2-year doubling until {year} (assumed)").format(year=f"{t0:.0f}")}]
    ends = []
    for i, T in enumerate(Ts):
        ys = [float(v) for v in moore.doubling_projection(after, T, t0)]
        lines.append({"x": after, "y": ys, "color": plotting.color(i), "dash": T != 2.0,
                      "label": _("doubling every {T} years after {year}").format(T=f"{T:g}", year=f"{t0:.0f}")})
        ends.append((T, ys[-1]))
    nodes = [nd for nd in moore.all_process_nodes() if lo <= nd.volume_year <= hi]
    vlines = [{"x": nd.volume_year, "label": f"TSMC {nd.name}", "color": "#777"} for nd in nodes]
    alt = (_("Transistors per chip relative to {year} on a log axis from {lo} to {hi}: ").format(
               year=f"{t0:.0f}", lo=f"{lo:.0f}", hi=f"{hi:.0f}")
           + _("; ").join(_("doubling every {T} years reaches {x}× by {hi}").format(T=f"{T:g}", x=f"{v:,.0f}",
                                                                                  hi=f"{hi:.0f}") for T, v in ends)
           + _("; TSMC's nodes in volume production marked: ")
           + ", ".join(f"{nd.name} ({int(nd.volume_year)})" for nd in nodes) + _("."))
    html = plotting.svg_chart(lines=lines, vlines=vlines, ylog=True, xlim=(lo, hi), xformat=lambda v: f"{v:.0f}",
                              xlabel="year", ylabel=_("transistors per chip, relative to {year} (×)").format(
                                  year=f"{t0:.0f}"), alt=alt,
                              height=340)
    text = "; ".join(f"every {T:g} years: {v:,.0f}× by {hi:.0f}" for T, v in ends)
    return Figure(html, text, {"at_end": ends, "nodes": [(nd.name, nd.volume_year) for nd in nodes]})


# --- the explorable -------------------------------------------------------------------------------------------------

_EXPLORER_MODELS = {"Llama 3 8B": "Llama-3-8B", "Llama 2 70B": "Llama-2-70B", "DeepSeek-V3 (MoE, MLA)": "DeepSeek-V3"}
_EXPLORER_ACCS = {"A100 80GB": "A100-SXM-80GB", "H100 SXM": "H100-SXM", "B200 (estimate)": "B200"}
_CURVE_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def serving_view(model, batch, context, precision, accelerator) -> str:
    """One view of :func:`serving_explorer`: the roofline with decode and prefill placed on it, decode throughput
    against batch, and the bounds as headline figures (an HTML string)."""
    m, acc = models.get(model), hardware.get(accelerator)
    kv_dtype = "bf16" if precision == "bf16" else "fp8"
    n = serving.gpus_to_hold(acc, m, context, batch, precision, kv_dtype)
    d = serving.decode(acc, m, context, batch, precision, kv_dtype, n)
    p = serving.prefill(acc, m, context, 1, precision, kv_dtype, n)
    peak, bw = acc.peak_flops(d.dtype), acc.require("memory_bandwidth")
    xs = sorted([10 ** (k / 4) for k in range(-4, 17)] + [peak / bw])      # the corner itself, drawn sharp
    roof = [roofline.attainable(x, peak, bw) / units.TFLOPS for x in xs]
    curve = [{"x": xs, "y": roof, "label": _("{acc} roof ({dtype})").format(acc=acc.name, dtype=d.dtype.upper())}]
    pts = [{"x": d.intensity, "y": d.utilisation * peak / units.TFLOPS,
            "label": _("decode ×{batch}").format(batch=batch), "color": "#D55E00"},
           {"x": p.intensity, "y": p.utilisation * peak / units.TFLOPS, "label": "prefill", "color": "#0072B2"}]
    chart = plotting.svg_chart(
        lines=curve, points=pts, vlines=[{"x": d.ridge, "label": _("ridge {ridge}").format(ridge=f"{d.ridge:.0f}")}],
        xlog=True, ylog=True,
        xlim=(0.1, 1e4), ylim=(peak / units.TFLOPS / 2e3, peak / units.TFLOPS * 2), xlabel="arithmetic intensity (FLOP/byte)",
        ylabel="attainable TFLOP/s per GPU", height=260, legend="none",
        title=_("Decode and prefill on the {acc} roofline ({dtype})").format(acc=acc.name, dtype=d.dtype.upper()),
        alt=_("Roofline of the {acc}: decode at batch {batch} sits at {ai} FLOP/byte ({bound}); prefill of {context} "
              "tokens at {pai} FLOP/byte ({pbound}).").format(
                  acc=acc.name, batch=batch, ai=f"{d.intensity:.1f}", bound=_(d.bound), context=context,
                  pai=f"{p.intensity:.0f}", pbound=_(p.bound)))
    fit = [e for e in (serving.decode(acc, m, context, b, precision, kv_dtype, n) for b in _CURVE_BATCHES) if e.fits]
    tps = [e.tokens_per_second for e in fit]
    batch_chart = plotting.svg_chart(
        lines=[{"x": [e.batch for e in fit], "y": tps,
                "label": _("decode tokens/s on {n} GPU(s), batches that fit").format(n=n)}],
        points=[{"x": batch, "y": d.tokens_per_second, "label": _("batch {b}").format(b=batch), "color": "#D55E00"}],
        xlog=True, ylog=True, xlim=(1, 1024), ylim=(min(tps) / 2, max(tps) * 2),
        xlabel="batch (sequences decoded together)", ylabel="decode tokens/s, all sequences",
        xticks=[(b, f"{b:,}") for b in (1, 4, 16, 64, 256, 1024)], legend="none",
        title=(_("Decode throughput against batch on {n} GPUs (batches that fit)") if n > 1 else
               _("Decode throughput against batch on {n} GPU (batches that fit)")).format(n=n),
        height=220, alt=_("Aggregate decode throughput rises with batch from {lo} to {hi} tokens/s; at batch {batch} "
                          "it is {tps}.").format(lo=f"{tps[0]:,.0f}", hi=f"{tps[-1]:,.0f}", batch=batch,
                                                 tps=f"{d.tokens_per_second:,.0f}"))
    cards = _layout.headline([
        ("GPUs to hold weights + KV cache", f"{n} × {acc.name}",
         _("weights {w}, KV cache {kv}").format(
             w=units.fmt_bytes(inference.weight_bytes(m, precision)),
             kv=units.fmt_bytes(inference.kv_cache_bytes(m, context, batch, kv_dtype)))),
        ("decode, all sequences", _("{n} tokens/s").format(n=f"{d.tokens_per_second:,.0f}"),
         _("{n} per sequence (upper bound)").format(n=f"{d.per_sequence_tokens_per_second:,.0f}")),
        ("decode is", d.bound, _("{ai} vs ridge {ridge} FLOP/byte; {pct} of peak FLOP/s").format(
            ai=f"{d.intensity:,.1f}", ridge=f"{d.ridge:,.0f}", pct=units.fmt_percent(d.utilisation))),
        (_("prefill of {n} tokens").format(n=f"{context:,}"), str(units.fmt_duration(p.seconds)), p.bound)])
    head = _layout.para(_("{model}, {wdtype} weights, {kvdtype} KV cache, batch {batch}, context {context} tokens — "
                          "roofline bounds, ideal tensor parallelism.").format(
        model=m.name, wdtype=precision.upper(), kvdtype=kv_dtype.upper(), batch=f"{batch:,}", context=f"{context:,}"))
    return head + cards + chart + batch_chart


@widgets.explorer
def serving_explorer():
    """Prefill and decode on the roofline: model × batch × context × precision × accelerator → the tokens/s bound,
    which roof binds, and how many GPUs the weights and KV cache need (3 × 4 × 2 × 3 × 3 = 216 views)."""
    return widgets.explore(serving_view, [
        widgets.Choice("model", "Model", _EXPLORER_MODELS, value="Llama-3-8B"),
        widgets.Slider("batch", "Batch", [1, 16, 128, 1024], value=1, fmt=lambda v: f"{v:,}"),
        widgets.Slider("context", "Context (tokens)", [2048, 32768], value=2048, fmt=lambda v: f"{v:,}"),
        widgets.Choice("precision", "Weights", {"BF16": "bf16", "FP8": "fp8", "INT4 (weight-only)": "int4"},
                       value="bf16"),
        widgets.Choice("accelerator", "Accelerator", _EXPLORER_ACCS, value="H100-SXM"),
    ], title="Serving on the roofline: which roof binds?")
