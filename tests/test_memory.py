"""chipchain.memory pinned to the ZeRO paper, DeepSeek-V3's recipe, the seeds' numbers, and properties; the chapter's
views (chipchain.views.memory)."""
import csv
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import _data, models, views, widgets
from chipchain import memory as M

RECIPES_CSV = Path(M.__file__).parent / "data" / "recipes.csv"


# --- recipes ----------------------------------------------------------------------------------------------------

def test_recipes_components_and_totals():
    # Rajbhandari et al. 2020 §3.1: mixed precision + Adam is 2Ψ + 2Ψ + 12Ψ = 16Ψ, K = 12
    mixed = M.recipe("mixed-adam")
    assert (mixed.weights, mixed.gradients, mixed.master, mixed.moments) == (2, 2, 4, 8)
    assert mixed.optimizer == 12 and mixed.total == 16
    # FP32 + Adam: 4 + 4 + 8 = 16 (seed 002's "16P")
    assert M.recipe("fp32-adam").total == 16 and M.recipe("fp32-adam").master == 0
    # the 18-byte variant that keeps FP32 gradients (Hugging Face "model training anatomy": 6 + 4 + 8)
    r18 = M.recipe("mixed-adam-fp32-grads")
    assert r18.total == 18 and r18.weights + r18.master == 6 and r18.gradients == 4 and r18.moments == 8


def test_deepseek_v3_fp8_recipe():
    # DeepSeek-AI 2024 (V3 report) Sec. 3.3: FP32 master weights and gradients, BF16 AdamW moments: 4 + 4 + 2 + 2
    r = M.recipe("deepseek-v3-fp8")
    assert (r.weights, r.gradients, r.master, r.moments, r.total) == (0, 4, 4, 4, 12)
    assert "DeepSeek-V3" in r.source
    assert M.state_bytes(models.get("V3").params, r) == pytest.approx(8.052e12)


def test_recipe_aliases_and_registry():
    assert M.recipe("bf16-mixed") is M.recipe("mixed-adam") is M.RECIPES.get("Mixed_Adam")
    assert M.recipe_names() == M.RECIPES.names()
    assert M.recipe(M.recipe("fp32-adam")) is M.recipe("fp32-adam")
    assert "bf16-mixed" in M.RECIPES and "bf17-mixed" not in M.RECIPES


def test_every_recipe_row_has_provenance():
    with open(RECIPES_CSV, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["name"] for r in rows] == M.recipe_names()
    for row in rows:
        assert row["source"].strip() and row["checked"] in _data.CHECK_LEVELS
    for r in M.RECIPES.all():
        assert r.source and r.counts


def test_unknown_recipe_lists_nearest():
    with pytest.raises(KeyError, match="mixed-adam"):
        M.recipe("mixd-adam")
    with pytest.raises(ValueError, match="recipe"):
        M.recipe(16)
    with pytest.raises(KeyError, match="mixed-adam"):
        M.state_bytes(7e9, "mixd-adam")


def test_breakdown_sums_to_total():
    for name in M.recipe_names():
        b = M.state_breakdown(1e9, name)
        assert sum(b.values()) == pytest.approx(M.recipe(name).total * 1e9)


def test_seed_002_seven_b_ledger():
    # seed 002 (a nominal 7B): pure FP32 = 28 + 28 + 56 + 28 (activations) = 140 GB; mixed = 14 + 14 + 84 + 14 = 126
    fp32 = M.rule_of_thumb_ledger(7e9, "fp32-adam")
    mixed = M.rule_of_thumb_ledger(7e9, "mixed-adam")
    assert sum(fp32.values()) == pytest.approx(140e9)
    assert sum(mixed.values()) == pytest.approx(126e9)
    assert fp32["optimizer moments"] == pytest.approx(56e9)
    assert mixed["master weights"] + mixed["optimizer moments"] == pytest.approx(84e9)
    # the saving is 10 %, not half
    assert 1 - sum(mixed.values()) / sum(fp32.values()) == pytest.approx(0.10)
    # seed 002: 70B at 18 B/param = 1.26 TB
    assert sum(M.rule_of_thumb_ledger(70e9).values()) == pytest.approx(1.26e12)


def test_seed_000_running_example_states():
    # seed 000 step ①: 16 B × 175e9 = 2.8 TB = 35 × 80 GB; step ⑤: 2.8 TB / 1024 ≈ 2.7 GB (decimal: 2.73 GB)
    total = M.state_bytes(models.get("175B").params)
    assert total == pytest.approx(2.8e12)
    assert total / 80e9 == pytest.approx(35)
    assert M.zero_bytes_per_gpu(175e9, 1024, 3) == pytest.approx(2.734375e9)


