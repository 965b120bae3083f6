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

from .. import hardware, memory, parallel, plans, plotting, widgets
from ..units import fmt_bytes, fmt_duration, fmt_percent

__all__ = ["communication_table", "bubble_table", "search_table", "plot_zero_tradeoff", "plan_explorer",
           "search_explorer"]


def communication_table(plan, model, cluster="A100", **kwargs):
    """:func:`chipchain.parallel.communication` as a pandas DataFrame (one row per kind: when, link, operations,
    message and total bytes in MB/GB, seconds)."""
    import pandas as pd

    rows = parallel.communication(plan, model, cluster, **kwargs)
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


def plot_zero_tradeoff(params, dps=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), k=12, accelerator="A100",
                       ax=None):
    """Model-state memory per GPU under ZeRO stages 0–3 across data-parallel degrees (log–log), each line
    labelled with its traffic per step (:func:`chipchain.parallel.zero_traffic_factor`), against the memory of
    ``accelerator`` (default the A100 80 GB). Returns the Axes."""
    ax = plotting.axes(ax)
    capacity = hardware.get(accelerator).require("memory_bytes")
    names = {0: "DP (no ZeRO)", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3 / FSDP"}
    for s in range(4):
        ys = [memory.zero_bytes_per_gpu(params, d, s, k) / 1e9 for d in dps]
        ax.loglog(dps, ys, marker="o", ms=3, color=plotting.color(s),
                  label=f"{names[s]}: traffic {parallel.zero_traffic_factor(s):g}Ψ per step")
    ax.axhline(capacity / 1e9, color="black", linestyle="--", lw=1)
    ax.text(dps[0], capacity / 1e9 * 1.15, f"{capacity / 1e9:g} GB card", fontsize=8)
    ax.set_xlabel("data-parallel degree $N_d$")
    ax.set_ylabel("model states per GPU (GB)")
    ax.legend(fontsize=8, loc="lower left")
    return ax


def _plan_view(tp, pp, zero, microbatches, recompute, model="175B", n_gpus=1024, cluster="A100"):
    if n_gpus % (tp * pp):
        raise ValueError(f"tp × pp = {tp * pp} does not divide {n_gpus} GPUs")
    plan = parallel.Plan(tp=tp, pp=pp, dp=n_gpus // (tp * pp), zero=zero, microbatches=microbatches,
                         sequence_parallel=tp > 1, recompute=recompute)
    a = parallel.analyze(plan, model, cluster, n_gpus=n_gpus)
    segs = [(k, v / 1e9) for k, v in a.ledger.components.items() if v > 0]
    alt = f"Memory per GPU for {plan}: {fmt_bytes(a.ledger.total)}; {a.fit.message}"
    bar = plotting.svg_bars(segs, capacity=a.fit.capacity / 1e9, capacity_label=a.fit.accelerator,
                            unit_format=lambda v: f"{v:,.1f} GB", alt=alt)
    head = (f"<p><strong>{html.escape(str(plan))}</strong> ({plan.batch:,} sequences per step). "
            f'<span style="color:{"#009E73" if a.fit.fits else "#D55E00"}">{a.fit.message}</span>.</p>')
    rows = "".join(f"<tr><td>{c.kind}</td><td>{c.link}</td><td>{c.count:,}</td><td>{fmt_bytes(c.sent_bytes, 3)}"
                   f"</td><td>{fmt_duration(c.seconds)}</td></tr>" for c in a.comm)
    table = ('<table class="cc-table"><caption>Traffic per GPU per step</caption><tr><th>kind</th><th>link</th>'
             f"<th>operations</th><th>bytes sent</th><th>time</th></tr>{rows}</table>")
    where = ", ".join(f"{k.upper()} {v.size}: {v.scope}" for k, v in a.placement.items())
    tail = (f"<p>Placement: {where}. Bubble {fmt_percent(a.bubble)} of ideal time (idle share "
            f"{fmt_percent(a.idle)}). Estimated step {fmt_duration(a.step_seconds)} (compute "
            f"{fmt_duration(a.compute_seconds)} at 50 % MFU).</p>")
    warn = "".join(f"<li>{html.escape(w)}</li>" for w in a.warnings)
    return head + bar + table + tail + (f"<ul>{warn}</ul>" if warn else "")


@widgets.explorer
def plan_explorer():
    """Ch. 4 explorer: GPT-3 175B on 1,024 A100 (8 per node); TP, PP, ZeRO stage, micro-batches and recomputation →
    memory per GPU against 80 GB, traffic per step by link, bubble and warnings (DP = 1024 / (TP × PP))."""
    W = widgets
    controls = [
        W.Slider("tp", "Tensor parallel", [4, 8, 16], value=8),
        W.Slider("pp", "Pipeline parallel", [4, 8, 16, 32], value=16),
        W.Choice("zero", "ZeRO stage", {"0 (none)": 0, "1 (optimizer)": 1, "3 (everything)": 3}, value=1),
        W.Slider("microbatches", "Micro-batches per replica", [16, 128], value=128),
        W.Choice("recompute", "Recomputation", {"selective": "selective", "full": "full"}),
    ]
    return W.explore(_plan_view, controls, title="Cutting GPT-3 175B across 1,024 A100")


def _search_view(model, n_gpus, cluster):
    found = plans.search(model, cluster, n_gpus, top=5, distinct_shapes=True)   # ValueError with the reason
    rows = "".join(f"<tr><td>{i + 1}</td><td>{html.escape(str(c.plan))}</td><td>{c.plan.recompute}"
                   f"{' + SP' if c.plan.sequence_parallel else ''}</td><td>{fmt_bytes(c.memory_bytes, 3)}</td>"
                   f"<td>{fmt_duration(c.step_seconds)}</td></tr>" for i, c in enumerate(found))
    return ('<table class="cc-table"><caption>Fastest plans that fit, 1,536 sequences per step, 50 % MFU '
            '(estimates)</caption><tr><th>#</th><th>plan</th><th>recompute</th><th>memory per GPU</th>'
            f"<th>step time</th></tr>{rows}</table>")


@widgets.explorer
def search_explorer():
    """Ch. 4 explorer: the five fastest plans that fit for a model on a cluster, by :func:`chipchain.plans.search`."""
    W = widgets
    controls = [
        W.Choice("model", "Model", {"13B": "13B", "70B": "70B", "175B": "175B", "530B": "530B"}, value="175B"),
        W.Slider("n_gpus", "GPUs", [64, 256, 1024, 4096], value=1024),
        W.Choice("cluster", "GPU", {"A100 80 GB": "A100", "H100 80 GB": "H100"}),
    ]
    return W.explore(_search_view, controls, title="Searching every plan")
