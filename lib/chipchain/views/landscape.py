"""Views for chapter 2 (the chip landscape): the factions table, the headline-vs-matched table, the generation
table and figure, the evaluation and score tables, and the two explorers. Every number comes from
:mod:`chipchain.landscape` and :mod:`chipchain.hardware`; nothing here re-derives a formula.
"""
from __future__ import annotations

import math

from .. import _check, hardware, landscape, plotting, tables, units, widgets
from .._i18n import gettext as _
from . import _layout
from ._figure import Figure
from ..units import fmt_percent

__all__ = ["factions", "headline_table", "generation_table", "fit_table", "generation_growth_figure", "evaluation_table",
           "score_table", "compare_view", "compare_explorer", "scoring_explorer", "COMPARE_NVIDIA",
           "COMPARE_RIVALS"]

#: the parts the comparison explorer offers on each side (catalog names)
COMPARE_NVIDIA = ("A100-SXM-80GB", "H100-SXM", "B200")
COMPARE_RIVALS = ("MI300X", "TPU-v5p", "Ascend-910B", "RTX-4090", "H20")


def factions():
    """The chip factions as a DataFrame: what each bets on and its weakness, with catalog figures of its members.

    Columns: ``examples``, ``bet``, ``weakness``, ``members`` (catalog names), ``best dense 16-bit TFLOPS`` and
    ``largest memory GiB`` among the members (blank where the catalog has no figure), ``source``, ``checked``.
    Source: seed 000 §2 (the faction table, ``data/factions.csv``), figures from ``data/accelerators.csv``.

    >>> df = factions()
    >>> float(df.loc["Second source", "largest memory GiB"])
    192.0
    """
    import pandas as pd

    rows = []
    for r in landscape.factions():
        members = [hardware.get(n) for n in r["catalog"].split(";") if n]
        peaks = [a.peaks.get("bf16") or a.peaks.get("fp16") for a in members]
        peaks = [p for p in peaks if p]
        mems = [a.memory_bytes for a in members if a.memory_bytes]
        rows.append({"faction": r["faction"], "examples": r["examples"], "bet": r["bet"], "weakness": r["weakness"],
                     "members": ", ".join(a.name for a in members),
                     "best dense 16-bit TFLOPS": max(peaks) / units.TERA if peaks else math.nan,
                     "largest memory GiB": max(mems) / units.GiB if mems else math.nan,
                     "source": r["source"], "checked": r["checked"]})
    return pd.DataFrame(rows).set_index("faction")


def headline_table(accelerators=("A100-SXM-80GB", "H100-SXM", "B200", "MI300X", "TPU-v5p", "Ascend-910B",
                                 "Gaudi-3", "Trainium2"), dtype="bf16"):
    """Each part's headline figure (:func:`~chipchain.landscape.headline_peak`) beside its dense ``dtype`` peak and
    the ratio of the two, as a DataFrame indexed by the names given.

    >>> headline_table(("H100",)).loc["H100", "headline"]
    '3,958 (sparse FP8)'
    """
    import pandas as pd

    rows = []
    for a in accelerators:
        head = landscape.headline_peak(a)
        matched = landscape.matched_peak(a, dtype)
        rows.append({"chip": a if isinstance(a, str) else a.name,
                     "headline": f"{head.peak_flops / units.TERA:,.0f} ({_convention(head.sparse, head.dtype)})",
                     f"dense {dtype.upper()}": matched / units.TERA, "inflation": head.peak_flops / matched})
    return pd.DataFrame(rows).set_index("chip")


def generation_table(names=landscape.NVIDIA_GENERATIONS, dtype="bf16"):
    """Compute, memory capacity and bandwidth of successive parts, and each as a multiple of the first part.

    Args: ``names`` catalog names in order; ``dtype`` for the (dense) peak. Returns a DataFrame indexed by name with
    ``year``, ``TFLOPS``, ``memory GiB``, ``bandwidth TB/s``, ``bytes per FLOP`` (bandwidth / peak) and the three
    ``x first`` growth columns. Source: catalog rows (B200 per-GPU figures are estimates from the DGX B200 total).

    >>> t = generation_table(("H100", "B200"))
    >>> t.loc["B200", ["memory x first", "bandwidth x first"]].round(2).tolist()
    [2.25, 2.39]
    """
    import pandas as pd

    accs = [hardware.get(n) for n in names]
    if len(accs) < 2:
        raise ValueError(f"names must list at least two parts, got {names!r}")
    rows = []
    for a in accs:
        rows.append({"name": a.name, "year": a.year, "TFLOPS": a.peak_flops(dtype) / units.TERA,
                     "memory GiB": a.require("memory_bytes") / units.GiB,
                     "bandwidth TB/s": a.require("memory_bandwidth") / units.TB,
                     "bytes per FLOP": a.memory_bandwidth / a.peak_flops(dtype)})
    df = pd.DataFrame(rows).set_index("name")
    for col, new in (("TFLOPS", "compute x first"), ("memory GiB", "memory x first"),
                     ("bandwidth TB/s", "bandwidth x first")):
        df[new] = df[col] / df[col].iloc[0]
    return df