# --- ZeRO -----------------------------------------------------------------------------------------------------

def test_zero_figure_1_of_the_paper():
    # Rajbhandari et al. 2020, Figure 1: Ψ = 7.5B, N_d = 64, K = 12 → 120 GB, 31.4 GB, 16.6 GB, 1.9 GB
    got = [M.zero_bytes_per_gpu(7.5e9, 64, s) / 1e9 for s in range(4)]
    assert got == pytest.approx([120, 31.4, 16.6, 1.9], abs=0.05)
    assert M.zero_bytes_per_gpu(7.5e9, 64, "fsdp") == M.zero_bytes_per_gpu(7.5e9, 64, 3)


@pytest.mark.parametrize("params,dp,expected", [
    (7.5e9, 4, (52.5, 41.3, 30)), (128e9, 64, (536, 284, 32)), (1e12, 1024, (4011.7, 2013.7, 15.6))])
def test_zero_table_1_of_the_paper(params, dp, expected):
    # Rajbhandari et al. 2020, Table 1 (GB per device for P_os, P_os+g, P_os+g+p); the 1T model fits in 16 GB per
    # GPU on 1,024 GPUs with all three stages (Sec. 1)
    got = [M.zero_bytes_per_gpu(params, dp, s) / 1e9 for s in (1, 2, 3)]
    assert got == pytest.approx(list(expected), rel=0.002)


@pytest.mark.parametrize("recipe", M.recipe_names())
def test_zero_bytes_use_every_recipes_own_bytes(recipe):
    # ZeRO §5 for any recipe: stage 0 keeps all B_total·Ψ; stage 1 shards master + moments; stage 2 also the
    # gradients; stage 3 everything — so stage 3 is stage 0 over N_d, and stage 0 − stage 1 is (1 − 1/N_d)·K·Ψ
    r, psi, dp = M.recipe(recipe), 7.5e9, 64
    z = [M.zero_bytes_per_gpu(psi, dp, s, recipe) for s in range(4)]
    assert z[0] == pytest.approx(r.total * psi, rel=1e-12)                  # rounding only
    assert z[0] - z[1] == pytest.approx((1 - 1 / dp) * r.optimizer * psi, rel=1e-9)
    assert z[1] - z[2] == pytest.approx((1 - 1 / dp) * r.gradients * psi, rel=1e-9)
    assert z[3] == pytest.approx(z[0] / dp, rel=1e-12)


def test_zero_fp32_adam_keeps_4_plus_4_bytes():
    # FP32 Adam (ZeRO §3.1: 4 + 4 + 8 = 16 B): ZeRO-1 over 64 keeps 8 B of weights and gradients per parameter,
    # 7.5e9 × (8 + 8/64) = 60.9 GB — the 2 + 2 B figure (31.4 GB) is mixed precision only
    assert M.zero_bytes_per_gpu(7.5e9, 64, 1, "fp32-adam") / 1e9 == pytest.approx(60.94, rel=1e-3)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e6, 1e13), st.integers(1, 100_000), st.sampled_from(M.recipe_names()))
def test_zero_stages_are_ordered(params, dp, recipe):
    # ZeRO-3 ≤ ZeRO-2 ≤ ZeRO-1 ≤ none (BOOK-STANDARD §7), pairwise with a relative tolerance for rounding
    z = [M.zero_bytes_per_gpu(params, dp, s, recipe) for s in range(4)]
    assert all(lower <= higher * (1 + 1e-12) for lower, higher in zip(z[1:], z[:-1]))


@settings(max_examples=100, deadline=None)
@given(st.floats(1e6, 1e13), st.integers(1, 4096), st.sampled_from(M.recipe_names()))
def test_sharded_breakdown_ordered_for_every_recipe(params, dp, recipe):
    z = [sum(M.sharded_state_breakdown(params, dp, s, recipe).values()) for s in range(4)]
    assert all(lower <= higher * (1 + 1e-12) for lower, higher in zip(z[1:], z[:-1]))
    assert z[3] == pytest.approx(z[0] / dp)


def test_zero_bad_input():
    with pytest.raises(ValueError, match="zero must be"):
        M.zero_bytes_per_gpu(1e9, 8, 4)
    with pytest.raises(ValueError, match="dp"):
        M.zero_bytes_per_gpu(1e9, 0, 1)
    with pytest.raises(ValueError, match="params"):
        M.zero_bytes_per_gpu(float("nan"), 8, 1)
    with pytest.raises(ValueError, match="params"):
        M.state_bytes(-1)


# --- ledger, fits, sizing ------------------------------------------------------------------------------------

