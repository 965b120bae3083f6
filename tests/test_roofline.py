"""Roofline arithmetic pinned to Williams et al. 2009, to the seeds' figures (recomputed) and to the datasheets;
the chapter-1 views (plot, explorers, format table) at the end."""
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import hardware, roofline, views


def test_ridge_points():
    # seed 002: "A100 about 156, H100 about 295 FLOP/byte" (the 156 uses 2.0 TB/s; the datasheet's 2.039 gives 153)
    assert roofline.ridge_point("H100", "bf16") == pytest.approx(295.3, abs=0.1)
    assert roofline.ridge_point("A100", "bf16") == pytest.approx(153.0, abs=0.1)


def test_williams_2009_opteron_x2():
    # Williams, Waterman and Patterson 2009 (CACM 52(4)), Fig. 1a: a dual-socket 2.2 GHz Opteron X2 with a peak of
    # 17.6 GFlop/s and 15 GB/s of measured (STREAM) bandwidth, plotted from 0.25 to 16 Flops/byte.
    peak, bw = 17.6e9, 15e9
    assert roofline.attainable(0.25, peak, bw) == pytest.approx(3.75e9)      # on the bandwidth slope
    assert roofline.attainable(16, peak, bw) == pytest.approx(17.6e9)        # on the flat roof
    ridge = peak / bw                                                         # ≈ 1.17 Flops/byte
    assert roofline.attainable(ridge, peak, bw) == pytest.approx(peak)
    curve = roofline.attainable(np.array([0.25, 0.5, 1, 2, 4, 8, 16]), peak, bw)
    np.testing.assert_allclose(curve / 1e9, [3.75, 7.5, 15, 17.6, 17.6, 17.6, 17.6])


def test_arrays_are_element_wise_and_match_scalars():
    xs = np.logspace(-2, 4, 25)
    got = roofline.attainable_flops("H100", xs, "bf16")
    assert got.shape == xs.shape
    np.testing.assert_array_equal(got, [roofline.attainable_flops("H100", float(x), "bf16") for x in xs])
    np.testing.assert_array_equal(roofline.fraction_of_peak("A100", xs), got * 0 + [
        roofline.fraction_of_peak("A100", float(x)) for x in xs])
    n = np.array([64, 1024, 4096])
    np.testing.assert_allclose(roofline.matmul_intensity(n, n, n, 4), n / 6)
    np.testing.assert_allclose(roofline.arithmetic_intensity(np.array([0, 1, 2]), 4), [0, 0.25, 0.5])


@pytest.mark.parametrize("bad", [[1.0, 0.0], [1.0, -2.0], [1.0, np.nan], [np.inf], [], np.array(["a"]), [True]])
def test_bad_intensity_arrays_rejected(bad):
    with pytest.raises(ValueError, match="intensity"):
        roofline.attainable_flops("H100", bad)


def test_missing_bandwidth_fails_by_name():
    # a part without a memory-bandwidth figure cannot have a ridge point: the error names the part and the field
    missing = [a for a in hardware.all_accelerators() if not a.memory_bandwidth and a.precisions()]
    for acc in missing:
        with pytest.raises(ValueError, match=f"{acc.name} has no 'memory_bandwidth'"):
            roofline.ridge_point(acc, acc.precisions()[0])


def test_elementwise_is_hopelessly_memory_bound():
    i = roofline.elementwise_intensity()
    assert i == pytest.approx(1 / 12)
    # seed 002 says "5 % of a 312 TFLOPS card"; the roofline gives 0.054 % (0.87 % of the FP32 peak)
    assert roofline.fraction_of_peak("A100", i, "bf16") == pytest.approx(5.45e-4, rel=0.01)
    assert roofline.fraction_of_peak("A100", i, "fp32") == pytest.approx(8.71e-3, rel=0.01)
    assert roofline.bound("A100", i) == "memory-bound"


def test_square_fp32_gemm_is_n_over_6():
    for n in (64, 1024, 4096):
        assert roofline.matmul_intensity(n, n, n, 4) == pytest.approx(n / 6)
    assert roofline.matmul_intensity(1024, 1024, 1024, 4) == pytest.approx(170.7, abs=0.1)   # seed: "about 171"


def test_memory_wall_growth_a100_to_h100():
    a100, h100 = hardware.get("A100"), hardware.get("H100")
    assert h100.peak_flops("bf16") / a100.peak_flops("bf16") == pytest.approx(3.17, abs=0.01)   # seed: 3.2x
    assert h100.memory_bandwidth / a100.memory_bandwidth == pytest.approx(1.643, abs=0.001)    # seed: 1.65x (2.0 TB/s)


