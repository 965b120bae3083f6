"""The one table renderer of the book: what a reader sees instead of a pandas default.

:func:`show` turns a DataFrame into a :class:`Table` that displays as a styled HTML table in Jupyter and on the
site (``_repr_html_``), prints as deterministic plain text (``__str__``/``__repr__``, what nbval compares) and
hands its HTML to explorables' render functions (``.html``).

* Only the listed ``columns`` are shown, in that order, under human headers (``{"bw_GBps": "Per direction (GB/s)"}``
  or ``{"bw_GBps": Col("Per direction (GB/s)", fmt=",.0f")}``); without ``columns`` every column is shown under a
  humanised header (``bandwidth_per_direction_GBps`` → "Bandwidth per direction (GB/s)").
* The pandas RangeIndex is never shown. A non-default index carries data (model names, link names), so it becomes
  the first column (header: the index's name; select it in ``columns`` by that name, or ``"index"`` if unnamed).
* Numbers: integers (and floats holding whole numbers, as pandas stores integer columns with gaps) with thousands
  separators; other floats to ``precision`` significant digits with separators, trailing zeros dropped; never
  e-notation — magnitudes beyond 10¹⁵ or below 10⁻⁴ are written ``1.54 × 10¹⁷`` (better: put a unit in the header
  or format the column with a ``units.fmt_*`` helper). ``True``/``False`` show as "yes"/"no".
* A missing value (NaN, None, ``pd.NA``) shows as "—" and the table gets a note (``notes=("— : not in the
  catalog",)`` to say why; otherwise "— : no value").
* Text wraps (never truncates); numbers do not break; a table wider than its column scrolls horizontally inside a
  wrapper that shows a shadow at the edge that has more to see. The style (:data:`TABLE_CSS`) travels with
  ``_repr_html_`` and with every explorable's live output, and is in ``book/site.css`` for the static site.

>>> import pandas as pd
>>> df = pd.DataFrame({"link": ["NVLink4", "PCIe5"], "bandwidth_per_direction_GBps": [450.0, 63.0123],
...                    "lanes": [18, float("nan")]})
>>> t = show(df, columns={"link": "Link", "bandwidth_per_direction_GBps": "Per direction (GB/s)", "lanes": "Lanes"})
>>> print(t)
Link    | Per direction (GB/s) | Lanes
--------+----------------------+------
NVLink4 |                  450 |    18
PCIe5   |                   63 |     —
— : no value
>>> fmt_value(1.536e17), fmt_value(302486.47), fmt_value(0.000012345), fmt_value(12345)
('1.54 × 10¹⁷', '302,000', '1.23 × 10⁻⁵', '12,345')
"""
from __future__ import annotations

import html as _html
import math
import re
import numbers
from dataclasses import dataclass

from . import units
from ._i18n import gettext as _t
from ._lazy import np

__all__ = ["show", "Col", "Table", "fmt_value", "humanize", "TABLE_CSS", "STYLE", "MISSING"]

#: what a missing value shows as
MISSING = "—"

#: the table's style, emitted with every table (so it also holds in JupyterLab, where the site's CSS is absent)
TABLE_CSS = (
    ".cc-table-wrap{max-width:100%;overflow-x:auto;margin:.4em 0 1em;"
    "background:linear-gradient(to right,#fff 30%,rgba(255,255,255,0)),"
    "linear-gradient(to left,#fff 30%,rgba(255,255,255,0)) 100% 0,"
    "radial-gradient(farthest-side at 0 50%,rgba(0,0,0,.22),rgba(0,0,0,0)),"
    "radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,.22),rgba(0,0,0,0)) 100% 0;"
    "background-repeat:no-repeat;background-size:40px 100%,40px 100%,14px 100%,14px 100%;"
    "background-attachment:local,local,scroll,scroll}"
    "table.cc-table{border-collapse:collapse;margin:0;font-size:max(12px,.9em);line-height:1.35;background:transparent;"
    "width:auto;max-width:none;table-layout:auto}"
    "table.cc-table caption{caption-side:top;text-align:left;font-style:italic;padding:0 0 .3em;"
    "white-space:normal}"
    "table.cc-table th,table.cc-table td{padding:.3em .6em;vertical-align:top;border:0;"
    "border-bottom:1px solid #ddd;white-space:normal;overflow:visible;text-overflow:clip;max-width:none}"
    "table.cc-table thead th{border-bottom:2px solid #555;font-weight:600;text-align:left;vertical-align:bottom}"
    "table.cc-table .cc-num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}"
    "table.cc-table thead th.cc-num{white-space:normal}"
    "table.cc-table .cc-text{text-align:left;min-width:7em;max-width:28em;overflow-wrap:break-word;hyphens:auto}"
    "table.cc-table tbody th{text-align:left;font-weight:600}"
    ".cc-table-notes{font-size:max(12px,.85em);color:#444;margin:-.6em 0 1em}"
    ".cc-table-wrap .cc-nobr,.cc-table-notes .cc-nobr{white-space:nowrap}"
)

