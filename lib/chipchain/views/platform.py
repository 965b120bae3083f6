"""Views for chapter 8 (the platform): scheduling tables, figures and explorer, padding and packing, the
troubleshooting guide."""
from __future__ import annotations

import math
from functools import lru_cache

from .._lazy import np

from .. import _check, datapath, experiments, plotting, scheduling, tables, units, widgets
from . import _layout
from ._figure import Figure
from .._i18n import gettext as _
from ..units import HOUR, TERA, fmt_number, fmt_percent


def policy_table(small_share=0.4, load=0.85, seeds=(0, 1, 2, 3), policies=scheduling.POLICIES, **kwargs):
    """:func:`chipchain.scheduling.compare_policies` as a DataFrame, one row per policy (waits in hours).

    >>> list(policy_table(0.4, seeds=(0, 1)).index)
    ['first-fit', 'best-fit', 'topology-aware']
    """
    import pandas as pd

    rows = {s.policy: {"utilisation": s.utilisation, "large_share": s.large_share,
                       "large_capacity": s.large_capacity, "fragmentation": s.fragmentation,
                       "large_wait_hours": s.large_wait_seconds / HOUR,
                       "large_wait_se": s.large_wait_se / HOUR if s.large_wait_se is not None else float("nan"),
                       "small_wait_hours": s.small_wait_seconds / HOUR, "large_unstarted": s.large_unstarted}
            for s in scheduling.compare_policies(small_share, load, seeds, policies, **kwargs)}
    return pd.DataFrame.from_dict(rows, orient="index")


def troubleshooting():
    """Seed 004 §6's troubleshooting table as a diagnosis guide (symptom, likely causes, what to measure, what to
    do, and the chapter that explains the cause), as a DataFrame (``data/troubleshooting.csv``).

    >>> troubleshooting().shape[0]
    6
    """
    import pandas as pd

    return pd.DataFrame(list(experiments.troubleshooting()))


# --- figures -----------------------------------------------------------------------------------------------------

def _daily(hourly, days):
    return [units.stable(float(v)) for v in np.array(hourly[:days * 24]).reshape(days, 24).mean(1)]


def schedule_figure(results):
    """Daily-mean utilisation (solid) and the room for a new large job (dashed) over the simulated weeks, one colour
    per :class:`chipchain.scheduling.ScheduleResult` in ``results`` — a chart-system figure
    (:class:`~chipchain.views._figure.Figure`).

    >>> f = schedule_figure([scheduling.simulate_schedule("first-fit", 0.4, 0.85, seed=0)])
    >>> len(f.data["series"]["first-fit"]["utilisation"]) == f.data["days"]
    True
    """
    results = list(results)
    if not results:
        raise ValueError("results must hold at least one ScheduleResult")
    lines, series, spans = [], {}, []
    for i, r in enumerate(results):
        if not isinstance(r, scheduling.ScheduleResult):
            raise ValueError(f"results must hold ScheduleResult objects, got {type(r).__name__}")
        days = len(r.hourly_utilisation) // 24
        u, c = _daily(r.hourly_utilisation, days), _daily(r.hourly_large_capacity, days)
        xs = [d + 0.5 for d in range(days)]
        lines += [{"x": xs, "y": u, "label": _("{policy}: utilisation").format(policy=_(r.policy)),
                   "color": plotting.color(i)},
                  {"x": xs, "y": c, "label": _("{policy}: room for a new large job").format(policy=_(r.policy)),
                   "color": plotting.color(i), "dash": True}]
        series[r.policy] = {"utilisation": u, "room": c}
        spans.append((r.policy, fmt_percent(r.utilisation, decimals=0), fmt_percent(min(u), decimals=0),
                      fmt_percent(max(u), decimals=0), fmt_percent(r.large_capacity, decimals=0),
                      fmt_percent(min(c), decimals=0), fmt_percent(max(c), decimals=0)))
    span = ("{policy}: utilisation {u} over the run (daily {u_lo}–{u_hi}), room for a large job {c} on average (daily "
            "{c_lo}–{c_hi})")
    fill = lambda template, policy, *v: template.format(policy=policy, **dict(zip(  # noqa: E731
        ("u", "u_lo", "u_hi", "c", "c_lo", "c_hi"), v)))
    days = len(results[0].hourly_utilisation) // 24
    alt = _("Line chart over {days} simulated days of the daily share of the cluster's GPUs that are busy (solid) and on "
            "which a new large job could start at once (dashed): {spans}.").format(
        days=days, spans=_("; ").join(fill(_(span), _(sp[0]), *sp[1:]) for sp in spans))
    html = plotting.svg_chart(lines=lines, xlim=(0, days), ylim=(0, 1), yformat="percent",
                              xlabel="time (days; the first week is warm-up)", ylabel="share of the cluster's GPUs (%)", height=300, alt=alt)
    return Figure(html, "; ".join(fill(span, *sp) for sp in spans), {"days": days, "series": series})


