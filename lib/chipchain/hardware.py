"""The accelerator catalog: one row per part, each with its source and how well it was checked.

The data live in ``data/accelerators.csv`` (human units in the column names: GB, GB/s, TFLOPS); this module turns a
row into an :class:`Accelerator` whose attributes are in SI units (bytes, bytes per second, FLOP/s, watts).

Conventions:

* Peak throughput is **dense** unless ``sparse=True`` (2:4 structured sparsity doubles the printed figure).
* ``int8`` figures are integer operations per second; they are returned by :meth:`Accelerator.peak_flops` with
  the same unit for comparison, but they are not floating-point operations.
* ``interconnect_bandwidth`` is the chip-to-chip bandwidth **summed over both directions** (the way NVIDIA and the
  export rules quote it): the H100's NVLink 4 is 900 GB/s bidirectional, 450 GB/s each way.
* ``checked`` says how each row was verified: ``V`` read in the primary source, ``V2`` seen in secondary material
  quoting it, ``U`` unverified — an estimate, and the book says so.

>>> h100 = get("h100")
>>> h100.name, h100.peak_flops("bf16") / 1e12
('H100-SXM', 989.4)
"""
from __future__ import annotations

import csv
import difflib
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from . import _check

__all__ = ["Accelerator", "DTYPES", "get", "names", "catalog", "all_accelerators", "energy_per_op", "spec_sheet"]

