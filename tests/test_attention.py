"""chipchain.attention: exactness of the tiled algorithm (flash == naive), the instrumented tally against the IO
model, memory and speed budgets, bad input; and the chapter's views (chipchain.views.attention)."""
import math
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chipchain import attention as at
from chipchain import attention_io as aio
from chipchain import views, widgets

FP64_TOL = 1e-10     # the bound for float64
FP32_TOL = 2e-6      # stated float32 tolerance: max |O_flash32 − O_naive64| for standard-normal inputs, N ≤ 4096
                     # (measured ≈ 1.4e-7 at N = 4096, d = 64; float32 machine epsilon is 1.2e-7)


def qkv(shape_q, n_k=None, d_v=None, seed=0, spread=1.0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    *lead, n, d = shape_q
    n_k = n if n_k is None else n_k
    d_v = d if d_v is None else d_v
    q = rng.standard_normal((*lead, n, d)) * spread
    k = rng.standard_normal((*lead, n_k, d)) * spread
    v = rng.standard_normal((*lead, n_k, d_v))
    return q.astype(dtype), k.astype(dtype), v.astype(dtype)


def reference(q, k, v, causal=False, scale=None):
    """Row-by-row softmax with Python floats' help from NumPy, written independently of the library."""
    d = q.shape[-1]
    tau = 1 / math.sqrt(d) if scale is None else scale
    s = np.einsum("...id,...jd->...ij", q, k) * tau
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("...ij,...jd->...id", w / w.sum(axis=-1, keepdims=True), v)


# --- exactness ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape,bq,bk", [((100, 16), 32, 32), ((2, 3, 257, 32), 64, 48), ((5, 1, 8), 128, 128),
                                         ((4, 130, 64), 1, 7), ((3, 77, 5), 77, 1)])
def test_flash_equals_naive_float64(shape, bq, bk, causal):
    q, k, v = qkv(shape, seed=len(shape) + bq)
    naive = at.naive_attention(q, k, v, causal=causal)
    flash = at.flash_attention(q, k, v, block_q=bq, block_k=bk, causal=causal)
    assert flash.shape == naive.shape == shape[:-1] + (shape[-1],)
    assert np.abs(flash - naive).max() < FP64_TOL
    assert np.abs(naive - reference(q, k, v, causal)).max() < FP64_TOL


@pytest.mark.parametrize("causal", [False, True])
def test_float32_within_stated_tolerance(causal):
    q, k, v = qkv((2, 600, 64), seed=3)
    exact = at.naive_attention(q, k, v, causal=causal)
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    flash32 = at.flash_attention(q32, k32, v32, block_q=96, block_k=80, causal=causal)
    assert flash32.dtype == np.float32
    assert np.abs(flash32 - exact).max() < FP32_TOL
    assert np.abs(at.naive_attention(q32, k32, v32, causal=causal) - exact).max() < FP32_TOL


def test_rescaling_survives_scores_beyond_exp_range():
    """A later block whose scores are ~800 larger (exp(800) overflows float64) forces the rescaling path."""
    q, k, v = qkv((1, 64, 4), seed=5)
    k[0, 40:] *= 400.0
    q[0] = np.abs(q[0]) * 10
    k[0, 40:] = np.abs(k[0, 40:])
    exact = reference(q, k, v)
    out = at.flash_attention(q, k, v, block_q=16, block_k=8)
    assert np.isfinite(out).all() and np.abs(out - exact).max() < FP64_TOL


def test_different_key_length_and_value_width():
    q, k, v = qkv((2, 33, 6), n_k=50, d_v=3, seed=7)
    for causal in (False, True):
        out = at.flash_attention(q, k, v, block_q=8, block_k=16, causal=causal)
        assert out.shape == (2, 33, 3)
        assert np.abs(out - reference(q, k, v, causal)).max() < FP64_TOL
        assert np.abs(at.naive_attention(q, k, v, causal=causal) - out).max() < FP64_TOL


