import bisect
import math

import pytest
from hypothesis import given, strategies as st

from chipchain import units


@pytest.mark.parametrize("func,value,text", [
    (units.fmt_bytes, 2.8e12, "2.8 TB"), (units.fmt_bytes, 80e9, "80 GB"), (units.fmt_bytes, 2.734e9, "2.7 GB"),
    (units.fmt_bandwidth, 3.35e12, "3.35 TB/s"), (units.fmt_rate, 1.536e17, "154 PFLOP/s"),
    (units.fmt_flops, 2.1e24, "2.1 × 10²⁴ FLOPs"), (units.fmt_duration, 158.2 * units.DAY, "158 days"),
    (units.fmt_duration, 0.082, "82 ms"), (units.fmt_duration, 3.1 * units.HOUR, "3.1 hours"),
    (units.fmt_duration, 2.36e10, "748 years"), (units.fmt_dollars, 5.576e6, "$5.58 M"),
    (units.fmt_dollars, 25000, "$25,000"), (units.fmt_power, 7e7, "70 MW"), (units.fmt_energy, 50 * units.GWh, "50 GWh"),
    (units.fmt_percent, 0.4, "40 %"), (units.fmt_number, 16896, "16,896"), (units.fmt_sci, 8.4e22, "8.4 × 10²²"),
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
    back = units.parse_sci(units.fmt_sci(x, 2))
    assert back == pytest.approx(x, rel=0.051)


def test_bytes_per_element():
    assert units.bytes_per_element("FP8") == 1
    with pytest.raises(ValueError, match="dtype"):
        units.bytes_per_element("fp12")


def test_missing_catalog_figure_fails_by_name():
    from chipchain import hardware
    b200 = hardware.get("B200")                      # the catalog has no SM or CUDA-core count for the B200
    for fmt, value in ((units.fmt_number, b200.cuda_cores), (units.fmt_number, b200.sms)):
        with pytest.raises(ValueError, match="B200 has no '(cuda_cores|sms)' figure in the catalog"):
            fmt(value)


@pytest.mark.parametrize("func,arg", [(units.fmt_bandwidth, "bandwidth"), (units.fmt_power, "power"),
                                      (units.fmt_energy, "energy"), (units.fmt_duration, "seconds")])
def test_formatter_errors_name_the_argument(func, arg):
    with pytest.raises(ValueError, match=arg):
        func(-1)


def test_bytes_per_element_is_the_one_table():
    # IEEE 754 / OCP FP8 widths: 64, 32, 16, 8 bits; TF32 is stored in 32-bit words; INT4 packs two per byte
    assert units.BYTES_PER_ELEMENT == {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1,
                                       "int4": 0.5}


def test_capacity_is_shown_binary_first_with_decimal_beside_it():
    """Conventions: an "80 GB" H100 holds 80 GiB = 85.9 GB (nvidia-smi: 81,920 MiB on the A100 80GB); the H100's
    228 KiB of shared memory per SM is 233 kB."""
    assert units.fmt_capacity(80 * units.GiB) == "80 GiB = 85.9 GB"
    assert units.fmt_capacity(81_920 * units.MiB) == "80 GiB = 85.9 GB"
    assert units.fmt_capacity(228 * units.KiB) == "228 KiB = 233 kB"
    with pytest.raises(ValueError, match="nbytes"):
        units.fmt_capacity(-1)


def test_a_capacity_in_brackets_never_nests_brackets():
    """The reader's pass (finding 27) saw "(80 GiB (85.9 GB))": the formatter carries no brackets of its own, so any
    caller's "(…)" around it is the only pair; the decimal figure is still beside the binary one."""
    for n in (80 * units.GiB, 141 * units.GiB, 50 * units.MiB, 228 * units.KiB, 2.8e12):
        text = str(units.fmt_capacity(n))
        assert "(" not in text and ")" not in text, text
        binary, decimal = text.split(" = ")
        assert "iB" in binary and "iB" not in decimal, text


@given(segments=st.lists(st.tuples(st.floats(0.01, 10), st.floats(0.01, 100)), min_size=1, max_size=6),
       target=st.floats(0.01, 0.99))
def test_rising_root_lands_on_the_crossing_of_any_rising_broken_line(segments, target):
    """A rising piecewise-linear function (a positive slope on each segment, kinks between, as the step time is in
    1/η) crosses zero once; the root is where it does, to the tolerance asked, and lies in the range."""
    xs, ys = [0.0], [0.0]
    for width, slope in segments:               # each segment: its width and its slope
        xs.append(xs[-1] + width)
        ys.append(ys[-1] + width * slope)

    def f(x):
        i = min(max(bisect.bisect_right(xs, x) - 1, 0), len(xs) - 2)
        return ys[i] + (x - xs[i]) * (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]) - target * ys[-1]
    x = units.rising_root(f, 0.0, xs[-1], tol=1e-9 * ys[-1])
    assert 0.0 <= x <= xs[-1] and abs(f(x)) <= 1e-9 * ys[-1]


def test_rising_root_clamps_to_the_range_and_names_bad_input():
    assert units.rising_root(lambda x: x - 5, 0, 2, tol=1e-9) == 2          # never reaches zero: the right end
    assert units.rising_root(lambda x: x + 5, 0, 2, tol=1e-9) == 0          # already above zero: the left end
    for kw, arg in [(dict(lo=2, hi=1), "lo"), (dict(lo=0, hi=1, tol=0), "tol"), (dict(lo=math.nan, hi=1), "lo")]:
        with pytest.raises(ValueError, match=arg):
            units.rising_root(lambda x: x, **{"tol": 1e-9, **kw})
    with pytest.raises(ValueError, match="f"):
        units.rising_root(lambda x: math.nan, 0, 1, tol=1e-9)               # a NaN from f is named, not looped on
    with pytest.raises(ValueError, match="f must be"):
        units.rising_root(3, 0, 1, tol=1e-9)
