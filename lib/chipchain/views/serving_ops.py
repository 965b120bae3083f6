"""Chapter 12's serving operations in figures and tables: the latency–throughput curve, speculative decoding,
mixture-of-experts weight traffic, and Moore's law with real transistor counts."""
from __future__ import annotations

from .. import _check, moore, plotting, serving_latency
from ._figure import Figure, key
from .._i18n import gettext as _


def latency_throughput_figure(curves: dict, label_batches=(1, 8, 64)):
    """The latency–throughput curve as a chart-system figure (:class:`~chipchain.views._figure.Figure`): time per
    output token (ms) against the server's tokens per second, log–log, one line per entry of ``curves`` (label →
    list of :class:`chipchain.serving_latency.LatencyPoint`), each batch a dot, the batches in ``label_batches``
    labelled on the chart.

    >>> f = latency_throughput_figure({"8B": serving_latency.latency_throughput("H100", "Llama-3-8B", 1024, (1, 64))})
    >>> [(b, round(ms, 2), round(tps)) for _, b, ms, tps in f.data["points"]]
    [(1, 4.83, 207), (64, 7.36, 8695)]
    """

    if not curves:
        raise ValueError("curves must hold at least one labelled list of LatencyPoint")
    lines, points, data = [], [], []
    for i, (label, pts) in enumerate(curves.items()):
        c = plotting.color(i)
        lines.append({"x": [p.tokens_per_second for p in pts], "y": [p.tpot * 1e3 for p in pts], "label": label,
                      "color": c})
        for p in pts:
            points.append({"x": p.tokens_per_second, "y": p.tpot * 1e3, "color": c,
                           "label": _("batch {b}").format(b=f"{p.batch:,}") if p.batch in label_batches else None})
            data.append((label, p.batch, p.tpot * 1e3, p.tokens_per_second))

    def span(label, pts):
        a, b = pts[0], pts[-1]
        return (f"{label}: from {a.tpot * 1e3:,.1f} ms per token and {a.tokens_per_second:,.0f} tokens/s at batch "
                f"{a.batch:,} to {b.tpot * 1e3:,.1f} ms and {b.tokens_per_second:,.0f} tokens/s at batch {b.batch:,}")

    def span_alt(label, pts):
        a, b = pts[0], pts[-1]
        return _("{label}: from {ms_a} ms per token and {tps_a} tokens/s at batch {b_a} to {ms_b} ms and {tps_b} "
                 "tokens/s at batch {b_b}").format(
            label=_(label), ms_a=f"{a.tpot * 1e3:,.1f}", tps_a=f"{a.tokens_per_second:,.0f}", b_a=f"{a.batch:,}",
            ms_b=f"{b.tpot * 1e3:,.1f}", tps_b=f"{b.tokens_per_second:,.0f}", b_b=f"{b.batch:,}")

    alt = (_("Log–log chart of time per output token against the server's tokens per second, one curve per "
             "configuration, a dot per batch size. ") + _("; ").join(span_alt(k, v) for k, v in curves.items())
           + _("."))
    html = plotting.svg_chart(lines=lines, points=points, xlog=True, ylog=True,
                              xlabel="server throughput (tokens/s, all users)", ylabel="time per output token (ms)",
                              alt=alt, height=340)
    return Figure(html, "; ".join(span(k, v) for k, v in curves.items()), {"points": data})


