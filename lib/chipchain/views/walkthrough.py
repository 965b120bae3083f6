"""Views for chapter 13 (the running example): the inputs and the ledger as tables, the time-budget figure, the
source-check table, the four questions, and the ledger explorer.

Chapter titles belong to the book: functions that name chapters take a ``titles`` mapping (chapter number → title)
from the caller; the library's ledger rows carry only the number.
"""
from __future__ import annotations

from .. import compute, hardware, plotting, source_checks, tables, units, widgets
from . import _layout
from ..units import DAY
from ..walkthrough import Walkthrough
from ..units import fmt_percent

__all__ = ["inputs_table", "ledger_html", "time_budget_days", "time_budget_html", "evidence_table",
           "plot_time_budget", "source_check_table",
           "FOUR_QUESTIONS", "four_questions", "ledger_explorer"]


def inputs_table(walkthrough: Walkthrough | None = None):
    """The running example's inputs as a pandas DataFrame (input → value, in words and units).

    >>> inputs_table().loc["peak per GPU", "value"]
    '312 TFLOP/s (catalog, BF16 dense)'
    """
    import pandas as pd

    w = Walkthrough() if walkthrough is None else walkthrough
    peak = units.fmt_rate(w.peak_flops)
    peak_text = (f"{peak} (override)" if w.peak_override is not None
                 else f"{peak} (catalog, {w.dtype.upper()} dense)")
    rows = [("model", f"{w.model.name}: {units.fmt_number(w.params / 1e9)} B parameters, {w.layers} layers, "
                      f"hidden {units.fmt_number(w.hidden)}, {w.heads} heads, sequence {units.fmt_number(w.seq)}"),
            ("training tokens", f"{units.fmt_sci(w.tokens)}"),
            ("cluster", f"{units.fmt_number(w.n_gpus)} × {w.accelerator.name} in {w.cluster.node.name} nodes of "
                        f"{w.gpus_per_node} ({w.cluster.intra.name} inside, {w.cluster.inter.name} between)"),
            ("peak per GPU", peak_text),
            ("MFU", f"{fmt_percent(w.mfu, decimals=0)} (step ③ also at {', '.join(f'{fmt_percent(m, decimals=0)}' for m in w.mfus if m != w.mfu)})"),
            ("model states", f"{w.bytes_per_param:g} B per parameter ({w.recipe})"),
            ("parallel plan", str(w.plan) if w.plan is not None else w.plan_reason),
            ("global batch", f"{units.fmt_number(w.batch)} sequences per step")]
    return pd.DataFrame(rows, columns=["input", "value"]).set_index("input")


def _ledger_cards(w: Walkthrough) -> list:
    """(label, value, note, colour) of each step's headline, from the walkthrough's own texts (one rounding)."""
    t = w.texts()
    s2 = w.step2_compute()
    others = [k for k in t if k.startswith("days_")]
    cards = [("① model states", t["states"], t["cards"], None),
             ("② compute, 6ND", f"{tables.fmt_value(s2.flops, 2)} FLOP",
              f"cluster peak {t['cluster_peak']}", None),
             (f"③ run at {fmt_percent(w.mfu, decimals=0)} MFU", t["days"],
              "; ".join(f"{t[k]} at {k[5:]} % MFU" for k in others) or None, None)]
    if w.plan is None:
        cards.append(("④ plan", "no plan fits", w.plan_reason, _layout.BAD))
    else:
        p = w.plan
        cards.append(("④ plan", f"TP {p.tp} × PP {p.pp} × DP {p.dp}",
                      f"ZeRO-{p.zero}, {p.microbatches:,} micro-batches; bubble {t['idle']}", None))
        total, _, verdict = t["per_gpu"].rpartition(": ")
        used, _, card = total.partition(" of ")
        cards.append(("⑤ memory per GPU", used, f"of {card}: {verdict}",
                      _layout.GOOD if verdict == "fits" else _layout.BAD))
    cards.append(("⑥ goodput", t["goodput"], f"{t['interruptions']} interruptions; {t['lost']} lost",
                  None))
    electricity = f"electricity {t['bill']} ({t['energy']} at {t['facility']})"
    if "total_cost" in t:
        cards.append(("⑦ rent + electricity", t["total_cost"], f"rent {t['rent']}; {electricity}", None))
    else:
        cards.append(("⑦ electricity bill", t["bill"], f"{t['energy']} at {t['facility']}", None))
    exports = sorted(k for k in t if k.startswith("export_"))
    if exports:
        rule = exports[-1][len("export_"):]
        ship = t.get(f"shippable_{rule}")
        cards.append((f"⑧ export, {rule} rule", t[exports[-1]],
                      f"fastest part it lets through: {ship}" if ship else None, None))
    if "serve_cost" in t:
        cards.append(("⑨ serving, per M tokens", t["serve_cost"],
                      "; ".join(x for x in (f"GPUs: {t['serve_gpus']}" if "serve_gpus" in t else "",
                                            t.get("serve_tps", "")) if x) or None, None))
    return cards


