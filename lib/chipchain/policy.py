"""Export controls as arithmetic: total processing performance, performance density, and the rules that use them.

* **Total processing performance** (TPP, US BIS, ECCN 3A090): ``TPP = 2 · MacTOPS · bit length`` of the operation,
  dense, at the precision that gives the highest value, summed over processing units. One multiply-accumulate is two
  operations, so ``2 · MacTOPS`` is the dense tera-operations per second the datasheets print:
  ``TPP = TOPS · bits``. 4,800 ≈ 300 dense TFLOPS at 16 bits ≈ 600 TOPS at 8 bits.
* **Performance density** ``PD = TPP / die area`` (mm² of applicable die area).
* **Rules as data** in ``data/export_rules.json``: each category is a list of alternative branches, each branch a
  list of conditions ``min ≤ metric < max`` (``min`` inclusive, ``max`` exclusive). :func:`classify` evaluates them
  and says in words which threshold caught a chip or why it passed. The rules are paraphrased from secondary notes
  that quote the Federal Register text (checked V2); the book says so.

Bit length of TF32: the format carries 19 bits (1 sign, 8 exponent, 10 mantissa) in a 32-bit register. This module
counts it at 19 bits (:data:`BITS`). That is a reading of "bit length of the operation", not settled text: at 32
bits a part that runs TF32 at its BF16 rate would double its TPP on paper (Trainium2's catalog row lists TF32 at
its BF16 rate, so even at 19 bits its highest TPP comes from TF32). For NVIDIA
parts, which run TF32 at half the BF16 rate, the choice changes nothing.

>>> round(tpp("H100")), round(tpp("A100"))
(15832, 4992)
>>> classify("A800", "2022-10").category, classify("A800", "2023-10").category
('not controlled', '3A090.a')
"""
from __future__ import annotations

import csv
import difflib
import html
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from . import _check, hardware, plotting, units, widgets

__all__ = ["BITS", "tpp_from", "tpp", "tpp_precision", "performance_density_from", "performance_density", "Rule",
           "rules", "rule", "Classification", "classify_numbers", "classify", "placements", "timeline", "superpods",
           "plot_rule_plane", "design_a_chip_explorer"]

#: bit length per precision for TPP; TF32 at its 19 carried bits (see the module docstring)
BITS = {**hardware.BITS, "tf32": 19}

_LABELS = {"tpp": "TPP", "pd": "performance density", "io_GBps": "bidirectional I/O"}
_MISSING = {"pd": "die area", "io_GBps": "chip-to-chip bandwidth", "tpp": "peak throughput"}


# --- the two metrics ---------------------------------------------------------------------------------------------
def tpp_from(tops, bits) -> float:
    """``TPP = 2 · MacTOPS · bits = TOPS · bits`` from a dense peak in tera-operations per second and a bit length.

    ``tops`` dense TOPS or TFLOPS (1e12 operations per second, the datasheet unit); ``bits`` the operand width.
    Result dimensionless. The A100's 312 dense BF16 TFLOPS: 312 × 16 = 4,992; the 4,800 threshold is 300 × 16:

    >>> tpp_from(312, 16), tpp_from(300, 16), tpp_from(600, 8)
    (4992.0, 4800.0, 4800.0)
    """
    return _check.nonnegative("tops", tops) * _check.integer("bits", bits)


def tpp_precision(accelerator) -> tuple[float, str]:
    """The highest TPP over the catalog's dense peaks and the precision that gives it: ``max_d peak_d/1e12 · bits_d``.

    On a tie the format listed first (the wider one) is kept. ``ValueError`` if the catalog
    has no peak for the part.

    >>> tpp_precision("RTX-4090")
    (5284.8, 'fp8')
    """
    acc = hardware.get(accelerator)
    best = None
    for d in acc.precisions():
        value = tpp_from(acc.peak_flops(d) / 1e12, BITS[d])
        if best is None or value > best[0] + 1e-9:
            best = (round(value, 6), d)
    if best is None:
        raise ValueError(f"{acc.name} has no peak throughput in the catalog, so no TPP")
    return best


