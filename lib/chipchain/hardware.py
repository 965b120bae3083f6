"""The accelerator catalog: one row per part, each with its source and how well it was checked.

The data live in ``data/accelerators.csv`` (human units in the column names: GiB, GB/s, TFLOPS); this module turns
a row into an :class:`Accelerator` whose attributes are in SI units (bytes, bytes per second, FLOP/s, watts).

Conventions:

* **Memory capacity is binary.** Vendors print HBM and DRAM capacities in binary units while writing "GB": an "80 GB"
  H100 holds 80 GiB = 85.9 × 10⁹ bytes (``nvidia-smi`` reports 81,559 MiB usable). The catalog's ``memory_GiB``
  column stores GiB for every row (each row's notes say what the vendor meant); ``memory_bytes`` is in bytes, so
  every "fits" and "cards' worth" uses the real capacity. Bandwidths stay decimal (1 GB/s = 10⁹ bytes/s).
* **Every peak names its unit** (:data:`UNIT`): ``fp64`` and ``fp32`` are the vector (CUDA core / SIMD) figures,
  ``fp64_tensor`` and the formats below it are Tensor Core (matrix engine) figures. The H100 SXM: FP64 34 vector,
  67 Tensor Core; FP32 67 vector.
* Peak throughput is **dense** unless ``sparse=True`` (2:4 structured sparsity doubles the printed figure). Sparse
  figures exist only for the Tensor Core formats the datasheets print them for (:data:`SPARSE_DTYPES`); asking for a
  sparse FP64 or FP32 peak is an error.
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

import math
from dataclasses import dataclass, field

from . import _check, _data, links, units

__all__ = ["Accelerator", "DTYPES", "UNIT", "SPARSE_DTYPES", "get", "names", "catalog", "all_accelerators", "energy_per_op",
           "PrintedPeak", "printed_peak", "printed_peaks"]

#: precisions with a peak column in the catalog, widest first (``fp64_tensor``: FP64 on the Tensor Cores)
DTYPES = ("fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")
#: bit length of the operation at each precision, as export-control arithmetic counts it (:mod:`chipchain.policy`'s
#: TPP): the bits that carry the value, so TF32 is 19 (1 sign + 8 exponent + 10 mantissa) though it is stored in 32
#: — a reading of "bit length of the operation", not settled text; storage sizes are units.BYTES_PER_ELEMENT
BITS = {"fp64": 64, "fp64_tensor": 64, "fp32": 32, "tf32": 19, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8}
#: which unit each peak is for: "vector" (CUDA cores / SIMD units) or "tensor" (Tensor Cores / matrix engines)
UNIT = {"fp64": "vector", "fp64_tensor": "tensor", "fp32": "vector", "tf32": "tensor", "bf16": "tensor",
        "fp16": "tensor", "fp8": "tensor", "int8": "tensor"}
#: formats the datasheets print 2:4 structured-sparsity figures for (none for FP64 or FP32)
SPARSE_DTYPES = ("tf32", "bf16", "fp16", "fp8", "int8")
CHECK_LEVELS = _data.CHECK_LEVELS


@dataclass(frozen=True)
class Accelerator(_data.Record):
    """One accelerator, in SI units. Missing figures are :class:`~chipchain._data.Missing`: any arithmetic
    with one raises a ``ValueError`` naming the part and the field (the catalog does not guess)."""

    name: str
    vendor: str
    year: int
    market: str                      #: "datacenter" or "consumer"
    process: str
    transistors: float | None        #: count
    die_area_mm2: float | None       #: mm² (the export rules' unit)
    memory_bytes: float | None       #: bytes (the vendor's binary "GB" converted: 80 GiB = 85.9e9)
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
        >>> get("H100").peak_flops("fp64") / 1e12, get("H100").peak_flops("fp64_tensor") / 1e12
        (34.0, 67.0)
        >>> get("H100").peak_flops("fp64", sparse=True)
        Traceback (most recent call last):
        ...
        ValueError: sparse=True: no sparse fp64 figure exists; structured sparsity applies only to tf32, bf16, fp16, fp8, int8
        """
        key = _check.choice("dtype", dtype, DTYPES)
        value = self.peaks.get(key)
        if value is None:
            have = ", ".join(self.precisions()) or "none"
            raise ValueError(f"dtype={dtype!r}: {self.name} has no {key} peak in the catalog (it has: {have})")
        _check.flag("sparse", sparse)
        if sparse:
            if key not in SPARSE_DTYPES:
                raise ValueError(f"sparse=True: no sparse {key} figure exists; structured sparsity applies only to "
                                 f"{', '.join(SPARSE_DTYPES)}")
            if not self.sparse_factor:
                raise ValueError(f"sparse=True: {self.name} has no structured-sparsity figure in the catalog")
            return value * self.sparse_factor
        return value



