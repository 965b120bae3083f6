"""Views for chapter 11 (DeepSeek-V3): the accounting, bubble and recipe tables, the pipeline-efficiency figure, and
the bubble and same-cards explorers. Every number comes from :mod:`chipchain.deepseek` and the modules it uses."""
from __future__ import annotations

from .. import _check, compute, deepseek, hardware, memory, parallel, plotting, units, widgets
from ..units import DAY, HOUR

__all__ = ["accounting_table", "bubble_table", "recipe_table", "same_job_table", "plot_pipeline_efficiency",
           "bubble_explorer", "same_cards_explorer"]


def accounting_table(run: deepseek.Run = deepseek.V3):
    """The run's GPU-hour and dollar ledger as a pandas DataFrame (stages and total).

    >>> float(accounting_table().loc["total", "cost ($ M)"])
    5.576
    """
    import pandas as pd

    dollars = deepseek.cost_breakdown(run)
    rows = [{"stage": k, "GPU-hours (K)": h / 1e3, "cost ($ M)": dollars[k] / 1e6} for k, h in run.gpu_hours.items()]
    rows.append({"stage": "total", "GPU-hours (K)": deepseek.gpu_hours_total(run) / 1e3,
                 "cost ($ M)": dollars["total"] / 1e6})
    return pd.DataFrame(rows).set_index("stage")


def bubble_table(pp=16, f=1.0, b=2.0, w=1.0):
    """Table 2 of the V3 report evaluated at ``pp`` and chunk times F, B, W, as a pandas DataFrame.

    >>> float(bubble_table(16).loc["1F1B", "bubble (units of F)"])
    45.0
    """
    import pandas as pd

    rows = []
    for s in parallel.PIPELINE_SCHEDULES:
        mem = deepseek.schedule_memory(s, pp)
        rows.append({"schedule": s, "bubble (units of F)": parallel.schedule_bubble(s, pp, f, b, w) / f,
                     "parameter copies": mem.param_copies,
                     "activations held (micro-batches)": mem.activation_microbatches})
    return pd.DataFrame(rows).set_index("schedule")


def recipe_table(recipes=("mixed-adam", "deepseek-v3-fp8"), params=deepseek.V3.total_params):
    """Bytes of model state per parameter under each recipe (:data:`chipchain.memory.RECIPES`) and for ``params``
    parameters (default DeepSeek-V3's 671 B), as a pandas DataFrame."""
    import pandas as pd

    rows = {memory.recipe(r).name: {"bytes per parameter": memory.recipe(r).total,
                                    f"states of {units.fmt_number(params / 1e9)} B":
                                        str(units.fmt_bytes(memory.state_bytes(params, r)))} for r in recipes}
    return pd.DataFrame(rows).T


def same_job_table(jobs: dict, n_gpus=deepseek.V3.n_gpus, price_per_gpu_hour=deepseek.V3.price_per_gpu_hour):
    """``{label: deepseek.Job}`` as a pandas DataFrame: GPU-hours (M), days on ``n_gpus``, $ M at
    ``price_per_gpu_hour`` and MFU (BF16 basis)."""
    import pandas as pd

    return pd.DataFrame({k: {"GPU-hours (M)": j.gpu_hours / 1e6, f"days on {n_gpus:,}": j.days,
                             f"cost at ${price_per_gpu_hour:g} ($ M)": j.dollars / 1e6, "MFU (BF16 basis)": j.mfu}
                         for k, j in jobs.items()}).T


def plot_pipeline_efficiency(pp=16, comm=0.5, microbatches=(16, 24, 32, 48, 64, 96, 128, 192, 256), ax=None):
    """Static figure: useful-compute fraction of 1F1B, ZB1P and DualPipe against micro-batches per iteration
    (:func:`chipchain.deepseek.pipeline_efficiency`, F : B : W = 1 : 2 : 1). Returns the Axes."""
    ax = plotting.axes(ax)
    p = _check.integer("pp", pp, minimum=2)
    for i, s in enumerate(parallel.PIPELINE_SCHEDULES):
        ms = [m for m in microbatches if m >= p and m % 2 == 0]
        ax.plot(ms, [100 * deepseek.pipeline_efficiency(s, p, m, comm=comm) for m in ms], marker="o", ms=3,
                color=plotting.color(i), ls="--" if s == "ZB1P" else "-", label=s)
    ax.set_xscale("log", base=2)
    ticks = [m for m in (16, 32, 64, 128, 256, 512) if min(microbatches) <= m <= max(microbatches)]
    ax.set_xticks(ticks, [str(m) for m in ticks])
    ax.set_ylim(0, 100)
    ax.set_xlabel("micro-batches per iteration")
    ax.set_ylabel("useful compute (%)")
    ax.set_title(f"PP = {p}, communication = {comm:g} × compute")
    ax.legend(loc="lower right")
    return ax


