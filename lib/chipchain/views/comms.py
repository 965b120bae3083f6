"""Views for chapter 3 (interconnect): the link table and chart, all-reduce and scaling figures, two explorers.

Every number comes from :mod:`chipchain.comms` (the α–β collectives), :mod:`chipchain.links` and
:mod:`chipchain.systems`; nothing here re-derives a formula.

>>> float(link_table().loc["PCIe5-x16", "bidirectional_GBps"])
128.0
"""
from __future__ import annotations

from dataclasses import replace

from .._lazy import np

from .. import comms, hardware, links, plotting, systems, tables, units, widgets
from . import _layout

__all__ = ["link_table", "plot_links", "plot_allreduce_vs_size", "dp_scaling_curve", "dp_gpu_counts",
           "plot_scaling_efficiency",
           "topologies", "allreduce_explorer", "scaling_explorer"]

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


def plot_links(names=CHART_LINKS, ax=None):
    """Horizontal bars of per-direction bandwidth (log scale) for catalog links, bidirectional marked. Returns Axes."""
    ax = plotting.axes(ax)
    lks = [links.get(n) for n in names]
    ys = range(len(lks))[::-1]
    kinds = list(dict.fromkeys(lk.kind for lk in lks))
    for y, lk in zip(ys, lks):
        ax.barh(y, lk.bandwidth_per_direction / 1e9, color=plotting.color(kinds.index(lk.kind)))
        ax.plot(lk.bidirectional_bandwidth / 1e9, y, "k|", ms=12)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([lk.name for lk in lks])
    ax.set_xscale("log")
    ax.set_xlabel("GB/s per direction (bar); both directions summed (tick)")
    return ax


def plot_allreduce_vs_size(cluster="DGX-H100", n_gpus=64, sizes=None, ax=None):
    """Log-log plot of all-reduce time against message size for every algorithm of
    :data:`chipchain.comms.ALGORITHMS` (the unpipelined textbook tree and NCCL's double binary tree) on ``n_gpus`` GPUs of
    ``cluster`` (see :func:`chipchain.comms.cluster_allreduce_time`). Returns the Axes."""
    ax = plotting.axes(ax)
    if isinstance(cluster, systems.Cluster):
        node, n = cluster.node, cluster.n_gpus
    else:
        node = systems.node(cluster)
        n = node.gpus_per_node if n_gpus is None else n_gpus
    sizes = np.logspace(3, 10.5, 60) if sizes is None else np.asarray(sizes, dtype=float)
    for i, algo in enumerate(comms.ALGORITHMS):
        ax.loglog(sizes, comms.cluster_allreduce_time(sizes, node, n, algo), label=LABELS[algo],
                  color=plotting.color(i), lw=2, ls="--" if algo == "tree" else "-")
    ax.set_xlabel("message size M (bytes per GPU)")
    ax.set_ylabel("all-reduce time (s)")
    ax.set_title(f"{n} GPUs, {node.gpus_per_node} per node: {node.intra.name} inside, {node.inter.name} between")
    ax.legend(frameon=False)
    return ax


def dp_scaling_curve(params, gpu_counts, batch_tokens, cluster="DGX-H100", peak_flops=None, mfu=0.4, dp_overlap=0.0,
                     **step):
    """Scaling efficiency (speedup / N) of data parallelism over a list of GPU counts, as a DataFrame.

    Columns: ``compute s``, ``comm s``, ``comm / compute``, ``efficiency``
    (:func:`chipchain.comms.dp_scaling_efficiency`), ``speedup`` (relative to one GPU's ideal) and ``algorithm``
    (the all-reduce priced: by default the fastest at that GPU count). Arguments as
    :func:`chipchain.comms.dp_step_times`, which refuses a count that leaves a GPU less than one ``seq``-token
    sequence; ``dp_overlap`` in [0, 1]; other keywords (``seq``, ``algorithm``, ``efficiency``,
    ``recipe``) go to it.

    >>> dp_scaling_curve(7e9, [8, 1024], 4e6)[["efficiency", "algorithm"]].round(2).values.tolist()
    [[1.0, 'ring'], [0.86, 'double-tree']]
    """
    import pandas as pd

    rows = []
    for n in gpu_counts:
        s = comms.dp_step_times(params, batch_tokens, cluster, n, peak_flops=peak_flops, mfu=mfu, **step)
        e = s.efficiency(dp_overlap)
        rows.append({"gpus": int(n), "compute s": s.compute_seconds, "comm s": s.comm_seconds,
                     "comm / compute": s.comm_seconds / s.compute_seconds, "efficiency": e, "speedup": e * n,
                     "algorithm": s.algorithm})
    if not rows:
        raise ValueError("gpu_counts must list at least one GPU count")
    return pd.DataFrame(rows).set_index("gpus")


