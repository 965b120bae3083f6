"""Roofline arithmetic pinned to Williams et al. 2009, to the seeds' figures (recomputed) and to the datasheets;
the chapter-1 views (plot, explorers, format table) at the end."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

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


def test_measurements_are_positive_and_plausible():
    assert 1e8 < roofline.measure_matmul(128, repeats=5) < 1e14     # best of 5: robust to a busy machine
    assert 1e8 < roofline.measure_triad(100_000, repeats=1) < 1e13


def test_roofline_explorer_shows_one_line_message_for_missing_precision():
    ex = views.chip.roofline_explorer()
    names = [c.name for c in ex.controls]
    acc = ex.controls[names.index("accelerator")]
    dt = ex.controls[names.index("dtype")]
    view = ex.render_at([acc.values.index("A100-SXM-80GB"), dt.values.index("fp8"), 0])
    assert "cc-message" in view and "no fp8" in view and "Traceback" not in view


def test_plot_roofline_returns_axes():
    import matplotlib
    matplotlib.use("Agg")
    ax = views.chip.plot_roofline(["A100", "H100"], operators={"x": 10})
    assert ax.get_xscale() == "log" and len(ax.lines) >= 2
    x, y = ax.lines[0].get_data()          # the drawn curve is roofline.attainable_flops, in TFLOP/s
    np.testing.assert_allclose(y, roofline.attainable_flops("A100", x) / 1e12)
    with pytest.raises(ValueError, match="intensity_range"):
        views.chip.plot_roofline("H100", intensity_range=(10, 1))


def test_roofline_explorer_default_view_is_the_chapter_numbers():
    html = views.chip.roofline_explorer().render_current()
    assert "intensity <b>85.3</b>" in html and "ridge <b>295</b>" in html and "memory-bound" in html


@pytest.mark.parametrize("name", ["H100", "B200", "MI300X", "RTX-4090"])
def test_spec_sheet_any_part(name):
    sheet = views.chip.spec_sheet(name)
    assert "Peak BF16, dense" in sheet.index
    acc = hardware.get(name)
    if not acc.sms:
        assert "streaming multiprocessors" in sheet.loc["Not in the catalog", "value"]


def test_format_table_matches_ieee():
    t = views.chip.format_table()
    assert t.loc["FP16", "largest"] == 65504.0 and t.loc["BF16", "epsilon"] == 2.0**-7
    assert list(t["bits"]) == [32, 19, 16, 16, 8, 8]