@widgets.explorer
def bubble_explorer():
    """Pipeline efficiency of 1F1B, ZB1P and DualPipe against the number of micro-batches, for a pipeline depth,
    a communication-to-compute ratio and a split of the backward pass (the book's model on Table 2)."""
    ms = [16, 24, 32, 48, 64, 96, 128, 192, 256]
    m_ref = 32

    def render(pp, comm, w):
        lines, rows = [], []
        for i, s in enumerate(parallel.PIPELINE_SCHEDULES):
            xs = [m for m in ms if m >= pp]
            ys = [deepseek.pipeline_efficiency(s, pp, m, 1.0, 2.0, w, comm) * 100 for m in xs]
            lines.append({"x": xs, "y": ys, "label": s, "color": plotting.color(i), "dash": s == "ZB1P"})
            e = deepseek.pipeline_efficiency(s, pp, m_ref, 1.0, 2.0, w, comm)
            rows.append(f"<tr><td>{s}</td><td>{parallel.schedule_bubble(s, pp, 1.0, 2.0, w):g}</td>"
                        f"<td>{e * 100:.1f} %</td></tr>")
        chart = plotting.svg_chart(
            lines=lines, xlog=True, ylim=(0, 100), xlabel="micro-batches per iteration",
            ylabel="useful compute (%)", title=f"PP = {pp}, communication = {comm:g} × compute, W = {w:g} F",
            alt=f"Pipeline efficiency against micro-batches for 1F1B, ZB1P and DualPipe at PP {pp}; "
                f"communication {comm:g} of compute")
        head = (f"<table class='cc-table'><tr><th>schedule</th><th>bubble (F units, Table 2)</th>"
                f"<th>useful at {m_ref} micro-batches</th></tr>")
        return chart + head + "".join(rows) + "</table>"

    return widgets.explore(render, [
        widgets.Slider("pp", "pipeline stages PP", [4, 8, 16, 32], value=16),
        widgets.Slider("comm", "communication / compute", [0.0, 0.25, 0.5, 1.0], value=0.5),
        widgets.Slider("w", "W (weight-gradient part of B = 2F)", [0.5, 1.0, 1.5], value=1.0),
    ], title="Pipeline bubbles: 1F1B vs ZB1P vs DualPipe")


@widgets.explorer
def same_cards_explorer():
    """Same cards × different engineering = different effective compute: V3's pre-training job (6 · 37 B · 14.8 T)
    on H800s at a chosen MFU, price and cluster size, in days and dollars, next to what V3 reported."""
    run = deepseek.V3
    c = compute.training_flops(run.active_params, run.tokens)
    reported_hours = run.gpu_hours["pre-training"]

    def render(mfu, basis, price, n_gpus):
        peak = hardware.get(run.accelerator).peak_flops(basis)
        hours = compute.gpu_hours(c, peak, mfu)
        days = compute.training_time(c, n_gpus, peak, mfu) / DAY
        eff = n_gpus * peak * mfu
        rep_days = reported_hours * HOUR / n_gpus / DAY
        bar_max = max(hours, reported_hours)
        bars = "".join(
            f"<div style='margin:.2em 0'><span style='display:inline-block;width:11em'>{label}</span>"
            f"<span style='display:inline-block;background:{col};height:.9em;width:{28 * v / bar_max:.1f}em'>"
            f"</span> {units.fmt_number(v / 1e6, 3)} M GPU-hours</div>"
            for label, v, col in (("this setting", hours, plotting.color(0)),
                                  ("V3 reported", reported_hours, plotting.color(1))))
        return (f"<p>Effective compute: <b>{units.fmt_rate(eff)}</b> "
                f"({n_gpus:,} × {units.fmt_rate(peak)} {basis.upper()} dense × {mfu:.0%} MFU).</p>"
                f"{bars}<table class='cc-table'><tr><th></th><th>this setting</th><th>V3 reported</th></tr>"
                f"<tr><td>days on {n_gpus:,} GPUs</td><td>{days:.1f}</td><td>{rep_days:.1f}</td></tr>"
                f"<tr><td>cost at ${price:g}/GPU-hour</td><td>{units.fmt_dollars(compute.cost(hours, price))}</td>"
                f"<td>{units.fmt_dollars(compute.cost(reported_hours, price))}</td></tr></table>")

    return widgets.explore(render, [
        widgets.Slider("mfu", "MFU", [0.15, 0.2, 0.25, 0.3, 0.35, 0.4], value=0.35, fmt=lambda v: f"{v:.0%}"),
        widgets.Choice("basis", "MFU measured against", {"BF16 peak": "bf16", "FP8 peak": "fp8"}, value="bf16"),
        widgets.Slider("price", "$ per GPU-hour", [1.0, 2.0, 3.0, 4.0], value=2.0, fmt=lambda v: f"${v:g}"),
        widgets.Slider("n_gpus", "GPUs", [1024, 2048, 4096], value=2048),
    ], title="Same cards × different engineering = different effective compute (V3 pre-training job on H800)")
