"""The end of easy scaling: foundry process nodes and doubling-time projections.

Moore's law in its 1975 form doubles the transistors on a chip about every two years; the book compares that
pace with slower ones (three and four years) and with the dates TSMC's leading-edge nodes entered volume production
(``data/process_nodes.csv``, each row with its source and check level; node names are marketing labels).

>>> [n.name for n in all_process_nodes()]
['N7', 'N5', 'N3', 'N2']
>>> round(doubling_projection(2025, 3), 1)
10.1
"""
from __future__ import annotations

from dataclasses import dataclass

from ._lazy import np

from . import _check, _data, hardware

__all__ = ["ProcessNode", "get", "names", "all_process_nodes", "node_intervals", "doubling_projection", "TransistorPoint",
           "transistor_points", "fit_doubling_time"]


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


def all_process_nodes() -> list[ProcessNode]:
    """Every process node, oldest first."""
    return _REGISTRY.all()


def node_intervals() -> dict:
    """Years between successive nodes' volume production, ``{"N7→N5": 2.0, ...}``. TSMC's gaps have widened
    from two years towards three:

    >>> {k: round(v, 1) for k, v in node_intervals().items()}
    {'N7→N5': 2.0, 'N5→N3': 2.6, 'N3→N2': 2.9}
    """
    nodes = all_process_nodes()
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


@dataclass(frozen=True)
class TransistorPoint:
    """One chip's transistor count in the year it shipped: ``kind`` "microprocessor" (Rupp's 50-year trend data,
    ``data/transistor_counts.csv``) or "accelerator" (this book's catalog, :mod:`chipchain.hardware`)."""

    name: str
    year: float
    transistors: float
    kind: str
    checked: str


#: a die larger than this (mm²) is a whole wafer, not a chip cut from one (the lithography reticle is ~858 mm²)
_WAFER_MM2 = 10_000


def transistor_points(kind=None) -> list:
    """Real transistor counts, oldest first: microprocessors 1971–2021 (Rupp 2022) and the catalog's datacenter
    accelerators that state a count — each die once, at its first year (the A800, H800, H20 and H200 reuse the
    A100's and H100's dies), wafer-scale parts left out. ``kind`` selects ``"microprocessor"`` or ``"accelerator"``.

    >>> p = transistor_points()
    >>> p[0].year, p[0].transistors
    (1971.88, 2308.0)
    >>> max(x.transistors for x in transistor_points("accelerator") if x.name == "B200") / 1e9
    208.0
    """
    if kind is not None:
        _check.choice("kind", kind, ("microprocessor", "accelerator"))
    pts = []
    if kind in (None, "microprocessor"):
        pts += [TransistorPoint("microprocessor", float(r["year"]), float(r["transistors"]), r["kind"], r["checked"])
                for r in _data.rows("transistor_counts.csv")]
    if kind in (None, "accelerator"):
        seen = set()
        for a in sorted(hardware.all_accelerators(), key=lambda a: (a.year, "PCIe" in a.name, a.name)):
            if _data.is_missing(a.transistors) or _data.is_missing(a.year) or a.market != "datacenter":
                continue
            wafer = not _data.is_missing(a.die_area_mm2) and a.die_area_mm2 > _WAFER_MM2
            if wafer or a.transistors in seen:       # a whole wafer, or a variant of a die already counted
                continue
            seen.add(a.transistors)
            pts.append(TransistorPoint(a.name, float(a.year), float(a.transistors), "accelerator", a.checked))
    return sorted(pts, key=lambda p: (p.year, p.transistors))


def fit_doubling_time(year, counts) -> float:
    """Doubling time (years) of the least-squares line through ``log2(counts)`` against ``year`` (an array of
    years, one per count).

    >>> round(fit_doubling_time([2000, 2002, 2004], [1, 2, 4]), 6)
    2.0
    """
    y = np.asarray(_years("year", year), dtype=float)
    c = np.asarray(_check.values("counts", counts, _check.positive), dtype=float)
    if y.shape != c.shape or y.size < 2:
        raise ValueError("year and counts must be arrays of the same length, at least two points")
    if np.ptp(y) == 0:
        raise ValueError("year must not hold one year only")
    slope = np.polyfit(y, np.log2(c), 1)[0]
    if slope <= 0:
        raise ValueError("counts do not grow with the years: no doubling time")
    return float(1 / slope)