def test_causal_first_row_is_first_value_and_scale_matters():
    q, k, v = qkv((9, 4), seed=8)
    out = at.flash_attention(q, k, v, block_q=4, block_k=3, causal=True)
    assert np.allclose(out[0], v[0], rtol=0, atol=1e-15)
    a = at.flash_attention(q, k, v, block_q=4, block_k=3, scale=0.1)
    assert np.abs(a - at.naive_attention(q, k, v, scale=0.1)).max() < FP64_TOL
    assert np.abs(a - at.naive_attention(q, k, v)).max() > 1e-3          # the scale is actually used


def test_integer_inputs_are_computed_in_float64():
    q = np.arange(12).reshape(4, 3) % 3
    out = at.flash_attention(q, q, q, block_q=3, block_k=2)
    assert out.dtype == np.float64 and np.abs(out - reference(q * 1.0, q * 1.0, q * 1.0)).max() < FP64_TOL


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lead=st.lists(st.integers(1, 3), max_size=2), n=st.integers(1, 70), n_k=st.integers(1, 70),
       d=st.integers(1, 12), d_v=st.integers(1, 12), bq=st.integers(1, 80), bk=st.integers(1, 80),
       causal=st.booleans(), spread=st.sampled_from([0.1, 1.0, 4.0]), seed=st.integers(0, 2**31))
def test_property_flash_equals_naive(lead, n, n_k, d, d_v, bq, bk, causal, spread, seed):
    q, k, v = qkv((*lead, n, d), n_k=n_k, d_v=d_v, seed=seed, spread=spread)
    naive = at.naive_attention(q, k, v, causal=causal)
    counter = at.IOCounter()
    flash = at.flash_attention(q, k, v, block_q=bq, block_k=bk, causal=causal, counter=counter)
    assert flash.shape == naive.shape == (*lead, n, d_v)
    assert np.abs(flash - naive).max() < FP64_TOL
    # every output row is a convex combination of value rows
    assert (flash <= v.max(axis=-2, keepdims=True) + 1e-12).all() and (flash >= v.min(axis=-2, keepdims=True) - 1e-12).all()
    # the instrumented run moves exactly what the counting model says
    heads = math.prod(lead)
    assert counter.total == heads * aio.flash_hbm_accesses(n, d, block_q=bq, block_k=bk, causal=causal, n_k=n_k,
                                                          d_v=d_v)
    assert counter.writes == heads * n * d_v


@settings(max_examples=40, deadline=None)
@given(scores=st.lists(st.floats(-30, 30), min_size=1, max_size=12), block=st.integers(1, 13), seed=st.integers(0, 99))
def test_property_online_softmax_trace(scores, block, seed):
    vals = list(np.random.default_rng(seed).standard_normal(len(scores)))
    steps = at.online_softmax_steps(scores, vals, block=block)
    x = np.array(scores)
    w = np.exp(x - x.max())
    assert len(steps) == -(-len(scores) // block)
    assert steps[-1].output == pytest.approx(float(w @ vals / w.sum()), abs=1e-9)
    assert steps[-1].m == x.max() and (np.diff([s.m for s in steps]) >= 0).all()
    assert steps[-1].l == pytest.approx(float(w.sum()), rel=1e-12)


def test_online_softmax_trace_hand_example():
    """The chapter's worked example: scores 1, 2 | 4, 3 with values 10, 20 | 30, 40."""
    t = views.attention.online_softmax_trace([1, 2, 4, 3], [10, 20, 30, 40], block=2)
    assert t["m"].tolist() == [2.0, 4.0]
    assert t["exp(m_old - m)"].iloc[1] == pytest.approx(math.exp(-2))
    assert t["l"].iloc[0] == pytest.approx(1 + math.exp(-1))
    assert t["l"].iloc[1] == pytest.approx((1 + math.exp(-1)) * math.exp(-2) + 1 + math.exp(-1))
    assert t["o/l"].iloc[1] == pytest.approx(30.8562, abs=1e-4)


# --- memory and speed budgets ---------------------------------------------------------------------------------------

def test_peak_memory_matches_models_and_scales():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 2048, 64))
    naive, flash = {}, {}
    for n in (512, 1024, 2048):
        naive[n] = at.peak_extra_memory(at.naive_attention, q[:n], k[:n], v[:n])
        flash[n] = at.peak_extra_memory(at.flash_attention, q[:n], k[:n], v[:n])
        assert naive[n] == pytest.approx(at.naive_extra_memory(n, 64), rel=0.05)
        assert flash[n] == pytest.approx(at.flash_extra_memory(n, 64), rel=0.15)
    # O(N²): each doubling of N adds 4× what the previous one added; O(N·d): each token adds d·8 bytes
    assert (naive[2048] - naive[1024]) / (naive[1024] - naive[512]) == pytest.approx(4, rel=0.02)
    assert (flash[2048] - flash[1024]) / 1024 == pytest.approx(64 * 8, rel=0.05)


