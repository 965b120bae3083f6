"""When each parallelism becomes communication-bound: the inequality under which its traffic can hide behind compute.

Each cut of chapter 4 sends bytes over a link of bandwidth ``bandwidth`` (bytes/s per direction, per GPU) while the
GPU computes at ``peak_flops`` (FLOP/s). Communication can hide behind computation only if the transfer takes no
longer than the work it overlaps with. Writing that condition out for each cut gives one critical quantity per cut,
always proportional to the ratio peak / bandwidth (FLOPs per byte the link must feed), as in Austin et al. (2025,
"How to Scale Your Model", training chapter) and Liu et al. (2023, Ring Attention, Sec. 3):

* **DP** and **FSDP/ZeRO-3**: tokens per GPU per step T ≥ (n−1)/n · (g/2) · peak/B (:func:`dp_critical_tokens`).
* **TP** (Megatron-LM): hidden size h ≥ (t − 1) · peak / (3B) (:func:`tp_critical_hidden`), whatever the batch.
* **PP**: hidden size × layers per stage h·ℓ ≥ peak / (12B) (:func:`pp_critical_depth`).
* **EP**: expert feed-forward width f ≥ 2(e − 1)/e · peak / (M·B) (:func:`ep_critical_ffn`).
* **CP / ring attention**: tokens per chunk c ≥ peak/B · (kv heads / heads) (:func:`ring_attention_min_chunk`).

Assumptions: dense layers of 12h² parameters (attention 4h², MLP 8h²), 16-bit activations and gradients, ring
collectives at full per-direction bandwidth, perfect overlap (an upper bound on what can hide). Bandwidths are per
direction, per GPU; peaks dense.

>>> round(dp_critical_tokens(312e12, 25e9))           # A100 over one HDR port per GPU
12480
>>> round(tp_critical_hidden(312e12, 300e9, 8))       # A100, TP 8 over NVLink 3
2427
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from . import _check, hardware, memory, systems

__all__ = ["dp_critical_tokens", "fsdp_critical_tokens", "tp_critical_hidden", "pp_critical_depth",
           "ep_critical_ffn", "ring_attention_min_chunk", "CriticalValues", "critical_values", "BatchFloor", "batch_floor"]


def _ratio(peak_flops, bandwidth) -> float:
    return _check.positive("peak_flops", peak_flops) / _check.positive("bandwidth", bandwidth)


def _ring_share(n_ranks) -> float:
    """(n − 1)/n, or 1 in the limit of many ranks (``n_ranks=None``)."""
    if n_ranks is None:
        return 1.0
    return (_check.integer("n_ranks", n_ranks, minimum=2) - 1) / n_ranks


def dp_critical_tokens(peak_flops, bandwidth, n_ranks=None, recipe="mixed-adam") -> float:
    """Tokens per GPU per step above which data parallelism's gradient all-reduce can hide behind the backward pass.

    The ring all-reduce sends 2(n−1)/n · g·Ψ bytes per GPU (g bytes per gradient, from ``recipe`` in
    :data:`chipchain.memory.RECIPES`: 2 for the default); the backward pass computes
    4Ψ·T FLOPs for T tokens. Hidden when 4ΨT/peak ≥ 2(n−1)/n · gΨ/B, i.e.

        T ≥ (n − 1)/n · (g/2) · peak / B

    — the parameter count cancels (Austin et al. 2025: per-device batch > C/W). ``n_ranks`` None is the limit of
    many ranks. Result in tokens.

    >>> round(dp_critical_tokens(989e12, 50e9))        # H100 over one NDR port per GPU
    19780
    >>> round(dp_critical_tokens(312e12, 25e9, n_ranks=2))
    6240
    """
    g = memory.recipe(recipe).gradients
    return _ring_share(n_ranks) * g / 2.0 * _ratio(peak_flops, bandwidth)


def fsdp_critical_tokens(peak_flops, bandwidth, n_ranks=None, param_bytes=2.0) -> float:
    """Tokens per GPU per step above which FSDP/ZeRO-3's traffic can hide behind the whole step.

    ZeRO-3 all-gathers the weights before the forward and again before the backward pass and reduce-scatters the
    gradients: 3(n−1)/n · gΨ bytes per GPU against 6Ψ·T FLOPs (Rajbhandari et al. 2020, Sec. 7). Hidden when
    T ≥ (n − 1)/n · (g/2) · peak/B — the same threshold as plain data parallelism: 1.5× the bytes, spread over
    1.5× the compute it can overlap (forward and backward instead of backward alone). Result in tokens.

    >>> fsdp_critical_tokens(312e12, 25e9) == dp_critical_tokens(312e12, 25e9)
    True
    """
    g = _check.positive("param_bytes", param_bytes)
    return _ring_share(n_ranks) * g / 2.0 * _ratio(peak_flops, bandwidth)


def tp_critical_hidden(peak_flops, bandwidth, tp) -> float:
    """Hidden size above which Megatron-style tensor parallelism over ``tp`` GPUs can hide its all-reduces.

    Per layer and token, the forward pass computes 2 · 12h² FLOPs, split over t GPUs, and runs two all-reduces of
    the 2h-byte activation, each sending 2(t−1)/t of it per GPU (Shoeybi et al. 2019, Sec. 3); the backward pass
    doubles both. Hidden when 24h²/(t · peak) ≥ 8h(t − 1)/(t · B), i.e.

        h ≥ (t − 1) · peak / (3B)

    — independent of the batch: TP's traffic grows with the tokens exactly as its compute does. Result: a hidden
    size.

    >>> round(tp_critical_hidden(989e12, 450e9, 8))     # H100, TP 8 over NVLink 4
    5128
    >>> tp_critical_hidden(312e12, 300e9, 1)
    0.0
    """
    t = _check.integer("tp", tp)
    return (t - 1) * _ratio(peak_flops, bandwidth) / 3.0


def pp_critical_depth(peak_flops, bandwidth) -> float:
    """Hidden size × layers per stage above which a pipeline stage's send to the next can hide behind its compute.

    Per micro-batch of T tokens a stage of ℓ layers computes 24h²·ℓ·T/t FLOPs per GPU (forward) and sends the
    2hT-byte activation, split over its t tensor-parallel GPUs (Narayanan et al. 2021, Sec. 4.1). Hidden when
    h·ℓ ≥ peak / (12B). Result: the product h·ℓ.

    >>> round(pp_critical_depth(312e12, 25e9))           # A100 over HDR: GPT-3 (h = 12,288) needs ℓ ≥ 1
    1040
    """
    return _ratio(peak_flops, bandwidth) / 12.0


def ep_critical_ffn(peak_flops, bandwidth, ep, mlp_matrices=3) -> float:
    """Expert feed-forward width above which expert parallelism's all-to-alls can hide behind the experts' compute.

    Each token goes to k experts: the dispatch and the combine all-to-all each send k·2h bytes per token, (e−1)/e of
    it off the GPU; the experts compute 2·M·h·f FLOPs per token and expert (M = ``mlp_matrices``, 3 for SwiGLU).
    Hidden when 2kMhf/peak ≥ 4kh(e − 1)/(e·B), i.e.

        f ≥ 2(e − 1)/e · peak / (M·B)

    — independent of k and h. Result: an expert FFN width.

    >>> round(ep_critical_ffn(989e12, 50e9, 64))          # H100, EP 64 over NDR
    12981
    """
    e = _check.integer("ep", ep, minimum=2)
    m = _check.integer("mlp_matrices", mlp_matrices)
    return 2.0 * (e - 1) / e * _ratio(peak_flops, bandwidth) / m


def ring_attention_min_chunk(peak_flops, bandwidth, kv_ratio=1.0) -> float:
    """Tokens per GPU (chunk length c) above which ring attention's key/value passing hides behind attention.

    Each ring step a GPU computes its c queries against c keys, 4c²·d FLOPs per head, while it sends its K and V
    chunk on, 2·c·d·2 bytes per key/value head. Hidden when c ≥ peak/B · ``kv_ratio`` (key/value heads over query
    heads: 1 for multi-head, 1/8 for 8 query heads per KV head). Liu et al. 2023, Sec. 3 (block size ≥ F/B).

    >>> round(ring_attention_min_chunk(312e12, 300e9)), round(ring_attention_min_chunk(312e12, 25e9))
    (1040, 12480)
    """
    r = _check.fraction("kv_ratio", kv_ratio)
    return _ratio(peak_flops, bandwidth) * r


@dataclass(frozen=True)
class CriticalValues:
    """The critical value of each cut on one node type: tokens per GPU for DP and FSDP (over the inter-node link),
    hidden size for TP (intra-node), h × layers per stage for PP (inter-node), expert FFN width for EP (inter-node),
    chunk length for ring attention over the intra- and the inter-node link; plus the peak and the two links."""

    node: str
    peak_flops: float
    intra: str
    intra_bandwidth: float
    inter: str
    inter_bandwidth: float
    dp_tokens: float
    fsdp_tokens: float
    tp_hidden: float
    pp_depth: float
    ep_ffn: float
    cp_chunk_intra: float
    cp_chunk_inter: float


def critical_values(system="A100", tp=8, ep=64, dtype="bf16") -> CriticalValues:
    """Every critical value of this module for one node type (any name in :mod:`chipchain.systems`), at the
    accelerator's dense ``dtype`` peak, TP over the node's intra-node link and the rest over its inter-node link.

    >>> t = critical_values("A100")
    >>> round(t.dp_tokens), round(t.tp_hidden), round(t.cp_chunk_intra)
    (12480, 2427, 1040)
    """
    node = systems.node(system)
    peak = hardware.get(node.accelerator).peak_flops(dtype)
    bi, bx = node.intra.bandwidth_per_direction, node.inter.bandwidth_per_direction
    return CriticalValues(node.name, peak, node.intra.name, bi, node.inter.name, bx, dp_critical_tokens(peak, bx),
                      fsdp_critical_tokens(peak, bx), tp_critical_hidden(peak, bi, tp), pp_critical_depth(peak, bx),
                      ep_critical_ffn(peak, bx, ep), ring_attention_min_chunk(peak, bi),
                      ring_attention_min_chunk(peak, bx))


@dataclass(frozen=True)
class BatchFloor:
    """What a global batch allows on a cluster: tokens and sequences per GPU with pure data parallelism, the largest
    DP degree that gives every replica a whole sequence and the largest whose all-reduce still hides, and the
    smallest model-parallel size (TP × PP) that follows from the tighter of the two."""

    tokens_per_gpu: float
    sequences_per_gpu: float
    max_dp_sequences: int
    max_dp_overlap: int
    min_model_parallel: int


def batch_floor(batch_tokens, n_gpus, seq, critical_tokens) -> BatchFloor:
    """The floor on batch per GPU and what it forces. With pure DP each GPU gets ``batch_tokens`` / ``n_gpus``
    tokens; a replica needs at least one sequence of ``seq`` tokens (dp ≤ batch/seq) and, for its gradient
    all-reduce to hide, at least ``critical_tokens`` (:func:`dp_critical_tokens`; with TP × PP the replica's GPUs
    share its tokens and its gradients alike, so the condition is per replica). The rest of the GPUs must go to
    model parallelism: TP × PP ≥ n_gpus / dp_max, rounded up to the nearest divisor of ``n_gpus``.

    4 M tokens over 4,096 GPUs is 1,024 tokens each, half a 2,048-token sequence:

    >>> f = batch_floor(4 * 2**20, 4096, 2048, 12480)
    >>> f.tokens_per_gpu, f.max_dp_sequences, f.max_dp_overlap, f.min_model_parallel
    (1024.0, 2048, 336, 16)
    """
    b = _check.positive("batch_tokens", batch_tokens)
    n = _check.integer("n_gpus", n_gpus)
    s = _check.integer("seq", seq)
    c = _check.positive("critical_tokens", critical_tokens)
    if b < s:
        raise ValueError(f"batch_tokens ({b:g}) must hold at least one sequence of seq = {s} tokens")
    dp_seq = max(1, min(n, int(b // s)))
    dp_overlap = max(1, min(n, int(b // c)))
    need = n / min(dp_seq, dp_overlap)
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    mp = min(d for d in small + [n // d for d in small] if d >= need - 1e-9)
    return BatchFloor(b / n, b / n / s, dp_seq, dp_overlap, mp)
