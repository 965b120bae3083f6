"""Views for chapter 6 (memory): the recipe, activation and sizing tables, the stacked ledger bars and the memory
explorer. Every number comes from :mod:`chipchain.memory` (model states, ZeRO, the ledger) and
:mod:`chipchain.activations` (Korthikanti et al. 2022)."""
from __future__ import annotations

import re

from .. import _check, activations, hardware, loss_memory, memory, models, plotting, timeline, units, widgets
from .._i18n import gettext as _
from . import _layout
from ._figure import Figure

__all__ = ["recipe_table", "activation_table", "sizing_table", "ledgers_figure", "memory_timeline_figure",
           "memory_explorer", "timeline_explorer", "loss_memory_table"]


def recipe_table(recipe=None):
    """Bytes per parameter by component for each recipe in ``recipe`` (names or aliases; default: every recipe of
    ``data/recipes.csv``), with its total, what it counts and its source (a pandas DataFrame indexed by name).

    >>> recipe_table().loc["mixed-adam-fp32-grads", "total"]
    np.float64(18.0)
    >>> float(recipe_table(["bf16-mixed"]).loc["mixed-adam", "master weights"])
    4.0
    """
    import pandas as pd

    chosen = memory.recipe_names() if recipe is None else ([recipe] if isinstance(recipe, str) else list(recipe))
    rows = {}
    for r in map(memory.recipe, chosen):
        rows[r.name] = {**r.breakdown(), "total": r.total, "counts": r.counts, "source": r.source}
    return pd.DataFrame(rows).T.astype({k: float for k in ("weights", "gradients", "master weights",
                                                            "optimizer moments", "total")})


def activation_table(model="175B", microbatch=1, tp=8):
    """Korthikanti et al. 2022's Table 2 evaluated for one model (a name, alias or record): activation bytes per
    layer (and for all layers) under each combination of tensor parallelism, sequence parallelism and recomputation
    (a pandas DataFrame, GB), from :func:`chipchain.memory.layer_activation_bytes` (the model's own shape; for a GPT
    layer, the paper's sbh(34 + 5as/h)).

    >>> float(round(activation_table().loc["TP + SP + selective", "per layer (GB)"], 3))
    0.107
    """
    import pandas as pd

    m = models.get(model)
    cases = {"no parallelism": (1, False, "none"), "TP": (tp, False, "none"), "TP + SP": (tp, True, "none"),
             "TP + selective": (tp, False, "selective"), "TP + SP + selective": (tp, True, "selective"),
             "full recompute": (tp, False, "full"), "TP + SP + full": (tp, True, "full")}
    rows = {}
    for name, (t, sp, rc) in cases.items():
        b = memory.layer_activation_bytes(m, microbatch=microbatch, tp=t, sequence_parallel=sp, recompute=rc)
        rows[name] = {"tp": t, "per layer (GB)": b / 1e9, f"{m.layers} layers (GB)": b * m.layers / 1e9}
    return pd.DataFrame(rows).T.astype({"tp": int})


