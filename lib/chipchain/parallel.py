"""Laying a model across many GPUs: a parallel plan, its validation and placement, bubbles, traffic, and search.

A plan cuts the work four ways (Narayanan et al. 2021; Shoeybi et al. 2019; Huang et al. 2019; Rajbhandari et al.
2020): **tensor** parallelism (TP) splits each layer's matrices, **pipeline** parallelism (PP) gives each GPU a run
of layers, **data** parallelism (DP) gives each replica different sequences, and **expert** parallelism (EP) places a
mixture-of-experts model's experts on different GPUs. The degrees multiply to the GPU count. ZeRO shards the model
states over the data-parallel ranks.

Ranks are laid out TP innermost, then PP, then DP outermost (the order Llama 3 uses, and seed 000's
"8 × 16 × 8"): a group of ``size`` ranks ``stride`` apart stays inside one node when ``stride × size`` fits in the
node's GPU count.

>>> p = Plan(tp=8, pp=16, dp=8, microbatches=64)
>>> p.n_gpus, round(bubble_fraction(16, 64), 4)
(1024, 0.2344)
>>> placement(p)["tp"].scope, placement(p)["pp"].scope
('intra-node', 'inter-node')
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import _check
from . import memory as _memory
from . import widgets as _widgets

__all__ = ["Plan", "validate", "Group", "placement", "default_links", "bubble_fraction", "idle_share",
           "CommRow", "communication", "Analysis", "analyze", "Candidate", "search", "plan_explorer",
           "search_explorer", "zero_traffic_factor", "plot_zero_tradeoff", "communication_table"]


@dataclass(frozen=True)
class Plan:
    """A parallel plan: degrees ``tp``, ``pp``, ``dp``, ``ep``; ZeRO stage; ``microbatches`` per step per replica,
    ``microbatch_size`` sequences each; ``virtual_stages`` (interleaved 1F1B chunks per GPU); sequence parallelism
    and the recomputation choice ("none", "selective", "full")."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    zero: int = 0
    microbatches: int = 1
    microbatch_size: int = 1
    virtual_stages: int = 1
    sequence_parallel: bool = False
    recompute: str = "none"

    def __post_init__(self):
        for f in ("tp", "pp", "dp", "ep", "microbatches", "microbatch_size", "virtual_stages"):
            object.__setattr__(self, f, _check.integer(f, getattr(self, f)))
        z = _check.integer("zero", self.zero, minimum=0)
        if z > 3:
            raise ValueError(f"zero must be a ZeRO stage 0, 1, 2 or 3, got {self.zero!r}")
        if not isinstance(self.sequence_parallel, bool):
            raise ValueError(f"sequence_parallel must be True or False, got {self.sequence_parallel!r}")
        object.__setattr__(self, "recompute", _check.choice("recompute", self.recompute, _memory.RECOMPUTE))

    @property
    def n_gpus(self) -> int:
        """tp × pp × dp (expert parallelism reuses the data-parallel ranks)."""
        return self.tp * self.pp * self.dp

    @property
    def global_batch(self) -> int:
        """Sequences per training step: microbatch_size × microbatches × dp."""
        return self.microbatch_size * self.microbatches * self.dp

    def __str__(self) -> str:
        return (f"TP {self.tp} × PP {self.pp} × DP {self.dp}" + (f" × EP {self.ep}" if self.ep > 1 else "")
                + f", ZeRO-{self.zero}, {self.microbatches} micro-batches of {self.microbatch_size}")