def padding_figure(lengths, batch, seq, bins=40):
    """The share of token slots that hold real tokens under three batching schemes (padding each batch to its
    longest, eight length buckets, first-fit-decreasing packing into ``seq`` tokens), as named bars on one 0–100 %
    scale, above the length histogram (``bins`` logarithmic bins from 1 to the longest document) — a chart-system
    figure (:class:`~chipchain.views._figure.Figure`).

    >>> x = datapath.sample_lengths(500, 512, 1.0, 4096, seed=0)
    >>> f = padding_figure(x, 16, 4096)
    >>> sum(f.data["counts"]) == 500 and [k for k, _ in f.data["efficiency"]][2]
    'FFD packing into 4,096-token sequences'
    """
    x = datapath._lengths(lengths)
    b = _check.integer("batch", batch, minimum=1)
    s = _check.integer("seq", seq, minimum=1)
    n = _check.integer("bins", bins, minimum=2)
    effs = [("pad each batch to its longest", units.stable(datapath.padding_efficiency(x, b))),
            ("length buckets (8), then pad", units.stable(datapath.bucket_efficiency(x, b))),
            (f"FFD packing into {s:,}-token sequences", units.stable(datapath.packing_efficiency(x, s)))]
    edges = np.geomspace(1, max(int(x.max()), 2), n + 1)
    counts, _edges = np.histogram(x, bins=edges)
    shown = [_("pad each batch to its longest"), _("length buckets (8), then pad"),
             _("FFD packing into {seq}-token sequences").format(seq=f"{s:,}")]     # the labels, as drawn
    bars = plotting.svg_hbars([(k, v, plotting.color(i)) for i, (k, (_k, v)) in enumerate(zip(shown, effs))],
                              xlim=(0, 1),
                              xformat="percent", xlabel="token slots holding real tokens (%)",
                              unit_format=lambda v: str(fmt_percent(v, decimals=1)),
                              alt=_("Share of token slots holding real tokens, batches of {b}: {shares}.").format(
                                  b=b, shares=_("; ").join(f"{k} {fmt_percent(v, decimals=1)}"
                                                           for k, (_k, v) in zip(shown, effs))))
    xs, ys = [], []
    for a, c, h in zip(edges[:-1], edges[1:], counts):     # a step outline, one step per bin
        xs += [units.stable(float(a)), units.stable(float(c))]
        ys += [int(h), int(h)]
    peak = int(np.argmax(counts))
    chart = plotting.svg_chart(
        lines=[{"x": xs, "y": ys, "label": _("documents per bin ({n} bins)").format(n=n)}], xlog=True,
        xlim=(1, float(edges[-1])),
        vlines=[{"x": float(np.median(x)), "label": _("median {m}").format(m=f"{np.median(x):,.0f}")}],
        legend="none", xlabel="document length (tokens, log scale)", ylabel="documents per bin", height=260,
        alt=_("Histogram of {n} document lengths on a log axis from 1 to {top} tokens in {bins} bins, peaking at {peak} "
              "documents between {lo} and {hi} tokens, median {median}, mean {mean}; {last} in the last bin, up to "
              "{top}.").format(n=f"{x.size:,}", top=f"{edges[-1]:,.0f}", bins=n, peak=int(counts[peak]),
                               lo=f"{edges[peak]:,.0f}", hi=f"{edges[peak + 1]:,.0f}", median=f"{np.median(x):,.0f}",
                               mean=f"{x.mean():,.0f}", last=int(counts[-1])))
    text = "; ".join(f"{k}: {fmt_percent(v, decimals=1)} real tokens" for k, v in effs)
    return Figure(bars + chart, text, {"efficiency": effs, "edges": [float(e) for e in edges],
                                       "counts": [int(c) for c in counts]})


