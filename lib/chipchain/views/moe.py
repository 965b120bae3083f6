"""Chapter 11's expert-parallel engineering in figures and tables: all-to-all bytes per token, DeepEP's measured
bandwidths, auxiliary-loss-free load balancing and FP8 accumulation with and without promotion."""
from __future__ import annotations

from .. import _check, accumulation, expert_routing, plotting, units
from .._i18n import gettext as _
from ._figure import Figure


def all_to_all_table(traffic: expert_routing.AllToAllBytes):
    """One token's forward all-to-all bytes in one MoE layer (:func:`chipchain.expert_routing.all_to_all_bytes`),
    as a pandas DataFrame (kB, decimal): to and from all its experts' GPUs, and the part that crosses the network.

    >>> df = all_to_all_table(expert_routing.all_to_all_bytes("DeepSeek-V3", node_limit=4))
    >>> df["total_kB"].round(1).tolist()
    [173.8, 86.9]
    """
    import pandas as pd

    if not isinstance(traffic, expert_routing.AllToAllBytes):
        raise ValueError("traffic must be an expert_routing.AllToAllBytes")
    t = traffic
    rows = [(_("to and from its {k} experts' GPUs").format(k=t.top_k), t.top_k, t.gpu_dispatch, t.gpu_combine),
            (_("across the network (at most {n} nodes)").format(n=t.node_limit), t.node_limit,
             t.node_limit * t.dispatch_per_copy, t.node_limit * t.combine_per_copy)]
    return pd.DataFrame([{"path": p, "copies": c, "dispatch_kB": d / 1e3, "combine_kB": b / 1e3,
                          "total_kB": (d + b) / 1e3} for p, c, d, b in rows])


def deepep_table(kernel="low-latency"):
    """DeepEP's published kernels (H800, CX7 InfiniBand) as a DataFrame; for the low-latency kernels also the
    bandwidth their latency implies for the bytes :func:`chipchain.expert_routing.token_bytes` counts.

    >>> [float(x) for x in deepep_table().iloc[0][["ep", "published_GBps"]]]
    [8.0, 98.0]
    """
    import pandas as pd

    rows = []
    for k in expert_routing.deepep_kernels(kernel):
        row = {"operation": k.operation, "ep": k.ep, "tokens": k.tokens, "link": k.link,
               "latency_us": None if k.latency is None else k.latency * 1e6, "published_GBps": k.bandwidth / 1e9}
        if k.latency is not None:
            row["implied_GBps"] = expert_routing.implied_bandwidth(k) / 1e9
        rows.append(row)
    return pd.DataFrame(rows)


def bias_balancing_figure(run: expert_routing.BalanceRun):
    """Static figure (chart system): the busiest expert's load above the mean, step by step, with the bias rule
    and without it; the key sits above the plot, off the data (reader #14).

    >>> r = expert_routing.simulate_bias_balancing(n_experts=16, top_k=2, tokens=256, steps=20, gamma=0.001)
    >>> len(bias_balancing_figure(r).data["with bias"])
    20
    """
    if not isinstance(run, expert_routing.BalanceRun):
        raise ValueError("run must be an expert_routing.BalanceRun")
    steps = list(range(1, len(run.max_violation) + 1))
    none = [100 * v for v in run.unbiased]
    bias = [100 * v for v in run.max_violation]
    lab_b = _("bias updated by γ = {gamma} each step").format(gamma=f"{run.gamma:g}")
    alt = _("Two lines over {n} training steps of the busiest expert's load above the mean: without the bias it "
            "stays near {none} %; with the bias it falls from {start} % to about {end} %.").format(
        n=len(steps), none=f"{sum(none[-20:]) / len(none[-20:]):.0f}", start=f"{bias[0]:.0f}",
        end=f"{sum(bias[-20:]) / len(bias[-20:]):.0f}")
    html = plotting.svg_chart(
        lines=[{"x": steps, "y": none, "label": "no bias (router as trained)", "color": plotting.color(1)},
               {"x": steps, "y": bias, "label": lab_b, "color": plotting.color(0)}],
        xlim=(0, steps[-1]), xlabel="training step", ylabel="busiest expert's load above the mean (%)", alt=alt)
    text = (f"no bias: {none[-1]:.1f} % at step {steps[-1]}; with bias: {bias[0]:.1f} % at step 1 → "
            f"{bias[-1]:.1f} % at step {steps[-1]}")
    return Figure(html, text, {"steps": steps, "no bias": none, "with bias": bias})


def accumulation_figure(comparison: accumulation.AccumulationComparison):
    """Static figure (chart system): normwise relative error of emulated FP8 GEMM accumulation against the inner
    dimension K — limited accumulator alone, promoted to FP32 every N_C elements, and full FP32 (log–log)."""
    if not isinstance(comparison, accumulation.AccumulationComparison):
        raise ValueError("comparison must be an accumulation.AccumulationComparison")
    c = comparison
    ks = list(c.ks)
    series = {f"{c.acc_bits}-bit accumulator only": [100 * v for v in c.limited],
              f"promoted to FP32 every {c.promote_every}": [100 * v for v in c.promoted],
              "FP32 accumulator": [100 * v for v in c.fp32]}
    colours = (plotting.color(1), plotting.color(0), "#777")
    # the series keep their English names in ``data``; the chart names them in the reader's language
    names = {f"{c.acc_bits}-bit accumulator only": _("{bits}-bit accumulator only").format(bits=c.acc_bits),
             f"promoted to FP32 every {c.promote_every}": _("promoted to FP32 every {n}").format(n=c.promote_every),
             "FP32 accumulator": _("FP32 accumulator")}
    lines = [{"x": ks, "y": ys, "label": names[k], "color": col, "dash": i == 2}
             for i, ((k, ys), col) in enumerate(zip(series.items(), colours))]
    points = [{"x": k, "y": y, "color": col} for (_, ys), col in zip(series.items(), colours) for k, y in zip(ks, ys)]
    fmt = lambda v: f"{v:.3g} %"                                                      # noqa: E731
    alt = _("Log–log chart of relative error against the inner dimension K ({ks}): {lines}.").format(
        ks=_(", ").join(f"{k:,}" for k in ks),
        lines=_("; ").join(_("{series} from {start} to {end}").format(series=names[k], start=fmt(ys[0]),
                                                                       end=fmt(ys[-1]))
                           for k, ys in series.items()))
    html = plotting.svg_chart(lines=lines, points=points, xlog=True, ylog=True,
                              xticks=[(k, f"{k:,}") for k in ks], xlabel="inner dimension K (elements summed)",
                              ylabel="relative error (%)", alt=alt)
    text = "; ".join(f"{k}: {fmt(ys[0])} at K = {ks[0]:,} → {fmt(ys[-1])} at K = {ks[-1]:,}"
                     for k, ys in series.items())
    return Figure(html, text, {"ks": ks, **series})
