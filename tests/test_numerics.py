import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import numerics


def test_ranges_match_numpy_float16_and_float32():
    assert numerics.largest("fp16") == float(np.finfo(np.float16).max)
    assert numerics.smallest_normal("fp16") == float(np.finfo(np.float16).tiny)
    assert numerics.smallest_normal("fp32") == pytest.approx(float(np.finfo(np.float32).tiny))
    assert numerics.epsilon("fp16") == float(np.finfo(np.float16).eps)
    assert numerics.largest("fp8_e4m3") == 448.0 and numerics.largest("fp8_e5m2") == 57344.0


@given(st.floats(-(2.0**100), 2.0**100, allow_nan=False, width=32))
def test_bf16_rounding_is_within_half_an_ulp(x):
    y = float(numerics.to_bf16(np.float32(x)))
    if abs(x) < numerics.smallest_normal("bf16"):   # subnormals: absolute, not relative, spacing
        assert abs(y - x) <= numerics.smallest_subnormal("bf16") / 2
    elif x == 0:
        assert y == 0
    else:
        assert abs(y - x) <= abs(x) * 2.0**-8 * 1.0001


def test_bf16_ties_to_even():
    one = np.float32(1.0)
    half_ulp = np.float32(2.0**-8)
    assert float(numerics.to_bf16(one + half_ulp)) == 1.0                    # tie -> even mantissa (1.0)
    assert float(numerics.to_bf16(np.float32(1 + 3 * 2.0**-8))) == 1 + 2 * 2.0**-7  # tie -> even (up)


def test_underflow_demo_small_gradients():
    grads = np.array([1e-9, 2e-8, 1e-7, 1e-3])   # FP16 flushes values below 2^-25 (~2.98e-8) to zero
    assert numerics.underflow_fraction(grads, "fp16") == 0.5
    assert numerics.underflow_fraction(grads * 1024, "fp16") == 0.0
    assert numerics.underflow_fraction(grads, "bf16") == 0.0


@pytest.mark.parametrize("bad,match", [([], "empty"), ([np.nan], "finite"), ([0.0, 0.0], "non-zero")])
def test_underflow_bad_input(bad, match):
    with pytest.raises(ValueError, match=match):
        numerics.underflow_fraction(bad, "fp16")


def test_unknown_format():
    with pytest.raises(ValueError, match="dtype"):
        numerics.largest("fp12")


def test_bf16_range_kalamkar_2019():
    # Kalamkar et al. 2019 ("A study of BFLOAT16 for deep learning training"), §2: BF16 keeps FP32's 8 exponent bits,
    # so its range is FP32's, about 1.18e-38 to 3.39e38, with 3 significant decimal digits (epsilon 2^-7)
    assert numerics.largest("bf16") == pytest.approx(3.3895e38, rel=1e-4)
    assert numerics.smallest_normal("bf16") == pytest.approx(1.1755e-38, rel=1e-4)
    assert numerics.epsilon("bf16") == 2.0**-7


def test_fp8_formats_micikevicius_2022():
    # Micikevicius et al. 2022 ("FP8 formats for deep learning"), Table 1
    assert numerics.largest("fp8_e4m3") == 448.0 and numerics.largest("fp8_e5m2") == 57344.0
    assert numerics.smallest_normal("fp8_e4m3") == 2.0**-6 and numerics.smallest_subnormal("fp8_e4m3") == 2.0**-9
    assert numerics.smallest_normal("fp8_e5m2") == 2.0**-14 and numerics.smallest_subnormal("fp8_e5m2") == 2.0**-16


# --- properties (hypothesis): the rest of the public functions, each call under a second -------------------------

SECOND = settings(deadline=1000, max_examples=80)


@SECOND
@given(st.floats(-65504, 65504, allow_nan=False, width=32))
def test_to_fp16_is_ieee_binary16(x):
    """IEEE 754 binary16 as NumPy implements it (round to nearest even), returned as float32."""
    y = numerics.to_fp16(np.float32(x))
    assert y.dtype == np.float32 and float(y) == float(np.float16(np.float32(x)))