def tpp(accelerator) -> float:
    """Total processing performance of a catalog part (dense, highest over its precisions); see :func:`tpp_from`.

    Source: BIS, 88 FR 73458 (definition of TPP), applied to the catalog's dense peaks. H20 (an estimate, no
    datasheet): 148 × 16 = 2,368.

    >>> round(tpp("H20"))
    2368
    """
    return tpp_precision(accelerator)[0]


def performance_density_from(tpp_, die_area_mm2) -> float:
    """``PD = TPP / die area`` with the area in mm² (the rule's unit); dimensionless result per mm².

    >>> round(performance_density_from(4992, 826), 2)
    6.04
    """
    return _check.nonnegative("tpp_", tpp_) / _check.positive("die_area_mm2", die_area_mm2)


def performance_density(accelerator) -> float:
    """Performance density of a catalog part; ``ValueError`` saying the catalog lacks the die area when it does.

    >>> round(performance_density("H100"), 2)
    19.45
    >>> performance_density("B200")
    Traceback (most recent call last):
    ...
    ValueError: B200 has no die_area_mm2 figure in the catalog
    """
    acc = hardware.get(accelerator)
    return performance_density_from(tpp(acc), acc.require("die_area_mm2"))


# --- rules ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    """One export-control rule: its thresholds (``categories``), citation and a plain-words summary."""

    id: str
    name: str
    date: str
    effective: str | None       #: date the rule took effect, where our sources give it
    citation: str
    bibkey: str
    checked: str
    paraphrase: bool
    summary: str
    categories: tuple       #: ((name, ((cond, ...), ...)), ...) with cond = (metric, min, max)
    exemption: dict | None


@lru_cache(maxsize=1)
def _rules() -> tuple:
    with resources.files("chipchain").joinpath("data/export_rules.json").open(encoding="utf-8") as f:
        data = json.load(f)
    out = []
    for r in data["rules"]:
        cats = tuple((c["name"], tuple(tuple((k["metric"], k.get("min"), k.get("max")) for k in branch)
                                       for branch in c["any_of"])) for c in r["categories"])
        out.append(Rule(r["id"], r["name"], r["date"], r["effective"], r["citation"], r["bibkey"], r["checked"],
                        bool(r["paraphrase"]), r["summary"], cats, r["exemption"]))
    return tuple(out)


def rules() -> list[Rule]:
    """Every rule in ``data/export_rules.json``, oldest first.

    >>> [r.id for r in rules()]
    ['2022-10', '2023-10']
    """
    return list(_rules())


def rule(rule_id) -> Rule:
    """Look a rule up by id (``"2022-10"``), date (``"2022-10-07"``) or year; a :class:`Rule` passes through.

    >>> rule("2023").citation
    '88 FR 73458'
    >>> rule("2024-12")
    Traceback (most recent call last):
    ...
    KeyError: "unknown rule '2024-12'; known rules: 2022-10, 2023-10"
    """
    if isinstance(rule_id, Rule):
        return rule_id
    if not isinstance(rule_id, str):
        raise ValueError(f"rule_id must be a rule id such as '2023-10', got {rule_id!r}")
    for r in _rules():
        if rule_id in (r.id, r.date, r.date[:4]):
            return r
    known = [r.id for r in _rules()]
    near = difflib.get_close_matches(rule_id, known, n=3, cutoff=0.0) or known
    raise KeyError(f"unknown rule {rule_id!r}; known rules: {', '.join(sorted(near))}")


@dataclass(frozen=True)
class Classification:
    """How a rule treats a chip: ``category`` (``"3A090.a"``, ``"not controlled"``, ``"not controlled (note)"``,
    ``"undetermined"`` …), ``controlled`` (True, False, or None when the catalog lacks a figure) and the reason."""

    rule: str
    category: str
    controlled: bool | None
    reason: str
    tpp: float | None
    pd: float | None
    io_GBps: float | None


