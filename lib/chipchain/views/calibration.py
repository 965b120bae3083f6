"""Views for chapter 14 (the book's model against published runs): the runs, the MFU conventions, the errors of the
step-time predictor and of GPU-hours estimates, the predicted-vs-reported figure, the conflicts between papers, and
an explorer of one configuration's predicted breakdown beside its measured time.
"""
from __future__ import annotations

import math

from .. import _check, calibration, hardware, plotting, predictor, published_runs, tables, units, widgets
from . import _layout
from .walkthrough import plan_text
from ._figure import Figure, key
from .._i18n import gettext as _

__all__ = ["runs_table", "mfu_table", "step_table", "error_table", "conflicts", "conflicts_table",
           "implied_attention_efficiency", "dispatch_errors", "calibration_figure", "generation_figure", "step_explorer", "BANDS"]

#: the error bands drawn around the identity line (relative errors)
BANDS = (0.15, 0.30)


def _pct(x) -> str:
    return "—" if x is None else str(units.fmt_percent(x, 3))


def runs_table():
    """Every whole published run (``kind == "run"``): accelerator and count, tokens, GPU-hours, what the source
    reports, the MFU its GPU-hours imply (6N over the dense 16-bit peak), tier and caveat, as a pandas DataFrame.

    >>> t = runs_table()
    >>> len(t) >= 15, t.loc["Llama 2 70B", "implied MFU"]
    (True, '42.8 %')
    """
    import pandas as pd

    rows = []
    for r in published_runs.runs():
        if r.kind != "run":
            continue
        u = calibration.implied_mfu(r.active_params, r.tokens, r.gpu_hours, r.accelerator, r.dtype)
        rows.append({"run": r.run, "accelerator": r.accelerator.name,
                     "GPUs": f"{r.n_gpus:,}" if r.n_gpus else "—", "tokens": str(units.fmt_sci(r.tokens, 3)),
                     "GPU-hours": f"{r.gpu_hours:,.0f}", "what the source reports": r.reported,
                     "implied MFU": _pct(u), "tier": r.tier, "caveat": r.caveat or "—"})
    return pd.DataFrame(rows).set_index("run")


def mfu_table():
    """Each published MFU as its paper states it, beside the MFU the run's GPU-hours imply under one convention
    (6N, dense 16-bit peak, whole run), and why they differ (the row's caveat).

    >>> "PaLM 540B" in mfu_table().index
    True
    """
    import pandas as pd

    rows = []
    for r in published_runs.runs():
        if r.kind != "run" or r.reported_mfu is None:
            continue
        u = calibration.implied_mfu(r.active_params, r.tokens, r.gpu_hours, r.accelerator, r.dtype)
        rows.append({"run": r.run, "stated MFU": _pct(r.reported_mfu), "stated convention": r.mfu_convention,
                     "implied (6N, whole run)": _pct(u), "why they differ": r.mfu_note or r.caveat or "—"})
    return pd.DataFrame(rows).set_index("run")


def step_table(leave_one_out=True):
    """:func:`chipchain.predictor.step_errors` as a pandas DataFrame: each fully specified configuration, its
    measured and predicted seconds per step, the relative error, the efficiency used and how many rows it was
    fitted on."""
    import pandas as pd

    rows = [{"configuration": published_runs.get(e.name).run, "family": e.family, "plan": _plan(e),
             "measured (s)": f"{e.measured:,.2f}", "predicted (s)": f"{e.predicted:,.2f}",
             "error": f"{e.error:+.1%}".replace("%", " %"), "η": f"{e.efficiency:.3f}",
             "η fitted on": (_("{n} other families").format(n=len(e.fitted_on)) if leave_one_out
                             else _("{n} families").format(n=len(e.fitted_on)))}
            for e in predictor.step_errors("family" if leave_one_out else "none")]
    return pd.DataFrame(rows).set_index("configuration")


def _plan(e) -> str:
    p = e.prediction.plan
    return _("{plan}, " + p.recompute + " recomputation").format(plan=plan_text(p))


