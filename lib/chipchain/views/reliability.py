"""Views for chapter 7 (failures): the root-cause table and figure, goodput against the checkpoint interval, a
simulated timeline, and the exact-resume and Young/Daly explorers."""
from __future__ import annotations

import itertools
from functools import lru_cache

from .._lazy import np

from .. import _check, checkpoint, failsim, plotting, reliability, units, widgets
from . import _layout
from ._figure import Figure
from .._i18n import gettext as _
from ..units import DAY, HOUR, YEAR, fmt_duration, fmt_percent


def failure_logs():
    """Run-level figures from published training logs (Llama 3 405B, OPT-175B) as a DataFrame, with source and
    check level per row (``data/failure_logs.csv``).

    >>> df = failure_logs()
    >>> int(df.query("run == 'Llama 3 405B' and quantity == 'unexpected_interruptions'").value.iloc[0])
    419
    """
    import pandas as pd

    df = pd.DataFrame(list(reliability.failure_logs()))
    df["value"] = df["value"].astype(float)
    return df


def llama3_interruptions():
    """Llama 3's root-cause table (Dubey et al. 2024, Table 5) as a DataFrame: counts, the printed percentages,
    the percentages the counts imply (count / 419) and the difference, in the paper's order.

    >>> df = llama3_interruptions()
    >>> int(df["count"].sum()), round(float(df["printed_percent"].sum()), 1)
    (419, 94.9)
    """
    import pandas as pd

    return pd.DataFrame([{"component": r.component, "category": r.category, "count": r.count,
                          "printed_percent": r.printed_percent, "recomputed_percent": r.recomputed_percent,
                          "difference_pp": r.difference_pp} for r in reliability.root_causes()])


def cluster_size_table(rate, sizes=(1024, 4096, 16384, 100_000)):
    """Hours between interruptions and interruptions per day for clusters of ``sizes`` GPUs, each GPU failing at
    ``rate`` per second (:func:`chipchain.reliability.cluster_mtbf`), as a DataFrame."""
    import pandas as pd

    n = np.asarray(sizes)
    m = reliability.cluster_mtbf(rate, n)
    return pd.DataFrame({"GPUs": n, "hours between interruptions": m / HOUR, "interruptions per day": DAY / m})


# --- figures -----------------------------------------------------------------------------------------------------

def root_causes_figure(top=8):
    """Llama 3's unexpected interruptions by root cause (Dubey et al. 2024, Table 5), the ``top`` most common as
    named bars on one zero baseline, each name with the printed percentage and the one the counts imply (count ÷
    419); a bar whose two percentages differ by more than 0.1 point is drawn in the second colour. A chart-system
    figure (:class:`~chipchain.views._figure.Figure`).

    >>> f = root_causes_figure()
    >>> f.data["bars"][0][:2], f.data["total"]
    (('Faulty GPU', 148), 419)
    """
    top = _check.integer("top", top, minimum=1)
    causes = reliability.root_causes()
    total = sum(r.count for r in causes)
    rc = causes[:top]
    differs = [abs(r.difference_pp) > 0.1 for r in rc]
    ok, bad = plotting.color(0), plotting.color(1)
    rows = [(_("{component}: printed {printed} %, counts give {counts} %").format(
                component=_(r.component), printed=f"{r.printed_percent:.1f}", counts=f"{r.recomputed_percent:.1f}"),
             r.count, bad if d else ok) for r, d in zip(rc, differs)]
    legend = [(_("printed percentage agrees with count ÷ {total}").format(total=total), ok)]
    if any(differs):
        legend.append((_("printed percentage differs from count ÷ {total}").format(total=total), bad))
    alt = _("Horizontal bars of Llama 3 405B's unexpected interruptions in 54 days by root cause, the {n} most common "
            "of {total}: {bars}.").format(
        n=len(rc), total=total,
        bars=_("; ").join(_("{component} {count} (printed {printed} %, counts give {counts} %)").format(
            component=_(r.component), count=r.count, printed=f"{r.printed_percent:.1f}",
            counts=f"{r.recomputed_percent:.1f}") for r in rc))
    html = plotting.svg_hbars(rows, xlabel=_("unexpected interruptions in 54 days (count, of {total})").format(total=total),
                              unit_format=lambda v: f"{v:,.0f}", legend=legend, alt=alt)
    text = "; ".join(f"{r.component} {r.count}" for r in rc) + f" (of {total})"
    return Figure(html, text, {"bars": [(r.component, r.count, r.printed_percent, r.recomputed_percent) for r in rc],
                               "total": total, "differs": [r.component for r, d in zip(rc, differs) if d]})


