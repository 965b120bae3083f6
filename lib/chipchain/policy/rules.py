"""Export controls, the arithmetic: TPP and performance density of a part, the rules as data
(``data/export_rules.json``), a part's I/O as the 2022 rule counts it, and a classification that says which
threshold caught it (the package docstring, :mod:`chipchain.policy`, states the conventions).

>>> classify("H20", "2023-10").category
'not controlled'
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .. import _check, _data, hardware, links, units
from .._i18n import gettext as _

__all__ = ["BITS", "tpp_from", "tpp", "tpp_precision", "performance_density_from", "performance_density", "Rule",
           "rules", "rule", "thresholds", "timeline", "ChipIO", "chip_io", "Classification", "classify_numbers",
           "classify"]

#: bit length per precision for TPP; TF32 at its 19 carried bits (see the module docstring)
BITS = {**hardware.BITS, "tf32": 19}

_LABELS = {"tpp": "TPP", "pd": "performance density", "io_GBps": "bidirectional I/O"}
_MISSING = {"pd": "die area", "io_GBps": "chip-to-chip bandwidth", "tpp": "peak throughput"}

# --- the two metrics ---------------------------------------------------------------------------------------------
def tpp_from(peak_flops, bits):
    """``TPP = 2 · MacTOPS · bits = TOPS · bits`` from a dense peak and a bit length.

    ``peak_flops`` dense operations per second (FLOP/s or op/s; the datasheets print it in TFLOPS/TOPS, 1e12);
    ``bits`` the operand width. Result dimensionless; element-wise over arrays of peaks. The A100's 312 dense BF16
    TFLOPS: 312 × 16 = 4,992; the 4,800 threshold is 300 × 16, or 600 × 8:

    >>> float(tpp_from(312e12, 16)), float(tpp_from(300e12, 16)), float(tpp_from(600e12, 8))
    (4992.0, 4800.0, 4800.0)
    """
    return _check.values("peak_flops", peak_flops) / units.TFLOPS * _check.integer("bits", bits)


def tpp_precision(accelerator) -> tuple[float, str]:
    """The highest TPP over the catalog's dense peaks and the precision that gives it: ``max_d peak_d/1e12 · bits_d``.

    ``accelerator`` a catalog name or record. On a tie the format listed first (the wider one) is kept.
    ``ValueError`` if the catalog has no peak for the part.

    >>> tpp_precision("RTX-4090")
    (5284.8, 'fp8')
    """
    acc = hardware.get(accelerator)
    best = None
    for d in acc.precisions():
        value = tpp_from(acc.peak_flops(d), BITS[d])
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


def performance_density_from(tpp, die_area_mm2):
    """``PD = TPP / die area`` with the area in mm² (the rule's unit); dimensionless result per mm². Element-wise.

    >>> round(performance_density_from(4992, 826), 2)
    6.04
    """
    return _check.values("tpp", tpp) / _check.values("die_area_mm2", die_area_mm2, _check.positive)


def performance_density(accelerator) -> float:
    """Performance density of a catalog part; ``ValueError`` saying the catalog lacks the die area when it does.

    >>> round(performance_density("H100"), 2)
    19.45
    >>> performance_density("B200")
    Traceback (most recent call last):
    ...
    ValueError: B200 has no 'die_area_mm2' figure in the catalog
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
    out = []
    for r in _data.json_data("export_rules.json")["rules"]:
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
    KeyError: "unknown rule '2024-12'; nearest known names: 2023-10, 2022-10"
    """
    if isinstance(rule_id, Rule):
        return rule_id
    if not isinstance(rule_id, str):
        raise ValueError(f"rule_id must be a rule id such as '2023-10', got {rule_id!r}")
    for r in (r for r in _rules() if rule_id in (r.id, r.date, r.date[:4])):
        return r
    raise KeyError(_check.nearest_message(rule_id, [r.id for r in _rules()], "rule"))


def thresholds(rule_id, metric) -> list[float]:
    """Every threshold a rule sets on one metric (``"tpp"``, ``"pd"`` or ``"io_GBps"``), ascending.

    >>> thresholds("2023-10", "tpp"), thresholds("2023-10", "pd")
    ([1600, 2400, 4800], [1.6, 3.2, 5.92])
    """
    r = rule(rule_id)
    m = _check.choice("metric", metric, tuple(_LABELS))
    return sorted({v for _, branches in r.categories for branch in branches for k, lo, hi in branch if k == m
                   for v in (lo, hi) if v is not None})


@dataclass(frozen=True)
class ChipIO:
    """A part's bidirectional I/O to other integrated circuits (bytes/s), as the 2022 rule counts it: the catalog's
    chip-to-chip ``link``, the ``host`` link and ``other`` ports or bridges. ``complete`` is False when our sources
    list only part of it; ``aggregate`` is then a lower bound (``None`` when nothing is known)."""

    accelerator: hardware.Accelerator
    link: float | None
    host: float | None
    other: float
    other_what: str
    complete: bool
    checked: str
    source: str

    @property
    def aggregate(self) -> float | None:
        known = [v for v in (self.link, self.host) if v is not None]
        return sum(known) + self.other if known or self.other or self.complete else None


@lru_cache(maxsize=1)
def _io_rows() -> dict:
    return {hardware.get(r["accelerator"]).name: r for r in _data.rows("export_io.csv")}


def chip_io(accelerator) -> ChipIO:
    """The aggregate I/O of a catalog part (``data/export_io.csv`` on top of the catalog's link figure). A part the
    file does not list has only its link figure, marked incomplete (an estimate, a lower bound).

    >>> [round(chip_io(n).aggregate / 1e9) for n in ("A100", "A800", "H100-PCIe", "H800")]
    [664, 464, 728, 528]
    >>> io = chip_io("B200"); io.aggregate / 1e9, io.complete
    (1800.0, False)
    """
    acc = hardware.get(accelerator)
    link = None if _data.is_missing(acc.interconnect_bandwidth) else acc.interconnect_bandwidth
    r = _io_rows().get(acc.name, {"host_link": "", "other_GBps_bidir": "", "other_what": "", "complete": "no",
                                  "checked": "U", "source": "the catalog's chip-to-chip link figure only"})
    host = links.get(r["host_link"]).bidirectional_bandwidth if r["host_link"] else None
    return ChipIO(acc, link, host, float(r["other_GBps_bidir"] or 0) * units.GBPS, r["other_what"],
                  r["complete"] == "yes", r["checked"], r["source"])


@dataclass(frozen=True)
class Classification:
    """How a rule treats a chip: ``category`` (``"3A090.a"``, ``"not controlled"``, ``"not controlled (note)"``,
    ``"undetermined"`` …), ``controlled`` (True, False, or None when the catalog lacks a figure) and the reason.
    ``io_bandwidth`` is bidirectional, bytes/s; a figure is ``None`` when unknown."""

    rule: str
    category: str
    controlled: bool | None
    reason: str
    tpp: float | None
    pd: float | None
    io_bandwidth: float | None


def _fmt(metric, v):
    return units.fmt_number(round(v, 1)) if metric == "tpp" else f"{v:.3g}" if metric == "pd" else f"{v:g} GB/s"


def _cond(metric, lo, hi, values):
    """(status, words) for one condition; status None when the value is missing."""
    v = values.get(metric)
    label = _(_LABELS[metric])                 # the reason's words in the reader's language (chipchain._i18n)
    if v is None:
        return None, _("{label} unknown (the catalog lacks the {what})").format(label=label, what=_(_MISSING[metric]))
    lo_ok = lo is None or v >= lo
    hi_ok = hi is None or v < hi
    if metric == "io_GBps" and not values["io_complete"] and not (lo_ok and hi is None):   # a lower bound only
        return None, _("{label} of at least {value} counted; the rest of its I/O is not in our sources").format(
            label=label, value=_fmt(metric, v))
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
    return True, _(" and ").join(w for _s, w in results)


def classify_numbers(tpp, pd=None, io_bandwidth=None, market="datacenter", rule_id="2023-10",
                     io_complete=True) -> Classification:
    """Classify a chip described by raw numbers under one rule.

    ``tpp`` dimensionless; ``pd`` TPP per mm² (None if unknown); ``io_bandwidth`` aggregate I/O to other chips in
    bytes/s, both directions summed (None if unknown); ``io_complete`` False when that is only a lower bound (it can
    then meet a threshold but not fall short of one); ``market`` ``"datacenter"`` or ``"consumer"``. Thresholds are
    inclusive at their lower end: a chip exactly at TPP 4,800 with I/O exactly 600 GB/s is caught by the 2022 rule.

    >>> c = classify_numbers(4800, io_bandwidth=600e9, rule_id="2022-10")
    >>> c.category, c.reason
    ('3A090', 'caught by 3A090: TPP 4,800 ≥ 4,800 and bidirectional I/O 600 GB/s ≥ 600')
    >>> r = classify_numbers(2272, pd=3.62, market="consumer").reason
    >>> r.split(", but ")[0]
    'by the numbers 3A090.b (TPP 2,272 ≥ 1,600 and 3.2 ≤ performance density 3.62 < 5.92)'
    >>> r.split(", but ")[1]
    'a part not designed or marketed for datacenters is not caught when its TPP is below 4,800'
    """
    r = rule(rule_id)
    t = _check.nonnegative("tpp", tpp)
    p = None if pd is None else _check.nonnegative("pd", pd)
    io = None if io_bandwidth is None else _check.io_bandwidth("io_bandwidth", io_bandwidth)   # refuses a GB/s slip
    m = _check.choice("market", market, ("datacenter", "consumer"))
    values = {"tpp": t, "pd": p, "io_GBps": None if io is None else io / units.GBPS,
              "io_complete": _check.flag("io_complete", io_complete)}
    missed, unknown = [], []
    for name, branches in r.categories:
        outcomes = [_branch(b, values) for b in branches]
        hits = [w for s, w in outcomes if s is True]
        if hits and not unknown:
            ex = r.exemption
            if ex and m != ex["market_not"] and t < ex["max"]:
                return Classification(r.id, "not controlled (note)", False,
                                      _("by the numbers {name} ({hit}), but {text}").format(
                                          name=name, hit=hits[0], text=_(ex["text"])), t, p, io)
            return Classification(r.id, name, True, _("caught by {name}: {hit}").format(name=name, hit=hits[0]),
                                  t, p, io)
        unknown += [w for s, w in outcomes if s is None]
        missed += [w for s, w in outcomes if s is False]
    if unknown:
        return Classification(r.id, "undetermined", None, _("cannot decide: {why}").format(why=unknown[0]), t, p, io)
    return Classification(r.id, "not controlled", False,
                          _("passes: {conditions}").format(conditions=_("; ").join(dict.fromkeys(missed))), t, p, io)


def classify(accelerator, rule_id="2023-10") -> Classification:
    """Classify a catalog part (name, alias or record) under a rule from its TPP, density, aggregate I/O
    (:func:`chip_io`) and market; a figure the catalog lacks leaves it "undetermined" where the rule needs it.

    The compliant variants, computed: the A800 and H800 kept TPP above 4,800 but cut NVLink to 400 GB/s, so even
    with the host link their I/O stayed under 600 GB/s and they passed in 2022; the 2023 rule catches them.

    >>> classify("H800", "2022-10").reason
    'passes: bidirectional I/O 528 GB/s < 600'
    >>> classify("H800", "2023-10").reason
    'caught by 3A090.a: TPP 15,832 ≥ 4,800'
    """
    acc = hardware.get(accelerator)
    if not acc.precisions():
        r = rule(rule_id)
        return Classification(r.id, "undetermined", None, _("cannot decide: the catalog has no peak throughput for "
                                                            "{name}, so no TPP").format(name=acc.name), None, None, None)
    t = tpp(acc)
    pd = None if _data.is_missing(acc.die_area_mm2) else performance_density_from(t, acc.die_area_mm2)
    io = chip_io(acc)
    return classify_numbers(t, pd, io.aggregate, acc.market, rule_id, io.complete)


# --- the rules' history -----------------------------------------------------------------------------------------
def timeline() -> tuple:
    """Every row of ``data/policy_timeline.csv`` (dated export-control events with their source) as a dict of
    strings, in file order: the one reader of that file (the table, oldest first:
    :func:`chipchain.views.policy.timeline`).

    >>> sorted(r["date"] for r in timeline())[0]
    '2022-10-07'
    """
    return _data.rows("policy_timeline.csv")