def _fmt(metric, v):
    if metric == "tpp":
        return units.fmt_number(round(v, 1))
    if metric == "pd":
        return f"{v:.3g}"
    return f"{v:g} GB/s"


def _cond(metric, lo, hi, values):
    """(status, words) for one condition; status None when the value is missing."""
    v = values.get(metric)
    label = _LABELS[metric]
    if v is None:
        return None, f"{label} unknown (the catalog lacks the {_MISSING[metric]})"
    lo_ok = lo is None or v >= lo
    hi_ok = hi is None or v < hi
    if not lo_ok:
        return False, f"{label} {_fmt(metric, v)} < {lo:,g}"
    if not hi_ok:
        return False, f"{label} {_fmt(metric, v)} ≥ {hi:,g}"
    if lo is not None and hi is not None:
        return True, f"{lo:,g} ≤ {label} {_fmt(metric, v)} < {hi:,g}"
    return True, f"{label} {_fmt(metric, v)} ≥ {lo:,g}" if lo is not None else f"{label} {_fmt(metric, v)} < {hi:,g}"


def _branch(branch, values):
    results = [_cond(m, lo, hi, values) for m, lo, hi in branch]
    falses = [w for s, w in results if s is False]
    if falses:
        return False, falses[0]
    unknown = [w for s, w in results if s is None]
    if unknown:
        return None, unknown[0]
    return True, " and ".join(w for _, w in results)


def classify_numbers(tpp_, pd=None, io_bidir=None, market="datacenter", rule_id="2023-10") -> Classification:
    """Classify a chip described by raw numbers under one rule.

    ``tpp_`` dimensionless; ``pd`` TPP per mm² (None if unknown); ``io_bidir`` chip-to-chip bandwidth in bytes/s,
    both directions summed (None if unknown); ``market`` ``"datacenter"`` or ``"consumer"``. Thresholds are
    inclusive at their lower end: a chip exactly at TPP 4,800 with I/O exactly 600 GB/s is caught by the 2022 rule.

    >>> c = classify_numbers(4800, io_bidir=600e9, rule_id="2022-10")
    >>> c.category, c.reason
    ('3A090', 'caught by 3A090: TPP 4,800 ≥ 4,800 and bidirectional I/O 600 GB/s ≥ 600')
    >>> r = classify_numbers(2272, pd=3.62, market="consumer").reason
    >>> r.split(", but ")[0]
    'by the numbers 3A090.b (TPP 2,272 ≥ 1,600 and 3.2 ≤ performance density 3.62 < 5.92)'
    >>> r.split(", but ")[1]
    'a part not designed or marketed for datacenters is not caught when its TPP is below 4,800'
    """
    r = rule(rule_id)
    t = _check.nonnegative("tpp_", tpp_)
    p = None if pd is None else _check.nonnegative("pd", pd)
    io = None if io_bidir is None else _check.nonnegative("io_bidir", io_bidir) / 1e9
    m = _check.choice("market", market, ("datacenter", "consumer"))
    values = {"tpp": t, "pd": p, "io_GBps": io}
    missed, unknown = [], []
    for name, branches in r.categories:
        outcomes = [_branch(b, values) for b in branches]
        hits = [w for s, w in outcomes if s is True]
        if hits and not unknown:
            ex = r.exemption
            if ex and m != ex["market_not"] and t < ex["max"]:
                return Classification(r.id, "not controlled (note)", False,
                                      f"by the numbers {name} ({hits[0]}), but {ex['text']}", t, p, io)
            return Classification(r.id, name, True, f"caught by {name}: {hits[0]}", t, p, io)
        unknown += [w for s, w in outcomes if s is None]
        missed += [w for s, w in outcomes if s is False]
    if unknown:
        return Classification(r.id, "undetermined", None, f"cannot decide: {unknown[0]}", t, p, io)
    return Classification(r.id, "not controlled", False, "passes: " + "; ".join(dict.fromkeys(missed)), t, p, io)


