"""chipchain.deepseek: DeepSeek-V3's published accounting (Table 1), Table 2's bubbles and memory, MLA's cache, and
the book's models built on them. Source: DeepSeek-AI 2024, DeepSeek-V3 Technical Report; Zhao et al. 2025, Table 1."""

import pytest
from hypothesis import given, settings, strategies as st

from chipchain import calibration, deepseek as ds, hardware, memory, models, parallel, views


# --- the report's numbers (DeepSeek-AI 2024, Table 1 and Sec. 1) --------------------------------------------------

def test_gpu_hour_sum_is_the_reported_total():
    # Table 1: 2.664 M + 0.119 M + 0.005 M = 2.788 M H800 GPU-hours
    assert ds.V3.gpu_hours == {"pre-training": 2664e3, "context extension": 119e3, "post-training": 5e3}
    assert ds.gpu_hours_total() == pytest.approx(2788e3, abs=0.5)
    assert ds.stage_gpu_hours("post-training") == 5e3


def test_cost_breakdown_matches_table_1():
    c = ds.cost_breakdown()
    assert c["pre-training"] == pytest.approx(5.328e6)                     # Table 1
    assert c["context extension"] == pytest.approx(0.238e6)
    assert c["post-training"] == pytest.approx(0.01e6)
    assert c["total"] == pytest.approx(5.576e6)
    assert sum(v for k, v in c.items() if k != "total") == pytest.approx(c["total"])


def test_cost_scales_with_price():
    assert ds.cost_breakdown(price_per_gpu_hour=4.0)["total"] == pytest.approx(2 * 5.576e6)


def test_180k_hours_per_trillion_is_3_7_days_and_matches_pretraining_hours():
    assert ds.days_per_trillion_tokens(180e3, 2048) == pytest.approx(3.7, abs=0.05)   # Sec. 1: "3.7 days"
    # 14.8 T tokens × 180 K GPU-hours per T = 2,664 K, the pre-training line of Table 1
    assert ds.V3.tokens / 1e12 * ds.V3.gpu_hours_per_trillion_tokens == pytest.approx(ds.V3.gpu_hours["pre-training"])


def test_run_facts_and_plan():
    assert (ds.V3.n_gpus, ds.V3.accelerator) == (2048, "H800")
    assert (ds.V3.total_params, ds.V3.active_params, ds.V3.tokens) == (671e9, 37e9, 14.8e12)
    assert ds.V3.model is models.get("DeepSeek-V3")
    assert (ds.V3.plan.pp, ds.V3.plan.ep, ds.V3.plan.tp, ds.V3.plan.zero) == (16, 64, 1, 1)   # Sec. 3.2
    assert ds.V3.plan.n_gpus == ds.V3.n_gpus
    assert ds.V3.comm_sms == 20 and ds.V3.comm_sms < hardware.get("H800").sms                # Sec. 3.2.2
    assert len(ds.V3.excludes) >= 4 and ds.V3.checked == "V"


# --- implied MFU: the book's estimate -----------------------------------------------------------------

def test_implied_mfu_on_both_peaks():
    bf16 = calibration.implied_mfu(37e9, 14.8e12, 2664e3, "H800", "bf16")
    fp8 = calibration.implied_mfu(37e9, 14.8e12, 2664e3, "H800", "fp8")
    # 6·37e9·14.8e12 / (2.664e6·3600 s) = 342.6 TFLOP/s per GPU; / 989.4 and / 1,979 (catalog, dense)
    assert bf16 == pytest.approx(0.3463, abs=5e-4)
    assert fp8 == pytest.approx(0.1731, abs=5e-4)
    assert bf16 / fp8 == pytest.approx(hardware.get("H800").peak_flops("fp8") / hardware.get("H800").peak_flops("bf16"))


def test_same_job_on_h100_at_llama3_throughput():
    j = ds.job_on("H100", 400e12, 2048, 2.0)       # Dubey et al. 2024, Table 4: 400 TFLOP/s per GPU at 16,384 GPUs
    assert j.flops == pytest.approx(3.2856e24)
    assert j.gpu_hours == pytest.approx(3.2856e24 / 400e12 / 3600)
    assert j.dollars == pytest.approx(j.gpu_hours * 2.0)
    assert j.mfu == pytest.approx(0.404, abs=1e-3)
    # at the same achieved FLOP/s as V3's H800s the GPU-hours are V3's own pre-training hours
    x = ds.achieved_flops(37e9, 14.8e12, 2664e3)
    assert ds.job_on("H100", x, 2048, 2.0).gpu_hours == pytest.approx(2664e3)


