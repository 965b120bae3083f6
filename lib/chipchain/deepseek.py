"""DeepSeek-V3: the accounting of one training run, and the engineering that made the same cards go further.

Everything the DeepSeek-V3 technical report (DeepSeek-AI 2024) publishes about its training budget is kept here as
a frozen record with its source — :data:`V3` — over the registries' model (``models.get("DeepSeek-V3")``) and
accelerator (the H800). The book's arithmetic on it is a set of small functions:

* the GPU-hour ledger (2,664 K + 119 K + 5 K = 2,788 K H800 GPU-hours; $5.576 M at $2 per GPU-hour; Table 1);
* the achieved FLOP/s per GPU from C = 6·N·D with the 37 B *activated* parameters; the implied utilisation against
  the H800's BF16 and FP8 dense peaks is :func:`chipchain.calibration.implied_mfu` (the report does not state an
  MFU: this is the book's estimate);
* the pipeline bubbles of 1F1B, ZB-H1 (the report's ZB1P) and DualPipe (the report's Table 2,
  :func:`chipchain.schedules.bubble`) and their memory per device, and, on top of them, the book's own model
  of what exposed communication does to a pipeline (labelled as such);
* FP8 training's effect on step time (an Amdahl model, labelled as such); its model-state bytes are the
  ``deepseek-v3-fp8`` recipe of :data:`chipchain.memory.RECIPES`;
* MLA's KV-cache compression (DeepSeek-V2 report, Sec. 2.1; V3's shape from :mod:`chipchain.models`), counted by
  :mod:`chipchain.inference`.

>>> round(gpu_hours_total() / 1e6, 3)
2.788
>>> from chipchain import calibration
>>> round(calibration.implied_mfu(V3.active_params, V3.tokens, V3.gpu_hours["pre-training"], "H800", "bf16"), 3)
0.346
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check, assumptions, compute, hardware, inference, models, parallel, published_runs, schedules, units
from .units import DAY

__all__ = [
    "Report", "V3", "Job", "ScheduleMemory", "KVCompression", "SCHEDULES", "gpu_hours_total", "stage_gpu_hours",
    "cost_breakdown", "days_per_trillion_tokens", "achieved_flops", "job_on", "moe_flops_saving",
    "schedule_memory", "pipeline_efficiency", "fp8_speedup", "mla_compression",
]


@dataclass(frozen=True)
class Report:
    """A training run as its report states it. Counts are counts, hours are GPU-hours, money is US dollars,
    bandwidths bytes/s per direction."""

    name: str
    model: models.Model
    accelerator: str
    n_gpus: int
    gpu_hours: dict                 #: stage -> GPU-hours
    price_per_gpu_hour: float       #: the report's assumed rental price, $ per GPU-hour
    tokens: float                   #: pre-training tokens
    gpu_hours_per_trillion_tokens: float
    plan: parallel.Plan             #: parallelism as reported
    comm_sms: int                   #: SMs per GPU reserved for communication
    nvlink_bandwidth: float         #: achievable NVLink bandwidth per GPU the report quotes
    ib_bandwidth: float             #: achievable InfiniBand bandwidth per GPU the report quotes
    excludes: tuple                 #: what the reported cost does not cover
    source: str
    checked: str = "V"
    node_limit: int | None = None           #: nodes a token's routed experts may sit on (Sec. 2.1.2)
    bias_update_speed: float | None = None  #: γ of auxiliary-loss-free balancing (Sec. 4.2)
    accumulation_bits: int | None = None    #: bits the H800's FP8 tensor-core accumulation keeps (Sec. 3.3.2)
    promotion_interval: int | None = None   #: N_C, elements between promotions to FP32 (Sec. 3.3.2)

    @property
    def total_params(self) -> float:
        """All parameters of the model (the registry's figure)."""
        return self.model.params

    @property
    def active_params(self) -> float:
        """Parameters activated per token (MoE; the registry's figure)."""
        return self.model.active_params


#: DeepSeek-V3 as its technical report states it (DeepSeek-AI 2024: abstract, Sec. 1 and Table 1 for the budget;
#: Sec. 3.1 for the cluster; Sec. 3.2 for the plan: PP 16, EP 64 over 8 nodes, ZeRO-1 data parallelism, no TP;
#: Sec. 3.2.2 for the 20 SMs given to communication and the 160 GB/s NVLink vs 50 GB/s IB it quotes, which
#: facts.md reads as one-direction figures). Checked level V (read in the report). The run's headline facts (model,
#: accelerator, GPUs, tokens, pre-training GPU-hours) are the ``deepseek-v3`` row of ``data/published_runs.csv``,
#: read from :mod:`chipchain.published_runs`; what that table has no column for is stated here.
_PUBLISHED = published_runs.get("deepseek-v3")
V3 = Report(
    name=_PUBLISHED.run,
    model=_PUBLISHED.model,
    accelerator=_PUBLISHED.accelerator.name,
    n_gpus=_PUBLISHED.n_gpus,
    gpu_hours={"pre-training": _PUBLISHED.gpu_hours, "context extension": 119e3, "post-training": 5e3},
    price_per_gpu_hour=assumptions.value("gpu_rent_per_hour"),
    tokens=_PUBLISHED.tokens,
    gpu_hours_per_trillion_tokens=180e3,
    plan=parallel.Plan(tp=1, pp=16, dp=128, ep=64, zero=1),
    comm_sms=20,
    nvlink_bandwidth=160 * units.GBPS,
    ib_bandwidth=50 * units.GBPS,
    excludes=("prior research and ablation experiments on architectures, algorithms and data",
              "failed and exploratory runs", "data acquisition and preparation", "staff",
              "buying, building and running the cluster itself (capital, power, facility)"),
    source="DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Table 1 and Sec. 1, 2.1.2, 3.1, 3.2, 3.3.2, 4.2",
    node_limit=_PUBLISHED.model.route_nodes,     # the model's node-limited routing (data/models.csv)
    bias_update_speed=0.001,
    accumulation_bits=14,
    promotion_interval=128,
)


def _run(run) -> Report:
    if not isinstance(run, Report):
        raise ValueError(f"run must be a deepseek.Report, got {run!r}")
    return run


def gpu_hours_total(run: Report = V3) -> float:
    """GPU-hours of all stages: H = Σ_stage H_stage.

    DeepSeek-V3: 2,664 K pre-training + 119 K context extension + 5 K post-training (Table 1):

    >>> gpu_hours_total()
    2788000.0
    """
    return float(sum(_check.nonnegative(f"gpu_hours[{k!r}]", v) for k, v in _run(run).gpu_hours.items()))


def stage_gpu_hours(stage, run: Report = V3) -> float:
    """GPU-hours of one stage of the run, as reported.

    >>> stage_gpu_hours("post-training")
    5000.0
    """
    r = _run(run)
    s = _check.choice("stage", stage, r.gpu_hours)
    return float(r.gpu_hours[s])


def cost_breakdown(run: Report = V3, price_per_gpu_hour=None) -> dict:
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
    return compute.seconds_from_gpu_hours(h, _check.integer("n_gpus", n_gpus)) / DAY


def achieved_flops(active_params, tokens, gpu_hours) -> float:
    """Model FLOP/s achieved per GPU: X = 6·N·D / (H · 3600).

    ``active_params`` N (count, the activated parameters for an MoE), ``tokens`` D (count), ``gpu_hours`` H;
    result in FLOP/s. 6ND ignores attention's sequence-length term and V3's multi-token-prediction module, so it
    undercounts the work slightly (the report does not publish its own FLOP count).

    >>> round(achieved_flops(37e9, 14.8e12, 2664e3) / 1e12, 1)
    342.6
    """
    c = compute.training_flops(active_params, tokens)
    return c / compute.seconds_from_gpu_hours(_check.positive("gpu_hours", gpu_hours), 1)


@dataclass(frozen=True)
class Job:
    """A training job (C = 6·N·D FLOP) on ``n_gpus`` of one accelerator at an achieved FLOP/s per GPU."""

    accelerator: str
    flops: float
    gpu_hours: float
    days: float
    dollars: float
    mfu: float                  #: achieved / dense BF16 peak


def job_on(accelerator, achieved_flops, n_gpus, price_per_gpu_hour, active_params=V3.active_params,
           tokens=V3.tokens) -> Job:
    """The same job (C = 6·N·D) on other cards at a given achieved FLOP/s per GPU.

    H = C / X / 3600 GPU-hours; days = H / n / 24; dollars = H × price; ``mfu`` = X / dense BF16 peak.
    ``achieved_flops`` X in FLOP/s per GPU, ``price_per_gpu_hour`` in $ per GPU-hour.

    V3's pre-training on 2,048 H100 at Llama 3 405B's 400 TFLOP/s per GPU (Dubey et al. 2024, Table 4, 16,384
    GPUs; 40 % of 989.4):

    >>> j = job_on("H100", 400e12, 2048, 2.0)
    >>> round(j.gpu_hours / 1e6, 2), round(j.days, 1), round(j.mfu, 3)
    (2.28, 46.4, 0.404)
    """
    acc = hardware.get(accelerator)
    x = _check.positive("achieved_flops", achieved_flops)
    n = _check.integer("n_gpus", n_gpus)
    c = compute.training_flops(active_params, tokens)
    hours = compute.gpu_hours(c, x, 1.0)            # achieved X is already peak × MFU
    return Job(acc.name, c, hours, compute.seconds_from_gpu_hours(hours, n) / DAY, compute.cost(hours, price_per_gpu_hour),
               compute.mfu(x, acc.peak_flops("bf16")))


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

#: the schedules of the report's Table 2, named as everywhere in the book (:data:`chipchain.schedules.TABLE2`; the
#: report's "ZB1P" is ZB-H1 and is accepted as a name); their formulas live in :mod:`chipchain.schedules`
SCHEDULES = schedules.TABLE2


def _schedule(schedule) -> str:
    return _check.choice("schedule", schedules.canonical(schedule), SCHEDULES)


@dataclass(frozen=True)
class ScheduleMemory:
    """Per-device memory of a pipeline schedule: parameter copies and micro-batches' activations held at the peak."""

    param_copies: int
    activation_microbatches: int


def schedule_memory(schedule, pp) -> ScheduleMemory:
    """Per-device memory of a schedule (DeepSeek-V3 report, Table 2): parameter copies (1× or 2×) and the number of
    micro-batches' activations held at the peak (PP or PP + 1).

    >>> schedule_memory("DualPipe", 16)
    ScheduleMemory(param_copies=2, activation_microbatches=17)
    """
    s = _schedule(schedule)
    p = _check.integer("pp", pp, minimum=2)
    return ScheduleMemory(schedules.parameter_copies(s), schedules.activation_microbatches(s, p))


def pipeline_efficiency(schedule, pp, microbatches, f=1.0, b=2.0, w=1.0, comm=0.0) -> float:
    """Fraction of an iteration a device spends on useful compute — the book's model built on Table 2.

    E = m·(F + B) / (m·(F + B)·(1 + c_exposed) + bubble), the bubble from :func:`chipchain.schedules.bubble`.
    ``comm`` is the time of the all-to-all and pipeline communication a chunk needs, as a fraction of its compute
    (the V3 report puts cross-node expert parallelism near 1 : 1, Sec. 3.2.1). 1F1B and ZB-H1 run communication in
    the open, so every chunk time is stretched by (1 + comm) (c_exposed = comm, bubble on stretched chunks);
    DualPipe overlaps a forward chunk of one micro-batch with a backward chunk of another and hides communication
    under compute (c_exposed = 0, bubble on bare chunks) as long as comm ≤ 1. Needs m ≥ PP (the pipeline must
    fill); DualPipe needs an even m (two directions). This model is the book's, not the report's: it ignores memory
    limits and imbalance between stages.

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
        return useful / (useful + schedules.bubble(s, p, 1, f, b, w))
    k = 1 + c
    useful = m * (f + b)
    return useful / (useful * k + schedules.bubble(s, p, 1, f * k, b * k, w * k))


# --- FP8 -----------------------------------------------------------------------------------------------------------

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

@dataclass(frozen=True)
class KVCompression:
    """KV-cache bytes per token of a model with multi-head attention of its own shape and with its MLA cache."""

    model: str
    mha_bytes: float            #: 2 · n_h · d_h · l · b
    mla_bytes: float            #: (d_c + d_h^R) · l · b

    @property
    def ratio(self) -> float:
        """How many times smaller MLA's cache is."""
        return self.mha_bytes / self.mla_bytes


def mla_compression(model="DeepSeek-V3", kv_dtype="bf16") -> KVCompression:
    """KV-cache bytes per token under plain multi-head attention of the model's shape (every head caches a key and
    a value) against its multi-head latent attention cache (one latent of width d_c plus one shared RoPE key of
    width d_h^R per layer; DeepSeek-V2 report, Sec. 2.1.4 and Table 1), both from :mod:`chipchain.inference`.

    DeepSeek-V3 (61 layers, 128 heads of 128, d_c = 512, d_h^R = 64) in BF16: 3,997,696 bytes against 70,272
    (Zhao et al. 2025, Table 1), 57× fewer:

    >>> k = mla_compression()
    >>> k.mha_bytes, k.mla_bytes, round(k.ratio, 1)
    (3997696.0, 70272.0, 56.9)
    """
    m = models.get(model)
    if m.attention != "mla":
        raise ValueError(f"{m.name} does not use multi-head latent attention (attention={m.attention!r})")
    mha = inference.kv_bytes_per_token(m.layers, m.heads, m.head_dim,
                                       bytes_per_element=units.bytes_per_element(kv_dtype))
    return KVCompression(m.name, mha, inference.model_kv_bytes_per_token(m, kv_dtype))
