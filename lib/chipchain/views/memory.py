"""Views for chapter 6 (memory): the recipe, activation and sizing tables, the stacked ledger bars and the memory
explorer. Every number comes from :mod:`chipchain.memory` (model states, ZeRO, the ledger) and
:mod:`chipchain.activations` (Korthikanti et al. 2022)."""
from __future__ import annotations

from .. import _check, activations, hardware, memory, models, plotting, units, widgets

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
    ``capacity`` (bytes) is drawn as a vertical line. Values are shown in GB. Returns the Axes."""
    ax = plotting.axes(ax)
    labels = list(ledgers)
    comps = list(dict.fromkeys(k for d in ledgers.values() for k in d))
    left = [0.0] * len(labels)
    for i, comp in enumerate(comps):
        vals = [ledgers[l].get(comp, 0.0) / 1e9 for l in labels]
        ax.barh(labels, vals, left=left, color=plotting.color(i), label=comp)
        left = [a + b for a, b in zip(left, vals)]
    for y, total in enumerate(left):
        ax.text(total, y, f" {total:,.0f} GB", va="center", fontsize=9)
    if capacity is not None:
        ax.axvline(_check.positive("capacity", capacity) / 1e9, color="black", linestyle="--", label=capacity_label)
    ax.set_xlabel("memory (GB, decimal)")
    ax.set_xlim(0, max(left + [capacity / 1e9 if capacity else 0]) * 1.18)
    ax.invert_yaxis()
    ax.legend(loc="lower right", fontsize=8)
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
                            capacity_label=fit.accelerator, unit_format=lambda v: f"{v:,.1f} GB", alt=alt)
    verdict = (f'<p style="color:{"#009E73" if fit.fits else "#D55E00"}"><strong>{"Fits" if fit.fits else "OOM"}'
               f'</strong>: {fit.message}.</p>')
    rows = "".join(f"<tr><td>{k}</td><td>{fmt_bytes(v, 3)}</td></tr>" for k, v in segs)
    table = (f'<table class="cc-table"><caption>Per GPU, {dp}-way data parallel, ZeRO-{zero}</caption>{rows}'
             f"<tr><td><strong>total</strong></td><td><strong>{fmt_bytes(L.total, 3)}</strong></td></tr></table>")
    return bar + verdict + table


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
