"""Tests for chipchain.landscape (TFLOPS traps, generations, chip scoring, the systolic array) and the chapter-2
views in chipchain.views.landscape (factions, tables, explorers)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import hardware
from chipchain import landscape as L
from chipchain import views

V = views.landscape

T = 1e12


# --- factions ---------------------------------------------------------------------------------------------

def test_factions_table_has_sources_and_six_factions():
    df = V.factions()
    assert list(df.index) == ["General flagship", "Second source", "In-house", "Domestic Chinese",
                              "Inference challengers", "Edge"]          # seed 000 §2
    assert df["source"].str.strip().astype(bool).all()
    assert df["checked"].isin(["V", "V2", "U"]).all()
    assert df.loc["Second source", "largest memory GiB"] == 192           # MI300X datasheet: 192 GB (binary)
    assert df.loc["General flagship", "best dense 16-bit TFLOPS"] == pytest.approx(2250)   # B200 (estimate)


# --- TFLOPS traps ----------------------------------------------------------------------------------------

def test_seed_headline_figures_identified():
    # seed 000 §2: H100 "about 1979" low-precision = sparse FP16/BF16 = dense FP8/INT8
    assert set(L.matching_conventions("H100", 1979 * T)) == {("bf16", True), ("fp16", True), ("fp8", False),
                                                             ("int8", False)}
    assert ("bf16", False) in L.matching_conventions("MI300X", 1300 * T)   # "~1300": dense BF16 (1307.4)
    assert L.matching_conventions("TPU-v5p", 459 * T) == [("bf16", False)]
    assert L.matching_conventions("H100", 1234 * T) == []


def test_precision_matched_ratios():
    # matched dense BF16: H100 989.4, MI300X 1307.4, TPU v5p 459 (datasheets; facts.md)
    assert L.compare_peaks("MI300X", "H100") == pytest.approx(1307.4 / 989.4)
    assert L.compare_peaks("H100", "TPU-v5p") == pytest.approx(989.4 / 459)
    # the seed's unmatched line-up (1979 vs 1300 vs 459) would make the H100 4.3x the TPU; matched it is 2.16x
    assert L.compare_peaks("MI300X", "H100", "fp8", sparse=True) == pytest.approx(5229.8 / 3958, rel=1e-3)
    with pytest.raises(ValueError, match="TPU-v5p has no fp8"):
        L.compare_peaks("H100", "TPU-v5p", "fp8")
    with pytest.raises(KeyError):
        L.compare_peaks("H100", "H300")


def test_headline_and_inflation():
    assert L.headline_peak("H100") == L.Peak(3958 * T, "fp8", True)      # H100 datasheet: FP8 sparse 3,958
    assert L.headline_peak("TPU-v5p") == L.Peak(918 * T, "int8", False)   # Cloud TPU v5p: 918 TOPS INT8
    assert L.inflation("A100", "int8", sparse=True) == pytest.approx(4.0)      # 1248 / 312
    assert L.inflation("H100", "fp8", sparse=True) == pytest.approx(4.0, rel=1e-3)
    assert L.inflation("TPU-v5p", "int8", sparse=False) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        L.inflation("Apple-M4-Max", "int8", sparse=False)          # no 16-bit baseline in the catalog


def test_bad_inputs():
    with pytest.raises(ValueError):
        L.matching_conventions("H100", -1)
    with pytest.raises(ValueError):
        L.matching_conventions("H100", 1e15, rel=2)
    with pytest.raises(ValueError):
        L.matched_peak("H100", "fp4")
    with pytest.raises(ValueError):
        V.generation_table(("H100",))
    with pytest.raises(ValueError):
        L.growth_per_year("B200", "A100")


# --- generations -------------------------------------------------------------------------------------------

def test_generation_growth_h100_to_b200():
    # seed 000 §2: 80 -> 180 GB (vendor "GB" are binary: 80 and 180 GiB) and 3.35 -> 8 TB/s
    t = V.generation_table(("H100", "B200"))
    assert t.loc["H100-SXM", "memory GiB"] == 80 and t.loc["B200", "memory GiB"] == 180
    assert t.loc["H100-SXM", "bandwidth TB/s"] == pytest.approx(3.35)
    assert t.loc["B200", "bandwidth TB/s"] == pytest.approx(8.0)
    assert t.loc["B200", "memory x first"] == pytest.approx(2.25)
    assert t.loc["B200", "bandwidth x first"] == pytest.approx(8 / 3.35)
    assert t.loc["B200", "compute x first"] == pytest.approx(2250 / 989.4)
    g = L.growth_per_year("A100", "B200")
    # A100 (2020) 312 TFLOPS, 80 GB, 2.039 TB/s -> B200 (2024) 2250 (estimate), 180 GB, 8 TB/s: over four years
    assert (1 + g.compute) ** 4 == pytest.approx(2250 / 312)
    assert (1 + g.memory) ** 4 == pytest.approx(180 / 80)
    assert (1 + g.bandwidth) ** 4 == pytest.approx(8000 / 2039)
    assert g.compute > g.bandwidth > g.memory          # the memory wall: compute outgrows bandwidth and capacity


# --- scoring -------------------------------------------------------------------------------------------------

def test_scoring_single_dimension_orders_by_that_figure():
    s = V.score_table({"memory": 1})
    raw = V.evaluation_table()
    expected = (raw["memory"] / raw["memory"].max()).sort_values(ascending=False)
    assert list(s.index) == list(expected.index)
    assert s["score"].iloc[0] == pytest.approx(1.0)
    assert [r.name for r in L.score_chips({"memory": 1})] == list(s.index)
    s = V.score_table({"software": 1})
    assert s.loc["H100-SXM", "score"] == pytest.approx(1.0) and s.loc["Gaudi-3", "score"] == pytest.approx(0.4)


def test_scoring_missing_figures_renormalise_and_report_coverage():
    s = V.score_table({"compute": 1, "efficiency": 1})
    assert s.loc["TPU-v5p", "coverage"] == pytest.approx(0.5)         # no TDP in the catalog
    assert s.loc["TPU-v5p", "score"] == pytest.approx(s.loc["TPU-v5p", "compute"])
    assert s.loc["H100-SXM", "coverage"] == 1.0
    s = V.score_table({"mfu": 1}, accelerators=("H100", "A100", "TPU-v4", "MI300X"))
    assert s.loc["A100-SXM-80GB", "score"] == pytest.approx(1.0)      # 0.47 is the highest published MFU here
    assert math.isnan(s.loc["MI300X", "score"])
    records = {r.name: r for r in L.score_chips({"mfu": 1}, accelerators=("H100", "A100", "TPU-v4", "MI300X"))}
    assert records["MI300X"].score is None and records["MI300X"].coverage == 0      # None, never NaN


@settings(max_examples=40, deadline=None)
@given(w=st.dictionaries(st.sampled_from(list(L.DIMENSIONS)), st.floats(0, 5), min_size=1))
def test_scoring_properties(w):
    if not any(v > 0 for v in w.values()):
        with pytest.raises(ValueError):
            L.score_chips(w)
        return
    s = L.score_chips(w)
    finite = [r.score for r in s if r.score is not None]
    assert all(0 <= x <= 1 + 1e-12 for x in finite)
    assert finite == sorted(finite, reverse=True)                      # best first, unscored last
    # doubling every weight changes nothing
    s2 = L.score_chips({k: 2 * v for k, v in w.items()})
    assert [r.name for r in s] == [r.name for r in s2]
    assert all((a.score is None and b.score is None) or math.isclose(a.score, b.score, rel_tol=1e-12)
               for a, b in zip(s, s2))


def test_scoring_bad_weights():
    with pytest.raises(ValueError):
        L.score_chips({"price": 1})
    with pytest.raises(ValueError):
        L.score_chips({"compute": -1})
    with pytest.raises(ValueError):
        L.score_chips([1, 2])
    with pytest.raises(KeyError):
        L.score_chips({"compute": 1}, accelerators=("RTX-4090",))
    with pytest.raises(ValueError, match="accelerators"):
        L.chip_figures("H100")


# --- systolic array --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (2, 3, 4), (8, 8, 8), (5, 17, 3), (16, 4, 9)])
def test_systolic_equals_matmul_and_counts(m, k, n):
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a = rng.integers(-9, 10, size=(m, k))
    b = rng.integers(-9, 10, size=(k, n))
    r = L.systolic_matmul(a, b)
    np.testing.assert_array_equal(r.product, a @ b)
    assert r.edge_reads == m * k + k * n              # each operand read once at the edge
    assert r.naive_reads == 2 * m * n * k
    assert r.cycles == m + n + k - 2
    assert r.macs == m * n * k


def test_systolic_floats_and_tiling():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((20, 12))
    b = rng.standard_normal((12, 14))
    r = L.systolic_matmul(a, b, array_size=8)
    np.testing.assert_allclose(r.product, a @ b, rtol=1e-12, atol=1e-12)
    # tiles 3 x 2: A re-read ceil(14/8) = 2 times, B ceil(20/8) = 3 times
    assert r.edge_reads == 20 * 12 * 2 + 12 * 14 * 3


def test_systolic_traffic_is_quadratic_not_cubic():
    # for n x n, edge reads 2n^2 vs naive 2n^3: the ratio is n
    for n in (4, 16, 32):
        a = np.ones((n, n), dtype=np.int64)
        r = L.systolic_matmul(a, a)
        assert r.naive_reads / r.edge_reads == n


def test_tpu_v1_peak():
    # Jouppi et al. 2017: 256 x 256 MACs at 700 MHz = 92 TOPS
    assert L.systolic_peak_ops(256, 256, 700e6) == pytest.approx(92e12, rel=0.005)


@pytest.mark.parametrize("a,b", [
    (np.ones((2, 3)), np.ones((2, 3))),
    (np.ones(3), np.ones((3, 1))),
    (np.ones((2, 0)), np.ones((0, 2))),
    (np.array([[1.0, np.nan]]), np.ones((2, 1))),
    (np.array([["a"]]), np.array([["b"]])),
])
def test_systolic_bad_input(a, b):
    with pytest.raises(ValueError):
        L.systolic_matmul(a, b)


def test_systolic_bad_array_size():
    with pytest.raises(ValueError):
        L.systolic_matmul(np.ones((2, 2)), np.ones((2, 2)), array_size=0)


# --- explorables -----------------------------------------------------------------------------------------------

def test_compare_explorer_views():
    ex = V.compare_explorer()
    assert ex.n_views <= 150
    html = ex.render_current()
    assert "2.16×" in html and "4.31×" in html     # H100 / TPU v5p: matched BF16 vs headline (FP8 sparse / INT8)
    assert "no FP8" in ex.render_at([1, 1, 1, 0])            # H100 vs TPU v5p at FP8: TPU v5p has none
    assert "no structured-sparsity" in ex.render_at([1, 1, 0, 1])   # TPU v5p publishes no sparse figure
    assert "estimates" in ex.render_at([1, 2, 0, 0])         # Ascend 910B figures are unverified
    assert "<b>0.76×</b>" in ex.render_at([1, 0, 0, 1])      # H100 / MI300X at sparse BF16: 1978.8 / 2614.8


def test_scoring_explorer_zero_weights_message():
    ex = V.scoring_explorer()
    assert "at least one dimension" in ex.render_at([0, 0, 0, 0, 0])


def test_headline_table_reproduces_the_traps():
    t = V.headline_table(("H100-SXM", "TPU-v5p"))
    assert t.loc["H100-SXM", "headline"] == "3,958 (sparse FP8)" and t.loc["TPU-v5p", "headline"] == "918 (dense INT8)"
    assert t.loc["H100-SXM", "inflation"] == pytest.approx(4.0, rel=1e-3)


def test_chip_figures_are_records_in_si():
    f = {x.name: x for x in L.chip_figures(("H100", "TPU-v5p"))}
    h = f["H100-SXM"]
    assert h.compute == 989.4 * T and h.interconnect == 900e9          # H100 datasheet: NVLink 4, 900 GB/s
    assert h.efficiency == pytest.approx(989.4e12 / 700)                 # 700 W TDP
    assert h.memory == pytest.approx(math.sqrt(80 * 2**30 * 3.35e12))   # 80 GiB of HBM3
    assert f["TPU-v5p"].efficiency is None                              # no published TDP: None, not NaN
    assert f["TPU-v5p"].interconnect == 600e9                            # Cloud TPU v5p: 4,800 Gbps ICI per chip
    assert h.get("mfu") == 0.40                                          # Dubey et al. 2024, Table 4


# --- properties (hypothesis): every public function over the whole catalog, each call under a second -------------

SECOND = settings(deadline=1000, max_examples=60)
RATED = [a.name for a in hardware.all_accelerators() if a.precisions()]
BF16 = [a.name for a in hardware.all_accelerators() if a.peaks.get("bf16")]
GENERATIONS = [a.name for a in hardware.all_accelerators()
               if a.peaks.get("bf16") and a.memory_bytes and a.memory_bandwidth]


@SECOND
@given(st.sampled_from(RATED))
def test_headline_is_the_largest_printable_figure_and_a_real_one(name):
    """A headline is the largest figure a datasheet prints: at least every dense and sparse peak, and itself one
    of them — sparse only at a Tensor Core format (no datasheet prints a sparse FP64 or FP32 figure)."""
    acc, h = hardware.get(name), L.headline_peak(name)
    assert h.sparse is False or h.dtype in hardware.SPARSE_DTYPES
    assert h.peak_flops == acc.peak_flops(h.dtype, sparse=h.sparse)
    for d in acc.precisions():
        assert L.matched_peak(name, d) <= h.peak_flops
        if acc.sparse_factor and d in hardware.SPARSE_DTYPES:
            assert acc.peak_flops(d, sparse=True) <= h.peak_flops


@SECOND
@given(st.sampled_from(RATED))
def test_every_printed_figure_is_recognised_as_itself(name):
    """matching_conventions finds every (precision, sparsity) whose peak equals a quoted figure — so quoting any
    catalog figure back must name at least that convention, and nothing it names is off by more than the tolerance."""
    acc = hardware.get(name)
    for d in acc.precisions():
        for s in ((False, True) if acc.sparse_factor and d in hardware.SPARSE_DTYPES else (False,)):
            q = acc.peak_flops(d, sparse=s)
            found = L.matching_conventions(name, q, rel=0.01)
            assert (d, s) in found
            assert all(abs(acc.peak_flops(d2, sparse=s2) - q) <= 0.01 * q for d2, s2 in found)


@SECOND
@given(st.sampled_from(BF16), st.sampled_from(BF16))
def test_peak_ratios_are_reciprocal_and_inflation_starts_at_one(a, b):
    assert L.compare_peaks(a, b) * L.compare_peaks(b, a) == pytest.approx(1.0, rel=1e-12)
    assert L.inflation(a, "bf16", sparse=False) == 1.0
    acc = hardware.get(a)
    if acc.sparse_factor:
        assert L.inflation(a, "bf16", sparse=True) == pytest.approx(acc.sparse_factor, rel=1e-12)


@SECOND
@given(st.sampled_from(GENERATIONS), st.sampled_from(GENERATIONS))
def test_growth_per_year_compounds_back_to_the_newer_part(a, b):
    """g = (x₁/x₀)^(1/Δy) − 1: compounding the rate over the years between two parts returns the newer figure."""
    pa, pb = hardware.get(a), hardware.get(b)
    if pb.year <= pa.year:
        with pytest.raises(ValueError, match="newer"):
            L.growth_per_year(a, b)
        return
    g, years = L.growth_per_year(a, b), pb.year - pa.year
    assert pa.peak_flops("bf16") * (1 + g.compute) ** years == pytest.approx(pb.peak_flops("bf16"), rel=1e-9)
    assert pa.memory_bytes * (1 + g.memory) ** years == pytest.approx(pb.memory_bytes, rel=1e-9)
    assert pa.memory_bandwidth * (1 + g.bandwidth) ** years == pytest.approx(pb.memory_bandwidth, rel=1e-9)


@SECOND
@given(st.integers(1, 10**6), st.integers(1, 10**6), st.integers(1, 10**6))
def test_naive_reads_are_two_per_multiply_add_at_any_size(m, k, n):
    assert L.naive_matmul_reads(m, k, n) == 2 * m * k * n == L.naive_matmul_reads(n, k, m)


@SECOND
@given(st.integers(1, 4096), st.integers(1, 4096), st.floats(1e6, 1e10))
def test_systolic_peak_is_linear_in_rows_columns_and_clock(rows, cols, clock):
    """Jouppi et al. 2017: peak = PEs × 2 ops per multiply-add × clock — so doubling any one doubles it."""
    p = L.systolic_peak_ops(rows, cols, clock)
    assert L.systolic_peak_ops(2 * rows, cols, clock) == pytest.approx(2 * p, rel=1e-12)
    assert L.systolic_peak_ops(rows, cols, 2 * clock) == pytest.approx(2 * p, rel=1e-12)
    assert p == pytest.approx(L.systolic_peak_ops(cols, rows, clock), rel=1e-12)


@settings(deadline=1000, max_examples=20)
@given(st.integers(1, 24), st.integers(1, 24), st.integers(1, 24), st.sampled_from([None, 4, 8]))
def test_systolic_array_reads_each_operand_once_per_tile(m, k, n, size):
    """Output-stationary: untiled, each element of A and B is read once; an s×s array re-reads A once per column
    strip and B once per row strip — never more than the naive loop's 2mnk."""
    rng = np.random.default_rng(m * 10_000 + k * 100 + n)
    a, b = rng.integers(-9, 10, (m, k)), rng.integers(-9, 10, (k, n))
    r = L.systolic_matmul(a, b, array_size=size)
    np.testing.assert_array_equal(r.product, a @ b)
    strips = (1, 1) if size is None else (math.ceil(n / size), math.ceil(m / size))
    assert r.edge_reads == m * k * strips[0] + k * n * strips[1] <= r.naive_reads
