"""Views for chapter 3 (interconnect): the link table and chart, all-reduce and scaling figures, two explorers.

Every number comes from :mod:`chipchain.comms` (the α–β collectives), :mod:`chipchain.links` and
:mod:`chipchain.systems`; nothing here re-derives a formula.

>>> float(link_table().loc["PCIe5-x16", "bidirectional_GBps"])
128.0
"""
from __future__ import annotations

from dataclasses import replace

from .._lazy import np

from .. import _check, comms, hardware, links, models, plotting, ringsim, steptime, systems, tables, units, widgets
from .._i18n import gettext as _
from . import _layout
from ._figure import Figure

__all__ = ["link_table", "links_figure", "allreduce_size_figure", "dp_scaling_curve", "dp_gpu_counts",
           "scaling_efficiency_figure",
           "topologies", "allreduce_explorer", "scaling_explorer", "allreduce_step_view",
           "allreduce_steps_explorer"]

#: how figures and tables name the all-reduce algorithms of :data:`chipchain.comms.ALGORITHMS`
LABELS = {"ring": "ring", "tree": "binary tree (unpipelined)", "double-tree": "double binary tree (NCCL)",
          "hierarchical": "hierarchical"}

#: links the chapter's bar chart compares, fastest first
CHART_LINKS = ("NVLink5", "NVLink4", "NVLink3", "PCIe5-x16", "PCIe4-x16", "IB-NDR", "IB-HDR", "RoCE-400G",
               "Ethernet-100G", "Ethernet-10G", "Home-100Mbps")


def link_table(names=None):
    """The link catalog (or the links ``names``) as a pandas DataFrame indexed by name, in human units (GB/s, µs),
    with each row's scope, verdict and provenance.

    >>> link_table(["NVLink4", "IB-NDR"])["bandwidth_per_direction_GBps"].tolist()
    [450.0, 50.0]
    """
    import pandas as pd

    chosen = links.all_links() if names is None else [links.get(n) for n in names]
    rows = [{"name": lk.name, "aliases": ";".join(lk.aliases), "kind": lk.kind, "line_rate": lk.line_rate,
             "bandwidth_per_direction_GBps": round(lk.bandwidth_per_direction / 1e9, 6),
             "bidirectional_GBps": round(lk.bidirectional_bandwidth / 1e9, 6),
             "latency_us": round(lk.latency / 1e-6, 6), "scope": lk.scope, "verdict": lk.verdict,
             "source": lk.source, "checked": lk.checked, "notes": lk.notes} for lk in chosen]
    return pd.DataFrame(rows).set_index("name")


def links_figure(names=CHART_LINKS):
    """Per-direction bandwidth of catalog links (:mod:`chipchain.links`) as named bars on a log scale, coloured by
    the link's kind, each name carrying its bidirectional figure: a chart-system figure
    (:class:`~chipchain.views._figure.Figure`).

    >>> f = links_figure(["NVLink4", "IB-NDR"])
    >>> f.data["bars"]
    [('NVLink4', 450000000000.0, 900000000000.0), ('IB-NDR', 50000000000.0, 100000000000.0)]
    """
    lks = [links.get(n) for n in names]
    if not lks:
        raise ValueError("names must list at least one link")
    kinds = list(dict.fromkeys(lk.kind for lk in lks))
    colours = {k: plotting.color(i) for i, k in enumerate(kinds)}

    def gbps(v):
        return f"{v:,.4g}"

    rows = [(_("{name} ({bandwidth} GB/s both directions)").format(
                 name=lk.name, bandwidth=gbps(lk.bidirectional_bandwidth / units.GB)),
             lk.bandwidth_per_direction / units.GB, colours[lk.kind]) for lk in lks]
    alt = _("Horizontal bars, log scale, of per-direction link bandwidth: {bars}.").format(
        bars="; ".join(f"{lk.name} {gbps(lk.bandwidth_per_direction / units.GB)} GB/s" for lk in lks))
    html = plotting.svg_hbars(rows, xlabel="bandwidth per direction (GB/s)", log=True, alt=alt,
                              unit_format=lambda v: f"{gbps(v)} GB/s", legend=[(k, colours[k]) for k in kinds])
    text = "Per-direction bandwidth: " + "; ".join(
        f"{lk.name} {gbps(lk.bandwidth_per_direction / units.GB)} GB/s" for lk in lks)
    return Figure(html, text, {"bars": [(lk.name, lk.bandwidth_per_direction, lk.bidirectional_bandwidth)
                                        for lk in lks], "kinds": kinds})