def classify(accelerator, rule_id="2023-10") -> Classification:
    """Classify a catalog part under a rule, using its TPP, performance density, I/O bandwidth and market.

    The compliant-variant story, computed: the A800 and H800 kept TPP above 4,800 but cut NVLink to 400 GB/s and
    passed the 2022 test; the 2023 rule drops the I/O test and catches them.

    >>> classify("H800", "2022-10").reason
    'passes: bidirectional I/O 400 GB/s < 600'
    >>> classify("H800", "2023-10").reason
    'caught by 3A090.a: TPP 15,832 ≥ 4,800'
    """
    acc = hardware.get(accelerator)
    if not acc.precisions():
        r = rule(rule_id)
        return Classification(r.id, "undetermined", None, f"cannot decide: the catalog has no peak throughput for "
                              f"{acc.name}, so no TPP", None, None, None)
    t = tpp(acc)
    pd = performance_density_from(t, acc.die_area_mm2) if acc.die_area_mm2 else None
    return classify_numbers(t, pd, acc.interconnect_bandwidth, acc.market, rule_id)


def placements(rule_ids=None):
    """Every catalog part with its TPP, performance density and category under each rule, as a pandas DataFrame.

    >>> df = placements()
    >>> [str(v) for v in df.loc["H20", ["tpp", "2022-10", "2023-10"]]]
    ['2368.0', 'not controlled', 'not controlled']
    """
    import pandas as pd

    ids = [r.id for r in _rules()] if rule_ids is None else [rule(i).id for i in rule_ids]
    rows = []
    for acc in hardware.all_accelerators():
        t, d = tpp_precision(acc) if acc.precisions() else (None, None)
        row = {"name": acc.name, "vendor": acc.vendor, "market": acc.market, "checked": acc.checked, "tpp": t,
               "at": d, "pd": performance_density_from(t, acc.die_area_mm2) if acc.die_area_mm2 and t else None,
               "io_GBps": acc.interconnect_bandwidth / 1e9 if acc.interconnect_bandwidth is not None else None}
        for i in ids:
            c = classify(acc, i)
            row[i] = c.category
            row[f"{i} reason"] = c.reason
        rows.append(row)
    return pd.DataFrame(rows).set_index("name")


def timeline():
    """The policy timeline (``data/policy_timeline.csv``) as a pandas DataFrame, oldest first.

    >>> timeline()["date"].tolist()[:2]
    ['2022-10-07', '2023-10-17']
    """
    import pandas as pd

    with resources.files("chipchain").joinpath("data/policy_timeline.csv").open(encoding="utf-8") as f:
        return pd.read_csv(f, dtype=str, keep_default_na=False).sort_values("date").reset_index(drop=True)


