"""The traffic of a parallel plan's training step, per GPU and by kind (TP, CP, PP, EP, DP), on the links its
placement (:func:`chipchain.parallel.placement`) puts each group on, priced by :mod:`chipchain.comms`; the step
model (:mod:`chipchain.steptime`) hides what its framework overlaps.

>>> rows = communication(Plan(tp=8, pp=16, dp=8, microbatches=64), "175B", "A100")
>>> [r.kind.split()[0] for r in rows], rows[0].link
(['TP', 'PP', 'DP'], 'NVLink3')
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from . import _check, comms, expert_routing, frameworks, memory, models
from .parallel import Plan, _node, placement, stage_layers

__all__ = ["CommRow", "communication", "zero_traffic_factor"]


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


def communication(plan: Plan, model, cluster="A100", recipe="mixed-adam", order="tp-cp-dp-pp",
                  dp_links="node", ep_dispatch="per-expert") -> tuple:
    """Traffic of one training step per GPU, by kind, with times from :mod:`chipchain.comms` over the link the
    placement on ``cluster`` in rank ``order`` dictates (its intra-node link inside a node, its inter-node link across nodes;
    per-direction bandwidth). b = micro-batch, s = sequence, h = hidden; with context parallelism each rank holds
    s/cp of the sequence; counts are for the fullest pipeline stage (:func:`stage_layers`).

    * **TP**: 4 all-reduces per layer per micro-batch (2 forward, 2 backward; 6 with full recomputation), each of
      b·(s/cp)·h 16-bit elements (Shoeybi et al. 2019, §3; with sequence parallelism an all-gather plus a
      reduce-scatter of the same total, Korthikanti et al. 2022 §4.2.2).
    * **CP**: the keys and values of the rank's chunk, b·(s/cp)·2·n_kv·d_h 16-bit elements per layer: "all-gather"
      gathers them before attention and reduce-scatters their gradients (2 collectives per layer per micro-batch,
      Dubey et al. 2024 §3.3.2); "ring" passes them rank to rank, cp − 1 hops forward and cp − 1 hops of keys,
      values and their gradients backward (Liu et al. 2023).
    * **PP**: per micro-batch and virtual stage one activation forward and one gradient backward, b·(s/cp)·h
      elements, split over the TP ranks (the scatter/gather optimisation, Narayanan et al. 2021 §4.1).
    * **EP** (mixture-of-experts models): 4 all-to-alls per MoE layer per micro-batch (dispatch and combine, forward
      and backward; 6 with full recomputation), each of b·(s/cp)·h·k 16-bit elements for k experts per token —
      b·(s/(cp·t))·h·k with sequence parallelism, where each of the t TP ranks routes its own share of the tokens.
      A group that spans N nodes sends its in-node share over NVLink while the rest crosses the scale-out link:
      ``ep_dispatch`` "per-expert" one copy per expert on another node, k·(N − 1)/N of them; "per-node" one copy per
      other node its experts sit on, forwarded inside that node (DeepSeek's kernels, DeepEP, HybridEP; at most the
      model's ``route_nodes``): :func:`chipchain.expert_routing.remote_copies`.
    * **DP**: the gradients of the GPU's parameters — Ψ/(t·p) shared, plus its experts' share — (``recipe``'s
      gradient bytes each), over the dp × cp ranks that hold the same weights (experts over dp·cp/ep): a ring
      all-reduce (2Ψ bytes per GPU in the limit); ZeRO-1/2 a reduce-scatter plus an all-gather (the same); ZeRO-3
      (FSDP) a reduce-scatter of gradients and two all-gathers of the weights per micro-batch, forward and
      backward (3Ψ for one micro-batch; Rajbhandari et al. 2020, §7). ``dp_links`` "node" runs a DP ring that leaves
      the node on all the NICs its ranks there own (NCCL's channels); "nic" at one NIC per GPU (DeepSpeed's ZeRO-3
      of 2021: :data:`chipchain.frameworks.DP_LINKS`).

    >>> rows = communication(Plan(tp=8, pp=16, dp=8, microbatches=64), "175B", "A100")
    >>> [(r.kind, r.link, round(r.sent_bytes / 1e9, 1)) for r in rows]
    [('TP all-reduce', 'NVLink3', 135.3), ('PP send/recv', 'IB-HDR', 0.8), ('DP gradient all-reduce', 'IB-HDR', 4.8)]
    """
    m = models.get(model)
    where = placement(plan, cluster, order)
    rec = memory.recipe(recipe)
    tokens = plan.microbatch * m.seq / plan.cp                 # tokens per rank per micro-batch
    act = 2.0 * tokens * m.hidden
    per_gpu = max(stage_layers(m.layers, plan.pp * plan.virtual_stages)) * plan.virtual_stages
    layers = min(per_gpu, m.layers)
    moe = min(layers, math.ceil(m.moe_layers / plan.pp)) if m.is_moe else 0
    extra = 2 if plan.recompute == "full" else 0
    per_node = _check.choice("ep_dispatch", ep_dispatch, frameworks.EP_DISPATCH) == "per-node"
    rows = []
    if plan.tp > 1:
        count = (4 + extra) * layers * plan.microbatches
        ln = where.tp.link
        t1 = comms.ring_allreduce_time(act, plan.tp, where.tp.bandwidth, ln.latency)
        rows.append(CommRow("TP all-reduce", "every layer, forward and backward", ln.name, count, act,
                            count * comms.allreduce_bytes_per_rank(act, plan.tp), count * t1))
    if plan.cp > 1:
        ln, c = where.cp.link, plan.cp
        chunk = 2.0 * tokens * 2 * m.kv_heads * m.head_dim          # this rank's K and V, 16-bit
        bw, lat = where.cp.bandwidth, ln.latency
        if plan.cp_variant == "all-gather":
            count = (2 + extra // 2) * layers * plan.microbatches
            t1 = comms.allgather_time(c * chunk, c, bw, lat)
            rows.append(CommRow("CP all-gather K, V", "every layer: gather forward, reduce-scatter backward",
                                ln.name, count, c * chunk, count * (c - 1) * chunk, count * t1))
        else:
            hops = (3 + extra // 2) * (c - 1) * layers * plan.microbatches   # K, V forward; K, V, dK, dV backward
            rows.append(CommRow("CP ring K, V", "every layer, block by block", ln.name, hops, chunk, hops * chunk,
                                hops * comms.p2p_time(chunk, bw, lat)))
    if plan.pp > 1:
        count = 2 * plan.microbatches * plan.virtual_stages
        msg, ln = act / plan.tp, where.pp.link
        rows.append(CommRow("PP send/recv", "every micro-batch, between stages", ln.name, count, msg, count * msg,
                            count * comms.p2p_time(msg, ln.bandwidth_per_direction, ln.latency)))
    if plan.ep > 1 and moe:
        count = (4 + extra) * moe * plan.microbatches
        # with sequence parallelism each TP rank routes only its s/t of the tokens (Megatron-Core's dispatcher)
        msg = act * m.experts_active / (plan.tp if plan.sequence_parallel else 1)
        ln, e, g = where.ep.link, plan.ep, _node(cluster).gpus_per_node
        local = min(g // where.ep.stride or 1, e) if where.ep.scope == "inter-node" else e   # peers in the node
        t1 = comms.alltoall_time(msg * local / e, local, _node(cluster).intra.bandwidth_per_direction)
        if local < e:                            # the off-node share crosses the scale-out link at the same time
            nodes, k = e // local, m.experts_active
            if per_node:                         # one copy per other node, one message to each
                off = expert_routing.remote_copies(m.experts, k, nodes, node_limit=m.route_nodes) / k
                t1 = max(t1, off * msg / ln.bandwidth_per_direction + (nodes - 1) * ln.latency)
            else:                                # one copy per expert, a message to every peer off the node
                t1 = max(t1, (e - local) / e * msg / ln.bandwidth_per_direction + (e - local) * ln.latency)
        rows.append(CommRow("EP all-to-all", "every MoE layer, forward and backward", ln.name, count, msg,
                            count * (e - 1) / e * msg, count * t1))
    d = plan.dp * plan.cp
    if d > 1:
        shared = m.params - m.expert_params
        psi = (shared + m.expert_params / plan.ep) / (plan.tp * plan.pp)
        grads = rec.gradients * psi
        grp = where.dp if plan.dp > 1 else where.cp
        ln, bw, lat = grp.link, grp.bandwidth, grp.link.latency
        one_nic = _check.choice("dp_links", dp_links, frameworks.DP_LINKS) == "nic" and grp.scope == "inter-node"
        if one_nic:
            bw = ln.bandwidth_per_direction
        if plan.zero == 3:             # weights gathered for every micro-batch, forward and backward
            weights, k = rec.weights * psi, 2 * plan.microbatches
            t = comms.reduce_scatter_time(grads, d, bw, lat) + k * comms.allgather_time(weights, d, bw, lat)
            rows.append(CommRow("DP ZeRO-3 gather + reduce-scatter", "every layer of every micro-batch (gather), "
                                "end of step", ln.name, k + 1, grads, (d - 1) / d * (grads + k * weights), t))
        else:
            kind = "DP gradient all-reduce" if plan.zero == 0 else f"DP ZeRO-{plan.zero} reduce-scatter + gather"
            if grp.stride == 1 and plan.dp > 1 and not one_nic:    # whole nodes in rank order: NCCL's choice (chapter 3)
                t = comms.fastest_allreduce(grads, _node(cluster), d)[1]
            else:                                  # a strided group: one ring over its ranks' links
                t = comms.ring_allreduce_time(grads, d, bw, lat)
            rows.append(CommRow(kind, "end of step", ln.name, 1, grads, comms.allreduce_bytes_per_rank(grads, d), t))
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
