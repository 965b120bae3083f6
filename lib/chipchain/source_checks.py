"""Source checks: every number the book's sources state, beside the library's recomputation of it.

The claims are data — ``data/source_checks.csv``, one row per claim: the source and what it says (``claim``,
``claimed_value`` in ``unit``), and the chipchain function that recomputes it (``function``, a dotted path such as
``compute.training_flops``, with its ``arguments`` as JSON). The recomputation always goes through the library, so
when the library's catalog or equations change, the verdicts follow.

The small call language of the ``arguments``, ``then`` and ``per`` columns (all JSON):

* ``arguments``: a list (positional) or an object (keyword arguments); any value may itself be a call
  ``{"call": "hardware.get", "args": [...], "kwargs": {...}, "then": [...]}``.
* ``then``: steps applied to the result, in order: a name reads an attribute (or a key of a mapping); a pair
  ``[name, [args]]`` calls a method.
* ``per``: an optional call whose result divides the first (for ratios such as "grew 1.65×").
* the result, in SI units, is expressed in ``unit`` (days, hours, years or kWh are converted through
  :mod:`chipchain.units`).

A claim agrees when ``|recomputed − claimed| ≤ tolerance · |claimed|``::

    >>> c = check("s004-flops-7b")
    >>> c.claimed_value, c.recomputed, c.agrees
    (8.4e+23, 8.4e+22, False)
    >>> len(source_checks()) >= 25
    True
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from . import _check, _data, compute, deepseek, hardware, links, memory, power, roofline, units, walkthrough

__all__ = ["SourceCheck", "source_checks", "check", "ids", "resolve", "evaluate", "MODULES", "UNITS"]

#: the modules a check may call into (a check's ``function`` starts with one of these names)
MODULES = {"compute": compute, "deepseek": deepseek, "hardware": hardware, "links": links, "memory": memory,
           "power": power, "roofline": roofline, "walkthrough": walkthrough}

#: SI size of one unit a claim may be stated in (results are divided by it); other units are SI already
UNITS = {"days": units.DAY, "hours": units.HOUR, "years": units.YEAR, "kWh": units.kWh}


@dataclass(frozen=True)
class SourceCheck:
    """A number stated by a source, the library's recomputation, and whether they agree within ``tolerance``."""

    id: str
    source: str                 #: seed and section
    claim: str                  #: what the source says, in English
    claimed_value: float
    recomputed: float
    unit: str
    tolerance: float            #: relative tolerance for agreement
    function: str               #: the chipchain function that recomputes it (dotted path)
    note: str                   #: what explains a disagreement (or what the recomputation used)
    chapter: int
    checked: str

    @property
    def agrees(self) -> bool:
        """|recomputed − claimed| ≤ tolerance · |claimed|."""
        return abs(self.recomputed - self.claimed_value) <= self.tolerance * abs(self.claimed_value)


def resolve(path: str):
    """The chipchain object at a dotted ``path`` ("compute.training_flops", "walkthrough.Walkthrough").

    >>> resolve("compute.training_flops") is compute.training_flops
    True
    >>> resolve("compute.training_flop")
    Traceback (most recent call last):
    ...
    KeyError: "chipchain.compute has no 'training_flop'"
    """
    if not isinstance(path, str) or "." not in path:
        raise ValueError(f"function must be a dotted chipchain path such as 'compute.training_flops', got {path!r}")
    head, *rest = path.split(".")
    if head not in MODULES:
        raise KeyError(_check.nearest_message(head, list(MODULES), "chipchain module"))
    obj, where = MODULES[head], f"chipchain.{head}"
    for name in rest:
        if not hasattr(obj, name):
            raise KeyError(f"{where} has no {name!r}")
        obj, where = getattr(obj, name), f"{where}.{name}"
    return obj


def _value(x):
    """A JSON value with every nested call evaluated."""
    if isinstance(x, dict) and "call" in x:
        return _call(x["call"], x.get("args", []), x.get("kwargs", {}), x.get("then", []))
    if isinstance(x, list):
        return [_value(v) for v in x]
    if isinstance(x, dict):
        return {k: _value(v) for k, v in x.items()}
    return x


def _step(obj, step):
    if isinstance(step, list):
        name, args = step[0], step[1] if len(step) > 1 else []
        return getattr(obj, name)(*_value(args))
    if isinstance(obj, dict):
        return obj[step]
    return getattr(obj, step)


def _call(function, args, kwargs, then):
    f = resolve(function)
    if not callable(f):
        raise ValueError(f"{function} is not a function")
    out = f(*_value(args), **_value(kwargs))
    for step in then or []:
        out = _step(out, step)
    return out


def evaluate(row: dict) -> float:
    """The recomputed value of one ``data/source_checks.csv`` row, in the row's unit."""
    arguments = json.loads(row["arguments"] or "{}")
    args, kwargs = (arguments, {}) if isinstance(arguments, list) else ([], arguments)
    value = float(_call(row["function"], args, kwargs, json.loads(row["then"] or "[]")))
    if row["per"]:
        value /= float(_value(json.loads(row["per"])))
    return value / UNITS.get(row["unit"], 1.0)


def _record(row: dict) -> SourceCheck:
    return SourceCheck(row["id"], row["source"], row["claim"], float(row["claimed_value"]), evaluate(row),
                       row["unit"], float(row["tolerance"]), row["function"], row["note"], int(row["chapter"]),
                       row["checked"])


def ids() -> list[str]:
    """The ids of every check, in file order."""
    return [r["id"] for r in _data.rows("source_checks.csv")]


def check(id: str) -> SourceCheck:
    """One check by its id (see :func:`ids`), recomputed now."""
    for row in _data.rows("source_checks.csv"):
        if row["id"] == id:
            return _record(row)
    raise KeyError(_check.nearest_message(id, ids(), "source check"))


def source_checks() -> list[SourceCheck]:
    """Every check in ``data/source_checks.csv``, in file order, recomputed by the library now.

    >>> bad = {c.id for c in source_checks() if not c.agrees}
    >>> {"wt-mtbf", "wt-bill", "s000-nvlink-ib"} <= bad
    True
    """
    return [_record(row) for row in _data.rows("source_checks.csv")]
