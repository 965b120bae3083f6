"""chipchain.attention_backward: FlashAttention's backward pass equals the gradient of standard attention (float64,
to 1e-10), the standard gradient equals finite differences, the HBM tally equals its closed form, and the FLOP ratio
is FlashAttention-2's 2.5 (Dao 2023, Sec. 4.1)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chipchain import attention
from chipchain import attention_backward as AB


def _case(seed, shape, dv=None):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2,) + shape)
    v = rng.standard_normal(shape[:-1] + ((dv or shape[-1]),))
    do = rng.standard_normal(shape[:-1] + ((dv or shape[-1]),))
    return q, k, v, do


@pytest.mark.parametrize("causal", [False, True])
def test_flash_backward_equals_naive_gradient_to_1e_10(causal):
    q, k, v, do = _case(5, (2, 2, 500, 64))
    o, lse = AB.flash_attention_forward(q, k, v, 128, 96, causal)
    assert np.abs(o - attention.naive_attention(q, k, v, causal)).max() < 1e-10
    for got, want in zip(AB.flash_attention_backward(q, k, v, o, do, lse, 128, 96, causal),
                         AB.naive_attention_backward(q, k, v, do, causal)):
        assert np.abs(got - want).max() < 1e-10


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 70), st.integers(1, 70), st.integers(1, 9), st.integers(1, 40), st.integers(1, 40),
       st.booleans(), st.integers(0, 10**6))
def test_flash_backward_any_shape_and_blocks(n, nk, d, bq, bk, causal, seed):
    rng = np.random.default_rng(seed)
    q, do = rng.standard_normal((2, n, d))
    k, v = rng.standard_normal((2, nk, d))
    if causal and nk < n:
        nk, k, v = n, rng.standard_normal((n, d)), rng.standard_normal((n, d))
    o, lse = AB.flash_attention_forward(q, k, v, bq, bk, causal)
    for got, want in zip(AB.flash_attention_backward(q, k, v, o, do, lse, bq, bk, causal),
                         AB.naive_attention_backward(q, k, v, do, causal)):
        assert np.abs(got - want).max() < 1e-10


@pytest.mark.parametrize("causal", [False, True])
def test_naive_gradient_equals_finite_differences(causal):
    q, k, v, do = _case(1, (6, 3))
    grads = AB.naive_attention_backward(q, k, v, do, causal)
    eps = 1e-6
    for idx, x in enumerate((q, k, v)):
        num = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            args = [q.copy(), k.copy(), v.copy()]
            args[idx][i] += eps
            up = (attention.naive_attention(*args, causal) * do).sum()
            args[idx][i] -= 2 * eps
            num[i] = (up - (attention.naive_attention(*args, causal) * do).sum()) / (2 * eps)
        assert np.abs(num - grads[idx]).max() < 1e-7


def test_lse_is_the_log_sum_exp_of_the_scaled_scores():
    q, k, v, _ = _case(2, (40, 8))
    s = q @ k.T / np.sqrt(8)
    _, lse = AB.flash_attention_forward(q, k, v, 16, 16)
    assert np.allclose(lse, np.log(np.exp(s).sum(axis=1)), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n,d,bq,bk", [(1024, 64, 128, 128), (500, 32, 64, 96), (77, 16, 10, 13)])
def test_backward_tally_equals_closed_form(n, d, bq, bk):
    q, k, v, do = _case(3, (n, d))
    o, lse = AB.flash_attention_forward(q, k, v, bq, bk)
    c = attention.IOCounter()
    AB.flash_attention_backward(q, k, v, o, do, lse, bq, bk, counter=c)
    assert c.total == AB.flash_backward_hbm_accesses(n, d, bq, bk)


def test_backward_moves_far_fewer_bytes_than_the_standard_backward_at_long_sequences():
    # Dao et al. 2022, Theorem 5: Θ(N²d²/M) against Θ(Nd + N²)
    for n in (4096, 16384):
        assert AB.flash_backward_hbm_accesses(n, 64, 128, 128) < AB.standard_backward_hbm_accesses(n, 64) / 3


def test_flops_ratio_is_fa2s_two_and_a_half():
    # Dao 2023 (FlashAttention-2), Sec. 4.1: backward FLOPs are 2.5 times the forward's (5 matmuls against 2)
    assert AB.attention_flops(8192, 128, 32, backward=True) / AB.attention_flops(8192, 128, 32) == 2.5
    assert AB.attention_flops(1024, 64, backward=True, recompute=False) == 2 * AB.attention_flops(1024, 64)
    assert AB.attention_flops(1024, 64, causal=True) == AB.attention_flops(1024, 64) / 2
    assert AB.attention_flops(2048, 128) == 4 * 2048**2 * 128


@pytest.mark.parametrize("call", [
    lambda: AB.flash_attention_backward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)),
                                        np.ones((3, 2)), np.zeros(4)),
    lambda: AB.flash_attention_backward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)),
                                        np.ones((4, 2)), np.zeros(3)),
    lambda: AB.flash_attention_backward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)),
                                        np.full((4, 2), np.nan), np.zeros(4)),
    lambda: AB.flash_attention_forward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), block_q=0),
    lambda: AB.naive_attention_backward(np.ones((4, 2)), np.ones((4, 3)), np.ones((4, 2)), np.ones((4, 2))),
    lambda: AB.attention_flops(-1, 64), lambda: AB.attention_flops(8, 64, heads=0),
    lambda: AB.flash_backward_hbm_accesses(0, 64), lambda: AB.standard_backward_hbm_accesses(8, 0)])
def test_bad_input_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()