def _interconnect_bandwidth(row: dict, fig):
    """The part's chip-to-chip bandwidth (both directions): the link table's figure when ``interconnect`` names a
    catalog link (the spec is written once, in links.csv), else the part's own column (TPU ICI, Infinity Fabric…)."""
    try:
        link = links.get(row["interconnect"])
    except KeyError:
        return fig("interconnect_GBps_bidir", "interconnect_bandwidth", 1e9)
    if row.get("interconnect_GBps_bidir", "").strip():
        raise ValueError(f"accelerators.csv: {row['name']} states interconnect_GBps_bidir beside its interconnect "
                         f"{row['interconnect']!r}, a catalog link whose figure is links.csv's: leave the column empty")
    return link.bidirectional_bandwidth


def _row_to_accelerator(row: dict) -> Accelerator:
    name = row["name"]
    peaks = {}
    for d in DTYPES:
        peaks[d] = _data.optional_float(row, f"{d}_TOPS" if d == "int8" else f"{d}_TFLOPS", 1e12)

    def fig(col, field, scale=1.0, integer=False):
        v = _data.optional_int(row, col) if integer else _data.optional_float(row, col, scale)
        return _data.figure(v, name, field)

    return Accelerator(
        name=name, vendor=row["vendor"], year=int(row["year"]), market=row["market"],
        process=row["process"], transistors=fig("transistors_billion", "transistors", 1e9),
        die_area_mm2=fig("die_area_mm2", "die_area_mm2"), memory_bytes=fig("memory_GiB", "memory_bytes", units.GiB),
        memory_type=row["memory_type"], memory_bandwidth=fig("memory_bandwidth_GBps", "memory_bandwidth", 1e9),
        interconnect_bandwidth=_interconnect_bandwidth(row, fig),
        interconnect=row["interconnect"], tdp=fig("tdp_W", "tdp"), peaks=peaks,
        sparse_factor=_data.optional_float(row, "sparse_factor"), sms=fig("sms", "sms", integer=True),
        cuda_cores=fig("cuda_cores", "cuda_cores", integer=True),
        tensor_cores=fig("tensor_cores", "tensor_cores", integer=True),
        checked=row["checked"], source=row["source"], notes=row["notes"],
        aliases=_data.split_aliases(row["aliases"]),
    )


def _rows() -> tuple:
    return _data.rows("accelerators.csv")


_REGISTRY = _data.Registry("accelerator", Accelerator, lambda: map(_row_to_accelerator, _rows()),
                           argument="accelerator")


def names() -> list[str]:
    """Canonical names of every part in the catalog, in file order.

    >>> names()[:3]
    ['A100-SXM-80GB', 'A800', 'H100-SXM']
    """
    return _REGISTRY.names()


def all_accelerators() -> list[Accelerator]:
    """Every part in the catalog, in file order."""
    return _REGISTRY.all()


def get(accelerator) -> Accelerator:
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
    return _REGISTRY.get(accelerator)


def catalog():
    """The catalog as a pandas DataFrame, one row per part, in the data file's human units.

    >>> df = catalog()
    >>> df.loc["H100-SXM", "memory_bandwidth_GBps"]
    np.float64(3350.0)
    """
    import pandas as pd

    df = pd.DataFrame(_rows()).set_index("name")
    numeric = [c for c in df.columns if c.endswith(("_GiB", "_GBps", "_GBps_bidir", "_W", "_TFLOPS", "_TOPS",
                                                     "_mm2", "_billion", "_factor")) or c in ("year", "sms",
                                                     "cuda_cores", "tensor_cores")]
    for c in numeric:
        df[c] = pd.to_numeric(df[c].replace("", math.nan)).astype(float)
    return df


#: formats a vendor prints peaks for beyond the catalog's columns (``data/printed_peaks.csv``)
PRINTED_DTYPES = DTYPES + ("fp4",)


@dataclass(frozen=True)
class PrintedPeak:
    """The largest peak a vendor prints for a part where it lies outside the catalog's columns — a format narrower
    than 8 bits, or a sparse figure the catalog's single sparsity factor cannot hold (``data/printed_peaks.csv``).
    ``peak_flops`` is in FLOP/s (operations per second for integer formats), as printed: sparse when ``sparse``."""

    name: str                        #: the catalog's canonical name of the part
    dtype: str                       #: the format the figure is printed for (a name in :data:`PRINTED_DTYPES`)
    sparse: bool
    peak_flops: float
    bibkey: str
    checked: str
    source: str
    notes: str

    @property
    def label(self) -> str:
        """How the book names the figure: ``sparse FP4``."""
        return f"{'sparse' if self.sparse else 'dense'} {self.dtype.upper()}"