def validate(plan: Plan, model, n_gpus=None, gpus_per_node=8) -> tuple:
    """Check a plan against a model and a cluster; raise ``ValueError`` with the reason, or return warnings.

    Errors: tp × pp × dp ≠ the GPU count; TP not dividing the attention heads; PP × virtual stages not dividing the
    layers; interleaving without pipelining or with micro-batches not a multiple of PP (Megatron-LM's requirement);
    EP > 1 on a dense model, EP not dividing the experts or the data-parallel degree (expert-parallel groups are
    carved out of the data-parallel ranks). Warnings: TP crossing nodes; fewer micro-batches than stages; ZeRO-2/3 combined with PP
    (DeepSpeed does not support it); ZeRO with DP = 1; sequence parallelism without TP.

    >>> validate(Plan(tp=8, pp=16, dp=8, microbatches=64), "175B", 1024)
    ()
    >>> validate(Plan(tp=16, pp=8, dp=8, microbatches=64), "175B", 1024)[0]
    'TP = 16 spans 2 nodes of 8 GPUs: its all-reduces, four per layer per micro-batch, leave NVLink'
    >>> validate(Plan(tp=8, pp=16, dp=4), "175B", 1024)
    Traceback (most recent call last):
    ...
    ValueError: tp × pp × dp = 8 × 16 × 4 = 512, but the cluster has 1024 GPUs
    """
    if not isinstance(plan, Plan):
        raise ValueError(f"plan must be a Plan, got {plan!r}")
    m = _memory.model(model)
    g = _check.integer("gpus_per_node", gpus_per_node)
    if n_gpus is not None:
        n = _check.integer("n_gpus", n_gpus)
        if plan.n_gpus != n:
            raise ValueError(f"tp × pp × dp = {plan.tp} × {plan.pp} × {plan.dp} = {plan.n_gpus}, but the cluster "
                             f"has {n} GPUs")
    if m.heads % plan.tp:
        raise ValueError(f"tp = {plan.tp} must divide the {m.heads} attention heads of the {m.name} model")
    if m.layers % (plan.pp * plan.virtual_stages):
        raise ValueError(f"pp × virtual_stages = {plan.pp} × {plan.virtual_stages} must divide the {m.layers} "
                         f"layers of the {m.name} model")
    if plan.virtual_stages > 1 and plan.pp == 1:
        raise ValueError("virtual_stages > 1 (interleaving) needs pipeline parallelism (pp > 1)")
    if plan.virtual_stages > 1 and plan.microbatches % plan.pp:
        raise ValueError(f"with interleaving, microbatches ({plan.microbatches}) must be a multiple of pp "
                         f"({plan.pp})")
    if plan.ep > 1:
        if not m.experts:
            raise ValueError(f"ep = {plan.ep} needs a mixture-of-experts model; the {m.name} model is dense")
        if m.experts % plan.ep:
            raise ValueError(f"ep = {plan.ep} must divide the {m.experts} experts of the {m.name} model")
        if plan.dp % plan.ep:
            raise ValueError(f"ep = {plan.ep} must divide dp = {plan.dp}: experts are spread over the "
                             f"data-parallel ranks")
    warnings = []
    if plan.tp > g:
        warnings.append(f"TP = {plan.tp} spans {math.ceil(plan.tp / g)} nodes of {g} GPUs: its all-reduces, four "
                        f"per layer per micro-batch, leave NVLink")
    if plan.pp > 1 and plan.microbatches < plan.pp:
        warnings.append(f"{plan.microbatches} micro-batches for {plan.pp} stages: the pipeline never fills "
                        f"(bubble {bubble_fraction(plan.pp, plan.microbatches, plan.virtual_stages):.0%} of ideal)")
    if plan.zero >= 2 and plan.pp > 1:
        warnings.append(f"ZeRO-{plan.zero} with pipeline parallelism: DeepSpeed supports only ZeRO-1 with PP")
    if plan.zero > 0 and plan.dp == 1:
        warnings.append(f"ZeRO-{plan.zero} with dp = 1 shards nothing")
    if plan.sequence_parallel and plan.tp == 1:
        warnings.append("sequence parallelism without tensor parallelism changes nothing")
    return tuple(warnings)


# --- placement ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Group:
    """One parallel dimension's communication group: ``size`` ranks ``stride`` apart; ``scope`` says whether it
    stays inside a node ("intra-node"), leaves it ("inter-node"), or is trivial ("none", size 1)."""

    size: int
    stride: int
    scope: str


def _scope(size: int, stride: int, g: int) -> str:
    if size == 1:
        return "none"
    span = size * stride
    return "intra-node" if span <= g and g % span == 0 else "inter-node"