@pytest.mark.budget
def test_budget_n4096_d64_time_and_memory():
    """The issue's budget: N = 4096, d = 64 in < 2 s (best of 2 on the 2-core machine) and peak extra memory
    at least 10× below naive attention's."""
    q, k, v = qkv((4096, 64), seed=11)
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        out = at.flash_attention(q, k, v)
        times.append(time.perf_counter() - t0)
    assert min(times) < 2.0, f"flash attention took {min(times):.2f} s"
    assert out.shape == (4096, 64) and np.isfinite(out).all()       # exactness: the tests above
    naive_peak = at.peak_extra_memory(at.naive_attention, q, k, v)
    flash_peak = at.peak_extra_memory(at.flash_attention, q, k, v)
    assert naive_peak >= 2 * 4096 * 4096 * 8                       # S and P really are materialised
    assert naive_peak >= 10 * flash_peak, (naive_peak, flash_peak)


def test_peak_extra_memory_leaves_tracing_state_alone():
    import tracemalloc

    assert not tracemalloc.is_tracing()
    assert at.peak_extra_memory(np.ones, 1000) >= 8000
    assert not tracemalloc.is_tracing()


# --- bad input ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("func", [at.naive_attention, at.flash_attention])
def test_bad_arrays(func):
    q, k, v = qkv((2, 10, 4))
    cases = [
        ((q, k[..., :3], v), "head dimension"),
        ((q, k, v[:, :9]), "number of keys"),
        ((q, k[:1], v[:1]), "leading"),
        ((q[0, 0], k, v), "at least 2 dimensions"),
        ((np.zeros((0, 4)), np.zeros((0, 4)), np.zeros((0, 4))), "empty"),
        ((q.astype(complex), k, v), "real numbers"),
        ((q > 0, k, v), "real numbers"),
        ((np.array([["a", "b"]]), k, v), "real numbers"),
    ]
    for args, match in cases:
        with pytest.raises(ValueError, match=match):
            func(*args)
    for name, bad in (("q", np.nan), ("k", np.inf), ("v", -np.inf)):
        arrs = {"q": q.copy(), "k": k.copy(), "v": v.copy()}
        arrs[name][1, 3, 2] = bad
        with pytest.raises(ValueError, match=f"{name} must hold only finite"):
            func(arrs["q"], arrs["k"], arrs["v"])
    with pytest.raises(ValueError, match="causal"):
        func(q, k, v, causal="yes")
    with pytest.raises(ValueError, match="scale"):
        func(q, k, v, scale=0)
    with pytest.raises(ValueError, match="counter"):
        func(q, k, v, counter={})


@pytest.mark.parametrize("bq,bk,name", [(0, 4, "block_q"), (4, -1, "block_k"), (2.5, 4, "block_q"),
                                        (True, 4, "block_q"), (4, None, "block_k")])
def test_bad_block_sizes(bq, bk, name):
    q, k, v = qkv((10, 4))
    with pytest.raises(ValueError, match=name):
        at.flash_attention(q, k, v, block_q=bq, block_k=bk)


def test_bad_model_arguments():
    with pytest.raises(ValueError, match="values"):
        at.online_softmax_steps([1, 2], [1])
    with pytest.raises(ValueError, match="scores"):
        at.online_softmax_steps([1, float("nan")], [1, 2])
    with pytest.raises(ValueError, match="scores"):
        at.online_softmax_steps([], [])
    with pytest.raises(ValueError, match="block"):
        at.online_softmax_steps([1, 2], [1, 2], block=0)
    with pytest.raises(ValueError, match="func"):
        at.peak_extra_memory(3)
    with pytest.raises(ValueError, match="heads"):
        at.naive_extra_memory(1024, 64, heads=0)
    with pytest.raises(ValueError, match="block_q"):
        at.flash_extra_memory(1024, 64, block_q=0)


