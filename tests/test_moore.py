"""chipchain.moore: process-node dates and doubling-time projections."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import moore


def test_node_dates():
    # TSMC: N7 in volume from April 2018, N5 in 2020, N3 in late Q4 2022, N2 planned for 2H 2025 (an estimate)
    assert moore.names() == ["N7", "N5", "N3", "N2"]
    assert moore.get("N7").volume_year == pytest.approx(2018.3, abs=0.1)
    assert moore.get("n3").volume_year == pytest.approx(2022.9, abs=0.1)
    assert moore.get("N2").is_estimate and not moore.get("N5").is_estimate


def test_node_gaps_widen_from_two_towards_three_years():
    gaps = moore.node_intervals()
    assert list(gaps) == ["N7→N5", "N5→N3", "N3→N2"]
    assert gaps["N7→N5"] == pytest.approx(2.0, abs=0.05)
    assert list(gaps.values()) == sorted(gaps.values())
    assert all(1.5 < g < 3.5 for g in gaps.values())


def test_doubling_projection_published_shape():
    # Moore 1975: doubling every two years → 2^5 = 32× a decade; a three-year pace gives 2^(10/3) ≈ 10.1×
    assert moore.doubling_projection(2025, 2) == 32.0
    assert moore.doubling_projection(2025, 3) == pytest.approx(10.08, abs=0.01)
    assert moore.doubling_projection(2015) == 1.0
    assert moore.doubling_projection(2027, 4, base=3.0) == pytest.approx(24.0)
    assert moore.doubling_projection(2013, 2) == 0.5                                 # before the base year


def test_arrays_are_element_wise():
    years = np.array([2005.0, 2015.0, 2021.0, 2035.0])
    got = moore.doubling_projection(years, 3)
    assert got == pytest.approx([moore.doubling_projection(float(y), 3) for y in years])


@settings(max_examples=50, deadline=None)
@given(y=st.floats(1970, 2100), t=st.floats(0.5, 10), dt=st.floats(0, 50))
def test_projection_is_monotone_and_multiplicative(y, t, dt):
    a, b = moore.doubling_projection(y, t), moore.doubling_projection(y + dt, t)
    assert b >= a
    assert moore.doubling_projection(y + t, t) == pytest.approx(2 * a, rel=1e-9)


@pytest.mark.parametrize("call", [
    lambda: moore.doubling_projection(2030, 0),
    lambda: moore.doubling_projection(2030, -2),
    lambda: moore.doubling_projection(float("nan")),
    lambda: moore.doubling_projection([2020, float("inf")]),
    lambda: moore.doubling_projection(2030, base=0),
    lambda: moore.doubling_projection(1e6, 0.01),
    lambda: moore.doubling_projection("2030"),
    lambda: moore.get(7),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_node_lists_nearest():
    with pytest.raises(KeyError, match="N3"):
        moore.get("N4")


# --- issue 13: properties of every public function -----------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(text=st.text(min_size=1, max_size=12))
def test_lookup_is_a_node_or_a_key_error(text):
    try:
        n = moore.get(text)
    except KeyError as err:
        assert "nearest" in str(err)
    else:
        assert n.name in moore.names() and moore.get(n) is n


def test_nodes_are_in_order_and_intervals_add_up():
    # TSMC's nodes entered volume production in order; the gaps telescope to last − first
    nodes = moore.all_process_nodes()
    years = [n.volume_year for n in nodes]
    assert years == sorted(years) and [n.name for n in nodes] == moore.names()
    gaps = moore.node_intervals()
    assert all(g > 0 for g in gaps.values()) and sum(gaps.values()) == pytest.approx(years[-1] - years[0])


@settings(max_examples=30, deadline=None)
@given(y=st.floats(-1e4, 1e4), t=st.floats(0.01, 100))
def test_projection_is_finite_or_refused_far_out(y, t):
    # 2^((y − 2015)/T) either answers with a finite positive number or refuses with a ValueError naming the year
    try:
        x = moore.doubling_projection(y, t)
    except ValueError as err:
        assert "doublings" in str(err)
    else:
        assert np.isfinite(x) and x > 0