def error_table(fixed_mfu=0.5):
    """Median and worst relative error per family of runs, for the step-time predictor (leave-one-family-out) and for
    GPU-hours (leave-one-out median MFU, and the fixed MFU), as a pandas DataFrame.

    >>> t = error_table()
    >>> t.loc["all step configurations", "median |error|"]
    '13.6 %'
    """
    import pandas as pd

    def summary(what, errs):
        a = [abs(x) for x in errs]
        worst = max(errs, key=abs)
        return {"family": what, "rows": len(a), "median |error|": _pct(units.median(a)),
                "worst error": f"{worst:+.1%}".replace("%", " %")}

    steps, hours = predictor.step_errors(), calibration.gpu_hours_errors(fixed_mfu)
    rows = [summary(_("step time: {family}").format(family=_(f)), [e.error for e in steps if e.family == f])
            for f in dict.fromkeys(e.family for e in steps)]
    rows.append(summary("all step configurations", [e.error for e in steps]))
    rows.append(summary("GPU-hours of whole runs, median MFU of the others", [e.error for e in hours]))
    rows.append(summary(_("GPU-hours of whole runs, fixed {pct} MFU").format(pct=f"{fixed_mfu:.0%}".replace("%", " %")),
                        [e.fixed_error for e in hours]))
    return pd.DataFrame(rows).set_index("family")


def implied_attention_efficiency(e) -> float | None:
    """The fraction of the BF16 peak a row's attention core (FlashAttention, BF16 also on FP8 rows) would have run at
    for the step to take its measured time, everything else as the model prices it — ``e`` a
    :class:`chipchain.predictor.StepError`; None when the rest of the predicted step alone outlasts the measurement.
    The model runs attention at the row's η (:attr:`~chipchain.steptime.StepTime.efficiency`): a row predicted too
    fast whose attention is a large share of its step implies a lower figure, one predicted right the same.

    >>> e = next(e for e in predictor.step_errors() if e.name == "tt-t2-llama3-8b-8-cp8-256k")
    >>> round(implied_attention_efficiency(e), 2), round(e.prediction.efficiency, 2)  # 256K tokens on 8 H100s
    (0.16, 0.28)
    """
    if not isinstance(e, predictor.StepError):
        raise ValueError(f"e must be a chipchain.predictor.StepError (from predictor.step_errors()), got {e!r}")
    s = e.prediction
    if s.attention <= 0:
        raise ValueError(f"e: {e.name} spends no time in attention, so it implies no attention efficiency")
    left = e.measured - (s.seconds - s.attention)
    return None if left <= 0 else s.efficiency * s.attention / left


def dispatch_errors(min_gap=0.05) -> dict:
    """{row: (in-sample error as recorded, the same with one copy per expert)} for the rows whose recipe dispatches a
    token once per node (DeepEP, HybridEP: ``ep_dispatch`` "per-node") where that changes the prediction by more
    than ``min_gap`` — the rows whose expert all-to-all crosses nodes without being hidden.

    >>> sorted(dispatch_errors())[:1]
    ['mb2604-qwen3-30b-a3b-h100-16-fp8']
    """
    gap = _check.fraction("min_gap", min_gap)
    out = {}
    for e in predictor.step_errors("none"):
        if published_runs.get(e.name).plan["ep_dispatch"] != "per-node":
            continue
        each = predictor.row_prediction(e.name, ep_dispatch="per-expert")
        if abs(each.seconds / e.predicted - 1) > gap:
            out[e.name] = (e.error, each.seconds / e.measured - 1)
    return out


def conflicts() -> tuple:
    """:func:`chipchain.calibration.conflicts` (the rows of ``data/run_conflicts.csv``), for the table below."""
    return calibration.conflicts()


