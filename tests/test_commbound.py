"""chipchain.commbound and chipchain.schedules: when each parallelism's traffic can hide behind compute, the floor
on batch per GPU, and pipeline schedules. Checked by exact identities against chipchain.comms (the traffic computed
another way equals the compute at each threshold), published relations (Qi et al. 2024; Narayanan et al. 2021), and
properties."""
import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import comms, parallel, systems
from chipchain import commbound as C
from chipchain import schedules as S

A100, HDR, NVL3 = 312e12, 25e9, 300e9


@pytest.mark.parametrize("n", [2, 8, 64, 1024])
def test_dp_threshold_is_where_the_allreduce_equals_the_backward_pass(n):
    params = 175e9
    t = C.dp_critical_tokens(A100, HDR, n_ranks=n)
    allreduce = comms.ring_allreduce_time(2 * params, n, HDR)           # 16-bit gradients
    backward = 4 * params * t / A100                                     # 2 of the 6 Ψ·T FLOPs are forward
    assert allreduce == pytest.approx(backward, rel=1e-12)


@pytest.mark.parametrize("n", [2, 16, 512])
def test_fsdp_threshold_is_where_gathers_and_reduce_scatter_equal_the_step(n):
    params = 70e9
    t = C.fsdp_critical_tokens(A100, HDR, n_ranks=n)
    traffic = comms.reduce_scatter_time(2 * params, n, HDR) + 2 * comms.allgather_time(2 * params, n, HDR)
    assert traffic == pytest.approx(6 * params * t / A100, rel=1e-12)
    assert t == pytest.approx(C.dp_critical_tokens(A100, HDR, n_ranks=n))   # Rajbhandari et al.: 1.5× bytes, 1.5× overlap


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_tp_threshold_is_where_two_allreduces_equal_a_layers_forward(tp):
    h = C.tp_critical_hidden(A100, NVL3, tp)
    tokens = 2048
    comm = 2 * comms.ring_allreduce_time(2 * tokens * h, tp, NVL3)       # two all-reduces of b·s·h 16-bit values
    compute = 2 * 12 * h * h * tokens / tp / A100                          # 12h² parameters per layer
    assert comm == pytest.approx(compute, rel=1e-12)


def test_pp_threshold_is_where_one_send_equals_a_stages_forward():
    hl = C.pp_critical_depth(A100, HDR)
    h, tokens, tp = 12288, 2048, 8
    layers = hl / h
    send = comms.p2p_time(2 * tokens * h / tp, HDR)
    assert send == pytest.approx(24 * h * h * layers * tokens / tp / A100, rel=1e-12)


def test_ep_threshold_is_where_dispatch_and_combine_equal_the_experts():
    e, f = 64, C.ep_critical_ffn(989e12, 50e9, 64)
    h, tokens, k = 7168, 4096, 8
    a2a = 2 * comms.alltoall_time(2 * h * tokens * k, e, 50e9)          # dispatch + combine
    assert a2a == pytest.approx(2 * k * 3 * h * f * tokens / 989e12, rel=1e-12)


def test_ring_attention_threshold_is_where_kv_passing_equals_the_block():
    # Liu et al. 2023, Sec. 3: the block must be at least F/B for the key/value transfer to hide
    c, d, heads = C.ring_attention_min_chunk(A100, NVL3), 128, 96
    send = comms.p2p_time(2 * 2 * c * d * heads, NVL3)                    # K and V chunk, 16-bit
    assert send == pytest.approx(4 * c * c * d * heads / A100, rel=1e-12)
    assert C.ring_attention_min_chunk(A100, NVL3, kv_ratio=1 / 8) == pytest.approx(c / 8)


def test_thresholds_on_the_book_nodes():
    a, h = C.critical_values("A100"), C.critical_values("H100")
    assert a.intra == "NVLink3" and a.inter == "IB-HDR" and h.inter == "IB-NDR"
    assert a.dp_tokens == pytest.approx(312e12 / 25e9) and h.dp_tokens == pytest.approx(989e12 / 50e9, rel=1e-3)
    # the running example's TP 8 on NVLink is comfortably compute-bound: h = 12,288 > 2,427
    assert a.tp_hidden < 12288
    # GPT-3's 96 layers over 16 stages (6 per stage) easily hide the pipeline's sends
    assert 12288 * 6 > a.pp_depth


