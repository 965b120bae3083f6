"""Ticks for the explorable charts: nice 1-2-2.5-5 steps, decades on log axes, and one label format per axis."""
from __future__ import annotations

import math

from ._svg import _F, _width


# --- ticks -------------------------------------------------------------------------------------------------------
_SUP = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_PREFIXES = tuple((10.0**e, p) for e, p in ((15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k")))


def _decimals(v: float) -> int:
    """Fewest decimals that write ``v`` exactly (to 9 significant digits)."""
    for d in range(0, 12):
        if abs(round(v, d) - v) <= 1e-9 * max(abs(v), 1e-300):
            return d
    return 12


def _step_decimals(ticks) -> int:
    """Decimals that write the step between ticks exactly (so every tick of an axis has the same)."""
    if len(ticks) < 2:
        return max((_decimals(v) for v in ticks), default=0)
    step = min(b - a for a, b in zip(ticks, ticks[1:]))
    for d in range(0, 12):
        if abs(round(step, d) - step) <= 1e-6 * step:
            return d
    return 12


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _si(v: float) -> str:
    a = abs(v)
    for factor, prefix in _PREFIXES:
        if a >= factor * (1 - 1e-9):
            return _trim(f"{v / factor:.2f}") + prefix
    return _trim(f"{v:.{min(_decimals(v), 6)}f}") if v else "0"


def _mantissa_exponent(v: float, digits: int = 7) -> tuple[float, int]:
    """``v`` as m × 10^e with 1 ≤ |m| < 10, through Python's own e-format: exact for every float, subnormals
    included, where ``v / 10**e`` divides by zero (10**-324 underflows)."""
    m, e = f"{v:.{digits - 1}e}".split("e")
    return float(m), int(e)


def _pow10(v: float) -> str:
    if v == 0:
        return "0"
    m, e = _mantissa_exponent(v, 3)          # the head shows at most three digits: 9.999e-5 is 10⁻⁴, not 10×10⁻⁵
    head = "" if abs(m - 1) < 1e-9 else ("−" if abs(m + 1) < 1e-9 else _trim(f"{m:.2f}") + "×")
    return f"{head}10{str(e).translate(_SUP)}"


def _labels(ticks, fmt, log: bool) -> list[str]:
    """One format for every tick of an axis."""
    if callable(fmt):
        return [str(fmt(v)) for v in ticks]
    nz = [abs(v) for v in ticks if v]
    if fmt is None:
        if log:
            fmt = "pow10" if nz and (min(nz) < 1e-3 or max(nz) >= 1e18) else "si"
        elif nz and (max(nz) >= 1e5 and min(nz) >= 1e3):
            fmt = "si"
        elif nz and max(nz) < 1e-3:
            fmt = "pow10"
        else:
            fmt = "plain"
    uniform = not log or not all(_trim(f"{_mantissa_exponent(v)[0]:.6f}") in ("1", "2", "5") for v in nz)
    if fmt == "si" and not (uniform and nz and max(nz) < 1e3):
        labels = [_si(v) for v in ticks]
        if len(set(labels)) == len(labels):
            return labels
        fmt, log = "plain", False                       # a narrow range far from zero: 99,970 … 100,000
    if fmt == "si":
        fmt, log = "plain", False
    if fmt == "pow10":
        return [_pow10(v) for v in ticks]
    if fmt == "percent":
        d = _step_decimals([v * 100 for v in ticks])
        return [f"{v * 100:,.{min(d, 3)}f}%" for v in ticks]
    if fmt == "plain":
        if log and not uniform:
            return [f"{v:,.{min(_decimals(v), 9)}f}" for v in ticks]
        d = min(_step_decimals(ticks), 9)
        return [f"{v:,.{d}f}" for v in ticks]
    raise ValueError(f"format must be 'si', 'pow10', 'plain', 'percent' or a callable, got {fmt!r}")


def _linear_ticks(lo: float, hi: float, max_n: int) -> list[float]:
    span = hi - lo
    if span <= 0:
        return [lo]
    mag = 10 ** math.floor(math.log10(span / max(max_n, 2)) - 1)
    for _ in range(40):
        for m in (1, 2, 2.5, 5):
            step = m * mag
            first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
            if last - first + 1 <= max_n:
                ticks = [round(k * step, 12) + 0.0 for k in range(first, last + 1)]
                tol = 1e-9 * span           # k × step can land an ulp outside a range only a few ulps wide: clamp
                return [v if lo - tol <= v <= hi + tol else min(max(v, lo), hi) for v in ticks]
        mag *= 10
    return [lo, hi]


def _log_ticks(lo: float, hi: float, max_n: int) -> list[float]:
    e0, e1 = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    decades = list(range(e0, e1 + 1))
    if len(decades) >= 3:
        step = math.ceil(len(decades) / max_n)
        return [10.0**e for e in decades if e % step == 0] if step > 1 else [10.0**e for e in decades]
    for mults in ((1, 2, 5), (1, 1.5, 2, 3, 5, 7)):
        cands = sorted({round(m * 10.0**e, 12) for e in range(e0 - 1, e1 + 1) for m in mults
                        if lo * (1 - 1e-9) <= m * 10.0**e <= hi * (1 + 1e-9)})
        if 3 <= len(cands) <= max_n:
            return cands
        if len(cands) > max_n:
            return [10.0**e for e in decades] if len(decades) >= 2 else cands[:: math.ceil(len(cands) / max_n)]
    return [t for t in _linear_ticks(lo, hi, max_n) if t > 0]


def _axis(lim, log: bool, fmt, ticks, length: float, vertical: bool = False):
    """(tick values, tick labels) for an axis ``length`` units long, spaced so labels never overlap."""
    if ticks is not None:
        pairs = [(float(t[0]), str(t[1])) if isinstance(t, (tuple, list)) else (float(t), None) for t in ticks]
        tol = 1e-9 * (lim[1] - lim[0])
        pairs = [(v, l) for v, l in pairs if lim[0] - tol <= v <= lim[1] + tol and (not log or v > 0)]
        values = [v for v, _ in pairs]
        auto = _labels(values, fmt, log) if values else []
        return values, [l if l is not None else a for (_, l), a in zip(pairs, auto)]
    max_n = 7
    while True:
        values = _log_ticks(*lim, max_n) if log else _linear_ticks(*lim, max_n)
        labels = _labels(values, fmt, log)
        if max_n <= 3 or len(values) < 2:
            return values, labels
        gap = length / max(len(values) - 1, 1)
        need = 1.7 * _F if vertical else max(_width(l) for l in labels) + 0.9 * _F
        if gap >= need:
            return values, labels
        max_n -= 1