def conflicts_table():
    """:func:`conflicts` as a pandas DataFrame: both figures with their sources, the gap, and what explains it."""
    import pandas as pd

    def fmt(v, unit):
        return _pct(v) if unit == "fraction" else f"{v:,.1f} s" if unit == "s" else f"{v:,.0f}"

    def gap(a, b):              # enough digits that a 110-hour gap is not "-0.0 %"
        g = b / a - 1
        return f"{g:+.{1 if abs(g) >= 0.001 or g == 0 else 2}%}".replace("%", " %")

    rows = [{"what": c["what"], "one source": f"{fmt(c['figure_a'], c['unit'])} ({tables.sci_words(c['source_a'])})",
             "the other": f"{fmt(c['figure_b'], c['unit'])} ({tables.sci_words(c['source_b'])})",
             "gap": gap(c["figure_a"], c["figure_b"]), "why": tables.sci_words(c["explanation"])} for c in conflicts()]
    return pd.DataFrame(rows).set_index("what")


def _agreement_chart(pairs, lim, *, xlabel, ylabel, title, alt, identity, height=430):
    """A log–log predicted-against-measured chart: ``pairs`` is [(key label, colour, [(x, y), ...])], drawn as
    points with an HTML key (dots), the identity line and dashed ± :data:`BANDS` lines."""

    lo, hi = lim
    lines = [{"x": [lo, hi], "y": [lo, hi], "label": identity, "color": "#000"}]
    for k, band in enumerate(BANDS):
        grey = ("#777", "#aaa")[k % 2]
        for j, f in enumerate((1 + band, 1 - band)):
            lines.append({"x": [lo, hi], "y": [lo * f, hi * f], "color": grey, "dash": True,
                          "label": f"± {band:.0%}".replace("%", " %") if j == 0 else None})
    points = [{"x": x, "y": y, "color": c} for _, c, xy in pairs for x, y in xy]
    html = plotting.svg_chart(lines=lines, points=points, xlog=True, ylog=True, xlim=lim, ylim=lim, xlabel=xlabel,
                              ylabel=ylabel, title=title, alt=alt, height=height)
    return html.replace("<svg", key([(label, c, "dot") for label, c, _ in pairs]) + "<svg", 1)


def calibration_figure(fixed_mfu=0.5):
    """Chapter 14's figure as two chart-system charts, one above the other (:class:`~chipchain.views._figure.Figure`):
    predicted against measured seconds per step of every fully specified configuration (leave-one-out
    efficiencies, :func:`chipchain.predictor.step_errors`), one colour per family; and predicted against reported
    GPU-hours of whole runs (:func:`chipchain.calibration.gpu_hours_errors`) at the median MFU of the other runs of
    the generation and at a fixed ``fixed_mfu``; each with the identity line and ± 15 % / ± 30 % lines.

    >>> f = calibration_figure()
    >>> len(f.data["steps"]), len(f.data["hours"])
    (150, 16)
    """

    steps, hours = predictor.step_errors(), calibration.gpu_hours_errors(fixed_mfu)
    fams = list(dict.fromkeys(e.family for e in steps))
    within = lambda errs, band: sum(abs(e) <= band for e in errs)                 # noqa: E731
    fixed = _("at a fixed {pct} MFU").format(pct=f"{fixed_mfu:.0%}".replace("%", " %"))
    step_alt = (_("Log–log chart of predicted against measured seconds per step for {n} configurations, with the "
                  "identity line and lines at ± 15 and ± 30 %: ").format(n=len(steps))
                + _("; ").join(_("{family}: errors from {lo} to {hi}").format(
                    family=_(fam), lo=f"{min(e.error for e in steps if e.family == fam):+.0%}",
                    hi=f"{max(e.error for e in steps if e.family == fam):+.0%}") for fam in fams)
                + _(". {k} of {n} lie within ± 15 %.").format(k=within([e.error for e in steps], 0.15), n=len(steps)))
    values = [v for e in steps for v in (e.measured, e.predicted)]
    lim = (10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values))))   # every point shown
    step_chart = _agreement_chart(
        [(fam, plotting.color(i), [(e.measured, e.predicted) for e in steps if e.family == fam])
         for i, fam in enumerate(fams)], lim, identity="predicted = measured",
        xlabel="measured seconds per step (s, published)", ylabel="predicted seconds per step (s)",
        title="Seconds per step: published configurations, each predicted without its family", alt=step_alt)
    hours_alt = _("Log–log chart of predicted against reported GPU-hours for {n} whole runs, with the identity line "
                  "and lines at ± 15 and ± 30 %: at the median MFU of the other runs, {k15} of {n} lie within ± 15 % "
                  "and {k30} within ± 30 %; {fixed}, {f15} and {f30}.").format(
        n=len(hours), k15=within([e.error for e in hours], 0.15), k30=within([e.error for e in hours], 0.30),
        fixed=fixed, f15=within([e.fixed_error for e in hours], 0.15), f30=within([e.fixed_error for e in hours], 0.30))
    hours_chart = _agreement_chart(
        [("at the median MFU of the other runs", plotting.color(0), [(e.reported, e.predicted) for e in hours]),
         (fixed, plotting.color(1), [(e.reported, e.fixed) for e in hours])], (3e4, 5e7),
        identity="predicted = reported", xlabel="reported GPU-hours (GPU·h)", ylabel="predicted GPU-hours (GPU·h)",
        title="GPU-hours of whole runs (6ND at an MFU)", alt=hours_alt)
    text = (f"{len(steps)} configurations, {within([e.error for e in steps], 0.15)} within ± 15 % of the measured "
            f"step; {len(hours)} runs, {within([e.error for e in hours], 0.30)} within ± 30 % of the reported "
            f"GPU-hours at the median MFU of the other runs, {within([e.fixed_error for e in hours], 0.30)} {fixed}")
    return Figure(step_chart + hours_chart, text,
                  {"steps": [(e.name, e.measured, e.predicted) for e in steps],
                   "hours": [(e.name, e.reported, e.predicted, e.fixed) for e in hours]})


