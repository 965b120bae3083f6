"""chipchain.comms: the α–β collectives against published conventions and the sources' numbers, the ring all-reduce
that runs, collectives on a cluster, data-parallel efficiency; properties and bad input."""
import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import commbound, comms, hardware, links, memory, models, parallel, steptime, systems, traffic
from chipchain.comms import (allgather_time, alltoall_time, dp_scaling_efficiency, hierarchical_allreduce_time,
                             p2p_time, reduce_scatter_time, ring_allreduce_time, simulate_ring_allreduce,
                             tree_allreduce_time)

GB = 1e9
H100_PEAK = hardware.get("H100").peak_flops("bf16")


# --- published conventions --------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 4, 8, 16, 1024])
def test_nccl_bus_bandwidth_factors(n):
    # NCCL tests, PERFORMANCE.md: busBw = algBw · 2(n−1)/n for all-reduce and algBw · (n−1)/n for all-gather and
    # reduce-scatter, with algBw = M / T. With no latency the bandwidth B of the α–β model is NCCL's bus bandwidth.
    m, b = 3e9, 120e9
    assert m / ring_allreduce_time(m, n, b) * 2 * (n - 1) / n == pytest.approx(b)
    assert m / allgather_time(m, n, b) * (n - 1) / n == pytest.approx(b)
    assert m / reduce_scatter_time(m, n, b) * (n - 1) / n == pytest.approx(b)


def test_seed_82_ms_example():
    # seed 000 §4: 7B FP16 gradients (14 GB) on 8 GPUs at an effective ~300 GB/s ≈ 82 ms: 300 GB/s is the
    # per-direction bus bandwidth; read as bidirectional (150 per direction) it would be twice that
    assert ring_allreduce_time(14e9, 8, 300e9) == pytest.approx(0.082, abs=0.0005)
    assert ring_allreduce_time(14e9, 8, 150e9) == pytest.approx(0.163, abs=0.001)
    # 300 GB/s is 2/3 of NVLink 4's nominal 450 GB/s per direction: one DGX H100 at 2/3 efficiency
    assert comms.cluster_allreduce_time(14e9, "DGX-H100", 8, efficiency=2 / 3) == pytest.approx(0.0817, rel=2e-3)


def test_seed_002_ring_traffic():
    # seed 002 writes the ring's traffic as "2N x gradient / N"; it is 2(N-1)/N x M (Patarasuk & Yuan 2009): M for
    # 2 ranks, 1.75 M for 8, approaching 2M
    assert comms.allreduce_bytes_per_rank(1.0, 2) == 1.0
    assert comms.allreduce_bytes_per_rank(1.0, 8) == 1.75
    assert comms.allreduce_bytes_per_rank(1.0, 10**6) == pytest.approx(2.0, rel=1e-5)


def test_home_broadband_allreduce():
    # 7B FP16 gradients (14 GB) among 8 homes on 100 Mb/s: about 33 minutes per step
    home = links.get("Home-100Mbps")
    t = ring_allreduce_time(14e9, 8, home.bandwidth_per_direction, home.latency)
    assert t / 60 == pytest.approx(32.7, abs=0.05)


def test_p2p_one_gigabyte_over_ndr():
    # 1 GB over one 400 Gb/s port: 20 ms plus α
    ndr = links.get("NDR")
    assert p2p_time(1e9, ndr.bandwidth_per_direction, ndr.latency) == pytest.approx(0.020005)


# --- identities -------------------------------------------------------------------------------------------------