def topologies() -> dict:
    """The four node designs the chapter compares, by label: two DGX servers from :mod:`chipchain.systems` and two
    8-card PCIe servers (one NIC per card) with RoCE or plain 100 GbE between them."""
    pcie = systems.get("PCIe-server")
    return {"DGX H100: NVLink 4 + InfiniBand NDR": systems.node("DGX-H100"),
            "DGX A100: NVLink 3 + InfiniBand HDR": systems.node("DGX-A100"),
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


def plot_scaling_efficiency(params, batch_tokens, peak_flops=None, mfu=0.4, gpu_counts=None, nodes=None,
                            dp_overlap=0.0, ax=None):
    """Scaling efficiency against GPU count for several node designs (default: DGX H100, DGX A100, PCIe Gen4 cards
    with 100 GbE), each point with the fastest all-reduce algorithm at that count, up to the largest count that
    leaves every GPU one 2,048-token sequence. Returns the Axes."""
    ax = plotting.axes(ax)
    counts = gpu_counts or dp_gpu_counts(batch_tokens)
    if nodes is None:
        designs = topologies()
        nodes = [designs[k] for k in list(designs)[:2]] + [designs["PCIe Gen4 cards + 100 GbE (TCP)"]]
    for i, node in enumerate(systems.node(x) for x in nodes):
        df = dp_scaling_curve(params, counts, batch_tokens, node, peak_flops, mfu, dp_overlap)
        ax.semilogx(df.index, df["efficiency"], marker="o", label=f"{node.intra.name} + {node.inter.name}",
                    color=plotting.color(i))
    ax.set_xlabel("GPUs")
    ax.set_ylabel("scaling efficiency (speedup / GPUs)")
    ax.set_title("fastest all-reduce at each GPU count", fontsize=10)
    ax.set_ylim(0, 1.05)
    ax.legend(frameon=False)
    return ax


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
                                 alt=f"all-reduce time against message size on {n_gpus:,} GPUs: ring, unpipelined "
                                     f"binary tree, NCCL's double binary tree, hierarchical; {best['algorithm']} is "
                                     f"fastest at {size}")
        table = tables.show(pd.DataFrame(rows), columns={
            "algorithm": "Algorithm", "time": tables.Col(f"Time for {size}", _seconds),
            "share": tables.Col(f"Share of a step with {_seconds(compute)} of compute",
                                lambda v: str(units.fmt_percent(v)))}).html
        ok = best["time"] <= 0.2 * compute
        verdict = _layout.verdict(
            f"Fastest: {best['algorithm']}, {_seconds(best['time'])} for {size} on {n_gpus:,} GPUs — "
            + ("below ~20 % of compute: fine for data parallelism." if ok else
               "above ~20 % of compute: time for bigger local batches, gradient accumulation, a faster fabric or "
               "another split."), ok)
        return verdict + svg + table

    return widgets.explore(render, [
        widgets.Choice("topology", "Topology", topologies()),
        widgets.Slider("nbytes", "Message per GPU", sizes, value=14e9, fmt=lambda v: str(units.fmt_bytes(v))),
        widgets.Slider("n_gpus", "GPUs", [8, 64, 1024], value=1024, fmt=lambda v: f"{v:,}"),
        widgets.Choice("compute", "Compute per step", {"0.25 s": 0.25, "1 s": 1.0}, value=1.0),
    ], title="All-reduce: ring, trees or hierarchical")


@widgets.explorer
def scaling_explorer():
    """GPUs → scaling efficiency of data parallelism with a fixed global batch (H100 peak, 40 % MFU, the fastest
    all-reduce at each count, GPU counts up to one 2,048-token sequence per GPU)."""
    peak = hardware.get("H100-SXM").peak_flops("bf16")

    def render(topology, params, batch, overlap):
        counts = dp_gpu_counts(batch)
        df = dp_scaling_curve(params, counts, batch, topology, peak, 0.4, overlap)
        eff = df["efficiency"]
        svg = plotting.svg_chart(
            lines=[{"x": counts, "y": list(eff), "label": "efficiency"}],
            points=[{"x": n, "y": e, "color": plotting.color(0)} for n, e in eff.items()],
            hlines=[{"y": 0.5, "label": "0.5"}], xlog=True, ylim=(0, 1), xlabel="GPUs (log scale)",
            ylabel="scaling efficiency (speedup / GPUs)", legend="none", height=260,
            xticks=[(n, f"{n:,}") for n in (counts if len(counts) <= 8 else counts[::2])],
            alt=f"scaling efficiency from {eff.iloc[0]:.2f} at 8 GPUs to {eff.iloc[-1]:.2f} at {counts[-1]:,} GPUs")
        half = [n for n, e in eff.items() if e < 0.5]
        tail = (f"Efficiency drops below 0.5 at {half[0]:,} GPUs." if half else
                f"Efficiency stays above 0.5 up to {counts[-1]:,} GPUs.")
        if counts[-1] < 4096:
            tail += (f" Beyond {counts[-1]:,} GPUs this batch leaves a GPU less than one 2,048-token sequence: "
                     "pure data parallelism stops there.")
        shown = df.loc[sorted({8, 64, counts[-1]} & set(counts))].reset_index()
        table = tables.show(shown, columns={
            "gpus": "GPUs", "compute s": tables.Col("Compute per step", _seconds),
            "comm s": tables.Col("All-reduce", _seconds), "efficiency": tables.Col("Efficiency", ".2f"),
            "algorithm": tables.Col("Fastest algorithm", lambda a: LABELS.get(a, a))}).html
        return (_layout.verdict(f"Efficiency {eff.iloc[0]:.2f} at {counts[0]:,} GPUs, {eff.iloc[-1]:.2f} at "
                                f"{counts[-1]:,}. {tail}", eff.iloc[-1] >= 0.5) + svg
                + _layout.para(f"{units.fmt_number(params / 1e9)}B parameters, {units.fmt_number(batch / 1e6)}M tokens "
                               f"per step, gradients in BF16, {units.fmt_percent(overlap)} of communication "
                               "overlapped.", small=True) + table)

    return widgets.explore(render, [
        widgets.Choice("topology", "Topology", topologies()),
        widgets.Choice("params", "Model", {"1.3B": 1.3e9, "7B": 7e9, "70B": 70e9}, value=7e9),
        widgets.Choice("batch", "Global batch", {"1M tokens": 1e6, "4M tokens": 4e6, "16M tokens": 16e6}, value=4e6),
        widgets.Slider("overlap", "Overlap", [0.0, 0.5, 0.9], value=0.0, fmt=lambda v: str(units.fmt_percent(v))),
    ], title="Data parallelism: GPUs → scaling efficiency")
