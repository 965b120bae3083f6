"""Training frameworks as the step-time model sees them: which traffic each setting lets run under compute, and
which attention kernel it uses — one row per framework of ``data/frameworks.csv``, with its source.

Overlap is stated per framework and per kind of traffic (tensor-, pipeline-, context-, expert- and data-parallel),
as a fraction in [0, 1] of that traffic the framework *can* hide behind the computation that runs beside it; what is
hidden is never more than that computation (:func:`chipchain.comms.exposed_seconds`), and the rest is exposed.
``attention`` is "standard" (scores formed in full, the causal half computed and masked) or "flash" (FlashAttention:
fully masked blocks skipped, no scores kept for the backward pass).

>>> f = get("megatron-core")
>>> f.tp_overlap, f.dp_overlap, f.attention
(1.0, 1.0, 'flash')
>>> get("megatron-2022").tp_overlap
0.0
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check, _data

__all__ = ["Framework", "ATTENTION_KERNELS", "DP_LINKS", "EP_DISPATCH", "get", "names", "all_frameworks", "lineage"]

#: how a framework's data-parallel collectives use a node's NICs: "node" — NCCL's rings, one channel per rail, so
#: a ring that leaves a node with k of its ranks in it crosses k NICs at once (chapter 3); "nic" — at one NIC's
#: bandwidth per GPU, as DeepSpeed's ZeRO-3 of 2021 ran (Narayanan et al. 2021, Table 2)
DP_LINKS = ("node", "nic")

#: how a framework's expert all-to-all crosses nodes: "per-expert" — one copy of a token for each of its routed
#: experts on another node (Megatron-Core's all-to-all dispatcher); "per-node" — one copy per other node that holds
#: any of its experts, forwarded inside that node over NVLink (DeepSeek's kernels, DeepEP, NVIDIA's HybridEP;
#: DeepSeek-AI 2024 §3.2.2; :func:`chipchain.expert_routing.remote_copies`)
EP_DISPATCH = ("per-expert", "per-node")

#: attention kernels: "standard" computes the full s × s scores; "flash" skips fully masked blocks (Dao 2023)
ATTENTION_KERNELS = ("standard", "flash")


@dataclass(frozen=True)
class Framework(_data.Record):
    """One training framework's communication overlap (fractions per kind of traffic), attention kernel and rank
    order (Megatron-Core and torchtitan number the pipeline outermost, Meta's Llama 3 framework data parallelism)."""

    name: str
    title: str
    tp_overlap: float
    pp_overlap: float
    cp_overlap: float
    ep_overlap: float
    dp_overlap: float
    attention: str
    rank_order: str             #: how it numbers ranks (:data:`chipchain.parallel.RANK_ORDERS`)
    dp_links: str               #: "node": a DP ring leaving a node crosses all its NICs at once; "nic": one per GPU
    ep_dispatch: str            #: :data:`EP_DISPATCH`: a token's copies across nodes, one per expert or one per node
    base: str                   #: the framework whose kernels it grew from ("" for none): its fitted efficiency stands in
    bibkey: str
    checked: str
    source: str
    notes: str
    aliases: tuple = ()

    def __post_init__(self):
        for f in ("tp_overlap", "pp_overlap", "cp_overlap", "ep_overlap", "dp_overlap"):
            _check.probability(f, getattr(self, f))
        _check.choice("attention", self.attention, ATTENTION_KERNELS)
        _check.choice("rank_order", self.rank_order, ("tp-cp-dp-pp", "tp-cp-pp-dp"))
        _check.choice("dp_links", self.dp_links, DP_LINKS)
        _check.choice("ep_dispatch", self.ep_dispatch, EP_DISPATCH)
        if self.base == self.name:
            raise ValueError(f"framework {self.name!r} cannot be its own base")
        _check.choice("checked", self.checked, _data.CHECK_LEVELS)

    @property
    def causal_share(self) -> float:
        """Share of the full s × s attention work a causal model's kernel does: 1/2 with FlashAttention (blocks
        above the diagonal skipped), 1 for standard attention (computed, then masked)."""
        return 0.5 if self.attention == "flash" else 1.0


def _build():
    for row in _data.rows("frameworks.csv"):
        yield Framework(row["key"], row["name"], *(float(row[k]) for k in (
            "tp_overlap", "pp_overlap", "cp_overlap", "ep_overlap", "dp_overlap")), row["attention"],
            row["rank_order"], row["dp_links"], row["ep_dispatch"], row["base"], row["bibkey"], row["checked"], row["source"], row["notes"], _data.split_aliases(row["aliases"]))


_REGISTRY = _data.Registry("framework", Framework, _build, argument="framework")


def get(framework) -> Framework:
    """One framework by name or alias (a :class:`Framework` passes through); ``KeyError`` with the nearest names."""
    return _REGISTRY.get(framework)


def lineage(framework) -> tuple:
    """The framework and the ones it grew from, newest first (each row's ``base``).

    >>> lineage("megatron-bridge")
    ('megatron-bridge', 'megatron-core', 'megatron-2022', 'megatron-2021')
    """
    out, f = [], get(framework)
    while f.name not in out:
        out.append(f.name)
        if not f.base:
            break
        f = get(f.base)
    return tuple(out)


def names() -> list:
    """Names of every framework, in file order."""
    return _REGISTRY.names()


def all_frameworks() -> tuple:
    """Every framework, in file order."""
    return tuple(_REGISTRY.all())