def generation_figure():
    """Predicted against measured seconds per step, one chart per accelerator generation (the groups the efficiency
    is fitted by, :func:`chipchain.predictor.generation`; oldest first), every point predicted without its family
    (:func:`chipchain.predictor.step_errors`) and coloured by the model's kind (:func:`chipchain.predictor.model_kind`),
    each chart titled with its rows' median |error| (:class:`~chipchain.views._figure.Figure`).

    >>> f = generation_figure()
    >>> [g for g, _, _ in f.data["generations"]]
    ['A100-SXM-80GB', 'H100-SXM', 'B200', 'GB200']
    >>> sum(n for _, n, _ in f.data["generations"])
    150
    """
    steps = predictor.step_errors()
    groups: dict = {}
    for e in steps:
        groups.setdefault(predictor.generation(e.accelerator), []).append(e)
    peak = lambda g: hardware.get(groups[g][0].accelerator).peak_flops("bf16")              # noqa: E731
    kinds = {k: plotting.color(i) for i, k in enumerate(predictor.KINDS)}
    charts, data, summary = [], [], []
    for g in sorted(groups, key=peak):
        errs = groups[g]
        parts = units.listing(sorted({e.accelerator for e in errs}))
        values = [v for e in errs for v in (e.measured, e.predicted)]
        lim = (10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values))))
        med = units.median(abs(e.error) for e in errs)
        pct = _pct(med)
        title = _("{parts}: {n} configurations, median |error| {med}").format(parts=parts, n=len(errs), med=pct)
        present = [k for k in predictor.KINDS if any(predictor.model_kind(_model(e)) == k for e in errs)]
        alt = _("Log–log chart of predicted against measured seconds per step for the {n} configurations on {parts}, "
                "with the identity line and lines at ± 15 and ± 30 %: errors from {lo} to {hi}, median |error| {med}.").format(
            n=len(errs), parts=parts, lo=f"{min(e.error for e in errs):+.0%}", hi=f"{max(e.error for e in errs):+.0%}",
            med=pct)
        charts.append(_agreement_chart(
            [(KIND_LABELS[k], kinds[k], [(e.measured, e.predicted) for e in errs
                                         if predictor.model_kind(_model(e)) == k]) for k in present], lim, identity="predicted = measured",
            xlabel="measured seconds per step (s, published)", ylabel="predicted seconds per step (s)",
            title=title, alt=alt, height=340))
        name = min({e.accelerator for e in errs}, key=len)
        data.append((name, len(errs), med))
        summary.append(f"{parts}: {len(errs)} configurations, median |error| {pct}")
    grid = ('<div class="cc-small-multiples" style="display:grid;grid-template-columns:repeat(auto-fit,'
            'minmax(min(100%,400px),1fr));gap:0 1.5em">' + "".join(f"<div>{c}</div>" for c in charts) + "</div>")
    return Figure(grid, "; ".join(summary), {"generations": data})


