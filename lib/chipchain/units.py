"""Named constants and one way to print a quantity for people.

Inside chipchain every quantity is in SI base units (FLOP, byte, second, watt, joule, US dollar) with decimal
prefixes: 1 GB = 1e9 bytes, 1 TB/s = 1e12 bytes per second. Names that mean binary prefixes say so (``GiB``):
memory capacities (HBM, DRAM, on-chip SRAM) are binary, and :func:`fmt_capacity` shows them as ``80 GiB = 85.9 GB``.
Conversions happen only at the edge, here.

Formatters return :class:`Text`, a ``str`` whose ``repr`` is the text itself, so a formatted value can be passed
straight to myst-nb's ``glue`` and appears in prose without quotes::

    >>> fmt_bytes(2.8e12)
    2.8 TB
    >>> fmt_duration(2.36e10)
    748 years
"""
from __future__ import annotations

import math
import re

from . import _check
from ._i18n import gettext as _t

# --- decimal prefixes -------------------------------------------------------------------------------------------
KILO, MEGA, GIGA, TERA, PETA, EXA = 1e3, 1e6, 1e9, 1e12, 1e15, 1e18
KB, MB, GB, TB, PB = KILO, MEGA, GIGA, TERA, PETA
KiB, MiB, GiB, TiB = 2**10, 2**20, 2**30, 2**40
TFLOPS = 1e12          #: FLOP/s in one TFLOP/s
PFLOPS = 1e15
GBPS = 1e9             #: bytes/s in one GB/s
Gbit_per_s = 1e9 / 8   #: bytes/s in one gigabit per second (network links are quoted in bits)

# --- time and energy ----------------------------------------------------------------------------------------------
SECOND, MINUTE, HOUR, DAY = 1.0, 60.0, 3600.0, 86400.0
YEAR = 365 * DAY       #: a calendar year of 365 days (the sources' convention)
kWh = 3.6e6            #: joules in one kilowatt-hour
MWh, GWh = 1e3 * kWh, 1e6 * kWh

#: bytes per element for the number formats the book uses
BYTES_PER_ELEMENT = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}


def count_up(cards_worth) -> int:
    """The whole number of cards (or GPUs, or nodes) a fractional requirement needs: rounded *up*, never down, with a
    relative tolerance of 1e-12 (some 4,500 ulps) for floating-point noise — 2.8e12 / 80e9 is 35, not 36 — small
    enough that no real fraction of a card is dropped even at 10⁷ cards. The one rounding rule for a
    count of parts (:func:`chipchain.memory.min_gpus`, the walkthrough's cards and nodes).

    >>> count_up(32.6), count_up(35.0), count_up(35 * (1 + 1e-15)), count_up(35.0001)
    (33, 35, 35, 36)
    """
    v = _check.nonnegative("cards_worth", cards_worth)
    return math.ceil(v * (1 - 1e-12))


def median(values) -> float:
    """The median of an iterable of numbers (the mean of the middle two of an even count); ``ValueError`` when it is
    empty. The library's median of plain numbers (the statistics module would cost 7 ms of import time; arrays use
    numpy's):

    >>> median([3, 1, 2]), median([4.0, -1.0, 3.0, 2.0])
    (2.0, 2.5)
    """
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"values must be an iterable of numbers, got {values!r}")
    v = sorted(_check.number("values", x, allow_negative=True) for x in values)
    if not v:
        raise ValueError("values: no numbers to take a median of")
    k = len(v) // 2
    return v[k] if len(v) % 2 else (v[k - 1] + v[k]) / 2


def rising_root(f, lo, hi, *, tol) -> float:
    """The x in [``lo``, ``hi``] where a rising function ``f`` crosses zero, to |f(x)| ≤ ``tol`` — or the end of the
    range where it does not cross (``lo`` if f(lo) ≥ 0, ``hi`` if f(hi) ≤ 0). Regula falsi with the Illinois halving:
    exact in a step or two on a straight piece, a dozen evaluations on a curve, where bisection takes fifty.

    >>> round(rising_root(lambda x: x * x - 2, 0, 2, tol=1e-14), 12), rising_root(lambda x: x + 1, 0, 2, tol=1e-9)
    (1.414213562373, 0.0)
    """
    if not callable(f):
        raise ValueError(f"f must be a function of one number, got {f!r}")
    a, b = _check.number("lo", lo, allow_negative=True), _check.number("hi", hi, allow_negative=True)
    eps = _check.positive("tol", tol)
    if not a < b:
        raise ValueError(f"lo must be below hi, got lo={lo!r}, hi={hi!r}")
    fa, fb = (_check.number("f(x)", f(x), allow_negative=True) for x in (a, b))
    if fa >= 0 or fb <= 0:
        return a if fa >= 0 else b
    side = 0
    for _ in range(500):
        x = (a * fb - b * fa) / (fb - fa)
        fx = _check.number("f(x)", f(x), allow_negative=True)
        if abs(fx) <= eps or b - a <= 4e-16 * max(abs(a), abs(b)):
            return x
        if fx < 0:          # the root is right of x; keeping b twice in a row, halve f(b) (Illinois)
            a, fa, fb, side = x, fx, fb / 2 if side == -1 else fb, -1
        else:
            b, fb, fa, side = x, fx, fa / 2 if side == 1 else fa, 1
    raise RuntimeError(f"rising_root did not converge in [{a!r}, {b!r}]")  # pragma: no cover — Illinois converges


