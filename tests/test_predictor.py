"""The one step-time model (chipchain.steptime) and its fitted predictor (chipchain.predictor) against published
configurations, scored leave-one-family-out; the identities that make chapters 4, 13 and 14 agree to the second."""
from __future__ import annotations

import math
import statistics
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import (frameworks, models, parallel, plans, predictor, published_runs, steptime, systems,
                       traffic, walkthrough, units)

SEED = parallel.Plan(tp=8, pp=16, dp=8, zero=1, microbatches=192, sequence_parallel=True, recompute="selective")


# --- scoring: leave one family out ----------------------------------------------------------------------------

def test_no_row_is_predicted_by_a_fit_that_saw_its_family():
    errs = predictor.step_errors()
    assert len(errs) >= 100
    assert all(e.family not in e.fitted_on for e in errs)
    assert all(math.isfinite(e.predicted) and e.predicted > 0 for e in errs)


def test_leave_one_family_out_accuracy_where_the_model_is_complete():
    # Each family predicted without any of its own rows. (The floor, 8 % median over everything, is not met:
    # MoE and long-context rows are far off; chapter 14 shows every family.) Bounds are today's results rounded up, a
    # regression guard with its reason: Korthikanti's family is the running example's hardware and framework; the
    # Megatron-Bridge tables, read with their recipes' recomputation, offloading and all-to-all overlap, fell from a
    # 33 % to a 23 % median when those settings entered the model; Nemotron-4 and NeMo 24.07 are Megatron-Core on
    # H100 whose kernels the newer tables outrun (their FP8 efficiency is fitted on the 2025-26 releases).
    summary = predictor.family_summary()
    assert summary["Korthikanti 2022"][1] <= 0.13 and summary["Korthikanti 2022"][2] <= 0.20, summary
    assert summary["Megatron-Bridge performance summary (NeMo 25.09–26.08)"][1] <= 0.25
    assert summary["Nemotron-4"][2] <= 0.35, summary["Nemotron-4"]
    assert summary["NeMo 24.07 performance summary (DGX-H100, FP8)"][1] <= 0.22
    errs = [abs(e.error) for e in predictor.step_errors()]
    assert statistics.median(errs) <= 0.21 and sum(e <= 0.2 for e in errs) >= 75


def test_in_sample_the_running_examples_family_is_within_ten_percent():
    # Korthikanti et al. 2022 Tables 3-5: the same hardware and framework as the running example
    errs = {e.name: e for e in predictor.step_errors("none")}
    for name in ("kort-175b-sel", "kort-530b-sel", "kort-1t-sel", "kort-175b-full"):
        assert abs(errs[name].error) <= 0.10, (name, errs[name].error)


def test_interval_brackets_the_point_and_covers_most_rows():
    lo, hi = predictor.interval(10.0, 0.8)
    assert lo < 10.0 < hi
    errs = predictor.step_errors()
    inside = sum(predictor.interval(e.predicted, 0.8)[0] <= e.measured <= predictor.interval(e.predicted, 0.8)[1]
                 for e in errs)
    assert inside / len(errs) >= 0.75          # an 80 % interval from these same residuals (in-sample coverage)


def test_rows_outside_the_model_are_named_and_still_scored():
    out = set(predictor.outside_rows())
    scored = {e.name for e in predictor.step_errors()}
    assert out <= scored
    # today: expert-parallel MoE rows, and DeepSpeed 2021's ZeRO-3 rows, whose exposed gathers at one NIC per GPU
    # come within a few per cent of the measured step on their own
    for n in out:
        r = published_runs.get(n)
        assert r.model.is_moe or (r.plan["framework"] == "deepspeed-2021" and r.plan["zero"] == 3), n


