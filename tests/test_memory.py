"""chipchain.memory pinned to the ZeRO and Korthikanti papers, the seeds' numbers, and properties."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import memory as M

GPT3 = dict(seq=2048, batch=1, hidden=12288, heads=96)


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


def test_unknown_recipe_lists_nearest():
    with pytest.raises(KeyError, match="mixed-adam"):
        M.recipe("mixd-adam")
    with pytest.raises(ValueError, match="recipe"):
        M.recipe(16)


def test_breakdown_sums_to_total():
    for name in M.recipe_names():
        b = M.state_breakdown(1e9, name)
        assert sum(b.values()) == pytest.approx(M.recipe(name).total * 1e9)


def test_seed_002_seven_b_ledger():
    # seed 002: pure FP32 7B = 28 + 28 + 56 + 28 (activations) = 140 GB; mixed = 14 + 14 + 84 + 14 = 126 GB (18P)
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
    total = M.state_bytes(175e9)
    assert total == pytest.approx(2.8e12)
    assert total / 80e9 == pytest.approx(35)
    assert M.zero_bytes_per_gpu(175e9, 1024, 3) == pytest.approx(2.734375e9)


# --- ZeRO -----------------------------------------------------------------------------------------------------

def test_zero_figure_1_of_the_paper():
    # Rajbhandari et al. 2020, Figure 1: Ψ = 7.5B, N_d = 64, K = 12 → 120 GB, 31.4 GB, 16.6 GB, 1.9 GB
    got = [M.zero_bytes_per_gpu(7.5e9, 64, s) / 1e9 for s in range(4)]
    assert got == pytest.approx([120, 31.4, 16.6, 1.9], abs=0.05)
    assert M.zero_bytes_per_gpu(7.5e9, 64, "fsdp") == M.zero_bytes_per_gpu(7.5e9, 64, 3)


def test_zero_agrees_with_sharded_breakdown():
    for s in range(4):
        assert sum(M.sharded_state_breakdown(7.5e9, 64, s).values()) == pytest.approx(
            M.zero_bytes_per_gpu(7.5e9, 64, s))


@settings(max_examples=200, deadline=None)
@given(st.floats(1e6, 1e13), st.integers(1, 100_000), st.floats(0, 20))
def test_zero_stages_are_ordered(params, dp, k):
    z = [M.zero_bytes_per_gpu(params, dp, s, k) for s in range(4)]
    # pairwise, with a relative tolerance for rounding (at dp = 1 all four stages are equal)
    assert all(lower <= higher * (1 + 1e-12) for lower, higher in zip(z[1:], z[:-1]))


def test_zero_bad_input():
    with pytest.raises(ValueError, match="stage"):
        M.zero_bytes_per_gpu(1e9, 8, 4)
    with pytest.raises(ValueError, match="dp"):
        M.zero_bytes_per_gpu(1e9, 0, 1)
    with pytest.raises(ValueError, match="params"):
        M.zero_bytes_per_gpu(float("nan"), 8, 1)


# --- activations ------------------------------------------------------------------------------------------------

def test_korthikanti_table_2_formulas():
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    sbh = s * b * h
    f = M.activation_bytes_per_layer
    assert f(s, b, h, a) == pytest.approx(sbh * (34 + 5 * a * s / h))
    assert f(s, b, h, a, tp=t) == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)))
    assert f(s, b, h, a, tp=t, sequence_parallel=True) == pytest.approx(sbh * (34 / t + 5 * a * s / (h * t)))
    assert f(s, b, h, a, tp=t, recompute="selective") == pytest.approx(sbh * (10 + 24 / t))
    assert f(s, b, h, a, tp=t, sequence_parallel=True, recompute="selective") == pytest.approx(34 * sbh / t)
    assert f(s, b, h, a, tp=t, recompute="full") == pytest.approx(2 * sbh)
    # t = 1: the tensor-parallel formula reduces to the unparallelised one
    assert f(s, b, h, a, tp=1) == f(s, b, h, a, tp=1, sequence_parallel=True)


def test_korthikanti_selective_savings_for_gpt3_and_mtnlg():
    # Korthikanti et al. 2022 §4.3: 5as/h = 80 for GPT-3 and 64 for MT-NLG; selective recomputation saves
    # 70 % and 65 % of the activation memory
    assert 5 * 96 * 2048 / 12288 == 80 and 5 * 128 * 2048 / 20480 == 64
    for (h, a), saved in (((12288, 96), 0.70), ((20480, 128), 0.65)):
        full = M.activation_bytes_per_layer(2048, 1, h, a, tp=8, sequence_parallel=True)
        sel = M.activation_bytes_per_layer(2048, 1, h, a, tp=8, sequence_parallel=True, recompute="selective")
        assert 1 - sel / full == pytest.approx(saved, abs=0.005)


def test_table_3_configurations_first_stage():
    # Korthikanti et al. Table 3 (TP 8; PP 1, 8, 35, 64; micro-batch 1): first stage holds L layers' worth,
    # sbhL·34/t with SP + selective; the 1T model at 2048 tokens: 128 × 34 × 2048 × 25600 / 8 bytes
    for name, pp in (("22B", 1), ("175B", 8), ("530B", 35), ("1T", 64)):
        m = M.model(name)
        got = M.activation_bytes_per_stage(m.seq, 1, m.hidden, m.heads, m.layers, pp=pp, tp=8,
                                           sequence_parallel=True, recompute="selective", microbatches=4 * pp)
        assert got == pytest.approx(m.layers * 34 * m.seq * m.hidden / 8)
    assert M.activation_bytes_per_stage(2048, 1, 25600, 160, 128, pp=64, tp=8, sequence_parallel=True,
                                        recompute="selective", microbatches=256) / 1e9 == pytest.approx(28.5, abs=0.1)


def test_interleaving_factor_and_few_microbatches():
    base = M.activation_bytes_per_stage(2048, 1, 12288, 96, 96, pp=8, tp=8, microbatches=64)
    inter = M.activation_bytes_per_stage(2048, 1, 12288, 96, 96, pp=8, tp=8, microbatches=64, virtual_stages=2)
    assert inter / base == pytest.approx(1 + 7 / 16)           # 1 + (p − 1)/(p·v)
    few = M.activation_bytes_per_stage(2048, 1, 12288, 96, 96, pp=8, tp=8, microbatches=2)
    assert few / base == pytest.approx(2 / 8)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([512, 1024, 2048, 4096, 8192]), st.integers(1, 16), st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
       st.booleans())
def test_more_recompute_never_increases_memory(seq, batch, tp, sp):
    h, a = 8192, 64
    none, sel, full = (M.activation_bytes_per_layer(seq, batch, h, a, tp, sp, rc) for rc in M.RECOMPUTE)
    assert full <= sel <= none
    # sequence parallelism never increases memory either
    assert M.activation_bytes_per_layer(seq, batch, h, a, tp, True) <= M.activation_bytes_per_layer(seq, batch, h,
                                                                                                      a, tp, False)


def test_activation_bad_input():
    with pytest.raises(ValueError, match="recompute"):
        M.activation_bytes_per_layer(2048, 1, 12288, 96, recompute="some")
    with pytest.raises(ValueError, match="seq"):
        M.activation_bytes_per_layer(0, 1, 12288, 96)
    with pytest.raises(ValueError, match="sequence_parallel"):
        M.activation_bytes_per_layer(2048, 1, 12288, 96, sequence_parallel=1)
    with pytest.raises(ValueError, match="layers"):
        M.activation_bytes_per_stage(2048, 1, 12288, 96, 96, pp=5)


def test_checkpoint_every_fourth_layer_saves_more_than_half():
    # seed 000 §7: keep every 4th layer → "> 50 %" of activation memory saved for ~33 % more compute
    sbh = 2048 * 12288
    kept = M.checkpointed_activation_bytes(96, 4, 114 * sbh, 2 * sbh)
    assert 1 - kept / (96 * 114 * sbh) > 0.5
    assert kept == (24 * 2 + 4 * 114) * sbh


# --- ledger, fits, sizing ------------------------------------------------------------------------------------

def test_ledger_fits_and_margin():
    L = M.ledger("7B", microbatch=1, recompute="full")
    assert L.states == pytest.approx(112e9)
    fit = L.fits("H100")
    assert not fit.fits and fit.margin == pytest.approx(80e9 - L.total)
    assert fit.message.startswith("OOM on H100-SXM by 33")
    ok = M.ledger("7B", dp=8, zero=3, recompute="full").fits("A100")
    assert ok.fits and "to spare" in ok.message
    assert M.ledger("7B", dp=8, zero=3, recompute="full").fits("A100", reserve=79e9).fits is False


def test_ledger_fp32_doubles_activations():
    a16 = M.ledger("7B", "mixed-adam").components["activations"]
    a32 = M.ledger("7B", "fp32-adam").components["activations"]
    assert a32 == pytest.approx(2 * a16)


def test_ledger_rejects_bad_tp():
    with pytest.raises(ValueError, match="heads"):
        M.ledger("175B", tp=7)
    with pytest.raises(KeyError, match="175B"):
        M.model("176B")


def test_sizing_table_recomputes_seed_004():
    df = M.sizing_table()
    # 16 B/param: 7B 112 GB (seed: ~100 GB), 13B 208 GB (~200 GB), 70B 1,120 GB (~1 TB)
    assert list(df["train states (GB)"]) == pytest.approx([112, 208, 1120])
    # fewest 24 GB cards to hold the states fully sharded: 5, 9, 47 (seed: 4, 8, 32 "to start")
    assert list(df["min 24 GB cards (train)"]) == [5, 9, 47]
    assert list(df["min 80 GB cards (train)"]) == [2, 3, 14]
    assert list(df["int4 weights (GB)"]) == pytest.approx([3.5, 6.5, 35])


def test_min_gpus():
    assert M.min_gpus(80e9, 80e9) == 1 and M.min_gpus(80.1e9, 80e9) == 2
    assert M.min_gpus(0, 80e9) == 1
    assert M.min_gpus(100e9, 80e9, usable_fraction=0.5) == 3
    with pytest.raises(ValueError, match="capacity"):
        M.min_gpus(1e9, 0)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["7B", "13B", "70B", "175B"]), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 8, 64]),
       st.sampled_from(M.RECOMPUTE))
def test_ledger_zero_monotone(name, tp, dp, rc):
    totals = [M.ledger(name, tp=tp, dp=dp, zero=z, recompute=rc).total for z in range(4)]
    assert all(a >= b * (1 - 1e-12) for a, b in zip(totals, totals[1:]))
    assert all(math.isfinite(t) and t > 0 for t in totals)


def test_plot_ledgers_draws_one_bar_per_ledger():
    import matplotlib

    matplotlib.use("Agg")
    ax = M.plot_ledgers({"a": M.rule_of_thumb_ledger(7e9, "fp32-adam"), "b": M.rule_of_thumb_ledger(7e9)},
                        capacity=80e9)
    assert len(ax.patches) == 2 * 5                          # 2 ledgers × 5 components
    assert ax.get_xlim()[1] > 140
    with pytest.raises(ValueError, match="every"):
        M.checkpointed_activation_bytes(4, 8, 1.0, 1.0)
