"""The chip factions, the TFLOPS traps, and how a systolic array saves memory traffic (chapter 2).

* Peak figures are compared only at a **matched precision and sparsity**: a dense BF16 figure against a sparse FP8
  one is a 4× apples-to-oranges error that marketing likes. :func:`matching_conventions` finds which convention a
  quoted number is in; :func:`inflation` measures how much a headline figure overstates the dense BF16/FP16 peak.
* :func:`growth_per_year` is the compound growth of compute, memory capacity and bandwidth between two parts.
* :func:`score_chips` is seed 004 §3.2's evaluation framework with weights the reader sets, over the figures of
  :func:`chip_figures` (the catalog plus ``data/chip_evaluation.csv``: software judgment and published MFU).
* :func:`systolic_matmul` runs an output-stationary systolic array cycle by cycle in NumPy.

Tables and figures of these (the factions, generations, evaluation and score tables, the explorers) are in
:mod:`chipchain.views.landscape`.

>>> round(inflation("H100", "int8", sparse=True), 1)    # the INT8-sparse headline vs dense FP16
4.0
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from . import _check, _data, hardware

__all__ = ["matched_peak", "compare_peaks", "Peak", "headline_peak", "inflation", "matching_conventions",
           "NVIDIA_GENERATIONS", "Growth", "growth_per_year", "DIMENSIONS", "DEFAULT_ACCELERATORS", "ChipFigures",
           "chip_figures", "ChipScore", "score_chips", "SystolicRun", "systolic_matmul", "naive_matmul_reads",
           "systolic_peak_ops", "factions"]


# --- TFLOPS traps -------------------------------------------------------------------------------------------------

def matched_peak(accelerator, dtype="bf16", sparse=False) -> float:
    """Peak of ``accelerator`` at exactly ``dtype`` and ``sparse`` (FLOP/s, or op/s for int8); a clear error if
    absent.

    Args: ``accelerator`` a catalog name or :class:`~chipchain.hardware.Accelerator`; ``dtype`` one of
    ``hardware.DTYPES``; ``sparse`` bool. Source: the part's catalog row (AMD Instinct MI300X datasheet here).

    >>> matched_peak("MI300X", "bf16") / 1e12
    1307.4
    """
    return hardware.get(accelerator).peak_flops(dtype, sparse=sparse)


def compare_peaks(accelerator, baseline, dtype="bf16", sparse=False) -> float:
    """Ratio of two parts' peaks at the same precision and sparsity: ``R = P_a(dtype, sparse) / P_b(dtype, sparse)``.

    Args: ``accelerator`` and ``baseline``, catalog names or records; ``dtype``; ``sparse``. Returns a
    dimensionless ratio. Raises ``ValueError`` naming the part that has no figure at that precision (e.g. TPU v5p
    has no FP8). Source: catalog rows (datasheets: MI300X 1,307.4, H100 989.4, TPU v5p 459 dense BF16 TFLOP/s).

    >>> round(compare_peaks("MI300X", "H100", "bf16"), 2)
    1.32
    >>> round(compare_peaks("H100", "TPU-v5p", "bf16"), 2)
    2.16
    """
    return matched_peak(accelerator, dtype, sparse) / matched_peak(baseline, dtype, sparse)


@dataclass(frozen=True)
class Peak:
    """A peak throughput with its convention: FLOP/s (op/s for ``int8``) at ``dtype``, dense or ``sparse``."""

    peak_flops: float
    dtype: str
    sparse: bool


def headline_peak(accelerator) -> Peak:
    """The largest number the catalog can print for ``accelerator``, at any precision or sparsity.

    This is the figure a press release leads with. Source: catalog row.

    >>> p = headline_peak("H100")
    >>> p.peak_flops / 1e12, p.dtype, p.sparse
    (3958.0, 'fp8', True)
    """
    acc = hardware.get(accelerator)
    best = None
    for d in acc.precisions():
        for s in ((False, True) if acc.sparse_factor and d in hardware.SPARSE_DTYPES else (False,)):
            v = acc.peak_flops(d, sparse=s)
            if best is None or v > best.peak_flops:
                best = Peak(v, d, s)
    if best is None:
        raise ValueError(f"accelerator={acc.name!r} has no peak figure in the catalog")
    return best


def _baseline(acc) -> float:
    for d in ("bf16", "fp16"):
        if acc.peaks.get(d):
            return acc.peaks[d]
    raise ValueError(f"{acc.name} has no dense BF16/FP16 figure to compare against")


def inflation(accelerator, dtype="int8", sparse=True) -> float:
    """How much a quoted figure overstates the dense 16-bit peak: ``I = P(dtype, sparse) / P(bf16 or fp16, dense)``.

    INT8 doubles the rate of FP16 on most tensor units and 2:4 sparsity doubles it again, so an "INT8 sparse TOPS"
    headline is typically 4× the dense FP16 TFLOPS (8× with INT4). Args: ``accelerator``; ``dtype``; ``sparse``.
    Returns a ratio ≥ 0. Source: catalog rows; seed 002 (NPU "TOPS trap": 4–8×).

    >>> inflation("A100", "int8", sparse=True)
    4.0
    >>> inflation("H100", "fp16", sparse=True)
    2.0
    """
    acc = hardware.get(accelerator)
    return acc.peak_flops(dtype, sparse=sparse) / _baseline(acc)


def matching_conventions(accelerator, quoted, rel=0.02) -> list:
    """Every (dtype, sparse) whose catalog peak is within ``rel`` of a ``quoted`` figure (FLOP/s): what did they mean?

    Args: ``accelerator``; ``quoted`` FLOP/s (> 0); ``rel`` relative tolerance in (0, 1]. Returns a list of
    ``(dtype, sparse)`` pairs, widest precision first; empty if nothing matches. Source: catalog rows.

    >>> matching_conventions("H100", 1979e12)        # seed 000 §2's "1979 TFLOPS low-precision" figure
    [('bf16', True), ('fp16', True), ('fp8', False), ('int8', False)]
    >>> matching_conventions("MI300X", 1300e12)      # "~1300": dense BF16/FP16 (or, by coincidence, sparse TF32)
    [('tf32', True), ('bf16', False), ('fp16', False)]
    """
    acc = hardware.get(accelerator)
    q = _check.positive("quoted", quoted)
    tol = _check.fraction("rel", rel)
    out = []
    for d in acc.precisions():
        for s in ((False, True) if acc.sparse_factor and d in hardware.SPARSE_DTYPES else (False,)):
            if abs(acc.peak_flops(d, sparse=s) - q) <= tol * q:
                out.append((d, s))
    return out


# --- generations ---------------------------------------------------------------------------------------------------

#: successive NVIDIA flagships (catalog names), oldest first
NVIDIA_GENERATIONS = ("A100-SXM-80GB", "H100-SXM", "H200", "B200")


@dataclass(frozen=True)
class Growth:
    """Compound annual growth rates (fractions per year) of dense peak, memory capacity and memory bandwidth."""

    compute: float
    memory: float
    bandwidth: float


def growth_per_year(first, last, dtype="bf16") -> Growth:
    """Compound annual growth of compute, memory capacity and bandwidth between two parts: ``g = (x₁/x₀)^(1/Δy) − 1``.

    Args: two catalog names with different years; ``dtype`` for the dense peak. Returns a :class:`Growth`.
    Source: catalog rows.

    >>> g = growth_per_year("A100", "B200")
    >>> round(g.compute, 2), round(g.memory, 2), round(g.bandwidth, 2)
    (0.64, 0.22, 0.41)
    """
    a, b = hardware.get(first), hardware.get(last)
    years = b.year - a.year
    if years <= 0:
        raise ValueError(f"last ({b.name}, {b.year}) must be newer than first ({a.name}, {a.year})")

    def g(x0, x1):
        return (x1 / x0) ** (1 / years) - 1
    return Growth(compute=g(a.peak_flops(dtype), b.peak_flops(dtype)),
                  memory=g(a.require("memory_bytes"), b.require("memory_bytes")),
                  bandwidth=g(a.require("memory_bandwidth"), b.require("memory_bandwidth")))


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
#: the parts the chapter scores (catalog names; each has a row in ``data/chip_evaluation.csv``)
DEFAULT_ACCELERATORS = ("H100-SXM", "H200", "B200", "MI300X", "TPU-v5p", "Ascend-910B", "Gaudi-3", "Trainium2")


@dataclass(frozen=True)
class ChipFigures:
    """One part's raw figure on each of :data:`DIMENSIONS`, in SI units (``None`` where neither the catalog nor
    ``data/chip_evaluation.csv`` has one): FLOP/s, bytes·(bytes/s) geometric mean, bytes/s, a 1–5 judgment,
    FLOP/s per watt, a fraction."""

    name: str
    compute: float | None
    memory: float | None
    interconnect: float | None
    software: float
    efficiency: float | None
    mfu: float | None
    software_stack: str

    def get(self, dimension: str):
        """The figure on ``dimension`` (a key of :data:`DIMENSIONS`)."""
        return getattr(self, _check.choice("dimension", dimension, DIMENSIONS))


def _figure(value):
    return None if _data.is_missing(value) or not value else value


def chip_figures(accelerators=DEFAULT_ACCELERATORS, dtype="bf16") -> tuple:
    """Raw figures of each part on the six dimensions, as :class:`ChipFigures` in the order given.

    Memory is the geometric mean √(capacity · bandwidth); efficiency is the dense peak over the TDP. The software
    score is a judgment and says so in the data file's source column. Source: catalog rows;
    ``data/chip_evaluation.csv`` (published MFU: Dubey et al. 2024, Zhang et al. 2022, Chowdhery et al. 2023).

    >>> f = chip_figures(("H100", "TPU-v5p"))
    >>> f[1].interconnect / 1e9, f[1].efficiency is None
    (600.0, True)
    """
    if isinstance(accelerators, (str, hardware.Accelerator)):
        raise ValueError(f"accelerators must be a sequence of catalog names, got {accelerators!r}")
    return _chip_figures(tuple(hardware.get(a).name for a in accelerators),
                         _check.choice("dtype", dtype, hardware.DTYPES))


@lru_cache(maxsize=32)
def _chip_figures(names, dtype):
    extra = {r["name"]: r for r in _data.rows("chip_evaluation.csv")}
    out = []
    for n in names:
        a = hardware.get(n)
        e = extra.get(a.name)
        if e is None:
            raise KeyError(f"no evaluation row for {a.name!r}; rows exist for: {', '.join(extra)}")
        peak = a.peaks.get(dtype)
        mem, bw, tdp = _figure(a.memory_bytes), _figure(a.memory_bandwidth), _figure(a.tdp)
        out.append(ChipFigures(
            name=a.name, compute=peak, memory=math.sqrt(mem * bw) if mem and bw else None,
            interconnect=_figure(a.interconnect_bandwidth), software=float(e["software"]),
            efficiency=peak / tdp if peak and tdp else None,
            mfu=_data.optional_float(e, "published_mfu"), software_stack=e["software_stack"]))
    return tuple(out)


@dataclass(frozen=True)
class ChipScore:
    """One part's weighted score (``None`` when it has a figure on no weighted dimension), the share of the weight
    the score rests on, and each dimension scaled so the best candidate scores 1 (``None`` without a figure)."""

    name: str
    score: float | None
    coverage: float
    scaled: dict


def score_chips(weights, accelerators=DEFAULT_ACCELERATORS, dtype="bf16") -> tuple:
    """Weighted score of each part: ``S = Σ_d w_d · x_d / max(x_d) / Σ_d w_d`` over the dimensions it has figures for.

    Each dimension is scaled so the best candidate scores 1. A dimension with no figure for a part (no published
    power or MFU) is left out of that part's score and its weight renormalised; ``coverage`` says what share of
    the weight the score rests on. Args: ``weights`` a mapping from the keys of :data:`DIMENSIONS` to
    non-negative numbers (missing keys count 0; at least one > 0); ``accelerators`` catalog names; ``dtype``.
    Returns :class:`ChipScore` records, best first (parts without a score last). Source: seed 004 §3.2 (the six
    evaluation dimensions); figures from :func:`chip_figures`.

    >>> s = score_chips({"compute": 1})
    >>> s[0].name, round(s[0].score, 2)
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
    figures = chip_figures(accelerators, dtype)
    best = {d: max((f.get(d) for f in figures if f.get(d) is not None), default=None) for d in DIMENSIONS}
    top = max(w.values())
    w = {k: v / top for k, v in w.items()}          # scale-free (and safe for tiny weights)
    total_w = sum(w.values())
    out = []
    for f in figures:
        scaled = {d: f.get(d) / best[d] if f.get(d) is not None else None for d in DIMENSIONS}
        have = {d: wt for d, wt in w.items() if wt > 0 and scaled[d] is not None}
        sw = sum(have.values())
        score = sum(wt * scaled[d] for d, wt in have.items()) / sw if sw else None
        out.append(ChipScore(f.name, score, sw / total_w, scaled))
    # stable sort, best first, unscored last (the order pandas' sort_values(na_position="last") gave)
    return tuple(sorted(out, key=lambda s: (s.score is None, -(s.score or 0.0))))


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


def factions() -> tuple:
    """Seed 000 §2's chip factions (``data/factions.csv``, its one reader) as dicts of strings, in file order; with
    the members' catalog figures: :func:`chipchain.views.landscape.factions`.

    >>> factions()[0]["checked"] in ("V", "V2", "U")
    True
    """
    return _data.rows("factions.csv")
