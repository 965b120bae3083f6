"""DeepSeek-V3: the accounting of one training run, and the engineering that made the same cards go further.

Everything the DeepSeek-V3 technical report (DeepSeek-AI 2024) publishes about its training budget is kept here as
data with its source — :data:`V3` — and the book's arithmetic on it is a set of small functions:

* the GPU-hour ledger (2,664 K + 119 K + 5 K = 2,788 K H800 GPU-hours; $5.576 M at $2 per GPU-hour; Table 1);
* the implied model FLOPs utilisation from C = 6·N·D with the 37 B *activated* parameters, against the H800's
  BF16 and FP8 dense peaks from :mod:`chipchain.hardware` (the report does not state an MFU: this is the book's
  estimate);
* the pipeline bubbles of 1F1B, ZB1P and DualPipe (the report's Table 2) and, on top of them, the book's own model
  of what exposed communication does to a pipeline (labelled as such);
* FP8 training's effect on model-state memory and on step time (an Amdahl model, labelled as such);
* MLA's KV-cache compression (DeepSeek-V2 report, Sec. 2.1; V3's hyper-parameters, Sec. 4.2).

>>> round(gpu_hours_total() / 1e6, 3)
2.788
>>> round(implied_mfu(V3.active_params, V3.tokens, V3.gpu_hours["pre-training"], "H800", "bf16"), 3)
0.346
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import _check, compute, widgets
from .units import DAY, HOUR

__all__ = [
    "Run", "V3", "V3_ARCH", "SCHEDULES", "gpu_hours_total", "cost_breakdown", "days_per_trillion_tokens",
    "implied_mfu", "achieved_flops_per_gpu", "job_on", "pipeline_bubble", "schedule_memory",
    "pipeline_efficiency", "fp8_speedup", "state_bytes_per_param", "STATE_RECIPES", "RECIPE_SOURCES",
    "kv_elements_per_token_mha", "kv_elements_per_token_mla", "moe_flops_saving", "accounting_table",
    "bubble_table", "plot_pipeline_efficiency", "bubble_explorer", "same_cards_explorer",
]


@dataclass(frozen=True)
class Run:
    """A training run as its report states it. Counts are counts, hours are GPU-hours, money is US dollars."""

    name: str
    accelerator: str
    n_gpus: int
    gpu_hours: dict                 #: stage -> GPU-hours
    price_per_gpu_hour: float       #: the report's assumed rental price, $ per GPU-hour
    total_params: float
    active_params: float            #: parameters activated per token (MoE)
    tokens: float                   #: pre-training tokens
    gpu_hours_per_trillion_tokens: float
    plan: dict                      #: parallelism as reported
    excludes: tuple                 #: what the reported cost does not cover
    source: str
    checked: str = "V"


#: DeepSeek-V3 as its technical report states it (DeepSeek-AI 2024: abstract, Sec. 1 and Table 1 for the budget;
#: Sec. 3.1 for the cluster; Sec. 3.2 for the plan). Checked level V (read in the report; see facts.md).
V3 = Run(
    name="DeepSeek-V3",
    accelerator="H800",
    n_gpus=2048,
    gpu_hours={"pre-training": 2664e3, "context extension": 119e3, "post-training": 5e3},
    price_per_gpu_hour=2.0,
    total_params=671e9,
    active_params=37e9,
    tokens=14.8e12,
    gpu_hours_per_trillion_tokens=180e3,
    plan={"pipeline (PP)": 16, "expert (EP)": 64, "data parallel": "ZeRO-1", "tensor (TP)": 1},
    excludes=("prior research and ablation experiments on architectures, algorithms and data",
              "failed and exploratory runs", "data acquisition and preparation", "staff",
              "buying, building and running the cluster itself (capital, power, facility)"),
    source="DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Table 1 and Sec. 1, 3.1, 3.2",
)

#: DeepSeek-V3's architecture figures used here (DeepSeek-AI 2024, Sec. 4.2 "hyper-parameters"; the report's
#: Sec. 3.2.2 gives the 20 of 132 SMs reserved for communication, and NVLink 160 GB/s vs IB 50 GB/s per GPU as the
#: report quotes them; facts.md reads both as one-direction figures).
V3_ARCH = {
    "layers": 61, "hidden": 7168, "heads": 128, "head_dim": 128, "kv_rank": 512, "rope_dim": 64,
    "routed_experts": 256, "active_experts": 8, "shared_experts": 1, "max_nodes_per_token": 4,
    "comm_sms": 20, "sms": 132, "nvlink": 160e9, "ib_per_gpu": 50e9,
}


def _run(run) -> Run:
    if not isinstance(run, Run):
        raise ValueError(f"run must be a deepseek.Run, got {run!r}")
    return run


def gpu_hours_total(run: Run = V3) -> float:
    """GPU-hours of all stages: H = Σ_stage H_stage.

    DeepSeek-V3: 2,664 K pre-training + 119 K context extension + 5 K post-training (Table 1):

    >>> gpu_hours_total()
    2788000.0
    """
    return float(sum(_check.nonnegative(f"gpu_hours[{k!r}]", v) for k, v in _run(run).gpu_hours.items()))


def cost_breakdown(run: Run = V3, price_per_gpu_hour=None) -> dict:
    """Dollars per stage and in total: $ = H × price (``compute.cost``); price in $ per GPU-hour.

    DeepSeek-V3 at the report's $2 per H800 GPU-hour (Table 1): $5.328 M + $0.238 M + $0.01 M = $5.576 M.

    >>> {k: round(v / 1e6, 3) for k, v in cost_breakdown().items()}
    {'pre-training': 5.328, 'context extension': 0.238, 'post-training': 0.01, 'total': 5.576}
    """
    r = _run(run)
    price = r.price_per_gpu_hour if price_per_gpu_hour is None else price_per_gpu_hour
    out = {k: compute.cost(h, price) for k, h in r.gpu_hours.items()}
    out["total"] = compute.cost(gpu_hours_total(r), price)
    return out


def days_per_trillion_tokens(gpu_hours_per_trillion, n_gpus) -> float:
    """Wall-clock days to train on 10¹² tokens: T = H_per_T / n / 24.

    ``gpu_hours_per_trillion`` GPU-hours per 10¹² tokens; ``n_gpus`` count; result in days. DeepSeek-V3: 180 K
    GPU-hours per trillion tokens on 2,048 H800 is "3.7 days" (Sec. 1):

    >>> round(days_per_trillion_tokens(180e3, 2048), 2)
    3.66
    """
    h = _check.positive("gpu_hours_per_trillion", gpu_hours_per_trillion)
    return h * HOUR / _check.integer("n_gpus", n_gpus) / DAY


def achieved_flops_per_gpu(active_params, tokens, gpu_hours) -> float:
    """Model FLOP/s achieved per GPU: X = 6·N·D / (H · 3600).

    ``active_params`` N (count, the activated parameters for an MoE), ``tokens`` D (count), ``gpu_hours`` H;
    result in FLOP/s. 6ND ignores attention's sequence-length term and V3's multi-token-prediction module, so it
    undercounts the work slightly (the report does not publish its own FLOP count).

    >>> round(achieved_flops_per_gpu(37e9, 14.8e12, 2664e3) / 1e12, 1)
    342.6
    """
    c = compute.training_flops(active_params, tokens)
    return c / (_check.positive("gpu_hours", gpu_hours) * HOUR)


def implied_mfu(active_params, tokens, gpu_hours, accelerator="H800", dtype="bf16") -> float:
    """The book's estimate of MFU: 6·N·D / (H · 3600 · peak), peak = dense ``dtype`` peak of ``accelerator``.

    The choice of peak is the whole answer: against the H800's BF16 dense peak (989.4 TFLOP/s, the catalog's
    estimate for the H800) V3's pre-training ran at about 35 %; against its FP8 dense peak (1,979) at about 17 %.
    The report states no MFU; these are the book's numbers.

    >>> round(implied_mfu(37e9, 14.8e12, 2664e3, "H800", "fp8"), 3)
    0.173
    """
    from . import hardware

    peak = hardware.get(accelerator).peak_flops(dtype)
    return compute.mfu(achieved_flops_per_gpu(active_params, tokens, gpu_hours), peak)


def job_on(accelerator, achieved_flops_per_gpu_, n_gpus, price_per_gpu_hour, active_params=V3.active_params,
           tokens=V3.tokens) -> dict:
    """The same job (C = 6·N·D) on other cards at a given achieved FLOP/s per GPU.

    H = C / X / 3600 GPU-hours; days = H / n / 24; dollars = H × price; ``mfu`` = X / dense BF16 peak.
    ``achieved_flops_per_gpu_`` in FLOP/s, ``price_per_gpu_hour`` in $ per GPU-hour.

    V3's pre-training on 2,048 H100 at Llama 3 405B's 400 TFLOP/s per GPU (Dubey et al. 2024, Table 4, 16,384
    GPUs; 40 % of 989.4):

    >>> j = job_on("H100", 400e12, 2048, 2.0)
    >>> round(j["gpu_hours"] / 1e6, 2), round(j["days"], 1), round(j["mfu"], 3)
    (2.28, 46.4, 0.404)
    """
    from . import hardware

    acc = hardware.get(accelerator)
    x = _check.positive("achieved_flops_per_gpu", achieved_flops_per_gpu_)
    n = _check.integer("n_gpus", n_gpus)
    c = compute.training_flops(active_params, tokens)
    hours = c / x / HOUR
    return {"accelerator": acc.name, "flops": c, "gpu_hours": hours, "days": hours * HOUR / n / DAY,
            "dollars": compute.cost(hours, price_per_gpu_hour), "mfu": compute.mfu(x, acc.peak_flops("bf16"))}


def moe_flops_saving(total_params=V3.total_params, active_params=V3.active_params) -> float:
    """How much less compute an MoE needs than a dense model of the same total size: N_total / N_active.

    DeepSeek-V3: 671 B total, 37 B activated per token → about 18× fewer FLOPs per token than a dense 671 B model.

    >>> round(moe_flops_saving(), 1)
    18.1
    """
    t = _check.positive("total_params", total_params)
    a = _check.positive("active_params", active_params)
    if a > t:
        raise ValueError(f"active_params ({a:g}) cannot exceed total_params ({t:g})")
    return t / a


# --- pipeline bubbles (DeepSeek-V3 report, Table 2) -------------------------------------------------------------

#: schedules of the report's Table 2, with their parameter and activation memory per device
SCHEDULES = {
    "1F1B": {"params": 1, "activations": "PP", "source": "Narayanan et al. 2021 (PipeDream-Flush / 1F1B)"},
    "ZB1P": {"params": 1, "activations": "PP", "source": "Qi et al. 2024 (Zero Bubble, 1F1B-based ZB-H1)"},
    "DualPipe": {"params": 2, "activations": "PP+1", "source": "DeepSeek-AI 2024, Sec. 3.2.1"},
}


def _schedule(schedule) -> str:
    return _check.choice("schedule", schedule, SCHEDULES)


def pipeline_bubble(schedule, pp, f=1.0, b=2.0, w=1.0, fb=None) -> float:
    """Pipeline bubble of one iteration, in the units of the chunk times (DeepSeek-V3 report, Table 2):

    * 1F1B:      (PP − 1)(F + B)
    * ZB1P:      (PP − 1)(F + B − 2W)
    * DualPipe:  (PP/2 − 1)(F&B + B − 3W)

    F = time of a forward chunk, B = time of a full backward chunk (input and weight gradients), W = time of its
    "backward for weights" part (so W ≤ B), F&B = time of a forward and a backward chunk run overlapped (default
    F + B: overlap hides communication, not compute). The bubble does not depend on the number of micro-batches.
    DualPipe needs an even PP. With the usual F : B : W = 1 : 2 : 1 and PP = 16:

    >>> [pipeline_bubble(s, 16) for s in ("1F1B", "ZB1P", "DualPipe")]
    [45.0, 15.0, 14.0]
    """
    s = _schedule(schedule)
    p = _check.integer("pp", pp, minimum=2)
    f = _check.positive("f", f)
    b = _check.positive("b", b)
    w = _check.nonnegative("w", w)
    if w > b:
        raise ValueError(f"w ({w:g}) is part of the backward chunk and cannot exceed b ({b:g})")
    if s == "1F1B":
        return (p - 1) * (f + b)
    if s == "ZB1P":
        return (p - 1) * (f + b - 2 * w)
    if p % 2:
        raise ValueError(f"pp must be even for DualPipe (it pairs stage i with stage PP−1−i), got {pp!r}")
    fb = f + b if fb is None else _check.positive("fb", fb)
    return (p // 2 - 1) * (fb + b - 3 * w)


def schedule_memory(schedule, pp) -> dict:
    """Per-device memory of a schedule (DeepSeek-V3 report, Table 2): parameter copies (1× or 2×) and the number of
    micro-batches' activations held at the peak (PP or PP + 1).

    >>> schedule_memory("DualPipe", 16)
    {'param_copies': 2, 'activation_microbatches': 17}
    """
    s = _schedule(schedule)
    p = _check.integer("pp", pp, minimum=2)
    return {"param_copies": SCHEDULES[s]["params"], "activation_microbatches": p + (1 if s == "DualPipe" else 0)}


def pipeline_efficiency(schedule, pp, microbatches, f=1.0, b=2.0, w=1.0, comm=0.0) -> float:
    """Fraction of an iteration a device spends on useful compute — the book's model built on Table 2.

    E = m·(F + B) / (m·(F + B)·(1 + c_exposed) + bubble). ``comm`` is the time of the all-to-all and pipeline
    communication a chunk needs, as a fraction of its compute (the V3 report puts cross-node expert parallelism near
    1 : 1, Sec. 3.2.1). 1F1B and ZB1P run communication in the open, so every chunk time is stretched by (1 + comm)
    (c_exposed = comm, bubble on stretched chunks); DualPipe overlaps a forward chunk of one micro-batch with a
    backward chunk of another and hides communication under compute (c_exposed = 0, bubble on bare chunks) as long
    as comm ≤ 1. Needs m ≥ PP (the pipeline must fill); DualPipe needs an even m (two directions).
    This model is the book's, not the report's: it ignores memory limits and imbalance between stages.

    >>> round(pipeline_efficiency("1F1B", 16, 64), 3), round(pipeline_efficiency("DualPipe", 16, 64, comm=1.0), 3)
    (0.81, 0.932)
    """
    s = _schedule(schedule)
    p = _check.integer("pp", pp, minimum=2)
    m = _check.integer("microbatches", microbatches)
    c = _check.nonnegative("comm", comm)
    if m < p:
        raise ValueError(f"microbatches ({m}) must be at least pp ({p}) for the pipeline to fill")
    if s == "DualPipe":
        if m % 2:
            raise ValueError(f"microbatches must be even for DualPipe (half go each way), got {m}")
        if c > 1:
            raise ValueError(f"comm ({c:g}) above 1 cannot be hidden under compute; "
                             "DualPipe's overlap needs comm ≤ 1")
        useful = m * (f + b)
        return useful / (useful + pipeline_bubble(s, p, f, b, w))
    k = 1 + c
    useful = m * (f + b)
    return useful / (useful * k + pipeline_bubble(s, p, f * k, b * k, w * k))


# --- FP8 -----------------------------------------------------------------------------------------------------------

#: bytes per parameter of the model states (weights, gradients, optimizer) under two recipes
STATE_RECIPES = {
    "bf16-mixed": {"bf16 weights": 2, "bf16 gradients": 2, "fp32 master weights": 4, "fp32 Adam m": 4,
                   "fp32 Adam v": 4},
    "deepseek-v3-fp8": {"fp32 master weights": 4, "fp32 gradients": 4, "bf16 AdamW m": 2, "bf16 AdamW v": 2},
}
RECIPE_SOURCES = {
    "bf16-mixed": "Rajbhandari et al. 2020, Sec. 3.1 (2 + 2 + 12 bytes per parameter)",
    "deepseek-v3-fp8": "DeepSeek-AI 2024, Sec. 3.3.1 and 3.3.3: master weights and gradients kept in FP32, "
                       "AdamW moments in BF16; FP8 copies of weights for the GEMMs are transient and not counted",
}


def state_bytes_per_param(recipe="bf16-mixed") -> float:
    """Bytes of model state per parameter: Σ of the recipe's components (see :data:`STATE_RECIPES`).

    >>> state_bytes_per_param("bf16-mixed"), state_bytes_per_param("deepseek-v3-fp8")
    (16.0, 12.0)
    """
    r = _check.choice("recipe", recipe, STATE_RECIPES)
    return float(sum(STATE_RECIPES[r].values()))


def fp8_speedup(gemm_fraction, gain=2.0) -> float:
    """Step-time speed-up from running the GEMMs in FP8 (Amdahl's law; the book's model):

    S = 1 / ((1 − g) + g / k), with g = the fraction of BF16 step time spent in FP8-eligible GEMMs and k = the FP8
    to BF16 peak ratio (2 on Hopper: 1,979 vs 989.4 TFLOP/s dense). Attention, normalisation, the embedding, the
    output head, the MoE gate and communication stay outside g in V3's recipe (Sec. 3.3.1).

    >>> round(fp8_speedup(0.6), 3), fp8_speedup(1.0)
    (1.429, 2.0)
    """
    g = _check.fraction("gemm_fraction", gemm_fraction, allow_zero=True)
    k = _check.positive("gain", gain)
    if k < 1:
        raise ValueError(f"gain must be at least 1 (a speed-up), got {gain!r}")
    return 1.0 / ((1 - g) + g / k)


# --- MLA ---------------------------------------------------------------------------------------------------------

def kv_elements_per_token_mha(layers, heads, head_dim) -> int:
    """KV-cache elements per token with standard multi-head attention: 2 · n_h · d_h · l (keys and values);
    :func:`chipchain.inference.kv_bytes_per_token` at one byte per element.

    DeepSeek-V3's shape with plain MHA (61 layers, 128 heads of 128): 1,998,848 elements, about 4.0 MB at BF16.

    >>> kv_elements_per_token_mha(61, 128, 128)
    1998848
    """
    from .inference import kv_bytes_per_token

    return int(kv_bytes_per_token(layers, _check.integer("heads", heads), head_dim, bytes_per_element=1))


def kv_elements_per_token_mla(layers, kv_rank, rope_dim) -> int:
    """KV-cache elements per token with multi-head latent attention: (d_c + d_h^R) · l (DeepSeek-V2 report, Sec.
    2.1.4 and Table 1): one compressed latent of width d_c plus one shared RoPE key of width d_h^R per layer.

    DeepSeek-V3 (d_c = 512, d_h^R = 64, 61 layers): 35,136 elements, 57× fewer than MHA of the same shape.

    >>> kv_elements_per_token_mla(61, 512, 64)
    35136
    >>> round(kv_elements_per_token_mha(61, 128, 128) / kv_elements_per_token_mla(61, 512, 64), 1)
    56.9
    """
    from .inference import kv_bytes_per_token

    latent = _check.integer("kv_rank", kv_rank) + _check.integer("rope_dim", rope_dim)
    return int(kv_bytes_per_token(layers, latent_dim=latent, bytes_per_element=1))


# --- tables for the chapter ------------------------------------------------------------------------------------------

def accounting_table(run: Run = V3):
    """The run's GPU-hour and dollar ledger as a pandas DataFrame (stages and total)."""
    import pandas as pd

    r = _run(run)
    dollars = cost_breakdown(r)
    rows = [{"stage": k, "GPU-hours (K)": h / 1e3, "cost ($ M)": dollars[k] / 1e6} for k, h in r.gpu_hours.items()]
    rows.append({"stage": "total", "GPU-hours (K)": gpu_hours_total(r) / 1e3, "cost ($ M)": dollars["total"] / 1e6})
    return pd.DataFrame(rows).set_index("stage")


