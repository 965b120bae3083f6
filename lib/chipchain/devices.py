"""The serving-device registry: edge boards and laptops that run models locally, one row each in
``data/serving_devices.csv``. (Inference ASICs such as Groq's LPU and Cerebras's WSE-3 are accelerators: their specs
live once, in the accelerator catalog, :mod:`chipchain.hardware`.)

A :class:`Device` is in SI units (bytes, bytes per second, watts, FLOP/s). Memory capacities are binary, as DRAM
is built and sold: an "8 GB" board holds 8 GiB = 8.59 GB (the file's column says ``memory_GiB``); bandwidths are
decimal. A figure the row lacks is a
:class:`~chipchain._data.Missing`: arithmetic on it raises a ``ValueError`` naming the device and the field. Rows
checked ``U`` are estimates and their notes say so.

>>> d = get("orin nano")
>>> d.name, d.memory_bytes / 2**30, d.memory_bandwidth / 1e9
('Jetson-Orin-Nano-8GB', 8.0, 68.0)
>>> get("Apple-M2").power * 2
Traceback (most recent call last):
...
ValueError: Apple-M2-16GB has no 'power' figure in the catalog
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _data, units

__all__ = ["Device", "KINDS", "get", "names", "all_devices"]

#: the kinds of serving device in the table
KINDS = ("edge",)


@dataclass(frozen=True)
class Device(_data.Record):
    """An edge device, in SI units; missing figures are :class:`~chipchain._data.Missing`."""

    name: str
    kind: str                       #: "edge"
    vendor: str
    year: int
    process: str
    memory_bytes: float             #: bytes (shared with the CPU on edge boards); the file gives GiB, as DRAM is sold
    memory_type: str
    memory_bandwidth: float         #: bytes/s
    power: float                    #: watts (module or system power as the source states it)
    bf16_flops: float               #: FLOP/s, dense
    int8_ops: float                 #: op/s, dense
    checked: str
    source: str
    notes: str
    aliases: tuple = ()



def _build():
    for row in _data.rows("serving_devices.csv"):
        name = row["name"]

        def fig(column, field, scale=1.0):
            return _data.figure(_data.optional_float(row, column, scale), name, field)

        if row["kind"] not in KINDS:
            raise ValueError(f"serving_devices.csv: {name} has kind {row['kind']!r}; expected one of {KINDS}")
        yield Device(
            name=name, kind=row["kind"], vendor=row["vendor"], year=int(row["year"]), process=row["process"],
            memory_bytes=fig("memory_GiB", "memory_bytes", units.GiB), memory_type=row["memory_type"],
            memory_bandwidth=fig("memory_bandwidth_GBps", "memory_bandwidth", 1e9), power=fig("power_W", "power"),
            bf16_flops=fig("bf16_TFLOPS", "bf16_flops", 1e12), int8_ops=fig("int8_TOPS", "int8_ops", 1e12),
            checked=row["checked"], source=row["source"], notes=row["notes"],
            aliases=_data.split_aliases(row["aliases"]))


_REGISTRY = _data.Registry("device", Device, _build, argument="device")


def get(device) -> Device:
    """Look up a serving device by name or alias (case, spaces and underscores ignored); a :class:`Device` passes
    through. Unknown names raise ``KeyError`` listing the nearest names.

    >>> get("M2").memory_bandwidth / 1e9
    100.0
    >>> get("Jetson Orin Nano 4GB")
    Traceback (most recent call last):
    ...
    KeyError: "unknown device 'Jetson Orin Nano 4GB'; nearest known names: Jetson-Orin-Nano-8GB, Jetson-Orin-NX-16GB, Jetson-Orin-Nano-Super"
    """
    return _REGISTRY.get(device)


def names() -> list[str]:
    """Canonical names of every serving device, in file order.

    >>> names()[0]
    'Jetson-Orin-Nano-8GB'
    """
    return _REGISTRY.names()


def all_devices() -> list[Device]:
    """Every serving device, in file order."""
    return _REGISTRY.all()
