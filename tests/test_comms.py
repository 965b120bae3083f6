"""Tests for chipchain.comms: the α–β collectives, the running ring all-reduce, the link catalog, DP efficiency."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import comms
from chipchain.comms import (allgather_time, alltoall_time, dp_scaling_efficiency, hierarchical_allreduce_time,
                             link, links, p2p_time, reduce_scatter_time, ring_allreduce_time,
                             simulate_ring_allreduce, tree_allreduce_time)

GB = 1e9


# --- formulas -------------------------------------------------------------------------------------------------

def test_ring_allreduce_formula():
    # T = 2(n-1)/n * M/B + 2(n-1)*alpha (Thakur et al. 2005; Patarasuk & Yuan 2009)
    assert ring_allreduce_time(8e9, 4, 100e9) == pytest.approx(2 * 3 / 4 * 0.08)
    assert ring_allreduce_time(8e9, 4, 100e9, 1e-5) == pytest.approx(2 * 3 / 4 * 0.08 + 6e-5)
    assert ring_allreduce_time(8e9, 1, 100e9, 1e-5) == 0.0
    assert ring_allreduce_time(0, 8, 100e9, 1e-5) == pytest.approx(14e-5)


def test_seed_82_ms_example():
    # seed 000 §4: 7B FP16 gradients (14 GB) on 8 GPUs at an effective ~300 GB/s ≈ 82 ms.
    # 2*7/8 * 14e9 / 300e9 = 81.67 ms: the 300 GB/s is used as the per-direction bus bandwidth B.
    assert ring_allreduce_time(14e9, 8, 300e9) == pytest.approx(0.08167, rel=1e-3)
    # with 300 GB/s read as bidirectional (150 per direction) it would be twice that
    assert ring_allreduce_time(14e9, 8, 150e9) == pytest.approx(0.1633, rel=1e-3)


def test_allgather_reduce_scatter_formula():
    assert allgather_time(8e9, 8, 100e9) == pytest.approx(7 / 8 * 0.08)
    assert reduce_scatter_time(8e9, 8, 100e9, 2e-6) == pytest.approx(7 / 8 * 0.08 + 7 * 2e-6)
    assert allgather_time(8e9, 1, 100e9, 2e-6) == 0.0
    # ring all-reduce = reduce-scatter + all-gather
    assert ring_allreduce_time(3e9, 6, 40e9, 3e-6) == pytest.approx(
        reduce_scatter_time(3e9, 6, 40e9, 3e-6) + allgather_time(3e9, 6, 40e9, 3e-6))


def test_tree_formula_and_crossover():
    assert tree_allreduce_time(1e9, 8, 100e9, 1e-5) == pytest.approx(2 * 3 * (1e-5 + 0.01))
    assert tree_allreduce_time(1e9, 9, 100e9) == pytest.approx(2 * 4 * 0.01)    # ceil(log2 9) = 4
    assert tree_allreduce_time(1e9, 1, 100e9) == 0.0
    # small messages on many ranks: tree wins (latency); large messages: ring wins (bandwidth)
    assert tree_allreduce_time(1e4, 512, 50e9, 5e-6) < ring_allreduce_time(1e4, 512, 50e9, 5e-6)
    assert tree_allreduce_time(1e9, 512, 50e9, 5e-6) > ring_allreduce_time(1e9, 512, 50e9, 5e-6)


def test_alltoall_and_p2p():
    assert alltoall_time(8e9, 8, 100e9, 1e-6) == pytest.approx(7 / 8 * 0.08 + 7e-6)
    assert alltoall_time(8e9, 1, 100e9) == 0.0
    assert p2p_time(1e9, 1e9, 0.5) == pytest.approx(1.5)


def test_hierarchical_decomposition():
    m, g, nodes, bi, bo, ai, ao = 14e9, 8, 16, 450e9, 50e9, 3e-6, 5e-6
    expected = (2 * (g - 1) / g * m / bi + 2 * (g - 1) * ai
                + 2 * (nodes - 1) / nodes * (m / g) / bo + 2 * (nodes - 1) * ao)
    assert hierarchical_allreduce_time(m, g, nodes, bi, bo, ai, ao) == pytest.approx(expected)
    # one node: just the in-node ring; one GPU per node: just the cross-node ring
    assert hierarchical_allreduce_time(m, g, 1, bi, bo, ai, ao) == pytest.approx(ring_allreduce_time(m, g, bi, ai))
    assert hierarchical_allreduce_time(m, 1, nodes, bi, bo, ai, ao) == pytest.approx(
        ring_allreduce_time(m, nodes, bo, ao))
    # beats a flat ring whose slowest link is the network
    assert hierarchical_allreduce_time(m, g, nodes, bi, bo, ai, ao) < ring_allreduce_time(m, g * nodes, bo, ao)


@settings(max_examples=60, deadline=None)
@given(m=st.floats(1, 1e11), n=st.integers(1, 4096), b=st.floats(1e6, 1e13), a=st.floats(0, 1e-3))
def test_properties(m, n, b, a):
    r = ring_allreduce_time(m, n, b, a)
    assert r >= 0 and math.isfinite(r)
    # ring never faster than the bandwidth lower bound 2(n-1)/n M/B, never slower than 2 M/B + 2(n-1)a
    assert r >= 2 * (n - 1) / n * m / b * (1 - 1e-12)
    assert r <= 2 * m / b + 2 * (n - 1) * a + 1e-12
    # more bandwidth never slower; more ranks never cheaper
    assert ring_allreduce_time(m, n, 2 * b, a) <= r
    assert ring_allreduce_time(m, n + 1, b, a) >= r
    assert allgather_time(m, n, b, a) == pytest.approx(r / 2)


@pytest.mark.parametrize("call", [
    lambda: ring_allreduce_time(-1, 8, 1e9),
    lambda: ring_allreduce_time(1e9, 0, 1e9),
    lambda: ring_allreduce_time(1e9, 8, 0),
    lambda: ring_allreduce_time(1e9, 8, 1e9, -1e-6),
    lambda: ring_allreduce_time(float("nan"), 8, 1e9),
    lambda: ring_allreduce_time(1e9, 2.5, 1e9),
    lambda: ring_allreduce_time(1e9, True, 1e9),
    lambda: allgather_time(1e9, 8, float("inf")),
    lambda: tree_allreduce_time("1e9", 8, 1e9),
    lambda: alltoall_time(1e9, -2, 1e9),
    lambda: p2p_time(1e9, 0),
    lambda: hierarchical_allreduce_time(1e9, 0, 4, 1e9, 1e9),
    lambda: hierarchical_allreduce_time(1e9, 8, 4, 1e9, -1e9),
    lambda: dp_scaling_efficiency(0, 1),
    lambda: dp_scaling_efficiency(1, 1, overlap=1.5),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_bad_input_message_names_argument():
    with pytest.raises(ValueError, match="bandwidth"):
        ring_allreduce_time(1e9, 8, -5)
    with pytest.raises(ValueError, match="n must be at least 1"):
        ring_allreduce_time(1e9, 0, 5)


# --- data-parallel efficiency -------------------------------------------------------------------------------

def test_dp_scaling_efficiency():
    assert dp_scaling_efficiency(1.0, 0.0) == 1.0
    assert dp_scaling_efficiency(1.0, 1.0) == 0.5
    assert dp_scaling_efficiency(1.0, 1.0, overlap=0.5) == pytest.approx(1 / 1.5)
    assert dp_scaling_efficiency(1.0, 3.0, overlap=1.0) == pytest.approx(1 / 3)   # hides 1 s of 3
    assert dp_scaling_efficiency(2.0, 1.0, overlap=1.0) == 1.0


@settings(max_examples=60, deadline=None)
@given(tc=st.floats(1e-3, 10), tm=st.floats(0, 10), ov=st.floats(0, 1))
def test_dp_efficiency_properties(tc, tm, ov):
    e = dp_scaling_efficiency(tc, tm, ov)
    assert 0 < e <= 1
    assert dp_scaling_efficiency(tc, tm, 0.0) <= e + 1e-12          # overlap never hurts
    assert dp_scaling_efficiency(tc, tm * 1.5, ov) <= e + 1e-12     # more communication never helps


# --- running ring all-reduce -------------------------------------------------------------------------------

@pytest.mark.parametrize("n,length", [(2, 10), (4, 16), (8, 64), (8, 1000), (5, 7), (3, 2), (16, 4096)])
def test_simulated_ring_matches_numpy_and_byte_formula(n, length):
    rng = np.random.default_rng(n * 1000 + length)
    bufs = rng.integers(-1000, 1000, size=(n, length)).astype(np.int64)
    r = simulate_ring_allreduce(bufs)
    np.testing.assert_array_equal(r.result, bufs.sum(axis=0))
    for rank in range(n):
        np.testing.assert_array_equal(r.outputs[rank], bufs.sum(axis=0))
    m = length * bufs.itemsize
    assert r.steps == 2 * (n - 1)
    if length % n == 0:
        assert np.all(r.bytes_sent == comms.allreduce_bytes_per_rank(m, n))
    else:   # uneven chunks: the total is still exact, each rank within one element per step of the formula
        assert r.bytes_sent.sum() == pytest.approx(n * comms.allreduce_bytes_per_rank(m, n))
        assert np.all(np.abs(r.bytes_sent - comms.allreduce_bytes_per_rank(m, n)) <= 2 * (n - 1) * bufs.itemsize)


def test_simulated_ring_floats_and_single_rank():
    rng = np.random.default_rng(0)
    bufs = rng.standard_normal((8, 800)).astype(np.float32)
    r = simulate_ring_allreduce(bufs)
    np.testing.assert_allclose(r.result, bufs.sum(axis=0), rtol=1e-5, atol=1e-5)
    assert r.bytes_sent.tolist() == [2 * 7 * 100 * 4] * 8          # 2(n-1)/n * M, M = 3200 bytes
    one = simulate_ring_allreduce([np.arange(5.0)])
    assert one.steps == 0 and one.bytes_sent.tolist() == [0] and one.result.tolist() == [0, 1, 2, 3, 4]
    # the input is not modified
    before = bufs.copy()
    simulate_ring_allreduce(bufs)
    np.testing.assert_array_equal(bufs, before)


@pytest.mark.parametrize("bad", [[], [[1, 2], [3]], np.zeros((2, 3, 4)), [["a", "b"], ["c", "d"]],
                                 [[1.0, float("nan")], [1.0, 2.0]], [[True, False], [True, True]], np.zeros((3, 0))])
def test_simulated_ring_bad_input(bad):
    with pytest.raises(ValueError):
        simulate_ring_allreduce(bad)


# --- link catalog -------------------------------------------------------------------------------------------

def test_link_catalog_conventions():
    df = links()
    assert set(["NVLink3", "NVLink4", "NVLink5", "PCIe4-x16", "PCIe5-x16", "IB-HDR", "IB-NDR", "RoCE-400G",
                "Ethernet-100G", "Ethernet-10G", "Home-100Mbps"]) <= set(df.index)
    for name, row in df.iterrows():
        assert row["source"].strip(), name
        assert row["checked"] in ("V", "V2", "U"), name
        # bidirectional is the two directions summed
        assert row["bidirectional_GBps"] == pytest.approx(2 * row["bandwidth_per_direction_GBps"]), name
        if row["checked"] == "U":
            assert "estimate" in (row["notes"] + row["source"]).lower(), name


def test_link_figures_match_sources():
    assert link("NVLink4").bidirectional_bandwidth == 900 * GB          # H100 datasheet, bidirectional
    assert link("NVLink4").bandwidth_per_direction == 450 * GB
    assert link("NVLink3").bidirectional_bandwidth == 600 * GB          # A100 datasheet
    assert link("NVLink5").bidirectional_bandwidth == 1800 * GB         # DGX B200: 14.4 TB/s / 8
    assert link("PCIe5-x16").bidirectional_bandwidth == 128 * GB
    assert link("IB-NDR").bandwidth_per_direction == 400e9 / 8          # 400 Gb/s
    assert link("IB-HDR").bandwidth_per_direction == 200e9 / 8
    assert link("Home-100Mbps").bandwidth_per_direction == 100e6 / 8
    # issue 3: NVLink 4 vs PCIe 5 ~7x, vs IB NDR 18x (the source's "about 20x")
    assert link("NVLink4").bidirectional_bandwidth / link("PCIe5-x16").bidirectional_bandwidth == pytest.approx(
        7.03, rel=0.01)
    assert link("NVLink4").bandwidth_per_direction / link("IB-NDR").bandwidth_per_direction == pytest.approx(9)
    assert link("NVLink4").bidirectional_bandwidth / link("IB-NDR").bandwidth_per_direction == pytest.approx(18)


def test_link_lookup():
    assert link("nvlink 4").name == "NVLink4"
    assert link("PCIe Gen5 x16").name == "PCIe5-x16"
    assert link(link("IB-NDR")) is link("IB-NDR")
    with pytest.raises(KeyError, match="NVLink"):
        link("NVLink9")
    with pytest.raises(ValueError):
        link(4)
    lk = link("IB-NDR")
    with pytest.raises(Exception):
        lk.latency = 0.0     # frozen


# --- cluster all-reduce, DP step, scaling ----------------------------------------------------------------------

def test_cluster_allreduce_inside_one_node_uses_intra_link_only():
    # 8 GPUs: ring over NVLink 4 at 450 GB/s per direction, alpha = the link's latency
    lk = link("NVLink4")
    assert comms.cluster_allreduce_time(14e9, 8, algorithm="ring") == pytest.approx(
        ring_allreduce_time(14e9, 8, lk.bandwidth_per_direction, lk.latency))
    assert comms.cluster_allreduce_time(14e9, 8, algorithm="hierarchical") == pytest.approx(
        comms.cluster_allreduce_time(14e9, 8, algorithm="ring"))
    # effective bandwidth 2/3 of nominal -> 300 GB/s per direction: the seed's 82 ms
    assert comms.cluster_allreduce_time(14e9, 8, intra="NVLink4", efficiency=2 / 3) == pytest.approx(0.0817, rel=2e-3)


def test_cluster_allreduce_across_nodes():
    nv, ib = link("NVLink4"), link("IB-NDR")
    m, n = 14e9, 64
    # multi-rail ring: B = min(450, 8 x 50) = 400 GB/s, alpha of the network
    assert comms.cluster_allreduce_time(m, n, algorithm="ring") == pytest.approx(
        ring_allreduce_time(m, n, 400e9, ib.latency))
    assert comms.cluster_allreduce_time(m, n, algorithm="hierarchical") == pytest.approx(
        hierarchical_allreduce_time(m, 8, 8, nv.bandwidth_per_direction, ib.bandwidth_per_direction,
                                    nv.latency, ib.latency))
    assert comms.cluster_allreduce_time(m, n, algorithm="tree") == pytest.approx(
        tree_allreduce_time(m, 8, nv.bandwidth_per_direction, nv.latency)
        + tree_allreduce_time(m, 8, ib.bandwidth_per_direction, ib.latency))
    # small messages on many GPUs: latency decides, ring loses to both others
    small = {a: comms.cluster_allreduce_time(1e4, 1024, algorithm=a) for a in comms.ALGORITHMS}
    assert small["ring"] > small["hierarchical"] and small["ring"] > small["tree"]
    with pytest.raises(ValueError, match="multiple"):
        comms.cluster_allreduce_time(m, 12)
    with pytest.raises(ValueError):
        comms.cluster_allreduce_time(m, 16, algorithm="butterfly")
    with pytest.raises(KeyError):
        comms.cluster_allreduce_time(m, 16, inter="IB-ZZZ")


def test_dp_step_times_and_curve():
    tc, tm = comms.dp_step_times(7e9, 1024, 4e6, 989.4e12, mfu=0.4)
    assert tc == pytest.approx(6 * 7e9 * 4e6 / (1024 * 989.4e12 * 0.4))
    assert tm == pytest.approx(comms.cluster_allreduce_time(14e9, 1024, algorithm="hierarchical"))
    df = comms.dp_scaling_curve(7e9, [8, 64, 512, 4096], 4e6, 989.4e12)
    eff = df["efficiency"].tolist()
    assert eff == sorted(eff, reverse=True)                 # falls as GPUs are added (fixed global batch)
    assert eff[0] > 0.9 and eff[-1] < 0.5                   # seed 004 §4.2: "from 0.9 down to 0.5"
    assert (df["speedup"].diff().dropna() > 0).all()        # but more GPUs still never slower in this range
    with pytest.raises(ValueError):
        comms.dp_scaling_curve(7e9, [], 4e6, 989.4e12)


def test_home_broadband_allreduce():
    # 7B FP16 gradients (14 GB) among 8 homes on 100 Mb/s: 2*7/8*14e9/12.5e6 s = 32.7 minutes per step
    home = link("Home-100Mbps")
    t = ring_allreduce_time(14e9, 8, home.bandwidth_per_direction, home.latency)
    assert t == pytest.approx(1960 + 14 * 0.02, rel=1e-6)


def test_shared_nic_slows_the_network_stages():
    # one 100 GbE NIC per 8-GPU node: each GPU gets 1/8 of it in the hierarchical all-reduce
    nv, eth = link("NVLink4"), link("Ethernet-100G")
    t = comms.cluster_allreduce_time(14e9, 32, intra="NVLink4", inter="Ethernet-100G", algorithm="hierarchical",
                                     nics_per_node=1)
    assert t == pytest.approx(hierarchical_allreduce_time(14e9, 8, 4, nv.bandwidth_per_direction,
                                                          eth.bandwidth_per_direction / 8, nv.latency, eth.latency))
    ring1 = comms.cluster_allreduce_time(14e9, 32, inter="Ethernet-100G", nics_per_node=1)
    ring8 = comms.cluster_allreduce_time(14e9, 32, inter="Ethernet-100G")
    assert ring1 == pytest.approx(ring_allreduce_time(14e9, 32, eth.bandwidth_per_direction, eth.latency))
    assert ring8 < ring1
    with pytest.raises(ValueError):
        comms.cluster_allreduce_time(14e9, 32, nics_per_node=0)


def test_cheap_ethernet_anecdote():
    # seed 004 §4.1: plain Ethernet gave 40 % of the expected throughput until RDMA. One reading (chapter 3):
    # 4 nodes x 8 H100, 7B model, 16K tokens per GPU per step, 40 % MFU; RDMA = one NDR port per GPU,
    # cheap = one 100 GbE NIC per node. At line rate the model gives ~53 %; TCP at 60 % of line rate gives ~40 %.
    setup = dict(params=7e9, n_gpus=32, global_batch_tokens=32 * 16384, peak_flops=989.4e12, mfu=0.4)

    def eff(**net):
        return dp_scaling_efficiency(*comms.dp_step_times(**setup, **net))

    rdma = eff(inter="IB-NDR")
    assert rdma == pytest.approx(0.942, abs=0.002)
    assert eff(inter="Ethernet-100G", nics_per_node=1) / rdma == pytest.approx(0.531, abs=0.002)
    assert eff(inter="Ethernet-100G", nics_per_node=1, efficiency=0.6) / rdma == pytest.approx(0.40, abs=0.005)


def test_seed_002_ring_traffic_formula():
    # seed 002 writes the ring's traffic as "2N x gradient / N"; it is 2(N-1)/N x M: M for 2 ranks, 1.75 M for 8
    assert comms.allreduce_bytes_per_rank(1.0, 2) == 1.0
    assert comms.allreduce_bytes_per_rank(1.0, 8) == 1.75