def goodput_figure(checkpoint_seconds, restart_seconds, mtbf, points=120):
    """Goodput against the checkpoint interval τ (log axis, minutes): the exact model
    (:func:`chipchain.checkpoint.goodput`) and the first-order one (dashed), with Young's and Daly's intervals marked
    — a chart-system figure (:class:`~chipchain.views._figure.Figure`). τ runs from a quarter of the write time (at
    least a second) to the cluster's MTBF ``mtbf``; all times in seconds.

    >>> f = goodput_figure(60.0, 600.0, 3 * 3600.0)
    >>> [round(t / 60, 1) for t in (f.data["young"], f.data["daly"])]
    [19.0, 18.3]
    """
    c = _check.positive("checkpoint_seconds", checkpoint_seconds)
    r = _check.nonnegative("restart_seconds", restart_seconds)
    m = _check.positive("mtbf", mtbf)
    n = _check.integer("points", points, minimum=10)
    taus = np.geomspace(max(c / 4, 1.0), m, n)
    exact = [units.stable(float(v)) for v in checkpoint.goodput(taus, c, r, m)]
    first = [units.stable(float(v)) for v in checkpoint.goodput_first_order(taus, c, r, m)]
    ty, td = checkpoint.young_interval(c, m), checkpoint.daly_interval(c, m)
    g = float(checkpoint.goodput(td, c, r, m))
    best = max(range(n), key=lambda i: exact[i])
    alt = _("Line chart, log x axis from {lo} to {hi} minutes, of goodput against checkpoint interval (write {write}, "
            "restart {restart}, cluster MTBF {mtbf}): the exact model rises from {start} to a maximum of {best} near "
            "{at} minutes and falls to {end} at the MTBF; the first-order model is close near the top. Young's "
            "interval {young} minutes, Daly's {daly} minutes (goodput {goodput}).").format(
        lo=f"{taus[0] / 60:.2g}", hi=f"{m / 60:,.0f}", write=fmt_duration(c), restart=fmt_duration(r),
        mtbf=fmt_duration(m), start=fmt_percent(max(exact[0], 0), decimals=0),
        best=fmt_percent(exact[best], decimals=1), at=f"{taus[best] / 60:.0f}",
        end=fmt_percent(exact[-1], decimals=0), young=f"{ty / 60:.1f}", daly=f"{td / 60:.1f}",
        goodput=fmt_percent(g, decimals=1))
    xs = [units.stable(float(t / 60)) for t in taus]
    html = plotting.svg_chart(
        lines=[{"x": xs, "y": exact, "label": "exact model"},
               {"x": xs, "y": first, "label": "first order: 1 − C/τ − τ/2M − R/M", "dash": True,
                "color": plotting.color(0)}],
        vlines=[{"x": ty / 60, "label": _("Young {t} min").format(t=f"{ty / 60:.1f}"), "color": plotting.color(1)},
                {"x": td / 60, "label": _("Daly {t} min").format(t=f"{td / 60:.1f}"), "color": plotting.color(2)}],
        xlog=True, ylim=(0, 1), yformat="percent", xlabel="checkpoint interval τ (minutes, log scale)",
        ylabel="goodput (share of wall-clock time)", height=300, alt=alt)
    text = (f"Young {ty / 60:.1f} min, Daly {td / 60:.1f} min, goodput at Daly's interval "
            f"{fmt_percent(g, decimals=1)}")
    return Figure(html, text, {"taus": [float(t) for t in taus], "exact": exact, "first_order": first,
                               "young": ty, "daly": td, "goodput": g})