# --- explorables -------------------------------------------------------------------------------------------------

_SHARES = (0.2, 0.4, 0.6, 0.8)
_LOAD, _SEEDS = 0.85, (0, 1, 2)


@lru_cache(maxsize=1)
def _schedule_grid():
    """Every (policy, small share) at 85 % offered load, three seeds each (about a second)."""
    return {(p, s, sd): scheduling.simulate_schedule(p, s, _LOAD, seed=sd)
            for p in scheduling.POLICIES for s in _SHARES for sd in _SEEDS}


def _hours(seconds) -> str:
    """Both waits in one unit, hours, as the policy table beside the explorer prints them (two decimals below ten
    hours, one above), so they compare at a glance: ``52.6 hours`` beside ``0.00 hours``.

    >>> _hours(52.6 * HOUR), _hours(0.0), _hours(0.15 * HOUR)
    ('52.6 hours', '0.00 hours', '0.15 hours')
    """
    h = seconds / HOUR
    return _("{n} hours").format(n=f"{h:,.1f}" if h >= 10 else f"{h:.2f}")


def schedule_view(policy, small_share) -> str:
    """HTML for one view of the scheduling explorer: the seed-0 run as a chart, the three-seed means as a table."""
    grid = _schedule_grid()
    r = grid[(policy, small_share, 0)]
    rs = [grid[(policy, small_share, sd)] for sd in _SEEDS]
    mean = lambda attr: sum(getattr(x, attr) for x in rs) / len(rs)   # noqa: E731
    days = len(r.hourly_utilisation) // 24
    day = lambda xs: [sum(xs[d * 24:(d + 1) * 24]) / 24 for d in range(days)]   # noqa: E731
    xs = [d + 0.5 for d in range(days)]
    chart = plotting.svg_chart(
        lines=[{"x": xs, "y": day(r.hourly_utilisation), "label": "utilisation"},
               {"x": xs, "y": day(r.hourly_large_capacity), "label": "room for a new large job", "dash": True}],
        ylim=(0, 1), xlabel="day (seed 0; the first week is warm-up)", ylabel="fraction of 1,024 GPUs",
        alt=_("Daily utilisation and room for a new large job under {policy} with {share} of demand from small jobs: "
              "utilisation {u}, room {room}.").format(policy=_(policy), share=fmt_percent(small_share, decimals=0),
                                                      u=fmt_percent(r.utilisation, decimals=0),
                                                      room=fmt_percent(r.large_capacity, decimals=0)))
    pct = lambda v: str(fmt_percent(v, 3 if v >= 0.1 else 2))      # noqa: E731
    cards = [("utilisation (busy GPU-hours)", pct(mean("utilisation"))),
             ("GPU-hours to large jobs", pct(mean("large_share")),
              _("offered {share}").format(share=pct((1 - small_share) * _LOAD))),
             ("room for a new 64-GPU job", pct(mean("large_capacity")), "of the cluster, time-averaged"),
             ("idle GPUs stranded", str(fmt_percent(mean("fragmentation"), 2)), "no large job can use them"),
             ("a large job waits", _hours(mean("large_wait_seconds")), "on average"),
             ("a small job waits", _hours(mean("small_wait_seconds")), "on average")]
    # six cards: three a row on a desktop column, two on a phone (never 5 + 1)
    return (_layout.headline(cards, columns="repeat(auto-fit, minmax(max(9.5em, 30%), 1fr))") + chart
            + _layout.para(_("Means over {n} simulated months (seeds 0–{last}) at {load} offered load; the chart "
                             "shows seed 0.").format(n=len(_SEEDS), last=_SEEDS[-1], load=fmt_percent(_LOAD)),
                           small=True))


