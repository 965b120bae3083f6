"""chipchain.systems: node designs against their datasheets, the accelerator → node mapping, clusters, bad input."""
import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import _data, hardware, links, systems

GB = 1e9


# --- published node designs --------------------------------------------------------------------------------------

def test_dgx_a100_datasheet():
    # NVIDIA DGX A100 datasheet: 8 A100 80GB on NVSwitch (NVLink 3, 600 GB/s per GPU), 8 single-port ConnectX-6
    # 200 Gb/s HDR InfiniBand adapters for compute
    n = systems.get("DGX-A100")
    assert n.gpus_per_node == 8 and n.nics_per_node == 8
    assert n.accelerator is hardware.get("A100") and n.accelerator.memory_bytes == 80 * 2**30   # "80GB" = 80 GiB
    assert n.intra.name == "NVLink3" and n.intra.bidirectional_bandwidth == 600 * GB
    assert n.inter.name == "IB-HDR" and n.inter.bandwidth_per_direction * 8 == 200 * GB
    assert n.inter_bandwidth_per_gpu * 8 == 200 * GB                  # one 200 Gb/s port per GPU


def test_dgx_h100_datasheet():
    # NVIDIA DGX H100 datasheet: 8 H100, 4 NVSwitch (NVLink 4, 900 GB/s per GPU), 8 ConnectX-7 400 Gb/s ports:
    # 3.2 Tb/s of compute network per node
    n = systems.get("DGX-H100")
    assert (n.gpus_per_node, n.nics_per_node, n.intra.name, n.inter.name) == (8, 8, "NVLink4", "IB-NDR")
    assert n.intra.bidirectional_bandwidth == 900 * GB
    assert n.nics_per_node * n.inter.bandwidth_per_direction * 8 == 3200 * GB


def test_dgx_b200_datasheet():
    # NVIDIA DGX B200 datasheet: 8 B200, 14.4 TB/s of NVLink bandwidth in total, 8 single-port ConnectX-7 VPI
    # up to 400 Gb/s (NDR, not XDR)
    n = systems.get("DGX-B200")
    assert n.gpus_per_node * n.intra.bidirectional_bandwidth == 14_400 * GB
    assert n.inter.name == "IB-NDR" and n.inter.bandwidth_per_direction * 8 == 400 * GB


def test_nvl72_is_one_nvlink_domain_of_72():
    # NVIDIA GB200 NVL72 page: 72 Blackwell GPUs in one NVLink domain, FP16/BF16 180 PFLOPS dense, FP8 twice that,
    # 13.4 TB of HBM3e at 576 TB/s: the rack's GPU is the GB200's, rated above the DGX B200's (2.25 PFLOPS)
    n = systems.get("NVL72")
    assert n.gpus_per_node == 72 and n.intra.name == "NVLink5" and n.accelerator is hardware.get("GB200")
    g = n.accelerator
    assert 72 * g.peak_flops("bf16") == pytest.approx(180e15) and 72 * g.peak_flops("fp8") == pytest.approx(360e15)
    assert 72 * g.memory_bandwidth == pytest.approx(576e12)
    assert 72 * g.memory_bytes == pytest.approx(13.4 * 1000 * 2**30, rel=0.01)      # NVIDIA's TB of binary GB
    assert g.peak_flops("bf16") > hardware.get("B200").peak_flops("bf16")


def test_h800_node_carries_the_cut_nvlink():
    # DeepSeek-V3 report Sec. 3.1: 8 H800 per node on NVLink/NVSwitch, InfiniBand between nodes
    n = systems.node("H800")
    assert n.name == "HGX-H800" and n.gpus_per_node == 8 and n.intra.bidirectional_bandwidth == 400 * GB