def test_moe_saving():
    assert ds.moe_flops_saving() == pytest.approx(671 / 37)
    with pytest.raises(ValueError, match="active_params"):
        ds.moe_flops_saving(10e9, 20e9)


# --- Table 2: pipeline bubbles -----------------------------------------------------------------

@pytest.mark.parametrize("pp,f,b,w", [(16, 1.0, 2.0, 1.0), (8, 1.3, 2.1, 0.9), (32, 0.5, 1.0, 0.25)])
def test_bubble_formulas_of_table_2(pp, f, b, w):
    # Table 2 of the V3 report, evaluated by the one bubble function (chipchain.parallel.schedule_bubble)
    bubble = parallel.schedule_bubble
    assert bubble("1F1B", pp, f, b, w) == pytest.approx((pp - 1) * (f + b))
    assert bubble("ZB1P", pp, f, b, w) == pytest.approx((pp - 1) * (f + b - 2 * w))
    assert bubble("DualPipe", pp, f, b, w) == pytest.approx((pp / 2 - 1) * ((f + b) + b - 3 * w))
    assert bubble("DualPipe", pp, f, b, w, fb=2.0) == pytest.approx((pp / 2 - 1) * (2.0 + b - 3 * w))


def test_table_2_at_pp_16():
    assert [parallel.schedule_bubble(s, 16) for s in ds.SCHEDULES] == [45.0, 15.0, 14.0]


def test_schedule_memory_of_table_2():
    assert ds.schedule_memory("1F1B", 16) == ds.ScheduleMemory(1, 16)          # Table 2: 1×, PP
    assert ds.schedule_memory("ZB1P", 16) == ds.ScheduleMemory(1, 16)
    assert ds.schedule_memory("dualpipe", 16) == ds.ScheduleMemory(2, 17)      # Table 2: 2×, PP + 1


def test_bubble_table_shape():
    t = views.deepseek.bubble_table(16)
    assert list(t.index) == ["1F1B", "ZB-H1", "DualPipe"]
    assert t.loc["1F1B", "bubble (units of F)"] == 45


def test_pipeline_efficiency_values():
    assert ds.pipeline_efficiency("1F1B", 16, 64) == pytest.approx(192 / (192 + 45))
    assert ds.pipeline_efficiency("ZB1P", 16, 64) == pytest.approx(192 / (192 + 15))
    assert ds.pipeline_efficiency("DualPipe", 16, 64, comm=1.0) == pytest.approx(192 / (192 + 14))
    # exposed communication at 1 : 1 halves 1F1B's useful fraction or worse
    assert ds.pipeline_efficiency("1F1B", 16, 64, comm=1.0) < 0.5 * ds.pipeline_efficiency("1F1B", 16, 64) + 1e-12


@settings(max_examples=60, deadline=None)
@given(pp=st.sampled_from([2, 4, 8, 16, 32, 64]), extra=st.integers(0, 200), comm=st.floats(0, 1),
       s=st.sampled_from(list(ds.SCHEDULES)))
def test_more_microbatches_never_lower_efficiency(pp, extra, comm, s):
    m = pp + extra
    m += m % 2
    e1 = ds.pipeline_efficiency(s, pp, m, comm=comm)
    e2 = ds.pipeline_efficiency(s, pp, m + 2, comm=comm)
    assert 0 < e1 <= e2 <= 1


@settings(max_examples=60, deadline=None)
@given(pp=st.sampled_from([2, 4, 8, 16, 32]), f=st.floats(0.1, 5), b=st.floats(0.1, 5), wf=st.floats(0, 0.5))
def test_zero_bubble_never_worse_than_1f1b(pp, f, b, wf):
    w = wf * b
    bubble = parallel.schedule_bubble
    assert bubble("ZB1P", pp, f, b, w) <= bubble("1F1B", pp, f, b, w) + 1e-9
    assert bubble("DualPipe", pp, f, b, w) <= bubble("1F1B", pp, f, b, w) + 1e-9


@settings(max_examples=40, deadline=None)
@given(comm=st.floats(0, 1), pp=st.sampled_from([4, 8, 16]))
def test_communication_hurts_exposed_schedules_only(comm, pp):
    assert ds.pipeline_efficiency("1F1B", pp, 64, comm=comm) <= ds.pipeline_efficiency("1F1B", pp, 64) + 1e-12
    assert ds.pipeline_efficiency("DualPipe", pp, 64, comm=comm) == ds.pipeline_efficiency("DualPipe", pp, 64)


# --- FP8 and MLA -----------------------------------------------------------------

