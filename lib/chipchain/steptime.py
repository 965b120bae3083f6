"""The book's one step-time model: seconds per training step of a parallel plan, from the chapters' pieces.

    T = C · (1 + bubble) + Σ_k exposed_k + T_optimizer

* **C**, compute on the busiest GPU: the FLOPs it executes per step over its dense peak at ``dtype`` times the
  achievable-matmul efficiency η (:func:`chipchain.calibration.matmul_efficiency` fits η on published runs; here it
  is an input). Executed FLOPs per token (:func:`executed_flops_per_token`): 6 × the parameters that multiply activations
  (an untied input embedding is a lookup, not a matmul; the output layer sits on the last stage) + attention, whose
  causal half a FlashAttention kernel skips, + the recomputation's extra forward work. Pipeline stages that do not
  divide the layers evenly run at the pace of the fullest one (:func:`chipchain.parallel.stage_layers`).
* **bubble**: (p − 1)/(v·m) for 1F1B and its interleaved form, or DualPipe's (PP/2 − 1)(F&B + B − 3W) over m(F + B)
  (:func:`chipchain.parallel.schedule_bubble`).
* **exposed_k**: each kind of traffic of :func:`chipchain.traffic.communication` (TP, CP, PP, EP, DP) less what the
  ``framework`` (:mod:`chipchain.frameworks`) hides behind the computation beside it, never more than that
  computation (:func:`chipchain.comms.exposed_seconds`): tensor-parallel traffic beside the GEMMs, ring
  context-parallel traffic beside attention, expert all-to-alls beside another micro-batch, the gradient reduction
  beside the last micro-batch's backward pass (all of them under ZeRO-3 / FSDP, whose gathers are per micro-batch).
* **T_optimizer**: the optimizer step reading and writing the GPU's model states once at memory bandwidth.

MFU, one definition in the book: **6·N·D over the peak** — N the active parameters, D the tokens of the step,
MFU = 6·N·D / (T · n · peak) (Kaplan et al. 2020's count, the one chapter 13's C = 6ND uses); so a run of D tokens
takes C / (n · peak · MFU) exactly. Hardware FLOP utilisation (HFU) counts what the GPUs execute (attention and
recomputation included) and is named apart. Papers that count attention in "MFU" are restated with
:func:`chipchain.calibration.convert_mfu`.

>>> from chipchain import parallel
>>> s = step_time(parallel.Plan(tp=8, pp=8, dp=1, microbatches=64, sequence_parallel=True, recompute="selective"),
...               "175B", "A100", efficiency=0.6)
>>> round(s.seconds, 2), round(s.mfu, 3), round(s.hfu, 3), s.fits
(13.34, 0.517, 0.526, True)
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from . import _check, activations, comms, frameworks, hardware, memory, models, parallel, systems, traffic

__all__ = ["StepTime", "executed_flops_per_token", "step_time", "exposed_floor", "SCHEDULES", "DPStep", "data_parallel_step"]

#: pipeline schedules the step model prices: 1F1B (interleaved when the plan has virtual stages) and DualPipe
SCHEDULES = ("1F1B", "DualPipe")


def _parts(m: models.Model, causal: float):
    """Per-token forward FLOPs: (layers' matmuls, output layer, attention) — attention over the model's sequence."""
    embed = m.vocab * m.hidden
    head = 2.0 * embed                                   # the output projection, a matmul on every token
    lookup = 0.0 if m.tied_embeddings else embed         # an untied input table is read, not multiplied
    layers_mm = 2.0 * (m.active_params - lookup - embed)
    attention = 4.0 * m.layers * m.d_attn * m.seq * causal
    return layers_mm, head, attention


def _recomputed(m: models.Model, layers_mm: float, attn: float, recompute: str, modules=()) -> float:
    """Forward FLOPs per token that recomputation runs again: the attention core (selective, Korthikanti et al.),
    the whole layers (full), or the matmuls of the modules named (a dense MLP, the routed experts, MLA's
    up-projections — estimated from the latent width; layer norms and activation functions add no matmul)."""
    if recompute == "full":
        return layers_mm + attn
    mods = activations.recompute_modules(recompute, modules)
    extra = attn if "core_attn" in mods else 0.0
    if "mlp" in mods:
        dense = m.layers - m.moe_layers
        extra += 2.0 * dense * m.mlp_matrices * m.hidden * (m.ffn or 4 * m.hidden)
    if "moe" in mods and m.is_moe:
        extra += 2.0 * m.expert_params * m.experts_active / m.experts
    if "mla_up_proj" in mods and m.kv_lora_rank:
        extra += 2.0 * m.layers * 2 * m.kv_lora_rank * m.heads * 2 * m.head_dim
    return extra


def executed_flops_per_token(model, *, recompute="none", framework="megatron-core", recompute_modules=()) -> float:
    """FLOPs one training token costs on the GPUs (forward and backward): 3 × (2·N_mm + attention) + the
    recomputation — N_mm the active parameters less an untied input embedding (a lookup), attention
    4·l·d_attn·s per token forward, halved by a FlashAttention kernel on a causal model (the ``framework``'s
    attention), ``recompute`` "selective" adds the attention forward again and "full" the layers' forward.

    Nemotron-4 15B's shape (a 256 k vocabulary, untied embeddings): its input table is a tenth of the parameters
    and costs nothing to read, so a token costs 5 % less than 6N even with attention added back:

    >>> m = models.custom(layers=32, hidden=6144, heads=48, kv_heads=8, seq=4096, vocab=256000, ffn=24576)
    >>> round(m.params / 1e9, 1), round(executed_flops_per_token(m) / (6 * m.params), 3)
    (15.6, 0.951)
    """
    m = models.get(model)
    rc = _check.choice("recompute", recompute, activations.RECOMPUTE)
    layers_mm, head, attn = _parts(m, frameworks.get(framework).causal_share)
    return 3.0 * (layers_mm + head + attn) + _recomputed(m, layers_mm, attn, rc, recompute_modules)


@dataclass(frozen=True)
class StepTime:
    """One training step (s): ``compute`` (model FLOPs on the busiest GPU), ``recompute``, pipeline ``bubble``,
    ``exposed`` traffic by kind (dict; what overlap did not hide), ``optimizer``; ``seconds`` is their sum.
    ``mfu`` is 6ND / (T · n · peak), ``hfu`` the executed FLOPs over the same; ``fits`` and ``memory_bytes`` from
    :func:`chipchain.memory.ledger` with the framework's attention kernel."""

    seconds: float
    compute: float
    recompute: float
    bubble: float
    exposed: dict
    optimizer: float
    comm: tuple                 #: chipchain.traffic.CommRow per kind of traffic (before overlap)
    mfu: float
    hfu: float
    efficiency: float
    tokens: float               #: tokens per step
    plan: parallel.Plan
    memory_bytes: float
    fits: bool
    ledger: object = None       #: the plan's chipchain.memory.Ledger (``memory_bytes`` is its total)
    attention: float = 0.0      #: seconds of ``compute`` + ``recompute`` in the attention core (BF16 on FP8 rows)

    @property
    def exposed_comm(self) -> float:
        """Seconds of traffic on the critical path, all kinds."""
        return sum(self.exposed.values())


def _kind(row_kind: str) -> str:
    return row_kind.split()[0]          # "TP", "CP", "PP", "EP", "DP"


def _exposed(plan, c, fw, rows, window, layers, ep_overlap=None) -> dict:
    """{kind: seconds} of ``rows``' traffic that the computation beside it does not hide: the framework's overlap
    share of each kind within its ``window`` of computation (None: unbounded), the one rule :func:`step_time` and
    :func:`exposed_floor` apply. ``layers``: the busiest GPU's layers (None: no last-bucket floor)."""
    by_kind: dict = {}
    for r in rows:
        by_kind[_kind(r.kind)] = by_kind.get(_kind(r.kind), 0.0) + r.seconds
    # comm-GEMM overlap of TP traffic needs the TP group inside the NVLink domain (Transformer Engine userbuffers)
    tp_inside = "TP" not in by_kind or parallel.placement(plan, c, fw.rank_order).tp.scope != "inter-node"
    share_of = {"TP": fw.tp_overlap if tp_inside else 0.0,
                "CP": fw.cp_overlap if plan.cp_variant == "ring" else 0.0,
                "PP": fw.pp_overlap, "DP": fw.dp_overlap,
                "EP": fw.ep_overlap if ep_overlap is None else float(_check.flag("ep_overlap", ep_overlap))}
    exposed = {}
    for k, t in by_kind.items():
        e = float(comms.exposed_seconds(t, share_of[k], None if window is None else window[k]))
        if k == "DP" and share_of[k] > 0 and layers is not None:   # the last layer's bucket has nothing left to hide
            e = max(e, t / max(layers, 1) * (0 if plan.zero == 3 else 1))        # behind
        exposed[k] = e
    return exposed


def _resolve(plan, model, cluster):
    """(model, cluster) records for ``plan``: the one check :func:`step_time` and :func:`exposed_floor` share."""
    if not isinstance(plan, parallel.Plan):
        raise ValueError(f"plan must be a chipchain.parallel.Plan, got {plan!r}")
    m = models.get(model)
    c = systems.cluster(cluster, plan.n_gpus) if not isinstance(cluster, systems.Cluster) else cluster
    if c.n_gpus != plan.n_gpus:
        raise ValueError(f"the plan uses {plan.n_gpus} GPUs but the cluster has {c.n_gpus}")
    return m, c


def exposed_floor(plan, model, cluster, *, recipe="mixed-adam", framework="megatron-core") -> float:
    """Seconds of ``plan``'s traffic that no amount of computation could hide: :func:`step_time`'s exposed
    communication with every overlap window unbounded, so a lower bound on what it adds to the step (what
    :func:`chipchain.plans.search` prices first, to skip plans whose traffic alone rules them out).

    >>> from chipchain import parallel
    >>> inside, across = (exposed_floor(parallel.Plan(tp=t, dp=1024 // t), "175B", "A100") for t in (8, 32))
    >>> inside < across                # TP 32 crosses nodes, where no GEMM hides its all-reduces
    True
    """
    m, c = _resolve(plan, model, cluster)
    fw = frameworks.get(framework)
    rows = traffic.communication(plan, m, c, recipe, fw.rank_order, fw.dp_links, fw.ep_dispatch)
    return sum(_exposed(plan, c, fw, rows, None, None).values())


def step_time(plan, model, cluster="A100", *, efficiency, dtype="bf16", recipe="mixed-adam",
              framework="megatron-core", schedule="1F1B", expert_imbalance=1.0, reserve=0.0,
              ep_overlap=None, expert_efficiency=None, ep_dispatch=None) -> StepTime:
    """Seconds per training step of ``plan`` (a :class:`chipchain.parallel.Plan`) for ``model`` on ``cluster`` (a
    node or accelerator name or a :class:`~chipchain.systems.Cluster` of the plan's GPU count), the module's model.

    ``efficiency`` η: the fraction of the dense ``dtype`` peak the matmuls achieve (a fitted figure:
    :func:`chipchain.calibration.predict_step` supplies it); ``recipe`` bytes of state (memory, gradient traffic);
    ``framework`` its overlap and attention kernel; ``schedule`` "1F1B" (interleaved with the plan's virtual stages)
    or "DualPipe" (F : B : W = 1 : 2 : 1, F&B = F + B); ``expert_imbalance`` the busiest expert rank's load over the
    mean (1 = balanced); ``reserve`` bytes of memory kept back when judging ``fits``; ``ep_overlap`` True or False
    overrides the framework's expert all-to-all overlap (a recipe flag such as Megatron's
    --overlap-moe-expert-parallel-comm); ``expert_efficiency`` the η of a mixture of experts' routed-expert GEMMs,
    which are narrower than the dense ones (default ``efficiency``); ``ep_dispatch`` "per-expert" or "per-node"
    overrides the framework's way of sending tokens to experts on other nodes (:data:`chipchain.frameworks.EP_DISPATCH`:
    Megatron-Core's all-to-all dispatcher, or DeepEP and HybridEP behind its "flex" dispatcher).

    DeepSeek-V3's published plan, recomputing its RMSNorms and MLA up-projections (DeepSeek-AI 2024, §3.2.3). A
    token crosses InfiniBand once per node it is routed to (at most 4), and DualPipe hides the all-to-all behind
    the computation, "fully" as §3.2.1 says; sent once per expert, twice the bytes would not fit under it:

    >>> from chipchain import parallel
    >>> p = parallel.Plan(tp=1, pp=16, dp=128, ep=64, zero=1, microbatches=120, microbatch=1, recompute="selective",
    ...                   recompute_modules=("layernorm", "mla_up_proj"))
    >>> kw = dict(efficiency=0.5, dtype="fp8", framework="dualpipe", schedule="DualPipe")
    >>> s = step_time(p, "DeepSeek-V3", "H800", **kw)
    >>> sorted(s.exposed), round(sum(r.seconds for r in s.comm if r.kind.startswith("EP")), 1), s.exposed["EP"], s.fits
    (['DP', 'EP', 'PP'], 8.0, 0.0, True)
    >>> round(step_time(p, "DeepSeek-V3", "H800", ep_dispatch="per-expert", **kw).exposed["EP"], 1)
    7.1
    """
    m, c = _resolve(plan, model, cluster)
    eta = _check.fraction("efficiency", efficiency)
    fw = frameworks.get(framework)
    sched = _check.choice("schedule", schedule, SCHEDULES)
    imb = _check.positive("expert_imbalance", expert_imbalance)
    if imb < 1:
        raise ValueError(f"expert_imbalance is the busiest rank's load over the mean, at least 1; got {imb!r}")
    peak = hardware.get(c.accelerator).peak_flops(dtype)
    parallel.validate(plan, m, c)

    # compute on the busiest GPU: its stage's layers (and the output layer if it is last), its share of the tokens
    layers_mm, head, attn = _parts(m, fw.causal_share)
    eta_e = eta if expert_efficiency is None else _check.fraction("expert_efficiency", expert_efficiency)
    # the routed experts' forward FLOPs per token, the busiest expert rank waiting for its extra tokens
    experts_mm = 2.0 * m.expert_params * m.experts_active / m.experts * imb if m.is_moe else 0.0
    layers_mm += experts_mm * (imb - 1) / imb
    split = parallel.stage_layers(m.layers, plan.pp * plan.virtual_stages)
    v = plan.virtual_stages
    per_gpu = [sum(split[i::plan.pp]) for i in range(plan.pp)]
    share = [k / m.layers for k in per_gpu]
    loads = [s * (3 * (layers_mm + attn)) for s in share]
    loads[-1] += 3 * head
    extra = _recomputed(m, layers_mm, attn, plan.recompute, plan.recompute_modules)
    busiest = max(range(plan.pp), key=lambda i: loads[i] + share[i] * extra)
    tokens_gpu = plan.microbatch * plan.microbatches * m.seq / plan.cp   # per replica, per TP group
    rate = peak * eta * plan.tp
    # FP8 training runs the linear layers in FP8; attention's core (FlashAttention) stays in BF16
    slow = rate / (peak / hardware.get(c.accelerator).peak_flops("bf16")) if dtype.startswith("fp8") else rate
    attn_extra = attn if plan.recompute == "full" or "core_attn" in activations.recompute_modules(
        plan.recompute, plan.recompute_modules) else 0.0
    mods = activations.recompute_modules(plan.recompute, plan.recompute_modules)
    experts_extra = experts_mm if plan.recompute == "full" else experts_mm / imb if "moe" in mods else 0.0
    rate_e = peak * eta_e * plan.tp
    sb = share[busiest]
    compute = tokens_gpu * ((loads[busiest] - sb * 3 * (attn + experts_mm)) / rate + sb * 3 * attn / slow
                            + sb * 3 * experts_mm / rate_e)
    recompute = tokens_gpu * sb * ((extra - attn_extra - experts_extra) / rate + attn_extra / slow
                                   + experts_extra / rate_e)
    work = compute + recompute
    if sched == "DualPipe":
        if plan.pp % 2:
            raise ValueError(f"DualPipe pairs stage i with stage pp − 1 − i: pp must be even, got {plan.pp}")
        f = work / (3 * plan.microbatches)       # one micro-batch's forward chunk, B = 2F, W = F
        bubble = parallel.schedule_bubble("DualPipe", plan.pp, f, 2 * f, f)
    else:
        bubble = parallel.bubble_fraction(plan.pp, plan.microbatches, v) * work

    # traffic, and what the framework hides behind the computation beside it
    dispatch = fw.ep_dispatch if ep_dispatch is None else ep_dispatch     # checked by traffic.communication
    rows = traffic.communication(plan, m, c, recipe, fw.rank_order, fw.dp_links, dispatch)
    attn_time = tokens_gpu * share[busiest] * 3 * attn / slow
    last_backward = work * 2 / 3 / plan.microbatches
    window = {"TP": work, "CP": attn_time, "PP": work, "EP": work,
              "DP": work if plan.zero == 3 else last_backward}
    exposed = _exposed(plan, c, fw, rows, window, per_gpu[busiest], ep_overlap)

    L = memory.ledger(m, recipe, microbatch=plan.microbatch, tp=plan.tp, pp=plan.pp, dp=plan.dp, zero=plan.zero,
                      sequence_parallel=plan.sequence_parallel, recompute=plan.recompute,
                      microbatches=plan.microbatches, virtual_stages=v, cp=plan.cp, ep=plan.ep,
                      flash=fw.attention == "flash", fp8=dtype.startswith("fp8"), offload_layers=plan.offload_layers,
                      recompute_modules=plan.recompute_modules)
    if plan.offload_layers:
        # activations offloaded to host memory go out during the forward pass and come back for the backward pass,
        # over the GPU's host link, behind the computation of the same phase (Megatron's offloading overlaps them)
        t_way = L.offloaded_per_microbatch * plan.microbatches / c.node.host.bandwidth_per_direction
        exposed["HOST"] = max(0.0, t_way - work / 3) + max(0.0, t_way - 2 * work / 3)
    bw = hardware.get(c.accelerator).require("memory_bandwidth")
    optimizer = 2.0 * L.states / bw                  # read and write the states once
    secs = work + bubble + sum(exposed.values()) + optimizer
    tokens = plan.batch * m.seq
    n = c.n_gpus
    six_n = 6.0 * m.active_params * tokens
    executed = tokens * executed_flops_per_token(m, recompute=plan.recompute, framework=fw,
                                                 recompute_modules=plan.recompute_modules)
    fit = L.fits(c.accelerator, reserve)
    if not math.isfinite(secs) or secs <= 0:
        raise ValueError(f"no finite step time for {plan} on {c.accelerator.name}")
    return StepTime(secs, compute, recompute, bubble, exposed, optimizer, rows, six_n / (secs * n * peak),
                    executed / (secs * n * peak), eta, tokens, plan, L.total, fit.fits, L,
                    attn_time + tokens_gpu * sb * attn_extra / slow)


@dataclass(frozen=True)
class DPStep:
    """Chapter 3's two terms of a data-parallel step: each GPU's computation and the gradient all-reduce (seconds),
    with the all-reduce algorithm priced."""

    compute_seconds: float
    comm_seconds: float
    algorithm: str = ""

    def efficiency(self, dp_overlap=0.0) -> float:
        """Scaling efficiency of this step, :func:`chipchain.comms.dp_scaling_efficiency` with ``dp_overlap``."""
        return comms.dp_scaling_efficiency(self.compute_seconds, self.comm_seconds, dp_overlap)


def data_parallel_step(model, batch_tokens, cluster, n_gpus=None, *, seq=None, efficiency=0.4, dtype="bf16",
                       recipe="mixed-adam", framework="megatron-core", algorithm="fastest",
                       link_efficiency=1.0) -> DPStep:
    """Data parallelism alone (chapter 3): ``n_gpus`` replicas of ``model`` share a fixed global batch of
    ``batch_tokens``; the step model's computation for one GPU's sequences (:func:`step_time` of the plan DP = n, at
    matmul efficiency ``efficiency``) and the all-reduce of the gradients (:func:`chipchain.comms.fastest_allreduce`,
    the one :func:`chipchain.traffic.communication` prices for a data-parallel group of whole nodes; or one of
    :data:`chipchain.comms.ALGORITHMS`), over links at ``link_efficiency`` of their nominal bandwidth (TCP reaches
    less than RDMA). Adding GPUs shrinks each GPU's share of the batch but not its gradients: this is why efficiency
    falls. Every GPU needs at least one whole sequence of ``seq`` tokens (default the model's; else ``ValueError``).

    >>> s = data_parallel_step("Llama-2-7B", 4e6, "DGX-H100", 1024, seq=2048)
    >>> round(s.compute_seconds, 3), round(s.comm_seconds, 3), s.algorithm
    (0.407, 0.068, 'double-tree')
    """
    m = models.get(model)
    if seq is not None and _check.integer("seq", seq) != m.seq:
        m = dataclasses.replace(m, seq=seq)
    b = _check.positive("batch_tokens", batch_tokens)
    node = systems.node(cluster.node if isinstance(cluster, systems.Cluster) else cluster)
    n = node.gpus_per_node if n_gpus is None else _check.integer("n_gpus", n_gpus)
    if b / n < m.seq:
        raise ValueError(f"batch_tokens={b:,.0f} over n_gpus={n:,} is {b / n:,.0f} tokens per GPU, less than one "
                         f"{m.seq:,}-token sequence of {m.name}: data parallelism needs at least one sequence per "
                         "GPU per step")
    one = step_time(parallel.Plan(dp=n), m, systems.cluster(node, n), efficiency=efficiency, dtype=dtype,
                    recipe=recipe, framework=framework)
    compute = (one.compute + one.recompute) * b / (n * m.seq)       # one sequence per GPU, scaled to the batch
    grads = memory.recipe(recipe).gradients * m.params
    eff = _check.fraction("link_efficiency", link_efficiency)
    if algorithm == "fastest":
        algo, t = comms.fastest_allreduce(grads, node, n, eff)
    else:
        algo = _check.choice("algorithm", algorithm, comms.ALGORITHMS)
        t = float(comms.cluster_allreduce_time(grads, node, n, algo, eff))
    return DPStep(compute, t, algo)
