"""Input validation shared by every public function.

Each checker returns the value (converted where that is harmless, e.g. an int to a float) or raises a
``ValueError`` whose message names the argument and the offending value. Bool is rejected where a number is
expected: ``True`` is an int in Python, but a flag passed as a GPU count is a bug, not a count of one.
"""
from __future__ import annotations

import functools
import math
import numbers

__all__ = ["number", "positive", "nonnegative", "fraction", "integer", "choice", "probability", "flag", "key", "lookup", "nearest_message", "values", "result",
           "Missing"]


def number(name: str, value, *, allow_zero: bool = True, allow_negative: bool = False) -> float:
    """Return ``value`` as a float after checking it is a finite real number."""
    if type(value) is float or type(value) is int:        # the common case, without the ABC checks below
        v = float(value)
        if -math.inf < v < math.inf and (v > 0 or (v == 0 and allow_zero) or (v < 0 and allow_negative)):
            return v                                       # anything else falls through to name the fault
    if isinstance(value, Missing):
        raise value.error()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    v = float(value)
    if math.isnan(v):
        raise ValueError(f"{name} must not be NaN")
    if math.isinf(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if not allow_negative and v < 0:
        raise ValueError(f"{name} must not be negative, got {value!r}")
    if not allow_zero and v == 0:
        raise ValueError(f"{name} must be greater than zero, got {value!r}")
    return v


class Missing:
    """A catalog figure the row does not have. Any arithmetic, comparison or conversion with it raises a
    ``ValueError`` naming the part and the field, so a calculation that needs the figure fails by name instead of
    with ``NoneType`` arithmetic deep inside NumPy. It is falsy, so ``if acc.sms:`` still reads naturally.

    >>> m = Missing("B200", "sms")
    >>> bool(m), isinstance(m, Missing)
    (False, True)
    >>> m * 4
    Traceback (most recent call last):
    ...
    ValueError: B200 has no 'sms' figure in the catalog
    """

    __slots__ = ("part", "field")

    def __init__(self, part: str, field: str):
        self.part, self.field = part, field

    def error(self) -> ValueError:
        return ValueError(f"{self.part} has no {self.field!r} figure in the catalog")

    def _fail(self, *args):
        raise self.error()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __pow__ = __rpow__ = __mod__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __neg__ = __abs__ = __float__ = __int__ = __index__ = _fail
    __round__ = __format__ = __array__ = _fail

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other) -> bool:
        return isinstance(other, Missing) and (other.part, other.field) == (self.part, self.field)

    def __hash__(self) -> int:
        return hash((self.part, self.field))

    def __repr__(self) -> str:
        return "missing"


def positive(name: str, value) -> float:
    """A finite real number > 0."""
    return number(name, value, allow_zero=False)


def nonnegative(name: str, value) -> float:
    """A finite real number ≥ 0."""
    return number(name, value)


def fraction(name: str, value, *, allow_zero: bool = False) -> float:
    """A finite number in (0, 1] (or [0, 1] with ``allow_zero``): utilisations, efficiencies."""
    v = number(name, value, allow_zero=allow_zero)
    if v > 1:
        raise ValueError(f"{name} must be at most 1 (a fraction, not a percentage), got {value!r}")
    return v


def probability(name: str, value) -> float:
    """A finite number in [0, 1]."""
    return fraction(name, value, allow_zero=True)


