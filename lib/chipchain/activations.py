"""Activation memory: what a transformer layer keeps from the forward pass for the backward pass.

The activations grow with micro-batch × sequence × hidden size × layers (unlike the model states, which grow with
the parameter count and live in :mod:`chipchain.memory`), and are cut by tensor and sequence parallelism and by
recomputation (Korthikanti et al. 2022) or checkpointing (Chen et al. 2016). Conventions: counts in, bytes out;
16-bit activations and 1-byte dropout masks, as in Korthikanti et al.

>>> round(activation_bytes_per_layer(2048, 1, 12288, 96) / 1e9, 2)      # GPT-3 175B, one layer, one sequence
2.87
"""
from __future__ import annotations

import math

from . import _check

__all__ = ["RECOMPUTE", "check_split", "activation_bytes_per_layer", "activation_bytes_per_stage",
           "checkpointed_activation_bytes"]

#: recomputation choices, from none to the whole layer
RECOMPUTE = ("none", "selective", "full")


def check_split(tp, heads, hidden, model=None) -> int:
    """The one rule for a tensor-parallel split (Shoeybi et al. 2019, §3): ``tp`` must divide the attention heads
    (each rank holds whole heads) and the hidden size. Returns ``tp``; ``ValueError`` naming the rule (and
    ``model``, a name, when given) otherwise.

    >>> check_split(8, 96, 12288)
    8
    >>> check_split(5, 96, 12288, "GPT-3-175B")
    Traceback (most recent call last):
    ...
    ValueError: tp (5) must divide heads (96) of GPT-3-175B: tensor parallelism gives each rank whole heads
    """
    t = _check.integer("tp", tp)
    of = f" of {model}" if model else ""
    if _check.integer("heads", heads) % t:
        raise ValueError(f"tp ({t}) must divide heads ({heads}){of}: tensor parallelism gives each rank whole heads")
    if _check.integer("hidden", hidden) % t:
        raise ValueError(f"tp ({t}) must divide hidden ({hidden}){of}: tensor parallelism splits the hidden "
                         "dimension")
    return t


def activation_bytes_per_layer(seq, microbatch, hidden, heads, tp=1, sequence_parallel=False, recompute="none",
                               flash=False) -> float:
    """Activation bytes one transformer layer keeps for the backward pass (Korthikanti et al. 2022, Table 2).

    With s = ``seq``, b = ``microbatch`` (the micro-batch size, sequences), h = ``hidden``, a = ``heads``, t = ``tp``:

    * no parallelism: sbh(34 + 5as/h)
    * tensor parallel: sbh(10 + 24/t + 5as/(ht)) — the 10 (layer norms, dropouts, inputs of the blocks) is replicated
    * tensor + sequence parallel: sbh(34/t + 5as/(ht))
    * ``recompute="selective"`` drops the 5as/h attention-score term: sbh(10 + 24/t), or 34sbh/t with sequence
      parallelism
    * ``flash=True`` (FlashAttention: the scores are never written out, only the softmax statistics) drops the
      5as/h term as selective recomputation does (Dao et al. 2022)
    * ``recompute="full"`` keeps only each layer's input, 2sbh (Table 2); with sequence parallelism that input is
      itself split along the sequence, 2sbh/t (as Megatron-LM stores it) — without that split, full recomputation
      would keep *more* than selective for t > 17.

    16-bit activations, 1-byte dropout masks. Result in bytes. GPT-3 175B (s = 2048, h = 12288, a = 96, b = 1):
    5as/h = 80, so one layer holds 114·sbh ≈ 2.87 GB without parallelism:

    >>> round(activation_bytes_per_layer(2048, 1, 12288, 96) / 1e9, 2)
    2.87
    >>> round(activation_bytes_per_layer(2048, 1, 12288, 96, tp=8, sequence_parallel=True) / 1e6)
    359
    >>> activation_bytes_per_layer(2048, 1, 12288, 96, tp=7)
    Traceback (most recent call last):
    ...
    ValueError: tp (7) must divide heads (96): tensor parallelism gives each rank whole heads
    """
    s = _check.integer("seq", seq)
    b = _check.integer("microbatch", microbatch)
    h = _check.integer("hidden", hidden)
    a = _check.integer("heads", heads)
    t = _check.integer("tp", tp)
    check_split(t, a, h)
    _check.flag("sequence_parallel", sequence_parallel)
    rc = _check.choice("recompute", recompute, RECOMPUTE)
    _check.flag("flash", flash)
    sbh = float(s) * b * h
    if rc == "full":
        return 2 * sbh / (t if sequence_parallel else 1)
    linear = 34.0 / t if sequence_parallel else 10.0 + 24.0 / t
    scores = 0.0 if rc == "selective" or flash else 5.0 * a * s / (h * t)
    return sbh * (linear + scores)