def ledger_html(walkthrough: Walkthrough, titles: dict | None = None, reference: Walkthrough | list | None = None
                ) -> str:
    """The ledger at a glance: a one-line heading of the run, each step's headline figure as a card (with the
    ``reference`` walkthrough's value under any that differs; a list of cards from :func:`_ledger_cards` is
    accepted too), the run's days at 100 % of peak, at its MFU and on the wall clock as bars, and the range of run
    lengths the achieved MFU of comparable published runs gives (:meth:`Walkthrough.step3_evidence`). Compact
    enough to sit on one screen with the explorer's controls. ``titles`` is accepted for compatibility and unused
    (the full table, with chapters, is :meth:`Walkthrough.ledger`)."""
    w = walkthrough
    cards = _ledger_cards(w)
    if reference is not None:
        ref_cards = reference if isinstance(reference, list) else _ledger_cards(reference)
        ref = {c[0][0]: c[1] for c in ref_cards}
        cards = [(label, value, ((note + " · " if note else "") + f"running example: {ref[label[0]]}")
                  if ref.get(label[0]) not in (None, value) else note, colour)
                 for label, value, note, colour in cards]
    head = (f"{w.model.name}, {w.tokens / units.TERA:g} T tokens, {w.n_gpus:,} × {w.accelerator.name} at "
            f"{units.fmt_rate(w.peak_flops)} × {fmt_percent(w.mfu, decimals=0)} MFU")
    try:
        e = w.step3_evidence()
        lo, mid, hi = e.mfus
        evidence = (f"At the MFU comparable published runs achieved ({units.fmt_percent(lo)} – "
                    f"{units.fmt_percent(hi)}, median {units.fmt_percent(mid)}; {len(e.runs)} runs): "
                    f"{units.fmt_duration(e.seconds[2])} – {units.fmt_duration(e.seconds[0])}, median "
                    f"{units.fmt_duration(e.seconds[1])}, downtime included.")
    except ValueError as err:
        evidence = str(err)
    return (_layout.para(head) + _layout.headline(cards) + time_budget_html(w) + _layout.para(evidence, small=True))


def time_budget_days(walkthrough: Walkthrough | None = None) -> list:
    """(label, days) of the run at 100 % of peak, at the walkthrough's MFU (step ③) and on the wall clock once
    failures, checkpoints and restarts are paid (step ⑥: run / goodput).

    >>> [round(d) for _, d in time_budget_days()]
    [76, 152, 156]
    """
    w = Walkthrough() if walkthrough is None else walkthrough
    s2 = w.step2_compute()
    return [("at 100 % of peak", s2.flops / s2.cluster_peak / DAY),
            (f"at {fmt_percent(w.mfu, decimals=0)} MFU (step ③)", w.run_seconds / DAY),
            ("on the wall clock (step ⑥)", w.step6_failures().wall_seconds / DAY)]