def test_published_twins_put_a_floor_under_any_models_worst_error():
    """Megatron-Bridge's 26.02 and 26.02.01 tables print one Qwen3-30B-A3B configuration (16 H100s, FP8, PP 2, VP 12,
    EP 8, GBS 1,024 × 4,096) at 5,113 and 9,058 tokens/s/GPU. Every setting the file records is the same, so any
    model that gives a configuration one answer misses one of them by (slow − fast) / (slow + fast) or more."""
    a, b = (published_runs.get(n) for n in ("mb2602-qwen3-30b-a3b-h100-16-fp8", "mb260201-qwen3-30b-a3b-h100-16-fp8"))
    assert a.plan == b.plan and a.model == b.model and (a.accelerator, a.n_gpus, a.dtype) == (b.accelerator, b.n_gpus, b.dtype)
    slow, fast = (1024 * 4096 / (tps * 16) for tps in (5_113, 9_058))       # the step from the printed throughput
    assert (a.step_seconds, b.step_seconds) == pytest.approx((slow, fast), rel=1e-3)
    bound = dict((frozenset(names), x) for names, x in predictor.twins())[frozenset((a.name, b.name))]
    assert bound == pytest.approx((9_058 - 5_113) / (9_058 + 5_113), rel=1e-3) and bound > 0.2   # above the floor
    # the book's model gives each group one answer, so its worst error over a group is never under the group's bound
    errs = {e.name: abs(e.error) for e in predictor.step_errors()}
    for names, x in predictor.twins():
        assert max(errs[n] for n in names) >= x - 1e-12, names


def test_row_wise_fp8_scaling_is_recorded_and_left_out_of_the_fit():
    """torchtitan's async-TP benchmark (2025-06) runs Llama 3 70B on 256 H100s with float8 tensor-wise and row-wise
    scaling: 809.8 and 599.6 tokens/s with vanilla TP, 942.4 and 624.8 with async TP. Row-wise is 1.35–1.51 × slower
    on one plan; the format effect is fitted on one scale per tensor, so the row-wise rows stay out of the fit."""
    tensor, row = (published_runs.get(f"tt-asynctp-llama3-70b-256-fp8-{s}-asynctp") for s in ("tensorwise", "rowwise"))
    assert (tensor.plan["fp8_scaling"], row.plan["fp8_scaling"]) == ("tensorwise", "rowwise")
    assert row.step_seconds / tensor.step_seconds == pytest.approx(942.4 / 624.8, rel=2e-3)
    fitted = set(predictor._effects(())[4])
    rowwise = {r.name for r in published_runs.runs() if r.plan["fp8_scaling"] == "rowwise"}
    assert len(rowwise) == 4 and not rowwise & fitted and tensor.name in fitted
    assert rowwise <= {e.name for e in predictor.step_errors()}              # still scored, like every row


def test_a_plan_that_ran_fits_in_memory():
    # every published step whose recomputation is stated, or chosen as the least that fits, fits the ledger —
    # except torchtitan's 8B rows, run on 96 GB H100s the catalog's 80 GB part does not describe. (NeMo 25.04's
    # Llama 3 70B on 64 GB200 reads "FSDP 1": FSDP on, so the weights are sharded, and it fits.)
    errs = predictor.step_errors()
    bad = [e.name for e in errs if not e.prediction.fits]
    allowed = {"tt-t1-llama3-8b-8-fsdp", "tt-t1-llama3-8b-8-fsdp-compile", "tt-t1-llama3-8b-8-fsdp-compile-fp8"}
    assert set(bad) <= allowed, bad


# --- the model's mechanisms, each against a published configuration or an exact identity ------------------------

def test_parts_add_up_and_mfu_below_hfu():
    p = predictor.predict_step("175B", "A100", 1024, tp=8, pp=16, batch=1536, recompute="full",
                               framework="megatron-2022")
    parts = p.compute + p.recompute + p.bubble + p.exposed_comm + p.optimizer
    assert p.seconds == pytest.approx(parts, rel=1e-12)
    assert 0 < p.mfu < p.hfu < 1