def test_precision_ladder_and_efficiency():
    h100, a100 = hardware.get("H100"), hardware.get("A100")
    assert h100.peak_flops("bf16") / h100.peak_flops("fp32") == pytest.approx(14.8, abs=0.05)   # seed 002: 14.8x
    assert a100.peak_flops("bf16") / a100.tdp / 1e12 == pytest.approx(0.78)                    # TFLOPS/W
    assert h100.peak_flops("bf16") / h100.tdp / 1e12 == pytest.approx(1.41, abs=0.005)


def test_chapter1_exercise_answers():
    # ch01-ex-ridge: MI300X ridge ~247, n=512 BF16 matmul memory-bound at ~69 % of peak
    assert roofline.ridge_point("MI300X") == pytest.approx(246.7, abs=0.1)
    i = roofline.matmul_intensity(512, 512, 512, 2)
    assert roofline.bound("MI300X", i) == "memory-bound"
    assert roofline.fraction_of_peak("MI300X", i) == pytest.approx(0.692, abs=0.001)
    # ch01-ex-layernorm: 8 FLOPs per 4 bytes on an H100 -> 6.7 TFLOP/s, 0.68 %
    assert roofline.attainable_flops("H100", 2.0) == pytest.approx(6.7e12)
    # ch01-ex-fp8: ridge 591; compute-bound from n ~ 887
    assert roofline.ridge_point("H100", "fp8") == pytest.approx(590.7, abs=0.1)
    assert roofline.bound("H100", roofline.matmul_intensity(890, 890, 890, 1), "fp8") == "compute-bound"
    assert roofline.bound("H100", roofline.matmul_intensity(880, 880, 880, 1), "fp8") == "memory-bound"


def test_tiled_matmul_exact_and_reuse_equals_tile():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((96, 40)), rng.standard_normal((40, 64))
    for t in (1, 4, 16, 32):
        c, loads, naive = roofline.tiled_matmul(a, b, t)
        np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)
        assert naive / loads == pytest.approx(t)
    c, loads, naive = roofline.tiled_matmul(a, b, 7)        # ragged edge tiles still give the exact product
    np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="shapes"):
        roofline.tiled_matmul(a, a, 4)
    with pytest.raises(ValueError, match="tile"):
        roofline.tiled_matmul(a, b, 0)


@given(st.floats(1e-3, 1e5), st.floats(1e-3, 1e5))
def test_attainable_is_monotone_and_capped(i1, i2):
    lo, hi = sorted((i1, i2))
    for name in ("A100", "H100", "MI300X"):
        a_lo, a_hi = roofline.attainable_flops(name, lo), roofline.attainable_flops(name, hi)
        assert a_lo <= a_hi <= hardware.get(name).peak_flops("bf16")


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "10", None, False])
def test_bad_intensity_rejected(bad):
    with pytest.raises(ValueError, match="intensity"):
        roofline.attainable_flops("H100", bad)


def test_bad_accelerator_and_dtype():
    with pytest.raises(KeyError):
        roofline.ridge_point("H1000")
    with pytest.raises(ValueError, match="no fp8"):
        roofline.ridge_point("A100", "fp8")


def test_roofline_explorer_shows_one_line_message_for_missing_precision():
    ex = views.chip.roofline_explorer()
    names = [c.name for c in ex.controls]
    acc = ex.controls[names.index("accelerator")]
    dt = ex.controls[names.index("dtype")]
    view = ex.render_at([acc.values.index("A100-SXM-80GB"), dt.values.index("fp8"), 0])
    assert "cc-message" in view and "has no FP8 Tensor Cores" in view and "Traceback" not in view
    assert "dtype=" not in view and "fp64_tensor" not in view      # the reader's words, not the argument's (issue 27)
    assert "Not possible" not in view and "in the catalog (it has" not in view     # a sentence, not an error (#10)


def test_roofline_figure_draws_the_librarys_roofline():
    f = views.chip.roofline_figure(["A100", "H100"], operators={"x": 10})
    assert "<svg" in f._repr_html_() and "<img" not in f._repr_html_()
    label, x, y = f.data["lines"][0]         # the drawn curve is roofline.attainable_flops, in TFLOP/s
    np.testing.assert_allclose(y, roofline.attainable_flops("A100", np.array(x)) / 1e12)
    with pytest.raises(ValueError, match="intensity_range"):
        views.chip.roofline_figure("H100", intensity_range=(10, 1))


def test_roofline_explorer_default_view_is_the_chapter_numbers():
    html = views.chip.roofline_explorer().render_current()
    text = re.sub(r"<[^>]+>", "", html)                  # the wording is the view's; the numbers are the chapter's
    assert "85.3 FLOP/byte" in text and "295" in text and "memory-bound" in text


@pytest.mark.parametrize("name", ["H100", "B200", "MI300X", "RTX-4090"])
def test_spec_sheet_any_part(name):
    sheet = views.chip.spec_sheet(name)
    assert any(q.startswith("Peak BF16 (") and q.endswith("dense") for q in sheet.index)   # names its unit
    acc = hardware.get(name)
    if not acc.sms:
        assert "streaming multiprocessors" in sheet.loc["Not in the catalog", "value"]


