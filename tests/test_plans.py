"""chipchain.plans: the search says why when nothing qualifies, and answers within a second for up to 10⁶ GPUs."""
import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import hardware, models, parallel, plans, walkthrough


def test_search_failure_carries_the_reason_memory():
    # 530B (MT-NLG) needs ~16 B/param of model states alone: 64 A100 cannot hold it under any split
    with pytest.raises(ValueError, match=r"none of the [\d,]+ valid plans fits in 80 GiB .* the smallest needs"):
        plans.search("530B", "A100", 64)


def test_search_failure_carries_the_reason_divisibility():
    # 7 GPUs: no TP divides 96 heads and no PP divides 96 layers with a DP dividing the batch of 1,536 ... except 1 x 1 x 7
    with pytest.raises(ValueError, match="heads.*layers.*batch"):
        plans.search("175B", "A100", 7, batch=1536)


def test_walkthrough_reports_the_search_reason():
    w = walkthrough.Walkthrough(n_gpus=8)
    assert w.plan is None and "none of the" in w.plan_reason


@given(st.integers(1, 10**6), st.sampled_from(["13B", "175B", "1T"]), st.sampled_from([512, 1536, 4096]))
@settings(max_examples=40, deadline=None)
def test_search_answers_within_a_second_up_to_a_million_gpus(n, model, batch):
    t0 = time.process_time()
    try:
        found = plans.search(model, "H100", n, batch=batch, top=3)
    except ValueError as err:
        assert str(err).startswith("no plan for")
        found = []
    assert time.process_time() - t0 < 1.0
    for c in found:
        assert math.isfinite(c.step_seconds) and c.step_seconds > 0 and math.isfinite(c.memory_bytes)
        assert c.plan.n_gpus == n


@given(st.integers(1, 64), st.integers(1, 10**4), st.integers(1, 4))
@settings(max_examples=100, deadline=None)
def test_parallel_closed_forms_at_scale(pp, microbatches, v):
    for f in (parallel.bubble_fraction, parallel.idle_share):
        x = f(pp, microbatches * v * pp, v)
        assert math.isfinite(x) and x >= 0


@given(st.sampled_from([(8, 16, 8), (8, 128, 976), (8, 64, 1953)]))
@settings(max_examples=3, deadline=None)
def test_analyze_at_up_to_a_million_gpus(shape):
    tp, pp, dp = shape
    plan = parallel.Plan(tp=tp, pp=pp, dp=dp, zero=1, microbatches=8, sequence_parallel=True, recompute="selective")
    t0 = time.process_time()
    a = plans.analyze(plan, "1T", "H100", n_gpus=plan.n_gpus)
    assert time.process_time() - t0 < 1.0
    assert math.isfinite(a.step_seconds) and a.step_seconds > 0
    assert all(math.isfinite(c.seconds) for c in a.comm)


@pytest.mark.parametrize("dtype", ["bf16", "fp16", "fp8"])
def test_search_and_analyze_price_a_plan_at_the_same_peak_for_every_dtype(dtype):
    # one peak and one model: the search and the analysis agree at each dtype's dense peak (H100 catalog row)
    for c in plans.search("70B", "H100", 64, top=3, dtype=dtype):
        a = plans.analyze(c.plan, "70B", "H100", n_gpus=64, dtype=dtype)
        assert c.step_seconds == a.step_seconds
        assert a.step.mfu == pytest.approx(6 * a.step.tokens * models.get("70B").active_params / (a.step_seconds * 64
                                           * hardware.get("H100").peak_flops(dtype)), rel=1e-9)


def test_a_format_with_no_published_rows_is_refused_not_guessed():
    # TF32 training: no published step row to fit an efficiency on; the model says so rather than reuse BF16's
    with pytest.raises(ValueError, match="no published tf32 step rows"):
        plans.search("70B", "H100", 64, top=3, dtype="tf32")
