"""Views for chapter 13 (the running example): the inputs and the ledger as tables, the time-budget figure, the
source-check table, the four questions, and the ledger explorer.

The ledger — every step's headline number with its label, text and chapter (:func:`ledger_rows`, :func:`texts`,
:func:`ledger`) — is built here from :class:`~chipchain.walkthrough.Walkthrough`'s step records, which carry only
numbers. Chapter titles belong to the book: the rows carry only the chapter number.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import assumptions, compute, hardware, plotting, source_checks, tables, units, widgets
from . import _layout
from ..units import DAY
from ..walkthrough import Walkthrough
from ..units import fmt_percent
from ._figure import Figure
from .._i18n import gettext as _

__all__ = ["STEP_NAMES", "STEP_CHAPTERS", "LedgerRow", "ledger_rows", "texts", "ledger", "inputs_table",
           "ledger_html", "time_budget_days", "time_budget_html", "evidence_table",
           "time_budget_figure",
           "source_check_table",
           "FOUR_QUESTIONS", "four_questions", "ledger_explorer"]


#: the nine steps' names, in order
STEP_NAMES = {1: "① memory of states", 2: "② compute", 3: "③ time", 4: "④ parallel plan",
              5: "⑤ memory per GPU", 6: "⑥ failures", 7: "⑦ electricity and rent", 8: "⑧ export controls",
              9: "⑨ serving"}
#: the number of the chapter that derives each step (the chapters' titles belong to the book, not to the library)
STEP_CHAPTERS = {1: 6, 2: 13, 3: 14, 4: 4, 5: 6, 6: 7, 7: 9, 8: 10, 9: 12}


@dataclass(frozen=True)
class LedgerRow:
    """One headline number of the ledger: its step, what it is, its SI value and its text, and its chapter."""

    step: int
    name: str
    quantity: str
    value: float | None         #: None where the step has no number (no plan, cannot serve): the text says why
    text: str
    chapter: int
    key: str = ""               #: a short name for the row (what :func:`texts` is keyed by)


def plan_text(plan) -> str:
    """``str(plan)`` (:class:`chipchain.parallel.Plan`) in the reader's language: the same text in English.

    >>> from chipchain.parallel import Plan
    >>> plan_text(Plan(tp=8, pp=16, dp=8, zero=1, microbatches=192)) == str(Plan(tp=8, pp=16, dp=8, zero=1, microbatches=192))
    True
    """
    dims = (f"TP {plan.tp}" + (f" × CP {plan.cp}" if plan.cp > 1 else "") + f" × PP {plan.pp} × DP {plan.dp}"
            + (f" × EP {plan.ep}" if plan.ep > 1 else ""))
    text = _("{dims}, ZeRO-{zero}, {microbatches} micro-batches of {microbatch}").format(
        dims=dims, zero=plan.zero, microbatches=plan.microbatches, microbatch=plan.microbatch)
    if plan.offload_layers:
        text += _(", {n} layers' activations offloaded").format(n=plan.offload_layers)
    return text


# --- the whole ledger (chapter 13) --------------------------------------------------------------------------
def ledger_rows(walkthrough: Walkthrough | None = None) -> list:
    """Every step's headline numbers as :class:`LedgerRow` records, computed by the step methods, each with the
    number of the chapter that derives it (:data:`STEP_CHAPTERS`). Without a plan, steps ④ and ⑤ give one row
    each with the reason instead of a number.

    >>> rows = ledger_rows()
    >>> [r.text for r in rows if r.quantity.startswith("training compute")]
    ['2.1 × 10²⁴ FLOP']
    """
    w = Walkthrough() if walkthrough is None else walkthrough
    rows = []

    def add(step, quantity, value, text, key):
        rows.append(LedgerRow(step, STEP_NAMES[step], quantity, float(value), str(text), STEP_CHAPTERS[step],
                              key))

    s1 = w.step1_states()
    add(1, _("model states at {bpp} B/parameter").format(bpp=f"{w.bytes_per_param:g}"), s1.total_bytes,
        units.fmt_bytes(s1.total_bytes), "states")
    add(1, "…cards whose memory would hold them (rounded up)", s1.cards,
        _("{n} × {card}; {worth} cards' worth").format(n=s1.cards, card=units.fmt_capacity(s1.card_bytes),
                                                       worth=f"{s1.cards_worth:.1f}"), "cards")
    s2 = w.step2_compute()
    add(2, "training compute, 6ND", s2.flops, f"{units.fmt_sci(s2.flops)} FLOP", "flops")
    add(2, "cluster peak, n × peak", s2.cluster_peak, units.fmt_rate(s2.cluster_peak), "cluster_peak")
    if w.mfu_basis == "predicted":                            # bottom-up: the plan's predicted step × steps
        r3 = w.step3_run()
        add(3, "predicted step of the plan (chapter 14's model)", r3.step_seconds,
            _("{step} × {n} steps").format(step=units.fmt_duration(r3.step_seconds),
                                           n=units.fmt_number(round(r3.steps))), "step")
        add(3, _("run length, bottom-up (MFU {pct})").format(pct=fmt_percent(r3.mfu, decimals=1)), r3.seconds,
            units.fmt_duration(r3.seconds), "days")
        add(3, "…on the wall clock, with chapter 7's failures", r3.wall_seconds, units.fmt_duration(r3.wall_seconds),
            "wall")
    else:
        add(3, _("run length at {pct} MFU (" + w.mfu_basis + ")").format(pct=fmt_percent(w.mfu, decimals=0)),
            w.run_seconds,
            units.fmt_duration(w.run_seconds), "days")
    for m, s in w.step3_time().seconds.items():
        if w.mfu_basis == "predicted" or m != w.mfu:
            add(3, _("run length at {pct} MFU (assumed)").format(pct=fmt_percent(m, decimals=0)), s,
                units.fmt_duration(s),
                f"days_{round(m * 100)}")
    if w.plan is None:
        for step in (4, 5):
            rows.append(LedgerRow(step, STEP_NAMES[step], "no plan", None, w.plan_reason,
                                  STEP_CHAPTERS[step], f"no_plan_{step}"))
    else:
        s4 = w.step4_plan()
        add(4, "plan", s4.plan.n_gpus, plan_text(s4.plan), "plan")
        add(4, "where the groups sit", len(s4.placement),
            ", ".join(f"{k.upper()} {_(v)}" for k, v in s4.placement.items()), "placement")
        add(4, "pipeline bubble (share of the step idle)", s4.idle, units.fmt_percent(s4.idle), "idle")
        s5 = w.step5_memory_per_gpu()
        add(5, "states per GPU, sharded over all GPUs", s5.states_full_sharding,
            units.fmt_bytes(s5.states_full_sharding), "states_gpu")
        add(5, _("states per GPU under the plan (ZeRO-{zero})").format(zero=s4.plan.zero), s5.states_plan,
            units.fmt_bytes(s5.states_plan), "states_plan")
        add(5, "activations per GPU, selective recompute", s5.activations["selective"],
            units.fmt_bytes(s5.activations["selective"]), "act_sel")
        add(5, "total per GPU under the plan, against the card", s4.memory_per_gpu,
            (_("{used} of {card}: fits") if s4.fits else _("{used} of {card}: does not fit")).format(
                used=units.fmt_bytes(s4.memory_per_gpu), card=units.fmt_capacity(s5.card_bytes)), "per_gpu")
    s6 = w.step6_failures()
    for attr, label, fmt, key in (("expected_interruptions", "expected interruptions over the run",
                                   lambda v: f"{v:.0f}", "interruptions"),
                                  ("mtbf", "mean time between interruptions", units.fmt_duration, "mtbf"),
                                  ("checkpoint_interval", "checkpoint interval", units.fmt_duration, "interval"),
                                  ("goodput", "goodput", lambda v: units.fmt_percent(v, 3), "goodput"),
                                  ("lost_seconds", "time lost to failures", units.fmt_duration, "lost")):
        v = getattr(s6, attr)
        add(6, label, v, fmt(v), key)
    s7 = w.step7_electricity()
    add(7, _("facility power (PUE {pue})").format(pue=f"{s7.pue:g}"), s7.facility_power,
        units.fmt_power(s7.facility_power), "facility")
    add(7, "energy at the meter", s7.energy, units.fmt_energy(s7.energy), "energy")
    add(7, _("electricity bill at ${price}/kWh").format(price=f"{s7.price_per_kwh:g}"), s7.dollars,
        units.fmt_dollars(round(s7.dollars, -3)), "bill")
    rent = w.gpu_rent()
    add(7, _("GPU rent at ${price}/GPU-hour, wall clock with failures").format(
        price=f"{assumptions.value('gpu_rent_per_hour'):g}"), rent,
        units.fmt_dollars(rent), "rent")
    add(7, "total: rent + electricity", rent + s7.dollars, units.fmt_dollars(rent + s7.dollars), "total_cost")
    s8 = w.step8_export()
    for rid, c in s8.classifications.items():
        add(8, _("{acc} under the {rule} rule").format(acc=s8.accelerator, rule=rid), float(bool(c.controlled)),
            c.category, f"export_{rid}")
    for rid, part in s8.shippable.items():
        if part is not None:
            add(8, _("same run on the fastest part the {rule} rule lets through").format(rule=rid),
                s8.shippable_days[rid] * DAY,
                _("{part}: {duration}").format(part=part, duration=units.fmt_duration(s8.shippable_days[rid] * DAY)),
                f"shippable_{rid}")
    try:
        s9 = w.step9_serving()
    except ValueError as err:                  # the model does not fit in the largest group of GPUs
        rows.append(LedgerRow(9, STEP_NAMES[9], "cannot serve", None, str(err), STEP_CHAPTERS[9],
                              "no_serving"))
    else:
        add(9, "GPUs that hold the model for serving", s9.n_gpus,
            (_("{n} ({nodes} nodes)") if s9.n_nodes > 1 else _("{n} ({nodes} node)")).format(
                n=s9.n_gpus, nodes=s9.n_nodes), "serve_gpus")
        add(9, _("decode throughput at batch {b} (memory-bound ceiling)").format(b=s9.max_batch),
            s9.tokens_per_second, _("{n} tokens/s").format(n=f"{s9.tokens_per_second:,.0f}"), "serve_tps")
        add(9, "energy per token, GPUs at rated power", s9.joules_per_token, f"{s9.joules_per_token:.1f} J",
            "serve_j")
        add(9, _("cost per million tokens at ${price}/GPU-hour").format(price=f"{s9.price_per_gpu_hour:g}"),
            s9.dollars_per_million_tokens,
            f"${s9.dollars_per_million_tokens:,.2f}", "serve_cost")
    rows.sort(key=lambda r: r.step)
    return rows

def texts(walkthrough: Walkthrough | None = None) -> dict:
    """The ledger's texts by row key — the strings the ledger table and the explorer print, so that prose which
    glues them says exactly what the tables say.

    >>> t = texts()
    >>> t["goodput"], t["bill"]
    ('97.3 %', '$508,000')
    """
    return {r.key: r.text for r in ledger_rows(walkthrough)}

def ledger(walkthrough: Walkthrough | None = None):
    """The whole running example as a pandas DataFrame: one row per headline number, with its step, its
    formatted value and the number of the chapter that derives it (columns ``step``, ``quantity``, ``value``,
    ``chapter``).

    >>> df = ledger()
    >>> sorted(set(df["step"]))[:3]
    ['① memory of states', '② compute', '③ time']
    """
    import pandas as pd

    return pd.DataFrame([{"step": r.name, "quantity": r.quantity, "value": r.text, "chapter": r.chapter}
                         for r in ledger_rows(walkthrough)])


def inputs_table(walkthrough: Walkthrough | None = None):
    """The running example's inputs as a pandas DataFrame (input → value, in words and units).

    >>> inputs_table().loc["peak per GPU", "value"]
    '312 TFLOP/s (catalog, BF16 dense)'
    """
    import pandas as pd

    w = Walkthrough() if walkthrough is None else walkthrough
    peak = units.fmt_rate(w.peak_flops)
    peak_text = (_("{peak} (override)").format(peak=peak) if w.peak_override is not None
                 else _("{peak} (catalog, {dtype} dense)").format(peak=peak, dtype=w.dtype.upper()))
    rows = [("model", _("{model}: {params} B parameters, {layers} layers, hidden {hidden}, {heads} heads, sequence "
                        "{seq}").format(model=w.model.name, params=units.fmt_number(w.params / 1e9), layers=w.layers,
                                        hidden=units.fmt_number(w.hidden), heads=w.heads,
                                        seq=units.fmt_number(w.seq))),
            ("training tokens", f"{units.fmt_sci(w.tokens)}"),
            ("cluster", _("{n} × {acc} in {node} nodes of {per} ({intra} inside, {inter} between)").format(
                n=units.fmt_number(w.n_gpus), acc=w.accelerator.name, node=w.cluster.node.name, per=w.gpus_per_node,
                intra=w.cluster.intra.name, inter=w.cluster.inter.name)),
            ("peak per GPU", peak_text),
            ("MFU", _("{pct} (step ③ also at {others})").format(
                pct=fmt_percent(w.mfu, decimals=0),
                others=', '.join(f'{fmt_percent(m, decimals=0)}' for m in w.mfus if m != w.mfu))),
            ("model states", _("{bpp} B per parameter ({recipe})").format(bpp=f"{w.bytes_per_param:g}",
                                                                          recipe=w.recipe)),
            ("parallel plan", plan_text(w.plan) if w.plan is not None else w.plan_reason),
            ("global batch", _("{n} sequences per step").format(n=units.fmt_number(w.batch)))]
    return pd.DataFrame(rows, columns=["input", "value"]).set_index("input")


def _ledger_cards(w: Walkthrough) -> list:
    """(label, value, note, colour) of each step's headline, from the walkthrough's own texts (one rounding)."""
    t = texts(w)
    s2 = w.step2_compute()
    others = [k for k in t if k.startswith("days_")]
    cards = [("① model states", t["states"], t["cards"], None),
             ("② compute, 6ND", f"{tables.fmt_value(s2.flops, 2)} FLOP",
              _("cluster peak {peak}").format(peak=t['cluster_peak']), None),
             (_("③ run at {pct} MFU").format(pct=fmt_percent(w.mfu, decimals=0)), t["days"],
              _("; ").join(_("{days} at {pct} % MFU").format(days=t[k], pct=k[5:]) for k in others) or None, None)]
    if w.plan is None:
        cards.append(("④ plan", "no plan fits", w.plan_reason, _layout.BAD))
    else:
        p = w.plan
        cards.append(("④ plan", f"TP {p.tp} × PP {p.pp} × DP {p.dp}",
                      _("ZeRO-{zero}, {m} micro-batches; bubble {idle}").format(zero=p.zero, m=f"{p.microbatches:,}",
                                                                                idle=t['idle']), None))
        s4 = w.step4_plan()                   # the figures of the ledger's "per_gpu" text, in the same rounding
        used = str(units.fmt_bytes(s4.memory_per_gpu))
        card = str(units.fmt_capacity(w.step5_memory_per_gpu().card_bytes))
        cards.append(("⑤ memory per GPU", used,
                      (_("of {card}: fits") if s4.fits else _("of {card}: does not fit")).format(card=card),
                      _layout.GOOD if s4.fits else _layout.BAD))
    cards.append(("⑥ goodput", t["goodput"], _("{n} interruptions; {lost} lost").format(n=t['interruptions'],
                                                                                        lost=t['lost']), None))
    electricity = _("electricity {bill} ({energy} at {power})").format(bill=t['bill'], energy=t['energy'],
                                                                       power=t['facility'])
    if "total_cost" in t:
        cards.append(("⑦ rent + electricity", t["total_cost"],
                      _("rent {rent}; {electricity}").format(rent=t['rent'], electricity=electricity), None))
    else:
        cards.append(("⑦ electricity bill", t["bill"],
                      _("{energy} at {power}").format(energy=t['energy'], power=t['facility']), None))
    exports = sorted(k for k in t if k.startswith("export_"))
    if exports:
        rule = exports[-1][len("export_"):]
        ship = t.get(f"shippable_{rule}")
        cards.append((_("⑧ export, {rule} rule").format(rule=rule), t[exports[-1]],
                      _("fastest part it lets through: {part}").format(part=ship) if ship else None, None))
    if "serve_cost" in t:
        cards.append(("⑨ serving, per M tokens", t["serve_cost"],
                      _("; ").join(x for x in (_("GPUs: {gpus}").format(gpus=t['serve_gpus']) if "serve_gpus" in t
                                               else "", t.get("serve_tps", "")) if x) or None, None))
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
        cards = [(label, value, ((note + " · " if note else "") + _("running example: {value}").format(
                      value=ref[label[0]]))
                  if ref.get(label[0]) not in (None, value) else note, colour)
                 for label, value, note, colour in cards]
    head = _("{model}, {tokens} T tokens, {n} × {acc} at {peak} × {pct} MFU").format(
        model=w.model.name, tokens=f"{w.tokens / units.TERA:g}", n=f"{w.n_gpus:,}", acc=w.accelerator.name,
        peak=units.fmt_rate(w.peak_flops), pct=fmt_percent(w.mfu, decimals=0))
    try:
        e = w.step3_evidence()
        lo, mid, hi = e.mfus
        evidence = _("At the MFU comparable published runs achieved ({lo} – {hi}, median {mid}; {n} runs): "
                     "{short} – {long}, median {median}, downtime included.").format(
            lo=units.fmt_percent(lo), hi=units.fmt_percent(hi), mid=units.fmt_percent(mid), n=len(e.runs),
            short=units.fmt_duration(e.seconds[2]), long=units.fmt_duration(e.seconds[0]),
            median=units.fmt_duration(e.seconds[1]))
    except ValueError as err:
        evidence = str(err)
    return (_layout.para(head) + _layout.headline(cards) + time_budget_html(w) + _layout.para(evidence, small=True))


def time_budget_days(walkthrough: Walkthrough | None = None) -> list:
    """(label, days) of the run at 100 % of peak, at the walkthrough's MFU (step ③) and on the wall clock once
    failures, checkpoints and restarts are paid (step ⑥: run / goodput).

    >>> [round(d) for _, d in time_budget_days()]
    [76, 147, 151]
    """
    w = Walkthrough() if walkthrough is None else walkthrough
    s2 = w.step2_compute()
    return [("at 100 % of peak", s2.flops / s2.cluster_peak / DAY),
            (_("at {pct} MFU (step ③)").format(pct=fmt_percent(w.mfu, decimals=0)), w.run_seconds / DAY),
            ("on the wall clock (step ⑥)", w.step6_failures().wall_seconds / DAY)]


def time_budget_html(walkthrough: Walkthrough | None = None) -> str:
    """:func:`time_budget_days` as one stacked bar for explorables: the days at 100 % of peak, the days utilisation
    below peak adds (step ③) and the days failures add (step ⑥); the bar's length is the wall-clock run."""
    w = Walkthrough() if walkthrough is None else walkthrough
    (_k, peak), (_k, at_mfu), (_k, wall) = time_budget_days(w)
    # segment labels translated before svg_bars joins them with their days ("added by failures: 4.2 days")
    segs = [(_("at 100 % of peak"), peak),
            (_("added by {pct} MFU").format(pct=fmt_percent(w.mfu, decimals=0)), at_mfu - peak),
            (_("added by failures"), max(wall - at_mfu, 0.0))]
    return plotting.svg_bars(segs, unit_format=lambda v: _("{n} days").format(n=f"{v:,.1f}" if v < 10 else f"{v:,.0f}"),
                             xlabel=_("days on the cluster: {n} on the wall clock").format(n=f"{wall:,.0f}"),
                             alt=_("Run length: {peak} days at 100 % of peak, {at_mfu} at {pct} MFU, {wall} on the "
                                   "wall clock with failures").format(peak=f"{peak:,.0f}", at_mfu=f"{at_mfu:,.0f}",
                                                                      pct=units.fmt_percent(w.mfu),
                                                                      wall=f"{wall:,.0f}"))


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
        rows.append((_("the source's fixed {pct}, failures added (step ⑥)").format(pct=units.fmt_percent(m)), m,
                     wall))
    for label, m, s in zip((_("published runs, lowest"), _("published runs, median"), _("published runs, highest")),
                           e.mfus, e.seconds):
        rows.append((label, m, s))
    hours = [compute.gpu_hours_from_seconds(s, w.n_gpus) for _, _, s in rows]
    return pd.DataFrame([{"utilisation": lab, "MFU": str(units.fmt_percent(m)),
                          "wall-clock days": f"{s / DAY:,.0f}",
                          "GPU-hours (millions)": f"{h / 1e6:,.2f}",
                          f"cost at ${e.price_per_gpu_hour:g}/GPU-hour": str(units.fmt_dollars(
                              round(compute.cost(h, e.price_per_gpu_hour), -4)))}
                         for (lab, m, s), h in zip(rows, hours)]).set_index("utilisation")


