"""Views for chapter 6 (memory): the recipe, activation and sizing tables, the stacked ledger bars and the memory
explorer. Every number comes from :mod:`chipchain.memory` (model states, ZeRO, the ledger) and
:mod:`chipchain.activations` (Korthikanti et al. 2022)."""
from __future__ import annotations

from .. import _check, activations, hardware, loss_memory, memory, models, plotting, timeline, units, widgets
from . import _layout

__all__ = ["recipe_table", "activation_table", "sizing_table", "plot_ledgers", "memory_explorer"]


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
    (a pandas DataFrame, GB), from :func:`chipchain.activations.activation_bytes_per_layer`.

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
        b = activations.activation_bytes_per_layer(m.seq, microbatch, m.hidden, m.heads, t, sp, rc)
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


def plot_ledgers(ledgers, capacity=None, capacity_label="card", ax=None):
    """Horizontal stacked bars, one per ledger: ``ledgers`` maps a label to {component: bytes}; an optional
    ``capacity`` (bytes) is drawn as a vertical line labelled at its top. Values are shown in GB; each bar carries
    its total at its end and the legend sits below the axes, outside the bars. Returns the Axes."""
    ax = plotting.axes(ax)
    labels = list(ledgers)
    comps = list(dict.fromkeys(k for d in ledgers.values() for k in d))
    left = [0.0] * len(labels)
    for i, comp in enumerate(comps):
        vals = [ledgers[l].get(comp, 0.0) / 1e9 for l in labels]
        ax.barh(labels, vals, left=left, color=plotting.color(i), label=comp, edgecolor="white", linewidth=0.8)
        left = [a + b for a, b in zip(left, vals)]
    for y, total in enumerate(left):
        ax.text(total, y, f" {total:,.0f} GB", va="center", fontsize=10)
    top = max(left + [capacity / 1e9 if capacity else 0])
    if capacity is not None:
        cap = _check.positive("capacity", capacity) / 1e9
        ax.axvline(cap, color="black", linestyle="--", lw=1.5)
        ax.text(cap, -0.5, f"{capacity_label} ", ha="right", va="bottom", fontsize=9)
    ax.set_xlabel("memory (GB, decimal)")
    ax.set_xlim(0, top * 1.18)
    ax.set_ylim(len(labels) - 0.5, -0.5 - 0.25)
    ax.grid(axis="y", visible=False)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=min(3, len(comps)), fontsize=9,
              handlelength=1.2, columnspacing=1.2)
    return ax


# --- explorable ------------------------------------------------------------------------------------------------

def _memory_view(model, shape, recipe, recompute, zero, accelerator, dp=8) -> str:
    fmt_bytes = units.fmt_bytes
    b, s = shape
    m = models.get(model)
    L = memory.ledger(m, recipe, microbatch=b, seq=s, dp=dp, zero=zero, recompute=recompute)
    fit = L.fits(accelerator)
    segs = [(k, v) for k, v in L.components.items() if v > 0]
    alt = (f"Memory per GPU for {m.name}: {fmt_bytes(L.total)} against {units.fmt_capacity(fit.capacity)} "
           f"on {fit.accelerator}; {fit.message}")
    bar = plotting.svg_bars([(k, v / 1e9) for k, v in segs], capacity=fit.capacity / 1e9,
                            capacity_label=f"{fit.accelerator} holds", unit_format=lambda v: f"{v:,.1f} GB",
                            xlabel="memory per GPU (GB)", alt=alt)
    head = _layout.verdict(f"{fmt_bytes(L.total, 3)} per GPU ({dp}-way data parallel, ZeRO-{zero}) against "
                           f"{units.fmt_capacity(fit.capacity)}: {fit.message}.", fit.fits,
                           "Fits." if fit.fits else "Out of memory.")
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
        W.Choice("accelerator", "Card", {"RTX 4090 (24 GiB)": "RTX-4090", "A100/H100 (80 GiB)": "H100-SXM"},
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


def plot_memory_timeline(step, capacity=None, capacity_label="card", ax=None):
    """One training step's memory (:func:`chipchain.timeline.step_timeline`) as stacked areas over its events, with
    the phases shaded, the peak marked and the card's ``capacity`` (bytes) as a line. Returns the Axes."""
    ax = plotting.axes(ax)
    x = list(range(len(step.labels)))
    ys = [[v / 1e9 for v in step.bytes[c]] for c in timeline.COMPONENTS]
    ax.stackplot(x, *ys, labels=timeline.COMPONENTS, colors=[plotting.color(i) for i in range(len(ys))], alpha=0.85,
                 step="post")
    start_bwd = step.phases.index("backward")
    start_opt = step.phases.index("optimizer")
    for lo, hi, name in ((0, start_bwd, "forward"), (start_bwd, start_opt, "backward"),
                         (start_opt, len(x) - 1, "optimizer")):
        last = name == "optimizer"
        ax.text(hi - 0.5 if last else (lo + hi) / 2, 0.02, name, transform=ax.get_xaxis_transform(),
                ha="right" if last else "center", fontsize=10)
        ax.axvline(lo, color="0.6", lw=0.8)
    i, peak = step.peak_index, step.peak / 1e9
    ax.annotate(f"peak {peak:,.1f} GB: {step.peak_label}", (i, peak), xytext=(1, peak * 1.3),
                fontsize=10, arrowprops={"arrowstyle": "->", "color": "0.2"})
    if capacity is not None:
        ax.axhline(capacity / 1e9, color="black", ls="--", lw=1)
        ax.text(len(x) - 1.5, capacity / 1e9 * 1.02, f"{capacity_label}: {capacity / 1e9:,.1f} GB", fontsize=10,
                ha="right")
    ax.set_xlim(0, len(x) - 1)
    ax.set_ylim(0, max(peak * 1.3, (capacity or 0) / 1e9) * 1.15)
    ax.set_xticks([])
    ax.set_xlabel(f"events of one training step of {step.model}, in order")
    ax.set_ylabel("memory per GPU (GB)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=10, frameon=False)
    return ax
