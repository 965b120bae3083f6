"""Expert-parallel traffic and auxiliary-loss-free balancing (chapter 11), against DeepSeek's published figures."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from chipchain import deepseek, expert_routing as er


def test_v3_token_bytes_match_the_reported_formats():
    # DeepSeek-V3 report Sec. 3.2.2/3.3: FP8 dispatch with one FP32 scale per 1 x 128 tile, BF16 combine; hidden 7,168
    assert er.token_bytes(7168, "fp8") == 7168 + 56 * 4
    assert er.token_bytes(7168, "bf16") == 2 * 7168


def test_node_limit_halves_v3_network_traffic():
    full = er.all_to_all_bytes("DeepSeek-V3")
    limited = er.all_to_all_bytes("DeepSeek-V3", node_limit=deepseek.V3.node_limit)
    assert full.internode_total == full.gpu_total == limited.gpu_total
    assert limited.internode_total == pytest.approx(full.internode_total / 2)


@pytest.mark.parametrize("kernel", er.deepep_kernels("low-latency"), ids=lambda k: f"{k.operation}-EP{k.ep}")
def test_deepep_low_latency_bandwidth_counts_exactly_these_bytes(kernel):
    # DeepEP README (V1 tables, H800 + CX7): bandwidth = tokens x top-k x bytes per copy / latency, within 3 %
    assert er.implied_bandwidth(kernel) == pytest.approx(kernel.bandwidth, rel=0.03)


def test_deepep_normal_kernels_reach_the_links_they_use():
    # ~160 GB/s NVLink and ~50 GB/s per CX7 port on H800 (DeepEP README): measured within 20 % of those, never above
    for k in er.deepep_kernels("normal"):
        cap = 160e9 if k.link == "NVLink" else 60e9
        assert 0.7 * (160e9 if k.link == "NVLink" else 50e9) <= k.bandwidth <= cap


def test_bias_balancing_reduces_imbalance_and_needs_no_loss():
    r = er.simulate_bias_balancing(steps=150, gamma=0.002)
    tail = sum(r.max_violation[-20:]) / 20
    assert tail < r.max_violation[0] / 3
    assert sum(r.unbiased[-20:]) / 20 > 3 * tail          # the unbiased router stays imbalanced
    assert len(r.bias) == r.n_experts and abs(sum(r.bias)) < r.n_experts * r.gamma * len(r.max_violation)


def test_balancing_is_deterministic():
    a = er.simulate_bias_balancing(steps=20)
    b = er.simulate_bias_balancing(steps=20)
    assert a == b


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 8), st.integers(1, 8))
def test_internode_bytes_never_exceed_gpu_bytes(top_k, node_limit):
    a = er.all_to_all_bytes("DeepSeek-V3", node_limit=node_limit, top_k=top_k)
    assert a.internode_total <= a.gpu_total
    assert a.node_limit <= a.top_k


@pytest.mark.parametrize("kwargs", [dict(node_limit=0), dict(top_k=300), dict(dispatch_dtype="fp7")])
def test_bad_input_is_refused(kwargs):
    with pytest.raises(ValueError):
        er.all_to_all_bytes("DeepSeek-V3", **kwargs)


def test_dense_model_has_no_routing():
    with pytest.raises(ValueError, match="no routed experts"):
        er.all_to_all_bytes("Llama-3-8B")
    with pytest.raises(KeyError):
        er.all_to_all_bytes("DeepSeek-V9")


@pytest.mark.parametrize("kwargs", [dict(top_k=64), dict(gamma=0), dict(tokens=0), dict(skew=-1)])
def test_simulation_refuses_bad_input(kwargs):
    with pytest.raises(ValueError):
        er.simulate_bias_balancing(steps=2, **kwargs)
