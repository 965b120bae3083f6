"""Views for chapter 4 (parallelism): the communication bill, the bubble table, ZeRO's trade-off, the plan and
search explorers.

Every number comes from :mod:`chipchain.parallel` (plans, placement, bubbles, traffic), :mod:`chipchain.plans` (the
search) and :mod:`chipchain.memory`; nothing here re-derives a formula.

>>> from chipchain.parallel import Plan
>>> communication_table(Plan(tp=8, pp=16, dp=8, microbatches=64), "175B", "A100").loc["TP all-reduce", "link"]
'NVLink3'
"""
from __future__ import annotations

import html

from .._lazy import np

from .. import commbound, hardware, memory, parallel, plans, plotting, schedules, tables, traffic, widgets
from .._i18n import gettext as _
from . import _layout
from ._figure import Figure
from ..units import fmt_bytes, fmt_capacity, fmt_duration, fmt_percent

__all__ = ["communication_table", "bubble_table", "search_table", "zero_tradeoff_figure", "plan_explorer",
           "search_explorer"]


def communication_table(plan, model, cluster="A100", **kwargs):
    """:func:`chipchain.traffic.communication` as a pandas DataFrame (one row per kind: when, link, operations,
    message and total bytes in MB/GB, seconds)."""
    import pandas as pd

    rows = traffic.communication(plan, model, cluster, **kwargs)
    return pd.DataFrame([{"kind": r.kind, "when": r.when, "link": r.link, "operations": r.count,
                          "message (MB)": r.message_bytes / 1e6, "sent per GPU (GB)": r.sent_bytes / 1e9,
                          "time (s)": r.seconds} for r in rows]).set_index("kind")


def bubble_table(pp=16, microbatches=(8, 16, 64, 192), virtual_stages=2):
    """The pipeline bubble of ``pp`` stages over several micro-batch counts, as a DataFrame: bubble over ideal time,
    idle share of the step, and the bubble with ``virtual_stages`` interleaved chunks
    (:func:`chipchain.parallel.bubble_fraction`, :func:`chipchain.parallel.idle_share`).

    >>> bubble_table(16, (16, 192)).round(3)["bubble / ideal"].tolist()
    [0.938, 0.078]
    """
    import pandas as pd

    m = np.asarray(microbatches)
    df = pd.DataFrame({"bubble / ideal": parallel.bubble_fraction(pp, m),
                       "idle share of step": parallel.idle_share(pp, m),
                       f"interleaved v = {virtual_stages}": parallel.bubble_fraction(pp, m, virtual_stages)},
                      index=pd.Index([int(x) for x in m], name=f"micro-batches (p = {pp})"))
    return df


def search_table(candidates):
    """Plans found by :func:`chipchain.plans.search` as a DataFrame: plan, recomputation, memory per GPU (GB) and
    step time (s)."""
    import pandas as pd

    return pd.DataFrame([{"plan": str(c.plan), "recompute": c.plan.recompute,
                          "memory (GB)": round(c.memory_bytes / 1e9, 1), "step (s)": round(c.step_seconds, 2)}
                         for c in candidates])


