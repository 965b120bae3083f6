"""chipchain.inference: pinned to published KV-cache sizes and model shapes, plus roofline properties."""
import csv
import math
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import hardware, inference as inf, roofline
from chipchain.walkthrough import Walkthrough

DENSE = ["GPT-3-175B", "Llama-2-7B", "Llama-2-13B", "Llama-2-70B", "Llama-3-8B", "Llama-3-70B", "Llama-3.1-405B",
         "DeepSeek-67B"]
DATACENTER = [a.name for a in hardware.all_accelerators()
              if a.market == "datacenter" and a.memory_bandwidth and "bf16" in a.precisions()]


# --- data files -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("filename", ["models.csv", "serving_devices.csv", "process_nodes.csv"])
def test_every_row_has_source_and_check_level(filename):
    with resources.files("chipchain").joinpath(f"data/{filename}").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows
    for r in rows:
        assert r["source"].strip(), f"{filename}: row {r} has no source"
        assert r["checked"] in ("V", "V2", "U"), f"{filename}: row {r} has check level {r['checked']!r}"


def test_estimates_say_so():
    for name in inf.devices():
        d = inf.device(name)
        if d.is_estimate:
            assert "estimate" in d.notes.lower(), f"{name} is unverified but its notes do not say 'estimate'"


@pytest.mark.parametrize("name", DENSE)
def test_table_params_match_the_shape(name):
    """The published parameter count is reproduced from the layer shapes within 1 % (dense models only)."""
    m = inf.model(name)
    n = inf.dense_params(m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, m.vocab, m.mlp_matrices,
                         m.tied_embeddings)
    assert n == pytest.approx(m.params, rel=0.01)


def test_published_shapes():
    # Touvron et al. 2023 Sec. 2.2: the 70B model uses grouped-query attention with 8 KV heads
    l70 = inf.model("Llama-2-70B")
    assert (l70.layers, l70.heads, l70.kv_heads, l70.head_dim) == (80, 64, 8, 128)
    # Dubey et al. 2024 Table 3
    l405 = inf.model("Llama-3.1-405B")
    assert (l405.layers, l405.hidden, l405.heads, l405.kv_heads) == (126, 16384, 128, 8)
    # DeepSeek-V3: 671 B total, 37 B activated, MLA with d_c = 512 and d_h^R = 64 (DeepSeek-AI 2024, Sec. 4.2)
    v3 = inf.model("DeepSeek-V3")
    assert (v3.params, v3.active_params, v3.kv_lora_rank, v3.rope_head_dim) == (671e9, 37e9, 512, 64)


# --- KV cache -------------------------------------------------------------------------------------------------------

def test_kv_bytes_match_zhao_2025_table_1():
    # Zhao et al. 2025 (Insights into DeepSeek-V3), Table 1, KV cache per token in BF16
    assert inf.model("DeepSeek-V3").kv_bytes_per_token("bf16") == pytest.approx(70.272e3, abs=1)
    assert inf.model("Llama-3.1-405B").kv_bytes_per_token("bf16") == pytest.approx(516.096e3, abs=1)
    assert inf.kv_bytes_per_token(80, 8, 128) == pytest.approx(327.680e3, abs=1)      # Qwen-2.5 72B: 80 layers, GQA-8


def test_llama2_70b_gqa_is_an_eighth_of_mha():
    m = inf.model("Llama-2-70B")
    assert m.kv_bytes_per_token() == 327_680
    mha = inf.kv_bytes_per_token(m.layers, m.heads, m.head_dim)
    assert mha / m.kv_bytes_per_token() == 8                                          # 64 query heads / 8 KV heads


def test_deepseek_v2_mla_equals_gqa_with_2_25_groups():
    # DeepSeek-V2 report, Table 1: MLA caches (d_c + d_h^R)·l = 4.5·d_h·l elements, "equal to GQA with 2.25 groups"
    v2 = inf.model("DeepSeek-V2")
    mla = v2.kv_bytes_per_token()
    assert mla == inf.kv_bytes_per_token(v2.layers, kv_heads=1, head_dim=128) * 2.25
    assert (v2.kv_lora_rank + v2.rope_head_dim) / (2 * v2.head_dim) == 2.25