def test_state_bytes_recipes():
    assert memory.recipe("bf16-mixed").total == 16            # Rajbhandari et al. 2020: 2 + 2 + 12
    assert memory.recipe("deepseek-v3-fp8").total == 12       # 4 + 4 + 2 + 2 (V3 report, Sec. 3.3)
    t = views.deepseek.recipe_table()
    assert t.loc["deepseek-v3-fp8", "states of 671 B"] == "8.1 TB"


def test_fp8_speedup_is_amdahl():
    assert ds.fp8_speedup(0.0) == 1.0 and ds.fp8_speedup(1.0) == 2.0
    assert ds.fp8_speedup(0.5) == pytest.approx(1 / (0.5 + 0.25))


@settings(max_examples=50, deadline=None)
@given(g1=st.floats(0, 1), g2=st.floats(0, 1))
def test_fp8_speedup_monotone_and_bounded(g1, g2):
    lo, hi = sorted((g1, g2))
    assert 1 <= ds.fp8_speedup(lo) <= ds.fp8_speedup(hi) <= 2


def test_mla_kv_compression_for_v3_shape():
    k = ds.mla_compression()
    assert k.mla_bytes == 70272                               # Zhao et al. 2025, Table 1: 70.272 KB per token, BF16
    assert k.mha_bytes == 2 * 128 * 128 * 61 * 2              # every head caches a key and a value
    assert k.ratio == pytest.approx(56.89, abs=0.01)
    # DeepSeek-V2 report, Table 1: MLA's cache equals 4.5 · d_h · l elements when d_c = 4 d_h and d_h^R = d_h / 2
    assert k.mla_bytes / 2 == pytest.approx(4.5 * 128 * 61)
    with pytest.raises(ValueError, match="latent"):
        ds.mla_compression("70B")


def test_accounting_table():
    t = views.deepseek.accounting_table()
    assert t.loc["total", "GPU-hours (K)"] == pytest.approx(2788)
    assert t.loc["total", "cost ($ M)"] == pytest.approx(5.576)


# --- bad input -----------------------------------------------------------------

@pytest.mark.parametrize("call,match", [
    (lambda: ds.schedule_memory("GPipe", 8), "schedule"),
    (lambda: ds.schedule_memory("1F1B", 1), "pp"),
    (lambda: ds.pipeline_efficiency("GPipe", 8, 8), "schedule"),
    (lambda: ds.pipeline_efficiency("1F1B", 16, 8), "at least pp"),
    (lambda: ds.pipeline_efficiency("DualPipe", 16, 33), "even"),
    (lambda: ds.pipeline_efficiency("DualPipe", 16, 32, comm=1.5), "comm"),
    (lambda: ds.pipeline_efficiency("1F1B", 16, 32, comm=-0.1), "comm"),
    (lambda: ds.fp8_speedup(1.2), "gemm_fraction"),
    (lambda: ds.fp8_speedup(0.5, gain=0.5), "gain"),
    (lambda: calibration.implied_mfu(37e9, 14.8e12, 0, "H800"), "gpu_hours"),
    (lambda: calibration.implied_mfu(37e9, 14.8e12, 1.0, "H800"), "(above 1)"),
    (lambda: calibration.implied_mfu(37e9, 14.8e12, 2664e3, "H800", "fp4"), "dtype"),
    (lambda: ds.days_per_trillion_tokens(180e3, 0), "n_gpus"),
    (lambda: ds.job_on("H100", float("nan"), 2048, 2.0), "achieved_flops"),
    (lambda: ds.stage_gpu_hours("pre-trainin"), "stage"),
    (lambda: ds.mla_compression("V3", "fp4"), "dtype"),
    (lambda: ds.gpu_hours_total("V3"), "run"),
    (lambda: ds.cost_breakdown(price_per_gpu_hour=-1), "price_per_gpu_hour"),
])
def test_bad_input_is_a_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_unknown_accelerator_is_key_error():
    with pytest.raises(KeyError, match="nearest"):
        ds.job_on("H900", 400e12, 2048, 2.0)


def test_pipeline_efficiency_figure_lines():
    f = views.deepseek.pipeline_efficiency_figure(pp=16, comm=0.5)
    assert set(f.data["lines"]) == set(ds.SCHEDULES)
    y = f.data["lines"]["DualPipe"]
    assert y[-1] == 100 * ds.pipeline_efficiency("DualPipe", 16, 256, comm=0.5)
    assert all(a <= b for a, b in zip(y, y[1:]))
    assert "<img" not in f._repr_html_()


# --- issue 13: properties of every public function (up to 10⁶ GPUs and multi-year runs; each call < 1 s) ---------

