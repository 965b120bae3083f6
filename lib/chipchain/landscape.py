"""The chip factions, the TFLOPS traps, and how a systolic array saves memory traffic (chapter 2).

* The factions table lives in ``data/factions.csv`` (who bets on what; seed 000 §2) and is joined to the catalog.
* Peak figures are compared only at a **matched precision and sparsity**: a dense BF16 figure against a sparse FP8
  one is a 4× apples-to-oranges error that marketing likes. :func:`matching_conventions` finds which convention a
  quoted number is in; :func:`inflation` measures how much a headline figure overstates the dense BF16/FP16 peak.
* :func:`generation_table` computes generation-over-generation growth of compute, memory capacity and bandwidth.
* :func:`score_chips` is seed 004 §3.2's evaluation framework with weights the reader sets.
* :func:`systolic_matmul` runs an output-stationary systolic array cycle by cycle in NumPy.

>>> round(inflation("H100", "int8", sparse=True), 1)    # the INT8-sparse headline vs dense FP16
4.0
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from . import _check, hardware, widgets

__all__ = ["factions", "matched_peak", "compare_peaks", "headline_peak", "inflation", "matching_conventions",
           "generation_table", "growth_per_year", "plot_generation_growth", "evaluation_data", "score_chips",
           "DIMENSIONS", "SystolicRun", "systolic_matmul", "naive_matmul_reads", "systolic_peak_ops",
           "compare_explorer", "scoring_explorer"]


@lru_cache(maxsize=None)
def _csv(name: str) -> tuple:
    with resources.files("chipchain").joinpath(f"data/{name}").open(encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


# --- factions -----------------------------------------------------------------------------------------------------

def factions():
    """The chip factions as a DataFrame: what each bets on and its weakness, with catalog figures of its members.

    Columns: ``examples``, ``bet``, ``weakness``, ``members`` (catalog names), ``best dense 16-bit TFLOPS`` and
    ``largest memory GB`` among the members (blank where the catalog has no figure), ``source``, ``checked``.
    Source: seed 000 §2 (the faction table), figures from ``data/accelerators.csv``.

    >>> df = factions()
    >>> float(df.loc["Second source", "largest memory GB"])
    192.0
    """
    import pandas as pd

    rows = []
    for r in _csv("factions.csv"):
        members = [hardware.get(n) for n in r["catalog"].split(";") if n]
        peaks = [a.peaks.get("bf16") or a.peaks.get("fp16") for a in members]
        peaks = [p for p in peaks if p]
        mems = [a.memory_bytes for a in members if a.memory_bytes]
        rows.append({"faction": r["faction"], "examples": r["examples"], "bet": r["bet"], "weakness": r["weakness"],
                     "members": ", ".join(a.name for a in members),
                     "best dense 16-bit TFLOPS": max(peaks) / 1e12 if peaks else math.nan,
                     "largest memory GB": max(mems) / 1e9 if mems else math.nan,
                     "source": r["source"], "checked": r["checked"]})
    return pd.DataFrame(rows).set_index("faction")


# --- TFLOPS traps -------------------------------------------------------------------------------------------------

def matched_peak(chip, dtype="bf16", sparse=False) -> float:
    """Peak of ``chip`` at exactly ``dtype`` and ``sparse`` (FLOP/s, or op/s for int8); a clear error if absent.

    Args: ``chip`` a catalog name or :class:`~chipchain.hardware.Accelerator`; ``dtype`` one of
    ``hardware.DTYPES``; ``sparse`` bool. Source: the chip's catalog row.

    >>> matched_peak("MI300X", "bf16") / 1e12
    1307.4
    """
    return hardware.get(chip).peak_flops(dtype, sparse=sparse)


def compare_peaks(chip_a, chip_b, dtype="bf16", sparse=False) -> float:
    """Ratio of two chips' peaks at the same precision and sparsity: ``R = P_a(dtype, sparse) / P_b(dtype, sparse)``.

    Args: two catalog names; ``dtype``; ``sparse``. Returns a dimensionless ratio. Raises ``ValueError`` naming the
    chip that has no figure at that precision (e.g. TPU v5p has no FP8). Source: catalog rows.

    >>> round(compare_peaks("MI300X", "H100", "bf16"), 2)
    1.32
    >>> round(compare_peaks("H100", "TPU-v5p", "bf16"), 2)
    2.16
    """
    return matched_peak(chip_a, dtype, sparse) / matched_peak(chip_b, dtype, sparse)


def headline_peak(chip) -> tuple:
    """The largest number the catalog can print for ``chip``: ``(value, dtype, sparse)``, any precision or sparsity.

    This is the figure a press release leads with. Source: catalog row.

    >>> v, d, s = headline_peak("H100")
    >>> v / 1e12, d, s
    (3958.0, 'fp8', True)
    """
    acc = hardware.get(chip)
    best = None
    for d in acc.precisions():
        for s in ((False, True) if acc.sparse_factor else (False,)):
            v = acc.peak_flops(d, sparse=s)
            if best is None or v > best[0]:
                best = (v, d, s)
    if best is None:
        raise ValueError(f"chip={acc.name!r} has no peak figure in the catalog")
    return best


def _baseline(acc) -> float:
    for d in ("bf16", "fp16"):
        if acc.peaks.get(d):
            return acc.peaks[d]
    raise ValueError(f"{acc.name} has no dense BF16/FP16 figure to compare against")


def inflation(chip, dtype="int8", sparse=True) -> float:
    """How much a quoted figure overstates the dense 16-bit peak: ``I = P(dtype, sparse) / P(bf16 or fp16, dense)``.

    INT8 doubles the rate of FP16 on most tensor units and 2:4 sparsity doubles it again, so an "INT8 sparse TOPS"
    headline is typically 4× the dense FP16 TFLOPS (8× with INT4). Args: ``chip``; ``dtype``; ``sparse``.
    Returns a ratio ≥ 0. Source: catalog rows; seed 002 (NPU "TOPS trap": 4–8×).

    >>> inflation("A100", "int8", sparse=True)
    4.0
    >>> inflation("H100", "fp16", sparse=True)
    2.0
    """
    acc = hardware.get(chip)
    return acc.peak_flops(dtype, sparse=sparse) / _baseline(acc)


def matching_conventions(chip, quoted, rel=0.02) -> list:
    """Every (dtype, sparse) whose catalog peak is within ``rel`` of a ``quoted`` figure (FLOP/s): what did they mean?

    Args: ``chip``; ``quoted`` FLOP/s (> 0); ``rel`` relative tolerance in (0, 1]. Returns a list of
    ``(dtype, sparse)`` pairs, widest precision first; empty if nothing matches. Source: catalog rows.

    >>> matching_conventions("H100", 1979e12)        # seed 000 §2's "1979 TFLOPS low-precision" figure
    [('bf16', True), ('fp16', True), ('fp8', False), ('int8', False)]
    >>> matching_conventions("MI300X", 1300e12)      # "~1300": dense BF16/FP16 (or, by coincidence, sparse TF32)
    [('tf32', True), ('bf16', False), ('fp16', False)]
    """
    acc = hardware.get(chip)
    q = _check.positive("quoted", quoted)
    tol = _check.fraction("rel", rel)
    out = []
    for d in acc.precisions():
        for s in ((False, True) if acc.sparse_factor else (False,)):
            if abs(acc.peak_flops(d, sparse=s) - q) <= tol * q:
                out.append((d, s))
    return out


# --- generations ---------------------------------------------------------------------------------------------------

NVIDIA_GENERATIONS = ("A100-SXM-80GB", "H100-SXM", "H200", "B200")


def generation_table(names=NVIDIA_GENERATIONS, dtype="bf16"):
    """Compute, memory capacity and bandwidth of successive parts, and each as a multiple of the first part.

    Args: ``names`` catalog names in order; ``dtype`` for the (dense) peak. Returns a DataFrame indexed by name with
    ``year``, ``TFLOPS``, ``memory GB``, ``bandwidth TB/s``, ``bytes per FLOP`` (bandwidth / peak) and the three
    ``x first`` growth columns. Source: catalog rows (B200 per-GPU figures are estimates from the DGX B200 total).

    >>> t = generation_table(("H100", "B200"))
    >>> t.loc["B200", ["memory x first", "bandwidth x first"]].round(2).tolist()
    [2.25, 2.39]
    """
    import pandas as pd

    accs = [hardware.get(n) for n in names]
    if len(accs) < 2:
        raise ValueError(f"names must list at least two parts, got {names!r}")
    rows = []
    for a in accs:
        rows.append({"name": a.name, "year": a.year, "TFLOPS": a.peak_flops(dtype) / 1e12,
                     "memory GB": a.require("memory_bytes") / 1e9,
                     "bandwidth TB/s": a.require("memory_bandwidth") / 1e12,
                     "bytes per FLOP": a.memory_bandwidth / a.peak_flops(dtype)})
    df = pd.DataFrame(rows).set_index("name")
    for col, new in (("TFLOPS", "compute x first"), ("memory GB", "memory x first"),
                     ("bandwidth TB/s", "bandwidth x first")):
        df[new] = df[col] / df[col].iloc[0]
    return df


def growth_per_year(first, last, dtype="bf16") -> dict:
    """Compound annual growth of compute, memory capacity and bandwidth between two parts: ``g = (x₁/x₀)^(1/Δy) − 1``.

    Args: two catalog names with different years; ``dtype``. Returns ``{"compute": g, "memory": g, "bandwidth": g}``.
    Source: catalog rows.

    >>> {k: round(v, 2) for k, v in growth_per_year("A100", "B200").items()}
    {'compute': 0.64, 'memory': 0.22, 'bandwidth': 0.41}
    """
    a, b = hardware.get(first), hardware.get(last)
    years = b.year - a.year
    if years <= 0:
        raise ValueError(f"last ({b.name}, {b.year}) must be newer than first ({a.name}, {a.year})")
    def g(x0, x1):
        return (x1 / x0) ** (1 / years) - 1
    return {"compute": g(a.peak_flops(dtype), b.peak_flops(dtype)),
            "memory": g(a.require("memory_bytes"), b.require("memory_bytes")),
            "bandwidth": g(a.require("memory_bandwidth"), b.require("memory_bandwidth"))}


def plot_generation_growth(names=NVIDIA_GENERATIONS, dtype="bf16", ax=None):
    """Bar chart of compute, memory capacity and bandwidth of successive parts, each relative to the first part.

    Returns the matplotlib Axes. Source: :func:`generation_table`.
    """
    from . import plotting

    df = generation_table(names, dtype)
    ax = plotting.axes(ax)
    cols = [("compute x first", f"dense {dtype.upper()} peak"), ("memory x first", "memory capacity"),
            ("bandwidth x first", "memory bandwidth")]
    width = 0.8 / len(cols)
    for i, (col, label) in enumerate(cols):
        xs = [j + (i - 1) * width for j in range(len(df))]
        ax.bar(xs, df[col], width=width, label=label, color=plotting.color(i))
    ax.set_xticks(range(len(df)))
    ax.set_xticklabels([f"{n}\n({y})" for n, y in zip(df.index, df["year"])])
    ax.set_ylabel(f"multiple of {df.index[0]}")
    ax.axhline(1.0, color="#555", lw=0.8)
    ax.legend(frameon=False)
    return ax


# --- chip evaluation (seed 004 §3.2) --------------------------------------------------------------------------------

#: the scored dimensions and what each measures (seed 004 §3.2's framework)
DIMENSIONS = {
    "compute": "dense peak at the chosen precision",
    "memory": "geometric mean of memory capacity and bandwidth",
    "interconnect": "chip-to-chip bandwidth (both directions)",
    "software": "software-stack maturity, 1-5 (a judgment)",
    "efficiency": "dense peak per watt",
    "mfu": "published model-FLOPs utilisation at scale",
}
DEFAULT_CHIPS = ("H100-SXM", "H200", "B200", "MI300X", "TPU-v5p", "Ascend-910B", "Gaudi-3", "Trainium2")


def evaluation_data(chips=DEFAULT_CHIPS, dtype="bf16"):
    """Raw figures of each chip on the six dimensions (SI units; NaN where neither the catalog nor
    ``data/chip_evaluation.csv`` has a figure). The software score is a judgment and says so in its source column.

    >>> float(evaluation_data(("H100", "TPU-v5p")).loc["TPU-v5p", "interconnect"]) / 1e9
    600.0
    """
    if isinstance(chips, str):
        raise ValueError(f"chips must be a sequence of catalog names, got the string {chips!r}")
    return _evaluation_data(tuple(hardware.get(c).name for c in chips), dtype).copy()


@lru_cache(maxsize=32)
def _evaluation_records(chips, dtype):
    df = _evaluation_data(chips, dtype)
    return list(df.index), [{d: float(df.at[n, d]) for d in DIMENSIONS} for n in df.index]


@lru_cache(maxsize=32)
def _evaluation_data(chips, dtype):
    import pandas as pd

    extra = {r["name"]: r for r in _csv("chip_evaluation.csv")}
    rows = []
    for n in chips:
        a = hardware.get(n)
        e = extra.get(a.name)
        if e is None:
            raise KeyError(f"no evaluation row for {a.name!r}; rows exist for: {', '.join(extra)}")
        peak = a.peaks.get(_check.choice("dtype", dtype, hardware.DTYPES))
        link_bw = a.interconnect_bandwidth or (float(e["interconnect_GBps_bidir"]) * 1e9
                                               if e["interconnect_GBps_bidir"] else None)
        mem = (math.sqrt(a.memory_bytes * a.memory_bandwidth) if a.memory_bytes and a.memory_bandwidth else None)
        rows.append({"name": a.name, "compute": peak, "memory": mem, "interconnect": link_bw or None,
                     "software": float(e["software"]), "efficiency": peak / a.tdp if peak and a.tdp else None,
                     "mfu": float(e["published_mfu"]) if e["published_mfu"] else None,
                     "software stack": e["software_stack"]})
    df = pd.DataFrame(rows).set_index("name")
    for c in DIMENSIONS:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    return df


def score_chips(weights, chips=DEFAULT_CHIPS, dtype="bf16"):
    """Weighted score of each chip: ``S = Σ_d w_d · x_d / max(x_d) / Σ_d w_d`` over the dimensions it has figures for.

    Each dimension is scaled so the best candidate scores 1. A dimension with no figure for a chip (no published
    power or MFU) is left out of that chip's score and its weight renormalised; the ``coverage`` column says what
    share of the weight the score rests on. Args: ``weights`` a mapping from the keys of :data:`DIMENSIONS` to
    non-negative numbers (missing keys count 0; at least one > 0); ``chips`` catalog names; ``dtype``.
    Returns a DataFrame sorted by score. Source: seed 004 §3.2 (the six evaluation dimensions); figures from the
    catalog and ``data/chip_evaluation.csv``.

    >>> s = score_chips({"compute": 1})
    >>> s.index[0], round(float(s["score"].iloc[0]), 2)
    ('B200', 1.0)
    """
    if not hasattr(weights, "items"):
        raise ValueError(f"weights must be a mapping of dimension to weight, got {weights!r}")
    w = {}
    for k, v in weights.items():
        key = _check.choice("weights key", k, DIMENSIONS)
        w[key] = _check.nonnegative(f"weights[{k!r}]", v)
    if not any(w.values()):
        raise ValueError("weights must give at least one dimension a weight above zero")
    import pandas as pd

    names, raw = _evaluation_records(tuple(hardware.get(c).name for c in chips), dtype)
    best = {d: max((r[d] for r in raw if not math.isnan(r[d])), default=math.nan) for d in DIMENSIONS}
    top = max(w.values())
    w = {k: v / top for k, v in w.items()}          # scale-free (and safe for tiny weights)
    total_w = sum(w.values())
    rows = []
    for r in raw:
        scaled = {d: r[d] / best[d] if not math.isnan(r[d]) else math.nan for d in DIMENSIONS}
        have = {d: wt for d, wt in w.items() if wt > 0 and not math.isnan(scaled[d])}
        sw = sum(have.values())
        scaled["score"] = sum(wt * scaled[d] for d, wt in have.items()) / sw if sw else math.nan
        scaled["coverage"] = sw / total_w
        rows.append(scaled)
    out = pd.DataFrame(rows, index=pd.Index(names, name="name"))
    return out.sort_values("score", ascending=False, na_position="last")


# --- systolic array -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SystolicRun:
    """What :func:`systolic_matmul` returns: the product, the cycles taken, and memory traffic counts (elements)."""

    product: object        #: the m×n result
    cycles: int            #: clock cycles, summed over tiles
    edge_reads: int        #: elements read from memory at the array's edges
    naive_reads: int       #: elements a naive triple loop reads (two per multiply-add)
    macs: int              #: multiply-adds performed, m·n·k
    neighbour_passes: int  #: operands handed from one PE to the next (register traffic, not memory)


def naive_matmul_reads(m, k, n) -> int:
    """Memory reads of the naive triple loop ``C[i,j] += A[i,p]·B[p,j]``: ``R = 2·m·n·k`` elements (no reuse).

    >>> naive_matmul_reads(256, 256, 256)
    33554432
    """
    m, k, n = (_check.integer(x, v) for x, v in (("m", m), ("k", k), ("n", n)))
    return 2 * m * n * k


def systolic_peak_ops(rows, cols, clock_hz, ops_per_mac=2) -> float:
    """Peak rate of a systolic array: ``P = rows · cols · ops_per_mac · f`` (operations per second).

    Source: Jouppi et al. (2017): TPU v1's 256×256 MACs at 700 MHz = 92 TOPS.

    >>> round(systolic_peak_ops(256, 256, 700e6) / 1e12, 1)
    91.8
    """
    r = _check.integer("rows", rows)
    c = _check.integer("cols", cols)
    f = _check.positive("clock_hz", clock_hz)
    k = _check.positive("ops_per_mac", ops_per_mac)
    return r * c * k * f


def _systolic_tile(a, b):
    """Output-stationary array of a.shape[0] × b.shape[1] PEs; returns (C, cycles, neighbour passes)."""
    import numpy as np

    m, k = a.shape
    n = b.shape[1]
    dtype = np.result_type(a.dtype, b.dtype)
    c = np.zeros((m, n), dtype=dtype)
    a_reg = np.zeros((m, n), dtype=dtype)     # operand of A held by each PE this cycle (moves right)
    b_reg = np.zeros((m, n), dtype=dtype)     # operand of B held by each PE this cycle (moves down)
    rows, cols = np.arange(m), np.arange(n)
    cycles = m + n + k - 2
    passes = 0
    for t in range(cycles):
        a_reg[:, 1:] = a_reg[:, :-1]          # every PE hands its A operand to the right neighbour ...
        b_reg[1:, :] = b_reg[:-1, :]          # ... and its B operand to the one below
        passes += m * (n - 1) + (m - 1) * n
        p = t - rows                          # row i of A enters at the left edge skewed by i cycles
        ok = (p >= 0) & (p < k)
        a_reg[:, 0] = np.where(ok, a[rows, np.clip(p, 0, k - 1)], 0)
        q = t - cols                          # column j of B enters at the top skewed by j cycles
        ok = (q >= 0) & (q < k)
        b_reg[0, :] = np.where(ok, b[np.clip(q, 0, k - 1), cols], 0)
        c += a_reg * b_reg                    # one multiply-add per PE per cycle
    return c, cycles, passes


def systolic_matmul(a, b, array_size=None) -> SystolicRun:
    """Multiply ``a @ b`` on a simulated output-stationary systolic array, cycle by cycle, counting memory reads.

    PE (i, j) keeps C[i, j]. Row i of A enters at the left edge, skewed by i cycles, and moves one PE right per
    cycle; column j of B enters at the top, skewed by j cycles, and moves down. At cycle t PE (i, j) holds
    A[i, t−i−j] and B[t−i−j, j] and adds their product. Only the edges read memory: each element of A and B is read
    once per tile, ``m·k + k·n`` reads for one tile, against ``2·m·n·k`` for the naive loop — O(n²) instead of
    O(n³). With ``array_size = s`` the product is computed in s×s output tiles and A is re-read ⌈n/s⌉ times, B
    ⌈m/s⌉ times: ``R = m·k·⌈n/s⌉ + k·n·⌈m/s⌉``.

    Args: ``a`` (m×k) and ``b`` (k×n) numeric arrays; ``array_size`` PEs per side (None: one tile of m×n PEs).
    Returns a :class:`SystolicRun`. Source: Kung (1982), "Why systolic architectures?", IEEE Computer 15(1);
    Jouppi et al. (2017) (TPU v1 uses the weight-stationary variant of the same idea).

    >>> import numpy as np
    >>> A = np.arange(6).reshape(2, 3); B = np.arange(12).reshape(3, 4)
    >>> r = systolic_matmul(A, B)
    >>> bool((r.product == A @ B).all()), r.cycles, r.edge_reads, r.naive_reads
    (True, 7, 18, 48)
    """
    import numpy as np

    a = np.asarray(a)
    b = np.asarray(b)
    for name, x in (("a", a), ("b", b)):
        if x.ndim != 2 or 0 in x.shape:
            raise ValueError(f"{name} must be a non-empty 2-D array, got shape {x.shape}")
        if not np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.bool_):
            raise ValueError(f"{name} must hold numbers, got dtype {x.dtype}")
        if np.issubdtype(x.dtype, np.floating) and not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must be finite (no NaN or infinity)")
    m, k = a.shape
    if b.shape[0] != k:
        raise ValueError(f"a is {m}×{k} but b is {b.shape[0]}×{b.shape[1]}: inner dimensions must match")
    n = b.shape[1]
    s_m, s_n = (m, n) if array_size is None else (_check.integer("array_size", array_size),) * 2
    c = np.zeros((m, n), dtype=np.result_type(a.dtype, b.dtype))
    cycles = reads = passes = 0
    for i0 in range(0, m, s_m):
        for j0 in range(0, n, s_n):
            at, bt = a[i0:i0 + s_m], b[:, j0:j0 + s_n]
            tile, cyc, p = _systolic_tile(at, bt)
            c[i0:i0 + s_m, j0:j0 + s_n] = tile
            cycles += cyc
            passes += p
            reads += at.size + bt.size
    return SystolicRun(product=c, cycles=cycles, edge_reads=reads, naive_reads=naive_matmul_reads(m, k, n),
                       macs=m * n * k, neighbour_passes=passes)


# --- explorables ----------------------------------------------------------------------------------------------------

COMPARE_NVIDIA = ("A100-SXM-80GB", "H100-SXM", "B200")
COMPARE_RIVALS = ("MI300X", "TPU-v5p", "Ascend-910B", "RTX-4090", "H20")


@widgets.explorer
def compare_explorer():
    """Two chips, one precision and sparsity: the headline figures side by side with the matched ones."""
    from . import plotting, units

    def render(chip_a, chip_b, dtype, sparse):
        if chip_a == chip_b:
            raise ValueError("pick two different chips to compare")
        a, b = hardware.get(chip_a), hardware.get(chip_b)
        pa, pb = a.peak_flops(dtype, sparse), b.peak_flops(dtype, sparse)
        ha, hb = headline_peak(a), headline_peak(b)
        conv = f"{'sparse' if sparse else 'dense'} {dtype.upper()}"
        bars = [(f"{a.name} headline ({'sparse ' if ha[2] else 'dense '}{ha[1].upper()})", ha[0] / 1e12),
                (f"{a.name} matched ({conv})", pa / 1e12),
                (f"{b.name} headline ({'sparse ' if hb[2] else 'dense '}{hb[1].upper()})", hb[0] / 1e12),
                (f"{b.name} matched ({conv})", pb / 1e12)]
        pts = [{"x": i + 1, "y": v, "label": f"{v:,.0f}", "color": plotting.color(i // 2)}
               for i, (_, v) in enumerate(bars)]
        lines = [{"x": [i + 1, i + 1], "y": [0, v], "color": plotting.color(i // 2)} for i, (_, v) in enumerate(bars)]
        svg = plotting.svg_chart(lines=lines, points=pts, xlim=(0.5, 4.5), ylabel="TFLOPS (TOPS for INT8)",
                                 xlabel="1, 2: " + a.name + "   3, 4: " + b.name + " (headline, then matched)",
                                 alt=f"{a.name} and {b.name}: headline and {conv} peaks")
        ratio, naive = pa / pb, ha[0] / hb[0]
        unit = "TOPS" if dtype == "int8" else "TFLOPS"
        units_of = [("TOPS" if ha[1] == "int8" else "TFLOPS"), unit, ("TOPS" if hb[1] == "int8" else "TFLOPS"), unit]
        rows = "".join(f"<li>{label}: {v:,.1f} {u}</li>" for (label, v), u in zip(bars, units_of))
        verdict = (f"<p>Matched at {conv}: {a.name} / {b.name} = <b>{ratio:.2f}×</b>. Comparing the headlines "
                   f"instead would say {naive:.2f}× — off by a factor of {max(naive / ratio, ratio / naive):.2f}.</p>")
        est = [x.name for x in (a, b) if x.is_estimate]
        caveat = (f"<p>{' and '.join(est)}: catalog figures are unverified estimates.</p>" if est else "")
        return (svg + f"<ul>{rows}</ul>" + verdict + f"<p>Memory: {units.fmt_bytes(a.memory_bytes)} vs "
                f"{units.fmt_bytes(b.memory_bytes)}.</p>" + caveat)

    return widgets.explore(render, [
        widgets.Choice("chip_a", "NVIDIA chip", {n: n for n in COMPARE_NVIDIA}, value="H100-SXM"),
        widgets.Choice("chip_b", "Compared with", {n: n for n in COMPARE_RIVALS}, value="TPU-v5p"),
        widgets.Choice("dtype", "Precision", {"BF16": "bf16", "FP8": "fp8", "INT8": "int8"}, value="bf16"),
        widgets.Toggle("sparse", "2:4 sparsity", value=False, labels=["dense", "sparse"]),
    ], title="Precision-matched comparison of two chips")


@widgets.explorer
def scoring_explorer():
    """Seed 004's chip-evaluation framework with the reader's weights."""
    from . import plotting

    def render(compute, memory, interconnect, software, efficiency):
        w = {"compute": compute, "memory": memory, "interconnect": interconnect, "software": software,
             "efficiency": 1 if efficiency else 0}
        df = score_chips(w)
        shown = df[["score", "coverage"] + [d for d in DIMENSIONS if d != "mfu"]].copy()
        bars = [{"x": [i + 1, i + 1], "y": [0, s], "color": plotting.color(i % 8)}
                for i, s in enumerate(df["score"].fillna(0))]
        pts = [{"x": i + 1, "y": s, "label": n, "color": plotting.color(i % 8)}
               for i, (n, s) in enumerate(df["score"].fillna(0).items())]
        svg = plotting.svg_chart(lines=bars, points=pts, xlim=(0.5, len(df) + 0.5), ylim=(0, 1.15),
                                 ylabel="weighted score (best = 1 per dimension)", xlabel="rank",
                                 alt="chips ranked by weighted score: " + ", ".join(df.index))
        note = ("<p>Scores rest only on the dimensions with a figure: coverage below 1 means a missing figure "
                "(power for TPU v5p and Trainium2) was left out. The software score is a judgment.</p>")
        return svg + widgets.table(shown.round(2), caption="scaled figures (best candidate = 1)") + note

    levels = [0, 1, 2]
    return widgets.explore(render, [
        widgets.Slider("compute", "Peak compute", levels, value=1),
        widgets.Slider("memory", "Memory", levels, value=1),
        widgets.Slider("interconnect", "Interconnect", levels, value=1),
        widgets.Slider("software", "Software stack", levels, value=1),
        widgets.Toggle("efficiency", "Power efficiency", value=False, labels=["ignore", "count"]),
    ], title="Score the chips with your own weights")
