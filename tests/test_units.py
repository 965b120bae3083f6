import math

import pytest
from hypothesis import given, strategies as st

from chipchain import units


@pytest.mark.parametrize("func,value,text", [
    (units.fmt_bytes, 2.8e12, "2.8 TB"), (units.fmt_bytes, 80e9, "80 GB"), (units.fmt_bytes, 2.734e9, "2.7 GB"),
    (units.fmt_bandwidth, 3.35e12, "3.35 TB/s"), (units.fmt_rate, 1.536e17, "154 PFLOP/s"),
    (units.fmt_flops, 2.1e24, "2.1e24 FLOPs"), (units.fmt_duration, 158.2 * units.DAY, "158 days"),
    (units.fmt_duration, 0.082, "82 ms"), (units.fmt_duration, 3.1 * units.HOUR, "3.1 hours"),
    (units.fmt_duration, 2.36e10, "748 years"), (units.fmt_dollars, 5.576e6, "$5.58 M"),
    (units.fmt_dollars, 25000, "$25,000"), (units.fmt_power, 7e7, "70 MW"), (units.fmt_energy, 50 * units.GWh, "50 GWh"),
    (units.fmt_percent, 0.4, "40 %"), (units.fmt_number, 16896, "16,896"), (units.fmt_sci, 8.4e22, "8.4e22"),
])
def test_formatting(func, value, text):
    out = func(value)
    assert out == text
    assert repr(out) == text          # glue shows it without quotes


def test_prefix_constants_are_decimal_and_binary_named():
    assert units.GB == 1e9 and units.GiB == 2**30
    assert units.Gbit_per_s * 400 == pytest.approx(50e9)     # 400 Gb/s = 50 GB/s
    assert units.kWh == 3.6e6


@pytest.mark.parametrize("bad", [-1, math.nan, math.inf, "3", None, True])
def test_formatters_reject_bad_input(bad):
    with pytest.raises(ValueError, match="nbytes"):
        units.fmt_bytes(bad)


@given(st.floats(min_value=1e-9, max_value=1e30, allow_nan=False))
def test_fmt_sci_round_trips_to_two_significant_figures(x):
    back = float(units.fmt_sci(x, 2))
    assert back == pytest.approx(x, rel=0.051)


def test_bytes_per_element():
    assert units.bytes_per_element("FP8") == 1
    with pytest.raises(ValueError, match="dtype"):
        units.bytes_per_element("fp12")