# --- accelerator → node ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("accelerator, node, intra, inter", [
    ("A100", "DGX-A100", "NVLink3", "IB-HDR"), ("H100", "DGX-H100", "NVLink4", "IB-NDR"),
    ("H200", "HGX-H200", "NVLink4", "IB-NDR"), ("H800", "HGX-H800", "NVLink4-H800", "IB-NDR"),
    ("A800", "HGX-A800", "NVLink3-A800", "IB-HDR"), ("B200", "DGX-B200", "NVLink5", "IB-NDR"),
    ("MI300X", "PCIe-server", "PCIe4-x16", "IB-HDR"), ("RTX-4090", "PCIe-server", "PCIe4-x16", "IB-HDR"),
])
def test_accelerator_maps_to_its_node(accelerator, node, intra, inter):
    n = systems.node(accelerator)
    assert (n.name, n.intra.name, n.inter.name) == (node, intra, inter)
    assert n.accelerator is hardware.get(accelerator)


@pytest.mark.parametrize("alias, name", [("dgx h100", "DGX-H100"), ("DGX A100", "DGX-A100"),
                                         ("HGX_A100", "DGX-A100"), ("GB200 NVL72", "GB200-NVL72"),
                                         ("DeepSeek-node", "HGX-H800")])
def test_node_aliases(alias, name):
    assert systems.get(alias).name == name and systems.node(alias).name == name


def test_records_pass_through_and_are_frozen():
    n = systems.get("DGX-H100")
    assert systems.node(n) is n and systems.node(n.accelerator) is n
    c = systems.cluster(n, 16)
    assert systems.cluster(c) is c and systems.cluster(c, 16) is c
    with pytest.raises(dataclasses.FrozenInstanceError):
        n.gpus_per_node = 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.n_gpus = 8


@pytest.mark.parametrize("node", systems.all_nodes(), ids=lambda n: n.name)
def test_every_node_is_sourced_and_consistent(node):
    assert node.source.strip() and node.checked in _data.CHECK_LEVELS
    if node.checked == "U":
        assert "estimate" in (node.source + node.notes).lower() or node.name == "PCIe-server"
    assert node.gpus_per_node >= 1 and node.nics_per_node >= 1
    assert links.get(node.intra.name) is node.intra and links.get(node.inter.name) is node.inter


# --- clusters ------------------------------------------------------------------------------------------------------

def test_running_example_cluster():
    # seed 000: 1,024 A100 in 128 DGX A100 nodes; one HDR port per GPU: 25 GB/s per direction per GPU
    c = systems.cluster("A100", 1024)
    assert (c.n_gpus, c.n_nodes, c.gpus_per_node) == (1024, 128, 8)
    assert c.accelerator is hardware.get("A100-SXM-80GB") and c.inter_bandwidth_per_gpu == 25 * GB
    assert "1,024" in c.name and "DGX-A100" in c.name


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["A100", "H100", "DGX-B200", "NVL72", "MI300X"]), st.integers(1, 10**6))
def test_cluster_nodes_cover_the_gpus(system, n):
    c = systems.cluster(system, n)
    assert (c.n_nodes - 1) * c.gpus_per_node < n <= c.n_nodes * c.gpus_per_node


def test_default_cluster_is_one_node():
    assert systems.cluster("H100").n_gpus == 8 and systems.cluster("NVL72").n_gpus == 72


# --- bad input ---------------------------------------------------------------------------------------------------

def test_unknown_names_list_the_nearest():
    with pytest.raises(KeyError, match="nearest known names: DGX-H100"):
        systems.node("DGX-Z100")
    with pytest.raises(KeyError, match="H100"):
        systems.cluster("H10", 8)
    with pytest.raises(KeyError, match="nearest known names"):
        systems.get("DGX-A1000")