def sizing_table(params=(7e9, 13e9, 70e9), recipe="mixed-adam", accelerator=("RTX-4090", "A100")):
    """Seed 004's sizing table, recomputed: training states, the fewest cards to hold them fully sharded, and the
    inference weights after INT8/INT4 quantization with the fewest cards for those. ``params`` are nominal sizes
    (counts: the seed's "7B" is 7e9, not Llama 2 7B's 6.74e9); ``accelerator``: the cards, by name or record (the
    seed's 24 GB and 80 GB: an RTX 4090 and an A100, whose catalog capacities are 24 GiB and 80 GiB), whose memory
    sizes the counts. A pandas DataFrame in GB (decimal) and cards, each count rounded up (lower bounds:
    activations, KV cache and framework overhead excluded).

    >>> sizing_table().loc["70B", "train states (GB)"]
    np.float64(1120.0)
    >>> int(sizing_table().loc["70B", "min 24 GiB cards (train)"])      # 1,120 GB / 25.8 GB = 43.5 → 44
    44
    """
    import pandas as pd

    cards = [hardware.get(a).memory_bytes * 1.0 for a in ([accelerator] if isinstance(accelerator, str)
                                                          else accelerator)]
    rows = {}
    for p in params:
        states = memory.state_bytes(p, recipe)
        row = {"train states (GB)": states / 1e9}
        for c in cards:
            row[f"min {c / units.GiB:g} GiB cards (train)"] = memory.min_gpus(states, c)
        for dt in ("bf16", "int8", "int4"):
            row[f"{dt} weights (GB)"] = memory.inference_weight_bytes(p, dt) / 1e9
        for dt in ("int8", "int4"):
            row[f"min {cards[0] / units.GiB:g} GiB cards ({dt} infer)"] = memory.min_gpus(
                memory.inference_weight_bytes(p, dt), cards[0])
        rows[f"{p / 1e9:g}B"] = row
    df = pd.DataFrame(rows).T
    return df.astype({c: int for c in df.columns if c.startswith("min")})


def _card(accelerator):
    """(record, capacity in bytes) of a card from the catalog: the capacity every "fits" line is drawn at."""
    acc = hardware.get(accelerator)
    return acc, float(acc.require("memory_bytes"))


def ledgers_figure(ledgers, accelerator="H100"):
    """Stacked bars, one per ledger (``ledgers`` maps a label to {component: bytes}), in GB on one scale, with the
    capacity of one ``accelerator`` (a catalog name or record) drawn across them at its catalog capacity — an
    "80 GB" card holds 80 GiB = 85.9 GB — as a chart-system figure (:class:`~chipchain.views._figure.Figure`).

    >>> f = ledgers_figure({"mixed": memory.rule_of_thumb_ledger(7e9)}, "H100")
    >>> round(f.data["capacity"] / 1e9, 1), [(k, round(t / 1e9)) for k, t in f.data["totals"]]
    (85.9, [('mixed', 126)])
    """
    if not ledgers:
        raise ValueError("ledgers must map at least one label to a ledger")
    acc, cap = _card(accelerator)
    totals = [(k, sum(d.values())) for k, d in ledgers.items()]
    rows = [(f"{_(k)}: {t / 1e9:,.0f} GB", [(c, v / 1e9) for c, v in d.items()])
            for (k, t), d in zip(totals, ledgers.values())]
    name = acc.name.split("-")[0]
    alt = _("Stacked bars of memory by component: {bars}; the line marks one {card} card's {capacity}.").format(
        bars=_("; ").join(f"{_(k)} {t / 1e9:,.0f} GB" for k, t in totals), card=name,
        capacity=units.fmt_capacity(cap))
    html = plotting.svg_stacked(rows, capacity=cap / 1e9,
                                capacity_label=_("one {card}, {gib} GiB =").format(card=name,
                                                                                  gib=f"{cap / units.GiB:,.0f}"),
                                unit_format=lambda v: f"{v:,.1f} GB", xlabel="memory (GB)", alt=alt)
    text = "; ".join(f"{k}: {t / 1e9:,.0f} GB" for k, t in totals) + f" (one {name}: {units.fmt_capacity(cap)})"
    return Figure(html, text, {"totals": totals, "capacity": cap, "ledgers": {k: dict(d) for k, d in ledgers.items()}})


# --- explorable ------------------------------------------------------------------------------------------------

def _fit_message(fit) -> str:
    """:attr:`chipchain.memory.Fit.message` in the reader's language (the same words in English)."""
    if fit.fits:
        return _("fits on {card} with {margin} to spare").format(card=fit.accelerator,
                                                                 margin=units.fmt_bytes(fit.margin))
    return _("OOM on {card} by {over}").format(card=fit.accelerator, over=units.fmt_bytes(-fit.margin))