class Text(str):
    """A string that prints without quotes (its ``repr`` is itself), for myst-nb ``glue``."""

    def __repr__(self) -> str:
        return str(self)


def phrase(words) -> Text:
    """Words glued into prose, in the reader's language (:mod:`chipchain._i18n`): ``glue("k", units.phrase("drops"))``
    prints "drops" in the English edition and its catalog translation in the zh-CN one.

    >>> phrase("drops")
    drops
    """
    if not isinstance(words, str) or not words.strip():
        raise ValueError(f"words must be a non-empty string, got {words!r}")
    return Text(_t(words))


def listing(items) -> Text:
    """Items glued into prose as one list, each in the reader's language, joined as the language joins a list
    (", " in English, "、" in Chinese).

    >>> listing(["H100-PCIe", "Ascend-910B"])
    H100-PCIe, Ascend-910B
    """
    items = [str(i) for i in items]
    if not items or not all(i.strip() for i in items):
        raise ValueError(f"items must be non-empty strings, got {items!r}")
    return Text(_t(", ", strict=False).join(_t(i) for i in items))


def bytes_per_element(dtype: str) -> float:
    """Bytes one element of ``dtype`` occupies.

    >>> bytes_per_element("bf16")
    2
    """
    key = _check.choice("dtype", dtype, BYTES_PER_ELEMENT)
    return BYTES_PER_ELEMENT[key]


#: significant digits a stored output keeps: every IEEE-754 machine computes a value alike to far more than this,
#: while the last one or two of a float's 17 depend on the CPU's BLAS kernels and SIMD paths (issue 23)
STABLE_DIGITS = 12


def stable(value, digits: int = STABLE_DIGITS):
    """``value`` with every float rounded to ``digits`` significant figures (Python's correctly rounded decimal
    conversion), so that what a notebook stores is the same on every CPU. Integers, strings, ``None`` and other
    objects pass through; tuples, lists and dicts are rounded element by element; NumPy scalars and arrays become
    Python floats and lists of them. Non-finite floats pass through unchanged.

    >>> stable(0.9479448604570861), stable(0.9479448604570859)
    (0.947944860457, 0.947944860457)
    >>> stable({"a": (1 / 3, 2)}), stable(True), stable("x")
    ({'a': (0.333333333333, 2)}, True, 'x')
    """
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else value
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(stable(v, digits) for v in value)
    if isinstance(value, list):
        return [stable(v, digits) for v in value]
    if isinstance(value, dict):
        return {k: stable(v, digits) for k, v in value.items()}
    kind = type(value).__module__
    if kind == "numpy":
        if getattr(value, "ndim", None) == 0:           # a NumPy scalar
            item = value.item()
            return stable(item, digits)
        if hasattr(value, "tolist"):
            return stable(value.tolist(), digits)
    return value


def _figure(value):
    """``value``, unless it is a catalog figure the row lacks (:class:`~chipchain._check.Missing`): then the
    ``ValueError`` that names the part and the field, rather than "must be a real number".

    >>> fmt_number(_check.Missing("B200", "sms"))
    Traceback (most recent call last):
    ...
    ValueError: B200 has no 'sms' figure in the catalog
    """
    if isinstance(value, _check.Missing):
        raise value.error()
    # format what every machine computes alike: a figure one ulp either side of a rounding boundary would
    # otherwise print differently on another CPU
    return stable(value) if isinstance(value, float) else value