def superpods():
    """Rack-scale systems (``data/superpods.csv``): Atlas 900 A3 SuperPoD (both figures its page prints) and
    GB200 NVL72 (compute and memory from the catalog's B200 estimate), with per-rack and per-accelerator figures.

    >>> df = superpods()
    >>> df["pflops_16bit"].round(1).tolist()
    [307.2, 288.7, 162.0]
    """
    import pandas as pd

    with resources.files("chipchain").joinpath("data/superpods.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        acc = hardware.get(r["accelerator"])
        n = int(r["accelerators"])
        pf = float(r["pflops_16bit"]) if r["pflops_16bit"] else n * acc.peak_flops("bf16") / 1e15
        mem = float(r["memory_TB"]) if r["memory_TB"] else n * acc.require("memory_bytes") / 1e12
        kw = float(r["power_kW"]) if r["power_kW"] else None
        racks = int(r["racks"])
        out.append({"system": r["system"], "accelerators": n, "racks": racks, "pflops_16bit": pf,
                    "pflops_per_rack": pf / racks, "tflops_per_accelerator": pf * 1e3 / n, "memory_TB": mem,
                    "power_kW": kw, "tflops_per_W": pf * 1e15 / (kw * 1e3) / 1e12 if kw else None,
                    "checked": r["checked"], "notes": r["notes"]})
    return pd.DataFrame(out).set_index("system")


# --- the figure: every chip on the TPP × performance-density plane ------------------------------------------------
_CAT_COLOURS = {"3A090": 1, "3A090.a": 1, "3A090.b": 4, "not controlled": 2, "not controlled (note)": 3}


def plot_rule_plane(rule_id="2023-10", ax=None):
    """Every catalog part on the TPP (log) × performance-density plane, coloured by its category under ``rule_id``,
    with the rule's regions shaded. Parts whose die area the catalog lacks sit in a strip below zero. Returns the Axes.

    >>> ax = plot_rule_plane("2023-10")
    >>> ax.get_xscale(), ax.get_title()
    ('log', 'October 2023 rule (88 FR 73458)')
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    from matplotlib.patches import Rectangle

    r = rule(rule_id)
    ax = plotting.axes(ax)
    x0, x1, y0, y1, strip = 200, 60_000, -5.5, 22.0, -1.3
    if r.id == "2022-10":
        ax.add_patch(Rectangle((4800, 0), x1 - 4800, y1, color=plotting.color(1), alpha=0.12, lw=0))
        ax.text(5200, y1 - 1.2, "3A090 if I/O ≥ 600 GB/s", fontsize=8, color=plotting.color(1))
    else:
        b = plotting.color(4)
        ax.add_patch(Rectangle((2400, 1.6), 4800 - 2400, 5.92 - 1.6, color=b, alpha=0.18, lw=0))
        ax.add_patch(Rectangle((1600, 3.2), x1 - 1600, 5.92 - 3.2, color=b, alpha=0.18, lw=0))
        a = plotting.color(1)
        ax.add_patch(Rectangle((1600, 5.92), x1 - 1600, y1 - 5.92, color=a, alpha=0.12, lw=0))
        ax.add_patch(Rectangle((4800, 0), x1 - 4800, 5.92, color="white", lw=0))
        ax.add_patch(Rectangle((4800, 0), x1 - 4800, 5.92, color=a, alpha=0.12, lw=0))
        ax.text(1700, y1 - 1.2, "3A090.a", fontsize=8, color=a)
        ax.text(2500, 2.0, "3A090.b", fontsize=8, color="#8a5a00")
    ax.axhline(0, color="#999", lw=0.6)
    df = placements([r.id])
    unplaced = [name for name, row in df.iterrows() if row["tpp"] is None or row["tpp"] != row["tpp"]]
    placed = df.drop(index=unplaced)
    known = placed[placed["pd"].notna()]
    unknown = placed[placed["pd"].isna()].sort_values("tpp")
    rows = [strip - 1.3 * (i % 3) for i in range(len(unknown))]
    groups: dict = {}
    for (name, row), y in [*((item, item[1]["pd"]) for item in known.iterrows()),
                           *zip(unknown.iterrows(), rows)]:
        groups.setdefault((round(row["tpp"], 1), round(float(y), 3)), []).append((name, row[r.id], row["market"]))
    for (x, y), members in groups.items():
        cats = list(dict.fromkeys((cat, market) for _, cat, market in members))
        last = x * 1.07 ** (len(cats) - 1)
        for k, (cat, market) in enumerate(cats):
            c = plotting.color(_CAT_COLOURS[cat]) if cat in _CAT_COLOURS else "#777777"
            ax.scatter([x * 1.07**k], [y], s=36, color=c, marker="s" if market == "consumer" else "o",
                       edgecolor="black", linewidth=0.5, zorder=3)
            names = ", ".join(n for n, ct, mk in members if (ct, mk) == (cat, market))
            ax.annotate(names, (last, y), xytext=(4, 2 - 8 * k), textcoords="offset points", fontsize=6.5, color=c
                        if len(cats) > 1 else "black")
    for cat in dict.fromkeys(df[r.id]):
        ax.scatter([], [], color=plotting.color(_CAT_COLOURS[cat]) if cat in _CAT_COLOURS else "#777777",
                   label=cat, edgecolor="black", linewidth=0.5)
    ax.set_xscale("log")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_yticks([0, 5, 10, 15, 20])
    ax.text(x0 * 1.05, y0 + 0.4, "below 0: die area not in catalog", fontsize=7, color="#555")
    if unplaced:
        ax.text(x1 / 1.05, y0 + 0.4, "no peak in catalog: " + ", ".join(unplaced), fontsize=7, color="#555",
                ha="right")
    ax.set_xlabel("TPP (dense, best precision)")
    ax.set_ylabel("performance density (TPP per mm²)")
    ax.set_title(f"{r.name} ({r.citation})")
    ax.legend(fontsize=7, loc="center left")
    return ax


# --- the explorable ----------------------------------------------------------------------------------------------
@widgets.explorer
def design_a_chip_explorer():
    """Explorable: design a chip (dense TFLOPS at a precision, die area, chip-to-chip bandwidth, market) and see its
    category under each rule, with the reason. Equations: :func:`tpp_from`, :func:`performance_density_from`,
    :func:`classify_numbers`.

    >>> ex = design_a_chip_explorer()
    >>> ex.n_views, "caught by 3A090.a: TPP 4,800 ≥ 4,800" in ex.render_current()
    (216, True)
    """

    def render(tflops, bits, die, io, market):
        t = tpp_from(tflops, bits)
        pd = performance_density_from(t, die)
        rows = []
        for r in _rules():
            c = classify_numbers(t, pd, io * 1e9, market, r.id)
            rows.append(f"<tr><td>{html.escape(r.name)}</td><td><strong>{html.escape(c.category)}</strong></td>"
                        f"<td>{html.escape(c.reason)}</td></tr>")
        chart = plotting.svg_chart(
            points=[{"x": t, "y": pd, "label": "your chip", "color": plotting.color(0)}],
            vlines=[{"x": v, "label": f"{v:,}"} for v in (1600, 2400, 4800)],
            hlines=[{"y": v, "label": f"PD {v:g}"} for v in (1.6, 3.2, 5.92)],
            xlog=True, ylog=True, xlim=(500, 60_000), ylim=(0.5, 200), xlabel="TPP",
            ylabel="performance density (log)",
            alt=f"Your chip at TPP {units.fmt_number(t)} and performance density {pd:.4g}, against the 2023 "
                f"thresholds", height=240)
        head = (f"<p>TPP = {tflops:g} × {bits} = <strong>{units.fmt_number(t)}</strong>; performance density = "
                f"{units.fmt_number(t)} / {die:g} mm² = <strong>{pd:.4g}</strong>; I/O {io:g} GB/s "
                f"(bidirectional); {market}.</p>")
        table = ("<table class='cc-table'><tr><th>rule</th><th>category</th><th>reason</th></tr>"
                 + "".join(rows) + "</table>")
        return head + table + chart

    return widgets.explore(render, [
        widgets.Slider("tflops", "Dense TFLOPS", [100, 150, 300, 600, 1000, 2000], value=300),
        widgets.Choice("bits", "Precision", {"16-bit (FP16/BF16)": 16, "8-bit (FP8/INT8)": 8}, value=16),
        widgets.Slider("die", "Die area (mm²)", [300, 600, 814], value=814),
        widgets.Slider("io", "Chip-to-chip I/O (GB/s, both directions)", [0, 400, 900], value=400),
        widgets.Choice("market", "Designed for", {"datacenter": "datacenter", "consumer": "consumer"}),
    ], title="Design a chip")