def timeline_figure(interval, checkpoint_seconds, restart_seconds, mtbf, work, seed=0):
    """Progress against wall-clock time for one simulated run (:func:`chipchain.failsim.simulate_timeline`, seeded):
    the saw-tooth of work done (saved and unsaved), the diagonal of a run with neither failures nor checkpoints
    (dotted), and every failure as a vertical line — a chart-system figure
    (:class:`~chipchain.views._figure.Figure`). Times in seconds; the chart is in hours.

    >>> f = timeline_figure(1800, 60, 600, 3 * 3600, 12 * 3600, seed=0)
    >>> len(f.data["failures"]) > 0 and f.data["progress"][-1] == 12.0
    True
    """
    tl = failsim.simulate_timeline(interval, checkpoint_seconds, restart_seconds, mtbf, work, seed)
    wall = [units.stable(float(v / HOUR)) for v in tl.wall]
    prog = [units.stable(float(v / HOUR)) for v in tl.progress]
    fails = [units.stable(float(v / HOUR)) for v in tl.failures]
    hours = work / HOUR
    fc = plotting.color(1)
    lines = [{"x": wall, "y": prog, "label": "work done (including work not yet saved)"},
             {"x": [0.0, hours], "y": [0.0, hours], "label": "no failures, no checkpoints", "color": "#777",
              "dash": True},
             {"x": [], "y": [], "label": _("a failure ({n} in this run)").format(n=len(fails)), "color": fc,
              "dash": True}]
    alt = _("Saw-tooth line of training progress against wall-clock hours for one simulated run: {work} hours of work "
            "take {wall} wall-clock hours, below the diagonal of a run without failures or checkpoints. {n} failures, "
            "at hours {at}, each dropping progress back to the last checkpoint and followed by a restart.").format(
        work=f"{hours:g}", wall=f"{wall[-1]:.1f}", n=len(fails), at=_(", ").join(f"{x:.1f}" for x in fails))
    html = plotting.svg_chart(lines=lines, vlines=[{"x": x, "color": fc} for x in fails], xlim=(0.0, wall[-1]),
                              ylim=(0.0, hours), xlabel="wall-clock time (hours)",
                              ylabel="training progress (hours of work)", height=300, alt=alt)
    text = (f"{hours:g} hours of work in {wall[-1]:.1f} wall-clock hours; {len(fails)} failures, at hours "
            + ", ".join(f"{x:.1f}" for x in fails))
    return Figure(html, text, {"wall": wall, "progress": prog, "failures": fails, "work_hours": hours})


# --- explorables -------------------------------------------------------------------------------------------------

_RESUME_STEPS, _RESUME_STOP = 120, 50


@lru_cache(maxsize=1)
def _resume_grid():
    """The 16 checkpoint contents × one restart at step 50 of 120, plus the uninterrupted reference."""
    ref = failsim.train_with_restart(_RESUME_STEPS)
    runs = {}
    for flags in itertools.product((False, True), repeat=4):
        keep = tuple(p for p, f in zip(failsim.PARTS, flags) if f)
        runs[flags] = failsim.train_with_restart(_RESUME_STEPS, _RESUME_STOP, keep)
    return ref, runs


def resume_view(params, optimizer, rng, loader) -> str:
    """HTML for one view of the exact-resume explorer."""
    ref, runs = _resume_grid()
    run = runs[(params, optimizer, rng, loader)]
    steps = list(range(1, _RESUME_STEPS + 1))
    smooth = lambda xs: np.convolve(xs, np.ones(5) / 5, mode="valid")   # noqa: E731
    xs = steps[4:]
    same = bool((run.params == ref.params).all())
    dmax = float(np.max(np.abs(run.params - ref.params)))
    missing = [p for p in failsim.PARTS if p not in run.kept]
    chart = plotting.svg_chart(
        lines=[{"x": xs, "y": smooth(ref.losses), "label": "uninterrupted run"},
               {"x": xs, "y": smooth(run.losses), "label": "stopped at step 50, resumed", "dash": True}],
        vlines=[{"x": _RESUME_STOP, "label": "restart"}], ylog=True, xlabel="training step",
        ylabel="mini-batch loss (5-step mean, log scale)", height=250,
        alt=(_("Loss curves of an uninterrupted run and a run resumed at step 50 from a checkpoint missing {parts}; the "
               "curves coincide.") if same else
             _("Loss curves of an uninterrupted run and a run resumed at step 50 from a checkpoint missing {parts}; the "
               "curves separate after the restart.")).format(parts=_(", ").join(missing) or _("nothing")))
    names = {"params": "parameters", "optimizer": "optimizer state", "rng": "RNG state",
             "loader": "data-loader position"}
    if same:
        verdict = _layout.verdict(_("All {n} final weights equal the uninterrupted run's, bit for bit. Checkpoint "
                                    "size: {size} bytes.").format(n=f"{run.params.size:,}",
                                                                  size=f"{run.checkpoint_bytes:,}"),
                                  True, "Bit-identical.")
    else:
        verdict = _layout.verdict(
            _("Missing: {parts}. Largest final-weight difference {d}; final loss {loss} against {ref} uninterrupted. "
              "Checkpoint size: {size} bytes.").format(
                parts=_(", ").join(_(names.get(p, p)) for p in missing), d=f"{dmax:.3g}", loss=f"{run.losses[-1]:.4f}",
                ref=f"{ref.losses[-1]:.4f}", size=f"{run.checkpoint_bytes:,}"), False, "Diverged.")
    return verdict + chart