def _printed_row(row: dict) -> PrintedPeak:
    part = get(row["name"])
    if row["name"] != part.name:
        raise ValueError(f"printed_peaks.csv: write {part.name!r}, the catalog's name, not {row['name']!r}")
    dtype = _check.choice("dtype", row["dtype"], PRINTED_DTYPES)
    sparse = _check.choice("sparse", row["sparse"], ("true", "false")) == "true"
    checked = _check.choice("checked", row["checked"], CHECK_LEVELS)
    return PrintedPeak(part.name, dtype, sparse, _data.scaled(row["TFLOPS"], units.TFLOPS), row["bibkey"], checked,
                       row["source"], row["notes"])


def printed_peaks() -> tuple:
    """Every :class:`PrintedPeak`, in file order.

    >>> [(p.name, p.label, p.peak_flops / 1e12) for p in printed_peaks()]
    [('B200', 'sparse FP4', 18000.0), ('Trainium2', 'sparse FP8', 2563.0)]
    """
    return tuple(_printed_row(r) for r in _data.rows("printed_peaks.csv"))


def printed_peak(accelerator) -> PrintedPeak:
    """The largest figure the vendor prints for ``accelerator`` (a name, alias or :class:`Accelerator`) beyond the
    catalog's columns; a ``ValueError`` naming the parts that have one when it has none (an unknown name is a
    ``KeyError``, as everywhere).

    >>> printed_peak("B200").peak_flops / get("B200").peak_flops("bf16")
    8.0
    >>> printed_peak("H100")
    Traceback (most recent call last):
    ...
    ValueError: H100-SXM has no printed peak beyond the catalog (parts with one: B200, Trainium2)
    """
    name = get(accelerator).name
    found = {p.name: p for p in printed_peaks()}
    if name not in found:
        raise ValueError(f"{name} has no printed peak beyond the catalog (parts with one: {', '.join(found)})")
    return found[name]


def _energy_rows() -> tuple:
    return _data.rows("energy_per_op.csv")


def energy_per_op(operation: str | None = None, bits: int | None = None):
    """Energy of one operation at 45 nm, in joules (Horowitz 2014, ISSCC keynote, Fig. 1.1.9).

    With ``operation`` (e.g. ``"FP32 multiply"``, ``"DRAM read"``) returns that energy in J; without it, a pandas
    DataFrame of the whole table (energies in pJ, as published). A row is identified by (operation, bits): where
    the table lists an operation at more than one width ("Integer add" at 8 and 32 bits) ``bits`` is required, and
    leaving it out is a ``ValueError`` rather than a silent pick. The ratio the book quotes — a 32-bit DRAM read
    costs about 170 FP32 multiplies:

    >>> round(energy_per_op("DRAM read") / energy_per_op("FP32 multiply"))
    173
    >>> energy_per_op("Integer multiply", bits=8) / 1e-12
    0.2
    >>> energy_per_op("Integer add")
    Traceback (most recent call last):
    ...
    ValueError: operation='Integer add' is listed at 8 and 32 bits; pass bits= to say which
    """
    rows = _energy_rows()
    if operation is None:
        if bits is not None:
            raise ValueError("bits needs an operation")
        import pandas as pd

        df = pd.DataFrame(rows)
        df["bits"] = df["bits"].astype(int)
        df["energy_pJ"] = df["energy_pJ"].astype(float)
        return df
    if not isinstance(operation, str):
        raise ValueError(f"operation must be a string, got {operation!r}")
    key = operation.strip().lower()
    matches = [r for r in rows if r["operation"].lower() == key]
    if not matches:
        raise KeyError(_check.nearest_message(operation, sorted({r["operation"] for r in rows}), "operation"))
    widths = [int(r["bits"]) for r in matches]
    if bits is None:
        if len(matches) > 1:
            raise ValueError(f"operation={operation!r} is listed at {' and '.join(map(str, widths))} bits; "
                             "pass bits= to say which")
        return float(matches[0]["energy_pJ"]) * 1e-12
    b = _check.integer("bits", bits)
    if b not in widths:
        raise ValueError(f"bits={bits!r}: {matches[0]['operation']} is listed only at "
                         f"{' and '.join(map(str, widths))} bits")
    return float(matches[widths.index(b)]["energy_pJ"]) * 1e-12