def test_ledger_fits_and_margin():
    # "7B" is Llama 2 7B, 6.74e9 parameters (Touvron et al. 2023): 16 B each = 107.84 GB of states
    L = M.ledger("7B", microbatch=1, recompute="full")
    assert L.states == pytest.approx(16 * 6.74e9)
    fit = L.fits("H100")
    # an "80 GB" H100 holds 80 GiB = 85.9e9 bytes (NVIDIA's HBM "GB" is binary)
    assert not fit.fits and fit.margin == pytest.approx(80 * 2**30 - L.total)
    assert fit.message.startswith("OOM on H100-SXM by 23")
    ok = M.ledger("7B", dp=8, zero=3, recompute="full").fits("A100")
    assert ok.fits and "to spare" in ok.message
    assert M.ledger("7B", dp=8, zero=3, recompute="full").fits("A100", reserve=84e9).fits is False


def test_ledger_takes_any_alias_or_record():
    ref = M.ledger("Llama-2-70B", tp=8, dp=8, zero=1)
    for m in ("70B", "llama2 70b", models.get("70B")):
        assert M.ledger(m, tp=8, dp=8, zero=1) == ref
    shape = models.custom(layers=4, hidden=256, heads=4, seq=128, vocab=1000)
    assert M.ledger(shape).states == pytest.approx(16 * shape.params)


def test_ledger_running_example_matches_the_plan():
    # 175B on TP 8 × PP 16 × DP 8, ZeRO-1, SP + selective: 16 B × 175e9 / 128 with the optimizer over 8 ranks
    L = M.ledger("175B", tp=8, pp=16, dp=8, zero=1, sequence_parallel=True, recompute="selective", microbatches=16)
    psi = 175e9 / 128
    assert L.states == pytest.approx(4 * psi + 12 * psi / 8)


def test_ledger_fp32_doubles_activations():
    a16 = M.ledger("7B", "mixed-adam").components["activations"]
    a32 = M.ledger("7B", "fp32-adam").components["activations"]
    assert a32 == pytest.approx(2 * a16)


def test_ledger_bad_input():
    with pytest.raises(ValueError, match="heads"):
        M.ledger("175B", tp=7)
    with pytest.raises(KeyError, match="GPT-3-175B"):
        M.ledger("GPT-3-176B")
    with pytest.raises(ValueError, match="model"):
        M.ledger(175e9)
    with pytest.raises(KeyError, match="unknown accelerator"):
        M.ledger("7B").fits("H1000")
    with pytest.raises(ValueError, match="reserve"):
        M.ledger("7B").fits("H100", reserve=-1)


def test_min_gpus():
    assert M.min_gpus(80e9, 80e9) == 1 and M.min_gpus(80.1e9, 80e9) == 2
    assert M.min_gpus(0, 80e9) == 1
    assert M.min_gpus(100e9, 80e9, usable_fraction=0.5) == 3
    with pytest.raises(ValueError, match="capacity"):
        M.min_gpus(1e9, 0)


def test_inference_weight_bytes():
    # Llama 2 70B in INT4: 68.98e9 × 0.5 bytes = 34.5 GB
    assert M.inference_weight_bytes(models.get("70B").params, "int4") == pytest.approx(34.49e9)
    with pytest.raises(ValueError, match="dtype"):
        M.inference_weight_bytes(7e9, "int3")


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["7B", "13B", "70B", "175B"]), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 8, 64]),
       st.sampled_from(["none", "selective", "full"]))
def test_ledger_zero_monotone(name, tp, dp, rc):
    totals = [M.ledger(name, tp=tp, dp=dp, zero=z, recompute=rc).total for z in range(4)]
    assert all(a >= b * (1 - 1e-12) for a, b in zip(totals, totals[1:]))
    assert all(math.isfinite(t) and t > 0 for t in totals)


# --- views (chipchain.views.memory) ------------------------------------------------------------------------------

def test_recipe_table():
    t = views.memory.recipe_table()
    assert list(t.index) == M.recipe_names()
    assert t.loc["deepseek-v3-fp8", "total"] == 12 and t.loc["mixed-adam", "total"] == 16
    assert list(views.memory.recipe_table(["bf16-mixed"]).index) == ["mixed-adam"]


def test_activation_table_for_gpt3():
    t = views.memory.activation_table("175B")
    # Korthikanti et al. 2022 Sec. 4.1: 34 + 5as/h = 34 + 80 = 114 bytes per s·b·h without parallelism
    assert t.loc["no parallelism", "per layer (GB)"] == pytest.approx(114 * 2048 * 12288 / 1e9)
    assert t.loc["TP + SP + selective", "96 layers (GB)"] == pytest.approx(96 * 34 * 2048 * 12288 / 8 / 1e9)


