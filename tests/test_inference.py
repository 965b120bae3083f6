"""chipchain.inference: the per-token serving equations, pinned to published KV-cache sizes and inference arithmetic,
plus properties (monotone in batch, array = element-wise scalar) and bad input."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import inference as inf
from chipchain import models, units

DENSE = ["GPT-3-175B", "Llama-2-7B", "Llama-2-13B", "Llama-2-70B", "Llama-3-8B", "Llama-3-70B", "Llama-3.1-405B",
         "DeepSeek-67B"]


# --- KV cache: published sizes --------------------------------------------------------------------------------------

def test_kv_bytes_match_zhao_2025_table_1():
    # Zhao et al. 2025 (Insights into DeepSeek-V3), Table 1, KV cache per token in BF16 (exact)
    assert inf.model_kv_bytes_per_token("DeepSeek-V3", "bf16") == 70_272
    assert inf.model_kv_bytes_per_token("Llama-3.1-405B", "bf16") == 516_096
    assert inf.kv_bytes_per_token(126, 8, 128) == 516_096                           # 126 layers, GQA-8, d_h 128
    assert inf.kv_bytes_per_token(61, latent_dim=512 + 64) == 70_272                  # MLA: d_c 512 + d_h^R 64
    assert inf.kv_bytes_per_token(80, 8, 128) == 327_680                              # Qwen-2.5 72B: 80 layers, GQA-8


def test_kv_bytes_match_vllm_paper_opt_13b():
    # Kwon et al. 2023 (vLLM), Sec. 3: one OPT-13B token needs "800 KB" = 2 × 5120 × 40 × 2 bytes, and a
    # 2,048-token request "as much as 1.6 GB" (binary KB; 1.6 GB to two figures)
    opt13 = models.custom(layers=40, hidden=5120, heads=40, seq=2048, vocab=50272, name="OPT-13B")
    assert inf.model_kv_bytes_per_token(opt13) == 800 * 1024
    assert inf.kv_cache_bytes(opt13, 2048) == pytest.approx(1.6e9, rel=0.05)


def test_llama2_70b_gqa_is_an_eighth_of_mha():
    # Ainslie et al. 2023 / Touvron et al. 2023 Sec. 2.2: 64 query heads share 8 KV heads
    m = models.get("Llama-2-70B")
    assert inf.model_kv_bytes_per_token(m) == 327_680
    assert inf.kv_bytes_per_token(m.layers, m.heads, m.head_dim) / inf.model_kv_bytes_per_token(m) == 8


def test_multi_query_cuts_the_cache_by_the_head_count():
    # Pope et al. 2022, Sec. 3.3: multiquery attention shares one K/V head, shrinking the cache by n_heads
    for n_heads in (8, 48, 128):
        assert inf.kv_bytes_per_token(32, n_heads, 128) / inf.kv_bytes_per_token(32, 1, 128) == n_heads


def test_deepseek_v2_mla_equals_gqa_with_2_25_groups():
    # DeepSeek-V2 report, Table 1: MLA caches (d_c + d_h^R)·l = 4.5·d_h·l elements, "equal to GQA with 2.25 groups"
    v2 = models.get("DeepSeek-V2")
    assert inf.model_kv_bytes_per_token(v2) == inf.kv_bytes_per_token(v2.layers, kv_heads=1, head_dim=128) * 2.25
    assert (v2.kv_lora_rank + v2.rope_head_dim) / (2 * v2.head_dim) == 2.25


def test_deepseek_v2_93_percent_claim_is_a_deployment_figure():
    """DeepSeek-V2's abstract: 'reduces the KV cache by 93.3%' against DeepSeek 67B. Reproduced only when V2's
    cache is quantised to 6 bits per element on average (its Sec. 3.2.3) against a 16-bit 67B cache."""
    v2, d67 = models.get("DeepSeek-V2"), models.get("DeepSeek-67B")
    deployed = inf.kv_bytes_per_token(v2.layers, latent_dim=v2.kv_lora_rank + v2.rope_head_dim,
                                      bytes_per_element=6 / 8)
    assert 1 - deployed / inf.model_kv_bytes_per_token(d67, "bf16") == pytest.approx(0.933, abs=0.0005)
    # same precision on both sides, the architecture alone saves less
    assert 1 - inf.model_kv_bytes_per_token(v2) / inf.model_kv_bytes_per_token(d67) == pytest.approx(0.822, abs=0.001)


def test_running_example_kv_cache_and_weights():
    # GPT-3 175B (Brown et al. 2020 Table 2.1: 96 layers, d_model 12,288, 96 heads of 128), BF16
    m = models.get("175B")
    assert inf.model_kv_bytes_per_token(m) == 4_718_592                              # 4.72 MB per token
    assert inf.kv_cache_bytes(m, 2048) == pytest.approx(9.664e9, rel=1e-3)
    assert inf.weight_bytes(m, "bf16") == 350e9
    # a model with half the layers caches half as much
    half = models.custom(layers=48, hidden=12288, heads=96, seq=2048, vocab=50257)
    assert inf.model_kv_bytes_per_token(half) == inf.model_kv_bytes_per_token(m) / 2


def test_mha_gqa_mla_ordering():
    per_param = {n: inf.model_kv_bytes_per_token(n) / models.get(n).params
                 for n in ("Llama-2-7B", "Llama-3-8B", "DeepSeek-V3")}
    assert per_param["Llama-2-7B"] > per_param["Llama-3-8B"] > per_param["DeepSeek-V3"]


def test_a_name_and_an_alias_agree():
    assert inf.model_kv_bytes_per_token("405B") == inf.model_kv_bytes_per_token("Llama-3.1-405B")
    assert inf.weight_bytes("70B", "int4") == inf.weight_bytes(models.get("Llama-2-70B"), "int4") == 34.49e9


# --- weights, bytes per element ---------------------------------------------------------------------------------------

def test_weight_bytes_use_the_one_dtype_table():
    from chipchain import units

    for d, b in units.BYTES_PER_ELEMENT.items():
        assert inf.weight_bytes("Llama-2-7B", d) == 6.74e9 * b
    # seed 004: "int8 halves the memory" — exact
    assert inf.weight_bytes("Llama-2-7B", "int8") / inf.weight_bytes("Llama-2-7B", "bf16") == 0.5


def test_moe_weights_read():
    # DeepSeek-V3: 37 B activated of 671 B (DeepSeek-AI 2024, Sec. 4.2); batch 1 reads the active part, a large
    # batch touches every expert
    v3 = models.get("DeepSeek-V3")
    assert inf.weights_read_per_step(v3, 1, "bf16") == pytest.approx(2 * 37e9, rel=1e-9)
    assert inf.weights_read_per_step(v3, 4096, "bf16") == pytest.approx(2 * 671e9, rel=1e-6)
    reads = inf.weights_read_per_step(v3, [1, 2, 8, 64, 512])
    assert np.all(np.diff(reads) > 0)
    assert inf.weights_read_per_step("Llama-3-8B", 64) == inf.weight_bytes("Llama-3-8B")


def test_memory_needed_is_weights_plus_cache():
    assert inf.memory_needed("Llama-3-8B", 4096, 2, "int4") == (inf.weight_bytes("Llama-3-8B", "int4")
                                                                 + inf.kv_cache_bytes("Llama-3-8B", 4096, 2))


# --- prefill and decode arithmetic ------------------------------------------------------------------------------------

def test_decode_intensity_is_about_the_batch_in_bf16():
    # Pope et al. 2022 Sec. 2 / Chen 2022 ("Transformer inference arithmetic"): a weight-dominated decode step does
    # 2 FLOPs per weight per sequence and reads each weight once (b bytes): intensity ≈ 2B/b, = B in BF16
    for b, dtype in ((1, "bf16"), (8, "bf16"), (64, "bf16"), (8, "fp8"), (8, "int4")):
        i = inf.decode_intensity("Llama-3-70B", 1, b, dtype)
        assert i == pytest.approx(2 * b / {"bf16": 2, "fp8": 1, "int4": 0.5}[dtype], rel=0.02)


def test_kipply_critical_batch_208():
    # Chen 2022 ("Transformer inference arithmetic"): an A100 at 312 TFLOP/s and 1.5 TB/s has a FLOP:byte ratio of
    # 312e12 / 1.5e12 = 208, so a 16-bit decode becomes compute-bound at a batch of about 208
    ratio = 312e12 / 1.5e12
    batches = np.arange(1, 400)
    crossing = batches[inf.decode_intensity("Llama-2-70B", 1, batches) >= ratio][0]
    assert crossing == pytest.approx(208, rel=0.01)


def test_prefill_intensity_is_about_the_prompt_length():
    # prefill reuses each weight s times: intensity ≈ 2s/b (Pope et al. 2022), a little above with attention
    for s in (128, 512, 2048):
        assert inf.prefill_intensity("Llama-3-70B", s) == pytest.approx(s, rel=0.1)


def test_moe_prefill_bytes_touch_every_expert():
    flops = 2 * 37e9 * 2048 + 2 * 61 * 2048**2 * 128 * 128          # matmuls + causal attention (Kaplan Table 1)
    nbytes = 2 * 671e9 + 2048 * 70272                                 # every expert touched, plus the KV written
    assert inf.prefill_intensity("DeepSeek-V3", 2048) == pytest.approx(flops / nbytes, rel=1e-3)


def test_decode_bound_at_batch_1():
    # Llama 3 8B (8.03 B parameters, Dubey et al. 2024) in BF16 on 3.35 TB/s (H100 SXM datasheet): ≈ 209 tokens/s
    assert inf.decode_tokens_per_second_bound(3.35e12, inf.weight_bytes("Llama-3-8B")) == pytest.approx(209, abs=1)


def test_arrays_are_element_wise():
    batches, contexts = np.array([1, 8, 64, 512]), np.array([1, 1024, 4096, 32768])
    for f in (inf.decode_bytes, inf.decode_flops, inf.decode_intensity, inf.kv_cache_bytes):
        got = f("Llama-3-8B", contexts, batches)
        want = [f("Llama-3-8B", int(c), int(b)) for c, b in zip(contexts, batches)]
        assert got == pytest.approx(want, rel=1e-12)
    assert inf.prefill_flops("DeepSeek-V3", batches) == pytest.approx(
        [inf.prefill_flops("DeepSeek-V3", int(s)) for s in batches])
    assert inf.energy_per_token(700, np.array([100.0, 200.0])).tolist() == [7.0, 3.5]


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 511), c=st.sampled_from([1, 512, 4096, 32768]),
       name=st.sampled_from(["Llama-3-8B", "Llama-2-70B", "DeepSeek-V3"]),
       dtype=st.sampled_from(["bf16", "fp8", "int4"]))
def test_more_batch_never_lowers_intensity(b, c, name, dtype):
    lo, hi = inf.decode_intensity(name, c, [b, b + 1], dtype)
    assert hi >= lo * (1 - 1e-12)


@settings(max_examples=30, deadline=None)
@given(b=st.integers(1, 256), c=st.sampled_from([1, 512, 4096]), name=st.sampled_from(DENSE))
def test_fewer_bits_never_read_more(b, c, name):
    reads = [inf.decode_bytes(name, c, b, d) for d in ("bf16", "fp8", "int4")]
    assert reads == sorted(reads, reverse=True)


# --- capacity -------------------------------------------------------------------------------------------------------

def test_max_batch_is_tight():
    m, mem, c = "Llama-3-70B", 180e9, 4096
    b = inf.max_batch(mem, m, c, "fp8")
    room = 0.9 * mem - inf.weight_bytes(m, "fp8")
    assert inf.kv_cache_bytes(m, c, b) <= room < inf.kv_cache_bytes(m, c, b + 1)
    assert inf.max_batch(80e9, "Llama-3-70B", c, "bf16") == 0                        # 141 GB of weights


def test_memory_column_claim():
    """Seed 000: going from 80 GB to 180 GB changes what can be served more than the FLOPS doubling. Capacity grows
    2.25×, but the batch that fits grows far more, because weights are a fixed cost."""
    batch_ratio = inf.max_batch(180e9, "Llama-3-70B", 4096, "fp8") / max(inf.max_batch(80e9, "Llama-3-70B", 4096,
                                                                                      "fp8"), 1)
    assert batch_ratio > 10 * 2.25


def test_largest_model_that_fits():
    assert inf.largest_model_that_fits(16e9, "int4") == 24e9
    assert inf.largest_model_that_fits(8e9, "bf16", 1.0) == 4e9


# --- energy ---------------------------------------------------------------------------------------------------------

def test_energy_per_token_is_power_over_throughput():
    # identity: watts / (tokens/s) = joules/token; a query of n tokens costs n times that
    assert inf.energy_per_token(700, 200) == 3.5
    assert inf.energy_per_query(700, 200, 1000) == 3500


# --- bad input ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: inf.kv_bytes_per_token(0, 8, 128),
    lambda: inf.kv_bytes_per_token(80, 8, 128, bytes_per_element=float("nan")),
    lambda: inf.kv_bytes_per_token(80, 8, 128, latent_dim=576),
    lambda: inf.kv_bytes_per_token(80),
    lambda: inf.model_kv_bytes_per_token("Llama-3-8B", "fp4"),
    lambda: inf.model_kv_bytes_per_token(42),
    lambda: inf.kv_cache_bytes("Llama-3-8B", -5),
    lambda: inf.kv_cache_bytes("Llama-3-8B", 1024, True),
    lambda: inf.kv_cache_bytes("Llama-3-8B", [1024, 0]),
    lambda: inf.decode_bytes("Llama-3-8B", 1024, [1, 2.5]),
    lambda: inf.decode_bytes("Llama-3-8B", 1024, [1, float("nan")]),
    lambda: inf.decode_bytes("Llama-3-8B", 1024, []),
    lambda: inf.decode_flops("Llama-3-8B", "long"),
    lambda: inf.weight_bytes("Llama-3-8B", "fp4"),
    lambda: inf.weights_read_per_step("DeepSeek-V3", 0),
    lambda: inf.memory_needed("Llama-3-8B", 0),
    lambda: inf.decode_tokens_per_second_bound(float("inf"), 1e9),
    lambda: inf.decode_tokens_per_second_bound(1e12, 0),
    lambda: inf.decode_tokens_per_second_bound(1e12, [1e9, -1]),
    lambda: inf.energy_per_token(700, 0),
    lambda: inf.energy_per_query(700, 100, -1),
    lambda: inf.max_batch(80e9, "Llama-3-8B", 1024, usable_fraction=1.5),
    lambda: inf.max_batch(0, "Llama-3-8B", 1024),
    lambda: inf.largest_model_that_fits(8e9, "int3"),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="kv_dtype"):
        inf.kv_cache_bytes("Llama-3-8B", 1024, 1, "fp4")
    with pytest.raises(ValueError, match="batch"):
        inf.decode_bytes("Llama-3-8B", 1024, [1, 0])


def test_unknown_model_lists_nearest():
    with pytest.raises(KeyError, match="Llama-3-70B"):
        inf.weight_bytes("llama-3-71b")


# --- the chapter's views (chipchain.views.inference) ----------------------------------------------------------------

def test_edge_fit_table():
    from chipchain import views

    t = views.inference.edge_fit_table()                       # the edge devices' 8 GiB and 16 GiB
    assert t.loc[("Llama-2-7B", "int4"), "8 GiB = 8.59 GB"] == "✓"
    assert t.loc[("Llama-2-7B", "bf16"), "8 GiB = 8.59 GB"] == "✗"                   # 13.5 GB of weights
    assert t.loc[("Llama-2-70B", "int4"), "16 GiB = 17.2 GB"] == "✗"                 # 34.5 GB of weights


def test_view_tables_take_aliases():
    from chipchain import views

    v = views.inference
    assert v.batch_table("H100", "8B", 1024, (1, 64)).equals(v.batch_table("H100-SXM", "Llama-3-8B", 1024, (1, 64)))
    assert v.model_table(["405B"]).index.tolist() == ["Llama-3.1-405B"]
    assert v.serving_table(["A100"], "70B", 4096, "fp8").loc["A100-SXM-80GB", "max batch"] == inf.max_batch(
        80 * 2**30, "Llama-2-70B", 4096, "fp8")                  # an "80 GB" A100 holds 80 GiB


def test_moore_projection_figure_refuses_a_backward_range():
    from chipchain import views

    with pytest.raises(ValueError, match="year_range"):
        views.inference.moore_projection_figure(year_range=(2030, 2020))
    with pytest.raises(ValueError, match="base_year"):
        views.inference.moore_projection_figure(base_year=2050)


# --- issue 13: a property for every public function; huge batches and contexts; never NaN; each call < 1 s ----------

import math
import time

ALL = ["Llama-3-8B", "Llama-2-70B", "Llama-3.1-405B", "DeepSeek-V3", "DeepSeek-V2", "GPT-3-175B"]
BIG_B, BIG_C = st.integers(1, 1_000_000), st.integers(1, 10_000_000)
DTYPES = st.sampled_from(["fp32", "bf16", "fp8", "int8", "int4"])


def _quick(call):
    t = time.process_time()
    out = call()
    assert time.process_time() - t < 1.0
    assert np.all(np.isfinite(out))
    return out


@settings(max_examples=25, deadline=None)
@given(l=st.integers(1, 1000), h=st.integers(1, 1024), d=st.integers(1, 1024), lat=st.integers(1, 1 << 16),
       b=st.floats(0.125, 8))
def test_kv_bytes_per_token_scales_with_every_factor(l, h, d, lat, b):
    # 2·l·n_kv·d_h·b: doubling any factor doubles it; MLA's cache is l·latent·b (DeepSeek-V2 Sec. 2.1)
    one = _quick(lambda: inf.kv_bytes_per_token(l, h, d, b))
    assert inf.kv_bytes_per_token(2 * l, h, d, b) == pytest.approx(2 * one)
    assert inf.kv_bytes_per_token(l, 2 * h, d, b) == pytest.approx(2 * one)
    assert inf.kv_bytes_per_token(l, latent_dim=lat, bytes_per_element=b) == pytest.approx(l * lat * b)


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(ALL), c=BIG_C, b=BIG_B, dtype=DTYPES)
def test_cache_and_memory_are_linear_in_batch_and_context(name, c, b, dtype):
    kv = _quick(lambda: inf.model_kv_bytes_per_token(name, dtype))
    assert kv == pytest.approx(inf.model_kv_bytes_per_token(name, "bf16") * units.BYTES_PER_ELEMENT[dtype] / 2)
    cache = _quick(lambda: inf.kv_cache_bytes(name, c, b, dtype))
    assert cache == pytest.approx(b * c * kv)
    need = _quick(lambda: inf.memory_needed(name, c, b, dtype, dtype))
    assert need == pytest.approx(inf.weight_bytes(name, dtype) + cache)


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(ALL), b=BIG_B, dtype=DTYPES)
def test_weights_read_lie_between_active_and_all(name, b, dtype):
    # a step reads at least the active weights and never more than all of them; more tokens never read fewer
    m = models.get(name)
    w = _quick(lambda: inf.weights_read_per_step(name, b, dtype))
    bpe = units.BYTES_PER_ELEMENT[dtype]
    assert m.active_params * bpe * (1 - 1e-9) <= w <= _quick(lambda: inf.weight_bytes(name, dtype)) * (1 + 1e-9)
    assert inf.weights_read_per_step(name, b + 1, dtype) >= w * (1 - 1e-12)


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(ALL), s=BIG_C, b=st.integers(1, 1000), dtype=DTYPES)
def test_prefill_and_decode_flops_and_bytes(name, s, b, dtype):
    # prefill of s tokens does at least the work of s decode steps at context 0 (2·N_act per token) and at most
    # that of s decode steps at full context; bytes are weights + KV written or read; intensity = F / Q
    m = models.get(name)
    f = _quick(lambda: inf.prefill_flops(name, s, b))
    assert b * s * 2 * m.active_params <= f <= b * s * inf.decode_flops(name, s) * (1 + 1e-12)
    q = _quick(lambda: inf.prefill_bytes(name, s, b, dtype))
    assert q >= inf.weights_read_per_step(name, 1, dtype) + b * s * inf.model_kv_bytes_per_token(name) * (1 - 1e-12)
    assert _quick(lambda: inf.prefill_intensity(name, s, b, dtype)) == pytest.approx(f / q)
    qd = _quick(lambda: inf.decode_bytes(name, s, b, dtype))
    assert qd >= b * (s + 1) * inf.model_kv_bytes_per_token(name)
    assert _quick(lambda: inf.decode_flops(name, s, b)) == pytest.approx(b * inf.decode_flops(name, s))


@settings(max_examples=25, deadline=None)
@given(bw=st.floats(1e6, 1e16), w=st.floats(1e3, 1e15), kv=st.floats(0, 1e15))
def test_decode_bound_falls_with_bytes(bw, w, kv):
    t = _quick(lambda: inf.decode_tokens_per_second_bound(bw, w, kv))
    assert t == pytest.approx(bw / (w + kv)) and t <= inf.decode_tokens_per_second_bound(bw, w) * (1 + 1e-12)


@settings(max_examples=25, deadline=None)
@given(mem=st.floats(1e6, 1e18), name=st.sampled_from(ALL), c=BIG_C, f=st.floats(0.01, 1), dtype=DTYPES)
def test_max_batch_is_the_most_that_fit(mem, name, c, f, dtype):
    b = _quick(lambda: inf.max_batch(mem, name, c, dtype, usable_fraction=f))
    assert isinstance(b, int) and b >= 0
    if b:
        assert inf.memory_needed(name, c, b, dtype) <= f * mem * (1 + 1e-12)
    assert inf.memory_needed(name, c, b + 1, dtype) > f * mem * (1 - 1e-12)


@settings(max_examples=25, deadline=None)
@given(mem=st.floats(1e6, 1e18), f=st.floats(0.01, 1), dtype=DTYPES)
def test_largest_model_that_fits_fills_the_memory(mem, f, dtype):
    n = _quick(lambda: inf.largest_model_that_fits(mem, dtype, f))
    assert n * units.BYTES_PER_ELEMENT[dtype] == pytest.approx(f * mem)


@settings(max_examples=25, deadline=None)
@given(p=st.floats(0, 1e9), tps=st.floats(1e-6, 1e12), n=st.integers(0, 10_000_000))
def test_energy_is_power_times_time(p, tps, n):
    # joules per token × tokens per second = watts; an answer of n tokens costs n times a token
    e = _quick(lambda: inf.energy_per_token(p, tps))
    assert e * tps == pytest.approx(p, rel=1e-12, abs=1e-12)
    assert _quick(lambda: inf.energy_per_query(p, tps, n)) == pytest.approx(n * e, rel=1e-12, abs=1e-12)


def test_energy_of_a_configuration_that_does_not_fit_is_refused():
    from chipchain import serving

    d = serving.decode("H100", "Llama-3-8B", 1024, 4096)
    assert not d.fits
    with pytest.raises(ValueError, match="does not fit"):
        inf.energy_per_token(700, d.tokens_per_second)


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16", "fp8", "int8", "int4"])
def test_weight_bytes_one_formula_for_every_model_and_dtype(dtype):
    # N·b in one place: inference.weight_bytes (a model) is memory.inference_weight_bytes (a count), every model
    from chipchain import memory, models, units
    for name in models.names():
        m = models.get(name)
        assert inf.weight_bytes(m, dtype) == memory.inference_weight_bytes(m.params, dtype)
        assert inf.weight_bytes(m, dtype) == pytest.approx(m.params * units.BYTES_PER_ELEMENT[dtype], rel=1e-15)