#: :data:`TABLE_CSS` as a ``<style>`` element
STYLE = f"<style>{TABLE_CSS}</style>"


# unit suffixes of catalog column names → the unit a header shows
_UNITS = [
    ("GBps", "GB/s"), ("TBps", "TB/s"), ("MBps", "MB/s"), ("Gbps", "Gb/s"), ("PBps", "PB/s"),
    ("TFLOPs", "TFLOP/s"), ("tflops", "TFLOP/s"), ("pflops", "PFLOP/s"), ("PFLOPs", "PFLOP/s"),
    ("GiB", "GiB"), ("GB", "GB"), ("TB", "TB"), ("MB", "MB"), ("KB", "KB"), ("kB", "kB"), ("PB", "PB"),
    ("us", "µs"), ("ms", "ms"), ("ns", "ns"), ("s", "s"), ("h", "h"), ("hours", "hours"), ("days", "days"),
    ("kW", "kW"), ("MW", "MW"), ("W", "W"), ("GWh", "GWh"), ("MWh", "MWh"), ("kWh", "kWh"), ("J", "J"),
    ("pct", "%"), ("percent", "%"), ("usd", "$"), ("USD", "$"), ("mm2", "mm²"), ("nm", "nm"), ("GHz", "GHz"),
    ("MHz", "MHz"),
]
_UNIT_MAP = dict(_UNITS)
_WORDS = {"bw": "bandwidth", "mfu": "MFU", "hbm": "HBM", "gpu": "GPU", "gpus": "GPUs", "kv": "KV", "tp": "TP",
          "pp": "PP", "dp": "DP", "ep": "EP", "sram": "SRAM", "id": "ID", "io": "I/O", "tdp": "TDP",
          "fp8": "FP8", "fp16": "FP16", "bf16": "BF16", "fp32": "FP32", "tf32": "TF32", "int8": "INT8",
          "fp64": "FP64", "flops": "FLOPs", "cpu": "CPU", "nvlink": "NVLink", "ib": "InfiniBand", "sms": "SMs",
          "llm": "LLM", "moe": "MoE"}


def humanize(name) -> str:
    """A human header for a snake_case column name, its unit suffix in parentheses.

    >>> humanize("bandwidth_per_direction_GBps"), humanize("kv_KB_per_token_bf16"), humanize("Cost ($ M)")
    ('Bandwidth per direction (GB/s)', 'KV KB per token BF16', 'Cost ($ M)')
    """
    text = str(name)
    if "_" not in text and not text.islower():
        return text                                   # already a human header ("Cost ($ M)", "MFU")
    parts = [p for p in text.split("_") if p]
    if not parts:
        return text
    unit = None
    if len(parts) > 1 and parts[-1] in _UNIT_MAP:
        unit = _UNIT_MAP[parts.pop()]
    words = [_WORDS.get(p.lower(), p) for p in parts]
    head = " ".join(words)
    head = head[0].upper() + head[1:] if head else head
    return f"{head} ({unit})" if unit else head


def _is_missing(v) -> bool:
    if v is None or v is Ellipsis:
        return True
    if isinstance(v, float):
        return math.isnan(v)
    if isinstance(v, (str, numbers.Integral)):
        return False
    try:                                              # pd.NA, pd.NaT, numpy floats
        import pandas as pd

        res = pd.isna(v)
        return bool(res) if np.ndim(res) == 0 else False
    except (ImportError, TypeError, ValueError):
        return False


def _is_bool(v) -> bool:
    return isinstance(v, bool) or type(v).__name__ in ("bool_", "bool")