def flag(name: str, value) -> bool:
    """``True`` or ``False`` exactly (not 0/1, not a string): a switch such as ``sparse`` or ``causal``."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def integer(name: str, value, *, minimum: int = 1) -> int:
    """An integer ≥ ``minimum`` (bool rejected; integral floats such as 8.0 accepted)."""
    if type(value) is int and value >= minimum:            # the common case, without the ABC checks below
        return value
    if isinstance(value, Missing):
        raise value.error()
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        v = int(value)
    else:
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if v < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
    return v


def _is_array(value) -> bool:
    return isinstance(value, (list, tuple)) or (type(value).__module__.startswith("numpy")
                                                 and getattr(value, "ndim", 0) > 0)


def values(name: str, value, check=None):
    """A number, or an array-like of numbers checked element-wise, for equations that work on NumPy arrays.

    ``check`` is one of this module's scalar checkers (``nonnegative`` by default; ``positive``, ``integer``,
    ``fraction``, ``probability``, …). A scalar goes through it unchanged. A list, tuple or NumPy array must hold
    finite numbers (whole ones for ``integer``) whose smallest and largest pass ``check`` — which decides every
    range check — and comes back a float ndarray. Anything else (NaN, infinity, flags, an empty array, text)
    raises ``ValueError`` naming the argument. NumPy is imported only when an array arrives.

    >>> values("n_gpus", 8, integer), values("bandwidth", [1e9, 2e9], positive).tolist()
    (8, [1000000000.0, 2000000000.0])
    >>> values("mfu", [0.4, 1.2], fraction)
    Traceback (most recent call last):
    ...
    ValueError: mfu must be at most 1 (a fraction, not a percentage), got 1.2
    >>> values("mfu", [0.4, float("nan")])
    Traceback (most recent call last):
    ...
    ValueError: mfu must hold finite numbers (no NaN or infinity), got [0.4, nan]
    """
    check = nonnegative if check is None else check
    if type(value) is float or type(value) is int or not _is_array(value):
        return check(name, value)
    import numpy as np

    raw = np.asarray(value)
    if raw.dtype.kind not in "iuf" or raw.size == 0:
        raise ValueError(f"{name} must be a number or a non-empty array of numbers, got {value!r}")
    a = raw.astype(float)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must hold finite numbers (no NaN or infinity), got {value!r}")
    if check is integer and np.any(a != np.floor(a)):
        raise ValueError(f"{name} must hold whole numbers, got {value!r}")
    for extreme in (a.min(), a.max()):
        check(name, float(extreme))
    return a


def result(x):
    """A float for a scalar (or 0-d array) result, the array otherwise: what element-wise equations return."""
    if getattr(x, "ndim", 0) == 0:
        return float(x)
    return x


def choice(name: str, value, options) -> str:
    """One of a fixed set of strings (case-insensitive); the message lists the options."""
    if type(value) is str and isinstance(options, (tuple, frozenset, dict)) and value in options:
        return value                                       # exactly as spelled: the common case
    opts = list(options)
    if isinstance(value, str):
        for o in opts:
            if value.lower() == str(o).lower():
                return o
    raise ValueError(f"{name} must be one of {', '.join(map(repr, opts))}; got {value!r}")


@functools.lru_cache(maxsize=4096)
def key(name: str) -> str:
    """The normalised form used to look names up: lower case, runs of spaces and underscores as one hyphen."""
    import re

    return re.sub(r"[\s_]+", "-", name.strip().lower())


def lookup(index: dict, name, kind: str, argument: str = "name"):
    """Find ``name`` in ``index`` (normalised key → object with a ``.name``), or raise.

    A non-string ``name`` raises ``ValueError`` naming ``argument``; an unknown one raises ``KeyError`` listing up
    to four nearest canonical names (all of them when nothing is near). Every catalog lookup in chipchain goes
    through here, so they all fail the same way.
    """
    import difflib

    if not isinstance(name, str):
        raise ValueError(f"{argument} must be a {kind} name (str), got {name!r}")
    k = key(name)
    if k in index:
        return index[k]
    near = difflib.get_close_matches(k, list(index), n=8, cutoff=0.4)
    names = list(dict.fromkeys(index[n].name for n in near))[:4] or list(dict.fromkeys(v.name for v in index.values()))
    raise KeyError(f"unknown {kind} {name!r}; nearest known names: {', '.join(names)}")


def nearest_message(name, known, kind: str) -> str:
    """The ``KeyError`` message :func:`lookup` gives, for a plain list of ``known`` names."""
    import difflib

    index = {key(n): n for n in known}
    near = difflib.get_close_matches(key(str(name)), list(index), n=8, cutoff=0.4)
    names = list(dict.fromkeys(index[n] for n in near))[:4] or list(dict.fromkeys(known))
    return f"unknown {kind} {name!r}; nearest known names: {', '.join(names)}"


#: the plausible range of one chip's aggregate bidirectional I/O, bytes/s. Below: slower than any real chip-to-chip
#: link (PCIe 1.0 x1 moves 0.5 GB/s both ways). Above: more than a whole GB200 NVL72 rack's NVLink (72 × 1.8 TB/s).
IO_PLAUSIBLE = (1e8, 1e15)


def io_bandwidth(name: str, value) -> float:
    """A chip's I/O bandwidth in bytes/s: finite, ≥ 0, and 0 or within :data:`IO_PLAUSIBLE`. A figure typed in GB/s
    (600 for 600 GB/s) is 600 bytes/s; it is refused with a message that names the input and the likely slip, instead
    of quietly passing a chip a rule catches (export controls, :func:`chipchain.policy.classify_numbers`).

    >>> io_bandwidth("io_bandwidth", 600e9)
    600000000000.0
    >>> io_bandwidth("io_bandwidth", 600)
    Traceback (most recent call last):
    ...
    ValueError: io_bandwidth is in bytes per second and 600 B/s is slower than any real chip-to-chip link (≥ 0.1 GB/s); if you meant 600 GB/s, pass 600e9 (600 * units.GBPS)
    """
    v = nonnegative(name, value)
    lo, hi = IO_PLAUSIBLE
    if 0 < v < lo:
        raise ValueError(f"{name} is in bytes per second and {v:g} B/s is slower than any real chip-to-chip link "
                         f"(≥ {lo / 1e9:g} GB/s); if you meant {v:g} GB/s, pass {v:g}e9 ({v:g} * units.GBPS)")
    if v > hi:
        raise ValueError(f"{name} is in bytes per second and {v / 1e9:,.0f} GB/s is more than any chip's I/O "
                         f"(≤ {hi / 1e9:,.0f} GB/s; a whole NVL72 rack's NVLink is 130,000); was it given in bits "
                         f"per second, or in kB/s?")
    return v
