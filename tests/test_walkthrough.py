"""chipchain.walkthrough: the running example against published numbers, the objects it holds, its re-planning, and
a ledger whose every number is the one the owning module computes.

Published values: Narayanan et al. 2021 (Megatron-LM at scale), Eq. 4 and §5.1: GPT-3 175B on 300 B tokens with
1,024 A100 at 140 TFLOP/s per GPU trains in about 34 days; the A100's 312 TFLOP/s and the H100 SXM's 989.4 TFLOP/s
BF16 dense peaks (NVIDIA datasheets, via the catalog); seed 000's walkthrough (2.8 TB of states, 35 × 80 GB, 6ND =
2.1e24, ~158 days at 3e14 FLOP/s, which the catalog peak makes ~152); the A100's "80 GB" is binary (nvidia-smi reports
81,920 MiB), so the states are 32.6 cards' worth and need 33 cards; the achieved MFU of published A100 runs at scale
(chipchain.calibration) spans about 24-48 %.
"""
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import (assumptions, checkpoint, compute, hardware, memory, models, parallel, plans, power, reliability, systems,
                       units, walkthrough as wt)
from chipchain.walkthrough import Walkthrough
from chipchain.views import walkthrough as VW

W = Walkthrough()
DAY = units.DAY


# --- the world -----------------------------------------------------------------------------------------------

def test_narayanan_eq4_gpt3_on_300b_tokens_is_34_days():
    # Narayanan et al. 2021, Eq. 4: T ≈ 8·T·P / (n·X) = 8 × 300e9 × 175e9 / (1,024 × 140e12) s ≈ 33.9 days
    # (§5.1: "about 34 days")
    days = compute.megatron_training_time(300e9, 175e9, 1024, 140e12) / DAY
    assert days == pytest.approx(33.9, abs=0.05)
    # the same run through the walkthrough: 8ND at 140 TFLOP/s is 6ND at 105, i.e. MFU 105 / 312 of the A100's peak
    w = Walkthrough(tokens=300e9, mfu=140e12 * 6 / 8 / hardware.get("A100").peak_flops("bf16"))
    assert w.run_seconds / DAY == pytest.approx(days, rel=1e-9)


def test_default_peak_is_the_a100_catalog_peak():
    assert W.accelerator is hardware.get("A100-SXM-80GB")
    assert W.peak_flops == hardware.get("A100").peak_flops("bf16") == pytest.approx(312e12)   # A100 datasheet
    assert W.peak_override is None and W.dtype == "bf16"
    assert W.step2_compute().cluster_peak == pytest.approx(1024 * 312e12)


def test_h100_walkthrough_uses_the_h100_peak_node_and_power():
    h = Walkthrough(accelerator="H100-SXM")
    assert h.peak_flops == pytest.approx(989.4e12)                   # H100 SXM datasheet, BF16 dense
    assert h.cluster.node is systems.node("DGX-H100") and h.gpus_per_node == 8
    assert h.step7_electricity().gpu_power == hardware.get("H100").tdp == 700
    assert h.step3_time().days[0.5] == pytest.approx(W.step3_time().days[0.5] * 312 / 989.4)   # top-down
    # bottom-up: the same plan on 3.2 × the peak is faster, by less than the peak (the H100's ridge point is twice
    # the A100's, so the same GEMMs reach a smaller share of it) and by more than half of it
    assert W.run_seconds / 3.2 < h.run_seconds < W.run_seconds / 1.6
    assert W.replace(accelerator="H100").peak_flops == h.peak_flops   # an override is not carried to another part


def test_peak_override_is_explicit():
    source = W.replace(peak_flops=3e14, mfu=0.5)                     # seed 000 rounds the A100's peak to 3e14
    assert source.peak_flops == 3e14 and source.effective_flops == pytest.approx(1.536e17)
    assert source.step3_time().days[0.5] == pytest.approx(158.2, abs=0.1)   # the source's "≈ 158 days"
    assert source.step3_time().days[0.3] == pytest.approx(263.7, abs=0.1)   # "about 264 days"


