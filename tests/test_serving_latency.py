"""Serving operations (chapter 12): speculative decoding identities, TTFT/TPOT, TP communication, disaggregation,
MoE traffic and the cost per million tokens."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from chipchain import economics, inference, serving, serving_latency as sl


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1), st.integers(0, 64))
def test_expected_tokens_is_the_geometric_sum(alpha, gamma):
    # Leviathan et al. 2023, Eq. 1: (1 - a^(g+1)) / (1 - a) = sum_{i=0..g} a^i
    assert sl.expected_accepted_tokens(alpha, gamma) == pytest.approx(sum(alpha ** i for i in range(gamma + 1)),
                                                                     rel=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.floats(0, 0.99), st.integers(0, 32), st.floats(0, 1))
def test_speculation_bounds(alpha, gamma, c):
    e = sl.expected_accepted_tokens(alpha, gamma)
    assert 1 <= e <= gamma + 1
    assert sl.speculative_speedup(alpha, gamma, c) == pytest.approx(e / (gamma * c + 1))
    assert sl.expected_accepted_tokens(min(alpha + 0.01, 1.0), gamma) >= e


def test_speculative_decoding_published_example():
    # Leviathan et al. 2023 (Fig. 3 / Sec. 3.5 discussion): alpha 0.8, gamma 4 -> ~3.36 tokens per target pass
    assert sl.expected_accepted_tokens(0.8, 4) == pytest.approx(3.3616)
    assert sl.expected_accepted_tokens(1.0, 7) == 8.0


def test_monte_carlo_agrees_with_the_closed_form():
    import numpy as np

    rng = np.random.default_rng(1)
    a, g, n = 0.7, 5, 200_000
    acc = rng.random((n, g)) < a
    accepted = np.where(acc.all(1), g, acc.argmin(1))           # length of the accepted prefix
    assert (accepted + 1).mean() == pytest.approx(sl.expected_accepted_tokens(a, g), rel=0.01)


def test_ttft_is_prefill_and_tpot_is_decode():
    assert sl.ttft("H100", "Llama-3-8B", 2048) == serving.prefill("H100", "Llama-3-8B", 2048).seconds
    assert sl.tpot("H100", "Llama-3-8B", 1024, 8) == serving.decode("H100", "Llama-3-8B", 1024, 8).seconds


def test_latency_throughput_curve_is_monotone():
    pts = sl.latency_throughput("H100", "Llama-3-8B", 1024, (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024))
    assert [p.batch for p in pts] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]      # 1,024 does not fit in 80 GiB
    assert all(b.tpot >= a.tpot and b.tokens_per_second > a.tokens_per_second for a, b in zip(pts, pts[1:]))


def test_tp_decode_all_reduces_are_two_per_layer_of_bdb_bytes():
    # one all-reduce moves B·d·b bytes; with zero latency the time is 2·l ring all-reduces at the link's bandwidth
    assert sl.tp_decode_comm_bytes("GPT-3-175B", 4) == 4 * 12288 * 2
    assert sl.tp_decode_comm_seconds("GPT-3-175B", 1, 1, "NVLink3") == 0.0
    t1, t2 = (sl.tp_decode_comm_seconds("GPT-3-175B", b, 8, "NVLink3") for b in (1, 1024))
    assert t2 > t1


def test_disaggregation_stall_equals_prefill():
    d = sl.disaggregation("H100", "Llama-3-8B", 2048, 1024, 64, "NDR")
    assert d.stalled_tpot - d.tpot == pytest.approx(sl.ttft("H100", "Llama-3-8B", 2048))
    assert d.kv_bytes == inference.kv_cache_bytes("Llama-3-8B", 2048)


def test_moe_traffic_active_at_batch_one_total_at_large_batch():
    t = sl.moe_weight_traffic("DeepSeek-V3", (1, 4096), "fp8")
    assert t[0].read == pytest.approx(37e9, rel=0.01) and t[1].read == pytest.approx(671e9, rel=0.001)
    assert all(x.resident == pytest.approx(671e9) for x in t)


@settings(max_examples=50, deadline=None)
@given(st.floats(0.1, 20), st.integers(1, 10**6), st.floats(1, 1e9))
def test_cost_per_million_tokens_identity(price, n, tps):
    c = economics.cost_per_million_tokens(price, n, tps)
    assert c * tps * 3600 / 1e6 == pytest.approx(n * price)


@pytest.mark.parametrize("call", [
    lambda: sl.expected_accepted_tokens(1.2, 4), lambda: sl.expected_accepted_tokens(0.5, -1),
    lambda: sl.speculative_speedup(0.5, 4, -0.1), lambda: sl.tpot("H100", "Llama-3-8B", 1024, 4096),
    lambda: economics.cost_per_million_tokens(2.0, 0, 100.0), lambda: sl.tp_decode_comm_seconds("GPT-3-175B", 1, 8, "NVLink9"),
])
def test_bad_input_is_refused(call):
    with pytest.raises((ValueError, KeyError)):
        call()