@SECOND
@given(st.sampled_from(sorted(numerics.FORMATS)))
def test_format_limits_are_ordered_and_match_the_bit_layout(dtype):
    f = numerics.FORMATS[dtype]
    assert 0 < numerics.smallest_subnormal(dtype) < numerics.smallest_normal(dtype) < 1 < numerics.largest(dtype)
    assert numerics.epsilon(dtype) == 2.0 ** -f.mantissa_bits
    assert numerics.smallest_subnormal(dtype) == numerics.smallest_normal(dtype) * numerics.epsilon(dtype)
    assert f.bits == 1 + f.exponent_bits + f.mantissa_bits


@SECOND
@given(st.lists(st.floats(2.0**-40, 64.0, width=32), min_size=1, max_size=10_000), st.integers(0, 10))
def test_loss_scaling_never_loses_more_gradients(values, shift):
    """Micikevicius et al. 2018: scaling by a power of two moves small gradients into FP16's range; as long as
    nothing overflows, the fraction flushed to zero can only fall. BF16 shares FP32's range: nothing is lost."""
    v = np.asarray(values, dtype=np.float32)
    before = numerics.underflow_fraction(v, "fp16")
    assert 0 <= before <= 1
    assert numerics.underflow_fraction(v * 2.0**shift, "fp16") <= before
    assert numerics.underflow_fraction(v, "bf16") == 0.0


@settings(deadline=1000, max_examples=5)
@given(st.integers(10**5, 10**6))
def test_underflow_of_a_million_values_answers_within_a_second(size):
    grads = 10 ** np.random.default_rng(size).uniform(-12, -2, size)
    assert 0 < numerics.underflow_fraction(grads, "fp16") < 1


# --- FP8 scaling granularity (issue 18) -------------------------------------------------------------------------

def test_e4m3_grid():
    # Micikevicius et al. (2022), Table 1: E4M3 max 448, min normal 2^-6, min subnormal 2^-9.
    v = numerics.to_fp8_e4m3([448.0, 1000.0, 2.0**-6, 2.0**-9, 2.0**-11, 1.0 + 2**-4, -3.3])
    assert v.tolist() == [448.0, 448.0, 2.0**-6, 2.0**-9, 0.0, 1.0, -3.25]


@given(st.lists(st.floats(-448, 448, allow_nan=False), min_size=1, max_size=50))
@settings(deadline=1000, max_examples=50)
def test_e4m3_is_idempotent_and_within_half_a_step(xs):
    import numpy as np
    q = numerics.to_fp8_e4m3(xs)
    assert np.array_equal(numerics.to_fp8_e4m3(q), q)
    assert np.all(np.abs(q - np.asarray(xs)) <= np.maximum(np.abs(xs), 2**-6) * 2**-4 + 1e-12)


def test_finer_scaling_flushes_fewer_values_with_outlier_channels():
    # Activations with a few outlier channels (Dettmers et al. 2022): one per-tensor scale flushes small values.
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 1024)) * np.exp(rng.standard_normal(1024) * 1.5)
    x[:, :4] *= 300
    lost = {s: numerics.scaled_fp8_error(x, s) for s in numerics.SCALINGS}
    assert lost["1x128 tiles"] < lost["per-tensor"] / 5
    assert lost["128x128 blocks"] < lost["per-tensor"]


def test_scaling_bad_input():
    import numpy as np
    with pytest.raises(ValueError):
        numerics.scaled_fp8_error(np.ones((100, 100)), "1x128 tiles")      # 100 columns: no 128-wide tiles
    with pytest.raises(ValueError):
        numerics.scaled_fp8_error(np.ones(128), "per-tensor")
    with pytest.raises(ValueError):
        numerics.scaled_fp8_error(np.ones((128, 128)), "per-channel-ish")
