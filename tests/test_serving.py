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
    d = serving.decode("A100", "Llama-2-70B", 4096, 8)
    assert d.ridge == pytest.approx(roofline.ridge_point("A100", "bf16"))
    assert d.seconds == pytest.approx(max(d.flops / 312e12, d.nbytes / 2039e9), rel=1e-9)
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
    lo, hi = serving.decode("H100", name, c, b, dtype), serving.decode("H100", name, c, b + 1, dtype)
    assert hi.tokens_per_second >= lo.tokens_per_second * (1 - 1e-12)
    assert hi.per_sequence_tokens_per_second <= lo.per_sequence_tokens_per_second * (1 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(b=st.integers(1, 256), c=st.sampled_from([1, 512, 4096]),
       name=st.sampled_from(["Llama-3-8B", "Llama-2-70B", "Llama-2-7B"]))
def test_fewer_bits_never_slower(b, c, name):
    speeds = [serving.decode("H100", name, c, b, d).tokens_per_second for d in ("bf16", "fp8", "int4")]
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
