"""Views for chapter 11 (DeepSeek-V3): the accounting, bubble and recipe tables, the pipeline-efficiency figure, and
the bubble and same-cards explorers. Every number comes from :mod:`chipchain.deepseek` and the modules it uses."""
from __future__ import annotations

from .. import _check, calibration, compute, deepseek, hardware, memory, plotting, schedules, tables, units, widgets
from .._i18n import gettext as _
from . import _layout
from ._figure import Figure
from ..units import DAY

__all__ = ["accounting_table", "bubble_table", "recipe_table", "same_job_table", "pipeline_efficiency_figure",
           "bubble_view", "bubble_explorer", "same_cards_explorer"]


def accounting_table(run: deepseek.Report = deepseek.V3):
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


#: Table 2's bubble expressions as the report writes them (DeepSeek-AI 2024)
TABLE2_FORMULAS = {"1F1B": "(PP − 1)(F + B)", "ZB-H1": "(PP − 1)(F + B − 2W)", "DualPipe": "(PP/2 − 1)(F&B + B − 3W)"}


def _unbroken(formula: str) -> str:
    """A formula that wraps only between its bracketed factors: no-break spaces inside a factor, a zero-width
    break between factors (so a phone never cuts "3W" from its sign)."""
    return formula.replace(" ", "\u00a0").replace(")(", ")\u200b(")


