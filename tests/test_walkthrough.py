"""chipchain.walkthrough: the running example's seed numbers, its properties, the ledger and the source check.

Seed numbers (seed 000, the seven-step walkthrough): 2.8 TB of states, 35 × an 80 GB card, 6ND = 2.1e24, Llama-2-7B
at 2 T tokens 8.4e22, effective 1,024 × 3e14 × 0.5 = 1.536e17 FLOP/s, ~158 and ~264 days, 2.7 GB per GPU.
"""
import math

import pytest
from hypothesis import given, settings, strategies as st

from chipchain import compute, walkthrough as wt
from chipchain.walkthrough import Walkthrough

W = Walkthrough()


# --- the seed's numbers -----------------------------------------------------------------

def test_step1_states_2_8_tb_and_35_cards():
    s = W.step1_states()
    assert s.bytes_per_param == 16                                 # 2 + 2 + 12 (Rajbhandari et al. 2020)
    assert s.total_bytes == pytest.approx(2.8e12)                  # seed 000 ①: 16 × 1.75e11
    assert s.cards_worth == pytest.approx(35.0)                    # seed 000 ①: 35 × 80 GB


def test_step2_compute_2_1e24_and_cluster_peak():
    s = W.step2_compute()
    assert s.flops == pytest.approx(2.1e24)                        # seed 000 ②: 6 × 1.75e11 × 2e12
    assert s.cluster_peak == pytest.approx(3.072e17)               # 1,024 × 3e14


def test_llama2_7b_comparison_8_4e22_not_8_4e23():
    seven = W.with_(params=7e9).step2_compute().flops
    assert seven == pytest.approx(8.4e22)                          # seed 000 ②; seed 004 §2.3 prints 8.4e23
    assert W.step2_compute().flops / seven == pytest.approx(25)    # "25 times the parameters"
    assert compute.training_flops(7e9, 2e13) == pytest.approx(8.4e23)   # seed 004's 2e13 for "2 trillion"


def test_effective_compute_1_536e17():
    assert W.effective_flops == pytest.approx(1.536e17)            # seed 000 ③: 1,024 × 3e14 × 50 %
    assert W.effective_flops == pytest.approx(W.step2_compute().cluster_peak * W.mfu)


def test_step3_158_and_264_days():
    d = W.step3_time().days
    assert d[0.5] == pytest.approx(158.2, abs=0.1)                 # seed 000 ③: "≈ 158 days"
    assert d[0.3] == pytest.approx(263.7, abs=0.1)                 # seed 000 ③: "about 264 days"
    assert W.step3_time().seconds[0.5] == pytest.approx(1.367e7, rel=1e-3)   # "≈ 1.37e7 s"
    assert W.run_seconds == pytest.approx(W.step3_time().seconds[0.5])


def test_llama2_7b_about_a_week_on_the_same_cluster():
    days = W.with_(params=7e9).step3_time().days[0.5]
    assert 6 <= days <= 8                                          # seed 000 ②: "about a week"


def test_step5_2_7_gb_per_gpu():
    s = W.step5_memory_per_gpu()
    assert s.states_full_sharding == pytest.approx(2.734e9, rel=1e-3)   # seed 000 ⑤: "about 2.7 GB"
    assert s.states_full_sharding == pytest.approx(W.step1_states().total_bytes / W.n_gpus)
    assert s.states_plan > s.states_full_sharding                 # ZeRO-1 shards only the optimizer


def test_all_seven_steps_exist():
    for name in ("step1_states", "step2_compute", "step3_time", "step4_plan", "step5_memory_per_gpu",
                 "step6_failures", "step7_electricity"):
        assert callable(getattr(W, name, None)), f"Walkthrough.{name} is missing"


# --- properties -----------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(n1=st.integers(1, 100_000), n2=st.integers(1, 100_000))
def test_more_gpus_never_slower(n1, n2):
    lo, hi = sorted((n1, n2))
    t_lo = W.with_(n_gpus=lo).step3_time().seconds[0.5]
    t_hi = W.with_(n_gpus=hi).step3_time().seconds[0.5]
    assert t_hi <= t_lo * (1 + 1e-12)
    assert lo * t_lo == pytest.approx(hi * t_hi)                   # GPU-seconds do not depend on n (ideal model)


@settings(max_examples=60, deadline=None)
@given(m1=st.floats(0.01, 1.0), m2=st.floats(0.01, 1.0))
def test_higher_utilisation_never_slower(m1, m2):
    lo, hi = sorted((m1, m2))
    d = W.with_(mfus=(lo, hi)).step3_time().days
    assert d[hi] <= d[lo] * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(p=st.floats(1e8, 2e12), d=st.floats(1e9, 1e14), k=st.floats(1.01, 10))