def test_collective_identities():
    m, n, b, a = 3e9, 6, 40e9, 3e-6
    # ring all-reduce = reduce-scatter + all-gather (Thakur et al. 2005; Patarasuk & Yuan 2009)
    assert ring_allreduce_time(m, n, b, a) == pytest.approx(reduce_scatter_time(m, n, b, a) + allgather_time(m, n, b, a))
    # pairwise all-to-all moves the same (n−1)/n of the buffer in n−1 rounds as the ring all-gather
    assert alltoall_time(m, n, b, a) == allgather_time(m, n, b, a)
    # one rank: nothing to send
    for f in (ring_allreduce_time, allgather_time, reduce_scatter_time, tree_allreduce_time, alltoall_time):
        assert f(m, 1, b, a) == 0.0
    # a binary tree of 9 ranks is as deep as one of 16 (⌈log₂ n⌉ levels)
    assert tree_allreduce_time(m, 9, b, a) == tree_allreduce_time(m, 16, b, a) > tree_allreduce_time(m, 8, b, a)


def test_hierarchical_degenerates_to_the_rings():
    m, g, nodes, bi, bo, ai, ao = 14e9, 8, 16, 450e9, 50e9, 3e-6, 5e-6
    assert hierarchical_allreduce_time(m, g, 1, bi, bo, ai, ao) == pytest.approx(ring_allreduce_time(m, g, bi, ai))
    assert hierarchical_allreduce_time(m, 1, nodes, bi, bo, ai, ao) == pytest.approx(
        ring_allreduce_time(m, nodes, bo, ao))
    # beats a flat ring whose slowest link is the network
    assert hierarchical_allreduce_time(m, g, nodes, bi, bo, ai, ao) < ring_allreduce_time(m, g * nodes, bo, ao)


def test_collectives_are_elementwise():
    sizes = np.logspace(3, 10, 8)
    ranks = np.array([1, 2, 8, 64, 1024, 3, 5, 7])
    for f in (ring_allreduce_time, allgather_time, tree_allreduce_time, alltoall_time):
        arr = f(sizes, ranks, 50e9, 5e-6)
        assert isinstance(arr, np.ndarray)
        assert arr.tolist() == pytest.approx([f(float(m), int(n), 50e9, 5e-6) for m, n in zip(sizes, ranks)])
    assert isinstance(ring_allreduce_time(1e9, 8, 1e9), float)
    h = hierarchical_allreduce_time(sizes, 8, 16, 450e9, 50e9)
    assert h.tolist() == pytest.approx([hierarchical_allreduce_time(float(m), 8, 16, 450e9, 50e9) for m in sizes])


@settings(max_examples=60, deadline=None)
@given(m=st.floats(1, 1e11), n=st.integers(1, 4096), b=st.floats(1e6, 1e13), a=st.floats(0, 1e-3))
def test_properties(m, n, b, a):
    r = ring_allreduce_time(m, n, b, a)
    assert r >= 0 and math.isfinite(r)
    # never faster than the bandwidth lower bound 2(n−1)/n · M/B, never slower than 2M/B + 2(n−1)α
    assert r >= 2 * (n - 1) / n * m / b * (1 - 1e-12)
    assert r <= 2 * m / b + 2 * (n - 1) * a + 1e-12
    # more bandwidth never slower; more ranks never cheaper
    assert ring_allreduce_time(m, n, 2 * b, a) <= r
    assert ring_allreduce_time(m, n + 1, b, a) >= r
    assert allgather_time(m, n, b, a) == pytest.approx(r / 2)


def test_tree_wins_small_ring_wins_large():
    # latency-bound small messages favour the tree, bandwidth-bound large ones the ring (Thakur et al. 2005)
    assert tree_allreduce_time(1e4, 512, 50e9, 5e-6) < ring_allreduce_time(1e4, 512, 50e9, 5e-6)
    assert tree_allreduce_time(1e9, 512, 50e9, 5e-6) > ring_allreduce_time(1e9, 512, 50e9, 5e-6)