def _memory_view(model, shape, recipe, recompute, zero, accelerator, dp=8) -> str:
    fmt_bytes = units.fmt_bytes
    b, s = shape
    m = models.get(model)
    L = memory.ledger(m, recipe, microbatch=b, seq=s, dp=dp, zero=zero, recompute=recompute)
    fit = L.fits(accelerator)
    segs = [(k, v) for k, v in L.components.items() if v > 0]
    message = _fit_message(fit)
    alt = _("Memory per GPU for {model}: {total} against {capacity} on {card}; {message}").format(
        model=m.name, total=fmt_bytes(L.total), capacity=units.fmt_capacity(fit.capacity), card=fit.accelerator,
        message=message)
    # the key reads "component: value", so each component is named in the reader's language before it is joined
    bar = plotting.svg_bars([(_(k), v / 1e9) for k, v in segs], capacity=fit.capacity / 1e9,
                            capacity_label=_("{card} holds").format(card=fit.accelerator),
                            unit_format=lambda v: f"{v:,.1f} GB", xlabel="memory per GPU (GB)", alt=alt)
    head = _layout.verdict(_("{total} per GPU ({dp}-way data parallel, ZeRO-{zero}) against {capacity}: "
                             "{message}.").format(total=fmt_bytes(L.total, 3), dp=dp, zero=zero,
                                                  capacity=units.fmt_capacity(fit.capacity), message=message),
                           fit.fits, "Fits." if fit.fits else "Out of memory.")
    return head + bar


@widgets.explorer
def memory_explorer():
    """Ch. 6 explorer: model size, micro-batch × sequence, recipe, recomputation, ZeRO stage (8-way data parallel)
    and card → the stacked memory bar against the card's capacity, with "fits" or "OOM by X GB"."""
    W = widgets
    controls = [
        W.Choice("model", "Model", {"Llama 2 7B": "Llama-2-7B", "Llama 2 13B": "Llama-2-13B",
                                    "Llama 2 70B": "Llama-2-70B"}),
        W.Choice("shape", "Micro-batch × sequence", {"1 × 2,048": (1, 2048), "4 × 4,096": (4, 4096)}),
        W.Choice("recipe", "Precision recipe", {"FP32 + Adam (16 B)": "fp32-adam", "mixed + Adam (16 B)": "mixed-adam"},
                 value="mixed-adam"),
        W.Choice("recompute", "Recomputation", {"none": "none", "selective": "selective", "full": "full"},
                 value="selective"),
        W.Slider("zero", "ZeRO stage (8 GPUs)", [0, 1, 2, 3], value=3),
        W.Choice("accelerator", "Card", {"RTX 4090 (24 GiB)": "RTX-4090", "H100 (80 GiB)": "H100-SXM"},
                 value="H100-SXM"),
    ]
    return W.explore(_memory_view, controls, title="The memory ledger of one GPU")


def loss_memory_table(model="Llama-3-8B", tokens=8192, chunks=(1, 4, 16, 64)):
    """The output layer's loss memory for ``tokens`` tokens of ``model``'s vocabulary against the chunk count
    (:func:`chipchain.loss_memory.loss_peak_bytes`): a DataFrame with chunks, tokens per chunk and peak bytes.

    >>> loss_memory_table()["peak (GB)"].round(2).tolist()
    [10.51, 2.63, 0.66, 0.16]
    """
    import pandas as pd

    v = models.get(model).vocab
    return pd.DataFrame([{"chunks": c, "tokens per chunk": tokens // c,
                          "peak (GB)": loss_memory.loss_peak_bytes(tokens, v, c) / 1e9} for c in chunks])


