"""Nodes and clusters: how many accelerators share a server, and which links join them.

A :class:`Node` is one server design from ``data/systems.csv`` (its accelerator, GPUs per node, the link inside
the node, the link between nodes and the NICs per node). A :class:`Cluster` is ``n_gpus`` accelerators built from
one node design. Every function in the library that needs a topology takes a cluster (or a node or accelerator
name, which :func:`cluster` turns into one), so the running example's 1,024 A100 in DGX A100 servers is one object::

    >>> c = cluster("A100", 1024)
    >>> c.node.name, c.n_nodes, c.intra.name, c.inter.name
    ('DGX-A100', 128, 'NVLink3', 'IB-HDR')
    >>> c.inter_bandwidth_per_gpu / 1e9        # one 200 Gb/s HDR port per GPU, per direction
    25.0
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from . import _check, _data, hardware, links

__all__ = ["Node", "Cluster", "get", "node", "names", "all_nodes", "cluster", "GENERIC"]

#: the node used for parts that have no server design of their own in the table
GENERIC = "PCIe-server"


@dataclass(frozen=True)
class Node(_data.Record):
    """One server design: ``gpus_per_node`` accelerators joined by ``intra``, with ``nics_per_node`` ports of
    ``inter`` to the rest of the cluster, and ``host`` the link from each GPU to the CPU's memory (PCIe, or NVLink-C2C
    on a Grace superchip; ``None`` where the catalog has none), which activation and optimizer offloading cross.
    ``accelerator`` is ``None`` only for the generic PCIe server."""

    name: str
    accelerator: object              #: hardware.Accelerator or None
    gpus_per_node: int
    intra: links.Link
    inter: links.Link
    nics_per_node: int
    host: object = None              #: links.Link from a GPU to host memory, or None
    checked: str = "U"
    source: str = ""
    notes: str = ""
    aliases: tuple = ()

    def __post_init__(self):
        _check.integer("gpus_per_node", self.gpus_per_node)
        _check.integer("nics_per_node", self.nics_per_node)

    @property
    def inter_bandwidth_per_gpu(self) -> float:
        """Scale-out bandwidth per GPU, bytes/s per direction: ``nics × B_inter / gpus_per_node``."""
        return self.nics_per_node * self.inter.bandwidth_per_direction / self.gpus_per_node


def _build():
    for row in _data.rows("systems.csv"):
        acc = hardware.get(row["accelerator"]) if row["accelerator"] else None
        yield Node(name=row["name"], accelerator=acc, gpus_per_node=int(row["gpus_per_node"]),
                   intra=links.get(row["intra_link"]), inter=links.get(row["inter_link"]),
                   nics_per_node=int(row["nics_per_node"]),
                   host=links.get(row["host_link"]) if row["host_link"] else None, checked=row["checked"], source=row["source"],
                   notes=row["notes"], aliases=_data.split_aliases(row["aliases"]))


_REGISTRY = _data.Registry("system", Node, _build, argument="system")


def get(system) -> Node:
    """A node design by name or alias (a :class:`Node` passes through).

    >>> get("dgx h100").intra.name
    'NVLink4'
    """
    return _REGISTRY.get(system)


def names() -> list[str]:
    """Canonical names of every node design, in file order.

    >>> names()[:2]
    ['DGX-A100', 'DGX-H100']
    """
    return _REGISTRY.names()


def all_nodes() -> list[Node]:
    """Every node design, in file order."""
    return _REGISTRY.all()


def node(system) -> Node:
    """The node for ``system``: a :class:`Node`, a node name, or an accelerator (name or object), which maps to
    the first node design built on it, or to the generic PCIe server carrying that accelerator.

    >>> node("H800").intra.name, node("MI300X").name, node("MI300X").accelerator.name
    ('NVLink4-H800', 'PCIe-server', 'MI300X')
    """
    if isinstance(system, Node):
        return system
    if isinstance(system, str) and system in _REGISTRY:
        return _REGISTRY.get(system)
    if isinstance(system, (str, hardware.Accelerator)):
        try:
            acc = hardware.get(system)
        except KeyError:
            known = names() + hardware.names()
            raise KeyError(_check.nearest_message(system, known, "system or accelerator")) from None
        for n in all_nodes():
            if n.accelerator is acc:
                return n
        return replace(get(GENERIC), accelerator=acc)
    raise ValueError(f"system must be a node or accelerator name, a Node or an Accelerator, got {system!r}")


@dataclass(frozen=True)
class Cluster:
    """``n_gpus`` accelerators in nodes of one design (the last node may be partly filled)."""

    node: Node
    n_gpus: int

    def __post_init__(self):
        _check.integer("n_gpus", self.n_gpus)
        if self.node.accelerator is None:
            raise ValueError(f"a cluster needs an accelerator; {self.node.name} has none (use node(accelerator))")

    @property
    def accelerator(self):
        """The cluster's :class:`~chipchain.hardware.Accelerator`."""
        return self.node.accelerator

    @property
    def gpus_per_node(self) -> int:
        return self.node.gpus_per_node

    @property
    def n_nodes(self) -> int:
        """Nodes used: ``⌈n_gpus / gpus_per_node⌉``."""
        return math.ceil(self.n_gpus / self.node.gpus_per_node)

    @property
    def intra(self) -> links.Link:
        return self.node.intra

    @property
    def inter(self) -> links.Link:
        return self.node.inter

    @property
    def inter_bandwidth_per_gpu(self) -> float:
        """Scale-out bandwidth per GPU, bytes/s per direction."""
        return self.node.inter_bandwidth_per_gpu

    @property
    def name(self) -> str:
        return f"{self.n_gpus:,} × {self.accelerator.name} ({self.node.name})"


def cluster(system, n_gpus=None) -> Cluster:
    """A :class:`Cluster` of ``n_gpus`` accelerators in ``system`` nodes (see :func:`node` for what ``system`` may
    be). A :class:`Cluster` passes through (``n_gpus`` must then be omitted or equal).

    >>> cluster("DGX-H100", 16).n_nodes
    2
    >>> cluster("H100", 0)
    Traceback (most recent call last):
    ...
    ValueError: n_gpus must be at least 1, got 0
    """
    if isinstance(system, Cluster):
        if n_gpus is not None and _check.integer("n_gpus", n_gpus) != system.n_gpus:
            raise ValueError(f"n_gpus={n_gpus!r} contradicts the cluster's {system.n_gpus}")
        return system
    nd = node(system)
    return Cluster(nd, nd.gpus_per_node if n_gpus is None else _check.integer("n_gpus", n_gpus))