def test_attention_grows_with_the_context_and_stays_in_bf16_under_fp8():
    # per token, attention's FLOPs grow with the tokens it attends to (4·l·d·s, halved when causal); the matmuls' do
    # not: four times the context at the same tokens per GPU is four times the attention and the same rest
    def step(seq, microbatches, dtype="bf16"):
        m = models.custom(layers=32, hidden=4096, heads=32, kv_heads=8, seq=seq, vocab=128256, ffn=14336,
                          mlp_matrices=3)
        plan = parallel.Plan(tp=1, dp=8, microbatches=microbatches, recompute="selective")
        return steptime.step_time(plan, m, "H100", efficiency=0.4, dtype=dtype)
    short, long = step(8192, 4), step(32768, 1)
    assert long.attention == pytest.approx(4 * short.attention, rel=1e-12)
    rest = [s.compute + s.recompute - s.attention for s in (short, long)]
    assert rest[1] == pytest.approx(rest[0], rel=1e-12) and 0 < short.attention < long.attention < rest[0] + long.attention
    # FP8 training runs the linear layers in FP8; FlashAttention's core stays in BF16, at the same seconds
    assert step(32768, 1, "fp8").attention == pytest.approx(long.attention, rel=1e-12)


def test_fp8_has_its_own_efficiency_far_below_twice_bf16():
    # published FP8-vs-BF16 speed-ups are far below 2× (torchtitan 2024-12 Table 1: 8,532 / 5,762 = 1.48×)
    plan = parallel.Plan(tp=4, pp=4, dp=4, zero=1, microbatches=32, sequence_parallel=True, recompute="selective")
    b = predictor.predict_plan(plan, "Llama-3-70B", "H100", dtype="bf16", check_memory=False)
    f = predictor.predict_plan(plan, "Llama-3-70B", "H100", dtype="fp8", check_memory=False)
    assert 1.05 < b.seconds / f.seconds < 1.8
    assert predictor.matmul_efficiency("H100", dtype="fp8") < predictor.matmul_efficiency("H100", dtype="bf16")


def test_wide_and_fine_grained_experts_are_fitted_apart():
    # Mixtral 8x7B routes 2 of 8 experts 14,336 wide (3.5 h: dense-sized MLPs); DeepSeek-V3 8 of 256 at 2,048
    # (DeepSeek-AI 2024 §4.2), Qwen3-30B-A3B 8 of 128 at 768, gpt-oss-120b 4 of 128 at 2,880: fine-grained
    model = lambda row: published_runs.get(row).model                          # noqa: E731
    assert predictor.model_kind(model("nemo2502-mixtral-8x7b-b200-64-fp8")) == "moe"
    assert predictor.model_kind("Llama-3-70B") == "dense" and predictor.model_kind("DeepSeek-V3") == "fine-grained moe"
    assert {predictor.model_kind(model(r)) for r in ("mb2509-qwen3-30b-a3b-h100-16-fp8", "am-gpt-oss-120b-h100-64-bf16",
                                                     "mb2509-qwen3-235b-a22b-h100-256-fp8")} == {"fine-grained moe"}
    # NeMo 25.02's and 25.04's Mixtral rows, each predicted without its family (so from the other's Mixtral row for
    # the wide-expert effect): one MoE factor fitted mostly on fine-grained rows put them 70 % and 112 % too slow
    errs = {e.name: e.error for e in predictor.step_errors()}
    for row in ("nemo2502-mixtral-8x7b-b200-64-fp8", "nemo2504-mixtral-8x7b-gb200-64-fp8"):
        assert abs(errs[row]) < 0.15, (row, errs[row])
    # a fine-grained mixture runs further below the peak than a wide one, which runs below a dense model
    fine, wide = (predictor.matmul_efficiency("H100", moe=k) for k in ("fine-grained moe", "moe"))
    assert fine < wide < predictor.matmul_efficiency("H100")
    with pytest.raises(ValueError, match="moe"):
        predictor.matmul_efficiency("H100", moe="sparse")


def test_gb200_rows_run_at_the_gb200s_own_peak():
    # NVIDIA's NVL72 page: 180 PFLOPS dense BF16 over 72 GPUs = 2.5 each, above the DGX B200's 2.25; every GB200
    # row of the benchmark tables is priced on that part, in its own generation
    rows = [r for r in published_runs.runs() if r.system == "GB200-NVL72"]
    assert len(rows) >= 30 and {r.accelerator.name for r in rows} == {"GB200"}
    assert predictor.generation("GB200") != predictor.generation("B200")


