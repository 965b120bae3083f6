"""Limited-precision accumulation (chapter 11): the emulation against exact identities and DeepSeek-V3's figure."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import accumulation as acc, deepseek


@settings(max_examples=50, deadline=None)
@given(st.floats(min_value=-1e30, max_value=1e30, allow_nan=False, allow_infinity=False), st.integers(1, 30))
def test_rounding_keeps_the_requested_bits(x, bits):
    r = acc.round_to_bits(x, bits)
    assert abs(r) <= abs(x)                                    # truncation never grows a value
    if x != 0:
        assert abs(x - r) <= math.ldexp(1.0, math.frexp(x)[1] - bits)   # within one unit in the last kept place
    assert acc.round_to_bits(r, bits) == r                     # idempotent


def test_fp32_and_bf16_bit_counts():
    x = np.float32(1 / 3)
    assert acc.round_to_bits(float(x), 24, "nearest") == float(x)           # float32 keeps 24 significant bits
    assert acc.round_to_bits(1 + 2 ** -9, 8) == 1.0                          # bfloat16 keeps 8


def test_full_precision_accumulation_is_exact_on_integers():
    a = np.arange(1, 129, dtype=float)
    assert acc.limited_dot(a, np.ones(128), acc_bits=24, group=1) == a.sum()


def test_v3_figure_nearly_two_percent_at_k_4096():
    # DeepSeek-V3 report Sec. 3.3.2: ~14-bit accumulation, K = 4096, maximum relative error "nearly 2 %".
    # The book's model (truncating 14-bit accumulator, products added four at a time) lands within a factor 1.5.
    e = acc.accumulation_error(4096, deepseek.V3.accumulation_bits)
    assert 0.013 < e < 0.03


def test_promotion_every_128_cuts_the_error_by_over_ten():
    c = acc.compare_promotion((1024, 4096), promote_every=deepseek.V3.promotion_interval)
    assert c.limited[1] > c.limited[0]                       # grows with K without promotion
    assert c.promoted[1] * 10 < c.limited[1] and c.promoted[0] < c.limited[0]
    assert c.promoted[1] < 2 * c.promoted[0]                 # and stops growing with promotion
    assert all(f < 1e-5 for f in c.fp32)


@pytest.mark.parametrize("kwargs", [dict(promote_every=130), dict(acc_bits=0), dict(group=0), dict(mode="up")])
def test_bad_input_is_refused(kwargs):
    with pytest.raises(ValueError):
        acc.limited_dot(np.ones(256), np.ones(256), **kwargs)


def test_mismatched_shapes_and_nan_are_refused():
    with pytest.raises(ValueError):
        acc.limited_dot(np.ones(4), np.ones(5))
    with pytest.raises(ValueError):
        acc.round_to_bits([1.0, float("nan")], 8)