def placement(plan: Plan, gpus_per_node=8) -> dict:
    """Where each group sits, ranks laid out TP innermost, then PP, then DP: {"tp", "pp", "dp": :class:`Group`}, plus
    "ep" when expert parallelism is used (the first ``ep`` ranks of each data-parallel group).

    >>> {k: (v.stride, v.scope) for k, v in placement(Plan(tp=2, pp=4, dp=16)).items()}
    {'tp': (1, 'intra-node'), 'pp': (2, 'intra-node'), 'dp': (8, 'inter-node')}
    """
    g = _check.integer("gpus_per_node", gpus_per_node)
    out = {"tp": Group(plan.tp, 1, _scope(plan.tp, 1, g)),
           "pp": Group(plan.pp, plan.tp, _scope(plan.pp, plan.tp, g)),
           "dp": Group(plan.dp, plan.tp * plan.pp, _scope(plan.dp, plan.tp * plan.pp, g))}
    if plan.ep > 1:
        out["ep"] = Group(plan.ep, plan.tp * plan.pp, _scope(plan.ep, plan.tp * plan.pp, g))
    return out


def default_links(accelerator) -> tuple:
    """(intra-node link, inter-node link) names in :mod:`chipchain.comms` for a card's usual server: A100 → NVLink 3
    and InfiniBand HDR (one 200 Gb/s NIC per GPU, DGX A100); H100/H200/H800/H20 → NVLink 4 and NDR (DGX H100);
    B200 → NVLink 5 and XDR; other parts → PCIe Gen4 and HDR.

    >>> default_links("A100")
    ('NVLink3', 'IB-HDR')
    """
    from . import hardware

    name = hardware.get(accelerator).name
    if name.startswith(("A100", "A800")):
        return ("NVLink3", "IB-HDR")
    if name.startswith(("H100-SXM", "H200", "H800", "H20")):
        return ("NVLink4", "IB-NDR")
    if name.startswith("B200"):
        return ("NVLink5", "IB-XDR")
    return ("PCIe4-x16", "IB-HDR")


# --- the pipeline bubble -------------------------------------------------------------------------------------------

def bubble_fraction(pp, microbatches, virtual_stages=1) -> float:
    """Pipeline bubble time relative to the ideal (bubble-free) time: (p − 1)/(v·m) (Narayanan et al. 2021, §2.2.1
    for 1F1B, §2.2.2 for the interleaved schedule with v chunks per GPU).

    ``pp`` p stages, ``microbatches`` m per step, ``virtual_stages`` v. Dimensionless.

    >>> bubble_fraction(16, 64), bubble_fraction(16, 64, virtual_stages=2)
    (0.234375, 0.1171875)
    """
    p = _check.integer("pp", pp)
    m = _check.integer("microbatches", microbatches)
    v = _check.integer("virtual_stages", virtual_stages)
    return (p - 1) / (v * m)


def idle_share(pp, microbatches, virtual_stages=1) -> float:
    """Share of the whole step each GPU sits idle in the bubble: (p − 1)/(v·m + p − 1).

    >>> round(idle_share(16, 64), 3)
    0.19
    """
    p = _check.integer("pp", pp)
    m = _check.integer("microbatches", microbatches)
    v = _check.integer("virtual_stages", virtual_stages)
    return (p - 1) / (v * m + p - 1)


# --- communication per step --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CommRow:
    """One kind of traffic in a training step, per GPU: ``count`` operations of ``message`` bytes each, over ``link``,
    ``bytes`` sent by the GPU in total, ``seconds`` of transfer time (α–β model)."""

    kind: str
    when: str
    link: str
    count: int
    message: float
    bytes: float
    seconds: float


def _links(accelerator, intra_link, inter_link):
    from . import comms

    d_in, d_out = default_links(accelerator)
    return comms.link(intra_link or d_in), comms.link(inter_link or d_out)