def test_names_and_records_are_the_same_inputs():
    a = Walkthrough(model="175B", accelerator="A100", n_gpus=1024)
    b = Walkthrough(model=models.get("GPT-3-175B"), cluster=systems.cluster("DGX-A100", 1024))
    assert a == b == W
    assert Walkthrough(system="DGX-H100").accelerator is hardware.get("H100")


# --- the source's walkthrough, steps ① – ③ and ⑤ ------------------------------------------------------------

def test_step1_states_2_8_tb_and_33_cards():
    s = W.step1_states()
    assert s.bytes_per_param == 16                                   # 2 + 2 + 12 (Rajbhandari et al. 2020)
    assert s.total_bytes == pytest.approx(2.8e12)                    # seed 000 ①: 16 × 1.75e11
    assert s.card_bytes == 80 * 2 ** 30                              # A100 80 GB = 81,920 MiB (nvidia-smi)
    assert s.cards_worth == pytest.approx(32.6, abs=0.05)            # seed 000 ① says 35: 80 GB read as decimal
    assert s.cards == 33                                             # a count of cards is rounded up


@settings(max_examples=60, deadline=None)
@given(x=st.floats(0, 1e7))
def test_a_count_of_cards_is_never_rounded_down(x):
    n = units.count_up(x)
    assert isinstance(n, int) and n >= x * (1 - 1e-12) and (n == 0 or n - 1 < x)   # up, by less than one card


def test_no_ledger_count_of_cards_is_rounded_down():
    for w in (W, W.replace(model="70B", accelerator="H100"), W.replace(n_gpus=512)):
        s1 = w.step1_states()
        row = next(r for r in VW.ledger_rows(w) if r.key == "cards")
        assert row.value == s1.cards >= s1.cards_worth and row.text.startswith(f"{s1.cards} × ")


def test_step2_compute_2_1e24():
    assert W.step2_compute().flops == pytest.approx(2.1e24)          # seed 000 ②: 6 × 1.75e11 × 2e12


def test_step3_at_the_catalog_peak_is_4_percent_shorter_than_the_source():
    d = W.step3_time().days
    assert d[0.5] == pytest.approx(158.2 * 300 / 312, rel=1e-3)      # 152 days
    assert d[0.3] == pytest.approx(263.7 * 300 / 312, rel=1e-3)
    assert W.replace(mfu=0.5).run_seconds == W.step3_time().seconds[0.5]
    # bottom-up, the source's plan on the step model lands within 2 points of the source's assumed 50 % (chapter 14)
    assert W.step3_run().mfu == pytest.approx(0.5, abs=0.02) and W.mfu_basis == "predicted"


def test_step5_2_7_gb_per_gpu():
    s = W.step5_memory_per_gpu()
    assert s.states_full_sharding == pytest.approx(2.734e9, rel=1e-3)   # seed 000 ⑤: "about 2.7 GB"
    assert s.states_plan > s.states_full_sharding                   # ZeRO-1 shards only the optimizer


@pytest.mark.parametrize("zero", range(4))
@pytest.mark.parametrize("recipe", memory.recipe_names())
def test_step5_states_equal_step4_ledger_for_every_recipe_and_stage(recipe, zero):
    # one home for state bytes: step ⑤'s "states per GPU under the plan" is the ledger step ④ prices, whatever the
    # recipe's weight and gradient bytes (the 2 + 2 hard-coded before made fp32-adam 4.10 GB against 6.84 GB)
    plan = parallel.Plan(tp=8, pp=16, dp=8, zero=zero, microbatches=192, sequence_parallel=True,
                         recompute="selective")
    w = Walkthrough(plan=plan, recipe=recipe)
    s5 = w.step5_memory_per_gpu()
    a = plans.analyze(plan, w.model, w.cluster, recipe=recipe, framework=w.framework)
    assert s5.states_plan == pytest.approx(a.ledger.states, rel=1e-12)          # same sum, rounding only
    assert s5.activations[plan.recompute] == pytest.approx(a.ledger.components["activations"], rel=1e-12)
    r, psi = memory.recipe(recipe), 175e9 / 128                                  # Ψ per TP·PP shard
    if zero == 0:       # nothing sharded: every byte of the recipe per parameter of the shard
        assert s5.states_plan == pytest.approx(r.total * psi, rel=1e-12)
    if zero == 3:       # everything sharded over DP: the states spread over all 1,024 GPUs (ZeRO §5, stage 3)
        assert s5.states_plan == pytest.approx(s5.states_full_sharding, rel=1e-12)