def fit_table(needs, names=("H100", "H200", "B200", "MI300X")):
    """What is left on one card after each cumulative need, as a table for readers.

    ``needs``: a mapping label → bytes, in order (each row adds to the ones before it, e.g. weights, then a KV
    cache). Capacities are the catalog's binary figures (``memory_bytes``). Columns: ``memory`` (shown as
    ``80 GiB = 85.9 GB``) and one ``left after <label>`` per need, "short by …" where it does not fit.

    >>> fit_table({"BF16 weights": 140e9}).loc["H200", "left after BF16 weights"]
    '11.4 GB'
    """
    import pandas as pd

    if not isinstance(needs, dict) or not needs:
        raise ValueError(f"needs must be a non-empty mapping of label to bytes, got {needs!r}")
    sizes = {label: _check.nonnegative(f"needs[{label!r}]", v) for label, v in needs.items()}
    rows = []
    for n in names:
        cap = hardware.get(n).require("memory_bytes")
        row, used = {"card": hardware.get(n).name, "memory": str(units.fmt_capacity(cap))}, 0.0
        for label, size in sizes.items():
            used += size
            left = cap - used
            row[f"left after {label}"] = str(units.fmt_bytes(left, 3)) if left >= 0 else \
                _("short by {bytes}").format(bytes=units.fmt_bytes(-left, 3))
        rows.append(row)
    return pd.DataFrame(rows).set_index("card")


def generation_growth_figure(names=landscape.NVIDIA_GENERATIONS, dtype="bf16"):
    """Compute, memory capacity and memory bandwidth of successive parts, each as a multiple of the first part
    (:func:`generation_table`), as a chart-system figure (:class:`~chipchain.views._figure.Figure`): one line per
    quantity through the generations on a log axis, each part a dot, the last multiple written at its dot.

    >>> f = generation_growth_figure()
    >>> [(q, round(v[-1], 2)) for q, v in f.data["series"]]
    [('dense BF16 peak', 7.21), ('memory capacity', 2.25), ('memory bandwidth', 3.92)]
    """
    df = generation_table(names, dtype)
    first = df.index[0]
    cols = [("compute x first", _("dense {dtype} peak").format(dtype=dtype.upper())),
            ("memory x first", _("memory capacity")), ("bandwidth x first", _("memory bandwidth"))]
    xs = list(range(len(df)))
    ticks = [(i, f"{hardware.get(n).name.split('-')[0]} ({y})") for i, (n, y) in enumerate(zip(df.index, df["year"]))]
    lines, points, series = [], [], []
    for i, (col, label) in enumerate(cols):
        c, ys = plotting.color(i), [float(v) for v in df[col]]
        lines.append({"x": xs, "y": ys, "label": label, "color": c})
        points += [{"x": x, "y": y, "color": c, "label": f"{y:,.2f}×" if x == xs[-1] else None}
                   for x, y in zip(xs, ys)]
        series.append((label, ys))
    words = _("; ").join(f"{label} {ys[-1]:,.2f}×" for label, ys in series)
    alt = _("Growth of NVIDIA's parts from the {first} to the {last}, each quantity as a multiple of the first part on "
            "a log axis: {words}.").format(first=ticks[0][1], last=ticks[-1][1], words=words)
    top = max(max(ys) for _, ys in series)
    html = plotting.svg_chart(lines=lines, points=points, ylog=True, xticks=ticks, xlim=(-0.35, xs[-1] + 0.6),
                              ylim=(0.8, top * 1.6), yticks=[t for t in (1, 2, 5, 10, 20) if t <= top * 1.6],
                              ylabel=_("multiple of the {first} (×)").format(first=first),
                              xlabel="part (year of release)", alt=alt, height=320)
    return Figure(html, _("{last} against the {first}: {words}").format(last=ticks[-1][1], first=ticks[0][1],
                                                                        words=words),
                  {"series": series, "parts": list(df.index)})


def evaluation_table(accelerators=landscape.DEFAULT_ACCELERATORS, dtype="bf16"):
    """:func:`~chipchain.landscape.chip_figures` as a DataFrame indexed by name (SI units; NaN shown where a part has
    no figure), with the ``software stack`` column.

    >>> float(evaluation_table(("H100", "TPU-v5p")).loc["TPU-v5p", "interconnect"]) / 1e9
    600.0
    """
    import pandas as pd

    rows = [{"name": f.name, **{d: f.get(d) for d in landscape.DIMENSIONS}, "software stack": f.software_stack}
            for f in landscape.chip_figures(accelerators, dtype)]
    df = pd.DataFrame(rows).set_index("name")
    for c in landscape.DIMENSIONS:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    return df