import dataclasses
import math
import time


def _quick(call):
    t = time.process_time()
    out = call()
    assert time.process_time() - t < 1.0
    return out


@settings(max_examples=30, deadline=None)
@given(hours=st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.floats(0, 1e12), min_size=1),
       price=st.floats(0, 1e3))
def test_ledger_adds_up_for_any_run(hours, price):
    # total GPU-hours = Σ stages; dollars = hours × price per stage and in total; a stage reads back as written
    run = dataclasses.replace(ds.V3, gpu_hours=hours, price_per_gpu_hour=price)
    total = _quick(lambda: ds.gpu_hours_total(run))
    assert total == pytest.approx(sum(hours.values()))
    cost = _quick(lambda: ds.cost_breakdown(run))
    assert cost["total"] == pytest.approx(total * price) and cost["total"] == pytest.approx(
        sum(v for k, v in cost.items() if k != "total"), rel=1e-12, abs=1e-6)
    assert all(ds.stage_gpu_hours(k, run) == v for k, v in hours.items())


@settings(max_examples=30, deadline=None)
@given(h=st.floats(1, 1e12), n=st.integers(1, 1_000_000))
def test_days_per_trillion_is_hours_over_gpus(h, n):
    # 180 K GPU-hours on 2,048 GPUs is 3.66 days; twice the GPUs halve the wall clock
    d = _quick(lambda: ds.days_per_trillion_tokens(h, n))
    assert math.isfinite(d) and d * n * 24 == pytest.approx(h)


@settings(max_examples=30, deadline=None)
@given(n_act=st.floats(1e6, 1e13), tokens=st.floats(1e6, 1e15), hours=st.floats(1e3, 1e12),
       acc=st.sampled_from(["H800", "H100", "A100", "B200"]), dtype=st.sampled_from(["bf16", "fp8"]))
def test_achieved_flops_and_mfu_are_6nd_over_time(n_act, tokens, hours, acc, dtype):
    x = _quick(lambda: ds.achieved_flops(n_act, tokens, hours))
    assert x * hours * 3600 == pytest.approx(6 * n_act * tokens)
    peak = hardware.get(acc).peak_flops(dtype) if dtype in hardware.get(acc).precisions() else None
    if peak is None:
        return
    if x <= peak * (1 - 1e-12):                       # clear of the boundary by more than rounding
        assert _quick(lambda: calibration.implied_mfu(n_act, tokens, hours, acc, dtype)) == pytest.approx(x / peak)
    elif x > peak * (1 + 1e-12):                      # more than the peak is impossible and says so
        with pytest.raises(ValueError, match=r"gpu_hours .*\(above 1\)"):
            calibration.implied_mfu(n_act, tokens, hours, acc, dtype)


@settings(max_examples=30, deadline=None)
@given(x=st.floats(1e9, 2e15), n=st.integers(1, 1_000_000), price=st.floats(0, 100),
       acc=st.sampled_from(["H100", "H800", "A100"]))
def test_job_on_conserves_the_work(x, n, price, acc):
    # GPU-hours × 3600 × X = 6ND; days = hours / n / 24; dollars = hours × price — for clusters up to 10⁶ GPUs
    peak = hardware.get(acc).peak_flops("bf16")
    if x > peak:
        with pytest.raises(ValueError):
            ds.job_on(acc, x, n, price)
        return
    j = _quick(lambda: ds.job_on(acc, x, n, price))
    assert j.gpu_hours * 3600 * x == pytest.approx(j.flops)
    assert j.days * n * 24 == pytest.approx(j.gpu_hours) and j.dollars == pytest.approx(j.gpu_hours * price)
    assert j.mfu == pytest.approx(x / peak)


@settings(max_examples=30, deadline=None)
@given(total=st.floats(1, 1e15), frac=st.floats(1e-6, 1))
def test_moe_saving_is_at_least_one(total, frac):
    s = _quick(lambda: ds.moe_flops_saving(total, total * frac))
    assert s >= 1 - 1e-12 and s == pytest.approx(1 / frac)


@settings(max_examples=30, deadline=None)
@given(s=st.sampled_from(sorted(ds.SCHEDULES)), pp=st.integers(2, 1_000_000))
def test_schedule_memory_holds_the_pipeline(s, pp):
    # Table 2: every schedule holds at least PP micro-batches' activations; DualPipe one more and two copies
    m = _quick(lambda: ds.schedule_memory(s, pp))
    assert m.activation_microbatches == pp + (s == "DualPipe") and m.param_copies == (2 if s == "DualPipe" else 1)
