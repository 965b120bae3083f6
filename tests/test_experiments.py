"""Tests for chipchain.experiments (experiment tiers, training recipes) and the troubleshooting table."""
import csv
import json
from importlib import resources

import pytest

from chipchain import experiments as ex
from chipchain.views import platform as vp


def test_llama2_7b_gpu_hours_imply_a_plausible_mfu():
    """Llama 2 model card: 184,320 A100-80GB GPU-hours for the 7B model on 2.0 T tokens. At the A100's 312 TFLOP/s
    BF16 dense peak that is an MFU of about 39 %, inside the 30–50 % reported for dense training at this scale."""
    hours_at_full = ex.experiment_gpu_hours(6.74e9, 2.0e12, 312e12, 1.0)
    implied_mfu = hours_at_full / 184_320
    assert 0.35 < implied_mfu < 0.45


def test_tier_plan_accounting():
    plan = ex.tier_plan(1e6, [100, 2000, 100_000], [0.1, 0.2])
    assert sum(plan.budget_share) == pytest.approx(1.0)
    assert plan.ideas[1] == pytest.approx(0.1 * plan.ideas[0])
    assert plan.full_scale_only == 10
    with pytest.raises(ValueError, match="promote"):
        ex.tier_plan(1e6, [1, 2], [0.1, 0.1])


def _recipe():
    return ex.TrainingRecipe("base", 3e-4, 3e-5, 2000, batch_schedule=((0, 512), (5000, 1024)),
                             stages=(ex.Stage("main", 1.8e12, {"web": 0.7, "code": 0.2, "books": 0.1}),
                                     ex.Stage("anneal", 0.2e12, {"web": 0.4, "code": 0.3, "math": 0.3})))


def test_recipe_save_load_roundtrip(tmp_path):
    r = _recipe()
    path = tmp_path / "recipe.json"
    r.save(path)
    assert ex.TrainingRecipe.load(path) == r
    assert json.loads(path.read_text())["peak_lr"] == 3e-4
    assert r.total_tokens == pytest.approx(2e12)


def test_recipe_diff():
    r = _recipe()
    assert ex.diff_recipes(r, r) == []
    r2 = r.replace(warmup_steps=4000, batch_schedule=((0, 512), (8000, 1024)))
    d = dict((k, (a, b)) for k, a, b in ex.diff_recipes(r, r2))
    assert d["warmup_steps"] == (2000, 4000)
    assert d["batch_schedule"] == ([[0, 512], [5000, 1024]], [[0, 512], [8000, 1024]])


def test_recipe_validation():
    with pytest.raises(ValueError, match="sum to 1"):
        ex.Stage("s", 1e9, {"web": 0.5})
    with pytest.raises(ValueError, match="min_lr"):
        ex.TrainingRecipe("x", 1e-4, 1e-3, 10)
    with pytest.raises(ValueError, match="batch_schedule"):
        ex.TrainingRecipe("x", 1e-4, 0, 10, batch_schedule=((5, 8),))
    with pytest.raises(KeyError, match="peak_lr"):
        ex.TrainingRecipe.from_dict({**_recipe().to_dict(), "peak_lrr": 1})
    with pytest.raises(ValueError, match="seq"):
        ex.TrainingRecipe("x", 1e-4, 0, 10, seq=0)


