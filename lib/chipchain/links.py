"""The link registry: every interconnect the book compares, one row each in ``data/links.csv``.

A :class:`Link` is in SI units: bandwidths in bytes per second, **per direction** and **both directions summed**
(NVLink and PCIe are marketed by the sum; InfiniBand and Ethernet by the per-direction line rate); latency in
seconds (α, an order-of-magnitude estimate of the per-message cost, not a datasheet figure).

>>> lk = get("nvlink 4")
>>> lk.bidirectional_bandwidth / 1e9, lk.bandwidth_per_direction / 1e9
(900.0, 450.0)
>>> get("IB-NDR").bandwidth_per_direction * 8 / 1e9     # 400 Gb/s per direction
400.0
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _data

__all__ = ["Link", "get", "names", "all_links"]


@dataclass(frozen=True)
class Link(_data.Record):
    """One kind of link, in SI units (see the module docstring for the conventions)."""

    name: str
    kind: str
    line_rate: str
    bandwidth_per_direction: float   #: bytes/s, one direction
    latency: float                   #: seconds (α, estimate)
    scope: str
    verdict: str
    source: str
    checked: str
    notes: str
    aliases: tuple = ()

    @property
    def bidirectional_bandwidth(self) -> float:
        """Bytes/s, both directions summed: twice :attr:`bandwidth_per_direction` (a full-duplex link sends and
        receives at once; the datasheets' "900 GB/s" for NVLink 4). Derived, so the table stores one figure."""
        return 2.0 * self.bandwidth_per_direction



def _build():
    for row in _data.rows("links.csv"):
        yield Link(
            name=row["name"], kind=row["kind"], line_rate=row["line_rate"],
            bandwidth_per_direction=_data.scaled(row["bandwidth_per_direction_GBps"], 1e9),
            latency=_data.scaled(row["latency_us"], 1e-6), scope=row["scope"], verdict=row["verdict"],
            source=row["source"], checked=row["checked"], notes=row["notes"],
            aliases=_data.split_aliases(row["aliases"]))


_REGISTRY = _data.Registry("link", Link, _build, argument="link")


def get(link) -> Link:
    """Look up a link by name or alias, ignoring case, spaces and underscores; a :class:`Link` passes through.

    >>> get("NVLink6")
    Traceback (most recent call last):
    ...
    KeyError: "unknown link 'NVLink6'; nearest known names: NVLink5, NVLink4, NVLink3, NVLink2"
    """
    return _REGISTRY.get(link)


def names() -> list[str]:
    """Canonical names of every link, in file order.

    >>> names()[:3]
    ['NVLink3', 'NVLink4', 'NVLink4-H800']
    """
    return _REGISTRY.names()


def all_links() -> list[Link]:
    """Every link, in file order."""
    return _REGISTRY.all()