def test_bigger_models_and_more_tokens_cost_more(p, d, k):
    base = W.with_(params=p, tokens=d)
    assert base.with_(params=p * k).step2_compute().flops > base.step2_compute().flops
    assert base.with_(tokens=d * k).step3_time().seconds[0.5] > base.step3_time().seconds[0.5]
    assert base.with_(params=p * k).step1_states().total_bytes == pytest.approx(k * base.step1_states().total_bytes)


@settings(max_examples=30, deadline=None)
@given(n=st.sampled_from([128, 256, 512, 1024, 2048, 4096]))
def test_full_sharding_is_states_over_n(n):
    w = wt.ledger_view(n_gpus=n)
    assert w.step5_memory_per_gpu().states_full_sharding == pytest.approx(w.step1_states().total_bytes / n)


# --- bad input -----------------------------------------------------------------

@pytest.mark.parametrize("kwargs,match", [
    ({"params": -1}, "params"), ({"tokens": 0}, "tokens"), ({"n_gpus": 0}, "n_gpus"), ({"n_gpus": 2.5}, "n_gpus"),
    ({"mfu": 1.5}, "mfu"), ({"mfu": float("nan")}, "mfu"), ({"mfus": (0.5, 0)}, "mfus"),
    ({"peak_flops": float("inf")}, "peak_flops"), ({"bytes_per_param": 0}, "bytes_per_param"),
    ({"n_gpus": True}, "n_gpus"),
])
def test_bad_input_is_a_clear_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Walkthrough(**kwargs)


def test_unknown_accelerator_lists_nearest_names():
    with pytest.raises(KeyError, match="nearest"):
        Walkthrough(accelerator="A1000").step1_states()


@pytest.mark.parametrize("kwargs,match", [({"n_gpus": 1000}, "multiple of 128"), ({"model": "13B"}, "model"),
                                          ({"mfu": 0}, "mfu"), ({"accelerator": "Z9"}, "nearest")])
def test_ledger_view_bad_input(kwargs, match):
    with pytest.raises((ValueError, KeyError), match=match):
        wt.ledger_view(**kwargs)


# --- the ledger -----------------------------------------------------------------

def test_ledger_has_every_step_with_its_chapter():
    df = W.ledger()
    assert list(df.columns) == ["step", "quantity", "value", "chapter"]
    assert list(dict.fromkeys(df["step"])) == list(Walkthrough.STEP_NAMES.values())
    rows = W.ledger_rows()
    assert all(r.chapter == Walkthrough.STEP_CHAPTERS[r.step][1] for r in rows)
    assert not any(r.quantity.startswith("not available") for r in rows), "a step method is missing"


def test_ledger_values_come_from_the_steps():
    rows = {r.quantity: r for r in W.ledger_rows()}
    assert rows["training compute, 6ND"].value == W.step2_compute().flops
    assert rows["effective compute at 50% MFU"].value == pytest.approx(1.536e17)
    assert rows["run length at 50% MFU"].text == "158 days"
    assert rows["run length at 30% MFU"].text == "264 days"
    assert rows["states per GPU, sharded over all GPUs"].text == "2.7 GB"
    assert rows["model states at 16 B/parameter"].text == "2.8 TB"


def test_ledger_changes_with_inputs():
    a = {r.quantity: r.value for r in W.ledger_rows()}
    b = {r.quantity: r.value for r in W.with_(n_gpus=2048, dp=16).ledger_rows()}
    assert b["run length at 50% MFU"] == pytest.approx(a["run length at 50% MFU"] / 2)
    assert b["training compute, 6ND"] == a["training compute, 6ND"]


def test_chapter_reference_links_only_available_chapters():
    assert Walkthrough.chapter_reference(1, {"06_memory"}) == "{doc}`chapter 6 <../chapters/06_memory>`"
    assert Walkthrough.chapter_reference(1, set()) == "chapter 6 (The memory ledger)"
    with pytest.raises(ValueError, match="step"):
        Walkthrough.chapter_reference(8)


# --- the source check -----------------------------------------------------------------

def _by_claim():
    return {c.claim: c for c in wt.source_checks()}