def allreduce_size_figure(cluster="DGX-H100", n_gpus=64, sizes=None):
    """All-reduce time against message size (log–log) for every algorithm of :data:`chipchain.comms.ALGORITHMS`
    (the unpipelined textbook tree dashed, NCCL's double binary tree, ring, hierarchical) on ``n_gpus`` GPUs of
    ``cluster`` (:func:`chipchain.comms.cluster_allreduce_time`), with the fastest algorithm named at the smallest and
    the largest size: a chart-system figure (:class:`~chipchain.views._figure.Figure`).

    >>> f = allreduce_size_figure("DGX-H100", 1024)
    >>> f.data["fastest"]
    [(1000.0, 'tree'), (31622776601.7, 'double-tree')]
    """
    if isinstance(cluster, systems.Cluster):
        node, n = cluster.node, cluster.n_gpus
    else:
        node = systems.node(cluster)
        n = node.gpus_per_node if n_gpus is None else n_gpus
    xs = [units.stable(float(v)) for v in (np.logspace(3, 10.5, 61) if sizes is None else np.asarray(sizes, float))]
    curves, lines = {}, []
    for i, algo in enumerate(comms.ALGORITHMS):
        ys = [float(v) for v in comms.cluster_allreduce_time(np.array(xs), node, n, algo)]
        curves[algo] = ys
        lines.append({"x": xs, "y": ys, "label": LABELS[algo], "color": plotting.color(i), "dash": algo == "tree"})
    fastest = [(x, min(curves, key=lambda a: curves[a][k])) for k, x in ((0, xs[0]), (len(xs) - 1, xs[-1]))]
    title = _("{n} GPUs, {per_node} per node: {intra} inside, {inter} between").format(
        n=f"{n:,}", per_node=node.gpus_per_node, intra=node.intra.name, inter=node.inter.name)
    alt = _("Log–log chart of all-reduce time against message size from {smallest} to {largest} on {title}: "
            "{curves}. Fastest for the smallest message: {fastest_small}; for the largest: {fastest_large}.").format(
        smallest=units.fmt_bytes(xs[0]), largest=units.fmt_bytes(xs[-1]), title=title,
        curves="; ".join(_("{algorithm} {first} to {last}").format(
            algorithm=_(LABELS[a]), first=units.fmt_duration(curves[a][0]), last=units.fmt_duration(curves[a][-1]))
            for a in curves),
        fastest_small=_(LABELS[fastest[0][1]]), fastest_large=_(LABELS[fastest[1][1]]))
    html = plotting.svg_chart(lines=lines, xlog=True, ylog=True, xlabel="message size M per GPU (bytes)",
                              ylabel="all-reduce time (s)", xformat="si", height=320, title=title, alt=alt)
    text = (f"All-reduce on {title}: fastest at {units.fmt_bytes(xs[0])} is {LABELS[fastest[0][1]]}, at "
            f"{units.fmt_bytes(xs[-1])} {LABELS[fastest[1][1]]}")
    return Figure(html, text, {"sizes": xs, "curves": curves, "fastest": fastest, "n_gpus": n})


