"""The book's stated assumptions: figures no source fixes for the running example (checkpoint write bandwidth,
restart time, GPU rent, usable memory), each a row of ``data/assumptions.csv`` with its source and check level.

Functions whose default is an assumption read it here, so the figure lives in one place and carries its
provenance; a caller can always pass its own value. The electricity defaults (PUE, price) are reference figures of
``data/energy_facts.csv`` (:func:`chipchain.power.fact`).

>>> value("restart_seconds"), get("gpu_rent_per_hour").unit
(600.0, '$/GPU-hour')
>>> value("restart")
Traceback (most recent call last):
...
KeyError: "unknown assumption 'restart'; nearest known names: restart_seconds"
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check, _data

__all__ = ["Assumption", "get", "value", "names"]


@dataclass(frozen=True)
class Assumption(_data.Record):
    """One assumption: its value in SI units (or the ratio / $ unit its row states), what it stands for, and its
    provenance (``checked`` U for the book's own assumptions)."""

    name: str
    value: float
    unit: str
    description: str
    bibkey: str
    checked: str
    source: str
    notes: str
    aliases: tuple = ()

    def __post_init__(self):
        _check.choice("checked", self.checked, _data.CHECK_LEVELS)


def _build():
    for row in _data.rows("assumptions.csv"):
        yield Assumption(row["key"], float(row["value"]), row["unit"], row["description"], row["bibkey"],
                         row["checked"], row["source"], row["notes"])


_REGISTRY = _data.Registry("assumption", Assumption, _build, argument="name")


def get(name) -> Assumption:
    """One assumption by name (``KeyError`` with the nearest names for an unknown one)."""
    return _REGISTRY.get(name)


def value(name) -> float:
    """The value of one assumption, in the unit its row states.

    >>> value("checkpoint_write_bandwidth") / 1e9
    50.0
    """
    return get(name).value


def names() -> list:
    """Names of every assumption, in file order."""
    return _REGISTRY.names()
