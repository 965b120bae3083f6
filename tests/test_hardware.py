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


@pytest.mark.parametrize("name,gb,gbps", [("A100", 80, 2039), ("H100", 80, 3350), ("H200", 141, 4800),
                                          ("MI300X", 192, 5300), ("TPU-v5p", 95, 2765), ("RTX-3090", 24, 936)])
def test_memory_in_si(name, gb, gbps):
    acc = hardware.get(name)
    assert acc.memory_bytes == pytest.approx(gb * 1e9)
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