def _sig(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant figures, without scientific notation, trailing zeros dropped."""
    if x == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(x)))
    decimals = max(digits - 1 - magnitude, 0)
    s = f"{x:.{decimals}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def _prefixed(value: float, unit: str, digits: int, steps) -> Text:
    for factor, prefix in steps:
        if abs(value) >= factor:
            return Text(f"{_sig(value / factor, digits)} {prefix}{unit}")
    return Text(f"{_sig(value, digits)} {unit}")


_DECIMAL = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_FROM_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def fmt_sci(x, digits: int = 2) -> Text:
    """A number in the book's scientific notation, as a reader writes it: ``2.1 × 10²⁴``.

    >>> fmt_sci(2.1e24)
    2.1 × 10²⁴
    >>> fmt_sci(8.4e22, 3)
    8.4 × 10²²
    >>> parse_sci(fmt_sci(3.14e-5, 3))
    3.14e-05
    """
    x = _check.number("x", _figure(x), allow_negative=True)
    digits = _check.integer("digits", digits)
    if x == 0:
        return Text("0")
    # Python's own rounding to ``digits`` significant figures: exact for every float, subnormals included
    # (dividing by 10**exp underflows to zero below 1e-308), and 9.96 → 1.0 × 10¹ carries into the exponent.
    mant, exp = f"{x:.{digits - 1}e}".split("e")
    return Text(f"{_sig(float(mant), digits)} × 10{str(int(exp)).translate(_SUPERSCRIPT)}")


def parse_sci(text) -> float:
    """The number a :func:`fmt_sci` string stands for (``"2.1 × 10²⁴"`` → ``2.1e24``); plain numbers pass through."""
    s = str(text).strip()
    if " × 10" in s:
        mant, exp = s.split(" × 10", 1)
        return float(f"{float(mant)!r}e{int(exp.translate(_FROM_SUPERSCRIPT))}")
    try:
        return float(s)
    except ValueError:
        raise ValueError(f"text must be a number or 'm × 10ⁿ', got {text!r}") from None


def fmt_flops(flops, digits: int = 2) -> Text:
    """A FLOP count, e.g. ``2.1 × 10²⁴ FLOPs``.

    >>> fmt_flops(2.1e24)
    2.1 × 10²⁴ FLOPs
    """
    return Text(f"{fmt_sci(_check.nonnegative('flops', _figure(flops)), digits)} FLOPs")


def fmt_rate(flops_per_s, digits: int = 3) -> Text:
    """A throughput in FLOP/s with a decimal prefix: ``989 TFLOP/s``.

    >>> fmt_rate(989.4e12)
    989 TFLOP/s
    """
    return _prefixed(_check.nonnegative("flops_per_s", _figure(flops_per_s)), "FLOP/s", digits, _DECIMAL)


def fmt_bytes(nbytes, digits: int = 2) -> Text:
    """A size in decimal units: ``2.8 TB``, ``80 GB``.

    >>> fmt_bytes(80e9)
    80 GB
    """
    return _prefixed(_check.nonnegative("nbytes", _figure(nbytes)), "B", digits, _DECIMAL)


_BINARY = [(TiB, "Ti"), (GiB, "Gi"), (MiB, "Mi"), (KiB, "Ki")]


def fmt_capacity(nbytes, digits: int = 3) -> Text:
    """A memory capacity the way the book shows one to readers: binary first (what vendors mean by "GB" for HBM,
    DRAM and on-chip SRAM), then the same amount in decimal units after an equals sign: ``80 GiB = 85.9 GB``,
    ``228 KiB = 233 kB``. One rule everywhere, and no brackets of its own, so a caller that puts the capacity in
    parentheses never prints nested ones ("(80 GiB (85.9 GB))", the reader's pass, finding 27). Below a kibibyte
    both are the same number of bytes and it is printed once.

    >>> fmt_capacity(80 * GiB)
    80 GiB = 85.9 GB
    >>> fmt_capacity(228 * KiB)
    228 KiB = 233 kB
    >>> fmt_capacity(512)
    512 B
    """
    n = _check.nonnegative("nbytes", _figure(nbytes))
    binary, decimal = _prefixed(n, 'B', digits, _BINARY), _prefixed(n, 'B', digits, _DECIMAL)
    return Text(binary if str(binary) == str(decimal) else f"{binary} = {decimal}")


def fmt_bandwidth(bandwidth, digits: int = 3) -> Text:
    """A bandwidth in bytes per second: ``3.35 TB/s``.

    >>> fmt_bandwidth(3.35e12)
    3.35 TB/s
    """
    return _prefixed(_check.nonnegative("bandwidth", _figure(bandwidth)), "B/s", digits, _DECIMAL)


def fmt_power(power, digits: int = 2) -> Text:
    """A power: ``700 W``, ``70 MW``.

    >>> fmt_power(7e7)
    70 MW
    """
    return _prefixed(_check.nonnegative("power", _figure(power)), "W", digits, _DECIMAL)


def fmt_energy(energy, digits: int = 2) -> Text:
    """An energy in watt-hours with a prefix: ``50 GWh``.

    >>> fmt_energy(50 * GWh)
    50 GWh
    """
    wh = _check.nonnegative("energy", _figure(energy)) / 3600.0
    return _prefixed(wh, "Wh", digits, _DECIMAL)


def fmt_duration(seconds, digits: int = 3) -> Text:
    """A duration in the largest sensible unit: ``82 ms``, ``3.1 hours``, ``158 days``, ``748 years``.

    >>> fmt_duration(0.082)
    82 ms
    >>> fmt_duration(158 * DAY)
    158 days
    """
    s = _check.nonnegative("seconds", _figure(seconds))
    for size, name in ((YEAR, "years"), (DAY, "days"), (HOUR, "hours"), (MINUTE, "minutes"), (1.0, "s")):
        if s >= size:
            value = s / size
            text = _sig(value, digits) if value < 100 else f"{value:,.0f}"
            if name in ("years", "days", "hours", "minutes") and text == "1":
                name = name[:-1]
            if name == "s":
                return Text(f"{text} s")
            return Text(_t("{n} " + name).format(n=text))     # "{n} days" → 「{n} 天」 in the zh edition
    if s >= 1e-3:
        return Text(f"{_sig(s * 1e3, digits)} ms")
    if s >= 1e-6:
        return Text(f"{_sig(s * 1e6, digits)} µs")
    return Text(f"{_sig(s * 1e9, digits)} ns") if s else Text("0 s")


def fmt_dollars(dollars, digits: int = 3) -> Text:
    """Money in US dollars: ``$5.58 M``, ``$25,000``.

    >>> fmt_dollars(5.576e6)
    $5.58 M
    """
    d = _check.number("dollars", _figure(dollars), allow_negative=True)
    sign = "-" if d < 0 else ""
    d = abs(d)
    for factor, suffix in ((1e12, " T"), (1e9, " B"), (1e6, " M")):
        if d >= factor:
            return Text(f"{sign}${_sig(d / factor, digits)}{suffix}")
    return Text(f"{sign}${d:,.0f}")


def fmt_percent(fraction, digits: int = 2, *, decimals: int | None = None) -> Text:
    """A fraction as a percentage, the number and the sign apart as the book writes them: ``0.4`` → ``40 %``;
    ``digits`` significant figures, or a fixed number of ``decimals`` (as Python's ``{:.1%}`` but spaced).

    >>> fmt_percent(0.4)
    40 %
    >>> fmt_percent(0.0533, 2)
    5.3 %
    >>> fmt_percent(0.973, decimals=1), fmt_percent(0.5, decimals=0)
    (97.3 %, 50 %)
    """
    f = _check.number("fraction", _figure(fraction), allow_negative=True)
    if decimals is not None:
        decimals = _check.integer("decimals", decimals, minimum=0)
        return Text(f"{f * 100:.{decimals}f} %")
    return Text(f"{_sig(f * 100, digits)} %")


_UNSPACED_PERCENT = re.compile(r"(?<=\d)%")


def space_percent(text: str) -> str:
    """A percentage Python formatted (``f"{x:.0%}"`` → ``50%``) written as the book writes one: ``50 %``.

    >>> space_percent("50%"), space_percent("-1.5% of 100%"), space_percent("100 %")
    ('50 %', '-1.5 % of 100 %', '100 %')
    """
    return _UNSPACED_PERCENT.sub(" %", str(text))


#: a number and its spaced percent sign, "28 %", "−1.5 %", "3,000 %" (its own signs and separators with it): the
#: pair a line must never part (the tables below and book/_ext/steel_glue.py's prose keep it in one ``cc-nobr``)
PERCENT = re.compile(r"[−+±-]?\d[\d,.]* %")


def keep_percent_whole(html: str) -> str:
    """Escaped HTML text with each "number %" in ``<span class="cc-nobr">`` (``white-space: nowrap``), so no line
    break parts a number from its sign; what the text says is unchanged.

    >>> keep_percent_whole("from 12 % to 17 %")
    'from <span class="cc-nobr">12 %</span> to <span class="cc-nobr">17 %</span>'
    """
    return PERCENT.sub(lambda m: f'<span class="cc-nobr">{m.group()}</span>', str(html))


def fmt_number(x, digits: int = 3) -> Text:
    """A plain number with thousands separators for large values: ``16,896``; ``0.0833``.

    >>> fmt_number(16896)
    16,896
    """
    v = _check.number("x", _figure(x), allow_negative=True)
    if abs(v) >= 1000 and float(v).is_integer():
        return Text(f"{v:,.0f}")
    if abs(v) >= 1000:
        return Text(f"{round(v):,}")
    return Text(_sig(v, digits))