# --- views (chipchain.views.attention) ------------------------------------------------------------------------------

def test_online_softmax_trace_is_the_steps():
    steps = at.online_softmax_steps([3, -1, 5, 0, 2], [1, 2, 3, 4, 5], block=2)
    t = views.attention.online_softmax_trace([3, -1, 5, 0, 2], [1, 2, 3, 4, 5], block=2)
    assert list(t["m"]) == [s.m for s in steps] and list(t["o/l"]) == [s.output for s in steps]
    assert list(t.columns) == ["block", "block max", "m", "exp(m_old - m)", "l", "o", "o/l"]


def test_score_memory_table():
    t = views.attention.score_memory_table()
    assert list(t.index) == [2048, 8192, 32768, 131072]
    # head counts from the registry: Llama 3 8B 32, GPT-3 175B 96, Llama 3.1 405B 128 (Dubey et al. 2024 Table 3;
    # Brown et al. 2020 Table 2.1)
    assert list(t.columns) == ["Llama-3-8B (32 heads)", "GPT-3-175B (96 heads)", "Llama-3.1-405B (128 heads)"]
    assert t.loc[131072, "GPT-3-175B (96 heads)"] == 96 * 131072**2 * 2
    assert (t.loc[8192] / t.loc[2048] == 16).all()                    # quadratic in N
    assert list(views.attention.score_memory_table([2048], "175B").columns) == ["GPT-3-175B (96 heads)"]
    with pytest.raises(ValueError, match="model"):
        views.attention.score_memory_table(model=[])
    with pytest.raises(KeyError, match="GPT-3-175B"):
        views.attention.score_memory_table(model=["GPT-3-176B"])


def test_traffic_table_calls_the_io_model():
    t = views.attention.traffic_table([1024, 4096], d=64)
    sram = aio.sram_per_sm("A100") // 2
    assert list(t["standard (counted)"]) == [aio.standard_hbm_accesses(n, 64, sram) * 2 for n in (1024, 4096)]
    assert list(t["flash (counted)"]) == [aio.flash_hbm_accesses(n, 64, sram) * 2 for n in (1024, 4096)]


def test_explorer_views_and_messages():
    ex = views.attention.traffic_explorer()
    assert isinstance(ex, widgets.Explorable) and ex.n_views <= 150
    html = ex.render_current()
    assert "<svg" in html and "FlashAttention" in html
    assert "outside Theorem 2" in views.attention._traffic_view(512, 32, aio.sram_per_sm("H100"))


def test_figure_helpers_draw_svg_charts():
    f = views.attention.hbm_traffic_figure([512, 1024, 4096], d=64)
    assert f._repr_html_().count("<polyline") == 4 and "<img" not in f._repr_html_()   # 2 counted, 2 orders
    measured = {"N": [256, 512], "naive": [1.2e6, 4.5e6], "flash": [6e5, 7e5]}
    g = views.attention.peak_memory_figure(measured)
    assert g._repr_html_().count("<polyline") == 2 and g._repr_html_().count("<circle") == 4


# --- properties of the memory models: linear in N for flash, quadratic for standard; finite at 10⁶ tokens ------------

@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 2**20), d=st.integers(1, 256), heads=st.integers(1, 128), bq=st.integers(1, 512),
       bk=st.integers(1, 512), b=st.sampled_from([2, 4, 8]))
def test_property_extra_memory_models(n, d, heads, bq, bk, b):
    naive = at.naive_extra_memory(n, d, heads, b)
    flash = at.flash_extra_memory(n, d, bq, bk, heads, b)
    assert math.isfinite(naive) and math.isfinite(flash) and naive > 0 and flash > 0
    assert at.naive_extra_memory(2 * n, d, heads, b) > 3 * naive - 4 * n * d * heads * b     # ~4× (2N² term)
    assert at.flash_extra_memory(2 * n, d, bq, bk, heads, b) <= 2 * flash + 1e-6               # at most linear
