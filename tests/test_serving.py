"""chipchain.serving: prefill and decode on an accelerator's roofline, the critical batch, GPUs to hold a model."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import _data, hardware, inference, models, roofline, serving

DATACENTER = [a.name for a in hardware.all_accelerators()
              if a.market == "datacenter" and not _data.is_missing(a.memory_bandwidth)
              and not _data.is_missing(a.memory_bytes) and "bf16" in a.precisions()]
assert {"A100-SXM-80GB", "H100-SXM", "B200", "MI300X", "TPU-v5p"} <= set(DATACENTER)


def test_decode_at_batch_1_is_the_bandwidth_bound():
    # Llama 3 8B (8.03 B parameters) in BF16 on an H100 SXM (3.35 TB/s, datasheet): ≈ 209 tokens/s at context 1
    d = serving.decode("H100", "Llama-3-8B", 1, 1)
    kv = 2 * inference.model_kv_bytes_per_token("Llama-3-8B")          # cache of 1 token read + 1 written
    assert d.tokens_per_second == pytest.approx(
        inference.decode_tokens_per_second_bound(3.35e12, 8.03e9 * 2, kv), rel=1e-6)
    assert d.tokens_per_second == pytest.approx(209, abs=1)
    assert d.bound == "memory-bound"


@pytest.mark.parametrize("acc", DATACENTER)
@pytest.mark.parametrize("name", ["Llama-3-8B", "Llama-2-70B", "DeepSeek-V3"])
def test_prefill_compute_bound_decode_memory_bound(acc, name):
    # Pope et al. 2022: prefill is compute-bound, small-batch decode memory-bound. An MoE prompt must be long enough
    # that every routed expert sees many tokens: 2,048 × 8 / 256 = 64 tokens per expert is below every ridge point,
    # 32,768 tokens (1,024 per expert) is above
    prompt = 32768 if models.get(name).is_moe else 2048
    assert serving.prefill(acc, name, prompt).bound == "compute-bound"
    assert serving.decode(acc, name, 2048, 1).bound == "memory-bound"


def test_moe_prefill_needs_long_prompts():
    assert serving.prefill("H100", "DeepSeek-V3", 2048).bound == "memory-bound"


def test_step_time_is_the_roofline_max():
    # A100 80GB datasheet: 312 TFLOP/s BF16 dense, 2,039 GB/s
    d = serving.decode("A100", "Llama-2-70B", 4096, 8, n_gpus=4)
    assert d.fits and d.ridge == pytest.approx(roofline.ridge_point("A100", "bf16"))
    assert d.seconds == pytest.approx(max(d.flops / 312e12, d.nbytes / 2039e9) / 4, rel=1e-9)
    p = serving.prefill("A100", "Llama-2-70B", 4096, n_gpus=4)
    assert p.seconds == pytest.approx(max(p.flops / 312e12, p.nbytes / 2039e9) / 4, rel=1e-9)


def test_critical_batch_is_the_crossing():
    ridge = roofline.ridge_point("H100", "bf16")
    b = serving.critical_batch("H100", "Llama-3-8B", 128)
    assert inference.decode_intensity("Llama-3-8B", 128, b) >= ridge > inference.decode_intensity("Llama-3-8B", 128,
                                                                                                  b - 1)
    assert serving.decode("H100", "Llama-3-8B", 128, b).bound == "compute-bound"
    # at long context the KV cache caps intensity below the ridge: no batch is large enough
    assert serving.critical_batch("H100", "Llama-3-8B", 8192) == math.inf


def test_critical_batch_is_about_the_ridge_for_weight_dominated_decode():
    # Chen 2022: a 16-bit decode turns compute-bound near batch = peak / bandwidth (the ridge point)
    for acc in ("A100", "H100"):
        assert serving.critical_batch(acc, "Llama-2-70B", 1) == pytest.approx(roofline.ridge_point(acc), rel=0.02)


def test_compute_dtype():
    assert serving.compute_dtype("H100", "fp8") == "fp8"
    assert serving.compute_dtype("A100", "fp8") == "bf16"          # no FP8 tensor cores on Ampere
    assert serving.compute_dtype("A100", "int8") == "int8"
    assert serving.compute_dtype("H100", "int4") == "bf16"         # weight-only: dequantise to 16 bits


def test_running_example_needs_eight_a100s():
    # GPT-3 175B in BF16 = 350 GB; 4 × 80 GB × 0.9 = 288 GB usable is too little, 8 hold it
    assert serving.gpus_to_hold("A100", "175B", 2048) == 8
    assert serving.gpus_to_hold("A100", "GPT-3-175B", 2048, weight_dtype="int4") == 2


def test_quantization_at_most_doubles_memory_bound_speed():
    """Seed 004: 'int8 ... speeds inference 2–4×'. From bandwidth alone the batch-1 speed-up is at most 2× (below,
    because the KV cache stays 16-bit)."""
    s16 = serving.decode("A100", "Llama-2-7B", 1024, 1, "bf16").tokens_per_second
    s8 = serving.decode("A100", "Llama-2-7B", 1024, 1, "int8", "bf16").tokens_per_second
    assert 1.5 < s8 / s16 <= 2.0


def test_batching_cuts_energy_per_token():
    d1, d64 = serving.decode("H100", "Llama-3-8B", 1024, 1), serving.decode("H100", "Llama-3-8B", 1024, 64)
    assert inference.energy_per_token(700, d64.tokens_per_second) < inference.energy_per_token(
        700, d1.tokens_per_second) / 30


@settings(max_examples=30, deadline=None)
@given(b=st.integers(1, 511), c=st.sampled_from([1, 512, 4096, 32768]),
       name=st.sampled_from(["Llama-3-8B", "Llama-2-70B", "DeepSeek-V3"]),
       dtype=st.sampled_from(["bf16", "fp8", "int4"]))
def test_more_batch_never_lowers_throughput(b, c, name, dtype):
    lo, hi = serving.decode("H100", name, c, b, dtype, n_gpus=64), serving.decode("H100", name, c, b + 1, dtype,
                                                                                   n_gpus=64)
    if not hi.fits:                                  # no throughput is reported for what memory cannot hold
        return
    assert hi.tokens_per_second >= lo.tokens_per_second * (1 - 1e-12)
    assert hi.per_sequence_tokens_per_second <= lo.per_sequence_tokens_per_second * (1 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(b=st.integers(1, 256), c=st.sampled_from([1, 512, 4096]),
       name=st.sampled_from(["Llama-3-8B", "Llama-2-70B", "Llama-2-7B"]))
def test_fewer_bits_never_slower(b, c, name):
    speeds = [serving.decode("H100", name, c, b, d, n_gpus=8).tokens_per_second for d in ("bf16", "fp8", "int4")]
    assert speeds[0] <= speeds[1] * (1 + 1e-12) and speeds[0] <= speeds[2] * (1 + 1e-12)


def test_records_are_frozen_and_names_resolve():
    d = serving.decode("h100 sxm5", "8B", 1024)
    assert (d.accelerator, d.model) == ("H100-SXM", "Llama-3-8B")
    with pytest.raises(AttributeError):
        d.batch = 2
    assert serving.decode("H100", "70B", 1024) == serving.decode("H100-SXM", "Llama-2-70B", 1024)


def test_missing_catalog_figure_fails_by_name():
    # the WSE-3 row has no dense peak at any precision; TPU v4 has no power figure
    with pytest.raises(ValueError, match="Cerebras-WSE-3 has no BF16 or FP16 peak"):
        serving.decode("WSE-3", "Llama-3-8B", 1024)
    d = serving.decode("TPU-v4", "Llama-3-8B", 1024)
    with pytest.raises(ValueError, match="TPU-v4 has no 'tdp' figure"):
        inference.energy_per_token(hardware.get("TPU-v4").tdp, d.tokens_per_second)


@pytest.mark.parametrize("call", [
    lambda: serving.decode("H100", "Llama-3-8B", 1024, 0),
    lambda: serving.decode("H100", "Llama-3-8B", 1024, True),
    lambda: serving.decode("H100", "Llama-3-8B", 1024, 1, "fp4"),
    lambda: serving.decode("H100", "Llama-3-8B", 1024, 1, n_gpus=0),
    lambda: serving.prefill("H100", "Llama-3-8B", 0),
    lambda: serving.critical_batch("H100", "Llama-3-8B", 128, batch_limit=0),
    lambda: serving.gpus_to_hold("A100", "Llama-3.1-405B", 131072, batch=64),
    lambda: serving.gpus_to_hold("A100", "Llama-3-8B", 1024, choices=()),
    lambda: serving.gpus_to_hold("A100", "Llama-3-8B", 1024, usable_fraction=0),
    lambda: serving.compute_dtype("H100", "fp4"),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_accelerator_lists_nearest():
    with pytest.raises(KeyError, match="H100"):
        serving.decode("H101", "Llama-3-8B", 1)


# --- issue 13: nothing that does not fit gets a throughput; prefill's crossing; every public function's properties --

import time

from chipchain import views

_MODELS = ["Llama-3-8B", "Llama-2-70B", "Llama-3.1-405B", "DeepSeek-V3", "GPT-3-175B"]
_ACCS = ["A100", "H100", "H200", "B200", "MI300X", "RTX-4090"]


def _quick(call):
    """Run ``call`` and insist it answers within a second (the book's 'nothing hangs' rule)."""
    t = time.process_time()
    out = call()
    assert time.process_time() - t < 1.0
    return out


@settings(max_examples=60, deadline=None)
@given(acc=st.sampled_from(_ACCS), name=st.sampled_from(_MODELS), c=st.integers(1, 10_000_000),
       b=st.integers(1, 1_000_000), n=st.sampled_from([1, 2, 8, 64, 1024, 1_000_000]),
       dtype=st.sampled_from(["bf16", "fp8", "int4"]), phase=st.sampled_from(["decode", "prefill"]))
def test_no_throughput_for_a_configuration_that_does_not_fit(acc, name, c, b, n, dtype, phase):
    # the world: a model whose weights + KV cache exceed the GPUs' memory cannot be served at all from it
    e = _quick(lambda: getattr(serving, phase)(acc, name, c, b, dtype, n_gpus=n))
    need = inference.memory_needed(name, c, b, dtype, "bf16")
    assert e.memory_needed == need and e.fits == (need <= n * hardware.get(acc).memory_bytes)
    if e.fits:
        assert math.isfinite(e.tokens_per_second) and e.tokens_per_second > 0
        assert e.per_sequence_tokens_per_second == pytest.approx(e.tokens_per_second / b)
    else:
        for x in (e.tokens_per_second, e.per_sequence_tokens_per_second, e.seconds):
            assert isinstance(x, serving.DoesNotFit) and str(x) == "does not fit"
            with pytest.raises(ValueError, match="does not fit"):
                float(x)
            with pytest.raises(ValueError, match="does not fit"):
                f"{x:,.0f}"
    assert math.isfinite(e.intensity) and 0 < e.utilisation <= 1


def _batch_rows(acc, name, c, batches, dtype="bf16"):
    return views.inference.batch_table(acc, name, c, batches, dtype), {
        b: serving.decode(acc, name, c, b, dtype).fits for b in batches}


def _quant_rows(acc, name, c, batch=1):
    return views.inference.quantization_table(acc, name, c, batch), {
        d: serving.decode(acc, name, c, batch, d).fits for d in ("bf16", "fp8", "int8", "int4")}


def _serving_rows(accs, name, c, dtype):
    return views.inference.serving_table(accs, name, c, dtype), {
        hardware.get(a).name: inference.max_batch(hardware.get(a).memory_bytes, name, c, dtype) > 0 for a in accs}


@pytest.mark.parametrize("case", [
    lambda: _batch_rows("H100", "Llama-3-8B", 1024, (1, 64, 1024, 100_000)),
    lambda: _batch_rows("A100", "Llama-2-70B", 4096, (1, 8)),
    lambda: _serving_rows(["A100", "H100", "RTX-4090", "B200"], "Llama-3-70B", 32768, "bf16"),
    lambda: _quant_rows("A100", "Llama-2-70B", 1024),
    lambda: _quant_rows("RTX-4090", "Llama-3-8B", 8192, batch=64),
])
def test_no_table_prints_a_throughput_for_what_does_not_fit(case):
    # every tokens/s cell is a finite number exactly when the configuration fits, and "does not fit" otherwise
    table, fits = case()
    cols = [c for c in table.columns if c.startswith("tokens/s")]
    assert cols and set(fits) == set(table.index) and not all(fits.values())
    for key, ok in fits.items():
        for c in cols:
            v = table.loc[key, c]
            assert (isinstance(v, (int, float)) and math.isfinite(v)) if ok else v == "does not fit", (key, c, v)


def test_figure_marks_the_batch_that_does_not_fit():
    # Llama 3 8B at 2,048 tokens: batch 512 needs 16 GB of weights + 137 GB of KV cache, more than an H100 holds
    pts = views.inference.decode_roofline_points("H100", "Llama-3-8B", 2048, (1, 64, 512))
    marked = [k for k in pts if "does not fit" in k]
    assert marked == [k for k in pts if k.startswith("decode, batch 512")] and len(marked) == 1


def test_explorer_never_shows_a_throughput_it_cannot_hold():
    for model in ("Llama-3-8B", "Llama-2-70B", "DeepSeek-V3"):
        for batch in (1, 1024):
            try:
                html = views.inference.serving_view(model, batch, 32768, "bf16", "H100-SXM")
            except ValueError as err:          # more than 64 GPUs: the widget shows this one line
                assert "needs" in str(err)
                continue
            assert "tokens/s" in html and "does not fit" not in html


def test_prefill_turns_compute_bound_near_r_b_over_2():
    # dense prefill intensity ≈ 2s/b (Pope et al. 2022), so it crosses the ridge R at s* ≈ R·b/2:
    # H100 BF16 ridge 989.4e12 / 3.35e12 = 295 → ~295 tokens; A100 312e12 / 2.039e12 = 153 → ~153
    for acc in ("H100", "A100"):
        r = roofline.ridge_point(acc, "bf16")
        s = serving.prefill_critical_tokens(acc, "Llama-3-8B")
        assert s == pytest.approx(r, rel=0.02)
        assert serving.prefill(acc, "Llama-3-8B", s).bound == "compute-bound"
        assert serving.prefill(acc, "Llama-3-8B", s - 1).bound == "memory-bound"
    # INT4 weights quarter b, so a quarter of the tokens; an MoE needs far longer prompts (experts are read anyway)
    assert serving.prefill_critical_tokens("H100", "Llama-3-8B", weight_dtype="int4") == pytest.approx(295 / 4, rel=0.03)
    assert serving.prefill_critical_tokens("H100", "DeepSeek-V3") > 10 * serving.prefill_critical_tokens("H100", "8B")


@settings(max_examples=40, deadline=None)
@given(acc=st.sampled_from(_ACCS), name=st.sampled_from(_MODELS), b=st.integers(1, 1_000_000),
       dtype=st.sampled_from(["bf16", "fp8", "int8", "int4"]))
def test_prefill_critical_tokens_is_the_crossing(acc, name, b, dtype):
    s = _quick(lambda: serving.prefill_critical_tokens(acc, name, b, dtype))
    r = roofline.ridge_point(acc, serving.compute_dtype(acc, dtype))
    assert s == math.inf or (inference.prefill_intensity(name, s, b, dtype) >= r and
                             (s == 1 or inference.prefill_intensity(name, s - 1, b, dtype) < r))


@settings(max_examples=40, deadline=None)
@given(acc=st.sampled_from(_ACCS), name=st.sampled_from(_MODELS), c=st.integers(1, 10_000_000),
       dtype=st.sampled_from(["bf16", "fp8", "int4"]), cap=st.integers(1, 1 << 30))
def test_critical_batch_is_a_crossing_or_inf(acc, name, c, dtype, cap):
    b = _quick(lambda: serving.critical_batch(acc, name, c, dtype, batch_limit=cap))
    r = roofline.ridge_point(acc, serving.compute_dtype(acc, dtype))
    if b == math.inf:
        assert inference.decode_intensity(name, c, cap, dtype) < r
    else:
        assert 1 <= b <= cap and inference.decode_intensity(name, c, b, dtype) >= r
        assert b == 1 or inference.decode_intensity(name, c, b - 1, dtype) < r


@settings(max_examples=40, deadline=None)
@given(acc=st.sampled_from(_ACCS), name=st.sampled_from(_MODELS), c=st.integers(1, 1_000_000),
       b=st.integers(1, 10_000), choices=st.lists(st.integers(1, 1_000_000), min_size=1, max_size=20))
def test_gpus_to_hold_is_the_fewest_that_hold(acc, name, c, b, choices):
    per = hardware.get(acc).memory_bytes * 0.9
    need = inference.memory_needed(name, c, b)
    try:
        n = _quick(lambda: serving.gpus_to_hold(acc, name, c, b, choices=choices))
    except ValueError as err:
        assert max(choices) * per < need and "needs" in str(err)
        return
    assert n in choices and n * per >= need
    assert all(k * per < need for k in choices if k < n)         # never rounded down: no smaller choice holds it


@settings(max_examples=30, deadline=None)
@given(acc=st.sampled_from(_ACCS + ["TPU-v5p", "Gaudi-3", "Ascend-910B"]),
       dtype=st.sampled_from(["bf16", "fp16", "fp8", "int8", "int4", "fp32"]))
def test_compute_dtype_is_a_precision_the_part_has(acc, dtype):
    d = _quick(lambda: serving.compute_dtype(acc, dtype))
    assert d in hardware.get(acc).precisions() and (d == dtype or d in ("bf16", "fp16"))
    assert dtype != "int4" or d in ("bf16", "fp16")              # weight-only INT4 computes in 16 bits