@widgets.explorer
def schedule_explorer():
    """Chapter 8: job mix and placement policy → utilisation, room for large jobs, queueing (85 % offered load)."""
    _schedule_grid()
    return widgets.explore(
        schedule_view,
        [widgets.Choice("policy", "Placement policy", {p: p for p in scheduling.POLICIES}, value="first-fit"),
         widgets.Slider("small_share", "Small jobs' share of demand", list(_SHARES), value=0.4,
                        fmt=lambda v: str(fmt_percent(v)))],
        title="Scheduling a shared 1,024-GPU cluster: does utilisation tell the truth?")


_MEDIANS = (128, 256, 512, 1024, 2048)
_SIGMAS = (0.5, 1.0, 1.5)
_SEQS = (2048, 4096, 8192)
_N_DOCS, _BATCH = 2000, 16


@lru_cache(maxsize=None)
def _packing_point(median, sigma, seq):
    x = datapath.sample_lengths(_N_DOCS, median, sigma, seq, seed=0)
    cut = int((x >= seq).sum())                       # documents longer than a sequence, clipped to it
    hist, edges = np.histogram(np.log10(x[x < seq]), bins=24, range=(0, math.log10(seq)))
    return (float(x.mean()), datapath.padding_efficiency(x, _BATCH, pad_to=seq),
            datapath.padding_efficiency(x, _BATCH), datapath.bucket_efficiency(x, _BATCH),
            datapath.packing_efficiency(x, seq), tuple(hist.tolist()), tuple(edges.tolist()), cut)


def packing_view(median, sigma, seq) -> str:
    """HTML for one view of the padding-vs-packing explorer: the share of real tokens under each batching scheme
    as bars on one 0–100 % scale, and the length distribution behind them (documents longer than a sequence are cut
    to it; they are counted in words, not drawn as a spike at the edge)."""
    if median * 2 > seq:
        raise ValueError(f"a median document of {median} tokens is more than half the {seq}-token sequence; "
                         "most documents would be cut — choose a longer sequence")
    mean, fixed, pad, bucket, pack, hist, edges, cut = _packing_point(median, sigma, seq)
    rows = [(_("pad every sequence to {seq}").format(seq=f"{seq:,}"), fixed), ("pad each batch to its longest", pad),
            ("length buckets (8), then pad", bucket), ("FFD packing (first-fit decreasing)", pack)]
    bars = plotting.svg_hbars([(k, v, plotting.color(i)) for i, (k, v) in enumerate(rows)], xlim=(0, 1),
                              xlabel="token slots holding real tokens", xformat="percent",
                              unit_format=lambda v: str(fmt_percent(v, decimals=1)),
                              alt=_("Share of token slots holding real tokens: {shares}").format(
                                  shares=_("; ").join(f"{_(k)} {fmt_percent(v, decimals=1)}" for k, v in rows)))
    xs, ys = [], []
    for a, b, h in zip(edges[:-1], edges[1:], hist):      # a step outline of the histogram, one step per bin
        xs += [10 ** a, 10 ** b]
        ys += [h, h]
    chart = plotting.svg_chart(
        lines=[{"x": xs, "y": ys, "label": _("documents shorter than {seq} tokens").format(seq=f"{seq:,}")}],
        xlog=True, xlim=(1, seq), vlines=[{"x": median, "label": _("median {m}").format(m=f"{median:,}")}],
        legend="none",
        xlabel="document length (tokens, log scale)", ylabel="documents per bin", height=230,
        alt=_("Log-normal length distribution of {n} documents with median {median} tokens and spread sigma {sigma}; "
              "{cut} are longer than {seq} tokens and are cut to it.").format(
            n=f"{_N_DOCS:,}", median=median, sigma=sigma, cut=cut, seq=f"{seq:,}"))
    note = _("{n} documents, mean {mean} tokens; batches of {batch}. {cut} documents ({share}) are longer than {seq} "
             "tokens and are cut to one sequence (not drawn). Slots per real token: {slots}.").format(
        n=f"{_N_DOCS:,}", mean=f"{mean:,.0f}", batch=_BATCH, cut=f"{cut:,}",
        share=fmt_percent(cut / _N_DOCS, decimals=1), seq=f"{seq:,}", slots=" / ".join(f"{1 / v:.2f}" for _k, v in rows))
    return (_layout.verdict(_("Packing fills {pack} of the slots; padding each batch to its longest, {pad}.").format(
                pack=fmt_percent(pack, decimals=1), pad=fmt_percent(pad, decimals=1)), None)
            + bars + chart + _layout.para(note, small=True))