def test_untied_input_embedding_is_a_lookup():
    # Nemotron-4 15B's shape: 10 % of its parameters are the input table, which costs nothing to read
    m = models.custom(layers=32, hidden=6144, heads=48, kv_heads=8, seq=4096, vocab=256000, ffn=24576)
    tied = models.custom(layers=32, hidden=6144, heads=48, kv_heads=8, seq=4096, vocab=256000, ffn=24576,
                         tied_embeddings=True)
    lookup = m.vocab * m.hidden
    per_token = steptime.executed_flops_per_token
    # untying adds parameters but no FLOPs: the second table is read, not multiplied
    assert per_token(m) == pytest.approx(per_token(tied), rel=1e-12)
    assert m.params - tied.params == pytest.approx(lookup)


def test_context_parallel_variants_move_the_same_bytes_and_ring_overlaps():
    # Llama 3 405B at 131,072 tokens, CP 16 (Dubey et al. 2024 Table 4): all-gather of K,V vs ring hops
    m = models.custom(layers=126, hidden=16384, heads=128, kv_heads=8, seq=131072, vocab=128256, ffn=53248,
                      mlp_matrices=3)
    rows = {}
    for v in parallel.CP_VARIANTS:
        plan = parallel.Plan(tp=8, cp=16, pp=16, dp=8, microbatches=16, sequence_parallel=True,
                             recompute="selective", cp_variant=v)
        rows[v] = {r.kind.split()[0]: r for r in traffic.communication(plan, m, "H100")}["CP"]
    ag, ring = rows["all-gather"], rows["ring"]
    # forward: both deliver (cp − 1) chunks of K, V to every rank; backward the ring also passes dK, dV
    assert ag.sent_bytes / 2 == pytest.approx(ring.sent_bytes / 3, rel=1e-12)


def test_zero3_gathers_the_weights_every_micro_batch():
    one = parallel.Plan(tp=1, pp=1, dp=64, zero=3, microbatches=1)
    four = parallel.Plan(tp=1, pp=1, dp=64, zero=3, microbatches=4)
    r1 = traffic.communication(one, "Llama-3-70B", "H100")[0]
    r4 = traffic.communication(four, "Llama-3-70B", "H100")[0]
    # weights (2 B) gathered forward and backward per micro-batch, gradients (2 B) reduce-scattered once
    assert (r4.sent_bytes - r1.sent_bytes) == pytest.approx(6 * r1.sent_bytes / 3, rel=1e-9)


def test_deepspeed_2021_zero3_stops_scaling_as_table_2_measured():
    # Narayanan et al. 2021 Table 2: ZeRO-3 on 174.6B took 66.75 s a step on 768 A100s and again on 1,536, while the
    # computation per GPU halved — its gathers ran exposed at about one NIC's bandwidth per GPU (dp_links "nic").
    # Leave-one-family-out, every ZeRO-3 row is within 20 %, and the 768 → 1,536 step falls by far less than half.
    errs = {e.name: e for e in predictor.step_errors()}
    z3 = [n for n in errs if n.startswith("narayanan21-t2-zero3-")]
    assert len(z3) == 6
    for n in z3:
        assert abs(errs[n].error) <= 0.20, (n, errs[n].error)
    a, b = errs["narayanan21-t2-zero3-175b-768"], errs["narayanan21-t2-zero3-175b-1536"]
    assert a.measured == b.measured and b.predicted / a.predicted > 0.7
    # the same plan at a node's eight NICs (NCCL's rails) would move its 3Ψ in an eighth of the time
    plan, m = b.prediction.plan, published_runs.get(b.name).model
    c = systems.cluster("A100-SXM-80GB", 1536)
    node = traffic.communication(plan, m, c, dp_links="node")[-1]
    nic = traffic.communication(plan, m, c, dp_links="nic")[-1]
    assert node.sent_bytes == nic.sent_bytes
    assert nic.seconds / node.seconds == pytest.approx(8, rel=0.05)     # 8 HDR NICs per DGX A100 node
    with pytest.raises(ValueError, match="dp_links"):
        traffic.communication(plan, m, c, dp_links="rail")


