"""Laying a model across many GPUs: a parallel plan, its validation and placement, bubbles, traffic and step time.

A plan cuts the work four ways (Narayanan et al. 2021; Shoeybi et al. 2019; Huang et al. 2019; Rajbhandari et al.
2020): **tensor** parallelism (TP) splits each layer's matrices, **pipeline** parallelism (PP) gives each GPU a run
of layers, **data** parallelism (DP) gives each replica different sequences, and **expert** parallelism (EP) places a
mixture-of-experts model's experts on different GPUs. The degrees multiply to the GPU count. ZeRO shards the model
states over the data-parallel ranks.

Ranks are laid out TP innermost, then PP, then DP outermost (the order Llama 3 uses, and seed 000's
"8 × 16 × 8"): a group of ``size`` ranks ``stride`` apart stays inside one node when ``stride × size`` fits in the
node's GPU count. A model is any name or alias of :mod:`chipchain.models`; a cluster any node or accelerator name,
:class:`~chipchain.systems.Node` or :class:`~chipchain.systems.Cluster` (``"A100"`` is the DGX A100). This module
uses the pipeline-bubble formulas of :mod:`chipchain.schedules` (:func:`bubble_fraction`, :func:`idle_share`,
:func:`schedule_bubble` are its entry points here); the plan search is :mod:`chipchain.plans`, views
:mod:`chipchain.views.parallel`.

>>> p = Plan(tp=8, pp=16, dp=8, microbatches=64)
>>> p.n_gpus, round(bubble_fraction(16, 64), 4)
(1024, 0.2344)
>>> placement(p, "A100").tp.scope, placement(p, "A100").pp.link.name
('intra-node', 'IB-HDR')
"""
from __future__ import annotations

import math
from dataclasses import dataclass


from . import _check, activations, comms, compute, links, memory, models, schedules, systems
from .units import fmt_percent

__all__ = ["Plan", "validate", "Group", "Placement", "placement", "bubble_fraction", "idle_share",
           "PIPELINE_SCHEDULES", "schedule_bubble", "CommRow", "communication", "zero_traffic_factor", "Analysis",
           "step_compute_seconds", "analyze"]