def score_table(weights, accelerators=landscape.DEFAULT_ACCELERATORS, dtype="bf16"):
    """:func:`~chipchain.landscape.score_chips` as a DataFrame, best first: ``score``, ``coverage`` and each scaled
    dimension (best candidate = 1; NaN where a part has no figure).

    >>> score_table({"compute": 1}).index[0]
    'B200'
    """
    import pandas as pd

    scores = landscape.score_chips(weights, accelerators, dtype)
    rows = [{**{d: math.nan if s.scaled[d] is None else s.scaled[d] for d in landscape.DIMENSIONS},
             "score": math.nan if s.score is None else s.score, "coverage": s.coverage} for s in scores]
    return pd.DataFrame(rows, index=pd.Index([s.name for s in scores], name="name"))


def _tops(dtype):
    return "TOPS" if dtype == "int8" else "TFLOPS"


def _convention(sparse, dtype) -> str:
    """"dense BF16" / "sparse FP8": the counting convention of a peak, in the reader's language."""
    return (_("sparse {dtype}") if sparse else _("dense {dtype}")).format(dtype=dtype.upper())


def _fold(items, template: str) -> str:
    """Items joined pairwise by ``template`` ("{a} and {b}", "{a} or {b}"), in the reader's language."""
    items = [str(i) for i in items]
    out = items[0] if items else ""
    for item in items[1:]:
        out = _(template).format(a=out, b=item)
    return out


def _and(items) -> str:
    """"A and B" ("A and B and C"), in the reader's language."""
    return _fold(items, "{a} and {b}")


def _or(items) -> str:
    """"A or B", in the reader's language."""
    return _fold(items, "{a} or {b}")


def compare_view(chip_a, chip_b, dtype, sparse) -> str:
    """HTML for one view of :func:`compare_explorer`: headline and matched peaks of two parts, and their ratio."""
    if chip_a == chip_b:
        raise ValueError("pick two different chips to compare")
    a, b = hardware.get(chip_a), hardware.get(chip_b)
    for x in (a, b):            # plain sentences, not the catalog's errors (issue 27: no exception text in a view)
        if dtype not in x.precisions():
            return widgets.message(f"The {x.name} has no {dtype.upper()} peak published for it, so the two chips "
                                   f"cannot be matched at {dtype.upper()}. Pick another precision.")
        if sparse and not x.sparse_factor:
            return widgets.message(f"The {x.name} has no structured-sparsity (2:4) figure published for it, so the "
                                   "two chips cannot be matched sparse. Compare them dense.")
    pa, pb = landscape.matched_peak(a, dtype, sparse), landscape.matched_peak(b, dtype, sparse)
    ha, hb = landscape.headline_peak(a), landscape.headline_peak(b)
    conv = _convention(sparse, dtype)
    bars = [(_("{name} headline: {convention}").format(name=a.name, convention=_convention(ha.sparse, ha.dtype)),
             ha.peak_flops),
            (_("{name} matched: {convention}").format(name=a.name, convention=conv), pa),
            (_("{name} headline: {convention}").format(name=b.name, convention=_convention(hb.sparse, hb.dtype)),
             hb.peak_flops),
            (_("{name} matched: {convention}").format(name=b.name, convention=conv), pb)]
    colours = [plotting.color(0), plotting.color(0), plotting.color(1), plotting.color(1)]
    units_of = [_tops(ha.dtype), _tops(dtype), _tops(hb.dtype), _tops(dtype)]
    svg = plotting.svg_hbars(
        [(label, v / units.TERA, c) for (label, v), c in zip(bars, colours)],
        xlabel="peak (TFLOPS; TOPS for INT8)", unit_format=lambda v: f"{v:,.1f}" if v < 100 else f"{v:,.0f}",
        legend=[(a.name, colours[0]), (b.name, colours[2])],
        alt=_("{a} and {b}: headline and {convention} peaks: {peaks}").format(a=a.name, b=b.name, convention=conv,
                                                                               peaks=_("; ").join(
            f"{label} {v / units.TERA:,.1f} {u}" for (label, v), u in zip(bars, units_of))))
    ratio = landscape.compare_peaks(a, b, dtype, sparse)
    naive = ha.peak_flops / hb.peak_flops
    verdict = ("<p>" + _("Matched at {convention}: {a} / {b} = <b>{ratio}×</b>. Comparing the headlines instead would "
                         "say {naive}× — off by a factor of {factor}. Memory: {memory_a} against {memory_b}.").format(
        convention=conv, a=a.name, b=b.name, ratio=f"{ratio:.2f}", naive=f"{naive:.2f}",
        factor=f"{max(naive / ratio, ratio / naive):.2f}", memory_a=units.fmt_capacity(a.memory_bytes),
        memory_b=units.fmt_capacity(b.memory_bytes)) + "</p>")
    est = [x.name for x in (a, b) if x.is_estimate]
    caveat = (_layout.para(_("{names}: catalog figures are unverified estimates.").format(names=_and(est)), small=True)
              if est else "")
    return verdict + svg + caveat