def test_format_table_matches_ieee():
    t = views.chip.format_table()
    assert t.loc["FP16", "largest"] == 65504.0 and t.loc["BF16", "epsilon"] == 2.0**-7
    assert list(t["bits"]) == [32, 19, 16, 16, 8, 8]


# --- properties (hypothesis): every public function, large inputs, each call under a second ---------------------

SECOND = settings(deadline=1000, max_examples=60)          # deadline: each example must answer within a second
ROOFS = [(a.name, d) for a in hardware.all_accelerators() if a.memory_bandwidth for d in a.precisions()]
FP8_PARTS = [a.name for a in hardware.all_accelerators()
             if a.memory_bandwidth and a.peaks.get("bf16") and a.peaks.get("fp8")]
SIDES = st.integers(1, 10**6)


@SECOND
@given(st.sampled_from(ROOFS), st.floats(1e-6, 1e9))
def test_roofline_functions_agree_on_every_part_and_precision(roof, intensity):
    """Williams et al. 2009: the two roofs meet at the ridge; below it a kernel is memory-bound and gets B·I, above
    it compute-bound and gets the peak; never more than either."""
    name, dtype = roof
    acc = hardware.get(name)
    peak, ridge = acc.peak_flops(dtype), roofline.ridge_point(name, dtype)
    assert roofline.attainable_flops(name, ridge, dtype) == pytest.approx(peak, rel=1e-12)
    p = roofline.attainable_flops(name, intensity, dtype)
    assert 0 < p <= peak and p <= acc.memory_bandwidth * intensity * (1 + 1e-12)
    assert p == roofline.attainable(intensity, peak, acc.memory_bandwidth)
    assert 0 < roofline.fraction_of_peak(name, intensity, dtype) <= 1
    assert (roofline.bound(name, intensity, dtype) == "compute-bound") == (intensity >= ridge)


@SECOND
@given(SIDES, SIDES, SIDES, st.sampled_from([0.5, 1, 2, 4]))
def test_matmul_intensity_is_a_harmonic_mean_of_the_sides(m, n, k, b):
    """I = 2mnk / (b(mk + kn + mn)) = (2/3b) × harmonic mean of (m, n, k): the same whichever operand is which,
    between the square matmuls on the shortest and longest side, and growing with every side."""
    i = roofline.matmul_intensity(m, n, k, b)
    assert i == pytest.approx(roofline.matmul_intensity(k, m, n, b), rel=1e-12)
    lo, hi = min(m, n, k), max(m, n, k)
    assert 2 * lo / (3 * b) * (1 - 1e-12) <= i <= 2 * hi / (3 * b) * (1 + 1e-12)
    assert roofline.matmul_intensity(m + 1, n, k, b) > i
    assert i == pytest.approx(roofline.arithmetic_intensity(roofline.matmul_flops(m, n, k),
                                                            roofline.matmul_bytes(m, n, k, b)), rel=1e-12)


@SECOND
@given(st.integers(1, 10**9), st.integers(0, 64), st.integers(0, 64), st.sampled_from([1, 2, 4]))
def test_elementwise_intensity_falls_with_every_operand(flops, inputs, outputs, b):
    if inputs + outputs == 0:
        with pytest.raises(ValueError, match="inputs"):
            roofline.elementwise_intensity(flops, inputs, outputs, b)
        return
    i = roofline.elementwise_intensity(flops, inputs, outputs, b)
    assert i == pytest.approx(flops / (b * (inputs + outputs)), rel=1e-12)
    assert roofline.elementwise_intensity(flops, inputs + 1, outputs, b) < i


@SECOND
@given(st.sampled_from(FP8_PARTS), SIDES)
def test_fp8_speedup_lies_between_the_bandwidth_and_the_peak_gain(name, n):
    """Halving the bytes gains 2× on the slope; the peak ratio is the gain under the flat roof. No square matmul
    gains more than the larger of the two or less than the smaller; on the H100 (989.4 → 1,979) both are 2×."""
    acc = hardware.get(name)
    ratio = acc.peak_flops("fp8") / acc.peak_flops("bf16")
    s = roofline.matmul_speedup(name, n)
    assert min(2, ratio) * (1 - 1e-9) <= s <= max(2, ratio) * (1 + 1e-9)
    assert roofline.matmul_speedup("H100", n) == pytest.approx(2.0, rel=2e-4)


@settings(deadline=1000, max_examples=10)
@given(st.integers(10**5, 10**6))
def test_a_million_intensities_answer_within_a_second(size):
    x = np.logspace(-3, 6, size)
    y = roofline.attainable_flops("H100", x, "bf16")
    assert y.shape == x.shape and np.all(np.diff(y) >= 0) and y[-1] == hardware.get("H100").peak_flops("bf16")