# --- bad input --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: ring_allreduce_time(-1, 8, 1e9), "nbytes"),
    (lambda: ring_allreduce_time(1e9, 0, 1e9), "n_ranks must be at least 1"),
    (lambda: ring_allreduce_time(1e9, 8, 0), "bandwidth"),
    (lambda: ring_allreduce_time(1e9, 8, -5), "bandwidth"),
    (lambda: ring_allreduce_time(1e9, 8, 1e9, -1e-6), "latency"),
    (lambda: ring_allreduce_time(float("nan"), 8, 1e9), "nbytes"),
    (lambda: ring_allreduce_time(1e9, 2.5, 1e9), "n_ranks"),
    (lambda: ring_allreduce_time(1e9, True, 1e9), "n_ranks"),
    (lambda: ring_allreduce_time([1e9, -1.0], 8, 1e9), "nbytes"),
    (lambda: ring_allreduce_time([1e9, float("inf")], 8, 1e9), "nbytes"),
    (lambda: ring_allreduce_time(1e9, [8, 0], 1e9), "n_ranks"),
    (lambda: ring_allreduce_time(1e9, [8, 2.5], 1e9), "n_ranks"),
    (lambda: ring_allreduce_time(["a"], 8, 1e9), "nbytes"),
    (lambda: ring_allreduce_time([], 8, 1e9), "nbytes"),
    (lambda: allgather_time(1e9, 8, float("inf")), "bandwidth"),
    (lambda: tree_allreduce_time("1e9", 8, 1e9), "nbytes"),
    (lambda: alltoall_time(1e9, -2, 1e9), "n_ranks"),
    (lambda: p2p_time(1e9, 0), "bandwidth"),
    (lambda: hierarchical_allreduce_time(1e9, 0, 4, 1e9, 1e9), "gpus_per_node"),
    (lambda: hierarchical_allreduce_time(1e9, 8, 0, 1e9, 1e9), "n_nodes"),
    (lambda: hierarchical_allreduce_time(1e9, 8, 4, 1e9, -1e9), "inter_bandwidth"),
    (lambda: dp_scaling_efficiency(0, 1), "compute_time"),
    (lambda: dp_scaling_efficiency(1, 1, dp_overlap=1.5), "dp_overlap"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- data-parallel efficiency -------------------------------------------------------------------------------

def test_dp_scaling_efficiency_cases():
    assert dp_scaling_efficiency(1.0, 0.0) == 1.0
    assert dp_scaling_efficiency(1.0, 1.0) == 0.5                   # communication as long as compute: half
    assert dp_scaling_efficiency(1.0, 3.0, dp_overlap=1.0) == pytest.approx(1 / 3)   # can hide only 1 s of 3
    assert dp_scaling_efficiency(2.0, 1.0, dp_overlap=1.0) == 1.0      # fully hidden


@settings(max_examples=60, deadline=None)
@given(tc=st.floats(1e-3, 10), tm=st.floats(0, 10), ov=st.floats(0, 1))
def test_dp_efficiency_properties(tc, tm, ov):
    e = dp_scaling_efficiency(tc, tm, ov)
    assert 0 < e <= 1
    assert dp_scaling_efficiency(tc, tm, 0.0) <= e + 1e-12          # overlap never hurts
    assert dp_scaling_efficiency(tc, tm * 1.5, ov) <= e + 1e-12     # more communication never helps


# --- the ring all-reduce that runs ---------------------------------------------------------------------------

@pytest.mark.parametrize("n,length", [(2, 10), (4, 16), (8, 64), (8, 1000), (5, 7), (3, 2), (16, 4096)])
def test_simulated_ring_matches_numpy_and_the_bandwidth_optimal_bytes(n, length):
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
    before = bufs.copy()
    simulate_ring_allreduce(bufs)
    np.testing.assert_array_equal(bufs, before)                     # the input is not modified


@pytest.mark.parametrize("bad", [[], [[1, 2], [3]], np.zeros((2, 3, 4)), [["a", "b"], ["c", "d"]],
                                 [[1.0, float("nan")], [1.0, 2.0]], [[True, False], [True, True]], np.zeros((3, 0))])
def test_simulated_ring_bad_input(bad):
    with pytest.raises(ValueError):
        simulate_ring_allreduce(bad)


# --- collectives on a cluster --------------------------------------------------------------------------------

def test_inside_one_node_only_the_intra_link_counts():
    nv4 = links.get("NVLink4")
    one = comms.cluster_allreduce_time(14e9, "H100", 8)
    assert one == pytest.approx(ring_allreduce_time(14e9, 8, nv4.bandwidth_per_direction, nv4.latency))
    assert comms.cluster_allreduce_time(14e9, "H100", 8, algorithm="hierarchical") == one
    # the same 8 GPUs one per node: the ring runs over one NDR port each, 9x slower per direction (chapter 3's bet)
    spread = dataclasses.replace(systems.node("H100"), gpus_per_node=1, nics_per_node=1)
    assert comms.cluster_allreduce_time(14e9, spread, 8) / one == pytest.approx(9, rel=0.01)


def test_a_cluster_object_and_a_name_agree():
    c = systems.cluster("H100", 1024)
    for algo in comms.ALGORITHMS:
        assert comms.cluster_allreduce_time(14e9, c, algorithm=algo) == comms.cluster_allreduce_time(
            14e9, "DGX-H100", 1024, algorithm=algo)


def test_across_nodes_by_algorithm():
    nv, ib = links.get("NVLink4"), links.get("IB-NDR")
    m = 14e9
    # multi-rail ring: B = min(450, 8 x 50) = 400 GB/s per direction, the network's alpha
    assert comms.cluster_allreduce_time(m, "H100", 64, "ring") == pytest.approx(ring_allreduce_time(m, 64, 400e9,
                                                                                                    ib.latency))
    assert comms.cluster_allreduce_time(m, "H100", 64, "hierarchical") == pytest.approx(
        hierarchical_allreduce_time(m, 8, 8, nv.bandwidth_per_direction, ib.bandwidth_per_direction, nv.latency,
                                    ib.latency))
    # small messages on many GPUs: latency decides, the flat ring loses to both others
    small = {a: comms.cluster_allreduce_time(1e4, "H100", 1024, a) for a in comms.ALGORITHMS}
    assert small["ring"] > small["hierarchical"] and small["ring"] > small["tree"]
    # element-wise over message sizes
    sizes = np.array([1e4, 1e9])
    assert comms.cluster_allreduce_time(sizes, "H100", 64, "tree").tolist() == pytest.approx(
        [comms.cluster_allreduce_time(float(s), "H100", 64, "tree") for s in sizes])


def test_a_shared_nic_slows_the_network_stages():
    # one 100 GbE NIC per 8-GPU node: each GPU gets 1/8 of it in the hierarchical all-reduce
    nv, eth = links.get("NVLink4"), links.get("Ethernet-100G")
    cheap = dataclasses.replace(systems.node("H100"), inter=eth, nics_per_node=1)
    t = comms.cluster_allreduce_time(14e9, cheap, 32, "hierarchical")
    assert t == pytest.approx(hierarchical_allreduce_time(14e9, 8, 4, nv.bandwidth_per_direction,
                                                          eth.bandwidth_per_direction / 8, nv.latency, eth.latency))
    one_nic = comms.cluster_allreduce_time(14e9, cheap, 32)
    assert one_nic == pytest.approx(ring_allreduce_time(14e9, 32, eth.bandwidth_per_direction, eth.latency))
    assert comms.cluster_allreduce_time(14e9, dataclasses.replace(cheap, nics_per_node=8), 32) < one_nic


def test_b200_scales_out_over_ndr():
    # DGX B200 datasheet: 8 ConnectX-7 400 Gb/s (NDR) ports, as in DGX H100: a multi-rail ring across nodes is
    # bound by the same 8 x 50 GB/s of NICs on both, however fast NVLink 5 is inside the node
    b200 = comms.cluster_allreduce_time(14e9, "B200", 1024, "ring")
    assert b200 == comms.cluster_allreduce_time(14e9, "H100", 1024, "ring")
    assert comms.cluster_allreduce_time(14e9, "B200", 8) < comms.cluster_allreduce_time(14e9, "H100", 8) / 1.9


@pytest.mark.parametrize("call, exc, match", [
    (lambda: comms.cluster_allreduce_time(14e9, "H100", 12), ValueError, "multiple of gpus_per_node=8"),
    (lambda: comms.cluster_allreduce_time(14e9, "H100", 16, "butterfly"), ValueError, "algorithm"),
    (lambda: comms.cluster_allreduce_time(14e9, "H100", 16, efficiency=0), ValueError, "efficiency"),
    (lambda: comms.cluster_allreduce_time(14e9, "H100", 0), ValueError, "n_gpus"),
    (lambda: comms.cluster_allreduce_time(14e9, systems.cluster("H100", 16), 32), ValueError, "contradicts"),
    (lambda: comms.cluster_allreduce_time(14e9, "DGX-Z100", 16), KeyError, "DGX-H100"),
    (lambda: comms.cluster_allreduce_time(-1, "H100", 16), ValueError, "nbytes"),
    (lambda: steptime.data_parallel_step("7B", 4e6, "PCIe-server", 8, seq=2048), ValueError, "accelerator"),
    (lambda: steptime.data_parallel_step("7B", 0, "H100", 8), ValueError, "batch_tokens"),
    (lambda: steptime.data_parallel_step("7B", 4e6, "H100", 8, efficiency=40), ValueError, "efficiency"),
    (lambda: steptime.data_parallel_step("7B", 4e6, "H100", 8, link_efficiency=0), ValueError, "link_efficiency"),
    (lambda: steptime.data_parallel_step("8x7B", 4e6, "H100", 8), KeyError, "7B"),
])
def test_cluster_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# --- a data-parallel step: chapter 3's two terms, from the one step model --------------------------------------

DP = dict(seq=2048)          # chapter 3's 2,048-token sequences


def test_dp_step_is_the_step_models_pure_dp_plan():
    # one model (issue 24/29): data parallelism alone is the plan DP = n of chipchain.steptime, its computation the
    # step model's and its all-reduce the DP row chipchain.traffic prices for that plan
    m = dataclasses.replace(models.get("7B"), seq=2048)
    for n, k in ((8, 4), (64, 2), (1024, 1)):
        s = steptime.data_parallel_step("7B", n * k * 2048, "H100", n, **DP)
        plan = parallel.Plan(dp=n, microbatches=k)
        st = steptime.step_time(plan, m, systems.cluster("H100", n), efficiency=0.4)
        assert s.compute_seconds == pytest.approx(st.compute + st.recompute, rel=1e-12)
        dp_row = [r for r in traffic.communication(plan, m, systems.cluster("H100", n)) if r.kind.startswith("DP")]
        assert s.comm_seconds == pytest.approx(dp_row[0].seconds, rel=1e-12)
    # the computation is the model's executed FLOPs at η × peak: at least 6N per token (Kaplan et al. 2020)
    s = steptime.data_parallel_step("7B", 4e6, "H100", 1024, **DP)
    assert s.compute_seconds >= 6 * m.params * 4e6 / (1024 * H100_PEAK * 0.4) * 0.99
    # the all-reduce priced is the fastest algorithm the model knows, as NCCL's tuner picks by size and count
    assert s.comm_seconds == min(comms.cluster_allreduce_time(2 * m.params, "H100", 1024, a) for a in comms.ALGORITHMS)
    assert s.algorithm == "double-tree"
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.comm_seconds = 0.0


def test_efficiency_falls_with_a_capped_batch_down_to_one_sequence_per_gpu():
    # seed 004 §4.2: data-parallel efficiency falls as a fixed-batch job grows. 4M tokens of 2,048-token sequences
    # feed at most 1,953 GPUs; past that the step refuses (issue 13: 4 tokens per GPU computed silently).
    eff = [steptime.data_parallel_step("7B", 4e6, "H100", n, **DP).efficiency() for n in (8, 64, 512, 1024)]
    assert eff == sorted(eff, reverse=True) and eff[0] > 0.99
    with pytest.raises(ValueError, match="less than one 2,048-token sequence"):
        steptime.data_parallel_step("7B", 4e6, "H100", 2048, **DP)
    with pytest.raises(ValueError, match="batch_tokens"):
        steptime.data_parallel_step("7B", 4 * 8, "H100", 8, **DP)


def test_efficiency_floor_barely_depends_on_model_size():
    # at one sequence per GPU both the compute (≈ 6·P·seq) and the gradient (2·P bytes) scale with P; what differs
    # is attention's share of the compute and the all-reduce's fixed latency terms
    floors = [steptime.data_parallel_step(m, 1024 * 2048, "H100", 1024, **DP).efficiency()
              for m in ("7B", "13B", "70B")]
    assert max(floors) - min(floors) < 0.03
    # the seed's "0.5 or lower" needs a slower fabric: one 100 GbE NIC per node
    cheap = dataclasses.replace(systems.node("H100"), inter=links.get("Ethernet-100G"), nics_per_node=1)
    assert steptime.data_parallel_step("7B", 1024 * 2048, cheap, 1024, **DP).efficiency() < 0.5


def test_cheap_ethernet_anecdote():
    # seed 004 §4.1: plain Ethernet gave 40 % of the expected throughput until RDMA. One reading (chapter 3):
    # 4 nodes x 8 H100, a 7B model, 16K tokens per GPU per step, 40 % matmul efficiency; RDMA = one NDR port per
    # GPU, cheap = one 100 GbE NIC per node. TCP at 60 % of line rate lands near the anecdote's 40 %.
    dgx = systems.node("H100")
    cheap = dataclasses.replace(dgx, inter=links.get("Ethernet-100G"), nics_per_node=1)

    def eff(node, **kw):
        return steptime.data_parallel_step("7B", 32 * 16384, node, 32, **DP, **kw).efficiency()

    rdma = eff(dgx)
    assert rdma > 0.95
    assert 0.45 < eff(cheap) / rdma < 0.6
    assert eff(cheap, link_efficiency=0.6) / rdma == pytest.approx(0.40, abs=0.03)     # the anecdote's 40 %


# --- NCCL's double binary tree (Sanders, Speck & Träff 2009; Jeaugey 2019) --------------------------------------

@given(st.integers(2, 10**6), st.floats(1.0, 1e12), st.floats(1e6, 1e13), st.floats(0.0, 1e-4))
@settings(max_examples=200, deadline=None)
def test_double_tree_is_near_ring_bandwidth_with_log_latency(n, m, b, a):
    dt = comms.double_tree_allreduce_time(m, n, b, a)
    # bandwidth term within n/(n−1) of the ring's (at most 2x, at n = 2), latency 2⌈log₂ n⌉ steps
    assert comms.double_tree_allreduce_time(m, n, b) == pytest.approx(
        ring_allreduce_time(m, n, b) * n / (n - 1), rel=1e-9)
    assert comms.double_tree_allreduce_time(0.0, n, b, a) == pytest.approx(2 * math.ceil(math.log2(n)) * a)
    # never slower than the unpipelined textbook tree, which moves the whole buffer at every level
    assert dt <= tree_allreduce_time(m, n, b, a) * (1 + 1e-12)
    assert math.isfinite(dt) and dt >= 0


def test_where_each_algorithm_wins():
    # one node: ring for large messages, double tree for small; 1,024 GPUs: the double tree's log latency wins
    assert comms.fastest_allreduce(14e9, "H100", 8)[0] == "ring"
    assert comms.fastest_allreduce(16e3, "H100", 8)[0] == "double-tree"
    assert comms.fastest_allreduce(14e9, "H100", 1024)[0] == "double-tree"
    algo, t = comms.fastest_allreduce(14e6, "H100", 64)
    assert t == min(comms.cluster_allreduce_time(14e6, "H100", 64, a) for a in comms.ALGORITHMS)


# --- every public function over very large clusters: answers, fast, never NaN --------------------------------

@given(st.integers(1, 10**6 // 8), st.floats(0.0, 1e13), st.sampled_from(["A100", "H100", "DGX-B200", "H800"]),
       st.sampled_from(comms.ALGORITHMS + ("fastest",)))
@settings(max_examples=60, deadline=None)
def test_cluster_functions_up_to_a_million_gpus(nodes, m, system, algo):
    import time
    n = nodes * 8
    t0 = time.process_time()
    if algo == "fastest":
        _, t = comms.fastest_allreduce(m, system, n)
    else:
        t = comms.cluster_allreduce_time(m, system, n, algo)
    s = steptime.data_parallel_step("7B", n * 2048, system, n, seq=2048, algorithm=algo)
    for f in (ring_allreduce_time, allgather_time, reduce_scatter_time, tree_allreduce_time,
              comms.double_tree_allreduce_time, alltoall_time):
        assert math.isfinite(f(m, n, 50e9, 5e-6))
    assert math.isfinite(hierarchical_allreduce_time(m, 8, nodes, 450e9, 50e9, 3e-6, 5e-6))
    assert math.isfinite(comms.allreduce_bytes_per_rank(m, n))
    assert time.process_time() - t0 < 1.0
    assert math.isfinite(t) and t >= 0 and 0 < s.efficiency() <= 1



@pytest.mark.parametrize("recipe", memory.recipe_names())
def test_dp_step_comm_scales_with_the_recipes_gradient_bytes(recipe):
    # the all-reduce carries P · g bytes (g from memory.RECIPES): a larger gradient never makes it faster, and
    # compute does not depend on it
    base = steptime.data_parallel_step("7B", 4e6, "H100", 1024, seq=2048, algorithm="ring")
    s = steptime.data_parallel_step("7B", 4e6, "H100", 1024, seq=2048, recipe=recipe, algorithm="ring")
    g = memory.recipe(recipe).gradients
    assert s.compute_seconds == base.compute_seconds
    assert (s.comm_seconds > base.comm_seconds) == (g > 2) and (s.comm_seconds == base.comm_seconds) == (g == 2)


def test_dp_critical_tokens_for_every_recipe():
    # Austin et al. 2025, per-device batch > C/W: H100 over one NDR port, 16-bit gradients → 19,780 tokens; the
    # threshold scales with the gradient bytes, so every FP32-gradient recipe (4 B) doubles it
    base = commbound.dp_critical_tokens(989e12, 50e9)
    assert round(base) == 19780
    for r in memory.recipe_names():
        t = commbound.dp_critical_tokens(989e12, 50e9, recipe=r)
        assert t / base == pytest.approx(memory.recipe(r).gradients / 2, rel=1e-12)     # rounding only


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1e4), st.floats(0, 1), st.floats(0, 1e4))
def test_exposed_communication_is_one_definition(comm, overlap, compute):
    # exposed time lies between (1 − overlap)·T_comm (all the overlap hides) and T_comm (nothing hides), and
    # dp_scaling_efficiency is compute / (compute + exposed) with the same definition
    e = comms.exposed_seconds(comm, overlap, compute)
    assert (1 - overlap) * comm * (1 - 1e-12) <= e <= comm
    if compute > 0:
        assert comms.dp_scaling_efficiency(compute, comm, overlap) == pytest.approx(compute / (compute + e),
                                                                                    rel=1e-12)
