"""Views for chapter 1 (one chip): the spec sheet, the roofline figure and explorers, the precision ladder."""
from __future__ import annotations

from .. import hardware, units


def spec_sheet(accelerator):
    """One accelerator's spec sheet as a two-column pandas DataFrame (quantity → value with its convention).

    >>> spec_sheet("H100").loc["Memory bandwidth", "value"]
    '3.35 TB/s'
    """
    import pandas as pd

    acc = hardware.get(accelerator)
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
