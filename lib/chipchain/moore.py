"""The end of easy scaling: foundry process nodes and doubling-time projections.

Moore's law in its 1975 form doubles the transistors on a chip about every two years; the book compares that
pace with slower ones (three and four years) and with the dates TSMC's leading-edge nodes entered volume production
(``data/process_nodes.csv``, each row with its source and check level; node names are marketing labels).

>>> [n.name for n in all_nodes()]
['N7', 'N5', 'N3', 'N2']
>>> round(doubling_projection(2025, 3), 1)
10.1
"""
from __future__ import annotations

from dataclasses import dataclass

from ._lazy import np

from . import _check, _data

__all__ = ["ProcessNode", "get", "names", "all_nodes", "node_intervals", "doubling_projection"]


@dataclass(frozen=True)
class ProcessNode(_data.Record):
    """A foundry process node and the (fractional) year it entered volume production."""

    name: str
    foundry: str
    volume_year: float      #: year, with the month as a fraction (2020.3 ≈ April 2020)
    checked: str
    source: str
    notes: str
    aliases: tuple = ()



def _build():
    for row in _data.rows("process_nodes.csv"):
        yield ProcessNode(name=row["node"], foundry=row["foundry"], volume_year=float(row["volume_year"]),
                          checked=row["checked"], source=row["source"], notes=row["notes"])


_REGISTRY = _data.Registry("process node", ProcessNode, _build, argument="node")


def get(node) -> ProcessNode:
    """A process node by name (``"N5"``); a :class:`ProcessNode` passes through.

    >>> get("n3").volume_year
    2022.9
    """
    return _REGISTRY.get(node)


def names() -> list[str]:
    """Node names in file order (oldest first).

    >>> names()
    ['N7', 'N5', 'N3', 'N2']
    """
    return _REGISTRY.names()


def all_nodes() -> list[ProcessNode]:
    """Every process node, oldest first."""
    return _REGISTRY.all()


def node_intervals() -> dict:
    """Years between successive nodes' volume production, ``{"N7→N5": 2.0, ...}``. TSMC's gaps have widened
    from two years towards three:

    >>> {k: round(v, 1) for k, v in node_intervals().items()}
    {'N7→N5': 2.0, 'N5→N3': 2.6, 'N3→N2': 2.9}
    """
    nodes = all_nodes()
    return {f"{a.name}→{b.name}": b.volume_year - a.volume_year for a, b in zip(nodes, nodes[1:])}


def _years(name, value):
    """A finite year (any sign), or an array of them."""
    if np.ndim(value) == 0:
        return _check.number(name, value, allow_negative=True)
    a = np.asarray(value)
    if a.dtype == bool or not np.issubdtype(a.dtype, np.number):
        raise ValueError(f"{name} must hold real numbers, got dtype {a.dtype}")
    a = a.astype(float)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must hold finite numbers")
    return a


def doubling_projection(year, doubling_time=2.0, base_year=2015.0, base=1.0):
    """Exponential growth with a fixed doubling time: ``x(t) = x₀ · 2^((t − t₀)/T)``.

    ``year`` and ``base_year`` in years (``year`` may be a NumPy array: the result is one per year),
    ``doubling_time`` T in years (> 0), ``base`` x₀ in any unit (the result has its unit). Moore (1975) revised his
    doubling time to two years. Ten years at a three-year doubling time give about 10×, against 32× at two years:

    >>> round(doubling_projection(2025, 3), 1), doubling_projection(2025, 2)
    (10.1, 32.0)
    >>> doubling_projection(np.array([2015, 2019, 2023]), 4).tolist()
    [1.0, 2.0, 4.0]
    """
    y = _years("year", year)
    t0 = _check.number("base_year", base_year, allow_negative=True)
    x0 = _check.positive("base", base)
    doublings = (y - t0) / _check.positive("doubling_time", doubling_time)
    if np.max(np.abs(doublings)) > 1000:
        raise ValueError(f"year={year!r} is over 1,000 doublings from base_year={base_year!r} "
                         f"at doubling_time={doubling_time!r}: the projection overflows")
    return x0 * 2.0 ** doublings