def time_budget_html(walkthrough: Walkthrough | None = None) -> str:
    """:func:`time_budget_days` as one stacked bar for explorables: the days at 100 % of peak, the days utilisation
    below peak adds (step ③) and the days failures add (step ⑥); the bar's length is the wall-clock run."""
    w = Walkthrough() if walkthrough is None else walkthrough
    (_, peak), (_, at_mfu), (_, wall) = time_budget_days(w)
    segs = [("at 100 % of peak", peak), (f"added by {fmt_percent(w.mfu, decimals=0)} MFU", at_mfu - peak),
            ("added by failures", max(wall - at_mfu, 0.0))]
    return plotting.svg_bars(segs, unit_format=lambda v: f"{v:,.1f} days" if v < 10 else f"{v:,.0f} days",
                             xlabel=f"days on the cluster: {wall:,.0f} on the wall clock",
                             alt=f"Run length: {peak:,.0f} days at 100 % of peak, {at_mfu:,.0f} at "
                                 f"{units.fmt_percent(w.mfu)} MFU, {wall:,.0f} on the wall clock with failures")


def evidence_table(walkthrough: Walkthrough | None = None, price_per_gpu_hour=2.0):
    """The run's time, GPU-hours and cost at the source's fixed utilisations (step ③, plus failures from step ⑥)
    beside the range the achieved MFU of comparable published runs gives (:meth:`Walkthrough.step3_evidence`,
    downtime already inside), as a pandas DataFrame in human units. GPU counts are never rounded down (none is).

    >>> t = evidence_table()
    >>> list(t["MFU"])
    ['50 %', '30 %', '24 %', '35 %', '48 %']
    """
    import pandas as pd

    w = Walkthrough() if walkthrough is None else walkthrough
    e = w.step3_evidence(price_per_gpu_hour)
    g = w.step6_failures().goodput
    rows = []
    for m, s in w.step3_time().seconds.items():
        wall = s / g
        rows.append((f"the source's fixed {units.fmt_percent(m)}, failures added (step ⑥)", m, wall))
    for label, m, s in zip(("lowest", "median", "highest"), e.mfus, e.seconds):
        rows.append((f"published runs, {label}", m, s))
    hours = [compute.gpu_hours_from_seconds(s, w.n_gpus) for _, _, s in rows]
    return pd.DataFrame([{"utilisation": lab, "MFU": str(units.fmt_percent(m)),
                          "wall-clock days": f"{s / DAY:,.0f}",
                          "GPU-hours (millions)": f"{h / 1e6:,.2f}",
                          f"cost at ${e.price_per_gpu_hour:g}/GPU-hour": str(units.fmt_dollars(
                              round(compute.cost(h, e.price_per_gpu_hour), -4)))}
                         for (lab, m, s), h in zip(rows, hours)]).set_index("utilisation")


def plot_time_budget(walkthrough: Walkthrough | None = None, ax=None):
    """Static figure: the run's length in days at 100 % of peak, at the walkthrough's MFU (step ③), and on the wall
    clock once failures, checkpoints and restarts are paid (step ⑥: run / goodput). Returns the Axes."""
    bars = time_budget_days(walkthrough)
    ax = plotting.axes(ax)
    ys = range(len(bars))
    ax.barh(list(ys), [b[1] for b in bars], color=[plotting.color(i) for i in ys])
    for y, (_, d) in zip(ys, bars):
        ax.text(d, y, f" {d:.0f} days", va="center")
    ax.set_yticks(list(ys), [b[0] for b in bars])
    ax.invert_yaxis()
    ax.set_xlabel("days on the cluster")
    ax.set_xlim(0, max(b[1] for b in bars) * 1.2)
    ax.grid(axis="y", visible=False)
    return ax