def transistor_counts_figure(eras=((1971, 2005), (2005, 2022))):
    """Real transistor counts as a chart-system figure (:class:`~chipchain.views._figure.Figure`):
    microprocessors (Rupp 2022) and the catalog's accelerators as dots on a log axis, with each era's
    least-squares line (:func:`chipchain.moore.fit_doubling_time`) dashed and its doubling time in the key.

    >>> [round(t, 1) for _, _, t in transistor_counts_figure().data["eras"]]
    [2.1, 2.0]
    """
    import numpy as np


    cpu, acc = moore.transistor_points("microprocessor"), moore.transistor_points("accelerator")
    lines, fits = [], []
    for i, (lo, hi) in enumerate(eras):
        q = [p for p in cpu if lo <= p.year < hi]
        T = moore.fit_doubling_time([p.year for p in q], [p.transistors for p in q])
        coef = np.polyfit([p.year for p in q], np.log2([p.transistors for p in q]), 1)
        xs = [float(lo), float(min(hi, 2021.9))]
        lines.append({"x": xs, "y": [float(2 ** np.polyval(coef, x)) for x in xs], "dash": True,
                      "color": ("#000", "#777")[i % 2],
                      "label": _("least-squares fit {lo}–{hi}: doubling every {T} years").format(
                          lo=lo, hi=min(hi, 2021), T=f"{T:.1f}")})
        fits.append((lo, min(hi, 2021), T))
    points = [{"x": p.year, "y": p.transistors, "color": plotting.color(0)} for p in cpu]
    points += [{"x": p.year, "y": p.transistors, "color": plotting.color(1),
                "label": p.name.split("-")[0] if p in (acc[0], acc[-1]) else None} for p in acc]
    alt = (_("Transistors per chip on a log axis against the year: {n_cpu} microprocessors from {y0} ({t0}) to {y1} "
             "({t1}) and {n_acc} AI accelerators from the {a0} ({b0} billion, {ya0}) to the {a1} ({b1} billion, "
             "{ya1}); ").format(
               n_cpu=len(cpu), y0=f"{cpu[0].year:.0f}", t0=f"{cpu[0].transistors:,.0f}", y1=f"{cpu[-1].year:.0f}",
               t1=f"{cpu[-1].transistors:,.0f}", n_acc=len(acc), a0=acc[0].name, b0=f"{acc[0].transistors / 1e9:,.1f}",
               ya0=f"{acc[0].year:.0f}", a1=acc[-1].name, b1=f"{acc[-1].transistors / 1e9:,.0f}",
               ya1=f"{acc[-1].year:.0f}")
           + _("; ").join(_("{lo}–{hi} doubling every {T} years").format(lo=lo, hi=hi, T=f"{T:.1f}")
                          for lo, hi, T in fits) + _("."))
    years, counts = [p.year for p in cpu + acc], [p.transistors for p in cpu + acc]
    html = plotting.svg_chart(lines=lines, points=points, ylog=True, xlabel="year", height=340,
                              xlim=(min(years) - 2, max(years) + 8),
                              ylim=(min(counts) / 3, max(counts) * 30), xformat=lambda v: f"{v:.0f}",
                              ylabel="transistors per chip (count)", alt=alt)
    html = html.replace("<svg", key([("microprocessors (Rupp 2022)", plotting.color(0), "dot"),
                                     ("AI accelerators (this book's catalog)", plotting.color(1), "dot")]) + "<svg", 1)
    text = "; ".join(f"{lo}–{hi}: doubling every {T:.1f} years" for lo, hi, T in fits)
    return Figure(html, text, {"cpu": [(p.name, p.year, p.transistors) for p in cpu],
                               "accelerators": [(p.name, p.year, p.transistors) for p in acc], "eras": fits})


def speculative_table(alphas=(0.6, 0.8, 0.9), gammas=(2, 4, 8), cost_ratio=0.05):
    """Expected tokens per target pass and wall-clock speed-up of speculative decoding (Leviathan et al. 2023)
    for each acceptance rate α and draft length γ, as a DataFrame.

    >>> float(speculative_table((0.8,), (4,)).loc[0, "speedup"].round(2))
    2.8
    """
    import pandas as pd

    c = _check.nonnegative("cost_ratio", cost_ratio)
    rows = [{"alpha": a, "gamma": g, "tokens_per_pass": serving_latency.expected_accepted_tokens(a, g),
             "speedup": serving_latency.speculative_speedup(a, g, c)} for a in alphas for g in gammas]
    return pd.DataFrame(rows)


def moe_traffic_table(traffic):
    """Resident weights, weights read per decode step and per generated token, GB, for a list of
    :class:`chipchain.serving_latency.MoETraffic`."""
    import pandas as pd

    return pd.DataFrame([{"batch": t.batch, "resident_GB": t.resident / 1e9, "read_GB": t.read / 1e9,
                          "read_per_token_GB": t.read_per_token / 1e9} for t in traffic])