def test_step5_fp32_adam_is_not_the_mixed_precision_figure():
    # review 2026-12-01 §2: with FP32 weights and gradients (4 + 4 B) the seed plan's ZeRO-1 states are
    # Ψ/128 · (8 + 8/8) = 12.3 GB, not the 2 + 2 B figure of 7.52 GB
    plan = W.plan
    s5 = Walkthrough(plan=plan, recipe="fp32-adam").step5_memory_per_gpu()
    assert s5.states_plan / 1e9 == pytest.approx(12.30, rel=1e-3)                # 1.3672e9 × 9 = 12.305 GB
    assert s5.activations["selective"] == pytest.approx(2 * W.step5_memory_per_gpu().activations["selective"],
                                                        rel=1e-12)                # FP32 activations: 4 B not 2


def _dtype_cases():
    out = []
    for node in systems.all_nodes():
        acc = node.accelerator
        if acc is None:
            continue
        for dt in acc.precisions():
            if hardware.UNIT.get(dt) == "tensor" and dt != "int8":
                out.append((node.name, dt))
    return out


@pytest.mark.parametrize("system,dtype", _dtype_cases())
def test_steps_3_and_4_use_one_peak_for_every_part_and_dtype(system, dtype):
    # one step model per walkthrough: step ④'s predicted step × steps is step ③'s run length, and 6ND / (n·peak·MFU)
    # at that MFU gives it back, at every tensor-core dtype of every part with a node (one peak, the dtype's)
    try:
        w = Walkthrough(system=system, n_gpus=1024, dtype=dtype)
    except ValueError as err:        # a part too small for 175B has no plan: nothing to compare
        pytest.skip(str(err))
    if w.plan is None:
        pytest.skip("no plan")
    s4 = w.step4_plan()
    steps = w.tokens / (w.plan.batch * w.seq)
    assert s4.step_seconds * steps == pytest.approx(w.run_seconds, rel=1e-12)   # rounding only
    top_down = w.step2_compute().flops / (w.n_gpus * w.accelerator.peak_flops(dtype) * w.mfu)
    assert top_down == pytest.approx(w.run_seconds, rel=1e-12)


def test_fp8_plan_is_priced_at_the_fp8_peak():
    # H100 FP8 dense 1,979 TFLOP/s is twice BF16's 989.4 (datasheet), but FP8 runs at its own, lower, fitted
    # efficiency and attention stays in BF16: the same plan's compute falls by well under half
    bf, f8 = (Walkthrough(system="DGX-H100", dtype=d, plan=W.plan) for d in ("bf16", "fp8"))
    ratio = f8.step4_plan().compute_seconds / bf.step4_plan().compute_seconds
    assert 989.4 / 1979.0 < ratio < 0.95


def test_default_plan_is_the_sources_8_16_8():
    p = W.plan
    assert (p.tp, p.pp, p.dp, p.zero, p.microbatches) == (8, 16, 8, 1, 192)   # seed 000 ④; Narayanan batch 1,536
    assert (W.tp, W.pp, W.dp) == (8, 16, 8)


# --- re-planning ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", ["7B", "13B", "70B"])
def test_replan_keeps_pp_within_layers(model):
    w = W.replace(model=model)
    assert w.plan is not None and w.plan.n_gpus == w.n_gpus
    assert w.pp <= w.layers and w.layers % w.pp == 0 and w.heads % w.tp == 0
    assert parallel.validate(w.plan, w.model, w.cluster) is not None


def test_replan_for_7b_is_not_tp8_pp16():
    w = Walkthrough(model="7B")
    assert (w.tp, w.pp) != (8, 16)
    assert w.plan == plans.search(w.model, w.cluster, batch=w.batch, recipe=w.recipe, framework=w.framework,
                                  top=1)[0].plan