def dp_scaling_curve(model, gpu_counts, batch_tokens, cluster="DGX-H100", efficiency=0.4, dp_overlap=0.0, seq=2048,
                     **step):
    """Scaling efficiency (speedup / N) of data parallelism over a list of GPU counts, as a DataFrame.

    Columns: ``compute s``, ``comm s``, ``comm / compute``, ``efficiency``
    (:func:`chipchain.comms.dp_scaling_efficiency`), ``speedup`` (relative to one GPU's ideal) and ``algorithm``
    (the all-reduce priced: by default the fastest at that GPU count). Each point is
    :func:`chipchain.steptime.data_parallel_step` (the step model, DP alone, at matmul efficiency ``efficiency``, with
    ``seq``-token sequences), which refuses a count that leaves a GPU less than one sequence; ``dp_overlap`` in
    [0, 1]; other keywords (``algorithm``, ``link_efficiency``, ``recipe``) go to it.

    >>> dp_scaling_curve("Llama-2-7B", [8, 1024], 4e6)[["efficiency", "algorithm"]].round(2).values.tolist()
    [[1.0, 'ring'], [0.86, 'double-tree']]
    """
    import pandas as pd

    rows = []
    for n in gpu_counts:
        s = steptime.data_parallel_step(model, batch_tokens, cluster, n, seq=seq, efficiency=efficiency, **step)
        e = s.efficiency(dp_overlap)
        rows.append({"gpus": int(n), "compute s": s.compute_seconds, "comm s": s.comm_seconds,
                     "comm / compute": s.comm_seconds / s.compute_seconds, "efficiency": e, "speedup": e * n,
                     "algorithm": s.algorithm})
    if not rows:
        raise ValueError("gpu_counts must list at least one GPU count")
    return pd.DataFrame(rows).set_index("gpus")


def topologies() -> dict:
    """The four node designs the chapter compares, by label: two DGX servers from :mod:`chipchain.systems` and two
    8-card PCIe servers (one NIC per card) with RoCE or plain 100 GbE between them — every one holding H100 SXM
    GPUs, so that only the links differ (the DGX A100 entry is its NVLink 3 and HDR InfiniBand)."""
    h100 = hardware.get("H100-SXM")
    pcie = replace(systems.get("PCIe-server"), accelerator=h100)
    return {"DGX H100: NVLink 4 + InfiniBand NDR": systems.node("DGX-H100"),
            "DGX A100: NVLink 3 + InfiniBand HDR": replace(systems.node("DGX-A100"), accelerator=h100),
            "PCIe Gen5 cards + RoCE 400G": replace(pcie, intra=links.get("PCIe5-x16"), inter=links.get("RoCE-400G")),
            "PCIe Gen4 cards + 100 GbE (TCP)": replace(pcie, inter=links.get("Ethernet-100G"))}


def dp_gpu_counts(batch_tokens, seq=2048, largest=4096):
    """Powers of two from 8 GPUs up to ``largest`` that still give every GPU at least one ``seq``-token sequence of
    a ``batch_tokens`` global batch (the counts data parallelism alone can use).

    >>> dp_gpu_counts(4e6)
    [8, 16, 32, 64, 128, 256, 512, 1024]
    """
    counts = [2 ** k for k in range(3, 40) if 2 ** k <= largest and batch_tokens / 2 ** k >= seq]
    if not counts:
        raise ValueError(f"batch_tokens={batch_tokens:,.0f} gives 8 GPUs less than one {seq:,}-token sequence each")
    return counts


