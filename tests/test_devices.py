"""chipchain.devices: the serving-device registry, pinned to the vendors' data sheets."""
import pytest

from chipchain import _data, devices, hardware


def test_jetson_orin_nano_data_sheet():
    # NVIDIA Jetson Orin Nano Series data sheet: 8 GB LPDDR5 at 68 GB/s, 15 W, 40 INT8 TOPS sparse = 20 dense;
    # DRAM capacity is binary (8 GiB), bandwidth decimal (issue 13: one convention for capacities)
    d = devices.get("Jetson-Orin-Nano-8GB")
    assert (d.memory_bytes, d.memory_bandwidth, d.power, d.int8_ops) == (8 * 2**30, 68e9, 15.0, 20e12)
    assert d.kind == "edge" and not d.is_estimate


def test_jetson_orin_nano_super_data_sheet():
    # Jetson Orin Nano Super Developer Kit (Dec 2024): same 8 GB, memory clocked up to 102 GB/s, 25 W mode
    d = devices.get("Orin-Nano-Super")
    assert (d.memory_bytes, d.memory_bandwidth, d.power) == (8 * 2**30, 102e9, 25.0)
    assert d.memory_bandwidth / devices.get("Orin-Nano").memory_bandwidth == pytest.approx(1.5, rel=0.01)


def test_inference_asics_live_in_the_accelerator_catalog():
    # one part, one spec: Groq's LPU and Cerebras's WSE-3 are accelerators (chipchain.hardware), not devices rows
    for name in ("Groq-LPU", "Cerebras-WSE-3"):
        assert name not in devices.names()
        assert hardware.get(name).memory_bytes > 0


def test_every_name_and_alias_resolves_to_its_row():
    for d in devices.all_devices():
        for n in (d.name, *d.aliases):
            assert devices.get(n) is d
    assert devices.names() == [d.name for d in devices.all_devices()]
    assert devices.get(devices.get("M2")) is devices.get("Apple-M2-16GB")


def test_estimates_say_so():
    for d in devices.all_devices():
        if d.is_estimate:
            assert "estimate" in d.notes.lower(), f"{d.name} is unverified but its notes do not say 'estimate'"


def test_missing_figures_fail_by_name():
    m2 = devices.get("Apple-M2")
    assert _data.is_missing(m2.power) and not m2.power
    with pytest.raises(ValueError, match="Apple-M2-16GB has no 'power' figure"):
        m2.power * 3600


def test_records_are_frozen():
    with pytest.raises(AttributeError):
        devices.get("Orin-NX").memory_bytes = 1.0


def test_unknown_names_list_nearest():
    with pytest.raises(KeyError, match="Jetson-Orin-Nano-8GB"):
        devices.get("Jetson Orin Nano 4GB")
    with pytest.raises(ValueError, match="device"):
        devices.get(42)


# --- issue 13: properties of every public function -----------------------------------------------------------------

from hypothesis import given, settings, strategies as st


@settings(max_examples=30, deadline=None)
@given(text=st.text(min_size=1, max_size=16))
def test_lookup_is_a_device_or_a_key_error_listing_names(text):
    try:
        d = devices.get(text)
    except KeyError as err:
        assert "nearest known names" in str(err)
    else:
        assert d.name in devices.names() and devices.get(d) is d


def test_capacities_are_binary_and_figures_positive():
    # DRAM is built and sold in binary sizes: every capacity is a whole number of GiB (issue 13's one convention)
    for d in devices.all_devices():
        assert d.memory_bytes % 2**30 == 0 and d.memory_bandwidth > 0
    assert [d.name for d in devices.all_devices()] == devices.names()
