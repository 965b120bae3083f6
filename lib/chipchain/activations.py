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
#: what "selective" recomputation may recompute, as Megatron-Core names the modules (``recompute_modules``): the
#: attention core (Korthikanti et al.'s selective recomputation, the default), the layer norms, MLA's
#: up-projections, a dense MLP, an MoE layer's activation function, the whole MoE layer, its shared experts
RECOMPUTE_MODULES = ("core_attn", "layernorm", "mla_up_proj", "mlp", "moe_act", "moe", "shared_experts")


def recompute_modules(recompute, modules=()) -> tuple:
    """The modules a recomputation choice recomputes: ``"selective"`` with no ``modules`` is Korthikanti et al.'s
    (the attention core), with ``modules`` those (names of :data:`RECOMPUTE_MODULES`); ``"none"`` and ``"full"``
    take no module list.

    >>> recompute_modules("selective"), recompute_modules("selective", ("layernorm", "mla_up_proj"))
    (('core_attn',), ('layernorm', 'mla_up_proj'))
    """
    rc = _check.choice("recompute", recompute, RECOMPUTE)
    mods = tuple(modules or ())
    for x in mods:
        _check.choice("recompute_modules", x, RECOMPUTE_MODULES)
    if mods and rc != "selective":
        raise ValueError(f"recompute_modules {mods} needs recompute='selective', got {rc!r}")
    return (mods or ("core_attn",)) if rc == "selective" else ()


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
                               flash=False, *, kv_heads=None, head_dim=None, ffn=None, mlp_matrices=2, dropout=True,
                               fp8=False, experts_active=None, expert_ffn=None, modules=(), latent=None) -> float:
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

    The 34 is the paper's GPT layer, counted tensor by tensor (bytes per sbh): two layer-norm inputs 4; the
    attention block's input 2, Q 2, K and V 4, the output projection's input 2; the MLP's input 2, its activation
    function's input 2f/h and the second matrix's input 2f/h (f = 4h); two dropout masks 2. Other shapes count the
    same tensors (keyword arguments): grouped-query attention keeps K and V for ``kv_heads`` of the ``heads``
    (4·n_kv/a); heads of ``head_dim`` other than h/a scale Q, K, V and the projection's input by a·d_h/h; a gated MLP (``mlp_matrices`` = 3, SwiGLU) keeps the gate and up outputs, 4f/h, for ``ffn`` f; models
    trained without dropout (``dropout=False``) keep no masks and 2 rather than 5 bytes per attention score;
    ``fp8`` training (Transformer Engine) keeps the four matrix-multiply inputs in one byte; a mixture-of-experts
    layer (``experts_active`` k experts of width ``expert_ffn``) keeps, instead of the dense MLP, k copies of each
    token's MLP input and of its experts' intermediates. Selective recomputation of other ``modules`` than the
    attention core (:data:`RECOMPUTE_MODULES`) drops what each rebuilds: the layer norms' outputs ("layernorm"),
    the up-projected Q, K and V of multi-head latent attention, which keeps its ``latent`` width instead
    ("mla_up_proj"), a dense MLP's or a whole MoE layer's insides ("mlp", "moe"), an expert activation's output
    ("moe_act").

    16-bit activations, 1-byte dropout masks. Result in bytes. GPT-3 175B (s = 2048, h = 12288, a = 96, b = 1):
    5as/h = 80, so one layer holds 114·sbh ≈ 2.87 GB without parallelism:

    >>> round(activation_bytes_per_layer(2048, 1, 12288, 96) / 1e9, 2)
    2.87
    >>> round(activation_bytes_per_layer(2048, 1, 12288, 96, tp=8, sequence_parallel=True) / 1e6)
    359

    Llama 3 70B (GQA 8 of 64 heads, SwiGLU f = 3.5h, no dropout) with FlashAttention keeps 33.5·sbh, 27·sbh in FP8:

    >>> l3 = dict(kv_heads=8, ffn=28672, mlp_matrices=3, dropout=False)
    >>> [activation_bytes_per_layer(1, 1, 8192, 64, flash=True, fp8=f, **l3) / 8192 for f in (False, True)]
    [33.5, 27.0]
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
    mods = recompute_modules(rc, modules) if rc == "selective" else ()
    if modules and rc != "selective":
        recompute_modules(rc, modules)                   # the message
    _check.flag("flash", flash)
    _check.flag("dropout", dropout)
    _check.flag("fp8", fp8)
    kv = a if kv_heads is None else _check.integer("kv_heads", kv_heads)
    if a % kv:
        raise ValueError(f"kv_heads ({kv}) must divide heads ({a})")
    f = 4 * h if ffn is None else _check.integer("ffn", ffn)
    q = 1.0 if head_dim is None else a * _check.integer("head_dim", head_dim) / h     # query width over h
    mm = _check.integer("mlp_matrices", mlp_matrices)
    if mm not in (2, 3):
        raise ValueError(f"mlp_matrices must be 2 (GELU MLP) or 3 (gated, SwiGLU), got {mm}")
    sbh = float(s) * b * h
    if rc == "full":
        return 2 * sbh / (t if sequence_parallel else 1)
    mm_in = 1.0 if fp8 else 2.0                     # a matrix multiply's saved input, bytes per element
    r = f / h
    if experts_active is None:
        mlp_split = (mm - 1) * 2 * r + mm_in * r        # activation-function input(s) + the second matrix's input
        mlp_rep = mm_in                                  # the first matrix's input
        if "mlp" in mods:
            mlp_split = 0.0
    else:
        k = _check.integer("experts_active", experts_active)
        re_ = _check.positive("expert_ffn", expert_ffn) / h
        mlp_split = k * ((mm - 1) * 2 * re_ + (0.0 if "moe_act" in mods else mm_in * re_))
        mlp_rep = mm_in * (1 + k)                        # the router's input and the k dispatched copies
        if "moe" in mods:
            mlp_split, mlp_rep = 0.0, mm_in
    masks = 2.0 if dropout else 0.0
    norm_out = 0.0 if "layernorm" in mods else 2 * mm_in      # the norms' outputs, the blocks' matmul inputs
    replicated = 4.0 + norm_out - mm_in + mlp_rep + masks     # norms' inputs and outputs, MLP input(s), masks
    qkv = q * (2.0 + 4.0 * kv / a)
    if "mla_up_proj" in mods:
        if latent is None:
            raise ValueError("recomputing mla_up_proj needs the model's latent width (latent)")
        qkv = 2.0 * _check.positive("latent", latent) / h
    split = qkv + q * mm_in + mlp_split                       # Q, K and V, the output projection's input, the MLP
    linear = (replicated + split) / t if sequence_parallel else replicated + split / t
    per_score = 5.0 if dropout else 2.0
    scores = 0.0 if "core_attn" in mods or flash else per_score * a * s / (h * t)
    return sbh * (linear + scores)