def bubble_table(pp=16, f=1.0, b=2.0, w=1.0):
    """Table 2 of the V3 report evaluated at ``pp`` and chunk times F, B, W, as a pandas DataFrame."""
    import pandas as pd

    rows = []
    for s in SCHEDULES:
        mem = schedule_memory(s, pp)
        rows.append({"schedule": s, "bubble (units of F)": pipeline_bubble(s, pp, f, b, w) / f,
                     "parameter copies": mem["param_copies"], "activations held (micro-batches)":
                     mem["activation_microbatches"]})
    return pd.DataFrame(rows).set_index("schedule")


def plot_pipeline_efficiency(pp=16, comm=0.5, microbatches=(16, 24, 32, 48, 64, 96, 128, 192, 256), ax=None):
    """Static figure: useful-compute fraction of 1F1B, ZB1P and DualPipe against micro-batches per iteration
    (:func:`pipeline_efficiency`, F : B : W = 1 : 2 : 1). Returns the Axes."""
    from . import plotting

    ax = plotting.axes(ax)
    p = _check.integer("pp", pp, minimum=2)
    for i, s in enumerate(SCHEDULES):
        ms = [m for m in microbatches if m >= p and m % 2 == 0]
        ax.plot(ms, [100 * pipeline_efficiency(s, p, m, comm=comm) for m in ms], marker="o", ms=3,
                color=plotting.color(i), ls="--" if s == "ZB1P" else "-", label=s)
    ax.set_xscale("log", base=2)
    ticks = [m for m in (16, 32, 64, 128, 256, 512) if min(microbatches) <= m <= max(microbatches)]
    ax.set_xticks(ticks, [str(m) for m in ticks])
    ax.set_ylim(0, 100)
    ax.set_xlabel("micro-batches per iteration")
    ax.set_ylabel("useful compute (%)")
    ax.set_title(f"PP = {p}, communication = {comm:g} × compute")
    ax.legend(loc="lower right")
    return ax