def fmt_value(v, precision: int = 3) -> str:
    """One cell as text, by the rules in the module docstring."""
    if _is_missing(v):
        return MISSING
    if _is_bool(v):
        return "yes" if v else "no"
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}"
    if isinstance(v, numbers.Real):
        x = units.stable(float(v))        # what every CPU computes alike, before rounding to what is shown
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        if x == 0:
            return "0"
        ax = abs(x)
        if ax >= 1e15 or ax < 1e-4:
            return str(units.fmt_sci(x, precision))
        if x == int(x) and ax < 1e15:
            return f"{int(x):,}"
        mag = math.floor(math.log10(ax))
        if mag >= precision - 1:
            return f"{round(x, -(mag - precision + 1)):,.0f}"
        s = f"{x:,.{precision - 1 - mag}f}"
        return s.rstrip("0").rstrip(".") if "." in s else s
    if isinstance(v, (list, tuple, set, frozenset)):
        return ", ".join(fmt_value(x, precision) for x in v)
    return sci_words(str(v))


_E_NOTATION = re.compile(r"\b(\d+(?:\.\d+)?)[eE]([+-]?)0*(\d+)\b")


def sci_words(text: str) -> str:
    """Text with every e-notation number written as a reader writes it, mantissa kept as written.

    >>> sci_words("6 × 1.75e11 × 2e12 = 2.1e+24 FLOP")
    '6 × 1.75 × 10¹¹ × 2 × 10¹² = 2.1 × 10²⁴ FLOP'
    """
    def word(m):
        exp = ("-" if m.group(2) == "-" else "") + m.group(3)
        return f"{m.group(1)} × 10{exp.translate(units._SUPERSCRIPT)}"

    return _E_NOTATION.sub(word, str(text))


@dataclass(frozen=True)
class Col:
    """A column's header and, optionally, its format: a format spec (``",.0f"``), a format string
    (``"{:.1%}"``) or a callable (``units.fmt_bandwidth``), applied to every value that is not missing. A
    percentage is written as the book writes one, the sign apart from the number: ``"{:.0%}"`` gives ``46 %``."""

    header: str
    fmt: object = None

    def render(self, v, precision: int) -> str:
        if _is_missing(v) or self.fmt is None:
            return fmt_value(v, precision)
        if isinstance(v, float):
            v = units.stable(v)
        if callable(self.fmt):
            return str(self.fmt(v))
        text = str(self.fmt).format(v) if "{" in str(self.fmt) else format(v, str(self.fmt))
        return units.space_percent(text)


def _numeric(values) -> bool:
    seen = False
    for v in values:
        if _is_missing(v):
            continue
        if _is_bool(v) or not isinstance(v, numbers.Real):
            return False
        seen = True
    return seen