def test_troubleshooting_rows_have_sources():
    text = resources.files("chipchain").joinpath("data", "troubleshooting.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    assert len(rows) == 6                                      # seed 004 §6: six rows
    for row in rows:
        assert row["source"] and row["checked"] in ("V", "V2", "U") and row["chapter"].isdigit()
    assert vp.troubleshooting().shape[0] == 6


# --- properties (issue 13) ------------------------------------------------------------------------------------------
import math
import time

from hypothesis import given, settings, strategies as st


@settings(max_examples=60, deadline=1000)
@given(params=st.floats(1e6, 2e12), tokens=st.floats(1e6, 1e14), peak=st.floats(1e12, 1e16), mfu=st.floats(0.01, 1))
def test_gpu_hours_grow_with_tokens(params, tokens, peak, mfu):
    h = ex.experiment_gpu_hours(params, tokens, peak, mfu)
    assert h > 0 and math.isfinite(h)
    assert ex.experiment_gpu_hours(params, 10 * tokens, peak, mfu) == pytest.approx(10 * h)   # GPU-hours ∝ tokens
    assert ex.experiment_gpu_hours(params, tokens, peak, mfu / 2) == pytest.approx(2 * h)


@settings(max_examples=60, deadline=1000)
@given(budget=st.floats(1, 1e12), costs=st.lists(st.floats(1, 1e9), min_size=1, max_size=5),
       data=st.data())
def test_a_funnel_spends_the_budget_and_narrows(budget, costs, data):
    costs = sorted(costs)
    promote = data.draw(st.lists(st.floats(0.001, 1), min_size=len(costs) - 1, max_size=len(costs) - 1))
    plan = ex.tier_plan(budget, costs, promote)
    assert sum(plan.budget_share) == pytest.approx(1)                      # the whole budget, no more
    assert all(a >= b for a, b in zip(plan.ideas, plan.ideas[1:]))        # each tier passes on at most what it got
    assert plan.ideas[-1] <= plan.full_scale_only * (1 + 1e-9)            # no funnel confirms more than the budget buys
    assert all(math.isfinite(v) for v in plan.ideas)


@settings(max_examples=40, deadline=1000)
@given(lr=st.floats(1e-6, 1e-2), warm=st.integers(0, 10**6), seed=st.integers(0, 10**6))
def test_a_recipe_differs_from_itself_in_nothing(lr, warm, seed):
    a = ex.TrainingRecipe("p", peak_lr=lr, min_lr=lr / 10, warmup_steps=warm, seed=seed)
    t = time.process_time()
    assert ex.diff_recipes(a, a) == []
    assert [d[0] for d in ex.diff_recipes(a, a.replace(warmup_steps=warm + 1))] == ["warmup_steps"]
    assert time.process_time() - t < 1.0


# --- µP, loss spikes, measured MFU (issue 19) -------------------------------------------------------------------------

def test_mup_rules_identity_at_equal_width():
    assert all(r.init_std == 1.0 and r.adam_lr == 1.0 for r in ex.mup_rules(1024, 1024))


@given(b=st.floats(64, 4096), w=st.floats(64, 65536))
@settings(max_examples=40)
def test_mup_hidden_rules_compose(b, w):
    """Scaling 64→b→w equals scaling 64→w directly (the rules are ratios of widths)."""
    direct = ex.mup_rules(64, w)[1]
    two = ex.mup_rules(64, b)[1].adam_lr * ex.mup_rules(b, w)[1].adam_lr
    assert two == pytest.approx(direct.adam_lr)
    assert direct.init_std == pytest.approx(math.sqrt(64 / w))


def test_mup_vs_gpt3_published_learning_rates():
    """GPT-3's hand-tuned Adam LRs fell 10× from 125M (d 768, 6e-4) to 175B (d 12288, 0.6e-4) (Brown et al. 2020,
    Table 2.1); µP's hidden-weight rule predicts 16× for that width ratio — the same order, from one rule."""
    ratio = 1 / ex.mup_rules(768, 12288)[1].adam_lr
    assert ratio == 16 and 6e-4 / 0.6e-4 == pytest.approx(10)


def test_palm_spike_recovery_bounds():
    """PaLM: ~20 spikes, skipping 200–500 batches of 1M–4M tokens out of 780B: 0.5 % to 5.4 % of the data."""
    lo = ex.spike_recovery(20, 100, 200, 512 * 2048, 780e9, 255_000)
    hi = ex.spike_recovery(20, 100, 500, 2048 * 2048, 780e9, 255_000)
    assert lo.skipped_fraction == pytest.approx(0.0054, abs=1e-4)
    assert hi.skipped_fraction == pytest.approx(0.0538, abs=1e-3)
    assert hi.repeated_steps == 2000


def test_palm_mfu_from_its_throughput():
    """PaLM 540B: 238.3K tokens/s on 6,144 TPU v4 gives the published 46.2 % MFU (Chowdhery et al. 2022, Table 3)."""
    from chipchain import calibration, hardware, models
    m = models.custom(layers=118, hidden=18432, heads=48, head_dim=256, seq=2048, params=540.35e9)
    u = ex.step_mfu(238.3e3, calibration.flops_per_token(m), 6144, hardware.get("TPU-v4").peak_flops("bf16"))
    assert u == pytest.approx(0.462, abs=0.0006)


@pytest.mark.parametrize("call", [lambda: ex.mup_rules(0, 10), lambda: ex.step_mfu(1e9, 1e12, 1, 1e12),
                                  lambda: ex.spike_recovery(20, 100, 500, 4e6, 1e9, 1000),
                                  lambda: ex.step_mfu(1e3, 1e12, 0, 1e12)])
def test_new_experiments_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_recipe_tables_are_readable():
    """Chapter 8 shows recipes as tables (issue 14): no dict repr, no e-notation, every stage listed."""
    r = ex.TrainingRecipe("x", 6e-5, 6e-6, 2000, stages=(ex.Stage("main", 1.8e12, {"web": 0.75, "code": 0.25}),))
    text = str(vp.recipe_table(r))
    assert "6 × 10⁻⁵" in text and "e-05" not in text and "1.8 trillion tokens: web 75 %, code 25 %" in text
    diff = str(vp.recipe_diff_table(r, r.replace(warmup_steps=4000)))
    assert "warmup_steps" in diff and "4,000" in diff