def communication(plan: Plan, model, accelerator="A100", intra_link=None, inter_link=None, gpus_per_node=8,
                  grad_bytes=2.0) -> list:
    """Traffic of one training step per GPU, by kind, with times from :mod:`chipchain.comms` over the link the
    placement dictates (NVLink inside a node, InfiniBand across nodes; per-direction bandwidth).

    * **TP**: 4 all-reduces per layer per micro-batch (2 forward, 2 backward; 6 with full recomputation), each of
      b·s·h 16-bit elements (Shoeybi et al. 2019, §3; with sequence parallelism an all-gather plus a reduce-scatter
      of the same total, Korthikanti et al. 2022 §4.2.2).
    * **PP**: per micro-batch and virtual stage one activation forward and one gradient backward, b·s·h elements,
      split over the TP ranks (the scatter/gather optimisation, Narayanan et al. 2021 §4.1).
    * **DP**: the gradients of the GPU's Ψ/(t·p) parameters (``grad_bytes`` each): a ring all-reduce (2Ψ bytes per
      GPU in the limit); ZeRO-1/2 a reduce-scatter plus an all-gather (the same); ZeRO-3 a reduce-scatter and two
      all-gathers of the weights, forward and backward (3Ψ) (Rajbhandari et al. 2020, §7).
    * **EP** (mixture-of-experts models): 4 all-to-alls per layer per micro-batch (dispatch and combine, forward and
      backward), each of b·s·h·top_k 16-bit elements (every layer treated as an MoE layer; an upper bound).

    >>> rows = communication(Plan(tp=8, pp=16, dp=8, microbatches=64), "175B")
    >>> [(r.kind, r.link, round(r.bytes / 1e9, 1)) for r in rows]
    [('TP all-reduce', 'NVLink3', 135.3), ('PP send/recv', 'IB-HDR', 0.8), ('DP gradient all-reduce', 'IB-HDR', 4.8)]
    """
    from . import comms

    m = _memory.model(model)
    intra, inter = _links(accelerator, intra_link, inter_link)
    where = placement(plan, gpus_per_node)
    pick = {k: (intra if g.scope == "intra-node" else inter) for k, g in where.items()}
    act = 2.0 * plan.microbatch_size * m.seq * m.hidden
    rows = []
    if plan.tp > 1:
        per_layer = 6 if plan.recompute == "full" else 4
        count = per_layer * (m.layers // plan.pp) * plan.microbatches
        ln = pick["tp"]
        t1 = comms.ring_allreduce_time(act, plan.tp, ln.bandwidth_per_direction, ln.latency)
        rows.append(CommRow("TP all-reduce", "every layer, forward and backward", ln.name, count, act,
                            count * comms.allreduce_bytes_per_rank(act, plan.tp), count * t1))
    if plan.pp > 1:
        count = 2 * plan.microbatches * plan.virtual_stages
        msg = act / plan.tp
        ln = pick["pp"]
        rows.append(CommRow("PP send/recv", "every micro-batch, between stages", ln.name, count, msg, count * msg,
                            count * comms.p2p_time(msg, ln.bandwidth_per_direction, ln.latency)))
    if plan.ep > 1:
        count = 4 * (m.layers // plan.pp) * plan.microbatches
        msg = act * m.top_k
        ln = pick["ep"]
        rows.append(CommRow("EP all-to-all", "every MoE layer, forward and backward", ln.name, count, msg,
                            count * (plan.ep - 1) / plan.ep * msg,
                            count * comms.alltoall_time(msg, plan.ep, ln.bandwidth_per_direction, ln.latency)))
    if plan.dp > 1:
        grads = _check.positive("grad_bytes", grad_bytes) * m.params / (plan.tp * plan.pp)
        ln = pick["dp"]
        bw, lat, d = ln.bandwidth_per_direction, ln.latency, plan.dp
        if plan.zero == 3:
            t = comms.reduce_scatter_time(grads, d, bw, lat) + 2 * comms.allgather_time(grads, d, bw, lat)
            rows.append(CommRow("DP ZeRO-3 gather + reduce-scatter", "every layer (gather), end of step", ln.name,
                                3, grads, 3 * (d - 1) / d * grads, t))
        else:
            kind = "DP gradient all-reduce" if plan.zero == 0 else f"DP ZeRO-{plan.zero} reduce-scatter + gather"
            rows.append(CommRow(kind, "end of step", ln.name, 1, grads, comms.allreduce_bytes_per_rank(grads, d),
                                comms.ring_allreduce_time(grads, d, bw, lat)))
    return rows


def communication_table(plan: Plan, model, accelerator="A100", **kwargs):
    """:func:`communication` as a pandas DataFrame (one row per kind: when, link, operations, message and total
    bytes in MB/GB, seconds).

    >>> communication_table(Plan(tp=8, pp=16, dp=8, microbatches=64), "175B").loc["TP all-reduce", "link"]
    'NVLink3'
    """
    import pandas as pd

    rows = communication(plan, model, accelerator, **kwargs)
    return pd.DataFrame([{"kind": r.kind, "when": r.when, "link": r.link, "operations": r.count,
                          "message (MB)": r.message / 1e6, "sent per GPU (GB)": r.bytes / 1e9,
                          "time (s)": r.seconds} for r in rows]).set_index("kind")


def zero_traffic_factor(stage) -> float:
    """Data-parallel traffic per GPU per step, in units of the gradient buffer Ψ (16-bit), in the limit of many
    ranks: 2 for plain DP and ZeRO-1/2 (all-reduce = reduce-scatter + all-gather), 3 for ZeRO-3/FSDP (a reduce-scatter
    of gradients plus an all-gather of weights in the forward and again in the backward pass). Rajbhandari et al.
    2020, §7.

    >>> [zero_traffic_factor(s) for s in range(4)]
    [2.0, 2.0, 2.0, 3.0]
    """
    s = _check.integer("stage", stage, minimum=0)
    if s > 3:
        raise ValueError(f"stage must be 0, 1, 2 or 3, got {stage!r}")
    return 3.0 if s == 3 else 2.0


def plot_zero_tradeoff(params, dps=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), k=12, ax=None):
    """Model-state memory per GPU under ZeRO stages 0–3 across data-parallel degrees (log–log), each line
    labelled with its traffic per step. Returns the Axes."""
    from . import plotting

    ax = plotting.axes(ax)
    dps = [_check.integer("dps", d) for d in dps]
    names = {0: "DP (no ZeRO)", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3 / FSDP"}
    for s in range(4):
        ys = [_memory.zero_bytes_per_gpu(params, d, s, k) / 1e9 for d in dps]
        ax.loglog(dps, ys, marker="o", ms=3, color=plotting.color(s),
                  label=f"{names[s]}: traffic {zero_traffic_factor(s):g}Ψ per step")
    ax.axhline(80, color="black", linestyle="--", lw=1)
    ax.text(dps[0], 80 * 1.15, "80 GB card", fontsize=8)
    ax.set_xlabel("data-parallel degree $N_d$")
    ax.set_ylabel("model states per GPU (GB)")
    ax.legend(fontsize=8, loc="lower left")
    return ax


# --- one plan, analysed -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Analysis:
    """Everything the book says about one plan: memory per GPU and whether it fits, placement, traffic, bubble,
    estimated step time and its parts (seconds), and warnings."""

    plan: Plan
    ledger: object
    fit: object
    placement: dict
    comm: list
    bubble: float
    idle: float
    compute_seconds: float
    step_seconds: float
    warnings: tuple


def _compute_seconds(plan, m, peak, mfu):
    """6ND for one step's tokens (8ND with full recomputation: one more forward pass), at ``mfu`` of ``peak``."""
    from .compute import training_flops, training_time

    per_token = 8.0 if plan.recompute == "full" else 6.0
    flops = training_flops(m.params, plan.global_batch * m.seq, flops_per_param_token=per_token)
    return training_time(flops, plan.n_gpus, peak, mfu)


def analyze(plan: Plan, model, accelerator="A100", *, n_gpus=None, recipe="mixed-adam", mfu=0.5, dp_overlap=0.0,
            reserve=0.0, intra_link=None, inter_link=None, gpus_per_node=8) -> Analysis:
    """Validate ``plan`` and estimate its memory per GPU, traffic and step time.

    Step time = compute × (1 + bubble) + TP time + PP time + (1 − ``dp_overlap``) × DP time, where compute =
    6·Ψ·tokens per step (8·Ψ·tokens with full recomputation) / (n · peak BF16 dense · ``mfu``). An estimate: it
    ignores overlap of TP and PP traffic with compute and the embedding layers.

    >>> a = analyze(Plan(tp=8, pp=16, dp=8, zero=1, microbatches=64, sequence_parallel=True,
    ...                  recompute="selective"), "175B", "A100", n_gpus=1024)
    >>> round(a.ledger.total / 1e9, 1), a.fit.fits, round(a.bubble, 3)
    (17.8, True, 0.234)
    """
    from . import hardware

    m = _memory.model(model)
    warnings = validate(plan, m, n_gpus, gpus_per_node)
    acc = hardware.get(accelerator)
    L = _memory.ledger(m, recipe, microbatch=plan.microbatch_size, tp=plan.tp, pp=plan.pp, dp=plan.dp,
                       zero=plan.zero, sequence_parallel=plan.sequence_parallel, recompute=plan.recompute,
                       microbatches=plan.microbatches, virtual_stages=plan.virtual_stages)
    fit = L.fits(acc, reserve)
    rows = communication(plan, m, acc, intra_link, inter_link, gpus_per_node,
                         _memory.recipe(recipe).gradients)
    bub = bubble_fraction(plan.pp, plan.microbatches, plan.virtual_stages)
    comp = _compute_seconds(plan, m, acc.peak_flops("bf16"), _check.fraction("mfu", mfu))
    ov = _check.probability("dp_overlap", dp_overlap)
    comm_s = sum(r.seconds * ((1 - ov) if r.kind.startswith("DP") else 1.0) for r in rows)
    return Analysis(plan, L, fit, placement(plan, gpus_per_node), rows, bub,
                    idle_share(plan.pp, plan.microbatches, plan.virtual_stages), comp, comp * (1 + bub) + comm_s,
                    warnings)


# --- search ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Candidate:
    """One plan found by :func:`search`, with its memory per GPU (bytes) and estimated step time (s)."""

    plan: Plan
    memory: float
    step_seconds: float


def _divisors(n: int) -> list:
    return [d for d in range(1, n + 1) if n % d == 0]


def search(model, n_gpus, accelerator="A100", global_batch=1536, *, recipe="mixed-adam", mfu=0.5, dp_overlap=0.0,
           reserve=0.0, intra_link=None, inter_link=None, gpus_per_node=8, microbatch_sizes=(1, 2, 4, 8),
           top=10, distinct_shapes=False) -> list:
    """Every valid plan for ``model`` on ``n_gpus`` GPUs at ``global_batch`` sequences per step, minus those that do
    not fit in memory, ranked by the estimated step time of :func:`analyze` (fastest first); ``top`` are returned.

    Enumerated: TP dividing the heads and the GPU count; PP dividing the layers and the rest; DP the remainder,
    dividing the global batch; micro-batch size; ZeRO 0–3 (0–1 with PP, as DeepSpeed allows); recomputation none/selective/full; sequence parallelism
    on or off (with TP). No interleaving, no EP. Ties in step time are broken by lower memory; with
    ``distinct_shapes=True`` only the best plan of each (TP, PP, DP, micro-batch size) shape is kept. All candidates are evaluated at once with NumPy arrays; the
    formulas are those of :func:`chipchain.memory.ledger` and :func:`communication` (the tests check they agree).

    >>> best = search("175B", 1024, "A100")[0]
    >>> str(best.plan), best.plan.recompute
    ('TP 8 × PP 16 × DP 8, ZeRO-1, 192 micro-batches of 1', 'selective')
    """
    import numpy as np

    from . import hardware

    m = _memory.model(model)
    n = _check.integer("n_gpus", n_gpus)
    B = _check.integer("global_batch", global_batch)
    g = _check.integer("gpus_per_node", gpus_per_node)
    k_top = _check.integer("top", top)
    acc = hardware.get(accelerator)
    r = _memory.recipe(recipe)
    mfu = _check.fraction("mfu", mfu)
    ov = _check.probability("dp_overlap", dp_overlap)
    cap = acc.require("memory_bytes") - _check.nonnegative("reserve", reserve)
    intra, inter = _links(acc, intra_link, inter_link)
    peak = acc.peak_flops("bf16")
    bs = sorted({_check.integer("microbatch_sizes", b) for b in microbatch_sizes})

    rows = []
    for tp in _divisors(n):
        if m.heads % tp:
            continue
        for pp in _divisors(n // tp):
            if m.layers % pp:
                continue
            dp = n // (tp * pp)
            if B % dp:
                continue
            for b in bs:
                if (B // dp) % b:
                    continue
                for zero in (range(2) if pp > 1 else range(4)):
                    for rc in range(3):
                        for sp in ((0, 1) if tp > 1 else (0,)):
                            rows.append((tp, pp, dp, b, zero, rc, sp))
    if not rows:
        return []
    a = np.array(rows, dtype=np.int64)
    tp, pp, dp, b, zero, rc, sp = (a[:, i].astype(float) for i in range(7))
    mb = (B / dp) / b                                   # micro-batches per replica
    # memory: states of Ψ/(t·p) sharded by ZeRO, plus first-stage activations (memory.ledger)
    psi = m.params / (tp * pp)
    states = (r.weights * psi / np.where(zero >= 3, dp, 1) + r.gradients * psi / np.where(zero >= 2, dp, 1)
              + (r.master + r.moments) * psi / np.where(zero >= 1, dp, 1))
    sbh = float(m.seq) * b * m.hidden
    linear = np.where(sp == 1, 34.0 / tp, 10.0 + 24.0 / tp)
    scores = np.where(rc == 0, 5.0 * m.heads * m.seq / (m.hidden * tp), 0.0)
    per_layer = np.where(rc == 2, 2.0 * sbh / np.where(sp == 1, tp, 1.0), sbh * (linear + scores))
    acts = per_layer * (m.layers / pp) * np.minimum(pp, mb) * r.activation_element / 2
    total = states + acts
    ok = total <= cap
    # time: compute with the bubble, plus TP, PP and DP traffic (communication())
    compute = 6.0 * m.params * B * m.seq * np.where(rc == 2, 8.0 / 6.0, 1.0) / (n * peak * mfu)
    bubble = (pp - 1) / mb

    def link_of(size, stride):
        span = size * stride
        inside = (span <= g) & (g % span == 0)
        return (np.where(inside, intra.bandwidth_per_direction, inter.bandwidth_per_direction),
                np.where(inside, intra.latency, inter.latency))

    act = 2.0 * b * m.seq * m.hidden
    bw, lat = link_of(tp, 1.0)
    tp_t = np.where(tp > 1, np.where(rc == 2, 6, 4) * (m.layers / pp) * mb
                    * (2 * (tp - 1) / tp * act / bw + 2 * (tp - 1) * lat), 0.0)
    bw, lat = link_of(pp, tp)
    pp_t = np.where(pp > 1, 2 * mb * (lat + act / tp / bw), 0.0)
    bw, lat = link_of(dp, tp * pp)
    grads = r.gradients * psi
    one = (dp - 1) / dp * grads / bw + (dp - 1) * lat
    dp_t = np.where(dp > 1, np.where(zero == 3, 3 * one, 2 * one), 0.0)
    step = compute * (1 + bubble) + tp_t + pp_t + (1 - ov) * dp_t
    idx = np.flatnonzero(ok)
    order = idx[np.lexsort((total[idx], step[idx]))]
    if distinct_shapes:
        seen, keep = set(), []
        for i in order:
            key = (a[i, 0], a[i, 1], a[i, 3])
            if key not in seen:
                seen.add(key)
                keep.append(i)
        order = keep
    order = order[:k_top]
    names = _memory.RECOMPUTE
    return [Candidate(Plan(tp=int(a[i, 0]), pp=int(a[i, 1]), dp=int(a[i, 2]), zero=int(a[i, 4]),
                           microbatches=int(mb[i]), microbatch_size=int(a[i, 3]),
                           sequence_parallel=bool(a[i, 6]), recompute=names[int(a[i, 5])]),
                      float(total[i]), float(step[i])) for i in order]


# --- explorables ---------------------------------------------------------------------------------------------------

def _plan_view(tp, pp, zero, microbatches, recompute, model_name="175B", n_gpus=1024, accelerator="A100"):
    import html

    from . import plotting
    from .units import fmt_bytes, fmt_duration, fmt_percent

    if n_gpus % (tp * pp):
        raise ValueError(f"tp × pp = {tp * pp} does not divide {n_gpus} GPUs")
    plan = Plan(tp=tp, pp=pp, dp=n_gpus // (tp * pp), zero=zero, microbatches=microbatches,
                sequence_parallel=tp > 1, recompute=recompute)
    a = analyze(plan, model_name, accelerator, n_gpus=n_gpus)
    segs = [(k, v / 1e9) for k, v in a.ledger.components.items() if v > 0]
    alt = f"Memory per GPU for {plan}: {fmt_bytes(a.ledger.total)}; {a.fit.message}"
    bar = plotting.svg_bars(segs, capacity=a.fit.capacity / 1e9, capacity_label=a.fit.accelerator,
                            unit_format=lambda v: f"{v:,.1f} GB", alt=alt)
    head = (f"<p><strong>{html.escape(str(plan))}</strong> ({plan.global_batch:,} sequences per step). "
            f'<span style="color:{"#009E73" if a.fit.fits else "#D55E00"}">{a.fit.message}</span>.</p>')
    rows = "".join(f"<tr><td>{c.kind}</td><td>{c.link}</td><td>{c.count:,}</td><td>{fmt_bytes(c.bytes, 3)}</td>"
                   f"<td>{fmt_duration(c.seconds)}</td></tr>" for c in a.comm)
    table = ('<table class="cc-table"><caption>Traffic per GPU per step</caption><tr><th>kind</th><th>link</th>'
             f"<th>operations</th><th>bytes sent</th><th>time</th></tr>{rows}</table>")
    where = ", ".join(f"{k.upper()} {v.size}: {v.scope}" for k, v in a.placement.items())
    tail = (f"<p>Placement: {where}. Bubble {fmt_percent(a.bubble)} of ideal time (idle share "
            f"{fmt_percent(a.idle)}). Estimated step {fmt_duration(a.step_seconds)} (compute "
            f"{fmt_duration(a.compute_seconds)} at 50 % MFU).</p>")
    warn = "".join(f"<li>{html.escape(w)}</li>" for w in a.warnings)
    return head + bar + table + tail + (f"<ul>{warn}</ul>" if warn else "")


@_widgets.explorer
def plan_explorer():
    """Ch. 4 explorer: GPT-3 175B on 1,024 A100 (8 per node); TP, PP, ZeRO stage, micro-batches and recomputation →
    memory per GPU against 80 GB, traffic per step by link, bubble and warnings (DP = 1024 / (TP × PP))."""
    W = _widgets
    controls = [
        W.Slider("tp", "Tensor parallel", [4, 8, 16], value=8),
        W.Slider("pp", "Pipeline parallel", [4, 8, 16, 32], value=16),
        W.Choice("zero", "ZeRO stage", {"0 (none)": 0, "1 (optimizer)": 1, "3 (everything)": 3}, value=1),
        W.Slider("microbatches", "Micro-batches per replica", [16, 128], value=128),
        W.Choice("recompute", "Recomputation", {"selective": "selective", "full": "full"}),
    ]
    return W.explore(_plan_view, controls, title="Cutting GPT-3 175B across 1,024 A100")


def _search_view(model_name, n_gpus, accelerator):
    import html

    from .units import fmt_bytes, fmt_duration

    found = search(model_name, n_gpus, accelerator, top=5, distinct_shapes=True)
    if not found:
        raise ValueError(f"no plan fits the {model_name} model on {n_gpus} × {accelerator}")
    rows = "".join(f"<tr><td>{i + 1}</td><td>{html.escape(str(c.plan))}</td><td>{c.plan.recompute}"
                   f"{' + SP' if c.plan.sequence_parallel else ''}</td><td>{fmt_bytes(c.memory, 3)}</td>"
                   f"<td>{fmt_duration(c.step_seconds)}</td></tr>" for i, c in enumerate(found))
    return ('<table class="cc-table"><caption>Fastest plans that fit, 1,536 sequences per step, 50 % MFU '
            '(estimates)</caption><tr><th>#</th><th>plan</th><th>recompute</th><th>memory per GPU</th>'
            f"<th>step time</th></tr>{rows}</table>")


@_widgets.explorer
def search_explorer():
    """Ch. 4 explorer: the five fastest plans that fit for a model on a cluster, by :func:`search`."""
    W = _widgets
    controls = [
        W.Choice("model_name", "Model", {"13B": "13B", "70B": "70B", "175B": "175B", "530B": "530B"},
                 value="175B"),
        W.Slider("n_gpus", "GPUs", [64, 256, 1024, 4096], value=1024),
        W.Choice("accelerator", "GPU", {"A100 80 GB": "A100", "H100 80 GB": "H100"}),
    ]
    return W.explore(_search_view, controls, title="Searching every plan")