def _stacked_path(step):
    """The x positions (event index) and the cumulative tops (GB) of :data:`chipchain.timeline.COMPONENTS` drawn
    through one step: straight between events, each event with logits and loss held for most of its width (so the
    one-event loss buffers show as a plateau, not a spike), and every point through which all tops run straight
    dropped — the same picture in a few dozen points instead of hundreds (the static site stores every view)."""
    cols = [step.bytes[c] for c in timeline.COMPONENTS]
    pts = []
    for e in range(len(step.labels)):
        cum, acc = [], 0.0
        for col in cols:
            acc += col[e] / 1e9
            cum.append(acc)
        held = cols[-1][e] > 0
        pts += [(e - 0.45, cum), (e + 0.45, cum)] if held and 0 < e < len(step.labels) - 1 else [(float(e), cum)]

    def straight(a, b, c):
        return all(abs((yb - ya) * (c[0] - b[0]) - (yc - yb) * (b[0] - a[0])) <= 1e-9 * (1 + abs(yb))
                   for ya, yb, yc in zip(a[1], b[1], c[1]))

    keep = [pts[0]]
    for k in range(1, len(pts) - 1):
        if not straight(keep[-1], pts[k], pts[k + 1]):
            keep.append(pts[k])
    keep.append(pts[-1])
    return [p[0] for p in keep], [[p[1][j] for p in keep] for j in range(len(cols))]


_LAYER_EVENT = re.compile(r"(forward|backward) layer (\d+)")


def _event(label: str) -> str:
    """One event of :func:`chipchain.timeline.step_timeline` (``labels``) in the reader's language."""
    m = _LAYER_EVENT.fullmatch(label)
    if m:
        template = _("forward layer {n}") if m.group(1) == "forward" else _("backward layer {n}")
        return template.format(n=m.group(2))
    return _(label)


def memory_timeline_figure(step, accelerator="H100", height=320):
    """One training step's memory (:func:`chipchain.timeline.step_timeline`, a
    :class:`~chipchain.timeline.MemoryTimeline`) as stacked areas over its events, the phases marked, the peak a
    labelled dot, and one ``accelerator``'s catalog capacity as a line — a chart-system figure
    (:class:`~chipchain.views._figure.Figure`).

    >>> f = memory_timeline_figure(timeline.step_timeline("7B", seq=4096, dp=8, zero=1, recompute="selective"))
    >>> round(f.data["peak"] / 1e9, 1), f.data["peak_label"], round(f.data["capacity"] / 1e9, 1)
    (42.1, 'loss (end of forward)', 85.9)
    """
    if not isinstance(step, timeline.MemoryTimeline):
        raise ValueError(f"step must be a timeline.MemoryTimeline (from timeline.step_timeline), got {step!r}")
    acc, cap = _card(accelerator)
    x = list(range(len(step.labels)))
    xs, tops = _stacked_path(step)
    lines = []
    for i, comp in enumerate(timeline.COMPONENTS):
        base = tops[i - 1] if i else [0.0] * len(xs)
        lines.append({"x": xs, "y": tops[i], "base": base, "label": comp, "color": plotting.color(i)})
    phases = [(step.phases.index(p), p) for p in ("forward", "backward", "optimizer")]
    vlines = [{"x": i, "label": p, "color": "#777"} for i, p in phases]
    name = acc.name.split("-")[0]
    hlines = [{"y": cap / 1e9, "label": f"{name}: {cap / 1e9:,.1f} GB", "color": "#000"}]
    peak, i = step.peak, step.peak_index
    points = [{"x": i, "y": peak / 1e9, "color": "#000",
               "label": _("peak {peak}: {event}").format(peak=f"{peak / 1e9:,.1f} GB", event=_event(step.peak_label))}]
    alt = _("Stacked areas of the memory one GPU holds through one training step of {model}, event by event "
            "({n} events: forward layers, the loss, backward layers, the optimizer step): peak {peak} at event "
            "{i}, {event}; {optimizer} at the optimizer step; one {card} holds {capacity}.").format(
        model=step.model, n=len(x), peak=f"{peak / 1e9:,.1f} GB", i=i + 1, event=_event(step.peak_label),
        optimizer=f"{step.totals[-2] / 1e9:,.1f} GB", card=name, capacity=units.fmt_capacity(cap))
    html = plotting.svg_chart(lines=lines, points=points, vlines=vlines, hlines=hlines, xlim=(0, len(x) - 1),
                              ylim=(0, max(peak, cap) / 1e9 * 1.18), xlabel="events of one training step, in order",
                              ylabel="memory per GPU (GB)", alt=alt, height=height)
    text = f"{step.model}: peak {peak / 1e9:,.1f} GB at event {i + 1}, {step.peak_label}; {name} {cap / 1e9:,.1f} GB"
    return Figure(html, text, {"peak": peak, "peak_index": i, "peak_label": step.peak_label, "capacity": cap,
                               "totals": step.totals, "path": (xs, tops)})


