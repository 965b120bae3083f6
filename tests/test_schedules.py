"""chipchain.schedules, the one home of the pipeline-bubble formulas, against the papers, and its entry points in
chipchain.parallel and chipchain.deepseek."""
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import deepseek, parallel, schedules


@settings(max_examples=200, deadline=None)
@given(pp=st.integers(1, 256), m=st.integers(1, 4096), v=st.integers(1, 8))
def test_1f1b_and_interleaved_idle_share_are_parallels(pp, m, v):
    # Narayanan et al. 2021 §2.2: (p − 1)/(v·m + p − 1); one formula, two entry points
    assert schedules.idle_share("1F1B", pp, m) == pytest.approx(float(parallel.idle_share(pp, m)), rel=1e-12)
    assert schedules.idle_share("interleaved", pp, m, v) == pytest.approx(float(parallel.idle_share(pp, m, v)),
                                                                          rel=1e-12)


def test_narayanan_bubble_fraction():
    # Narayanan et al. 2021 §2.2.2: (p − 1)/(v·m); their Fig. 12 setting p = 8... here the worked 16, 64
    assert schedules.bubble_fraction(16, 64) == 15 / 64 and schedules.bubble_fraction(16, 64, 2) == 15 / 128
    assert parallel.bubble_fraction is schedules.bubble_fraction


def test_zero_bubble_h1_is_a_third_of_1f1b_at_1_2_1():
    # Qi et al. 2024 §3: ZB-H1's bubble (p − 1)(F + B − 2W) is a third of 1F1B's at F : B : W = 1 : 2 : 1
    assert schedules.bubble("ZB-H1", 16) == pytest.approx(schedules.bubble("1F1B", 16) / 3, rel=1e-12)


@pytest.mark.parametrize("pp,f,b,w", [(16, 1, 2, 1), (8, 1.0, 1.5, 0.5), (4, 2, 3, 1)])
def test_deepseek_v3_table_2(pp, f, b, w):
    # DeepSeek-AI 2024, Table 2: 1F1B (PP−1)(F+B), ZB1P (PP−1)(F+B−2W), DualPipe (PP/2−1)(F&B+B−3W), F&B = F + B
    assert schedules.bubble("1F1B", pp, 1, f, b, w) == (pp - 1) * (f + b)
    assert schedules.bubble("ZB1P", pp, 1, f, b, w) == (pp - 1) * (f + b - 2 * w)
    assert schedules.bubble("DualPipe", pp, 1, f, b, w) == (pp / 2 - 1) * (f + b + b - 3 * w)
    assert schedules.bubble("DualPipe", pp, 1, f, b, w, fb=b) == (pp / 2 - 1) * (b + b - 3 * w)
    assert [schedules.parameter_copies(s) for s in schedules.TABLE2] == [1, 1, 2]        # Table 2's "Parameter"
    assert [schedules.activation_microbatches(s, pp) for s in schedules.TABLE2] == [pp, pp, pp + 1]


def test_one_list_and_one_name_per_schedule():
    assert schedules.SCHEDULES == ("GPipe", "1F1B", "interleaved", "ZB-H1", "ZB-H2", "DualPipe")
    assert parallel.PIPELINE_SCHEDULES == deepseek.SCHEDULES == schedules.TABLE2 == ("1F1B", "ZB-H1", "DualPipe")
    for alias, name in schedules.ALIASES.items():
        assert schedules.canonical(alias) == name and name in schedules.SCHEDULES
        assert alias not in schedules.SCHEDULES
    # the report's name gives the same numbers everywhere
    assert parallel.schedule_bubble("ZB1P", 16) == parallel.schedule_bubble("ZB-H1", 16) == 15.0
    assert deepseek.pipeline_efficiency("ZB1P", 16, 64) == deepseek.pipeline_efficiency("ZB-H1", 16, 64)


def test_an_unknown_name_lists_the_canonical_ones():
    with pytest.raises(KeyError, match="GPipe, 1F1B, interleaved, ZB-H1, ZB-H2, DualPipe"):
        schedules.bubble("Chimera", 8)
    with pytest.raises(ValueError, match="schedule"):
        parallel.schedule_bubble("GPipe", 16)          # not one of Table 2's
    with pytest.raises(ValueError, match="even"):
        schedules.bubble("DualPipe", 15)


def test_gpipe_holds_every_microbatch_and_1f1b_p():
    assert schedules.inflight_microbatches("GPipe", 8) == float("inf")
    assert schedules.inflight_microbatches("1F1B", 8) == 8 and schedules.inflight_microbatches("ZB-H2", 8) == 15