def scaling_efficiency_figure(model, batch_tokens, efficiency=0.4, gpu_counts=None, nodes=None, dp_overlap=0.0):
    """Scaling efficiency of data parallelism against GPU count (:func:`dp_scaling_curve`) for several node designs
    (default: DGX H100, DGX A100, PCIe Gen4 cards with 100 GbE), each point with the fastest all-reduce algorithm at
    that count, up to the largest count that leaves every GPU one 2,048-token sequence: a chart-system figure
    (:class:`~chipchain.views._figure.Figure`).

    >>> f = scaling_efficiency_figure("Llama-2-7B", 4e6)
    >>> [(k, round(e[-1], 2)) for k, e in f.data["efficiency"].items()][0]
    ('NVLink4 + IB-NDR', 0.86)
    """
    counts = gpu_counts or dp_gpu_counts(batch_tokens)
    if nodes is None:
        designs = topologies()
        nodes = [designs[k] for k in list(designs)[:2]] + [designs["PCIe Gen4 cards + 100 GbE (TCP)"]]
    lines, points, eff = [], [], {}
    for i, node in enumerate(systems.node(x) for x in nodes):
        df = dp_scaling_curve(model, counts, batch_tokens, node, efficiency, dp_overlap)
        label = f"{node.intra.name} + {node.inter.name}"
        ys = [units.stable(float(v)) for v in df["efficiency"]]
        eff[label] = ys
        lines.append({"x": list(df.index), "y": ys, "label": label, "color": plotting.color(i)})
        points += [{"x": x, "y": y, "color": plotting.color(i)} for x, y in zip(df.index, ys)]
    ticks = [(c, f"{c:,}") for c in (counts if len(counts) <= 6 else counts[::2])]
    alt = _("Line chart, log x axis from {first} to {last} GPUs, of data-parallel scaling efficiency "
            "(speedup / GPUs), fastest all-reduce at each count: {lines}.").format(
        first=f"{counts[0]:,}", last=f"{counts[-1]:,}",
        lines="; ".join(_("{design} from {first} to {last}").format(design=k, first=f"{v[0]:.2f}", last=f"{v[-1]:.2f}")
                        for k, v in eff.items()))
    html = plotting.svg_chart(lines=lines, points=points, xlog=True, ylim=(0, 1.05), xticks=ticks,
                              yticks=[0, 0.25, 0.5, 0.75, 1.0], yformat=lambda v: f"{v:.2f}",
                              xlabel="GPUs (log scale)", ylabel="scaling efficiency (speedup / GPUs)", height=320,
                              title="Fastest all-reduce at each GPU count", alt=alt)
    text = "Scaling efficiency: " + "; ".join(
        f"{k} {v[0]:.2f} at {counts[0]:,} GPUs -> {v[-1]:.2f} at {counts[-1]:,}" for k, v in eff.items())
    return Figure(html, text, {"counts": list(counts), "efficiency": eff})


def _seconds(v) -> str:
    return str(units.fmt_duration(v))


@widgets.explorer
def allreduce_explorer():
    """Topology, message size, GPUs and compute per step → all-reduce time by algorithm and its share of a step.
    The sizes and GPU counts include the chapter's own (16 kB, 14 MB, 14 GB; 8, 64 and 1,024 GPUs); the default is
    the chapter's case: 14 GB of BF16 gradients on 1,024 GPUs of DGX H100."""
    import pandas as pd

    sizes = [16e3, 1e6, 14e6, 1e9, 14e9, 140e9]
    curve = np.array([10 ** (3 + 0.25 * i) for i in range(35)])

    def render(topology, nbytes, n_gpus, compute):
        lines, rows = [], []
        for i, algo in enumerate(comms.ALGORITHMS):
            lines.append({"x": curve.tolist(), "label": LABELS[algo], "color": plotting.color(i), "dash": algo == "tree",
                          "y": comms.cluster_allreduce_time(curve, topology, n_gpus, algo).tolist()})
            t = float(comms.cluster_allreduce_time(nbytes, topology, n_gpus, algo))
            rows.append({"algorithm": LABELS[algo], "time": t, "share": t / (compute + t)})
        best = min(rows, key=lambda r: r["time"])
        size = units.fmt_bytes(nbytes)
        svg = plotting.svg_chart(lines=lines, vlines=[{"x": nbytes, "label": str(size)}],
                                 xlog=True, ylog=True, xlabel="message size per GPU (bytes)",
                                 ylabel="all-reduce time (s)", height=280,
                                 alt=_("all-reduce time against message size on {n} GPUs: ring, unpipelined "
                                       "binary tree, NCCL's double binary tree, hierarchical; {algorithm} is "
                                       "fastest at {size}").format(n=f"{n_gpus:,}", algorithm=_(best["algorithm"]),
                                                                   size=size))
        table = tables.show(pd.DataFrame(rows), columns={
            "algorithm": "Algorithm", "time": tables.Col(_("Time for {size}").format(size=size), _seconds),
            "share": tables.Col(_("Share of a step with {compute} of compute").format(compute=_seconds(compute)),
                                lambda v: str(units.fmt_percent(v)))}).html
        ok = best["time"] <= 0.2 * compute
        verdict = _layout.verdict(
            (_("Fastest: {algorithm}, {time} for {size} on {n} GPUs — below ~20 % of compute: fine for data "
               "parallelism.") if ok else
             _("Fastest: {algorithm}, {time} for {size} on {n} GPUs — above ~20 % of compute: time for bigger local "
               "batches, gradient accumulation, a faster fabric or another split.")).format(
                algorithm=_(best["algorithm"]), time=_seconds(best["time"]), size=size, n=f"{n_gpus:,}"), ok)
        return verdict + svg + table

    return widgets.explore(render, [
        widgets.Choice("topology", "Topology", topologies()),
        widgets.Slider("nbytes", "Message per GPU", sizes, value=14e9, fmt=lambda v: str(units.fmt_bytes(v))),
        widgets.Slider("n_gpus", "GPUs", [8, 64, 1024], value=1024, fmt=lambda v: f"{v:,}"),
        widgets.Choice("compute", "Compute per step", {"0.25 s": 0.25, "1 s": 1.0}, value=1.0),
    ], title="All-reduce: ring, trees or hierarchical")