def test_no_plan_refuses_with_one_line_reason():
    w = Walkthrough(n_gpus=8)                                        # 175 B cannot fit on one node
    assert w.plan is None and "\n" not in w.plan_reason and "fits in" in w.plan_reason
    with pytest.raises(ValueError, match="no plan"):
        w.step4_plan()
    rows = [r for r in VW.ledger_rows(w) if r.step in (4, 5)]
    assert [r.text for r in rows] == [w.plan_reason] * 2
    assert [r.value for r in rows] == [None, None]                   # no number, and no silent NaN standing in
    assert w.step3_time().days[0.5] > 0                              # the steps that need no plan still work


def test_given_plan_is_validated():
    with pytest.raises(ValueError, match="2048 GPUs"):
        Walkthrough(n_gpus=2048, plan=W.plan)


# --- the ledger: every number is the owning module's ----------------------------------------------------------

def test_ledger_numbers_equal_the_owning_modules():
    rows = {r.quantity: r for r in VW.ledger_rows(W)}
    a100, plan = hardware.get("A100"), W.plan
    flops = compute.training_flops(175e9, 2e12)
    t = compute.training_time(flops, 1024, a100.peak_flops("bf16"), 0.5)
    wall = W.step6_failures().wall_seconds
    assert rows["model states at 16 B/parameter"].value == memory.state_bytes(175e9, "mixed-adam")
    assert rows["training compute, 6ND"].value == flops
    assert rows["run length at 50 % MFU (assumed)"].value == pytest.approx(t)
    assert rows["run length at 30 % MFU (assumed)"].value == pytest.approx(compute.training_time(flops, 1024, 312e12,
                                                                                                 0.3))
    r3 = W.step3_run()
    assert rows[f"run length, bottom-up (MFU {units.fmt_percent(r3.mfu, decimals=1)})"].value == r3.seconds == W.run_seconds
    assert rows["pipeline bubble (share of the step idle)"].value == parallel.idle_share(16, 192)
    # ZeRO-1 over DP 8 of Ψ/(TP 8 · PP 16): 2 + 2 bytes of weights and gradients kept, K = 12 sharded (ZeRO §5)
    assert rows["states per GPU under the plan (ZeRO-1)"].value == pytest.approx(175e9 / 128 * (4 + 12 / 8),
                                                                                rel=1e-12)  # rounding only
    a = plans.analyze(plan, "175B", systems.cluster("A100", 1024), framework=W.framework)
    assert rows["total per GPU under the plan, against the card"].value == a.ledger.total
    rate = reliability.llama3_per_gpu_rate()
    mtbf = reliability.cluster_mtbf(rate, 1024)
    assert rows["mean time between interruptions"].value == pytest.approx(mtbf)
    c = checkpoint.write_seconds(checkpoint.checkpoint_bytes(175e9, 14), 50e9)   # restart state: 16 B − gradients
    assert rows["checkpoint interval"].value == pytest.approx(checkpoint.daly_interval(c, mtbf))
    host = power.host_share("DGX-A100")                              # (6,500 W − 8 × 400 W) / 8, DGX A100 datasheet
    assert host == 412.5
    assert rows["facility power (PUE 1.4)"].value == pytest.approx(power.facility_power(1024, 400, host, 1.4))
    e = power.run_energy(1024, 400, wall, host_share=host, pue=1.4)      # billed on the wall clock
    assert rows["energy at the meter"].value == pytest.approx(e)
    assert rows["electricity bill at $0.12/kWh"].value == pytest.approx(power.electricity_cost(e, 0.12))


def test_texts_are_the_ledgers_own_strings_and_rounding():
    t, rows = VW.texts(W), VW.ledger_rows(W)
    assert t == {r.key: r.text for r in rows} and len(t) == len(rows)      # one key per row
    assert t["goodput"] == str(units.fmt_percent(W.step6_failures().goodput, 3))
    assert t["bill"] == str(units.fmt_dollars(round(W.step7_electricity().dollars, -3)))