@widgets.explorer
def compare_explorer():
    """Two chips, one precision and sparsity: the headline figures side by side with the matched ones."""
    return widgets.explore(compare_view, [
        widgets.Choice("chip_a", "NVIDIA chip", {n: n for n in COMPARE_NVIDIA}, value="H100-SXM"),
        widgets.Choice("chip_b", "Compared with", {n: n for n in COMPARE_RIVALS}, value="TPU-v5p"),
        widgets.Choice("dtype", "Precision", {"BF16": "bf16", "FP8": "fp8", "INT8": "int8"}, value="bf16"),
        widgets.Toggle("sparse", "2:4 sparsity", value=False, labels=["dense", "sparse"]),
    ], title="Precision-matched comparison of two chips")


def _scoring_view(compute, memory, interconnect, software, efficiency):
    w = {"compute": compute, "memory": memory, "interconnect": interconnect, "software": software,
         "efficiency": 1 if efficiency else 0}
    if not any(w.values()):
        raise ValueError("give at least one dimension a weight above zero")
    df = score_table(w)
    weighted = [d for d in landscape.DIMENSIONS if w.get(d)]
    rows = [(name if cov >= 1 else _("{name} (scored on {share} of the weight)").format(
                 name=name, share=fmt_percent(cov, decimals=0)), None if sc != sc else sc,
             plotting.color(0)) for name, sc, cov in zip(df.index, df["score"], df["coverage"])]
    svg = plotting.svg_hbars(rows, xlabel="weighted score (best chip = 1 on each dimension)", xlim=(0, 1),
                             unit_format=lambda v: f"{v:.2f}",
                             alt=_("chips ranked by weighted score: {scores}").format(scores=_(", ").join(
                                 f"{n} {s:.2f}" for n, s in zip(df.index, df["score"].fillna(0)))))
    heads = {"compute": "Compute", "memory": "Memory", "interconnect": "Interconnect", "software": "Software",
             "efficiency": "Power efficiency"}
    cols = {"name": "Chip", "score": tables.Col("Score", ".2f")}
    cols.update({d: tables.Col(_(heads[d]) + (f" (×{w[d]})" if w[d] != 1 else ""), ".2f") for d in weighted})
    gaps = bool(df[weighted].isna().any().any())
    table = tables.show(df, columns=cols, caption="Scaled figures of the weighted dimensions (best chip = 1)",
                        notes=("— : no published figure; the chip is scored on the other dimensions",) if gaps
                        else ()).html
    partial = [(name, tuple(heads[d].lower() for d in weighted if df.loc[name, d] != df.loc[name, d]))
               for name, cov in zip(df.index, df["coverage"]) if cov < 1]
    by_gap = {}
    for name, dims in partial:
        by_gap.setdefault(dims, []).append(name)
    said = [(_("{name} has no published figure for {dimensions}") if len(names) == 1 else
             _("{names} have no published figure for {dimensions}")).format(
                name=names[0], names=_and(names), dimensions=_or([_(d) for d in dims]))
            for dims, names in by_gap.items()]
    # the trailing space is the English sentence's; a translation ends with its own full stop
    gap_note = _("{gaps}: a chip marked \"scored on … of the weight\" is scored on the dimensions it has figures "
                 "for. ").format(gaps=_("; ").join(said)) if said else ""
    judged = "The software score is a judgment." if w["software"] else ""
    note = _layout.para(gap_note + judged, small=True) if gap_note or judged else ""
    return svg + table + note


@widgets.explorer
def scoring_explorer():
    """Seed 004's chip-evaluation framework with the reader's weights."""
    levels = [0, 1, 2]
    return widgets.explore(_scoring_view, [
        widgets.Slider("compute", "Peak compute", levels, value=1),
        widgets.Slider("memory", "Memory", levels, value=1),
        widgets.Slider("interconnect", "Interconnect", levels, value=1),
        widgets.Slider("software", "Software stack", levels, value=1),
        widgets.Toggle("efficiency", "Power efficiency", value=False, labels=["ignore", "count"]),
    ], title="Score the chips with your own weights")