def zero_tradeoff_figure(params, dps=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), recipe="mixed-adam",
                         accelerator="A100"):
    """Static figure (chart system): model-state memory per GPU under ZeRO stages 0–3 across data-parallel degrees
    (log–log), each line named in the key with its traffic per step (:func:`chipchain.traffic.zero_traffic_factor`),
    for ``recipe``'s bytes per parameter (:data:`chipchain.memory.RECIPES`), against the memory of ``accelerator``
    (default the A100 80 GB), a labelled reference line.

    >>> round(zero_tradeoff_figure(175e9, dps=(1, 1024)).data["lines"]["ZeRO-3 / FSDP"][-1], 2)
    2.73
    """
    capacity = hardware.get(accelerator).require("memory_bytes")
    names = {0: "DP (no ZeRO)", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3 / FSDP"}
    dps = list(dps)
    data = {names[z]: [memory.zero_bytes_per_gpu(params, d, z, recipe) / 1e9 for d in dps] for z in range(4)}
    lines = [{"x": dps, "y": ys, "color": plotting.color(z),
              "label": _("{stage}: traffic {factor}Ψ per step").format(
                  stage=_(names[z]), factor=f"{traffic.zero_traffic_factor(z):g}")}
             for z, ys in enumerate(data.values())]
    points = [{"x": d, "y": y, "color": plotting.color(z)} for z, ys in enumerate(data.values())
              for d, y in zip(dps, ys)]
    cap = capacity / 1e9
    alt = _("Log–log lines of memory per GPU against data-parallel degree from {first} to {last}: {lines}; a dashed "
            "line marks one {accelerator}, {capacity}.").format(
        first=f"{dps[0]:,}", last=f"{dps[-1]:,}", accelerator=accelerator, capacity=fmt_capacity(capacity),
        lines="; ".join(_("{stage} from {first} to {last} GB").format(stage=_(k), first=f"{ys[0]:,.0f}",
                                                                       last=f"{ys[-1]:,.1f}")
                        for k, ys in data.items()))
    html = plotting.svg_chart(lines=lines, points=points, xlog=True, ylog=True,
                              hlines=[{"y": cap, "label": _("one {accelerator} holds {capacity}").format(
                                  accelerator=accelerator, capacity=fmt_capacity(capacity))}],
                              xlabel="data-parallel degree N_d (GPUs)", ylabel="model states per GPU (GB)",
                              alt=alt, height=320)
    text = "; ".join(f"{k}: {ys[0]:,.1f} GB at {dps[0]:,} → {ys[-1]:,.2f} GB at {dps[-1]:,}"
                     for k, ys in data.items()) + f"; one {accelerator} holds {fmt_capacity(capacity)}"
    return Figure(html, text, {"dps": dps, "lines": data, "capacity": cap})


def _plan_view(tp, pp, zero, microbatches, recompute, model="175B", n_gpus=1024, cluster="A100",
               framework="megatron-2022"):
    import pandas as pd

    if n_gpus % (tp * pp):
        raise ValueError(f"tp × pp = {tp * pp} does not divide {n_gpus} GPUs")
    plan = parallel.Plan(tp=tp, pp=pp, dp=n_gpus // (tp * pp), zero=zero, microbatches=microbatches,
                         sequence_parallel=tp > 1, recompute=recompute)
    a = plans.analyze(plan, model, cluster, n_gpus=n_gpus, framework=framework)
    # the ledger's parts in the reader's language here: the chart joins each name to its value ("weights: 5.5 GB")
    segs = [(_(k), v / 1e9) for k, v in a.ledger.components.items() if v > 0]
    alt = _("Memory per GPU for {plan}: {total}; {fit}").format(plan=plan, total=fmt_bytes(a.ledger.total),
                                                                fit=a.fit.message)
    bar = plotting.svg_bars(segs, capacity=a.fit.capacity / 1e9,
                            capacity_label=_("{accelerator} holds").format(accelerator=a.fit.accelerator),
                            unit_format=lambda v: f"{v:,.1f} GB", xlabel="memory per GPU (GB)", alt=alt)
    head = _layout.verdict(_("{plan} ({n} sequences per step): {fit}.").format(
        plan=plan, n=f"{plan.batch:,}", fit=a.fit.message), a.fit.fits)
    cards = _layout.headline([
        ("predicted step", str(fmt_duration(a.step_seconds)),
         _("compute {compute}; MFU {mfu} (chapter 14's model)").format(compute=fmt_duration(a.compute_seconds),
                                                                       mfu=fmt_percent(a.step.mfu))),
        ("pipeline bubble", str(fmt_percent(a.bubble)),
         _("of ideal time; idle share {idle}").format(idle=fmt_percent(a.idle))),
        ("memory per GPU", str(fmt_bytes(a.ledger.total)), _("of {capacity}").format(capacity=fmt_capacity(a.fit.capacity)),
         _layout.GOOD if a.fit.fits else _layout.BAD)])
    traffic = pd.DataFrame([{"kind": c.kind, "link": c.link, "count": c.count, "sent": c.sent_bytes,
                             "time": c.seconds} for c in a.comm])
    table = tables.show(traffic, columns={"kind": "Traffic", "link": "Link", "count": "Ops",
                                          "sent": tables.Col("Sent / GPU", lambda v: str(fmt_bytes(v, 3))),
                                          "time": tables.Col("Time", lambda v: str(fmt_duration(v)))},
                        caption="Traffic per GPU per step").html
    where = "; ".join(_("{dimension} {size}: {scope} ({link})").format(dimension=k.upper(), size=v.size,
                                                                         scope=_(v.scope), link=v.link.name)
                      for k, v in a.placement.items())
    tail = _layout.para(_("Placement: {where}.").format(where=where), small=True)
    warn = "".join(f"<li>{html.escape(w)}</li>" for w in a.warnings)
    return head + cards + bar + table + tail + (f'<ul style="color:{_layout.BAD}">{warn}</ul>' if warn else "")


@widgets.explorer
def plan_explorer():
    """Ch. 4 explorer: GPT-3 175B on 1,024 A100 (8 per node); TP, PP, ZeRO stage, micro-batches and recomputation →
    memory per GPU against 80 GB, traffic per step by link, bubble and warnings (DP = 1024 / (TP × PP))."""
    W = widgets
    controls = [
        W.Slider("tp", "Tensor parallel", [4, 8, 16], value=8),
        W.Slider("pp", "Pipeline parallel", [4, 8, 16, 32], value=16),
        W.Choice("zero", "ZeRO stage", {"0 (none)": 0, "1 (optimizer)": 1, "3 (everything)": 3}, value=1),
        W.Slider("microbatches", "Micro-batches per replica", [16, 64, 192], value=192),
        W.Choice("recompute", "Recomputation", {"selective": "selective", "full": "full"}),
    ]
    return W.explore(_plan_view, controls, title="Cutting GPT-3 175B across 1,024 A100")


def _search_view(model, n_gpus, cluster):
    import pandas as pd

    found = plans.search(model, cluster, n_gpus, top=5, distinct_shapes=True,   # ValueError with the reason
                         framework="megatron-2022")
    df = pd.DataFrame([{"rank": i + 1, "plan": str(c.plan),
                        "recompute": c.plan.recompute + (" + SP" if c.plan.sequence_parallel else ""),
                        "memory": c.memory_bytes, "step": c.step_seconds} for i, c in enumerate(found)])
    best = found[0]
    head = _layout.verdict(_("Fastest plan that fits: {plan} — {step} per step, {memory} per GPU.").format(
        plan=best.plan, step=fmt_duration(best.step_seconds), memory=fmt_bytes(best.memory_bytes, 3)), None)
    return head + tables.show(df, columns={
        "rank": "#", "plan": "Plan", "recompute": "Recomputation",
        "memory": tables.Col("Memory per GPU", lambda v: str(fmt_bytes(v, 3))),
        "step": tables.Col("Step time", lambda v: str(fmt_duration(v)))},
        caption=_("The five fastest plans that fit, {n} sequences per step (Megatron-LM 2022; predicted by chapter "
                  "14's step model)").format(n=f"{found[0].plan.batch:,}")).html


@widgets.explorer
def search_explorer():
    """Ch. 4 explorer: the five fastest plans that fit for a model on a cluster, by :func:`chipchain.plans.search`."""
    W = widgets
    controls = [
        W.Choice("model", "Model", {"13B": "13B", "70B": "70B", "175B": "175B", "530B": "530B"}, value="175B"),
        W.Slider("n_gpus", "GPUs", [64, 256, 1024, 4096], value=1024, fmt=lambda v: f"{v:,}"),
        W.Choice("cluster", "GPU", {"A100 80 GB": "A100", "H100 80 GB": "H100"}),
    ]
    return W.explore(_search_view, controls, title="Searching every plan")


def commbound_table(nodes=("A100", "H100"), tp=8, ep=64):
    """When each cut becomes communication-bound, for each node type in ``nodes``
    (:func:`chipchain.commbound.critical_values`): a DataFrame with one row per cut — the quantity, the link it crosses
    and the critical value on each node (compute-bound above it).

    >>> float(commbound_table().iloc[0, 3])
    12480.0
    """
    import pandas as pd

    ts = [commbound.critical_values(n, tp=tp, ep=ep) for n in nodes]
    rows = [("DP: gradient all-reduce", "tokens per GPU per step", "inter", "dp_tokens"),
            ("FSDP / ZeRO-3: gathers + reduce-scatter", "tokens per GPU per step", "inter", "fsdp_tokens"),
            (_("TP {tp}: two all-reduces per layer").format(tp=tp), "hidden size h", "intra", "tp_hidden"),
            ("PP: one send per micro-batch", "h × layers per stage", "inter", "pp_depth"),
            (_("EP {ep}: dispatch + combine").format(ep=ep), "expert FFN width", "inter", "ep_ffn"),
            ("CP / ring attention (in node)", "tokens per GPU (chunk)", "intra", "cp_chunk_intra"),
            ("CP / ring attention (across nodes)", "tokens per GPU (chunk)", "inter", "cp_chunk_inter")]
    out = []
    for cut, quantity, where, field in rows:
        row = {"cut": cut, "quantity": quantity, "link": " / ".join(getattr(t, where) for t in ts)}
        row.update({t.node: round(getattr(t, field)) * 1.0 for t in ts})
        out.append(row)
    return pd.DataFrame(out)


def schedule_table(pp=16, microbatches=192, virtual_stages=2):
    """Pipeline schedules side by side (:mod:`chipchain.schedules`, F : B : W = 1 : 2 : 1): bubble over the ideal
    time, idle share of the step, and micro-batches' activations in flight on the first stage (GPipe holds all m),
    for every schedule of :data:`chipchain.schedules.SCHEDULES`.

    >>> schedule_table(16, 192)["idle share"].round(4).tolist()
    [0.0725, 0.0725, 0.0376, 0.0254, 0.0, 0.0237]
    """
    import pandas as pd

    return pd.DataFrame([{"schedule": s + (f" (v = {virtual_stages})" if s == "interleaved" else ""),
                          "bubble / ideal": schedules.bubble(s, pp, virtual_stages) / (3.0 * microbatches),
                          "idle share": schedules.idle_share(s, pp, microbatches, virtual_stages),
                          "in flight": microbatches if s == "GPipe"
                          else schedules.inflight_microbatches(s, pp, virtual_stages)}
                         for s in schedules.SCHEDULES])


def batch_floor_table(batch_tokens, n_gpus=(1024, 4096, 16384), seq=2048, node="A100"):
    """The floor on batch per GPU (:func:`chipchain.commbound.batch_floor`) for one global batch over several
    cluster sizes of ``node``: tokens and sequences per GPU under pure data parallelism, the largest DP degree whose
    all-reduce still hides, and the smallest TP × PP that leaves.

    >>> batch_floor_table(2048 * 2048)["min mp"].tolist()
    [4, 16, 64]
    """
    import pandas as pd

    crit = commbound.critical_values(node).dp_tokens
    rows = []
    for n in n_gpus:
        f = commbound.batch_floor(batch_tokens, n, seq, crit)
        rows.append({"n_gpus": n, "tokens per GPU": f.tokens_per_gpu, "sequences per GPU": f.sequences_per_gpu,
                     "max dp": min(f.max_dp_sequences, f.max_dp_overlap), "min mp": f.min_model_parallel})
    return pd.DataFrame(rows)
