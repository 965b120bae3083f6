"""The model registry: every model the book uses, one row each in ``data/models.csv``.

A :class:`Model` is a decoder-only transformer's shape and size in plain counts (parameters, not billions), with the
row's source and check level. Short aliases resolve to the same row, so ``"175B"``, ``"GPT-3"`` and
``"GPT-3-175B"`` are one model everywhere in the library::

    >>> get("175B") is get("GPT-3-175B")
    True
    >>> m = get("70B")
    >>> m.name, m.layers, m.kv_heads
    ('Llama-2-70B', 80, 8)

A shape that is not in the table is made with :func:`custom`; its parameter count comes from
:func:`params_from_shape` unless given::

    >>> round(custom(layers=32, hidden=4096, heads=32, vocab=32000, seq=4096, ffn=11008, mlp_matrices=3).params / 1e9, 2)
    6.74
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check, _data

__all__ = ["Model", "get", "names", "all_models", "custom", "params_from_shape", "ATTENTION_KINDS"]

#: attention variants: multi-head, grouped-query, multi-head latent (DeepSeek-V2)
ATTENTION_KINDS = ("mha", "gqa", "mla")


@dataclass(frozen=True)
class Model(_data.Record):
    """A decoder-only transformer. Counts are plain numbers; ``seq`` is the training sequence length (tokens).

    ``attention`` is ``"mha"``, ``"gqa"`` or ``"mla"``; MLA models cache ``kv_lora_rank + rope_head_dim`` elements
    per layer. A mixture-of-experts model has ``experts`` routed experts per MoE layer, ``experts_active`` of them
    per token, and ``active_params`` < ``params``.
    """

    name: str
    params: float                       #: total parameters (all resident in memory)
    layers: int
    hidden: int
    heads: int
    seq: int                            #: training sequence length, tokens
    vocab: int = 0
    active_params: float | None = None  #: parameters used per token (None → params: a dense model)
    kv_heads: int | None = None         #: None → heads (multi-head attention)
    head_dim: int | None = None         #: None → hidden / heads
    ffn: int | None = None              #: MLP inner width
    mlp_matrices: int = 2               #: 2 for a GELU MLP, 3 for SwiGLU
    tied_embeddings: bool = False
    attention: str = "mha"
    kv_lora_rank: int | None = None
    rope_head_dim: int | None = None
    experts: int | None = None
    experts_active: int | None = None
    dense_layers: int = 0               #: leading layers with a dense MLP in a mixture-of-experts model
    route_nodes: int | None = None      #: node-limited routing: a token's experts on at most this many nodes
    max_context: int | None = None
    family: str = ""
    year: int | None = None
    checked: str = "U"
    source: str = ""
    notes: str = ""
    aliases: tuple = ()

    def __post_init__(self):
        _check.positive("params", self.params)
        for f in ("layers", "hidden", "heads", "seq"):
            _check.integer(f, getattr(self, f))
        _check.integer("vocab", self.vocab, minimum=0)
        _check.integer("mlp_matrices", self.mlp_matrices)
        _check.flag("tied_embeddings", self.tied_embeddings)
        _check.choice("attention", self.attention, ATTENTION_KINDS)
        if self.active_params is None:
            object.__setattr__(self, "active_params", float(self.params))
        _check.positive("active_params", self.active_params)
        if self.active_params > self.params:
            raise ValueError(f"active_params ({self.active_params:g}) cannot exceed params ({self.params:g})")
        if self.kv_heads is None:
            object.__setattr__(self, "kv_heads", self.heads)
        _check.integer("kv_heads", self.kv_heads)
        if self.kv_heads > self.heads or self.heads % self.kv_heads:
            raise ValueError(f"kv_heads ({self.kv_heads}) must divide heads ({self.heads})")
        if self.head_dim is None:
            if self.hidden % self.heads:
                raise ValueError(f"hidden ({self.hidden}) must be divisible by heads ({self.heads}) "
                                 "unless head_dim is given")
            object.__setattr__(self, "head_dim", self.hidden // self.heads)
        _check.integer("head_dim", self.head_dim)
        if self.ffn is not None:
            _check.integer("ffn", self.ffn)
        if self.attention == "mla":
            _check.integer("kv_lora_rank", self.kv_lora_rank)
            _check.integer("rope_head_dim", self.rope_head_dim, minimum=0)
        if (self.experts is None) != (self.experts_active is None):
            raise ValueError("experts and experts_active must be given together")
        if self.experts is not None:
            _check.integer("experts", self.experts)
            _check.integer("experts_active", self.experts_active)
            if self.experts_active > self.experts:
                raise ValueError(f"experts_active ({self.experts_active}) cannot exceed experts ({self.experts})")
        if self.route_nodes is not None and (self.experts is None or _check.integer("route_nodes", self.route_nodes)
                                             > self.experts_active):
            raise ValueError(f"route_nodes ({self.route_nodes}) is for a mixture-of-experts model, at most its "
                             f"{self.experts_active} active experts")
        d = _check.integer("dense_layers", self.dense_layers, minimum=0)
        if d >= self.layers or (d and self.experts is None):
            raise ValueError(f"dense_layers ({d}) must be fewer than the {self.layers} layers, and only for a "
                             "mixture-of-experts model")

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model (some parameters idle for each token)."""
        return self.experts is not None and self.active_params < self.params

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts (every layer after ``dense_layers``; 0 for a dense model):
        DeepSeek-V3's first 3 of 61 layers are dense (DeepSeek-AI 2024, Sec. 4.2).

        >>> get("DeepSeek-V3").moe_layers, get("70B").moe_layers
        (58, 0)
        """
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def expert_params(self) -> float:
        """Parameters in the routed experts: with k of E experts active per token, N − N_active = (1 − k/E)·N_experts,
        so N_experts = (N − N_active)/(1 − k/E); 0 for a dense model. DeepSeek-V3 (671 B, 37 B active, 8 of 256):
        about 654 B in experts, 17 B that every token uses.

        >>> round(get("DeepSeek-V3").expert_params / 1e9), get("70B").expert_params
        (654, 0.0)
        """
        return (self.params - self.active_params) / (1 - self.experts_active / self.experts) if self.is_moe else 0.0

    @property
    def d_attn(self) -> int:
        """Query width heads × head_dim (the ``d_attn`` of Kaplan et al. 2020, Table 1)."""
        return self.heads * self.head_dim




def params_from_shape(layers, hidden, vocab, heads=None, kv_heads=None, head_dim=None, ffn=None, mlp_matrices=2,
                      tied_embeddings=False, positions=0) -> float:
    """Parameters of a dense decoder from its shape (biases and norms ignored):

    N = l · (2·h·n_h·d_h + 2·h·n_kv·d_h + m·h·f) + V·h·(1 if tied else 2)

    (query and output projections; key and value projections shared by ``n_kv`` heads; an MLP of ``m`` matrices
    of h × f, 3 for SwiGLU and 2 for GELU; the embedding, untied from the output layer unless stated). Defaults:
    ``n_h·d_h = h`` (heads × head_dim = hidden), ``n_kv = n_h``, ``f = 4h``. With those defaults and tied
    embeddings this is the familiar ``12·l·h² + V·h`` (Narayanan et al. 2021, Eq. 2 without the small terms);
    ``positions`` adds a learned position embedding of ``positions × h`` (GPT-3's 2,048 × h).

    Llama 2 70B (80 layers, h = 8,192, 64 heads, 8 KV heads of 128, f = 28,672, V = 32,000; Touvron et al. 2023)
    and GPT-3 175B (96 layers, h = 12,288, V = 50,257; Brown et al. 2020 Table 2.1):

    >>> round(params_from_shape(80, 8192, 32000, 64, 8, 128, 28672, 3) / 1e9, 2)
    68.98
    >>> round(params_from_shape(96, 12288, 50257, tied_embeddings=True, positions=2048) / 1e9, 1)
    174.6
    """
    l, h = _check.integer("layers", layers), _check.integer("hidden", hidden)
    v = _check.integer("vocab", vocab, minimum=0)
    nh = _check.integer("heads", heads) if heads is not None else None
    nkv = _check.integer("kv_heads", kv_heads) if kv_heads is not None else nh
    if head_dim is not None:
        dh = _check.integer("head_dim", head_dim)
        if nh is None:
            raise ValueError("heads is required when head_dim is given")
        q_width, kv_width = nh * dh, nkv * dh
    else:
        if nh is not None and h % nh:
            raise ValueError(f"hidden ({h}) must be divisible by heads ({nh}) unless head_dim is given")
        q_width = h
        kv_width = h if nh is None else nkv * (h // nh)
    f = _check.integer("ffn", ffn) if ffn is not None else 4 * h
    m = _check.integer("mlp_matrices", mlp_matrices)
    _check.flag("tied_embeddings", tied_embeddings)
    pos = _check.integer("positions", positions, minimum=0)
    return float(l * (2 * h * q_width + 2 * h * kv_width + m * h * f) + v * h * (1 if tied_embeddings else 2)
                 + pos * h)


def custom(*, layers, hidden, heads, seq, vocab=0, params=None, name=None, **shape) -> Model:
    """A model that is not in the table, from its shape. ``params`` defaults to :func:`params_from_shape`; any other
    :class:`Model` field (``kv_heads``, ``head_dim``, ``ffn``, ``mlp_matrices``, ``experts``, …) may be given.

    >>> m = custom(layers=96, hidden=12288, heads=96, seq=2048, vocab=50257, tied_embeddings=True)
    >>> m.name, round(m.params / 1e9, 1), m.head_dim
    ('custom 96×12288', 174.6, 128)
    >>> custom(layers=0, hidden=64, heads=1, seq=8)
    Traceback (most recent call last):
    ...
    ValueError: layers must be at least 1, got 0
    """
    unknown = set(shape) - set(Model.__dataclass_fields__) - {"name", "params"}
    if unknown:
        raise ValueError(f"custom() got unknown shape fields: {', '.join(sorted(unknown))}")
    for f in ("layers", "hidden", "heads", "seq"):
        _check.integer(f, locals()[f])
    if params is None:
        keys = ("kv_heads", "head_dim", "ffn", "mlp_matrices", "tied_embeddings")
        params = params_from_shape(layers, hidden, vocab, heads, **{k: shape[k] for k in keys if k in shape})
    name = f"custom {layers}×{hidden}" if name is None else name
    return Model(name=name, params=params, layers=layers, hidden=hidden, heads=heads, seq=seq, vocab=vocab, **shape)


def _build():
    for row in _data.rows("models.csv"):
        opt = lambda c: _data.optional_int(row, c)  # noqa: E731
        active = _data.optional_float(row, "active_params_billion", 1e9)
        yield Model(
            name=row["name"], params=_data.scaled(row["params_billion"], 1e9), layers=int(row["layers"]),
            hidden=int(row["hidden"]), heads=int(row["heads"]), seq=int(row["seq"]), vocab=int(row["vocab"]),
            active_params=active, kv_heads=opt("kv_heads"), head_dim=opt("head_dim"), ffn=opt("ffn"),
            mlp_matrices=int(row["mlp_matrices"]), tied_embeddings=row["tied_embeddings"] == "1",
            attention=row["attention"], kv_lora_rank=opt("kv_lora_rank"), rope_head_dim=opt("rope_head_dim"),
            experts=opt("experts"), experts_active=opt("experts_active"), dense_layers=opt("dense_layers") or 0,
            route_nodes=opt("route_nodes"), max_context=opt("max_context"),
            family=row["family"], year=opt("year"), checked=row["checked"], source=row["source"],
            notes=row["notes"], aliases=_data.split_aliases(row["aliases"]))


_REGISTRY = _data.Registry("model", Model, _build, argument="model")


def get(model) -> Model:
    """Look up a model by name or alias (case, spaces and underscores ignored); a :class:`Model` passes through.

    >>> get("llama 2 70b").head_dim
    128
    >>> get("Llama-4-70B")
    Traceback (most recent call last):
    ...
    KeyError: "unknown model 'Llama-4-70B'; nearest known names: Llama-3-70B, Llama-2-70B, Llama-2-7B, Llama-3.1-405B"
    """
    return _REGISTRY.get(model)


def names() -> list[str]:
    """Canonical names of every model in ``data/models.csv``, in file order.

    >>> names()[:2]
    ['GPT-3-175B', 'Llama-2-7B']
    """
    return _REGISTRY.names()


def all_models() -> list[Model]:
    """Every model in the table, in file order."""
    return _REGISTRY.all()
