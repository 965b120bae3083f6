"""chipchain.collectives: nccl-tests' bandwidth conventions against a published NCCL figure, in-network reduction,
the ring/tree crossover, the all-to-all of expert parallelism and bucketed overlap — identities against
chipchain.comms, published values, properties up to 10⁶ GPUs, and bad input."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import collectives as col
from chipchain import comms

SECOND = settings(deadline=1000, max_examples=60)
ranks = st.integers(min_value=2, max_value=1_000_000)
sizes = st.floats(min_value=1.0, max_value=1e12)
bandwidths = st.floats(min_value=1e8, max_value=2e12)
latencies = st.floats(min_value=0.0, max_value=1e-4)


# --- published values -------------------------------------------------------------------------------------------

def test_busbw_matches_nccl_maintainers_h100_figure():
    # S. Jeaugey (NCCL), NVIDIA/nccl-tests issue #212 (2024): on 8 H100s with NVLink SHARP "a peak busBw of
    # ~480GB/s (algbw ~275GB/s)". The all-reduce factor 2(n−1)/n turns one into the other.
    assert col.bus_bandwidth(275e9, 8) == pytest.approx(480e9, rel=0.01)


def test_bus_factors_are_nccl_tests_table():
    # nccl-tests PERFORMANCE.md: all-reduce 2(n−1)/n; reduce-scatter, all-gather, alltoall (n−1)/n; broadcast 1.
    assert col.bus_factor("all_reduce", 8) == 1.75
    assert col.bus_factor("reduce_scatter", 8) == col.bus_factor("all_gather", 8) == 0.875
    assert col.bus_factor("alltoall", 64) == 63 / 64
    assert col.bus_factor("broadcast", 1024) == col.bus_factor("reduce", 2) == 1.0


def test_sharp_is_at_most_two_n_minus_one_over_n_faster_and_nvls_gain_is_below_it():
    # In the bandwidth limit in-network reduction beats the ring by exactly 2(n−1)/n. The NCCL figures above (ring
    # busbw ~370 GB/s, NVLS algbw ~275 GB/s, issue #212) give an algbw gain of 275 / (370 / 1.75) = 1.30 < 1.75.
    m, b = 8e9, 450e9
    assert comms.ring_allreduce_time(m, 8, b) / col.sharp_allreduce_time(m, 8, b) == pytest.approx(1.75)
    measured_gain = 275 / (370 / col.bus_factor("all_reduce", 8))
    assert 1.25 < measured_gain < 1.75


def test_moe_dispatch_of_deepseek_v3_shape():
    # DeepSeek-V3: hidden 7168, 8 routed experts per token, FP8 dispatch. 4,096 tokens on a rank, EP 64:
    # 4096 · 8 · 7168 · 1 byte · 63/64 = 231.2 MB.
    assert col.moe_dispatch_bytes(4096, 7168, 8, 64, "fp8") == pytest.approx(4096 * 8 * 7168 * 63 / 64)
    assert col.moe_dispatch_bytes(4096, 7168, 8, 1) == 0.0          # EP 1: everything stays home


# --- exact identities -------------------------------------------------------------------------------------------

@SECOND
@given(n=ranks, b=bandwidths)
def test_busbw_of_a_bandwidth_bound_ring_is_the_link(n, b):
    m = 1e9
    algbw = col.algorithm_bandwidth(m, comms.ring_allreduce_time(m, n, b))
    assert col.bus_bandwidth(algbw, n) == pytest.approx(b, rel=1e-9)


@SECOND
@given(n=ranks, b=bandwidths, a=st.floats(min_value=1e-7, max_value=1e-4))
def test_crossover_equalises_ring_and_double_tree(n, b, a):
    m = col.ring_tree_crossover(n, b, a)
    ring, tree = comms.ring_allreduce_time(m, n, b, a), comms.double_tree_allreduce_time(m, n, b, a)
    if m > 0:
        assert ring == pytest.approx(tree, rel=1e-9)
        assert comms.double_tree_allreduce_time(m / 2, n, b, a) < comms.ring_allreduce_time(m / 2, n, b, a)
        assert comms.ring_allreduce_time(2 * m, n, b, a) < comms.double_tree_allreduce_time(2 * m, n, b, a)
    else:                                                              # n ≤ 3: the ring never loses
        assert ring <= tree + 1e-15


@pytest.mark.parametrize("n", [2, 8, 64, 1024, 1_000_000])
def test_latency_terms_ring_linear_tree_logarithmic(n):
    # With M = 0 only the latency terms remain: ring 2(n−1)α, double tree 2⌈log₂ n⌉α, SHARP 2α.
    a = 1e-6
    assert comms.ring_allreduce_time(0.0, n, 1e9, a) == pytest.approx(2 * (n - 1) * a)
    assert comms.double_tree_allreduce_time(0.0, n, 1e9, a) == pytest.approx(2 * math.ceil(math.log2(n)) * a)
    assert col.sharp_allreduce_time(0.0, n, 1e9, a) == pytest.approx(2 * a)


@SECOND
@given(m=sizes, g=st.integers(1, 16), b=bandwidths, a=latencies)
def test_alltoall_inside_one_node_is_the_flat_alltoall(m, g, b, a):
    assert col.cluster_alltoall_time(m, g, g, b, b / 9, a, 10 * a) == pytest.approx(comms.alltoall_time(m, g, b, a))


@SECOND
@given(m=sizes, n=st.integers(16, 1_000_000), b=bandwidths)
def test_alltoall_across_nodes_is_bound_by_the_nic(m, n, b):
    # Once n ≫ g almost all of the buffer crosses the NIC: T → (n−g)/n · M / B_inter, not smaller with more GPUs.
    t = col.cluster_alltoall_time(m, n, 8, 9 * b, b)
    assert t == pytest.approx((n - 8) / n * m / b, rel=1e-9)


def test_one_bucket_hides_nothing_and_a_long_backward_hides_all_but_the_last():
    one = col.bucketed_overlap(14e9, 64, 50e9, 0.5, 1, 5e-6)
    assert one.exposed_seconds == pytest.approx(comms.ring_allreduce_time(14e9, 64, 50e9, 5e-6))
    assert one.hidden_fraction == 0.0
    long = col.bucketed_overlap(14e9, 64, 50e9, 100.0, 16, 5e-6)
    assert long.exposed_seconds == pytest.approx(long.bucket_seconds)


def test_sm_contention_charges_the_overlapped_time():
    # DeepSeek-V3 §3.2 gives 20 of the H800's 132 SMs to communication: a slowdown of about 15 % while it runs.
    s = 20 / 132
    o = col.bucketed_overlap(14e9, 64, 50e9, 0.5, 16, 5e-6, compute_slowdown=s)
    assert o.contention_seconds == pytest.approx(s * (o.comm_seconds - o.exposed_seconds))
    assert o.added_seconds > col.bucketed_overlap(14e9, 64, 50e9, 0.5, 16, 5e-6).added_seconds


# --- properties up to 10⁶ GPUs ----------------------------------------------------------------------------------

@SECOND
@given(m=sizes, n=ranks, b=bandwidths, t_b=st.floats(1e-3, 1e3), k=st.integers(1, 4096), a=latencies)
def test_exposed_time_bounds(m, n, b, t_b, k, a):
    o = col.bucketed_overlap(m, n, b, t_b, k, a)
    assert o.exposed_seconds >= o.bucket_seconds - 1e-12                 # the last bucket never hides
    assert o.exposed_seconds >= o.comm_seconds - t_b - 1e-9               # nothing hides beyond the backward pass
    assert 0.0 <= o.hidden_fraction <= 1.0
    assert math.isfinite(o.added_seconds)


@settings(deadline=1000, max_examples=15)
@given(m=sizes, n=ranks, b=bandwidths, t_b=st.floats(1e-3, 1e3), a=latencies)
def test_best_bucket_count_is_no_worse_than_any_tried(m, n, b, t_b, a):
    best = col.best_bucket_count(m, n, b, t_b, a)
    for k in (1, 2, 16, 256, 4096):
        assert best.exposed_seconds <= col.bucketed_overlap(m, n, b, t_b, k, a).exposed_seconds + 1e-12


@SECOND
@given(m=sizes, n=ranks, b=bandwidths, a=latencies)
def test_sharp_never_slower_than_ring(m, n, b, a):
    assert col.sharp_allreduce_time(m, n, b, a) <= comms.ring_allreduce_time(m, n, b, a) + 1e-15


def test_arrays_are_element_wise():
    n = np.array([2, 8, 1024])
    assert col.ring_tree_crossover(n, 50e9, 5e-6).shape == (3,)
    assert col.bus_factor("all_reduce", n).tolist() == [1.0, 1.75, 2 * 1023 / 1024]


# --- bad input ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: col.bus_bandwidth(-1.0, 8),
    lambda: col.bus_bandwidth(1e9, 0),
    lambda: col.bus_factor("allreduce-ish", 8),
    lambda: col.algorithm_bandwidth(1e9, 0.0),
    lambda: col.sharp_allreduce_time(1e9, 8, float("nan")),
    lambda: col.ring_tree_crossover(8, 50e9, -1e-6),
    lambda: col.moe_dispatch_bytes(4096, 7168, 0, 64),
    lambda: col.cluster_alltoall_time(1e9, 64, 8, 0.0, 50e9),
    lambda: col.bucketed_overlap(1e9, 8, 50e9, 1.0, 0),
    lambda: col.bucketed_overlap(1e9, 8, 50e9, 1.0, 4, compute_slowdown=1.5),
    lambda: col.best_bucket_count(1e9, 8, 50e9, -1.0),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