def test_uneven_stages_run_at_the_pace_of_the_fullest():
    # Llama 3 405B: 126 layers on 16 stages hold 8 or 7 (the paper removes one layer from the first and the last)
    assert max(parallel.stage_layers(126, 16)) == 8 and sum(parallel.stage_layers(126, 16)) == 126
    m = models.get("405B")
    even = models.custom(layers=128, hidden=m.hidden, heads=m.heads, kv_heads=m.kv_heads, seq=m.seq,
                         vocab=m.vocab, ffn=m.ffn, mlp_matrices=3)
    kw = dict(tp=8, pp=16, dp=8, microbatches=16, sequence_parallel=True, recompute="selective")
    a = steptime.step_time(parallel.Plan(**kw), m, "H100", efficiency=0.5)
    b = steptime.step_time(parallel.Plan(**kw), even, "H100", efficiency=0.5)
    # 128 layers: every stage holds 8 and the last one the output layer too, so it sets the pace; with 126 the
    # last stage holds 7 plus the output layer and the pace is set by the 8-layer stages: shorter, as Llama 3 meant
    assert a.compute < b.compute
    layer = b.compute * 0 + (b.compute - a.compute)            # the output layer's share of the last stage
    assert 0 < layer < b.compute / 8


def test_deepseek_v3_is_priced_on_its_active_parameters():
    w = walkthrough.Walkthrough(model="DeepSeek-V3", accelerator="H800", n_gpus=2048, tokens=14.8e12, dtype="fp8",
                                framework="dualpipe")
    assert w.step2_compute().flops == pytest.approx(6 * 37e9 * 14.8e12, rel=1e-9)
    # 6·671 B·D would say 681 days at the book's old 50 % on BF16; on 37 B the top-down range is tens of days
    assert w.step3_time().days[0.5] < 60


def test_a_token_crosses_the_network_once_per_node_under_hybridep():
    # Megatron-Bridge 26.04, 26.04.01 and 26.06: Qwen3-30B-A3B on 16 H100s, EP 16 over two nodes, the "flex"
    # dispatcher with HybridEP and no all-to-all overlap (docs/research/published-runs/recipes.csv). A token's 8 of
    # 128 experts sit on both nodes almost always, so HybridEP sends it across InfiniBand once where an all-to-all of
    # one row per expert sends four. Priced that way the measured steps are met within 10 %; one copy per expert
    # would make them 25 % or more too slow.
    for name in ("mb2604-qwen3-30b-a3b-h100-16-fp8", "mb260401-qwen3-30b-a3b-h100-16-fp8",
                 "mb2606-qwen3-30b-a3b-h100-16-fp8"):
        r = published_runs.get(name)
        assert r.plan["ep_dispatch"] == "per-node" and r.plan["ep"] == 16 and r.plan["ep_overlap"] is False
        kw = dict(dtype=r.dtype, framework=r.plan["framework"], check_memory=False, ep_overlap=False)
        one, each = (predictor.predict_plan(predictor._plan_of(name), r.model, predictor._cluster(r), ep_dispatch=d,
                                            **kw).seconds / r.step_seconds - 1 for d in ("per-node", "per-expert"))
        assert abs(one) <= 0.10 and each >= 0.25, (name, one, each)
    with pytest.raises(ValueError, match="are beyond"):
        predictor.row_prediction(name, ep_dispatcher="per-node")          # a misspelt setting is named, not ignored
    with pytest.raises(ValueError, match="ep_dispatch"):
        predictor.row_prediction(name, ep_dispatch="per-rank")
    # the framework's own setting, where a row states none: AutoModel and DeepSeek's stack dispatch per node
    assert [frameworks.get(f).ep_dispatch for f in ("nemo-automodel", "dualpipe", "megatron-core")] == [
        "per-node", "per-node", "per-expert"]


