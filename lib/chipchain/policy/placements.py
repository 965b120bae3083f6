"""Where the export rules put things: every catalog part under every rule (:func:`placements`), the parts with a
node that a rule lets through, fastest first (:func:`shippable_parts`), and the rack-scale systems of
``data/superpods.csv`` (:func:`superpods`). The rules themselves: :mod:`chipchain.policy.rules`.

>>> [n for n, _ in shippable_parts("2023-10")][:1]
['H20']
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .. import _data, hardware, systems, units
from .rules import ChipIO, _rules, chip_io, classify, performance_density_from, rule, tpp_precision

__all__ = ["PartPlacement", "placements", "shippable_parts", "Superpod", "superpods"]


@dataclass(frozen=True)
class PartPlacement:
    """One catalog part under every rule: its TPP (``None`` without a peak), the precision that gives it, its
    performance density, aggregate bidirectional I/O (:class:`ChipIO`) and its :class:`Classification` under each
    rule, in rule order."""

    accelerator: hardware.Accelerator
    tpp: float | None
    dtype: str | None
    pd: float | None
    io: ChipIO
    classifications: tuple


def placements(rule_ids=None) -> list[PartPlacement]:
    """Every catalog part with its TPP, performance density and classification under each rule (all by default).

    >>> h20 = [p for p in placements() if p.accelerator.name == "H20"][0]
    >>> h20.tpp, [c.category for c in h20.classifications]
    (2368.0, ['not controlled', 'not controlled'])
    """
    ids = [r.id for r in _rules()] if rule_ids is None else [rule(i).id for i in rule_ids]
    out = []
    for acc in hardware.all_accelerators():
        t, d = tpp_precision(acc) if acc.precisions() else (None, None)
        pd = performance_density_from(t, acc.die_area_mm2) if t is not None and acc.die_area_mm2 else None
        out.append(PartPlacement(acc, t, d, pd, chip_io(acc), tuple(classify(acc, i) for i in ids)))
    return out


def _node_parts() -> list:
    """Catalog accelerators that have a node in :mod:`chipchain.systems` (so a cluster of them can be built)."""
    return list(dict.fromkeys(n.accelerator.name for n in systems.all_nodes() if n.accelerator is not None))


@lru_cache(maxsize=None)
def shippable_parts(rule_id, dtype="bf16") -> tuple:
    """``(name, dense peak FLOP/s)`` of every catalog part with a node that export rule ``rule_id`` does not
    control, fastest first at ``dtype`` (parts without that peak left out).

    >>> [n for n, _ in shippable_parts("2023-10")][:1], [n for n, _ in shippable_parts("2022-10")][:1]
    (['H20'], ['H800'])
    """
    rule(rule_id)
    out = []
    for name in _node_parts():
        acc = hardware.get(name)
        if classify(acc, rule_id).controlled is not False:
            continue
        try:
            out.append((acc.name, float(acc.peak_flops(dtype))))
        except (ValueError, KeyError):
            continue
    return tuple(sorted(out, key=lambda x: -x[1]))


@dataclass(frozen=True)
class Superpod:
    """A rack-scale system (``data/superpods.csv``) in SI units: total dense 16-bit peak (FLOP/s), memory (bytes),
    power (W, ``None`` where our sources give none). ``printed_memory_bytes`` is the memory the vendor prints where
    ``memory_bytes`` is derived from the catalog instead (``None`` otherwise); the vendor's TB is 1,000 of its
    binary GB, as the catalog reads a vendor's memory capacities. ``compute_racks`` is how many of the ``racks``
    hold accelerators where the others hold the scale-up switches (``None``: every rack computes)."""

    system: str
    accelerator: hardware.Accelerator
    n_gpus: int
    racks: int
    peak_flops: float
    memory_bytes: float
    power: float | None
    checked: str
    notes: str
    printed_memory_bytes: float | None = None
    compute_racks: int | None = None

    @property
    def printed_memory_per_accelerator(self) -> float:
        """Bytes of memory per accelerator as the vendor prints it; a ``ValueError`` where it prints none.

        >>> nvl72 = next(s for s in superpods() if s.system == "GB200 NVL72")
        >>> round(nvl72.printed_memory_per_accelerator / units.GiB, 1)
        186.1
        """
        if self.printed_memory_bytes is None:
            raise ValueError(f"{self.system} has no printed memory figure beside its own in superpods.csv")
        return self.printed_memory_bytes / self.n_gpus

    @property
    def peak_flops_per_rack(self) -> float:
        """FLOP/s per rack."""
        return self.peak_flops / self.racks

    @property
    def peak_flops_per_compute_rack(self) -> float:
        """FLOP/s per rack that holds accelerators (the switch racks left out).

        >>> [round(s.peak_flops_per_compute_rack / 1e15, 1) for s in superpods()]
        [25.6, 24.1, 180.0]
        """
        return self.peak_flops / (self.racks if self.compute_racks is None else self.compute_racks)

    @property
    def gpu_peak_flops(self) -> float:
        """FLOP/s per accelerator."""
        return self.peak_flops / self.n_gpus

    @property
    def flops_per_watt(self) -> float | None:
        """Peak FLOP/s per watt of rack power (``None`` without a power figure)."""
        return self.peak_flops / self.power if self.power else None


def superpods() -> list[Superpod]:
    """Rack-scale systems: Atlas 900 A3 SuperPoD (both figures its page prints) and GB200 NVL72 (the dense 16-bit
    figure NVIDIA prints; memory from the catalog's B200 estimate). Where a row leaves compute or memory empty, it
    is the accelerator count times the catalog figure.

    >>> [round(s.peak_flops / 1e15, 1) for s in superpods()]
    [307.2, 288.7, 180.0]
    """
    out = []
    for r in _data.rows("superpods.csv"):
        acc = hardware.get(r["accelerator"])
        n = int(r["accelerators"])
        peak = _data.optional_float(r, "pflops_16bit", units.PFLOPS)
        mem = _data.optional_float(r, "memory_TB", units.TB)
        out.append(Superpod(r["system"], acc, n, int(r["racks"]), n * acc.peak_flops("bf16") if peak is None else peak,
                            n * acc.require("memory_bytes") if mem is None else mem,
                            _data.optional_float(r, "power_kW", 1e3), r["checked"], r["notes"],
                            _data.optional_float(r, "memory_TB_printed", 1000 * units.GiB),
                            int(r["compute_racks"]) if r.get("compute_racks") else None))
    return out
