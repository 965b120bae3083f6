"""The event-level simulation of pipeline schedules against the papers' closed forms (chipchain.schedules):
Narayanan et al. 2021 (GPipe/1F1B bubble (p − 1)/(m + p − 1), interleaved (p − 1)/(v·m + p − 1)), Qi et al. 2024
(ZB-H1 (p − 1)(F + B − 2W)) and DeepSeek-AI 2024 Table 2 (DualPipe (p/2 − 1)(F&B + B − 3W))."""
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import pipesim, schedules


def _respects_dependencies(tl):
    end = {}
    for o in tl.ops:
        assert o.end > o.start
    by_stage = {}
    for o in tl.ops:
        by_stage.setdefault(o.rank, []).append(o)
    for ops in by_stage.values():                       # one pass at a time on a stage
        ops.sort(key=lambda o: o.start)
        for a, b in zip(ops, ops[1:]):
            assert b.start >= a.end - 1e-12
    return end


@settings(max_examples=60, deadline=None)
@given(p=st.integers(2, 12), m=st.integers(1, 40), f=st.sampled_from([1.0, 1.5, 2.0]),
       b=st.sampled_from([1.0, 2.0, 3.0]))
def test_gpipe_and_1f1b_idle_exactly_the_closed_form(p, m, f, b):
    # Narayanan et al. 2021 §2.2.1: (p − 1)/(m + p − 1) for any F and B; the simulation is exact (no tolerance
    # beyond float rounding of sums of a few hundred chunk times)
    for s in ("GPipe", "1F1B"):
        tl = pipesim.simulate(s, p, m, f=f, b=b, w=0.0)
        assert tl.idle_share == pytest.approx(schedules.idle_share(s, p, m), rel=1e-12)
        assert tl.bubble == pytest.approx(schedules.bubble(s, p, 1, f, b, 0.0), rel=1e-12)
        _respects_dependencies(tl)


@pytest.mark.parametrize("p,m,v", [(2, 4, 2), (4, 4, 2), (4, 8, 2), (4, 16, 3), (8, 8, 2), (8, 16, 2), (8, 32, 4)])
def test_interleaved_idles_exactly_p_minus_1_over_vm(p, m, v):
    # Narayanan et al. 2021 §2.2.2: bubble (p − 1)/v of a stage's F + B, so idle (p − 1)/(v·m + p − 1)
    tl = pipesim.simulate("interleaved", p, m, v)
    assert tl.idle_share == pytest.approx(schedules.idle_share("interleaved", p, m, v), rel=1e-12)
    assert tl.bubble / tl.busy == pytest.approx((p - 1) / (v * m), rel=1e-12)


@pytest.mark.parametrize("p", [2, 4, 8, 16])
@pytest.mark.parametrize("m", [16, 32, 64])
def test_zb_h1_reaches_qi_et_als_bubble_at_1_2_1(p, m):
    # Qi et al. 2024 §3: (p − 1)(F + B − 2W) = (p − 1) F at F : B : W = 1 : 2 : 1 — a third of 1F1B's
    tl = pipesim.simulate("ZB-H1", p, m)
    assert tl.bubble == pytest.approx(schedules.bubble("ZB-H1", p), rel=1e-12)
    assert tl.bubble == pytest.approx(pipesim.simulate("1F1B", p, m).bubble / 3, rel=1e-12)


@pytest.mark.parametrize("p,m", [(4, 8), (8, 16), (8, 32), (16, 32)])
@pytest.mark.parametrize("f,b,w", [(1, 1, 0.5), (1, 3, 1), (1, 2, 0.5)])
def test_zb_h1_never_idles_more_than_the_papers_expression_when_w_at_most_f(p, m, f, b, w):
    # the expression is Qi et al.'s for m ≥ p and W ≤ F; the greedy rule meets or beats it
    assert pipesim.simulate("ZB-H1", p, m, f=f, b=b, w=w).bubble <= schedules.bubble("ZB-H1", p, 1, f, b, w) + 1e-9


@pytest.mark.parametrize("p", [2, 4, 8, 16])
@pytest.mark.parametrize("extra", [0, 2, 8])
def test_dualpipe_code_order_gives_table_2s_bubble_at_1_2_1(p, extra):
    # DeepSeek-AI 2024 Table 2: (PP/2 − 1)(F&B + B − 3W) with F&B = F + B: 2(PP/2 − 1) F at 1 : 2 : 1
    m = 2 * p + extra
    tl = pipesim.simulate("DualPipe", p, m)
    assert tl.bubble == pytest.approx(schedules.bubble("DualPipe", p), rel=1e-12)
    assert tl.bubble == pytest.approx(2 * (p // 2 - 1), rel=1e-12)
    _respects_dependencies(tl)
    kinds = {o.kind for o in tl.ops}
    assert {"F", "F&B", "W"} <= kinds                  # overlapped blocks and zero-bubble weight passes both appear


def test_every_pass_runs_once_and_dependencies_hold():
    tl = pipesim.simulate("1F1B", 4, 8)
    assert len(tl.ops) == 4 * 8 * 2
    f = {(o.rank, o.microbatch): o for o in tl.ops if o.kind == "F"}
    bwd = {(o.rank, o.microbatch): o for o in tl.ops if o.kind == "B"}
    for (s, j), o in f.items():
        if s:
            assert o.start >= f[(s - 1, j)].end          # a forward waits for the stage before
        assert bwd[(s, j)].start >= o.end                # a backward for its own forward
        if s < 3:
            assert bwd[(s, j)].start >= bwd[(s + 1, j)].end


def test_reveal_up_to_t():
    tl = pipesim.simulate("GPipe", 4, 4)
    assert tl.idle_until(tl.makespan) == pytest.approx(tl.idle_share, rel=1e-12)
    assert tl.idle_until(1.0) == pytest.approx(0.75)     # at t = 1 only stage 1 has started


@pytest.mark.parametrize("call,match", [
    (lambda: pipesim.simulate("interleaved", 8, 4), "multiple of pp"),
    (lambda: pipesim.simulate("DualPipe", 8, 8), "twice the stages"),
    (lambda: pipesim.simulate("DualPipe", 5, 20), "even"),
    (lambda: pipesim.simulate("ZB-H2", 4, 8), "schedule"),
    (lambda: pipesim.simulate("1F1B", 1, 8), "pp"),
    (lambda: pipesim.simulate("1F1B", 4, 0), "microbatches"),
    (lambda: pipesim.simulate("ZB-H1", 4, 8, b=1, w=2), "cannot exceed b"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_unknown_schedule_names_the_schedules():
    with pytest.raises(KeyError, match="GPipe, 1F1B, interleaved, ZB-H1, ZB-H2, DualPipe"):
        pipesim.simulate("Chimera", 4, 8)