def source_check_table(checks=None):
    """Every source check (:func:`chipchain.source_checks.source_checks`) as a pandas DataFrame: the source's figure
    beside the library's, whether they agree, and why — disagreements first.

    >>> t = source_check_table()
    >>> bool((~t["agrees"]).any()), list(t.columns)[:4]
    (True, ['source', 'claim', "source's figure", "library's figure"])
    """
    import pandas as pd

    cs = source_checks.source_checks() if checks is None else checks
    rows = [{"source": c.source, "claim": c.claim, "source's figure": c.claimed_value,
             "library's figure": c.recomputed, "unit": c.unit, "agrees": c.agrees, "note": c.note,
             "chapter": c.chapter, "function": c.function} for c in cs]
    return pd.DataFrame(rows).sort_values("agrees", kind="stable").reset_index(drop=True)


#: the book's four questions, each with the catalog figure that answers it
FOUR_QUESTIONS = {
    "Can it compute?": "dense BF16 peak (FLOP/s)",
    "Can it feed the compute?": "HBM bandwidth (bytes/s) and the ridge point it implies (FLOP/byte)",
    "Can it talk?": "chip-to-chip bandwidth, both directions summed (bytes/s)",
    "Can it be supplied?": "board power (W) and dense BF16 FLOP/s per watt",
}


def four_questions(accelerators=("A100", "H100", "H800", "B200")):
    """The four questions answered for catalog accelerators, as a pandas DataFrame in human units (TFLOP/s, TB/s,
    FLOP/byte, GB/s, W, TFLOP/s per W). Missing catalog figures stay empty; estimated rows are flagged.

    >>> round(float(four_questions(["A100", "H100"]).loc["H100-SXM", "ridge (FLOP/byte)"]))
    295
    """
    import pandas as pd

    rows = {}
    for name in accelerators:
        a = hardware.get(name)
        peak = a.peaks.get("bf16")
        rows[a.name] = {
            "BF16 dense (TFLOP/s)": peak / units.TFLOPS if peak else None,
            "HBM (TB/s)": a.memory_bandwidth / units.TB if a.memory_bandwidth else None,
            "ridge (FLOP/byte)": peak / a.memory_bandwidth if peak and a.memory_bandwidth else None,
            "link, bidirectional (GB/s)": a.interconnect_bandwidth / 1e9 if a.interconnect_bandwidth else None,
            "power (W)": a.tdp if a.tdp else None,
            "TFLOP/s per W": peak / units.TFLOPS / a.tdp if peak and a.tdp else None,
            "estimate": a.is_estimate,
        }
    return pd.DataFrame(rows).T.astype({"estimate": bool})


@widgets.explorer
def ledger_explorer():
    """The whole ledger, recomputed for a model, a cluster size, a GPU type and a utilisation; the plan is found
    again for each (:func:`chipchain.plans.search`), and a combination with no plan that fits says so. Each view is
    the ledger at a glance (:func:`ledger_html`), with the running example's value beside every figure that moved."""
    reference = _ledger_cards(Walkthrough())

    def render(model, n_gpus, accelerator, mfu):
        try:
            w = Walkthrough(model=model, accelerator=accelerator, n_gpus=n_gpus, mfu=mfu,
                            mfus=tuple(dict.fromkeys((mfu, 0.3))))     # as the chapter: its MFU, and 30 %
        except ValueError as e:
            return widgets.message(str(e))
        return ledger_html(w, reference=reference)

    return widgets.explore(render, [
        widgets.Choice("model", "Model", {"Llama 2 7B": "7B", "Llama 2 70B": "70B", "GPT-3 175B": "175B"},
                       value="175B"),
        widgets.Slider("n_gpus", "GPUs", [512, 1024, 2048], value=1024, fmt=lambda v: f"{v:,}"),
        widgets.Choice("accelerator", "GPU", {"A100 (80 GB)": "A100", "H100 (SXM)": "H100"}, value="A100"),
        widgets.Slider("mfu", "MFU", [0.3, 0.4, 0.5], value=0.5, fmt=lambda v: str(units.fmt_percent(v))),
    ], title="The whole ledger: 2 T tokens, one training run from chip to nation")