@widgets.explorer
def scaling_explorer():
    """GPUs → scaling efficiency of data parallelism with a fixed global batch (H100 SXM GPUs at 40 % matmul
    efficiency in the step model, the fastest all-reduce at each count, GPU counts up to one 2,048-token sequence
    per GPU)."""

    def render(topology, model, batch, overlap):
        counts = dp_gpu_counts(batch)
        df = dp_scaling_curve(model, counts, batch, topology, 0.4, overlap)
        eff = df["efficiency"]
        svg = plotting.svg_chart(
            lines=[{"x": counts, "y": list(eff), "label": "efficiency"}],
            points=[{"x": n, "y": e, "color": plotting.color(0)} for n, e in eff.items()],
            hlines=[{"y": 0.5, "label": "0.5"}], xlog=True, ylim=(0, 1), xlabel="GPUs (log scale)",
            ylabel="scaling efficiency (speedup / GPUs)", legend="none", height=260,
            xticks=[(n, f"{n:,}") for n in (counts if len(counts) <= 8 else counts[::2])],
            alt=_("scaling efficiency from {first} at 8 GPUs to {last} at {n} GPUs").format(
                first=f"{eff.iloc[0]:.2f}", last=f"{eff.iloc[-1]:.2f}", n=f"{counts[-1]:,}"))
        half = [n for n, e in eff.items() if e < 0.5]
        tail = (_("Efficiency drops below 0.5 at {n} GPUs.").format(n=f"{half[0]:,}") if half else
                _("Efficiency stays above 0.5 up to {n} GPUs.").format(n=f"{counts[-1]:,}"))
        if counts[-1] < 4096:
            tail = _("{sentence} Beyond {n} GPUs this batch leaves a GPU less than one 2,048-token sequence: "
                     "pure data parallelism stops there.").format(sentence=tail, n=f"{counts[-1]:,}")
        shown = df.loc[sorted({8, 64, counts[-1]} & set(counts))].reset_index()
        table = tables.show(shown, columns={
            "gpus": "GPUs", "compute s": tables.Col("Compute per step", _seconds),
            "comm s": tables.Col("All-reduce", _seconds), "efficiency": tables.Col("Efficiency", ".2f"),
            "algorithm": tables.Col("Fastest algorithm", lambda a: LABELS.get(a, a))}).html
        return (_layout.verdict(_("Efficiency {first} at {n0} GPUs, {last} at {n1}. {tail}").format(
                    first=f"{eff.iloc[0]:.2f}", n0=f"{counts[0]:,}", last=f"{eff.iloc[-1]:.2f}", n1=f"{counts[-1]:,}",
                    tail=tail), eff.iloc[-1] >= 0.5) + svg
                + _layout.para(_("{model} ({params}B parameters) on 2,048-token sequences, {batch}M tokens per step, "
                                 "gradients in BF16, {overlap} of communication overlapped.").format(
                    model=model, params=units.fmt_number(models.get(model).params / 1e9),
                    batch=units.fmt_number(batch / 1e6), overlap=units.fmt_percent(overlap)), small=True) + table)

    return widgets.explore(render, [
        widgets.Choice("topology", "Topology", topologies()),
        widgets.Choice("model", "Model", {"Llama 2 7B": "Llama-2-7B", "Llama 2 13B": "Llama-2-13B",
                                          "Llama 2 70B": "Llama-2-70B"}, value="Llama-2-7B"),
        widgets.Choice("batch", "Global batch", {"1M tokens": 1e6, "4M tokens": 4e6, "16M tokens": 16e6}, value=4e6),
        widgets.Slider("overlap", "Overlap", [0.0, 0.5, 0.9], value=0.0, fmt=lambda v: str(units.fmt_percent(v))),
    ], title="Data parallelism: GPUs → scaling efficiency")