@widgets.explorer
def packing_explorer():
    """Chapter 8: the length distribution and sequence length → padding waste of each batching scheme."""
    for m in _MEDIANS:
        for s in _SIGMAS:
            for c in _SEQS:
                if m * 2 <= c:
                    _packing_point(m, s, c)
    return widgets.explore(
        packing_view,
        [widgets.Slider("median", "Median document (tokens)", list(_MEDIANS), value=512, fmt=lambda v: f"{v:,}"),
         widgets.Slider("sigma", "Spread σ (log-normal)", list(_SIGMAS), value=1.0),
         widgets.Slider("seq", "Sequence length (tokens)", list(_SEQS), value=4096, fmt=lambda v: f"{v:,}")],
        title="Padding, bucketing or packing?")


# --- recipes as tables (ch-c, issue 14: no dict reprs in chapter 8) ---------------------------------------------------
def _recipe_value(v):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return tables.fmt_value(v)
    return "—" if v is None else str(v)


def recipe_table(recipe, caption=None):
    """A training recipe (:class:`chipchain.experiments.TrainingRecipe`) as a two-column table: setting, value."""
    import pandas as pd

    d = recipe.to_dict()
    rows = [("name", d["name"]), ("peak learning rate", _recipe_value(d["peak_lr"])),
            ("minimum learning rate", _recipe_value(d["min_lr"])), ("warm-up steps", _recipe_value(d["warmup_steps"])),
            ("schedule", d["schedule"]),
            ("batch (sequences) from step", ", ".join(_("{batch} from {step}").format(batch=f"{b:,}", step=f"{s:,}")
                                                      for s, b in d["batch_schedule"])),
            ("sequence length (tokens)", _recipe_value(d["seq"]))]
    for st in d["stages"]:
        mix = ", ".join(f"{_(k)} {fmt_percent(v, decimals=0)}" for k, v in st["mixture"].items())
        rows.append((_("stage '{name}'").format(name=st["name"]),
                     _("{n} trillion tokens: {mix}").format(n=fmt_number(st["tokens"] / TERA), mix=mix)))
    return tables.show(pd.DataFrame(rows, columns=["setting", "value"]), columns={"setting": "Setting", "value": "Value"},
                caption=caption or _("Training recipe '{name}'").format(name=d["name"]))


def recipe_diff_table(a, b, caption=None):
    """:func:`chipchain.experiments.diff_recipes` as a table: setting, value in ``a``, value in ``b``."""
    import pandas as pd

    rows = [(p, _recipe_value(x), _recipe_value(y)) for p, x, y in experiments.diff_recipes(a, b)]
    return tables.show(pd.DataFrame(rows, columns=["setting", "a", "b"]),
                columns={"setting": "Setting", "a": f"'{a.name}'", "b": f"'{b.name}'"},
                caption=caption or "What differs between the two recipes")