def test_batch_floor_of_the_issue_4m_tokens_on_4096_gpus():
    f = C.batch_floor(2048 * 2048, 4096, 2048, C.dp_critical_tokens(A100, HDR))
    assert f.tokens_per_gpu == 1024 and f.sequences_per_gpu == 0.5      # under one 2,048-token sequence each
    assert f.max_dp_sequences == 2048
    assert f.min_model_parallel * min(f.max_dp_sequences, f.max_dp_overlap) >= 4096


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 20), st.integers(1, 10**6), st.sampled_from([512, 2048, 8192]))
def test_batch_floor_properties_up_to_a_million_gpus(k, n, seq):
    batch = seq * 2**k
    t0 = time.process_time()
    f = C.batch_floor(batch, n, seq, 12480)
    assert time.process_time() - t0 < 1.0
    assert n % f.min_model_parallel == 0
    dp = n // f.min_model_parallel
    assert dp <= max(1, batch // seq) and dp <= max(1, batch // 12480)
    assert f.tokens_per_gpu == pytest.approx(batch / n)


@given(st.floats(1e12, 1e16), st.floats(1e9, 1e13), st.floats(1.01, 100))
def test_thresholds_scale_with_peak_over_bandwidth(peak, bw, k):
    for fn in (C.dp_critical_tokens, C.pp_critical_depth, C.ring_attention_min_chunk):
        assert fn(peak * k, bw) == pytest.approx(k * fn(peak, bw))
        assert fn(peak, bw * k) == pytest.approx(fn(peak, bw) / k)
    assert C.tp_critical_hidden(peak, bw, 16) > C.tp_critical_hidden(peak, bw, 8)


@pytest.mark.parametrize("call", [
    lambda: C.dp_critical_tokens(0, 25e9), lambda: C.dp_critical_tokens(312e12, -1),
    lambda: C.dp_critical_tokens(312e12, 25e9, n_ranks=1), lambda: C.tp_critical_hidden(312e12, 3e11, 0),
    lambda: C.ep_critical_ffn(312e12, 25e9, 1), lambda: C.ring_attention_min_chunk(1e12, 1e9, kv_ratio=2),
    lambda: C.batch_floor(1000, 8, 2048, 1e4), lambda: C.batch_floor(4e6, 0, 2048, 1e4),
    lambda: C.dp_critical_tokens(float("nan"), 1e9)])
def test_bad_input_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_node_is_a_key_error():
    with pytest.raises(KeyError):
        C.critical_values("A1000")


# --- pipeline schedules -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [2, 4, 8, 16, 64])
def test_zb_h1_bubble_is_a_third_of_1f1b_at_equal_pass_times(p):
    # Qi et al. 2024, Sec. 3: with T_F = T_B = T_W, ZB-H1's bubble is (p−1)(T_F + T_B − T_W), a third of 1F1B's
    assert S.bubble("ZB-H1", p) == pytest.approx(S.bubble("1F1B", p) / 3)
    assert S.bubble("ZB-H2", p) == 0.0


@given(st.integers(1, 512), st.integers(1, 4096), st.integers(1, 8))
def test_schedule_idle_shares_match_the_closed_forms(p, m, v):
    assert S.idle_share("1F1B", p, m) == pytest.approx((p - 1) / (m + p - 1))
    assert S.idle_share("interleaved", p, m, v) == pytest.approx(float(parallel.idle_share(p, m, v)))
    assert S.idle_share("ZB-H2", p, m) <= S.idle_share("ZB-H1", p, m) <= S.idle_share("1F1B", p, m)


def test_schedule_bubble_agrees_with_parallel_schedule_bubble():
    # DeepSeek-V3 Table 2's ZB1P formula, held by chipchain.parallel
    assert S.bubble("ZB-H1", 16, f=1, b=2, w=0.5) == parallel.schedule_bubble("ZB1P", 16, 1, 2, 0.5)


def test_zero_bubble_costs_memory():
    assert S.inflight_microbatches("ZB-H2", 16) == 31 > S.inflight_microbatches("ZB-H1", 16) == 16


@pytest.mark.parametrize("call", [lambda: S.bubble("DualPipe", 7), lambda: S.bubble("1F1B", 8, w=3),
                                  lambda: S.idle_share("1F1B", 8, 0), lambda: S.inflight_microbatches("1F1B", 0)])
def test_schedules_bad_input(call):
    with pytest.raises(ValueError):
        call()
