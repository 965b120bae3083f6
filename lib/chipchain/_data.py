"""One loader for every data file, one provenance schema, and the one registry lookup.

Every fact table lives in ``chipchain/data/`` as CSV (or JSON) with a ``source`` and a ``checked`` column per row
(``V`` read in the primary source, ``V2`` seen in secondary material quoting it, ``U`` unverified: an estimate). This
module reads them (once, cached), converts optional numeric cells, and builds the name index that the registries
(:mod:`~chipchain.hardware`, :mod:`~chipchain.links`, :mod:`~chipchain.models`, :mod:`~chipchain.systems`) look
names up in. Lookups fail the same way everywhere: a ``KeyError`` listing the nearest known names.

>>> rows("links.csv")[0]["name"]
'NVLink3'
>>> optional_float({"x": ""}, "x") is None
True
"""
from __future__ import annotations

import csv
import math
import json
from functools import lru_cache
from pathlib import Path

from . import _check
from ._check import Missing

__all__ = ["CHECK_LEVELS", "rows", "json_data", "optional_float", "optional_int", "split_aliases", "scaled",
           "Missing", "is_missing", "figure", "Record", "Registry"]

#: how well a row was checked: primary source read, secondary source quoting it, unverified (an estimate)
CHECK_LEVELS = ("V", "V2", "U")


#: the package's data folder (a plain directory in every install: editable, wheel, or Pyodide's site-packages)
DATA = Path(__file__).resolve().parent / "data"


def _path(filename: str) -> Path:
    return DATA / filename


@lru_cache(maxsize=None)
def rows(filename: str) -> tuple:
    """The rows of ``data/<filename>`` (a CSV file) as a tuple of dicts of strings, in file order.

    A missing file raises ``FileNotFoundError`` naming it.
    """
    path = _path(filename)
    if not path.is_file():
        raise FileNotFoundError(f"chipchain has no data file {filename!r}")
    with path.open(encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


@lru_cache(maxsize=None)
def json_data(filename: str):
    """The parsed content of ``data/<filename>`` (a JSON file)."""
    path = _path(filename)
    if not path.is_file():
        raise FileNotFoundError(f"chipchain has no data file {filename!r}")
    with path.open(encoding="utf-8") as f:
        return json.load(f)


def optional_float(row: dict, column: str, scale: float = 1.0):
    """``float(row[column]) * scale``, or ``None`` for an empty cell (the catalog never guesses)."""
    text = (row.get(column) or "").strip()
    return scaled(text, scale) if text else None


def scaled(text: str, scale: float = 1.0) -> float:
    """``float(text) * scale`` without binary rounding when ``scale`` is a power of ten ("8.03" × 1e9 is exactly
    8.03e9, not 8029999999.999999)."""
    exponent = math.log10(scale) if scale > 0 else None
    if exponent is not None and exponent == int(exponent):
        return float(f"{text.strip()}e{int(exponent)}")
    return float(text) * scale


def optional_int(row: dict, column: str):
    """``int(row[column])``, or ``None`` for an empty cell."""
    text = (row.get(column) or "").strip()
    return int(float(text)) if text else None


def split_aliases(text: str) -> tuple:
    """The ``aliases`` cell (``;``-separated) as a tuple of names."""
    return tuple(a.strip() for a in (text or "").split(";") if a.strip())


def is_missing(value) -> bool:
    """True for a :class:`Missing` figure (or ``None``)."""
    return value is None or isinstance(value, Missing)


def figure(value, part: str, field: str):
    """``value``, or :class:`Missing` naming ``part`` and ``field`` when the cell was empty (``None``)."""
    return Missing(part, field) if value is None else value


class Record:
    """What every catalog record shares (mixed into each registry's frozen dataclass, which has ``name``,
    ``checked`` and ``source`` fields): whether it is an estimate, and a figure that must be there.

    >>> from chipchain import hardware
    >>> hardware.get("H20").is_estimate, hardware.get("H100").is_estimate
    (True, False)
    >>> hardware.get("B200").require("sms")
    Traceback (most recent call last):
    ...
    ValueError: B200 has no 'sms' figure in the catalog
    """

    __slots__ = ()

    @property
    def is_estimate(self) -> bool:
        """True when the row is unverified (``checked == "U"``): the book labels it an estimate."""
        return self.checked == "U"

    def require(self, attribute: str):
        """The value of a field, or a ``ValueError`` naming the record and the field when the catalog lacks it."""
        value = getattr(self, attribute)
        if is_missing(value):
            raise ValueError(f"{self.name} has no {attribute!r} figure in the catalog")
        return value


class Registry:
    """Records of one kind (each with ``.name`` and ``.aliases``), looked up by any name or alias.

    ``build`` returns the records in file order; it runs once, on first use. ``get`` accepts a record of ``cls``
    unchanged, so every function can take a name or the object.
    """

    def __init__(self, kind: str, cls: type, build, argument: str):
        self.kind, self.cls, self._build, self.argument = kind, cls, build, argument
        self._records = None
        self._index = None

    def _load(self):
        if self._records is None:
            records = tuple(self._build())
            index = {}
            for rec in records:
                for name in (rec.name, *rec.aliases):
                    k = _check.key(name)
                    if k in index and index[k] is not rec:
                        raise ValueError(f"{self.kind} name {name!r} is given to both {index[k].name} and {rec.name}")
                    index[k] = rec
            self._records, self._index = records, index
        return self._records

    def get(self, name):
        """The record called ``name`` (any alias; case, spaces and underscores ignored), or a record unchanged."""
        if isinstance(name, self.cls):
            return name
        self._load()
        if not isinstance(name, str):
            raise ValueError(f"{self.argument} must be a {self.kind} name (str) or a {self.cls.__name__}, "
                             f"got {name!r}")
        return _check.lookup(self._index, name, self.kind, argument=self.argument)

    def names(self) -> list:
        """Canonical names in file order."""
        return [r.name for r in self._load()]

    def all(self) -> list:
        """Every record in file order."""
        return list(self._load())

    def __contains__(self, name) -> bool:
        self._load()
        return isinstance(name, str) and _check.key(name) in self._index