def bubble_table(pp=16, f=1.0, b=2.0, w=1.0):
    """Table 2 of the V3 report evaluated at ``pp`` and chunk times F, B, W (:func:`chipchain.schedules.bubble`,
    F&B = F + B), as a pandas DataFrame with the report's expression beside each value.

    >>> float(bubble_table(16).loc["1F1B", "bubble (units of F)"])
    45.0
    """
    import pandas as pd

    rows = []
    for s in deepseek.SCHEDULES:
        mem = deepseek.schedule_memory(s, pp)
        rows.append({"schedule": s, "bubble formula": _unbroken(TABLE2_FORMULAS[s]),
                     "bubble (units of F)": schedules.bubble(s, pp, 1, f, b, w) / f,
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


def pipeline_efficiency_figure(pp=16, comm=0.5, microbatches=(16, 24, 32, 48, 64, 96, 128, 192, 256)):
    """Static figure (chart system): useful-compute fraction of 1F1B, ZB-H1 and DualPipe against micro-batches per
    iteration (:func:`chipchain.deepseek.pipeline_efficiency`, F : B : W = 1 : 2 : 1), log₂ x axis; the key sits
    above the plot, off the data.

    >>> [round(v, 1) for v in pipeline_efficiency_figure().data["lines"]["DualPipe"][:2]]
    [77.4, 83.7]
    """
    p = _check.integer("pp", pp, minimum=2)
    ms = [m for m in microbatches if m >= p and m % 2 == 0]
    if not ms:
        raise ValueError(f"microbatches must hold an even count of at least pp ({p}), got {microbatches!r}")
    data = {s: [100 * deepseek.pipeline_efficiency(s, p, m, comm=comm) for m in ms] for s in deepseek.SCHEDULES}
    lines = [{"x": ms, "y": ys, "label": s, "color": plotting.color(i), "dash": s == "ZB-H1"}
             for i, (s, ys) in enumerate(data.items())]
    ticks = [m for m in (16, 32, 64, 128, 256, 512) if ms[0] <= m <= ms[-1]]
    alt = _("Line chart of useful compute against micro-batches from {lo} to {hi} at PP = {pp} and communication "
            "{comm} × compute: {lines}.").format(
        lo=ms[0], hi=ms[-1], pp=p, comm=f"{comm:g}",
        lines=_("; ").join(_("{schedule} from {start} to {end} %").format(schedule=s, start=f"{ys[0]:.0f}",
                                                                        end=f"{ys[-1]:.0f}")
                        for s, ys in data.items()))
    html = plotting.svg_chart(lines=lines, xlog=True, ylim=(0, 100), xticks=[(m, f"{m}") for m in ticks],
                              xlabel="micro-batches per iteration (log scale)", ylabel="useful compute (%)",
                              title=_("PP = {pp}, communication = {comm} × compute").format(pp=p, comm=f"{comm:g}"),
                              alt=alt, height=300)
    text = "; ".join(f"{s}: {ys[0]:.1f} % at {ms[0]} → {ys[-1]:.1f} % at {ms[-1]} micro-batches"
                     for s, ys in data.items())
    return Figure(html, text, {"microbatches": ms, "lines": data})


_COMMS = tuple(i / 20 for i in range(21))            # communication / compute from 0 to 1 (DualPipe's model range)


def bubble_view(pp, microbatches, w) -> str:
    """One view of :func:`bubble_explorer`: useful compute of 1F1B, ZB-H1 and DualPipe against the communication
    ratio c (0 to 1) at a chosen depth, number of micro-batches and W — the axis the chapter's figure holds fixed
    at c = 0.5 — with the bubbles of Table 2 and the useful share at c = 0, 0.5 and 1 in a table."""
    import pandas as pd

    if microbatches < pp:
        raise ValueError(f"{microbatches} micro-batches cannot fill {pp} pipeline stages (need at least {pp})")
    lines, rows = [], []
    for i, s in enumerate(deepseek.SCHEDULES):
        ys = [deepseek.pipeline_efficiency(s, pp, microbatches, 1.0, 2.0, w, c) * 100 for c in _COMMS]
        lines.append({"x": list(_COMMS), "y": ys, "label": s, "color": plotting.color(i), "dash": s == "ZB-H1"})
        rows.append({"schedule": s, "bubble": schedules.bubble(s, pp, 1, 1.0, 2.0, w),
                     "c0": ys[0], "c05": ys[10], "c1": ys[20]})
    chart = plotting.svg_chart(
        lines=lines, vlines=[{"x": 0.5, "label": "c = 0.5 (the figure above)"}], xlim=(0, 1), ylim=(0, 100),
        xlabel="communication / compute, c", ylabel="useful compute (%)", height=260,
        alt=_("Useful compute against the communication ratio for PP {pp}, {m} micro-batches, W = {w} F: "
              "{lines}").format(pp=pp, m=microbatches, w=f"{w:g}", lines=_("; ").join(
                  _("{schedule} {c0} % at c = 0 and {c1} % at c = 1").format(
                      schedule=r['schedule'], c0=f"{r['c0']:.0f}", c1=f"{r['c1']:.0f}") for r in rows)))
    pct = lambda v: f"{v:.1f} %"                                     # noqa: E731
    table = tables.show(pd.DataFrame(rows), columns={
        "schedule": "Schedule", "bubble": tables.Col("Bubble (F)", lambda v: f"{v:g}"),
        "c0": tables.Col("c = 0", pct), "c05": tables.Col("c = 0.5", pct), "c1": tables.Col("c = 1", pct)},
        caption=_("Useful compute at three communication ratios c; bubble in units of F (Table 2). PP = {pp}, "
                  "{m} micro-batches, F : B : W = 1 : 2 : {w}").format(pp=pp, m=microbatches, w=f"{w:g}")).html
    return chart + table


@widgets.explorer
def bubble_explorer():
    """Pipeline efficiency of 1F1B, ZB-H1 and DualPipe against the communication-to-compute ratio, for a pipeline
    depth, a number of micro-batches and a split of the backward pass (the book's model on Table 2). The chapter's
    figure plots the same model against micro-batches at c = 0.5; this turns it around."""
    return widgets.explore(bubble_view, [
        widgets.Slider("pp", "Pipeline stages PP", [4, 8, 16, 32], value=16),
        widgets.Slider("microbatches", "Micro-batches", [16, 32, 64, 128, 256], value=32),
        widgets.Slider("w", "W (weight-gradient part of B = 2F)", [0.5, 1.0, 1.5], value=1.0,
                       fmt=lambda v: f"{v:g} F"),
    ], title="Pipeline bubbles against communication: 1F1B vs ZB-H1 vs DualPipe")


@widgets.explorer
def same_cards_explorer():
    """Same cards × different engineering = different effective compute: V3's pre-training job (6 · 37 B · 14.8 T)
    on H800s at a chosen MFU, price and cluster size, in days and dollars, next to what V3 reported. The MFU slider
    holds V3's own implied MFU (its reported GPU-hours against the chosen peak), so the default view reproduces the
    report; the default is the chapter's: BF16 basis, $2 per GPU-hour, 2,048 GPUs."""
    run = deepseek.V3
    c = compute.training_flops(run.active_params, run.tokens)
    reported_hours = run.gpu_hours["pre-training"]
    implied = calibration.implied_mfu(run.active_params, run.tokens, reported_hours, run.accelerator, "bf16")

    def render(mfu, basis, price, n_gpus):
        peak = hardware.get(run.accelerator).peak_flops(basis)
        hours = compute.gpu_hours(c, peak, mfu)
        days = compute.training_time(c, n_gpus, peak, mfu) / DAY
        eff = n_gpus * peak * mfu
        rep_days = compute.seconds_from_gpu_hours(reported_hours, n_gpus) / DAY
        reported = _("V3 reported: {value}")
        head = _layout.headline([
            ("effective compute", str(units.fmt_rate(eff)),
             _("{n} × {peak} {basis} dense × {mfu}").format(n=f"{n_gpus:,}", peak=units.fmt_rate(peak),
                                                            basis=basis.upper(), mfu=units.fmt_percent(mfu, 3))),
            (_("days on {n} GPUs").format(n=f"{n_gpus:,}"), f"{days:,.1f}", reported.format(value=f"{rep_days:,.1f}")),
            (_("cost at ${price}/GPU-hour").format(price=f"{price:g}"),
             str(units.fmt_dollars(compute.cost(hours, price))),
             reported.format(value=units.fmt_dollars(compute.cost(reported_hours, price))))])
        gpu_hours = _("{value} M GPU-hours")
        bars = plotting.svg_hbars([("this setting", hours / 1e6, plotting.color(0)),
                              ("V3 reported", reported_hours / 1e6, plotting.color(1))],
                                  xlabel="pre-training GPU-hours (millions)",
                                  unit_format=lambda v: gpu_hours.format(value=f"{v:,.3g}"),
                                  alt=_("GPU-hours: this setting {hours} million, V3 reported {reported} million")
                                  .format(hours=f"{hours / 1e6:,.3g}", reported=f"{reported_hours / 1e6:,.3g}"))
        return head + bars

    def mfu_label(v):
        return f"{units.fmt_percent(v, 3)} (V3)" if v == implied else str(units.fmt_percent(v))

    return widgets.explore(render, [
        widgets.Slider("mfu", "MFU", [0.15, 0.2, 0.25, 0.3, implied, 0.4, 0.5], value=implied, fmt=mfu_label),
        widgets.Choice("basis", "MFU measured against", {"BF16 peak": "bf16", "FP8 peak": "fp8"}, value="bf16"),
        widgets.Slider("price", "$ per GPU-hour", [1.0, 2.0, 3.0, 4.0], value=2.0, fmt=lambda v: f"${v:g}"),
        widgets.Slider("n_gpus", "GPUs", [1024, 2048, 4096], value=2048, fmt=lambda v: f"{v:,}"),
    ], title="Same cards × different engineering: V3's pre-training job on H800s")