def activation_bytes_per_stage(seq, microbatch, hidden, heads, layers, pp=1, tp=1, sequence_parallel=False,
                               recompute="none", microbatches=None, virtual_stages=1, flash=False) -> float:
    """Activation bytes on the busiest pipeline stage (the first) under the 1F1B schedule.

    The first stage holds L/p layers (⌈L/p⌉ when p does not divide L) for min(p, m) micro-batches in flight, i.e. about L layers' worth when
    m ≥ p; the interleaved schedule with v virtual stages multiplies this by (1 + (p − 1)/(p·v)) (Korthikanti et al.
    2022, §4.2.3). ``microbatches`` m defaults to p. Embedding and output-layer activations are left out (the paper
    finds them small). Result in bytes.

    GPT-3 175B on TP 8 × PP 8 with sequence parallelism and selective recomputation (the paper's Table 3 setting),
    micro-batch 1: 96 × 34·sbh/8 ≈ 10.3 GB:

    >>> round(activation_bytes_per_stage(2048, 1, 12288, 96, 96, pp=8, tp=8, sequence_parallel=True,
    ...                                  recompute="selective", microbatches=64) / 1e9, 1)
    10.3
    """
    l = _check.integer("layers", layers)
    p = _check.integer("pp", pp)
    v = _check.integer("virtual_stages", virtual_stages)
    if p * v > l:
        raise ValueError(f"pp × virtual_stages ({p} × {v}) exceeds layers ({l}): every stage holds whole layers")
    m = p if microbatches is None else _check.integer("microbatches", microbatches)
    per_layer = activation_bytes_per_layer(seq, microbatch, hidden, heads, tp, sequence_parallel, recompute, flash)
    factor = 1.0 + (p - 1) / (p * v) if v > 1 else 1.0
    first = -(-l // (p * v)) * v if l % (p * v) else l / p      # the first stage takes the extra layers
    return per_layer * first * min(p, m) * factor


def checkpointed_activation_bytes(layers, every, layer_bytes, boundary_bytes) -> float:
    """Activations with checkpoints every ``every`` layers (Chen et al. 2016): keep the input of every ``every``-th
    layer, ⌈L/k⌉ · boundary, plus one segment's full activations while it is recomputed, k · layer.

    ``layer_bytes``: one layer's full activations; ``boundary_bytes``: one layer's input (2sbh). The price is one
    extra forward pass: forward 1 + backward 2 + recompute 1, i.e. about +33 % compute. Result in bytes.

    GPT-3 175B, b = 1, keep every 4th layer: from 96 × 114·sbh to 24 × 2·sbh + 4 × 114·sbh, 95 % saved:

    >>> sbh = 2048 * 12288
    >>> round(1 - checkpointed_activation_bytes(96, 4, 114 * sbh, 2 * sbh) / (96 * 114 * sbh), 2)
    0.95
    """
    l = _check.integer("layers", layers)
    k = _check.integer("every", every)
    if k > l:
        raise ValueError(f"every ({k}) must not exceed layers ({l})")
    lb = _check.nonnegative("layer_bytes", layer_bytes)
    bb = _check.nonnegative("boundary_bytes", boundary_bytes)
    return math.ceil(l / k) * bb + k * lb


