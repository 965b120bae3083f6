"""chipchain.links: the link registry against the datasheets and standards it cites, lookup and bad input."""
import dataclasses

import pytest

from chipchain import _data, links

GB = 1e9


# --- published figures (each row's source column names the document) -------------------------------------------

@pytest.mark.parametrize("name, bidirectional_GBps", [
    ("NVLink3", 600),        # NVIDIA A100 datasheet: NVLink 600 GB/s per GPU
    ("NVLink4", 900),        # NVIDIA H100 datasheet: NVLink 900 GB/s per GPU
    ("NVLink5", 1800),       # NVIDIA DGX B200 datasheet: 14.4 TB/s NVLink aggregate over 8 GPUs
    ("PCIe4-x16", 64),       # PCI-SIG PCIe 4.0: 16 GT/s x 16 lanes, both directions
    ("PCIe5-x16", 128),      # PCI-SIG PCIe 5.0 / H100 PCIe product brief: 128 GB/s
])
def test_nvlink_and_pcie_bidirectional_figures(name, bidirectional_GBps):
    assert links.get(name).bidirectional_bandwidth == bidirectional_GBps * GB


@pytest.mark.parametrize("name, gbit_per_s", [
    ("IB-EDR", 100), ("IB-HDR", 200), ("IB-NDR", 400), ("IB-XDR", 800),    # InfiniBand Trade Association roadmap
    ("RoCE-400G", 400), ("Ethernet-100G", 100), ("Ethernet-10G", 10),       # IEEE 802.3bs / ba / ae line rates
    ("Home-100Mbps", 0.1),
])
def test_network_line_rates_per_direction(name, gbit_per_s):
    assert links.get(name).bandwidth_per_direction * 8 == pytest.approx(gbit_per_s * GB, rel=1e-12)


def test_nvlink_per_direction_is_half_the_marketed_sum():
    # H100 datasheet's 900 GB/s is 18 links x 25 GB/s x 2 directions (Hopper whitepaper)
    nv4 = links.get("NVLink4")
    assert nv4.bandwidth_per_direction == 450 * GB == 18 * 25 * GB
    # the source's "about 20x" NVLink vs InfiniBand gap: 18x when the conventions are mixed, 9x like for like
    ndr = links.get("NDR")
    assert nv4.bidirectional_bandwidth / ndr.bandwidth_per_direction == pytest.approx(18)
    assert nv4.bandwidth_per_direction / ndr.bandwidth_per_direction == pytest.approx(9)
    # NVLink 4 vs PCIe 5 x16, both summed: about 7x (H100 datasheet: "7x PCIe Gen5")
    assert nv4.bidirectional_bandwidth / links.get("PCIe5-x16").bidirectional_bandwidth == pytest.approx(7.03, rel=0.01)


def test_export_variants_are_cut_to_400_GBps():
    # the China-market H800 and A800 carry 400 GB/s of NVLink (secondary spec tables; estimates)
    for name in ("NVLink4-H800", "NVLink3-A800"):
        lk = links.get(name)
        assert lk.bidirectional_bandwidth == 400 * GB and lk.is_estimate


# --- properties of the whole table -------------------------------------------------------------------------------

@pytest.mark.parametrize("lk", links.all_links(), ids=lambda lk: lk.name)
def test_every_link_is_consistent_and_sourced(lk):
    assert lk.bidirectional_bandwidth == pytest.approx(2 * lk.bandwidth_per_direction)
    assert lk.latency > 0 and lk.bandwidth_per_direction > 0
    assert lk.source.strip() and lk.checked in _data.CHECK_LEVELS
    if lk.checked == "U":
        assert "estimate" in (lk.source + lk.notes).lower()


def test_latency_estimates_are_ordered_by_distance():
    alpha = {n: links.get(n).latency for n in ("NVLink4", "IB-NDR", "Ethernet-100G", "Home-100Mbps")}
    assert alpha["NVLink4"] < alpha["IB-NDR"] < alpha["Ethernet-100G"] < alpha["Home-100Mbps"]


def test_names_are_unique_and_in_file_order():
    names = links.names()
    assert len(names) == len(set(names)) and names[:2] == ["NVLink3", "NVLink4"]
    assert [lk.name for lk in links.all_links()] == names


# --- lookup -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("alias, name", [
    ("nvlink 4", "NVLink4"), ("NVLink-4", "NVLink4"), ("H100-NVLink", "NVLink4"), ("PCIe Gen5 x16", "PCIe5-x16"),
    ("InfiniBand NDR", "IB-NDR"), ("ndr", "IB-NDR"), ("HDR200", "IB-HDR"), ("100GbE", "Ethernet-100G"),
    ("RoCEv2", "RoCE-400G"), ("home_broadband", "Home-100Mbps"),
])
def test_aliases_resolve(alias, name):
    assert links.get(alias).name == name


def test_record_passes_through_and_is_frozen():
    lk = links.get("IB-NDR")
    assert links.get(lk) is lk
    with pytest.raises(dataclasses.FrozenInstanceError):
        lk.latency = 0.0


def test_unknown_name_lists_nearest():
    with pytest.raises(KeyError, match="nearest known names: NVLink5, NVLink4"):
        links.get("NVLink6")
    with pytest.raises(KeyError, match="IB-"):
        links.get("IB-ZDR")


@pytest.mark.parametrize("bad", [4, None, 4.0, ["NVLink4"]])
def test_bad_input(bad):
    with pytest.raises(ValueError, match="link"):
        links.get(bad)