# --- explorables -----------------------------------------------------------------------------------------------

@widgets.explorer
def bubble_explorer():
    """Pipeline efficiency of 1F1B, ZB1P and DualPipe against the number of micro-batches, for a pipeline depth,
    a communication-to-compute ratio and a split of the backward pass (the book's model on Table 2)."""
    from . import plotting

    ms = [16, 24, 32, 48, 64, 96, 128, 192, 256]

    m_ref = 32

    def render(pp, comm, w):
        lines, rows = [], []
        for i, s in enumerate(SCHEDULES):
            xs, ys = [], []
            for m in ms:
                if m < pp:
                    continue
                xs.append(m)
                ys.append(pipeline_efficiency(s, pp, m, 1.0, 2.0, w, comm) * 100)
            lines.append({"x": xs, "y": ys, "label": s, "color": plotting.color(i), "dash": s == "ZB1P"})
            e = pipeline_efficiency(s, pp, m_ref, 1.0, 2.0, w, comm)
            rows.append(f"<tr><td>{s}</td><td>{pipeline_bubble(s, pp, 1.0, 2.0, w):g}</td>"
                        f"<td>{e * 100:.1f} %</td></tr>")
        chart = plotting.svg_chart(
            lines=lines, xlog=True, ylim=(0, 100), xlabel="micro-batches per iteration",
            ylabel="useful compute (%)", title=f"PP = {pp}, communication = {comm:g} × compute, W = {w:g} F",
            alt=f"Pipeline efficiency against micro-batches for 1F1B, ZB1P and DualPipe at PP {pp}; "
                f"communication {comm:g} of compute")
        head = (f"<table class='cc-table'><tr><th>schedule</th><th>bubble (F units, Table 2)</th>"
                f"<th>useful at {m_ref} micro-batches</th></tr>")
        return chart + head + "".join(rows) + "</table>"

    return widgets.explore(render, [
        widgets.Slider("pp", "pipeline stages PP", [4, 8, 16, 32], value=16),
        widgets.Slider("comm", "communication / compute", [0.0, 0.25, 0.5, 1.0], value=0.5),
        widgets.Slider("w", "W (weight-gradient part of B = 2F)", [0.5, 1.0, 1.5], value=1.0),
    ], title="Pipeline bubbles: 1F1B vs ZB1P vs DualPipe")