def test_sizing_table_recomputes_seed_004():
    df = views.memory.sizing_table()
    # nominal sizes at 16 B/param: 7B 112 GB (seed: ~100 GB), 13B 208 GB (~200 GB), 70B 1,120 GB (~1 TB)
    assert list(df["train states (GB)"]) == pytest.approx([112, 208, 1120])
    # fewest cards of 24 GiB (25.8e9 B) to hold the states fully sharded: ⌈4.35⌉, ⌈8.07⌉, ⌈43.5⌉ = 5, 9, 44
    # (seed: 4, 8, 32 "to start"); of 80 GiB (85.9e9 B): ⌈1.30⌉, ⌈2.42⌉, ⌈13.04⌉ = 2, 3, 14 — never rounded down
    assert list(df["min 24 GiB cards (train)"]) == [5, 9, 44]
    assert list(df["min 80 GiB cards (train)"]) == [2, 3, 14]
    for col, cap in (("min 24 GiB cards (train)", 24 * 2**30), ("min 80 GiB cards (train)", 80 * 2**30)):
        for need, n in zip(df["train states (GB)"] * 1e9, df[col]):
            assert (n - 1) * cap < need <= n * cap
    assert list(df["int4 weights (GB)"]) == pytest.approx([3.5, 6.5, 35])


def test_memory_explorer_renders():
    ex = views.memory.memory_explorer()
    assert isinstance(ex, widgets.Explorable)
    html = ex.render_current()
    assert "Llama-2-7B" in html and ("Fits" in html or "OOM" in html)


# --- properties: counts of cards are rounded up, never down; sizes are linear and finite ----------------------------

@settings(max_examples=150, deadline=None)
@given(total=st.floats(0, 1e16), card=st.sampled_from(["A100", "H100", "H200", "RTX-4090", "B200", "MI300X"]),
       f=st.floats(0.05, 1.0))
def test_property_min_gpus_never_rounds_down(total, card, f):
    """⌈M / (f·C)⌉ with the catalog's binary capacity: n cards hold it, n − 1 do not (up to 1e-12 of slack)."""
    from chipchain import hardware

    cap = hardware.get(card).memory_bytes
    n = M.min_gpus(total, cap, f)
    assert isinstance(n, int) and n >= 1
    assert n * cap * f >= total * (1 - 1e-12)
    assert n == 1 or (n - 1) * cap * f < total


@settings(max_examples=80, deadline=None)
@given(params=st.floats(1e6, 1e14), recipe=st.sampled_from(M.recipe_names()),
       dtype=st.sampled_from(["fp32", "bf16", "fp16", "fp8", "int8", "int4"]))
def test_property_state_and_weight_bytes_are_linear(params, recipe, dtype):
    r = M.recipe(recipe)
    assert M.state_bytes(params, recipe) == pytest.approx(r.total * params)
    assert sum(M.state_breakdown(params, recipe).values()) == pytest.approx(M.state_bytes(params, recipe))
    assert sum(M.rule_of_thumb_ledger(params, recipe).values()) == pytest.approx(
        (r.total + r.rule_of_thumb_activations) * params)
    assert M.inference_weight_bytes(2 * params, dtype) == pytest.approx(2 * M.inference_weight_bytes(params, dtype))


@settings(max_examples=60, deadline=None)
@given(tp=st.integers(1, 128))
def test_property_ledger_refuses_a_tp_that_splits_a_head(tp):
    g = models.get("175B")
    if g.heads % tp:
        with pytest.raises(ValueError, match="tp"):
            M.ledger(g, tp=tp)
    else:
        assert M.ledger(g, tp=tp, pp=8, dp=8, zero=1).total > 0


@settings(max_examples=100, deadline=None)
@given(card=st.sampled_from(["A100", "H100", "H200", "RTX-4090", "B200", "MI300X"]), share=st.floats(0, 3))
def test_a_reserve_as_large_as_the_card_is_refused_by_name(card, share):
    # usable memory is in (0, capacity]: a reserve ≥ the card is refused naming "reserve", never a negative size
    from chipchain import hardware
    cap = hardware.get(card).memory_bytes
    r = share * cap
    if r < cap:
        assert 0 < M.usable_capacity(card, r) <= cap
        assert M.ledger("7B").fits(card, r).capacity == M.usable_capacity(card, r)
    else:
        for call in (lambda: M.usable_capacity(card, r), lambda: M.ledger("7B").fits(card, r)):
            with pytest.raises(ValueError, match=r"^reserve \(.*is not less than the memory of one"):
                call()