def time_budget_figure(walkthrough: Walkthrough | None = None):
    """:func:`time_budget_days` as a chart-system figure (:class:`~chipchain.views._figure.Figure`): one named bar
    per row on one zero baseline, its days written at its end.

    >>> [round(d) for _, d in time_budget_figure().data["bars"]]
    [76, 147, 151]
    """

    bars = time_budget_days(walkthrough)
    days = lambda v: _("{n} days").format(n=f"{v:,.0f}")                             # noqa: E731
    alt = (_("Three horizontal bars of the run's length in days: ")
           + _("; ").join(_("{label}, {days}").format(label=_(k), days=days(v)) for k, v in bars) + _("."))
    html = plotting.svg_hbars([(k, v, plotting.color(i)) for i, (k, v) in enumerate(bars)],
                              xlabel="time on the cluster (days)", unit_format=days, alt=alt)
    return Figure(html, "; ".join(f"{k}: {days(v)}" for k, v in bars), {"bars": bars})


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
            if mfu == "predicted":                 # bottom-up: the plan's predicted step (the chapter's default)
                w = Walkthrough(model=model, accelerator=accelerator, n_gpus=n_gpus)
            else:                                  # a what-if utilisation, and the source's 30 % beside it
                w = Walkthrough(model=model, accelerator=accelerator, n_gpus=n_gpus, mfu=mfu,
                                mfus=tuple(dict.fromkeys((mfu, 0.3))))
        except ValueError as e:
            return widgets.message(str(e))
        return ledger_html(w, reference=reference)

    return widgets.explore(render, [
        widgets.Choice("model", "Model", {"Llama 2 7B": "7B", "Llama 2 70B": "70B", "GPT-3 175B": "175B"},
                       value="175B"),
        widgets.Slider("n_gpus", "GPUs", [512, 1024, 2048], value=1024, fmt=lambda v: f"{v:,}"),
        widgets.Choice("accelerator", "GPU", {"A100 (80 GB)": "A100", "H100 (SXM)": "H100"}, value="A100"),
        widgets.Choice("mfu", "MFU", {"the plan's predicted step": "predicted", "30 % (what if)": 0.3,
                                      "40 % (what if)": 0.4, "50 % (what if)": 0.5}, value="predicted"),
    ], title="The whole ledger: 2 T tokens, one training run from chip to nation")
