"""Expert parallelism in numbers: the all-to-all bytes a routed token moves, the bandwidth DeepEP measured, and
auxiliary-loss-free load balancing (chapter 11).

**Bytes.** In a mixture-of-experts layer each token's hidden state (``hidden`` elements) is *dispatched* to the
GPUs holding its ``top_k`` routed experts and the experts' outputs are *combined* back. DeepSeek-V3 dispatches in
FP8 — one byte per element plus one FP32 scale per 128 elements — and combines in BF16, and limits each token to
experts on at most ``node_limit`` nodes, so that a token crosses InfiniBand at most that many times and is forwarded
to the other experts inside a node over NVLink (DeepSeek-AI 2024, Sec. 3.2.2). Per token and MoE layer, forward:

>>> a = all_to_all_bytes("DeepSeek-V3", node_limit=4)
>>> a.dispatch_per_copy, a.combine_per_copy, a.gpu_total, a.internode_total
(7392.0, 14336.0, 173824.0, 86912.0)

DeepEP's low-latency kernels report the bandwidth of exactly these bytes: 128 tokens dispatched to 8 experts in
77 µs is 98 GB/s (:func:`deepep_kernels`).

**Balance.** V3 has no auxiliary balancing loss. A per-expert bias ``b_i`` is added to the token–expert affinity
``s_{i,t}`` *only* to choose the top-k experts (the gate values still use ``s``), and after each step every
overloaded expert's bias falls by γ, every underloaded one's rises by γ (the bias update speed; 0.001 in V3):
:func:`simulate_bias_balancing` runs that rule on a skewed router.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from . import _check, _data, models, units
from ._lazy import np
from .units import fmt_percent

__all__ = ["AllToAllBytes", "all_to_all_bytes", "remote_copies", "token_bytes", "DeepEPKernel", "deepep_kernels",
           "implied_bandwidth", "BalanceRun", "simulate_bias_balancing"]


def token_bytes(hidden, dtype="fp8", scale_block=128, scale_dtype="fp32") -> float:
    """Bytes of one token's hidden state on the wire: ``hidden · b``, plus one ``scale_dtype`` scale per
    ``scale_block`` elements when ``dtype`` is FP8 (V3's fine-grained 1 × 128 activation scaling).

    >>> token_bytes(7168, "fp8"), token_bytes(7168, "bf16")
    (7392.0, 14336.0)
    """
    h = _check.integer("hidden", hidden)
    b = units.bytes_per_element(dtype)
    extra = 0.0
    if dtype == "fp8":
        blk = _check.integer("scale_block", scale_block)
        extra = -(-h // blk) * units.bytes_per_element(scale_dtype)
    return float(h * b + extra)


@dataclass(frozen=True)
class AllToAllBytes:
    """One token's all-to-all traffic in one MoE layer's forward pass, bytes. ``gpu_*``: to and from the GPUs that
    hold its ``top_k`` experts (one copy each); ``internode_*``: across the network, one copy per destination node
    (at most ``node_limit``), the rest forwarded inside the node."""

    model: str
    hidden: int
    top_k: int
    node_limit: int
    dispatch_per_copy: float
    combine_per_copy: float

    @property
    def gpu_dispatch(self) -> float:
        return self.top_k * self.dispatch_per_copy

    @property
    def gpu_combine(self) -> float:
        return self.top_k * self.combine_per_copy

    @property
    def gpu_total(self) -> float:
        return self.gpu_dispatch + self.gpu_combine

    @property
    def internode_total(self) -> float:
        return self.node_limit * (self.dispatch_per_copy + self.combine_per_copy)

    def __str__(self) -> str:
        return (f"{self.model}: {units.fmt_bytes(self.gpu_total)} per token per MoE layer to and from its "
                f"{self.top_k} experts; at most {units.fmt_bytes(self.internode_total)} of it across "
                f"{self.node_limit} nodes")


def all_to_all_bytes(model="DeepSeek-V3", node_limit=None, dispatch_dtype="fp8", combine_dtype="bf16",
                     top_k=None) -> AllToAllBytes:
    """Bytes one token dispatches and combines per MoE layer (forward), for a model with routed experts.

    ``node_limit`` caps the nodes a token's experts sit on (None: every expert on its own node, so every copy
    crosses the network); ``top_k`` defaults to the model's active routed experts.

    >>> all_to_all_bytes("DeepSeek-V3").internode_total == all_to_all_bytes("DeepSeek-V3").gpu_total
    True
    >>> all_to_all_bytes("Llama-3-8B")
    Traceback (most recent call last):
    ...
    ValueError: model Llama-3-8B has no routed experts
    """
    m = models.get(model)
    if not m.is_moe:
        raise ValueError(f"model {m.name} has no routed experts")
    k = m.experts_active if top_k is None else _check.integer("top_k", top_k)
    if k > m.experts:
        raise ValueError(f"top_k must be at most the model's {m.experts} experts, got {k}")
    nl = k if node_limit is None else min(_check.integer("node_limit", node_limit), k)
    return AllToAllBytes(m.name, int(m.hidden), int(k), int(nl), token_bytes(m.hidden, dispatch_dtype),
                         token_bytes(m.hidden, combine_dtype))


def remote_copies(experts, top_k, nodes, *, node_limit=None, per="node") -> float:
    """Copies of one token's hidden state that leave its node in an expert-parallel group spread evenly over
    ``nodes`` nodes, routed uniformly to ``top_k`` of ``experts`` (force-balanced routing, as benchmarks run it).

    ``per`` "expert": one copy per routed expert on another node, ``top_k · (nodes − 1) / nodes`` (an all-to-all
    that sends a row per token and expert, Megatron-Core's); "node": one copy per other node holding any of its
    experts, the rest forwarded inside that node (DeepSeek's dispatch, DeepEP, HybridEP). A node is hit with
    probability 1 − C(E − E/N, k) / C(E, k); with ``node_limit`` M (V3's node-limited routing, M = 4) a token's
    experts span at most M nodes, chosen without regard to its own, so at most M · (N − 1) / N leave it.

    >>> round(remote_copies(256, 8, 8, per="expert"), 2), round(remote_copies(256, 8, 8), 2)
    (7.0, 4.63)
    >>> remote_copies(256, 8, 8, node_limit=4)          # DeepSeek-V3 over EP 64: 3.5 of its 8 copies cross IB
    3.5
    """
    e, k, n = (_check.integer(a, v) for a, v in (("experts", experts), ("top_k", top_k), ("nodes", nodes)))
    if k > e:
        raise ValueError(f"top_k must be at most experts ({e}), got {k}")
    if e % n:
        raise ValueError(f"nodes must divide the {e} experts evenly, got {n}")
    how = _check.choice("per", per, ("expert", "node"))
    if how == "expert":
        return k * (n - 1) / n
    hit = 1.0 - math.comb(e - e // n, k) / math.comb(e, k)        # a given node holds one of its experts
    spanned = n * hit
    if node_limit is not None:
        spanned = min(spanned, _check.integer("node_limit", node_limit))
    return spanned * (n - 1) / n


@dataclass(frozen=True)
class DeepEPKernel:
    """One row of DeepEP's published performance table (H800, CX7 400 Gb/s InfiniBand): bandwidth in bytes/s,
    latency in seconds (None for the normal kernels, which report bandwidth only)."""

    kernel: str
    operation: str
    ep: int
    tokens: int
    hidden: int
    top_k: int
    dispatch_dtype: str
    combine_dtype: str
    latency: float | None
    bandwidth: float
    link: str
    checked: str
    source: str


def deepep_kernels(kernel=None) -> list:
    """DeepEP's measured kernels (``data/deepep_kernels.csv``), optionally only ``"normal"`` or ``"low-latency"``.

    >>> [k.bandwidth / 1e9 for k in deepep_kernels("normal") if k.ep == 8]
    [153.0, 158.0]
    """
    if kernel is not None:
        _check.choice("kernel", kernel, ("normal", "low-latency"))
    out = []
    for r in _data.rows("deepep_kernels.csv"):
        if kernel is None or r["kernel"] == kernel:
            lat = _data.optional_float(r, "latency_us", 1e-6)
            out.append(DeepEPKernel(r["kernel"], r["operation"], int(r["ep"]), int(r["tokens"]), int(r["hidden"]),
                                    int(r["top_k"]), r["dispatch_dtype"], r["combine_dtype"], lat,
                                    float(r["bandwidth_GBps"]) * units.GBPS, r["link"], r["checked"], r["source"]))
    return out


def implied_bandwidth(kernel: DeepEPKernel) -> float:
    """Bytes/s that a low-latency kernel's latency implies: tokens × top_k copies × bytes per copy ÷ latency —
    the quantity DeepEP's table calls its RDMA bandwidth.

    >>> k = [k for k in deepep_kernels("low-latency") if k.ep == 8 and k.operation == "dispatch"][0]
    >>> round(implied_bandwidth(k) / 1e9, 1)
    98.3
    """
    if not isinstance(kernel, DeepEPKernel) or kernel.latency is None:
        raise ValueError("kernel must be a low-latency DeepEPKernel (one with a latency)")
    dtype = kernel.dispatch_dtype if kernel.operation == "dispatch" else kernel.combine_dtype
    return kernel.tokens * kernel.top_k * token_bytes(kernel.hidden, dtype) / kernel.latency


@dataclass(frozen=True)
class BalanceRun:
    """A simulated router: the maximal violation ``max_i load_i / mean load − 1`` at each step (``max_violation``),
    the same router without bias (``unbiased``), and the final biases."""

    n_experts: int
    top_k: int
    tokens: int
    gamma: float
    max_violation: tuple
    unbiased: tuple
    bias: tuple

    def __str__(self) -> str:
        v = self.max_violation
        return (f"{self.n_experts} experts, top-{self.top_k}, {self.tokens:,} tokens a step, γ = {self.gamma:g}: "
                f"the busiest expert carries {fmt_percent(v[0], decimals=0)} more than the mean at step 1 and {fmt_percent(v[-1], decimals=0)} more after "
                f"{len(v)} steps (without the bias: {fmt_percent(self.unbiased[-1], decimals=0)})")


def simulate_bias_balancing(n_experts=64, top_k=8, tokens=1024, steps=200, gamma=1e-3, skew=0.5, seed=0) -> BalanceRun:
    """Auxiliary-loss-free balancing on a router whose experts differ in popularity.

    Each token's affinity to expert i is ``sigmoid(β_i + z)``, z standard normal per token and expert, β_i a fixed
    popularity drawn once with standard deviation ``skew`` (seeded). Each step routes ``tokens`` fresh tokens to the
    top ``top_k`` of affinity + bias, then moves every bias by γ towards balance:
    ``b_i ← b_i + γ · sign(mean load − load_i)``. Returns the load's maximal violation per step, with the bias and
    with the bias held at zero.

    >>> r = simulate_bias_balancing(steps=120, gamma=0.002)
    >>> r.max_violation[-1] < r.max_violation[0] / 2, r.unbiased[-1] > r.max_violation[-1]
    (True, True)
    """
    E = _check.integer("n_experts", n_experts)
    k = _check.integer("top_k", top_k)
    if k >= E:
        raise ValueError(f"top_k must be below n_experts ({E}), got {k}")
    T = _check.integer("tokens", tokens)
    S = _check.integer("steps", steps)
    g = _check.positive("gamma", gamma)
    rng = np.random.default_rng(_check.integer("seed", seed, minimum=0))
    popularity = (rng.standard_normal(E) * _check.nonnegative("skew", skew)).astype(np.float32)
    bias = np.zeros(E, dtype=np.float32)
    mean = T * k / E
    biased, unbiased = [], []
    for _ in range(S):
        s = 1 / (1 + np.exp(-(popularity + rng.standard_normal((T, E), dtype=np.float32))))
        for b, out in ((bias, biased), (None, unbiased)):
            scores = s if b is None else s + b
            kth = np.partition(scores, E - k, axis=1)[:, E - k:E - k + 1]     # each token's k-th largest score
            load = (scores >= kth).sum(axis=0)                                # ties have probability zero
            out.append(float(load.max() / mean - 1))
            if b is not None:
                bias = (bias + g * np.sign(mean - load)).astype(np.float32)
    return BalanceRun(E, k, T, g, tuple(biased), tuple(unbiased), tuple(float(x) for x in bias))