#: precisions with a peak column in the catalog, widest first
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")
#: bit width of each precision (used by export-control arithmetic)
BITS = {"fp64": 64, "fp32": 32, "tf32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8}
CHECK_LEVELS = ("V", "V2", "U")


def _float(text: str):
    text = text.strip()
    return float(text) if text else None


@dataclass(frozen=True)
class Accelerator:
    """One accelerator, in SI units. Missing figures are ``None`` (the catalog does not guess)."""

    name: str
    vendor: str
    year: int
    market: str                      #: "datacenter" or "consumer"
    process: str
    transistors: float | None        #: count
    die_area_mm2: float | None       #: mm² (the export rules' unit)
    memory_bytes: float | None       #: bytes
    memory_type: str
    memory_bandwidth: float | None   #: bytes/s
    interconnect_bandwidth: float | None  #: bytes/s, both directions summed
    interconnect: str
    tdp: float | None                #: watts
    peaks: dict = field(repr=False)  #: dtype -> dense FLOP/s (or op/s for int8)
    sparse_factor: float | None
    sms: int | None
    cuda_cores: int | None
    tensor_cores: int | None
    checked: str
    source: str
    notes: str
    aliases: tuple = ()

    @property
    def is_estimate(self) -> bool:
        """True when the row is unverified (``checked == "U"``)."""
        return self.checked == "U"

    def precisions(self) -> list[str]:
        """The precisions this part has a published (or estimated) peak for, widest first.

        >>> get("TPU-v5p").precisions()
        ['bf16', 'int8']
        """
        return [d for d in DTYPES if self.peaks.get(d) is not None]

    def peak_flops(self, dtype: str = "bf16", sparse: bool = False) -> float:
        """Peak throughput at ``dtype`` in FLOP/s (op/s for ``int8``); dense unless ``sparse=True``.

        Source: the row's ``source`` column. Raises ``ValueError`` if the part has no figure at that precision.

        >>> get("H100").peak_flops("fp8") / 1e12
        1979.0
        >>> get("H100").peak_flops("fp16", sparse=True) / 1e12
        1978.8
        """
        key = _check.choice("dtype", dtype, DTYPES)
        value = self.peaks.get(key)
        if value is None:
            have = ", ".join(self.precisions()) or "none"
            raise ValueError(f"dtype={dtype!r}: {self.name} has no {key} peak in the catalog (it has: {have})")
        _check.flag("sparse", sparse)
        if sparse:
            if not self.sparse_factor:
                raise ValueError(f"sparse=True: {self.name} has no structured-sparsity figure in the catalog")
            return value * self.sparse_factor
        return value

    def require(self, attribute: str) -> float:
        """The value of a numeric attribute, or a ``ValueError`` saying the catalog lacks it.

        >>> get("TPU-v4").require("tdp")
        Traceback (most recent call last):
        ...
        ValueError: TPU-v4 has no tdp figure in the catalog
        """
        value = getattr(self, attribute)
        if value is None:
            raise ValueError(f"{self.name} has no {attribute} figure in the catalog")
        return value


def _row_to_accelerator(row: dict) -> Accelerator:
    peaks = {}
    for d in DTYPES:
        col = f"{d}_TOPS" if d == "int8" else f"{d}_TFLOPS"
        v = _float(row[col])
        peaks[d] = v * 1e12 if v is not None else None
    def scaled(col, factor):
        v = _float(row[col])
        return v * factor if v is not None else None
    def as_int(col):
        v = _float(row[col])
        return int(v) if v is not None else None
    return Accelerator(
        name=row["name"], vendor=row["vendor"], year=int(row["year"]), market=row["market"],
        process=row["process"], transistors=scaled("transistors_billion", 1e9),
        die_area_mm2=_float(row["die_area_mm2"]), memory_bytes=scaled("memory_GB", 1e9),
        memory_type=row["memory_type"], memory_bandwidth=scaled("memory_bandwidth_GBps", 1e9),
        interconnect_bandwidth=scaled("interconnect_GBps_bidir", 1e9), interconnect=row["interconnect"],
        tdp=_float(row["tdp_W"]), peaks=peaks, sparse_factor=_float(row["sparse_factor"]),
        sms=as_int("sms"), cuda_cores=as_int("cuda_cores"), tensor_cores=as_int("tensor_cores"),
        checked=row["checked"], source=row["source"], notes=row["notes"],
        aliases=tuple(a for a in row["aliases"].split(";") if a),
    )


@lru_cache(maxsize=1)
def _rows() -> tuple:
    with resources.files("chipchain").joinpath("data/accelerators.csv").open(encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


@lru_cache(maxsize=1)
def _index() -> dict:
    index = {}
    for row in _rows():
        acc = _row_to_accelerator(row)
        for key in (acc.name, *acc.aliases):
            index[_check.key(key)] = acc
    return index


def names() -> list[str]:
    """Canonical names of every part in the catalog, in file order.

    >>> names()[:3]
    ['A100-SXM-80GB', 'A800', 'H100-SXM']
    """
    return [row["name"] for row in _rows()]


def all_accelerators() -> list[Accelerator]:
    """Every part in the catalog, in file order."""
    return [get(n) for n in names()]


def get(name) -> Accelerator:
    """Look up an accelerator by name or alias, ignoring case, spaces and underscores.

    An :class:`Accelerator` passes through unchanged, so functions can accept either. An unknown name raises
    ``KeyError`` listing the nearest known names.

    >>> get("h100 sxm5").name
    'H100-SXM'
    >>> get("H300")
    Traceback (most recent call last):
    ...
    KeyError: "unknown accelerator 'H300'; nearest known names: H800, H200, H100-SXM, RTX-3090"
    """
    if isinstance(name, Accelerator):
        return name
    return _check.lookup(_index(), name, "accelerator")


def catalog():
    """The catalog as a pandas DataFrame, one row per part, in the data file's human units.

    >>> df = catalog()
    >>> df.loc["H100-SXM", "memory_bandwidth_GBps"]
    np.float64(3350.0)
    """
    import pandas as pd

    df = pd.DataFrame(_rows()).set_index("name")
    numeric = [c for c in df.columns if c.endswith(("_GB", "_GBps", "_GBps_bidir", "_W", "_TFLOPS", "_TOPS",
                                                     "_mm2", "_billion", "_factor")) or c in ("year", "sms",
                                                     "cuda_cores", "tensor_cores")]
    for c in numeric:
        df[c] = pd.to_numeric(df[c].replace("", math.nan)).astype(float)
    return df


@lru_cache(maxsize=1)
def _energy_rows() -> tuple:
    with resources.files("chipchain").joinpath("data/energy_per_op.csv").open(encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


def energy_per_op(operation: str | None = None):
    """Energy of one operation at 45 nm, in joules (Horowitz 2014, ISSCC keynote, Fig. 1.1.9).

    With ``operation`` (e.g. ``"FP32 multiply"``, ``"DRAM read"``) returns that energy in J; without it, a pandas
    DataFrame of the whole table (energies in pJ, as published). The ratio the book quotes — a 32-bit DRAM read
    costs about 170 FP32 multiplies:

    >>> round(energy_per_op("DRAM read") / energy_per_op("FP32 multiply"))
    173
    """
    rows = _energy_rows()
    if operation is None:
        import pandas as pd

        df = pd.DataFrame(rows)
        df["bits"] = df["bits"].astype(int)
        df["energy_pJ"] = df["energy_pJ"].astype(float)
        return df
    by_name = {r["operation"].lower(): r for r in rows}
    if not isinstance(operation, str):
        raise ValueError(f"operation must be a string, got {operation!r}")
    key = operation.strip().lower()
    if key not in by_name:
        near = difflib.get_close_matches(key, list(by_name), n=3, cutoff=0.3)
        raise KeyError(f"unknown operation {operation!r}; nearest: {', '.join(by_name[n]['operation'] for n in near)}")
    return float(by_name[key]["energy_pJ"]) * 1e-12


def spec_sheet(name):
    """One accelerator's spec sheet as a two-column pandas DataFrame (quantity → value with its convention).

    >>> spec_sheet("H100").loc["Memory bandwidth", "value"]
    '3.35 TB/s'
    """
    import pandas as pd

    from . import units

    acc = get(name)
    rows = [("Vendor, year", f"{acc.vendor}, {acc.year}"), ("Process", acc.process)]
    if acc.transistors:
        rows.append(("Transistors", f"{acc.transistors / 1e9:g} billion"))
    if acc.die_area_mm2:
        rows.append(("Die area", f"{acc.die_area_mm2:g} mm²"))
    if acc.sms:
        rows.append(("Streaming multiprocessors", f"{acc.sms}"))
    if acc.cuda_cores:
        rows.append(("CUDA cores (FP32 lanes)", units.fmt_number(acc.cuda_cores)))
    if acc.tensor_cores:
        rows.append(("Tensor Cores", units.fmt_number(acc.tensor_cores)))
    if acc.memory_bytes:
        rows.append(("Memory", f"{units.fmt_bytes(acc.memory_bytes)} {acc.memory_type} (decimal GB)"))
    if acc.memory_bandwidth:
        rows.append(("Memory bandwidth", str(units.fmt_bandwidth(acc.memory_bandwidth))))
    if acc.interconnect_bandwidth:
        rows.append(("Chip-to-chip link", f"{acc.interconnect}, {units.fmt_bandwidth(acc.interconnect_bandwidth)} "
                                          "bidirectional"))
    if acc.tdp:
        rows.append(("Power (TDP)", str(units.fmt_power(acc.tdp))))
    for d in acc.precisions():
        unit = "TOPS" if d == "int8" else "TFLOP/s"
        rows.append((f"Peak {d.upper()}, dense", f"{acc.peak_flops(d) / 1e12:,.1f} {unit}"))
    rows.append(("Checked", {"V": "primary source", "V2": "secondary source quoting the primary",
                             "U": "unverified: estimate"}[acc.checked]))
    rows.append(("Source", acc.source))
    return pd.DataFrame(rows, columns=["quantity", "value"]).set_index("quantity")