def test_deepseek_v2_93_percent_claim_is_a_deployment_figure():
    """DeepSeek-V2's abstract: 'reduces the KV cache by 93.3%' against DeepSeek 67B. Reproduced only when V2's
    cache is quantised to 6 bits per element on average (its Sec. 3.2.3) against a 16-bit 67B cache."""
    v2, d67 = inf.model("DeepSeek-V2"), inf.model("DeepSeek-67B")
    deployed = inf.kv_bytes_per_token(v2.layers, latent_dim=v2.kv_lora_rank + v2.rope_head_dim,
                                      bytes_per_element=6 / 8)
    assert 1 - deployed / d67.kv_bytes_per_token("bf16") == pytest.approx(0.933, abs=0.0005)
    # same precision on both sides, the architecture alone saves less
    assert 1 - v2.kv_bytes_per_token() / d67.kv_bytes_per_token() == pytest.approx(0.822, abs=0.001)


def test_running_example_kv_cache():
    m = inf.model_from_walkthrough(Walkthrough())
    assert m.kv_bytes_per_token() == 2 * 96 * 12288 * 2                               # 4.72 MB per token
    assert inf.kv_cache_bytes(m, 2048) == pytest.approx(9.664e9, rel=1e-3)
    assert inf.weight_bytes(m, "bf16") == 350e9
    assert inf.gpus_to_hold("A100", m, 2048) == 8
    # the walkthrough's overrides flow through
    assert inf.model_from_walkthrough(Walkthrough(layers=48)).kv_bytes_per_token() == m.kv_bytes_per_token() / 2


def test_mha_gqa_mla_ordering():
    per_param = {n: inf.model(n).kv_bytes_per_token() / inf.model(n).params
                 for n in ("Llama-2-7B", "Llama-3-8B", "DeepSeek-V3")}
    assert per_param["Llama-2-7B"] > per_param["Llama-3-8B"] > per_param["DeepSeek-V3"]


# --- prefill, decode, roofline --------------------------------------------------------------------------------------

def test_decode_bound_is_bandwidth_over_bytes():
    d = inf.decode("H100", "Llama-3-8B", 1, 1)
    expected = inf.decode_tokens_per_second_bound(3.35e12, 8.03e9 * 2, 2 * 131072)
    assert d.tokens_per_second == pytest.approx(expected, rel=1e-6)
    assert d.tokens_per_second == pytest.approx(209, abs=1)


@pytest.mark.parametrize("acc", DATACENTER)
@pytest.mark.parametrize("name", ["Llama-3-8B", "Llama-2-70B", "DeepSeek-V3"])
def test_prefill_compute_bound_decode_memory_bound(acc, name):
    # an MoE prompt must be long enough that every routed expert sees many tokens: 2,048 tokens × 8 / 256 experts
    # = 64 tokens per expert is below every ridge point, 32,768 tokens (1,024 per expert) is above
    prompt = 32768 if inf.model(name).is_moe else 2048
    assert inf.prefill(acc, name, prompt).bound == "compute-bound"
    assert inf.decode(acc, name, 2048, 1).bound == "memory-bound"


def test_moe_prefill_needs_long_prompts():
    assert inf.prefill("H100", "DeepSeek-V3", 2048).bound == "memory-bound"
    flops = 2 * 37e9 * 2048 + 2 * 61 * 2048**2 * 128 * 128          # matmuls + causal attention
    nbytes = 2 * 671e9 + 2048 * 70272                                 # every expert touched, plus the KV written
    assert inf.prefill_intensity("DeepSeek-V3", 2048) == pytest.approx(flops / nbytes, rel=1e-3)


def test_phase_uses_roofline():
    d = inf.decode("A100", "Llama-2-70B", 4096, 8)
    assert d.ridge == pytest.approx(roofline.ridge_point("A100", "bf16"))
    assert d.seconds == pytest.approx(max(d.flops / 312e12, d.nbytes / 2039e9), rel=1e-9)