class Table:
    """A formatted table: ``_repr_html_`` for Jupyter and the site, ``str`` for text, ``.html`` for explorables."""

    def __init__(self, headers, rows, *, numeric, caption=None, notes=(), row_header=False, source=None):
        # in the reader's language (chipchain._i18n): headers, caption and notes are the library's words; a text
        # cell is data (a name, a source's note) unless the catalog has it, so a missing one is not reported
        numeric = list(numeric)
        self.headers = [_t(str(h)) for h in headers]
        self.rows = [[str(c) if n else _t(str(c), strict=False) for c, n in zip(r, numeric + [False] * len(r))]
                     for r in rows]
        self.numeric = numeric
        self.caption = _t(str(caption)) if caption else None
        self.notes = tuple(_t(str(n)) for n in notes)
        self.row_header = bool(row_header)
        self.df = source                              #: the DataFrame the table was made from

    @property
    def html(self) -> str:
        """The table as an HTML fragment (without its ``<style>``: the site's CSS and the explorable carry it)."""
        def e(text):                            # escaped, each "number %" kept on one line (units.PERCENT)
            return units.keep_percent_whole(_html.escape(text))
        label = f' aria-label="{_html.escape(self.caption)}"' if self.caption else ""
        out = [f'<div class="cc-table-wrap" role="region" tabindex="0"{label}><table class="cc-table">']
        if self.caption:
            out.append(f"<caption>{e(self.caption)}</caption>")
        cls = ["cc-num" if n else "cc-text" for n in self.numeric]
        out.append("<thead><tr>" + "".join(f'<th scope="col" class="{c}">{e(h)}</th>'
                                           for c, h in zip(cls, self.headers)) + "</tr></thead><tbody>")
        for r in self.rows:
            cells = []
            for j, (c, v) in enumerate(zip(cls, r)):
                tag = "th" if (j == 0 and self.row_header) else "td"
                scope = ' scope="row"' if tag == "th" else ""
                cells.append(f'<{tag}{scope} class="{c}">{e(v)}</{tag}>')
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</tbody></table></div>")
        if self.notes:
            out.append('<p class="cc-table-notes">' + "<br>".join(e(n) for n in self.notes) + "</p>")
        return "".join(out)

    def _repr_html_(self) -> str:
        return STYLE + self.html

    def __str__(self) -> str:
        cols = list(zip(self.headers, *self.rows)) if self.headers else []
        widths = [max(len(x) for x in col) for col in cols]

        def line(cells, numeric_right=True):
            return " | ".join((c.rjust(w) if (n and numeric_right) else c.ljust(w))
                              for c, w, n in zip(cells, widths, self.numeric)).rstrip()

        out = [self.caption] if self.caption else []
        out.append(" | ".join(h.ljust(w) if not n else h.rjust(w)
                              for h, w, n in zip(self.headers, widths, self.numeric)).rstrip())
        out.append("-+-".join("-" * w for w in widths))
        out.extend(line(r) for r in self.rows)
        out.extend(self.notes)
        return "\n".join(out)

    def __repr__(self) -> str:
        return str(self)

    def __len__(self) -> int:
        return len(self.rows)


def show(df, *, columns=None, caption=None, notes=(), precision: int = 3) -> Table:
    """``df`` (a DataFrame, a Series, or anything ``pandas.DataFrame`` accepts) as a :class:`Table`.

    ``columns``: None (every column, humanised headers), a list of column names (humanised headers) or a dict
    mapping a column to its header (a string) or to a :class:`Col`. ``notes``: lines printed under the table.
    """
    import pandas as pd

    if isinstance(precision, bool) or not isinstance(precision, int) or not 1 <= precision <= 15:
        raise ValueError(f"precision must be an integer from 1 to 15, got {precision!r}")
    if isinstance(notes, str):
        notes = (notes,)
    if isinstance(df, pd.Series):
        df = df.to_frame()
    elif not isinstance(df, pd.DataFrame):
        df = pd.DataFrame(df)
    frame = df
    row_header = False
    if not isinstance(df.index, pd.RangeIndex) or df.index.name is not None:
        frame = df.reset_index()
        row_header = True
    if isinstance(frame.columns, pd.MultiIndex):
        frame = frame.copy()
        frame.columns = [" ".join(str(p) for p in c if str(p)) for c in frame.columns]
    available = list(frame.columns)
    if columns is None:
        spec = {c: Col(humanize(c) if not (row_header and i == 0 and str(c) == "index") else "")
                for i, c in enumerate(available)}
    else:
        if isinstance(columns, (list, tuple)):
            columns = {c: humanize(c) for c in columns}
        if not isinstance(columns, dict) or not columns:
            raise ValueError(f"columns must be a non-empty dict or list of column names, got {columns!r}")
        missing = [c for c in columns if c not in available]
        if missing:
            import difflib

            hints = {c: difflib.get_close_matches(str(c), [str(a) for a in available], n=3) for c in missing}
            raise KeyError(f"columns {missing!r} are not in the table (nearest: {hints}; it has {available!r})")
        spec = {c: (h if isinstance(h, Col) else Col(str(h))) for c, h in columns.items()}
        row_header = row_header and next(iter(spec)) == available[0]
    keys = list(spec)
    data = [frame[k].tolist() for k in keys]
    rows = [[spec[k].render(col[i], precision) for k, col in zip(keys, data)] for i in range(len(frame))]
    numeric = [_numeric(col) for col in data]
    notes = tuple(notes)
    if any(MISSING in c for r in rows for c in r) and not any(MISSING in n for n in notes):
        notes = notes + (f"{MISSING} : no value",)
    return Table([spec[k].header for k in keys], rows, numeric=numeric, caption=caption, notes=notes,
                 row_header=row_header, source=df)