@dataclass(frozen=True)
class Plan:
    """A parallel plan: degrees ``tp``, ``pp``, ``dp``, ``ep``; ZeRO stage; ``microbatches`` per step per replica,
    ``microbatch`` sequences each; ``virtual_stages`` (interleaved 1F1B chunks per GPU); sequence parallelism
    and the recomputation choice ("none", "selective", "full")."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    zero: int = 0
    microbatches: int = 1
    microbatch: int = 1
    virtual_stages: int = 1
    sequence_parallel: bool = False
    recompute: str = "none"

    def __post_init__(self):
        for f in ("tp", "pp", "dp", "ep", "microbatches", "microbatch", "virtual_stages"):
            object.__setattr__(self, f, _check.integer(f, getattr(self, f)))
        z = _check.integer("zero", self.zero, minimum=0)
        if z > 3:
            raise ValueError(f"zero must be a ZeRO stage 0, 1, 2 or 3, got {self.zero!r}")
        _check.flag("sequence_parallel", self.sequence_parallel)
        object.__setattr__(self, "recompute", _check.choice("recompute", self.recompute, activations.RECOMPUTE))

    @property
    def n_gpus(self) -> int:
        """tp × pp × dp (expert parallelism reuses the data-parallel ranks)."""
        return self.tp * self.pp * self.dp

    @property
    def batch(self) -> int:
        """Sequences per training step (the global batch): microbatch × microbatches × dp."""
        return self.microbatch * self.microbatches * self.dp

    def __str__(self) -> str:
        return (f"TP {self.tp} × PP {self.pp} × DP {self.dp}" + (f" × EP {self.ep}" if self.ep > 1 else "")
                + f", ZeRO-{self.zero}, {self.microbatches} micro-batches of {self.microbatch}")


def _cluster(cluster, n_gpus, plan) -> systems.Cluster:
    """``cluster`` as a Cluster of ``n_gpus`` (default: the plan's GPU count) unless it is one already."""
    if isinstance(cluster, systems.Cluster):
        return systems.cluster(cluster, n_gpus)
    return systems.cluster(cluster, plan.n_gpus if n_gpus is None else n_gpus)


def validate(plan: Plan, model, cluster="A100", *, n_gpus=None) -> tuple:
    """Check a plan against a model and a cluster; raise ``ValueError`` with the reason, or return warnings.

    ``cluster``: a :class:`~chipchain.systems.Cluster`, or a node or accelerator name with ``n_gpus`` (without it,
    the GPU count is not checked). Errors: tp × pp × dp ≠ the GPU count; TP not dividing the attention heads; PP ×
    virtual stages not dividing the layers; interleaving without pipelining or with micro-batches not a multiple of
    PP (Megatron-LM's requirement); EP > 1 on a dense model, EP not dividing the experts or the data-parallel degree
    (expert-parallel groups are carved out of the data-parallel ranks). Warnings: TP crossing nodes; fewer
    micro-batches than stages; ZeRO-2/3 combined with PP (DeepSpeed does not support it); ZeRO with DP = 1;
    sequence parallelism without TP.

    >>> validate(Plan(tp=8, pp=16, dp=8, microbatches=64), "GPT-3-175B", "A100", n_gpus=1024)
    ()
    >>> validate(Plan(tp=16, pp=8, dp=8, microbatches=64), "175B")[0]
    'TP = 16 spans 2 nodes of 8 GPUs: its all-reduces, four per layer per micro-batch, leave NVLink'
    >>> validate(Plan(tp=8, pp=16, dp=4), "175B", systems.cluster("A100", 1024))
    Traceback (most recent call last):
    ...
    ValueError: tp × pp × dp = 8 × 16 × 4 = 512, but the cluster has 1024 GPUs
    """
    if not isinstance(plan, Plan):
        raise ValueError(f"plan must be a Plan, got {plan!r}")
    m = models.get(model)
    c = _cluster(cluster, n_gpus, plan)
    g = c.gpus_per_node
    if plan.n_gpus != c.n_gpus:
        raise ValueError(f"tp × pp × dp = {plan.tp} × {plan.pp} × {plan.dp} = {plan.n_gpus}, but the cluster "
                         f"has {c.n_gpus} GPUs")
    activations.check_split(plan.tp, m.heads, m.hidden, m.name)  # the one tp-split rule (and its message)
    if m.layers % (plan.pp * plan.virtual_stages):
        raise ValueError(f"pp × virtual_stages = {plan.pp} × {plan.virtual_stages} must divide the {m.layers} "
                         f"layers of {m.name}")
    if plan.virtual_stages > 1 and plan.pp == 1:
        raise ValueError("virtual_stages > 1 (interleaving) needs pipeline parallelism (pp > 1)")
    if plan.virtual_stages > 1 and plan.microbatches % plan.pp:
        raise ValueError(f"with interleaving, microbatches ({plan.microbatches}) must be a multiple of pp "
                         f"({plan.pp})")
    if plan.ep > 1:
        if not m.experts:
            raise ValueError(f"ep = {plan.ep} needs a mixture-of-experts model; {m.name} is dense")
        if m.experts % plan.ep:
            raise ValueError(f"ep = {plan.ep} must divide the {m.experts} experts of {m.name}")
        if plan.dp % plan.ep:
            raise ValueError(f"ep = {plan.ep} must divide dp = {plan.dp}: experts are spread over the "
                             f"data-parallel ranks")
    warnings = []
    if plan.tp > g:
        warnings.append(f"TP = {plan.tp} spans {math.ceil(plan.tp / g)} nodes of {g} GPUs: its all-reduces, four "
                        f"per layer per micro-batch, leave NVLink")
    if plan.pp > 1 and plan.microbatches < plan.pp:
        warnings.append(f"{plan.microbatches} micro-batches for {plan.pp} stages: the pipeline never fills "
                        f"(bubble {fmt_percent(bubble_fraction(plan.pp, plan.microbatches, plan.virtual_stages), decimals=0)} of ideal)")
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
    stays inside a node ("intra-node"), leaves it ("inter-node"), or is trivial ("none", size 1); ``link`` is the
    link its traffic crosses (the node's intra- or inter-node link)."""

    size: int
    stride: int
    scope: str
    link: links.Link


@dataclass(frozen=True)
class Placement:
    """Where each parallel dimension's group sits (:func:`placement`); ``ep`` is ``None`` without expert
    parallelism. ``items()`` lists the groups in use by name."""

    tp: Group
    pp: Group
    dp: Group
    ep: Group | None = None

    def items(self) -> list:
        """``[(name, Group), ...]`` for tp, pp, dp (and ep when used)."""
        return [(k, g) for k in ("tp", "pp", "dp", "ep") if (g := getattr(self, k)) is not None]


def _group(size: int, stride: int, node: systems.Node) -> Group:
    g, span = node.gpus_per_node, size * stride
    if size == 1:
        return Group(size, stride, "none", node.intra)
    inside = span <= g and g % span == 0
    return Group(size, stride, "intra-node" if inside else "inter-node", node.intra if inside else node.inter)


def placement(plan: Plan, cluster="A100") -> Placement:
    """Where each group sits on ``cluster``'s nodes, ranks laid out TP innermost, then PP, then DP; the
    expert-parallel group is the first ``ep`` ranks of each data-parallel group.

    >>> [(k, g.stride, g.scope) for k, g in placement(Plan(tp=2, pp=4, dp=16), "H100").items()]
    [('tp', 1, 'intra-node'), ('pp', 2, 'intra-node'), ('dp', 8, 'inter-node')]
    """
    if not isinstance(plan, Plan):
        raise ValueError(f"plan must be a Plan, got {plan!r}")
    node = cluster.node if isinstance(cluster, systems.Cluster) else systems.node(cluster)
    inner = plan.tp * plan.pp
    return Placement(_group(plan.tp, 1, node), _group(plan.pp, plan.tp, node), _group(plan.dp, inner, node),
                     _group(plan.ep, inner, node) if plan.ep > 1 else None)


# --- the pipeline bubble -------------------------------------------------------------------------------------------
# The formulas live in chipchain.schedules (one home, one list of schedule names); these are the entry points the
# plan analysis uses, kept with their signatures.

#: (p − 1)/(v·m), :func:`chipchain.schedules.bubble_fraction` (GPipe, 1F1B and the interleaved schedule)
bubble_fraction = schedules.bubble_fraction


def idle_share(pp, microbatches, virtual_stages=1):
    """Share of the whole step each GPU sits idle in the bubble of 1F1B (interleaved with ``virtual_stages`` > 1):
    ``(p − 1)/(v·m + p − 1)`` = b/(1 + b) for b = :func:`bubble_fraction`; element-wise
    (:func:`chipchain.schedules.idle_share`).

    >>> round(idle_share(16, 64), 3)
    0.19
    """
    return schedules.idle_share("interleaved", pp, microbatches, virtual_stages)


#: the pipeline schedules DeepSeek-V3's Table 2 compares (:data:`chipchain.schedules.TABLE2`): 1F1B (Narayanan et
#: al. 2021, PipeDream-Flush), ZB-H1 (Qi et al. 2024; the report's "ZB1P") and DualPipe (DeepSeek-AI 2024, Sec. 3.2.1)
PIPELINE_SCHEDULES = schedules.TABLE2


def schedule_bubble(schedule, pp, f=1.0, b=2.0, w=1.0, fb=None) -> float:
    """Pipeline bubble of one iteration of a schedule of DeepSeek-V3's Table 2, in the units of the chunk times
    (:func:`chipchain.schedules.bubble`):

    * 1F1B:      (PP − 1)(F + B)
    * ZB-H1 (the report's ZB1P, accepted as a name):  (PP − 1)(F + B − 2W)
    * DualPipe:  (PP/2 − 1)(F&B + B − 3W)

    F = time of a forward chunk, B = time of a full backward chunk (input and weight gradients), W = time of its
    "backward for weights" part (so W ≤ B), F&B = ``fb``, the time of a forward and a backward chunk run overlapped
    (default F + B: overlap hides communication, not compute). The bubble does not depend on the number of
    micro-batches m; over the ideal time m(F + B), the 1F1B bubble is :func:`bubble_fraction` (p − 1)/m. DualPipe
    needs an even PP. With the usual F : B : W = 1 : 2 : 1 and PP = 16:

    >>> [schedule_bubble(s, 16) for s in PIPELINE_SCHEDULES]
    [45.0, 15.0, 14.0]
    """
    try:
        name = schedules.canonical(schedule)
    except KeyError:
        name = schedule
    s = _check.choice("schedule", name, PIPELINE_SCHEDULES)
    p = _check.integer("pp", pp, minimum=2)
    return schedules.bubble(s, p, 1, f, b, w, fb)


# --- communication per step --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CommRow:
    """One kind of traffic in a training step, per GPU: ``count`` operations of ``message_bytes`` each over ``link``
    (a link name), ``sent_bytes`` sent by the GPU in total, ``seconds`` of transfer time (α–β model)."""

    kind: str
    when: str
    link: str
    count: int
    message_bytes: float
    sent_bytes: float
    seconds: float


def communication(plan: Plan, model, cluster="A100", recipe="mixed-adam") -> tuple:
    """Traffic of one training step per GPU, by kind, with times from :mod:`chipchain.comms` over the link the
    placement on ``cluster`` dictates (its intra-node link inside a node, its inter-node link across nodes;
    per-direction bandwidth).

    * **TP**: 4 all-reduces per layer per micro-batch (2 forward, 2 backward; 6 with full recomputation), each of
      b·s·h 16-bit elements (Shoeybi et al. 2019, §3; with sequence parallelism an all-gather plus a reduce-scatter
      of the same total, Korthikanti et al. 2022 §4.2.2).
    * **PP**: per micro-batch and virtual stage one activation forward and one gradient backward, b·s·h elements,
      split over the TP ranks (the scatter/gather optimisation, Narayanan et al. 2021 §4.1).
    * **DP**: the gradients of the GPU's Ψ/(t·p) parameters (``recipe``'s gradient bytes each): a ring all-reduce (2Ψ
      bytes per GPU in the limit); ZeRO-1/2 a reduce-scatter plus an all-gather (the same); ZeRO-3 a reduce-scatter
      and two all-gathers of the weights, forward and backward (3Ψ) (Rajbhandari et al. 2020, §7).
    * **EP** (mixture-of-experts models): 4 all-to-alls per layer per micro-batch (dispatch and combine, forward and
      backward), each of b·s·h·k 16-bit elements for k experts per token (every layer treated as an MoE layer; an
      upper bound).

    >>> rows = communication(Plan(tp=8, pp=16, dp=8, microbatches=64), "175B", "A100")
    >>> [(r.kind, r.link, round(r.sent_bytes / 1e9, 1)) for r in rows]
    [('TP all-reduce', 'NVLink3', 135.3), ('PP send/recv', 'IB-HDR', 0.8), ('DP gradient all-reduce', 'IB-HDR', 4.8)]
    """
    m = models.get(model)
    where = placement(plan, cluster)
    act = 2.0 * plan.microbatch * m.seq * m.hidden
    rows = []
    if plan.tp > 1:
        count = (6 if plan.recompute == "full" else 4) * (m.layers // plan.pp) * plan.microbatches
        ln = where.tp.link
        t1 = comms.ring_allreduce_time(act, plan.tp, ln.bandwidth_per_direction, ln.latency)
        rows.append(CommRow("TP all-reduce", "every layer, forward and backward", ln.name, count, act,
                            count * comms.allreduce_bytes_per_rank(act, plan.tp), count * t1))
    if plan.pp > 1:
        count = 2 * plan.microbatches * plan.virtual_stages
        msg, ln = act / plan.tp, where.pp.link
        rows.append(CommRow("PP send/recv", "every micro-batch, between stages", ln.name, count, msg, count * msg,
                            count * comms.p2p_time(msg, ln.bandwidth_per_direction, ln.latency)))
    if plan.ep > 1:
        count = 4 * (m.layers // plan.pp) * plan.microbatches
        msg, ln = act * m.experts_active, where.ep.link
        rows.append(CommRow("EP all-to-all", "every MoE layer, forward and backward", ln.name, count, msg,
                            count * (plan.ep - 1) / plan.ep * msg,
                            count * comms.alltoall_time(msg, plan.ep, ln.bandwidth_per_direction, ln.latency)))
    if plan.dp > 1:
        grads = memory.recipe(recipe).gradients * m.params / (plan.tp * plan.pp)
        ln = where.dp.link
        bw, lat, d = ln.bandwidth_per_direction, ln.latency, plan.dp
        if plan.zero == 3:
            t = comms.reduce_scatter_time(grads, d, bw, lat) + 2 * comms.allgather_time(grads, d, bw, lat)
            rows.append(CommRow("DP ZeRO-3 gather + reduce-scatter", "every layer (gather), end of step", ln.name,
                                3, grads, 3 * (d - 1) / d * grads, t))
        else:
            kind = "DP gradient all-reduce" if plan.zero == 0 else f"DP ZeRO-{plan.zero} reduce-scatter + gather"
            rows.append(CommRow(kind, "end of step", ln.name, 1, grads, comms.allreduce_bytes_per_rank(grads, d),
                                comms.ring_allreduce_time(grads, d, bw, lat)))
    return tuple(rows)


def zero_traffic_factor(zero) -> float:
    """Data-parallel traffic per GPU per step, in units of the gradient buffer Ψ (16-bit), in the limit of many
    ranks: 2 for plain DP and ZeRO-1/2 (all-reduce = reduce-scatter + all-gather), 3 for ZeRO-3/FSDP (a reduce-scatter
    of gradients plus an all-gather of weights in the forward and again in the backward pass). Rajbhandari et al.
    2020, §7.

    >>> [zero_traffic_factor(z) for z in range(4)]
    [2.0, 2.0, 2.0, 3.0]
    """
    s = _check.integer("zero", zero, minimum=0)
    if s > 3:
        raise ValueError(f"zero must be 0, 1, 2 or 3, got {zero!r}")
    return 3.0 if s == 3 else 2.0


# --- one plan, analysed -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Analysis:
    """Everything the book says about one plan on one cluster: memory per GPU (a :class:`~chipchain.memory.Ledger`)
    and whether it fits, placement, traffic, bubble, estimated step time and its parts (seconds), and warnings."""

    plan: Plan
    ledger: object
    fit: object
    placement: Placement
    comm: tuple
    bubble: float
    idle: float
    compute_seconds: float
    step_seconds: float
    warnings: tuple


def step_compute_seconds(plan: Plan, model, peak_flops, mfu) -> float:
    """Compute time of one step: 6·Ψ·tokens (8·Ψ·tokens with full recomputation, one more forward pass) over
    n_gpus · ``peak_flops`` · ``mfu`` (Kaplan et al. 2020; Korthikanti et al. 2022 for the recomputation).

    >>> round(step_compute_seconds(Plan(tp=8, pp=16, dp=8, microbatches=192), "175B", 312e12, 0.5), 2)
    20.68
    """
    m = models.get(model)
    per_token = compute.FLOPS_PER_PARAM_TOKEN + (2.0 if plan.recompute == "full" else 0.0)   # + one forward
    flops = compute.training_flops(m.params, plan.batch * m.seq, flops_per_param_token=per_token)
    return compute.training_time(flops, plan.n_gpus, peak_flops, mfu)


def analyze(plan: Plan, model, cluster="A100", *, n_gpus=None, recipe="mixed-adam", mfu=0.5, dp_overlap=0.0,
            reserve=0.0, dtype="bf16", peak_flops=None) -> Analysis:
    """Validate ``plan`` on ``cluster`` (as :func:`validate`) and estimate its memory per GPU, traffic and step time.

    Step time = compute × (1 + bubble) + TP + PP time + exposed DP time (:func:`chipchain.comms.exposed_seconds`,
    ``dp_overlap``); compute is :func:`step_compute_seconds` at ``peak_flops`` (None: the dense peak at ``dtype``)
    and ``mfu``. An estimate: it ignores overlap of TP and PP traffic with compute and the embedding layers.

    >>> a = analyze(Plan(tp=8, pp=16, dp=8, zero=1, microbatches=64, sequence_parallel=True,
    ...                  recompute="selective"), "175B", "A100", n_gpus=1024)
    >>> round(a.ledger.total / 1e9, 1), a.fit.fits, round(a.bubble, 3)
    (17.8, True, 0.234)
    """
    m = models.get(model)
    c = _cluster(cluster, n_gpus, plan)
    warnings = validate(plan, m, c)
    L = memory.ledger(m, recipe, microbatch=plan.microbatch, tp=plan.tp, pp=plan.pp, dp=plan.dp,
                      zero=plan.zero, sequence_parallel=plan.sequence_parallel, recompute=plan.recompute,
                      microbatches=plan.microbatches, virtual_stages=plan.virtual_stages)
    fit = L.fits(c.accelerator, reserve)
    rows = communication(plan, m, c, recipe)
    bub = bubble_fraction(plan.pp, plan.microbatches, plan.virtual_stages)
    peak = c.accelerator.peak_flops(dtype) if peak_flops is None else _check.positive("peak_flops", peak_flops)
    comp = step_compute_seconds(plan, m, peak, mfu)
    dp_s = sum(r.seconds for r in rows if r.kind.startswith("DP"))
    comm_s = sum(r.seconds for r in rows) - dp_s + comms.exposed_seconds(
        dp_s, _check.probability("dp_overlap", dp_overlap), comp)
    return Analysis(plan, L, fit, placement(plan, c), rows, bub,
                    idle_share(plan.pp, plan.microbatches, plan.virtual_stages), comp, comp * (1 + bub) + comm_s,
                    warnings)