def test_decode_intensity_near_2b_over_bytes():
    # while weights dominate the bytes, intensity ≈ 2·B / bytes-per-weight
    for b, dtype in ((1, "bf16"), (8, "bf16"), (8, "fp8"), (8, "int4")):
        i = inf.decode_intensity("Llama-3-70B", 1, b, dtype)
        assert i == pytest.approx(2 * b / inf.STORAGE_DTYPES[dtype], rel=0.02)


def test_critical_batch_is_the_crossing():
    ridge = roofline.ridge_point("H100", "bf16")
    b = inf.critical_batch("H100", "Llama-3-8B", 128)
    assert inf.decode_intensity("Llama-3-8B", 128, b) >= ridge > inf.decode_intensity("Llama-3-8B", 128, b - 1)
    assert inf.decode("H100", "Llama-3-8B", 128, b).bound == "compute-bound"
    # at long context the KV cache caps intensity below the ridge: no batch is large enough
    assert inf.critical_batch("H100", "Llama-3-8B", 8192) == math.inf


def test_max_batch_is_tight():
    m, mem, c = "Llama-3-70B", 180e9, 4096
    b = inf.max_batch(mem, m, c, "fp8")
    room = 0.9 * mem - inf.weight_bytes(m, "fp8")
    assert inf.kv_cache_bytes(m, c, b) <= room < inf.kv_cache_bytes(m, c, b + 1)
    assert inf.max_batch(80e9, "Llama-3-70B", c, "bf16") == 0                        # 141 GB of weights


def test_memory_column_claim():
    """Seed 000: going from 80 GB / 3.35 TB/s to 180 GB / 8 TB/s changes what can be served more than the FLOPS
    doubling. Capacity grows 2.25×, but the batch that fits grows far more, because weights are a fixed cost."""
    h, b = hardware.get("H100"), hardware.get("B200")
    cap_ratio = b.memory_bytes / h.memory_bytes
    batch_ratio = inf.max_batch(b.memory_bytes, "Llama-3-70B", 4096, "fp8") / \
        max(inf.max_batch(h.memory_bytes, "Llama-3-70B", 4096, "fp8"), 1)
    assert cap_ratio == pytest.approx(2.25)
    assert batch_ratio > 10 * cap_ratio


def test_moe_weights_read():
    v3 = inf.model("DeepSeek-V3")
    assert inf.weights_read_per_step(v3, 1, "bf16") == pytest.approx(2 * 37e9, rel=1e-9)
    assert inf.weights_read_per_step(v3, 4096, "bf16") == pytest.approx(2 * 671e9, rel=1e-6)
    reads = [inf.weights_read_per_step(v3, b) for b in (1, 2, 8, 64, 512)]
    assert reads == sorted(reads)
    assert inf.weights_read_per_step("Llama-3-8B", 64) == inf.weight_bytes("Llama-3-8B")


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 511), c=st.sampled_from([1, 512, 4096, 32768]),
       name=st.sampled_from(["Llama-3-8B", "Llama-2-70B", "DeepSeek-V3"]),
       dtype=st.sampled_from(["bf16", "fp8", "int4"]))
def test_batching_raises_throughput_and_lowers_per_user_speed(b, c, name, dtype):
    lo, hi = inf.decode("H100", name, c, b, dtype), inf.decode("H100", name, c, b + 1, dtype)
    assert hi.tokens_per_second >= lo.tokens_per_second * (1 - 1e-12)
    assert hi.per_sequence_tokens_per_second <= lo.per_sequence_tokens_per_second * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 256), c=st.sampled_from([1, 512, 4096]),
       name=st.sampled_from(["Llama-3-8B", "Llama-2-70B", "Llama-2-7B"]))
def test_fewer_bits_never_slower(b, c, name):
    speeds = [inf.decode("H100", name, c, b, d).tokens_per_second for d in ("bf16", "fp8", "int4")]
    assert speeds[0] <= speeds[1] * (1 + 1e-12) and speeds[0] <= speeds[2] * (1 + 1e-12)


