"""Views for chapter 8 (the platform): scheduling tables, figures and explorer, padding and packing, the
troubleshooting guide."""
from __future__ import annotations

import math
from functools import lru_cache

from .._lazy import np

from .. import _data, datapath, plotting, scheduling, widgets
from ..units import HOUR


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

    return pd.DataFrame(list(_data.rows("troubleshooting.csv")))


# --- figures -----------------------------------------------------------------------------------------------------

def plot_schedule(results, ax=None):
    """Daily-mean utilisation (solid) and capacity left for large jobs (dashed) over the simulated weeks, one colour
    per :class:`ScheduleResult`. Returns the Axes."""
    ax = plotting.axes(ax)
    for i, r in enumerate(results):
        if not isinstance(r, scheduling.ScheduleResult):
            raise ValueError(f"results must hold ScheduleResult objects, got {type(r).__name__}")
        days = len(r.hourly_utilisation) // 24
        u = np.array(r.hourly_utilisation[:days * 24]).reshape(days, 24).mean(1)
        c = np.array(r.hourly_large_capacity[:days * 24]).reshape(days, 24).mean(1)
        ax.plot(np.arange(days) + 0.5, u, color=plotting.color(i), label=f"{r.policy}: utilisation")
        ax.plot(np.arange(days) + 0.5, c, color=plotting.color(i), ls="--", label=f"{r.policy}: room for a large job")
    ax.set_ylim(0, 1)
    ax.set_xlabel("day")
    ax.set_ylabel("fraction of the cluster's GPUs")
    ax.legend(fontsize=8, loc="center right")
    return ax


def plot_padding(lengths, batch, seq, ax=None):
    """Length histogram (log bins) with the fraction of real tokens under each batching scheme in the legend.
    Returns the Axes."""
    x = datapath._lengths(lengths)
    ax = plotting.axes(ax)
    bins = np.geomspace(1, max(int(x.max()), 2), 40)
    ax.hist(x, bins=bins, color=plotting.color(0), alpha=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("document length (tokens)")
    ax.set_ylabel("documents")
    effs = [("pad to the longest in the batch", datapath.padding_efficiency(x, batch)),
            ("length buckets (8)", datapath.bucket_efficiency(x, batch)),
            (f"FFD packing into {seq}", datapath.packing_efficiency(x, seq))]
    txt = "\n".join(f"{k}: {v:.1%} real tokens" for k, v in effs)
    ax.text(0.02, 0.97, txt, transform=ax.transAxes, va="top", fontsize=8)
    return ax


# --- explorables -------------------------------------------------------------------------------------------------

_SHARES = (0.2, 0.4, 0.6, 0.8)
_LOAD, _SEEDS = 0.85, (0, 1, 2)


@lru_cache(maxsize=1)
def _schedule_grid():
    """Every (policy, small share) at 85 % offered load, three seeds each (about a second)."""
    return {(p, s, sd): scheduling.simulate_schedule(p, s, _LOAD, seed=sd)
            for p in scheduling.POLICIES for s in _SHARES for sd in _SEEDS}


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
        alt=f"Daily utilisation and room for a new large job under {policy} with {small_share:.0%} of demand from "
            f"small jobs: utilisation {r.utilisation:.0%}, room {r.large_capacity:.0%}.")
    rows = [("utilisation (busy GPU-hours)", f"{mean('utilisation'):.1%}"),
            ("GPU-hours delivered to large jobs",
             f"{mean('large_share'):.1%} (offered {(1 - small_share) * _LOAD:.1%})"),
            ("room for a new 64-GPU job, time-averaged", f"{mean('large_capacity'):.1%} of the cluster"),
            ("idle GPUs stranded (no large job can use them)", f"{mean('fragmentation'):.0%}"),
            ("mean wait of a large job", f"{mean('large_wait_seconds') / HOUR:.1f} h"),
            ("mean wait of a small job", f"{mean('small_wait_seconds') / HOUR:.2f} h")]
    body = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
    return (chart + f'<table class="cc-table"><caption>means over {len(_SEEDS)} simulated months (seeds)</caption>'
            f"<tbody>{body}</tbody></table>")


@widgets.explorer
def schedule_explorer():
    """Chapter 8: job mix and placement policy → utilisation, room for large jobs, queueing (85 % offered load)."""
    _schedule_grid()
    return widgets.explore(
        schedule_view,
        [widgets.Choice("policy", "policy", {p: p for p in scheduling.POLICIES}, value="first-fit"),
         widgets.Slider("small_share", "share of demand from small jobs", list(_SHARES), value=0.4,
                        fmt=lambda v: f"{v:.0%}")],
        title="Scheduling a shared 1,024-GPU cluster: does utilisation tell the truth?")


_MEDIANS = (128, 256, 512, 1024, 2048)
_SIGMAS = (0.5, 1.0, 1.5)
_SEQS = (2048, 4096, 8192)
_N_DOCS, _BATCH = 2000, 16


@lru_cache(maxsize=None)
def _packing_point(median, sigma, seq):
    x = datapath.sample_lengths(_N_DOCS, median, sigma, seq, seed=0)
    hist, edges = np.histogram(np.log10(x), bins=24, range=(0, math.log10(seq)))
    return (float(x.mean()), datapath.padding_efficiency(x, _BATCH, pad_to=seq),
            datapath.padding_efficiency(x, _BATCH), datapath.bucket_efficiency(x, _BATCH),
            datapath.packing_efficiency(x, seq), tuple(hist.tolist()),
            tuple(edges.tolist()))


def packing_view(median, sigma, seq) -> str:
    """HTML for one view of the padding-vs-packing explorer."""
    if median * 2 > seq:
        raise ValueError(f"a median document of {median} tokens is more than half the {seq}-token sequence; "
                         "most documents would be cut — choose a longer sequence")
    mean, fixed, pad, bucket, pack, hist, edges = _packing_point(median, sigma, seq)
    centres = [10 ** ((a + b) / 2) for a, b in zip(edges[:-1], edges[1:])]
    chart = plotting.svg_chart(
        lines=[{"x": centres, "y": hist, "label": f"{_N_DOCS} documents"}], xlog=True,
        vlines=[{"x": median, "label": "median"}], xlabel="document length (tokens)", ylabel="documents per bin",
        alt=f"Log-normal length distribution with median {median} tokens and sigma {sigma}, clipped at {seq}.")
    rows = [("pad every sequence to the maximum", fixed), ("pad each batch to its longest", pad),
            ("length bucketing (8 buckets)", bucket), ("FFD packing", pack)]
    body = "".join(f"<tr><td>{k}</td><td>{v:.1%}</td><td>{1 / v:.2f}×</td></tr>" for k, v in rows)
    return (chart + '<table class="cc-table"><thead><tr><th>batching</th><th>real tokens</th>'
            f'<th>slots per real token</th></tr></thead><tbody>{body}</tbody></table>'
            f"<p>Mean length {mean:.0f} tokens; batch of {_BATCH} documents; sequence length {seq}.</p>")


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
        [widgets.Slider("median", "median document (tokens)", list(_MEDIANS), value=512),
         widgets.Slider("sigma", "spread σ (log-normal)", list(_SIGMAS), value=1.0),
         widgets.Slider("seq", "sequence length", list(_SEQS), value=4096)],
        title="Padding, bucketing or packing?")