@pytest.mark.parametrize("call, match", [
    (lambda: systems.cluster("H100", 0), "n_gpus must be at least 1"),
    (lambda: systems.cluster("H100", 2.5), "n_gpus must be an integer"),
    (lambda: systems.cluster("H100", True), "n_gpus must be an integer"),
    (lambda: systems.cluster(systems.cluster("H100", 16), 32), "contradicts"),
    (lambda: systems.cluster("PCIe-server", 8), "needs an accelerator"),
    (lambda: systems.node(42), "system must be"),
    (lambda: systems.node(None), "system must be"),
    (lambda: dataclasses.replace(systems.get("DGX-H100"), gpus_per_node=0), "gpus_per_node"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- every node's links against its vendor's reference system (issue 13) -------------------------------------
# (node, NVLink/PCIe bidirectional GB/s per GPU, network Gb/s per port, ports per GPU): DGX A100 ships eight 200 Gb/s
# HDR ConnectX-6; DGX H100, DGX H200 and DGX B200 eight 400 Gb/s NDR ConnectX-7; export variants carry NVLink as cut
# (A800 and H800 400 GB/s) or uncut (H20 900 GB/s); the H100 PCIe card sits on PCIe Gen5 x16 (128 GB/s); DGX-1
# (V100) has NVLink 2 at 300 GB/s and four 100 Gb/s EDR ports.
VENDOR_REFERENCE = [
    ("DGX-A100", 600, 200, 1), ("DGX-H100", 900, 400, 1), ("HGX-H200", 900, 400, 1), ("DGX-B200", 1800, 400, 1),
    ("HGX-A800", 400, 200, 1), ("HGX-H800", 400, 400, 1), ("HGX-H20", 900, 400, 1), ("PCIe-H100", 128, 400, 1),
    ("DGX-A100-40GB", 600, 200, 1), ("DGX-1-V100", 300, 100, 0.5),        # DGX-1: four EDR ports for eight V100
]


@pytest.mark.parametrize("name, intra_GBps, port_Gbps, ports_per_gpu", VENDOR_REFERENCE)
def test_node_links_match_the_vendor_reference_system(name, intra_GBps, port_Gbps, ports_per_gpu):
    nd = systems.get(name)
    assert nd.intra.bidirectional_bandwidth == intra_GBps * 1e9
    assert nd.inter.bandwidth_per_direction * 8 == port_Gbps * 1e9
    assert nd.nics_per_node == ports_per_gpu * nd.gpus_per_node
    # the row's own source (or its estimate note) names the figure it was checked against
    text = f"{nd.source} {nd.notes} {nd.inter.source} {nd.intra.source}"
    assert f"{port_Gbps} Gb/s" in text and (f"{intra_GBps:,} GB/s" in text or f"{intra_GBps} GB/s" in text
                                             or f"{intra_GBps / 1000:g} TB/s" in text or "14.4 TB/s" in text)
    if nd.checked != "U":          # a V/V2 row cites the vendor's datasheet or a primary report
        assert "datasheet" in nd.source or "Technical Report" in nd.source or "product page" in nd.source


def test_every_nvidia_part_with_a_server_design_has_its_own_node():
    generic = {a.name for a in hardware.all_accelerators()
               if a.vendor == "NVIDIA" and systems.node(a).name == systems.GENERIC}
    assert generic <= {"RTX-3090", "RTX-4090"}          # consumer cards: the generic PCIe Gen4 server is right


@pytest.mark.parametrize("node", [n.name for n in systems.all_nodes() if n.accelerator is not None])
def test_a_parts_interconnect_figure_is_its_nodes_intra_link(node):
    # a part's chip-to-chip figure (accelerators.csv, both directions) is the intra-node link of the node it sits in
    # (links.csv), and every link's bidirectional figure is twice its per-direction one: one spec, two tables
    n = systems.node(node)
    acc, link = n.accelerator, n.intra
    assert link.bidirectional_bandwidth == pytest.approx(2 * link.bandwidth_per_direction, rel=1e-12)
    if _data.is_missing(acc.interconnect_bandwidth):
        pytest.skip(f"{acc.name} has no interconnect figure")
    assert acc.interconnect_bandwidth == pytest.approx(link.bidirectional_bandwidth, rel=1e-12)