#: how the figure's key names the kinds of :data:`chipchain.predictor.KINDS`
KIND_LABELS = {"dense": "dense", "moe": "mixture of wide experts", "fine-grained moe": "fine-grained mixture of experts"}


def _model(e):
    return published_runs.get(e.name).model


@widgets.explorer
def step_explorer():
    """One fully specified published configuration: its predicted step broken into compute, recomputation,
    pipeline bubble and exposed communication, against the measured time, with the efficiency fitted on the other
    rows (leave-one-out) or on all rows."""
    errs = {True: {e.name: e for e in predictor.step_errors("family")},
            False: {e.name: e for e in predictor.step_errors("none")}}

    def render(name, leave_one_out):
        e = errs[leave_one_out][name]
        p, r = e.prediction, published_runs.get(name)
        sec = lambda v: f"{v:,.2f} s"                                            # noqa: E731
        # segment and marker labels translated before svg_bars joins them with their values ("compute: 1.2 s")
        parts = [(_("compute"), p.compute), (_("recomputation"), p.recompute), (_("pipeline bubble"), p.bubble)]
        parts += [(_("exposed {kind} traffic").format(kind=k), v) for k, v in p.exposed.items() if v > 0]
        parts += [(_("optimizer step"), p.optimizer)]
        bar = plotting.svg_bars(parts, capacity=e.measured,
                                capacity_label=_("measured"), unit_format=sec, xlabel="time per step (s)",
                                alt=_("Predicted step of {run}: {p} s against {m} s measured").format(
                                    run=_(r.run), p=f"{p.seconds:.2f}", m=f"{e.measured:.2f}"))
        stated = (_("the paper states {pct}").format(pct=_pct(r.reported_mfu)) if r.reported_mfu
                  else _("not stated in the paper"))
        cards = _layout.headline([
            ("predicted step", sec(p.seconds), _("measured {t}").format(t=sec(e.measured))),
            ("error", f"{e.error:+.1%}".replace("%", " %"), "predicted against measured"),
            ("predicted MFU", _pct(p.mfu), _("HFU {hfu}; {stated}").format(hfu=_pct(p.hfu), stated=stated))])
        head = _layout.para(_("{run} — {plan}, {n} × {acc}").format(run=_(r.run), plan=_plan(e), n=f"{r.n_gpus:,}",
                                                                    acc=r.accelerator.name))
        tail = _layout.para((_("η = {eta}, fitted on {n} other families of published runs. Source: {source} "
                               "({location}); tier {tier}.") if leave_one_out else
                             _("η = {eta}, fitted on {n} families of published runs. Source: {source} ({location}); "
                               "tier {tier}.")).format(eta=f"{p.efficiency:.3f}", n=len(e.fitted_on), source=r.source,
                                                      location=r.location, tier=r.tier), small=True)
        return head + cards + bar + tail

    names = list(errs[True])
    return widgets.explore(render, [
        widgets.Choice("name", "Configuration", {published_runs.get(n).run: n for n in names}, value="kort-175b-sel"),
        widgets.Choice("leave_one_out", "Efficiency fitted on", {"the other families": True, "every row": False},
                       value=True),
    ], title="One published configuration, predicted and measured")