# --- the collectives step by step (issue 28) ------------------------------------------------------------------------
#: the message the step-by-step explorer passes: 14 GB, the 7B model's BF16 gradients (the chapter's case)
STEP_NBYTES = 14e9
STEP_RANKS = (4, 8)
_PHASE = {"start": "before the first send", "reduce-scatter": "reduce-scatter", "all-gather": "all-gather",
          "reduce": "reduce (up the tree)", "broadcast": "broadcast (down the tree)"}


def _shade(k, n):
    """Fill of a cell whose copy sums ``k`` of ``n`` ranks' data: pale to the palette's blue; green when complete."""
    if k >= n:
        return plotting.color(2)
    t = (k - 1) / max(n - 1, 1)
    lo, hi = (0xE8, 0xF1, 0xF8), (0x56, 0x9E, 0xCC)
    return "#" + "".join(f"{round(a + (b - a) * t):02X}" for a, b in zip(lo, hi))


def allreduce_step_view(algorithm, n_ranks, step, nbytes=STEP_NBYTES) -> str:
    """HTML for one state of an all-reduce on ``n_ranks`` ranks (:func:`chipchain.ringsim.allreduce_steps`): a
    rank × chunk grid (each cell: how many ranks' data that copy of the chunk sums; the sends of this step outlined),
    the bytes of this step and so far, and the total the algorithm ends on. ``step`` 0 is the state before any send;
    a step past the algorithm's last shows its final state."""
    dg = plotting.diagrams

    states = ringsim.allreduce_steps(n_ranks, nbytes, algorithm)
    last = len(states) - 1
    k = min(_check_step(step), last)
    st, n = states[k], n_ranks
    send_c, recv_c = plotting.color(1), "#000"
    label_w = dg.text_width("rank 0") + 8
    top = 1.3 * dg.TEXT
    cw = (plotting.VIEW_WIDTH - label_w - 4) / n
    ch = 1.7 * dg.TEXT
    body = []
    for c in range(n):
        body.append(dg.text(label_w + (c + 0.5) * cw, top - 0.35 * dg.TEXT, f"c{c}", anchor="middle"))
    senders = {(src, c) for src, _dst, c in st.sends}
    receivers = {(dst, c) for _src, dst, c in st.sends}
    for r in range(n):
        y = top + r * ch
        body.append(dg.text(0, y + 0.65 * ch + 0.3 * dg.TEXT, f"rank {r}"))
        for c in range(n):
            who = st.holds[r][c]
            x = label_w + c * cw
            sending = (r, c) in senders or (r, None) in senders
            getting = (r, c) in receivers or (r, None) in receivers
            stroke, width, dash = ("#bbb", 1.0, False)
            if sending:
                stroke, width, dash = send_c, 4.0, False
            elif getting:
                stroke, width, dash = recv_c, 2.5, True
            fill = _shade(len(who), n)
            body.append(dg.rect(x + 2, y + 2, cw - 4, ch - 4, fill=fill, stroke=stroke, width=width, dash=dash))
            body.append(dg.text(x + cw / 2, y + ch / 2 + 0.35 * dg.TEXT, f"{len(who)}/{n}",
                                fill="#000",
                                anchor="middle"))
    height = top + n * ch + 4
    name = "ring" if algorithm == "ring" else "binary tree (unpipelined)"
    sends = "; ".join(f"{s} → {d}" if c is None else _("{src} → {dst} (chunk c{chunk})").format(src=s, dst=d, chunk=c)
                      for s, d, c in st.sends)
    full = sum(len(w) == n for row in st.holds for w in row)
    alt = (_("{algorithm} all-reduce on {n} ranks, {when} ({phase}): a {n} × {n} grid of ranks by chunks; sends: "
             "{sends}; {full} of {cells} chunk copies hold the full sum.") if sends else
           _("{algorithm} all-reduce on {n} ranks, {when} ({phase}): a {n} × {n} grid of ranks by chunks; "
             "{full} of {cells} chunk copies hold the full sum.")).format(
        algorithm=_(name), n=n, when=_("start") if k == 0 else _("after step {k} of {last}").format(k=k, last=last),
        phase=_(_PHASE[st.phase]), sends=sends, full=full, cells=n * n)
    grid = plotting.svg_diagram("".join(body), height, alt=alt, legend=[
        ("sent in this step", send_c, "box"), ("received (added, or stored)", "#000", "dash"),
        ("copy holds all ranks' data", plotting.color(2), "box"), ("a partial sum", _shade(max(n // 2, 1), n), "box")])
    total, per_send = max(st.total), nbytes / n if algorithm == "ring" else nbytes
    end = states[-1].total
    def size(v):
        return units.fmt_bytes(v, 3)

    if algorithm == "ring":
        goal = comms.allreduce_bytes_per_rank(nbytes, n)
        cards = [("step", _("{k} of {n}").format(k=k, n=last), _PHASE[st.phase]),
                 ("each rank sends", str(size(st.sent[0])) if k else "—",
                  _("M/n = {size} a step").format(size=size(per_send))),
                 ("sent so far, per rank", str(size(st.total[0])),
                  _("ends at 2(n−1)/n · M = {size}").format(size=size(goal)))]
    else:
        cards = [("step", _("{k} of {n}").format(k=k, n=last), _PHASE[st.phase]),
                 ("ranks sending", _("{k} of {n}").format(k=len(st.sends), n=n) if k else "—",
                  _("the whole M = {size} each").format(size=size(nbytes))),
                 ("most sent by one rank", str(size(total)), _("ends at {size}").format(size=size(max(end)))),
                 ("sent by all ranks", str(size(sum(st.total))),
                  _("ends at 2(n−1)·M = {size}").format(size=size(sum(end))))]
    if k == last:
        done = (_("Done: every rank holds all {n} chunks summed over all {n} ranks, after {last} steps. Each rank "
                  "sent {sent} — 2(n−1)/n · M, the least any all-reduce can send.").format(
                    n=n, last=last, sent=size(end[0])) if algorithm == "ring" else
                _("Done: every rank holds all {n} chunks summed over all {n} ranks, after {last} steps. The ranks sent "
                  "{sent} in all, as much as the ring, but each step carries the whole message, so the time is "
                  "{last} × M/B instead of the ring's 2(n−1)/n × M/B.").format(n=n, last=last, sent=size(sum(end))))
        if step > last:
            done = (_("The ring on {n} ranks has only {last} steps; this is its final state. {done}")
                    if algorithm == "ring" else
                    _("The tree on {n} ranks has only {last} steps; this is its final state. {done}")).format(
                n=n, last=last, done=done)
        tail = _layout.verdict(done, True)
    elif k == 0:
        tail = _layout.para(_("Each rank starts with its own {size} buffer, cut into {n} chunks c0–c{last}; a cell "
                              "reads 1/{n}: that copy holds one rank's data.").format(size=size(nbytes), n=n,
                                                                                     last=n - 1))
    else:
        tail = _layout.para(_("Step {k} ({phase}): {sends}.").format(k=k, phase=_(_PHASE[st.phase]), sends=sends),
                            small=True)
    return _layout.headline(cards) + grid + tail


def _check_step(step):
    return _check.integer("step", step, minimum=0)


@widgets.explorer
def allreduce_steps_explorer():
    """Chapter 3: a ring or binary-tree all-reduce of 14 GB step by step on 4 or 8 ranks (default: the ring on 8,
    before the first send)."""
    most = 2 * (max(STEP_RANKS) - 1)

    def render(tree, n_ranks, step):
        return allreduce_step_view("tree" if tree else "ring", n_ranks, step)

    return widgets.explore(render, [
        widgets.Toggle("tree", "Algorithm", value=False, labels=["ring", "binary tree"]),
        widgets.Choice("n_ranks", "Ranks", {f"{n}": n for n in STEP_RANKS}, value=8),
        widgets.Slider("step", "Step", list(range(most + 1)), value=0,
                       fmt=lambda v: "start" if v == 0 else f"{v}"),
    ], title="All-reduce step by step: who sends which chunk, who holds what")