def test_quantization_halves_memory_and_at_most_doubles_memory_bound_speed():
    """Seed 004: 'int8 halves the memory and speeds inference 2–4×'. Halving: exact. From bandwidth alone, the
    batch-1 speed-up is at most 2× (it is below 2× because the KV cache is not halved here)."""
    assert inf.weight_bytes("Llama-2-7B", "int8") / inf.weight_bytes("Llama-2-7B", "bf16") == 0.5
    s16 = inf.decode("A100", "Llama-2-7B", 1024, 1, "bf16").tokens_per_second
    s8 = inf.decode("A100", "Llama-2-7B", 1024, 1, "int8", "bf16").tokens_per_second
    assert 1.5 < s8 / s16 <= 2.0


def test_energy_per_token():
    assert inf.energy_per_token(700, 200) == 3.5
    assert inf.energy_per_query(700, 200, 1000) == 3500
    d1, d64 = inf.decode("H100", "Llama-3-8B", 1024, 1), inf.decode("H100", "Llama-3-8B", 1024, 64)
    assert inf.energy_per_token(700, d64.tokens_per_second) < inf.energy_per_token(700, d1.tokens_per_second) / 30


# --- edge and the end of easy scaling -------------------------------------------------------------------------------

def test_edge_fit():
    t = inf.edge_fit_table()
    assert t.loc[("Llama-2-7B", "int4"), "8 GB"] == "✓"
    assert t.loc[("Llama-2-7B", "bf16"), "8 GB"] == "✗"                              # 13.5 GB of weights
    assert t.loc[("Llama-2-70B", "int4"), "16 GB"] == "✗"                            # 34.5 GB of weights
    assert inf.largest_model_that_fits(16e9, "int4") == 24e9
    nano = inf.device("Jetson-Orin-Nano-8GB")
    tps = inf.decode_tokens_per_second_bound(nano.memory_bandwidth, inf.weight_bytes("Llama-3-8B", "int4"))
    assert tps == pytest.approx(68e9 / 4.015e9, rel=1e-3)


def test_process_nodes_and_projection():
    gaps = inf.node_intervals()
    assert list(gaps) == ["N7→N5", "N5→N3", "N3→N2"]
    assert all(1.5 < g < 3.5 for g in gaps.values())
    assert inf.doubling_projection(2015) == 1.0
    assert inf.doubling_projection(2027, 3) == pytest.approx(16.0)
    assert inf.doubling_projection(2027, 4) == pytest.approx(8.0)


def test_plot_helpers_return_axes():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = inf.plot_moore_projection()
    assert ax.get_ylabel().startswith("transistors")
    assert len(ax.get_lines()) >= 4
    plt.close("all")


# --- bad input ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: inf.kv_bytes_per_token(0, 8, 128),
    lambda: inf.kv_bytes_per_token(80, 8, 128, bytes_per_element=float("nan")),
    lambda: inf.kv_bytes_per_token(80, 8, 128, latent_dim=576),
    lambda: inf.kv_bytes_per_token(80),
    lambda: inf.kv_cache_bytes("Llama-3-8B", -5),
    lambda: inf.decode("H100", "Llama-3-8B", 1024, 0),
    lambda: inf.decode("H100", "Llama-3-8B", 1024, True),
    lambda: inf.decode("H100", "Llama-3-8B", 1024, 1, "fp4"),
    lambda: inf.decode("H100", "Llama-3-8B", 1024, 1, n_gpus=0),
    lambda: inf.decode_tokens_per_second_bound(float("inf"), 1e9),
    lambda: inf.decode_tokens_per_second_bound(1e12, 0),
    lambda: inf.energy_per_token(700, 0),
    lambda: inf.max_batch(80e9, "Llama-3-8B", 1024, usable_fraction=1.5),
    lambda: inf.gpus_to_hold("A100", "Llama-3.1-405B", 131072, batch=64),
    lambda: inf.doubling_projection(2030, 0),
    lambda: inf.ModelConfig("x", 1e9, 2e9, 1, 64, 1, 1, 64),
    lambda: inf.ModelConfig("x", 1e9, 1e9, 1, 64, 4, 8, 16),
    lambda: inf.model(42),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_names_list_nearest():
    with pytest.raises(KeyError, match="Llama-3-70B"):
        inf.model("llama-3-71b")
    with pytest.raises(KeyError, match="Groq-LPU"):
        inf.device("groqq")
    with pytest.raises(KeyError, match="H100"):
        inf.decode("H101", "Llama-3-8B", 1)