@settings(deadline=1000, max_examples=25)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6), st.sampled_from([1, 2, 4, 8]))
def test_tiling_keeps_the_product_and_divides_the_loads_by_the_tile(mt, kt, nt, tile):
    """Any tile size gives the same product; when the tile divides the sizes, loads fall exactly t-fold."""
    rng = np.random.default_rng(mt * 100 + kt * 10 + nt)
    a, b = rng.standard_normal((mt * tile, kt * tile)), rng.standard_normal((kt * tile, nt * tile))
    c, loads, naive = roofline.tiled_matmul(a, b, tile)
    assert np.allclose(c, a @ b) and naive == 2 * a.shape[0] * a.shape[1] * b.shape[1] and naive == loads * tile


# --- intensity in tokens, and the communication roofline (issue 18) ----------------------------------------------

def test_tokens_to_compute_bound_h100_bf16_is_about_300():
    # "About 300 tokens per GPU to be compute-bound on an H100 in BF16" (Austin et al., How to Scale Your Model):
    # 989.4 TFLOP/s / 3.35 TB/s = 295 (NVIDIA H100 SXM datasheet).
    assert roofline.tokens_to_compute_bound("H100", "bf16") == pytest.approx(295, abs=1)
    assert roofline.tokens_to_compute_bound("A100", "bf16") == pytest.approx(153, abs=1)     # 312 / 2.039


@pytest.mark.parametrize("chip", ["H100", "H200", "B200", "MI300X"])
def test_fp8_keeps_the_token_threshold(chip):
    # Each of these datasheets prints FP8 at twice BF16 (dense); FP8 also halves the bytes per element, so
    # B* = R·b/2 does not move.
    assert roofline.tokens_to_compute_bound(chip, "fp8") == pytest.approx(
        roofline.tokens_to_compute_bound(chip, "bf16"), rel=0.01)


@given(b=st.floats(1, 4096))
@settings(deadline=1000, max_examples=40)
def test_transformer_intensity_tends_to_the_token_count(b):
    # BF16: I = BDF/(BD+DF+BF) → B as D, F → ∞, and is always below B and below min(D, F)-ish bounds.
    assert roofline.transformer_matmul_intensity(b, 1e9, 1e9) == pytest.approx(b, rel=1e-5)
    assert roofline.transformer_matmul_intensity(b, 8192, 28672) < b


@given(b=st.floats(1, 1e6), d=st.floats(64, 1e6), f=st.floats(64, 1e6))
@settings(deadline=1000, max_examples=60)
def test_transformer_intensity_is_a_matmul_intensity(b, d, f):
    # Exact identity with the general m×k·k×n formula, and the 2/b scaling between formats.
    assert roofline.transformer_matmul_intensity(b, d, f) == pytest.approx(roofline.matmul_intensity(b, f, d, 2))
    assert roofline.transformer_matmul_intensity(b, d, f, "fp8") == pytest.approx(
        2 * roofline.transformer_matmul_intensity(b, d, f, "bf16"))


@given(d=st.floats(300, 1e6), f=st.floats(300, 1e6))
@settings(deadline=1000, max_examples=60)
def test_finite_threshold_reaches_the_ridge(d, f):
    # Exact: at B* the matmul sits on the ridge; finite weights need more tokens than the large-weight limit.
    b = roofline.tokens_to_compute_bound("H100", "bf16", d, f)
    if math.isfinite(b):
        assert roofline.transformer_matmul_intensity(b, d, f) == pytest.approx(roofline.ridge_point("H100"))
        assert b >= roofline.tokens_to_compute_bound("H100", "bf16")


def test_small_weights_never_become_compute_bound():
    assert roofline.tokens_to_compute_bound("H100", "bf16", 256, 256) == math.inf     # I < 128 for any batch


def test_link_ridge_points():
    # H100 dense BF16 989.4 TFLOP/s over NVLink 4 (450 GB/s per direction) and InfiniBand NDR (50 GB/s).
    assert roofline.link_ridge_point("H100", "NVLink4") == pytest.approx(989.4e12 / 450e9)
    assert roofline.link_ridge_point("H100", "IB-NDR") / roofline.link_ridge_point("H100", "NVLink4") == \
        pytest.approx(9.0)


@pytest.mark.parametrize("call", [
    lambda: roofline.transformer_matmul_intensity(0, 8192, 8192),
    lambda: roofline.tokens_to_compute_bound("H100", "bf16", 8192, None),
    lambda: roofline.tokens_to_compute_bound("H100", "bf16", -1, 8192),
])
def test_new_functions_reject_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_link_is_a_key_error():
    with pytest.raises(KeyError):
        roofline.link_ridge_point("H100", "NVLink9")
