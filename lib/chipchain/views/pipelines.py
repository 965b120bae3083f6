"""Views of pipeline schedules (chapters 4 and 11): a stage × time chart of one simulated step
(:mod:`chipchain.pipesim`), its bubble shaded, the measured idle share beside the formula of
:mod:`chipchain.schedules`, and the explorer that steps through it.

>>> "idle share" in schedule_view("1F1B", 4, 8, 8)
True
"""
from __future__ import annotations

from .. import pipesim, plotting, schedules, widgets
from .._i18n import gettext as _
from ..units import fmt_percent
from . import _layout

__all__ = ["KINDS", "gantt", "schedule_view", "schedule_explorer", "dualpipe_explorer"]

#: what each block is, in the key, and its colour (the book's palette)
KINDS = {
    "F": ("forward F", plotting.color(0)),
    "B": ("backward B", plotting.color(1)),
    "B-in": ("backward, input gradients only (B − W)", plotting.color(4)),
    "W": ("weight gradients W", plotting.color(2)),
    "F&B": ("forward and backward overlapped (F&B)", plotting.color(3)),
}
#: the reveal positions of the time stepper: eighths of the step
STEPS = tuple(range(1, 9))
_FORMULA = {
    "GPipe": "(p − 1)/(m + p − 1)", "1F1B": "(p − 1)/(m + p − 1)", "interleaved": "(p − 1)/(v·m + p − 1)",
    "ZB-H1": "(p − 1)(F + B − 2W) over the step", "DualPipe": "(p/2 − 1)(F&B + B − 3W) over the step",
}
_NAMES = {"GPipe": "GPipe (all forward, all backward)", "1F1B": "1F1B", "interleaved": "interleaved 1F1B (v = 2)",
          "ZB-H1": "zero bubble ZB-H1", "DualPipe": "DualPipe"}


def gantt(timeline: pipesim.SimulatedStep, upto=None) -> str:
    """A stage × time chart of a simulated step (``upto``: reveal only what happens before that time, units of F).
    Micro-batches are numbered from 1 in the blocks where the number fits; DualPipe's second direction is marked
    with a prime (1′)."""
    tl = timeline
    used = [k for k in KINDS if any(o.kind == k for o in tl.ops)]
    dual = tl.schedule == "DualPipe"
    bars = [(o.rank, o.start, o.end, o.kind,
             f"{o.microbatch + 1}" + ("′" if dual and o.chunk == 1 else "")) for o in tl.ops]
    t = tl.makespan if upto is None else upto
    idle = tl.idle_until(t)
    where = (_("the whole step") if t >= tl.makespan else
             _("the first {t} of {makespan} time units").format(t=f"{t:g}", makespan=f"{tl.makespan:g}"))
    alt = _("Stage-by-time chart of {schedule} on {pp} stages with {m} micro-batches: the step lasts {makespan} units "
            "of one forward pass; over {where} the stages are idle {idle} of the time (grey).").format(
        schedule=_(_NAMES[tl.schedule]), pp=tl.pp, m=tl.microbatches, makespan=f"{tl.makespan:g}", where=where,
        idle=fmt_percent(idle))
    return plotting.svg_gantt([f"{s + 1}" for s in range(tl.pp)], bars, {k: KINDS[k] for k in used},
                              xmax=tl.makespan, upto=t, row_title="stage",
                              xlabel="time (units of one forward pass F; B = 2F, W = F)", alt=alt,
                              marker_label=None if t >= tl.makespan else f"t = {t:g}")


def schedule_view(schedule, pp, microbatches, upto) -> str:
    """One view of :func:`schedule_explorer`: the simulated step revealed up to ``upto`` eighths, with the idle
    share so far, the whole step's measured idle share and the closed form's. A schedule that cannot run these
    counts says why, in a reader's words."""
    if schedule == "interleaved" and microbatches % pp:
        raise ValueError(_("the interleaved schedule sends micro-batches through the chunks in groups of one per "
                           "stage, so {m} micro-batches cannot run on {pp} stages: pick a multiple of {pp}").format(
            m=microbatches, pp=pp))
    if schedule == "DualPipe" and (pp % 2 or microbatches % 2 or microbatches < 2 * pp):
        raise ValueError(_("DualPipe feeds half the micro-batches from each end of the pipeline, so it needs an even "
                           "number of stages and an even number of micro-batches, at least twice the stages: "
                           "{pp} stages and {m} micro-batches do not qualify").format(pp=pp, m=microbatches))
    tl = pipesim.simulate(schedule, pp, microbatches)
    t = tl.makespan * upto / len(STEPS)
    formula = schedules.idle_share(tl.schedule, pp, microbatches, tl.virtual_stages)
    head = _layout.headline([
        ("idle share so far", str(fmt_percent(tl.idle_until(t), decimals=1)),
         _("up to t = {t} of {makespan}").format(t=f"{t:g}", makespan=f"{tl.makespan:g}")),
        ("idle share, whole step (simulated)", str(fmt_percent(tl.idle_share, decimals=1)),
         _("bubble {bubble} F per stage").format(bubble=f"{tl.bubble:g}")),
        ("formula", str(fmt_percent(formula, decimals=1)), _FORMULA[tl.schedule]),
    ])
    return head + gantt(tl, t)


def _schedule_explorer(schedule, pp, microbatches, title, names=pipesim.DRAWN, depths=(4, 8), counts=(4, 8, 16)):
    return widgets.explore(schedule_view, [
        widgets.Choice("schedule", "Schedule", {_NAMES[s]: s for s in names}, value=schedule),
        widgets.Slider("pp", "Stages p", list(depths), value=pp),
        widgets.Slider("microbatches", "Micro-batches m", list(counts), value=microbatches),
        widgets.Slider("upto", "Time shown", list(STEPS), value=len(STEPS),
                       fmt=lambda k: "whole step" if k == len(STEPS) else
                       _("{k}/{n} of the step").format(k=k, n=len(STEPS))),
    ], title=title)


@widgets.explorer
def schedule_explorer():
    """Chapter 4's explorer: a schedule (GPipe, 1F1B, interleaved with v = 2, ZB-H1, DualPipe), p stages, m
    micro-batches and a time stepper over one simulated step (F : B : W = 1 : 2 : 1); default 1F1B, p = 4, m = 8."""
    return _schedule_explorer("1F1B", 4, 8, "Pipeline schedules, step by step")


@widgets.explorer
def dualpipe_explorer():
    """Chapter 11's view: DeepSeek-V3's Table 2 schedules (1F1B, ZB-H1, DualPipe) on 4 or 8 stages with 8 or 16
    micro-batches; default DualPipe on 8 stages with 16 micro-batches, 8 from each end."""
    return _schedule_explorer("DualPipe", 8, 16, "DualPipe against 1F1B and ZB-H1, step by step",
                              names=schedules.TABLE2, counts=(8, 16))