@widgets.explorer
def same_cards_explorer():
    """Same cards × different engineering = different effective compute: V3's pre-training job (6 · 37 B · 14.8 T)
    on H800s at a chosen MFU, price and cluster size, in days and dollars, next to what V3 reported."""
    from . import hardware, units

    c = compute.training_flops(V3.active_params, V3.tokens)
    reported_hours = V3.gpu_hours["pre-training"]

    def render(mfu, basis, price, n_gpus):
        peak = hardware.get(V3.accelerator).peak_flops(basis)
        x = mfu * peak
        hours = c / x / HOUR
        days = hours * HOUR / n_gpus / DAY
        eff = n_gpus * x
        rep_days = reported_hours * HOUR / n_gpus / DAY
        bar_max = max(hours, reported_hours)
        bars = "".join(
            f"<div style='margin:.2em 0'><span style='display:inline-block;width:11em'>{label}</span>"
            f"<span style='display:inline-block;background:{col};height:.9em;width:{28 * v / bar_max:.1f}em'>"
            f"</span> {units.fmt_number(v / 1e6, 3)} M GPU-hours</div>"
            for label, v, col in (("this setting", hours, "#0072B2"), ("V3 reported", reported_hours, "#D55E00")))
        return (f"<p>Effective compute: <b>{units.fmt_rate(eff)}</b> "
                f"({n_gpus:,} × {units.fmt_rate(peak)} {basis.upper()} dense × {mfu:.0%} MFU).</p>"
                f"{bars}<table class='cc-table'><tr><th></th><th>this setting</th><th>V3 reported</th></tr>"
                f"<tr><td>days on {n_gpus:,} GPUs</td><td>{days:.1f}</td><td>{rep_days:.1f}</td></tr>"
                f"<tr><td>cost at ${price:g}/GPU-hour</td><td>{units.fmt_dollars(hours * price)}</td>"
                f"<td>{units.fmt_dollars(reported_hours * price)}</td></tr></table>")

    return widgets.explore(render, [
        widgets.Slider("mfu", "MFU", [0.15, 0.2, 0.25, 0.3, 0.35, 0.4], value=0.35, fmt=lambda v: f"{v:.0%}"),
        widgets.Choice("basis", "MFU measured against", {"BF16 peak": "bf16", "FP8 peak": "fp8"}, value="bf16"),
        widgets.Slider("price", "$ per GPU-hour", [1.0, 2.0, 3.0, 4.0], value=2.0, fmt=lambda v: f"${v:g}"),
        widgets.Slider("n_gpus", "GPUs", [1024, 2048, 4096], value=2048),
    ], title="Same cards × different engineering = different effective compute (V3 pre-training job on H800)")