@widgets.explorer
def resume_explorer():
    """Chapter 7: tick which of the four parts the checkpoint saves; see whether the resumed run matches."""
    _resume_grid()
    return widgets.explore(
        resume_view,
        [widgets.Toggle("params", "Parameters", value=True, labels=["not saved", "saved"]),
         widgets.Toggle("optimizer", "Optimizer state", value=True, labels=["not saved", "saved"]),
         widgets.Toggle("rng", "RNG state", value=True, labels=["not saved", "saved"]),
         widgets.Toggle("loader", "Data-loader position", value=True, labels=["not saved", "saved"])],
        title="Exact resume: what must a checkpoint hold?")


_GOODPUT_RESTART = 10 * 60.0


def goodput_view(n_gpus, gpu_mtbf_years, checkpoint_seconds) -> str:
    """HTML for one view of the Young/Daly goodput explorer (restart time fixed at 10 minutes)."""
    m = reliability.cluster_mtbf(1.0 / (gpu_mtbf_years * YEAR), n_gpus)
    c, r = float(checkpoint_seconds), _GOODPUT_RESTART
    if c >= m:
        raise ValueError(f"a checkpoint write of {fmt_duration(c)} is longer than the cluster's mean time between "
                         f"failures ({fmt_duration(m)}): the job would rarely finish a segment")
    ty, td = checkpoint.young_interval(c, m), checkpoint.daly_interval(c, m)
    g = checkpoint.goodput(td, c, r, m)
    taus = np.geomspace(max(c / 4, 5.0), m, 60)
    chart = plotting.svg_chart(
        lines=[{"x": (taus / 60).tolist(), "y": np.maximum(checkpoint.goodput(taus, c, r, m), 0.0).tolist(),
                "label": "goodput"}],
        points=[{"x": td / 60, "y": g, "label": _("Daly {t} min").format(t=f"{td / 60:.1f}"),
                 "color": plotting.color(1)}],
        vlines=[{"x": ty / 60, "label": "Young"}], xlog=True, ylim=(0, 1), xlabel="checkpoint interval (minutes)",
        ylabel="goodput (share of wall-clock time)", yformat="percent", legend="none", height=260,
        alt=_("Goodput against checkpoint interval for {n} GPUs; the best interval is about {t} minutes with goodput "
              "{g}.").format(n=n_gpus, t=f"{td / 60:.0f}", g=fmt_percent(g, decimals=1)))
    lost = checkpoint.lost_seconds_per_week(g) / HOUR
    cards = _layout.headline([
        ("goodput at Daly's interval", str(fmt_percent(g, 3)), _("{h} h lost per week").format(h=f"{lost:.1f}")),
        ("checkpoint every", str(fmt_duration(td)), _("Daly; Young √(2CM): {t}").format(t=fmt_duration(ty))),
        ("cluster MTBF", str(fmt_duration(m)), _("{n} interruptions per week").format(n=f"{7 * DAY / m:.1f}")),
        ("GPU-hours lost per week", f"{round(lost * n_gpus, -2 if lost * n_gpus < 1e5 else -3):,.0f}",
         _("on {n} GPUs").format(n=f"{n_gpus:,}"))])
    return cards + chart + _layout.para(_("Restart (detection, relaunch, reload) fixed at {restart}; checkpoint "
                                          "write {write}.").format(restart=fmt_duration(_GOODPUT_RESTART),
                                                                   write=fmt_duration(c)), small=True)


@widgets.explorer
def goodput_explorer():
    """Chapter 7: cluster size, per-GPU MTBF and checkpoint write time → interval, goodput, hours lost per week.
    The default is the chapter's case: Llama 3's 16,384 GPUs at Llama 3's own per-GPU interruption rate, a one-minute
    write and a ten-minute restart."""
    llama3 = 1.0 / reliability.llama3_per_gpu_rate() / YEAR
    return widgets.explore(
        goodput_view,
        [widgets.Slider("n_gpus", "GPUs", [256, 1024, 4096, 16384, 65536], value=16384, fmt=","),
         widgets.Slider("gpu_mtbf_years", "Per-GPU MTBF (years)", [1.0, 2.0, llama3, 10.0, 20.0], value=llama3,
                        fmt=lambda v: f"{v:.1f} (Llama 3)" if v == llama3 else f"{v:g}"),
         widgets.Slider("checkpoint_seconds", "Checkpoint write", [10.0, 30.0, 60.0, 120.0, 300.0, 600.0],
                        value=60.0, fmt=lambda s: f"{s:g} s" if s < 60 else f"{s / 60:g} min")],
        title="Young/Daly: how often to checkpoint, and what failures cost")