def test_seed_004_exponent_error_is_flagged():
    c = _by_claim()["7B model on 2 trillion tokens: 6 × 7e9 × 2e13 = 8.4e23 FLOP"]
    assert not c.agrees
    assert c.stated / c.recomputed == pytest.approx(10)            # one power of ten
    yrs = _by_claim()["one RTX 3090 would take about 749 years"]
    assert not yrs.agrees and yrs.recomputed == pytest.approx(74.8, abs=0.1)
    cards = _by_claim()["about 22,773 RTX 3090s to finish in 30 days at 40 % MFU"]
    assert not cards.agrees and round(cards.recomputed) == 2276


def test_seed_000_walkthrough_numbers_agree():
    checks = [c for c in wt.source_checks() if c.source.startswith("seed 000, walkthrough") and
              c.source[-1] in "①②③⑤"]
    assert len(checks) >= 9
    assert all(c.agrees for c in checks), [c.claim for c in checks if not c.agrees]


def test_electricity_bill_not_supported_by_its_own_inputs():
    c = _by_claim()["an electricity bill of about $1.55 M"]
    assert not c.agrees and c.recomputed < 0.5 * c.stated
    e = W.step7_electricity()
    # the source's "$1.55 M" is the GPUs' own energy in kWh read as dollars: 1,024 × 400 W × 158.2 days
    assert e.gpu_only_kwh == pytest.approx(1.55e6, rel=0.02)


def test_failure_rate_claim_scales_with_cluster_size():
    every = _by_claim()["on average one every three hours"]
    assert not every.agrees and every.recomputed == pytest.approx(49.5, abs=0.5)   # hours, 1,024 GPUs


def test_deepseek_post_training_claim_is_flagged():
    c = _by_claim()["the figure excludes post-training (0 GPU-hours of it)"]
    assert not c.agrees and c.recomputed == 5e3


def test_source_check_table_lists_disagreements_first():
    t = wt.source_check_table()
    assert len(t) == len(wt.source_checks()) >= 18
    agrees = list(t["agrees"])
    assert agrees == sorted(agrees)                                # False before True
    assert t["chapter"].between(1, 13).all()


def test_source_checks_follow_the_inputs():
    # recomputed values come from the library: change the walkthrough, the recomputation moves
    a = _by_claim()["2.1e24 / 1.536e17 ≈ 158 days"].recomputed
    b = {c.claim: c for c in wt.source_checks(W.with_(n_gpus=2048, dp=16))}["2.1e24 / 1.536e17 ≈ 158 days"]
    assert b.recomputed == pytest.approx(a / 2) and not b.agrees


# --- four questions -----------------------------------------------------------------

def test_four_questions_table():
    t = wt.four_questions(["A100", "H100", "H800"])
    assert len(wt.FOUR_QUESTIONS) == 4
    assert t.loc["H100-SXM", "ridge (FLOP/byte)"] == pytest.approx(989.4 / 3.35, rel=1e-6)
    assert t.loc["H800", "link, bidirectional (GB/s)"] < t.loc["H100-SXM", "link, bidirectional (GB/s)"]
    assert bool(t.loc["H800", "estimate"]) and not bool(t.loc["A100-SXM-80GB", "estimate"])


def test_ledger_explorer_default_view_is_the_running_example():
    ex = wt.ledger_explorer()
    assert ex.n_views <= 150
    html = ex.render_current()
    assert "158 days" in html and "2.1e24 FLOP" in html and "2.8 TB" in html


def test_roofline_and_link_claims():
    by = _by_claim()
    ew = by["an element-wise op leaves a 312 TFLOP/s card at only 5 %"]
    assert not ew.agrees and ew.recomputed == pytest.approx(2.039e12 / 12 / 312e12)   # seed 002 vs roofline
    gap = by["NVLink 900 GB/s vs InfiniBand 50 GB/s: a gap of about 20×"]
    assert not gap.agrees and gap.recomputed == pytest.approx(9.0)                    # 450 / 50, per direction
    assert by["mixed-precision Adam: 18 B/parameter, 1.26 TB for 70 B"].agrees
    assert by["a DRAM read costs 170 times an FP32 multiply"].agrees


def test_inconsistent_plan_is_a_clear_error():
    with pytest.raises(ValueError, match="2048 GPUs"):
        Walkthrough(n_gpus=2048).ledger()


def test_plot_time_budget_bars():
    import matplotlib
    matplotlib.use("Agg")
    ax = wt.plot_time_budget()
    widths = [p.get_width() for p in ax.patches]
    assert widths == sorted(widths)                                # peak ≤ at MFU ≤ wall clock
    assert widths[1] == pytest.approx(W.run_seconds / 86400)
    assert widths[2] == pytest.approx(W.step6_failures().wall_seconds / 86400)
