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


def test_v3s_node_limit_is_its_models_routing():
    # one home: the report's M = 4 (Sec. 2.1.2) is the catalog model's node-limited routing
    from chipchain import models
    assert deepseek.V3.node_limit == models.get("DeepSeek-V3").route_nodes == 4


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([(64, 8), (128, 8), (256, 8), (128, 4), (60, 4), (256, 2), (32, 1)]),
       st.sampled_from([1, 2, 4, 8]))
def test_one_copy_per_node_never_sends_more_than_one_per_expert(shape, nodes):
    experts, k = shape
    if experts % nodes:
        return
    pe, pn = (er.remote_copies(experts, k, nodes, per=p) for p in ("expert", "node"))
    assert 0 <= pn <= pe + 1e-12 and pn <= nodes - 1 + 1e-12     # never more copies than other nodes, or than experts
    if k == 1 or nodes == 1:                                        # one expert, or one node: nothing to merge
        assert pn == pytest.approx(pe)
    assert er.remote_copies(experts, k, nodes, node_limit=1) <= (nodes - 1) / nodes + 1e-12


def test_one_copy_per_node_matches_uniform_routing_simulated():
    # the closed form against 40,000 tokens routed uniformly to 8 of 128 experts on 2 or 4 nodes (the force-balanced
    # routing of the benchmarks): the count of other nodes hit agrees within 1 % (its standard error is ~0.1 %);
    # numpy's PCG64 stream is the same on every platform, so the draw is too
    import numpy as np
    rng = np.random.default_rng(7)
    for nodes in (2, 4):
        picks = np.argsort(rng.random((40_000, 128)), axis=1)[:, :8] // (128 // nodes)
        hit = np.array([len(set(row)) for row in picks.tolist()])
        own = (picks == 0).any(axis=1)                      # the token's own node taken to be node 0
        simulated = (hit - own).mean()
        assert er.remote_copies(128, 8, nodes) == pytest.approx(simulated, rel=0.01)


def test_v3_over_ep64_sends_half_its_copies_across_infiniband():
    # EP 64 over 8 nodes, 8 of 256 experts, at most 4 nodes: 4 × 7/8 = 3.5 copies leave the node, half of the 7 that
    # an all-to-all sending one per expert would (7 of 8 experts sit on other nodes), as Sec. 3.2.2 designs it
    assert er.remote_copies(256, 8, 8, per="expert") == 7.0
    assert er.remote_copies(256, 8, 8, node_limit=deepseek.V3.node_limit) == 3.5


def test_remote_copies_names_bad_input():
    for kwargs, name in ((dict(experts=0, top_k=1, nodes=1), "experts"), (dict(experts=8, top_k=9, nodes=1), "top_k"),
                         (dict(experts=8, top_k=2, nodes=3), "nodes"), (dict(experts=8, top_k=2, nodes=2, per="x"), "per")):
        with pytest.raises(ValueError, match=name):
            er.remote_copies(**kwargs)