def test_evidence_range_from_published_a100_runs():
    e = W.step3_evidence()
    lo, mid, hi = e.mfus
    assert 0.2 < lo < mid < hi < 0.5 and len(e.runs) >= 5           # BloombergGPT ... Falcon (published_runs.csv)
    days = [s / DAY for s in e.seconds]
    assert days[0] > days[1] > days[2] >= W.step3_time().days[0.5] * 0.5 / hi * (1 - 1e-12)
    assert e.gpu_hours[1] == pytest.approx(1024 * e.seconds[1] / 3600)
    assert e.dollars[1] == pytest.approx(2.0 * e.gpu_hours[1])
    assert W.step3_time().days[0.5] < days[1] < W.step3_time().days[0.3]   # median lies between 50 % and 30 % MFU
    assert hi < 0.5 and lo < 0.3 < hi                                # what chapter 13 says of the two fixed MFUs


def test_ledger_has_every_step_with_its_chapter_number():
    df = VW.ledger(W)
    assert list(df.columns) == ["step", "quantity", "value", "chapter"]
    assert list(dict.fromkeys(df["step"])) == list(VW.STEP_NAMES.values())
    assert all(r.chapter == VW.STEP_CHAPTERS[r.step] and isinstance(r.chapter, int) for r in VW.ledger_rows(W))
    assert not any(isinstance(v, str) for v in VW.STEP_CHAPTERS.values())   # no chapter titles in the library


def test_ledger_changes_with_inputs():
    a = {r.quantity: r.value for r in VW.ledger_rows(W)}
    b = {r.quantity: r.value for r in VW.ledger_rows(W.replace(n_gpus=2048))}
    assert b["run length at 50 % MFU (assumed)"] == pytest.approx(a["run length at 50 % MFU (assumed)"] / 2)
    assert b["training compute, 6ND"] == a["training compute, 6ND"]


# --- properties -------------------------------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(n1=st.sampled_from([512, 1024, 2048, 4096, 8192]), n2=st.sampled_from([512, 1024, 2048, 4096, 8192]))
def test_more_gpus_never_slower(n1, n2):
    lo, hi = sorted((n1, n2))
    t_lo, t_hi = W.replace(n_gpus=lo, mfu=0.5).run_seconds, W.replace(n_gpus=hi, mfu=0.5).run_seconds
    assert t_hi <= t_lo * (1 + 1e-12)
    assert lo * t_lo == pytest.approx(hi * t_hi)                     # at a fixed MFU GPU-seconds do not depend on n
    b_lo, b_hi = W.replace(n_gpus=lo).run_seconds, W.replace(n_gpus=hi).run_seconds
    assert b_hi <= b_lo * (1 + 1e-9)                                 # bottom-up: never slower with more GPUs


@settings(max_examples=40, deadline=None)
@given(m1=st.floats(0.01, 1.0), m2=st.floats(0.01, 1.0))
def test_higher_utilisation_never_slower(m1, m2):
    lo, hi = sorted((m1, m2))
    d = W.replace(mfus=(lo, hi)).step3_time().days
    assert d[hi] <= d[lo] * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(d=st.floats(1e9, 1e14), k=st.floats(1.01, 10))
def test_more_tokens_cost_more(d, k):
    base = W.replace(tokens=d)
    assert base.replace(tokens=d * k).run_seconds == pytest.approx(k * base.run_seconds)
    assert base.replace(tokens=d * k).plan == base.plan              # tokens do not change the plan


# --- bad input --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,match", [
    ({"tokens": 0}, "tokens"), ({"n_gpus": 0}, "n_gpus"), ({"n_gpus": 2.5}, "n_gpus"), ({"n_gpus": True}, "n_gpus"),
    ({"mfu": 1.5}, "mfu"), ({"mfu": float("nan")}, "mfu"), ({"mfus": (0.5, 0)}, "mfus"),
    ({"peak_flops": float("inf")}, "peak_flops"), ({"peak_flops": -1}, "peak_flops"), ({"batch": 0}, "batch"),
    ({"dtype": "fp4"}, "dtype"), ({"plan": "8x16x8"}, "plan"),
    ({"cluster": systems.cluster("A100", 64), "accelerator": "H100"}, "not both"),
    ({"system": "DGX-H100", "accelerator": "A100"}, "accelerator"),
])
def test_bad_input_is_a_clear_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Walkthrough(**kwargs)


@pytest.mark.parametrize("kwargs", [{"accelerator": "A1000"}, {"model": "GPT-5"}, {"recipe": "fp4"}])
def test_unknown_names_list_nearest_names(kwargs):
    with pytest.raises(KeyError, match="nearest"):
        Walkthrough(**kwargs)