def activation_bytes_per_stage(seq, microbatch, hidden, heads, layers, pp=1, tp=1, sequence_parallel=False,
                               recompute="none", microbatches=None, virtual_stages=1, flash=False, *,
                               offload_layers=0, **shape) -> float:
    """Activation bytes on the busiest pipeline stage (the first) under the 1F1B schedule.

    The first stage holds L/p layers (⌈L/p⌉ when p does not divide L) for min(p, m) micro-batches in flight, i.e. about L layers' worth when
    m ≥ p; the interleaved schedule with v virtual stages multiplies this by (1 + (p − 1)/(p·v)) (Korthikanti et al.
    2022, §4.2.3). ``microbatches`` m defaults to p. Embedding and output-layer activations are left out (the paper
    finds them small). ``offload_layers`` of the stage's layers send their activations to host memory (Megatron's
    ``cpu_offloading_num_layers``) and hold none on the GPU; ``shape`` keywords as
    :func:`activation_bytes_per_layer`. Result in bytes.

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
    per_layer = activation_bytes_per_layer(seq, microbatch, hidden, heads, tp, sequence_parallel, recompute, flash,
                                           **shape)
    factor = 1.0 + (p - 1) / (p * v) if v > 1 else 1.0
    first = -(-l // (p * v)) * v if l % (p * v) else l / p      # the first stage takes the extra layers
    k = _check.integer("offload_layers", offload_layers, minimum=0)
    if k > first:
        raise ValueError(f"offload_layers ({k}) exceeds the {first:g} layers of the busiest stage")
    return per_layer * (first - k) * min(p, m) * factor


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