def test_framework_lineage_ends_at_the_oldest_megatron():
    assert frameworks.lineage("megatron-bridge")[-1] == "megatron-2021"
    for f in frameworks.all_frameworks():
        assert f.name in frameworks.lineage(f.name)


# --- one model: chapters 4, 13 and 14 agree to the second -------------------------------------------------------

def test_three_chapters_agree_to_the_second():
    w = walkthrough.Walkthrough()
    ch4 = plans.analyze(w.plan, w.model, w.cluster, framework=w.framework).step_seconds
    ch13 = w.step3_run().step_seconds
    ch13_plan = w.step4_plan().step_seconds
    ch14 = predictor.predict_step(w.model, w.accelerator, w.n_gpus, tp=w.tp, pp=w.pp, batch=w.batch,
                                  framework=w.framework).seconds
    assert ch4 == ch13 == ch13_plan == ch14


def test_mfu_is_6nd_over_the_peak_so_top_down_and_bottom_up_meet():
    w = walkthrough.Walkthrough()
    r = w.step3_run()
    top_down = w.step2_compute().flops / (w.n_gpus * w.accelerator.peak_flops("bf16") * r.mfu)
    assert top_down == pytest.approx(r.seconds, rel=1e-12)
    assert r.wall_seconds > r.seconds       # chapter 7's failures on top


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["A100", "H100", "H200", "B200", "GB200", "MI300X", "H800", "Gaudi-3", "Ascend-910B"]),
       st.sampled_from(["175B", "70B", "13B"]))
def test_the_capstone_works_on_every_training_part(acc, model):
    # every step ① – ⑨ or a refusal by name: no "pass host_share=" and no failure at the serving step
    w = walkthrough.Walkthrough(model=model, accelerator=acc)
    for step in ("step1_states", "step2_compute", "step3_time", "step6_failures", "step7_electricity",
                 "step8_export", "step9_serving"):
        getattr(w, step)()
    if w.plan is not None:
        assert w.step3_run().seconds > 0 and w.step5_memory_per_gpu().states_plan > 0


def test_a_custom_moe_model_runs_the_whole_ledger():
    m = models.custom(name="toy MoE", layers=24, hidden=2048, heads=16, seq=4096, vocab=32000, experts=64,
                      experts_active=4, params=30e9, active_params=4e9, ffn=1024, mlp_matrices=3)
    w = walkthrough.Walkthrough(model=m, accelerator="H100", n_gpus=64, tokens=1e12, batch=512)
    assert w.step2_compute().flops == pytest.approx(6 * 4e9 * 1e12)
    w.step9_serving()


def test_predict_step_refuses_a_plan_that_does_not_fit_and_bad_degrees():
    with pytest.raises(ValueError, match="does not fit"):
        predictor.predict_step("175B", "A100", 8, tp=8, pp=1, batch=8, recompute="none")
    with pytest.raises(ValueError, match="n_gpus"):
        predictor.predict_step("175B", "A100", 1000, tp=8, pp=16, batch=1536)
    with pytest.raises(ValueError, match="batch="):
        predictor.predict_step("175B", "A100", 1024, tp=8, pp=16, batch=1001)
    with pytest.raises(KeyError, match="nearest"):
        predictor.predict_step("175B", "A100", 1024, tp=8, pp=16, batch=1536, framework="megatron-2099")
    with pytest.raises(ValueError, match="efficiency"):
        steptime.step_time(SEED, "175B", systems.cluster("A100", 1024), efficiency=1.5)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 14), st.sampled_from([1, 2, 4, 8]))
def test_more_data_parallel_gpus_answer_fast_and_finite(k, pp):
    """Up to 8 × 8 × 2¹⁴ ≈ 10⁶ GPUs: answers within a second (CPU time), time per step positive."""
    n = 8 * pp * 2 ** k
    t0 = time.process_time()
    p = predictor.predict_step("7B", "H100", n, tp=8, pp=pp, batch=2 ** k * 64, check_memory=False)
    assert time.process_time() - t0 < 1.0 and p.seconds > 0 and 0 < p.mfu < 1