# --- the step timeline as an explorer ------------------------------------------------------------------------------

#: the models the timeline explorer offers (label → catalog name), each at its own training sequence length
TIMELINE_MODELS = {"Llama 3 8B (8,192 tokens)": "Llama-3-8B", "Llama 2 7B (4,096 tokens)": "Llama-2-7B",
                   "Llama 2 13B (4,096 tokens)": "Llama-2-13B"}
#: data-parallel ranks the timeline explorer's ZeRO stage shards over, and the card it draws
TIMELINE_DP, TIMELINE_CARD = 8, "H100"


def _timeline_view(model, recompute, loss_chunks, zero) -> str:
    fmt = units.fmt_bytes
    tl = timeline.step_timeline(model, dp=TIMELINE_DP, zero=zero, recompute=recompute, loss_chunks=loss_chunks)
    L = memory.ledger(model, dp=TIMELINE_DP, zero=zero, recompute=recompute)
    fig = memory_timeline_figure(tl, TIMELINE_CARD, height=300)
    acc, cap = _card(TIMELINE_CARD)
    i = tl.peak_index
    at = {c: tl.bytes[c][i] for c in timeline.COMPONENTS}
    if at["logits and loss"] > 0:
        template = (_("That is the ledger's {total} (model states and every layer's activations) less the "
                      "{gradients} of gradients not yet allocated, plus {loss} of logits and loss in {chunks} chunks.")
                    if loss_chunks > 1 else
                    _("That is the ledger's {total} (model states and every layer's activations) less the "
                      "{gradients} of gradients not yet allocated, plus {loss} of logits and loss in {chunks} chunk."))
        why = template.format(total=fmt(L.total, 3), gradients=fmt(L.components['gradients'], 3),
                              loss=fmt(at['logits and loss'], 3), chunks=f"{loss_chunks:,}")
    else:
        why = _("That is the ledger's model states, {states}, with every gradient allocated and every activation "
                "freed: the gradients outweigh the activations and the loss.").format(states=fmt(L.states, 3))
    fits = tl.peak <= cap
    head = _layout.verdict(_("Peak {peak} at event {i} of {n}: {event}. One {card} holds {capacity}.").format(
        peak=fmt(tl.peak, 3), i=i + 1, n=len(tl.labels), event=_event(tl.peak_label), card=acc.name.split('-')[0],
        capacity=units.fmt_capacity(cap)), fits, "Fits." if fits else "Out of memory.")
    return head + _layout.para(why, small=True) + fig.html


@widgets.explorer
def timeline_explorer():
    """Ch. 6 explorer: model, recomputation, loss chunks and ZeRO stage (over 8 data-parallel GPUs) → the memory of
    one GPU event by event through a training step (:func:`chipchain.timeline.step_timeline`), its peak, and how the
    peak follows from the ledger (:func:`chipchain.memory.ledger`)."""
    W = widgets
    controls = [
        W.Choice("model", "Model", TIMELINE_MODELS),
        W.Choice("recompute", "Recomputation", {"none": "none", "selective": "selective", "full": "full"},
                 value="selective"),
        W.Slider("loss_chunks", "Loss chunks", [1, 4, 16], value=1),
        W.Slider("zero", f"ZeRO stage ({TIMELINE_DP} GPUs)", [0, 1, 2, 3], value=1),
    ]
    return W.explore(_timeline_view, controls, title="One training step, event by event")
