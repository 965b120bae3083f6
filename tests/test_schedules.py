"""chipchain.schedules against the one home of the bubble formulas (chipchain.parallel)."""
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import parallel, schedules


@settings(max_examples=200, deadline=None)
@given(pp=st.integers(1, 256), m=st.integers(1, 4096), v=st.integers(1, 8))
def test_1f1b_and_interleaved_idle_share_are_parallels(pp, m, v):
    # Narayanan et al. 2021 §2.2: (p − 1)/(v·m + p − 1); one formula, two entry points
    assert schedules.idle_share("1F1B", pp, m) == pytest.approx(float(parallel.idle_share(pp, m)), rel=1e-12)
    assert schedules.idle_share("interleaved", pp, m, v) == pytest.approx(float(parallel.idle_share(pp, m, v)),
                                                                          rel=1e-12)


def test_zero_bubble_h1_is_a_third_of_1f1b_at_1_2_1():
    # Qi et al. 2024 §3: ZB-H1's bubble (p − 1)(F + B − 2W) is a third of 1F1B's at F : B : W = 1 : 2 : 1
    assert schedules.bubble("ZB-H1", 16) == pytest.approx(schedules.bubble("1F1B", 16) / 3, rel=1e-12)
