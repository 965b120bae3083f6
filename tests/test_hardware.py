"""The accelerator catalog: provenance on every row, the parts the book needs, conventions, lookups."""
import csv
import math
from importlib import resources

import pytest

from chipchain import _check, hardware

REQUIRED = ["A100-SXM-80GB", "A800", "H100-SXM", "H100-PCIe", "H800", "H20", "H200", "B200", "RTX-3090", "RTX-4090",
            "MI300X", "TPU-v4", "TPU-v5p", "Ascend-910B", "Ascend-910C"]


def rows():
    with resources.files("chipchain").joinpath("data/accelerators.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_every_row_has_source_and_check_level():
    for row in rows():
        assert row["source"].strip(), f"{row['name']} has no source"
        assert row["checked"] in hardware.CHECK_LEVELS, f"{row['name']}: checked={row['checked']!r}"


def test_unverified_rows_say_estimate_or_why():
    for row in rows():
        if row["checked"] == "U":
            assert row["notes"].strip(), f"{row['name']} is unverified but its notes don't say what is estimated"


def test_names_are_unique_including_aliases():
    seen = set()
    for row in rows():
        for key in [row["name"], *filter(None, row["aliases"].split(";"))]:
            k = _check.key(key)
            assert k not in seen, f"duplicate name or alias {key!r}"
            seen.add(k)


@pytest.mark.parametrize("name", REQUIRED)
def test_required_parts_present(name):
    acc = hardware.get(name)
    assert acc.memory_bytes and acc.memory_bytes > 0
    assert acc.precisions(), f"{name} has no peak figure"


# datasheet values pinned (facts.md, flags V2): dense unless noted
@pytest.mark.parametrize("name,dtype,tflops", [
    ("A100", "bf16", 312), ("A100", "tf32", 156), ("A100", "fp32", 19.5), ("A100", "int8", 624),
    ("H100", "bf16", 989.4), ("H100", "fp16", 989.4), ("H100", "fp8", 1979), ("H100", "tf32", 494.7),
    ("H100", "fp32", 67), ("MI300X", "bf16", 1307.4), ("MI300X", "fp8", 2614.9), ("TPU-v5p", "bf16", 459),
    ("TPU-v5p", "int8", 918), ("TPU-v4", "bf16", 275), ("RTX-4090", "fp8", 660.6),
])
def test_pinned_peaks(name, dtype, tflops):
    assert hardware.get(name).peak_flops(dtype) == pytest.approx(tflops * 1e12)


def test_sparse_doubles_nvidia_tensor_figures():
    h100 = hardware.get("H100")
    assert h100.peak_flops("bf16", sparse=True) == pytest.approx(1978.8e12)   # the datasheet's "1,979"
    assert h100.peak_flops("fp8", sparse=True) == pytest.approx(3958e12)


@pytest.mark.parametrize("name,gib,gbps", [("A100", 80, 2039), ("H100", 80, 3350), ("H200", 141, 4800),
                                           ("MI300X", 192, 5300), ("TPU-v5p", 95, 2765), ("RTX-3090", 24, 936),
                                           ("Trainium2", 96, 2900)])
def test_memory_in_si(name, gib, gbps):
    """Capacities are the vendors' binary "GB" (an 80 GB H100 reports 81,559 MiB usable of 81,920 MiB; AWS prints
    Trainium2's 96 GiB): stored in bytes, bandwidths decimal."""
    acc = hardware.get(name)
    assert acc.memory_bytes == gib * 2**30
    assert acc.memory_bytes > 81_559 * 2**20 if name == "H100" else True
    assert acc.memory_bandwidth == pytest.approx(gbps * 1e9)


def test_interconnect_is_bidirectional():
    assert hardware.get("H100").interconnect_bandwidth == pytest.approx(900e9)   # 450 GB/s per direction
    assert hardware.get("A100").interconnect_bandwidth == pytest.approx(600e9)
    assert hardware.get("H800").interconnect_bandwidth == pytest.approx(400e9)


def test_estimates_are_flagged():
    for name in ("H20", "B200", "Ascend-910B", "Ascend-910C", "H800", "A800"):
        assert hardware.get(name).is_estimate


def test_lookup_is_forgiving_and_unknown_names_list_neighbours():
    assert hardware.get(" h100_sxm5 ").name == "H100-SXM"
    assert hardware.get(hardware.get("H100")) is hardware.get("H100")
    with pytest.raises(KeyError, match="nearest known names: .*MI300X"):
        hardware.get("MI300")


@pytest.mark.parametrize("bad", [None, 3, 4.5, ["H100"]])
def test_lookup_rejects_non_strings(bad):
    with pytest.raises(ValueError, match="name"):
        hardware.get(bad)


def test_peak_flops_errors_name_the_argument():
    with pytest.raises(ValueError, match="dtype"):
        hardware.get("H100").peak_flops("fp4")
    with pytest.raises(ValueError, match="TPU-v5p has no fp8"):
        hardware.get("TPU-v5p").peak_flops("fp8")
    with pytest.raises(ValueError, match="sparse"):
        hardware.get("TPU-v5p").peak_flops("bf16", sparse=True)
    with pytest.raises(ValueError, match="sparse"):
        hardware.get("H100").peak_flops("bf16", sparse="yes")


def test_catalog_frame_matches_objects():
    df = hardware.catalog()
    for name in hardware.names():
        acc = hardware.get(name)
        if acc.tdp:
            assert df.loc[name, "tdp_W"] == acc.tdp
        else:
            assert math.isnan(df.loc[name, "tdp_W"])


def test_missing_figure_fails_by_name():
    # B200's SM count is not published per GPU: arithmetic on it must name the part and the field (issue 12)
    with pytest.raises(ValueError, match="B200 has no 'sms' figure in the catalog"):
        hardware.get("B200").sms * 4
    with pytest.raises(ValueError, match="MI300X has no 'die_area_mm2'"):
        hardware.get("MI300X").require("die_area_mm2")


def test_spec_sheet_states_conventions():
    from chipchain.views.chip import spec_sheet

    sheet = spec_sheet("H100")
    assert "bidirectional" in sheet.loc["Chip-to-chip link", "value"]
    assert "dense" in " ".join(sheet.index)
    assert spec_sheet("H20").loc["Checked", "value"].startswith("unverified")


def test_energy_table_horowitz():
    # Horowitz 2014: FP32 multiply 3.7 pJ, 32-bit DRAM read 640 pJ -> ~170x
    assert hardware.energy_per_op("FP32 multiply") == pytest.approx(3.7e-12)
    assert hardware.energy_per_op("DRAM read") / hardware.energy_per_op("FP32 multiply") == pytest.approx(173, abs=1)
    with pytest.raises(KeyError, match="nearest"):
        hardware.energy_per_op("DRAM write")


def test_energy_rows_are_unique_per_operation_and_bits():
    """Horowitz 2014 lists some operations at two widths (8- and 32-bit integer add and multiply): a row is named
    by (operation, bits), that pair is unique, and a lookup by a name listed twice must say so instead of picking."""
    table = hardware.energy_per_op()
    assert not table.duplicated(["operation", "bits"]).any()
    for op, group in table.groupby("operation"):
        for _, row in group.iterrows():
            assert hardware.energy_per_op(op, bits=int(row["bits"])) == pytest.approx(row["energy_pJ"] * 1e-12)
        if len(group) > 1:
            with pytest.raises(ValueError, match="pass bits="):
                hardware.energy_per_op(op)
    # Horowitz Fig. 1.1.9: an 8-bit integer multiply costs 0.2 pJ, a 32-bit one 3.1 pJ
    assert hardware.energy_per_op("Integer multiply", bits=8) == pytest.approx(0.2e-12)
    assert hardware.energy_per_op("Integer multiply", bits=32) == pytest.approx(3.1e-12)
    with pytest.raises(ValueError, match="bits=16"):
        hardware.energy_per_op("Integer add", bits=16)


# Published sparse figures (2:4 structured sparsity), TFLOPS or TOPS, from the datasheets quoted in
# /work/shared/reference/facts.md: A100 (BF16 624, TF32 312, INT8 1,248), H100 SXM (BF16 1,979, FP8 3,958,
# INT8 3,958), MI300X (BF16 2,614.9).
SPARSE_PUBLISHED = [("A100", "bf16", 624), ("A100", "tf32", 312), ("A100", "int8", 1248), ("H100", "bf16", 1979),
                    ("H100", "fp8", 3958), ("H100", "int8", 3958), ("MI300X", "bf16", 2614.9)]


@pytest.mark.parametrize("name,dtype,tflops", SPARSE_PUBLISHED)
def test_sparse_peaks_match_datasheets(name, dtype, tflops):
    assert hardware.get(name).peak_flops(dtype, sparse=True) == pytest.approx(tflops * 1e12, rel=1e-3)


@pytest.mark.parametrize("name", hardware.names())
def test_sparse_peaks_exist_only_where_datasheets_give_them(name):
    """No datasheet prints a sparse FP64 or FP32 figure (sparsity is a Tensor Core feature), and parts whose vendor
    prints no structured-sparsity figure (TPUs, Gaudi 3, ...) have none either."""
    acc = hardware.get(name)
    for d in acc.precisions():
        if d not in hardware.SPARSE_DTYPES or not acc.sparse_factor:
            with pytest.raises(ValueError, match="sparse"):
                acc.peak_flops(d, sparse=True)
        else:
            assert acc.peak_flops(d, sparse=True) == pytest.approx(acc.sparse_factor * acc.peak_flops(d))
    assert set(hardware.UNIT) == set(hardware.DTYPES)


def test_fp64_vector_and_tensor_core_are_separate():
    """H100 SXM datasheet: FP64 34, FP64 Tensor Core 67, FP32 67 (vector); A100: 9.7 and 19.5; MI300X: 81.7 vector,
    163.4 matrix."""
    for name, vector, tensor in (("H100", 34, 67), ("A100", 9.7, 19.5), ("MI300X", 81.7, 163.4)):
        acc = hardware.get(name)
        assert acc.peak_flops("fp64") == pytest.approx(vector * 1e12)
        assert acc.peak_flops("fp64_tensor") == pytest.approx(tensor * 1e12)
    assert hardware.UNIT["fp64"] == hardware.UNIT["fp32"] == "vector" and hardware.UNIT["fp64_tensor"] == "tensor"
    with pytest.raises(ValueError, match="no sparse fp64"):
        hardware.get("H100").peak_flops("fp64", sparse=True)


def test_one_bits_table_for_every_dtype():
    # TF32 is 1 + 8 + 10 = 19 bits of value (NVIDIA A100 whitepaper, "TF32"); hardware.BITS and the export-control
    # table agree for every precision of the catalog (they were 32 and 19 before)
    from chipchain import policy
    assert set(hardware.BITS) == set(hardware.DTYPES)
    assert all(policy.BITS[d] == hardware.BITS[d] for d in hardware.DTYPES)
    assert hardware.BITS["tf32"] == 1 + 8 + 10