def test_replace_rejects_unknown_inputs():
    with pytest.raises(ValueError, match="no input 'params'"):
        W.replace(params=7e9)


def test_missing_catalog_peak_fails_by_name():
    missing = [a for a in hardware.all_accelerators() if not a.peaks.get("fp8")]
    assert missing
    with pytest.raises(ValueError, match="fp8"):
        Walkthrough(accelerator=missing[0].name, dtype="fp8")


def test_one_host_share_method_for_every_server():
    assert W.step7_electricity().host_share == power.host_share("DGX-A100")
    assert W.replace(accelerator="H100").step7_electricity().host_share == 575.0   # DGX H100: 10.2 kW − 8 × 700 W
    # no system rating in the catalog: the book's stated assumption (data/assumptions.csv), not a refusal
    assert W.replace(accelerator="H800").step7_electricity().host_share == assumptions.value("host_share_per_gpu")
    assert W.replace(accelerator="H800").step7_electricity(host_share=575).host_share == 575


def test_walkthrough_is_frozen():
    with pytest.raises(AttributeError):
        W.tokens = 1e12
    assert W.replace(mfu=0.4).mfu == 0.4 and W.mfu == W.step3_run().mfu


# --- chapter 13's views: the explorer's default view is the chapter's own numbers (issue 13) ----------------------

def test_ledger_explorer_default_is_the_chapters_walkthrough():
    from chipchain.views import walkthrough as v
    e = v.ledger_explorer()
    assert e.render_current() == v.ledger_html(W)                    # same object, same texts, same rounding
    html = e.render_current()
    for key in ("goodput", "bill", "cards", "days", "facility", "energy"):
        assert VW.texts(W)[key] in html


def test_evidence_table_sets_fixed_mfus_beside_published_ones():
    from chipchain.views import walkthrough as v
    t = v.evidence_table()
    assert list(t["MFU"]) == ["50 %", "30 %", "24 %", "35 %", "48 %"]
    wall = W.step3_time().seconds[0.5] / W.step6_failures().goodput / DAY      # the source's 50 %, failures added
    assert t.iloc[0]["wall-clock days"] == f"{wall:,.0f}"


def test_no_ledger_row_or_export_figure_is_a_nan():
    # BOOK-STANDARD §3 "never a silent NaN": a step without a number says None and its text says why
    import math
    for w in (W, Walkthrough(n_gpus=8), Walkthrough(model="405B", n_gpus=16)):
        for r in VW.ledger_rows(w):
            assert r.value is None or not math.isnan(r.value), r
        e = w.step8_export()
        for rid in e.shippable:
            assert (e.shippable[rid] is None) == (e.shippable_peak[rid] is None) == (e.shippable_days[rid] is None)


def test_each_step_without_arguments_is_computed_once_per_walkthrough():
    w = Walkthrough(n_gpus=512)
    for step in ("step1_states", "step2_compute", "step3_time", "step4_plan", "step5_memory_per_gpu", "step8_export"):
        assert getattr(w, step)() is getattr(w, step)(), step
    assert w.replace(mfu=0.4).step3_time() is not w.step3_time()       # another walkthrough, its own answers
    assert w == Walkthrough(n_gpus=512)                               # the cache is not a field: equality holds
    no_plan = Walkthrough(n_gpus=8)
    for _ in range(2):                                                # a refusal is not cached into an answer
        with pytest.raises(ValueError, match="no plan"):
            no_plan.step4_plan()


def test_interruptions_are_counted_over_the_wall_clock_as_chapter_7_counts_them():
    # issue 27 (A7-2): failures strike the wall clock, restarts and lost work included; chapter 13's summary table
    # printed 74 (training time only) where chapter 7 printed 76 for the same run (74 on the wall clock since the
    # step model prices GEMMs at their FLOP-weighted width, 73 since their half width is the ridge point, issue 24)
    f = W.step6_failures()
    assert f.expected_interruptions == pytest.approx(f.wall_seconds / f.mtbf, rel=1e-12)
    assert round(f.expected_interruptions) == 73
