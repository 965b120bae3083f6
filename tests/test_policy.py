"""chipchain.policy: TPP, performance density, the rules' thresholds (exactly at each), the variant story."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import hardware, policy
from chipchain.views import policy as views_policy


def test_tpp_definition():
    # BIS, 88 FR 73458 (and 87 FR 62186): TPP = 2 × MacTOPS × bit length; one MAC is two operations, so a dense
    # datasheet figure in TOPS times the bit length. The 4,800 threshold is 300 dense TFLOPS at 16 bits.
    assert policy.tpp_from(300e12, 16) == 4800
    assert policy.tpp_from(600e12, 8) == 4800
    assert policy.tpp("A100") == pytest.approx(4992)      # widely quoted: A100 TPP 4,992 (312 × 16), caught in 2022
    # H100 SXM: 989.4 dense BF16 TFLOPS × 16 = 15,830; FP8 1,979 × 8 = 15,832 (the figure quoted for the H100).
    # The sparse figure (1,978.9 × 16 ≈ 31,664) does not count: TPP is defined on dense throughput.
    assert policy.tpp("H100") == pytest.approx(15_832)
    assert policy.tpp_precision("H100")[1] == "fp8"
    assert policy.tpp("H20") == pytest.approx(2368)       # widely quoted: H20 TPP 2,368 (148 × 16)
    assert policy.tpp("RTX-4090") == pytest.approx(5284.8)   # 660.6 dense FP8/INT8 TOPS × 8, quoted as 5,285


def test_tpp_takes_arrays():
    t = policy.tpp_from(np.array([150e12, 300e12, 600e12]), 16)
    assert list(t) == [2400, 4800, 9600]
    assert list(policy.performance_density_from(t, 800)) == [3.0, 6.0, 12.0]


def test_performance_density():
    # quoted with the 2023 rule's commentary: A100 ≈ 6.04, H20 ≈ 2.91, H100 ≈ 19.4 TPP per mm²
    assert policy.performance_density("A100") == pytest.approx(6.04, abs=0.005)
    assert policy.performance_density("H20") == pytest.approx(2.91, abs=0.005)
    assert policy.performance_density("H100") == pytest.approx(19.45, abs=0.01)
    with pytest.raises(ValueError, match="MI300X has no 'die_area_mm2'"):
        policy.performance_density("MI300X")


def test_rules_data_carry_citations_and_thresholds():
    for r in policy.rules():
        assert r.citation and r.bibkey and r.checked in ("V", "V2", "U") and r.paraphrase is True
    assert policy.rule("2022-10").citation == "87 FR 62186"
    assert policy.rule("2023-10-17").citation == "88 FR 73458"
    # 87 FR 62186: TPP ≥ 4,800 and bidirectional I/O ≥ 600 GB/s
    assert policy.thresholds("2022-10", "tpp") == [4800] and policy.thresholds("2022-10", "io_GBps") == [600]
    # 88 FR 73458: TPP 1,600 / 2,400 / 4,800; performance density 1.6 / 3.2 / 5.92; no I/O test
    assert policy.thresholds("2023-10", "tpp") == [1600, 2400, 4800]
    assert policy.thresholds("2023-10", "pd") == [1.6, 3.2, 5.92]
    assert policy.thresholds("2023-10", "io_GBps") == []


# --- exactly at each threshold ------------------------------------------------------------------------------------
@pytest.mark.parametrize("tpp,io,expected", [
    (4800, 600e9, "3A090"), (4799.9, 600e9, "not controlled"), (4800, 599.9e9, "not controlled"),
    (20_000, 900e9, "3A090"), (20_000, 400e9, "not controlled"),
])
def test_2022_thresholds(tpp, io, expected):
    assert policy.classify_numbers(tpp, io_bandwidth=io, rule_id="2022-10").category == expected


@pytest.mark.parametrize("tpp,pd,expected", [
    (4800, 1.0, "3A090.a"), (4799.9, 1.0, "not controlled"),          # a.1 at TPP 4,800
    (1600, 5.92, "3A090.a"), (1599.9, 5.92, "not controlled"),        # a.2 at TPP 1,600 and PD 5.92
    (1600, 5.9199, "3A090.b"),                                        # just under 5.92 → b.2
    (2400, 1.6, "3A090.b"), (2399.9, 1.6, "not controlled"),          # b.1 lower corner
    (2400, 1.5999, "not controlled"),
    (1600, 3.2, "3A090.b"), (1600, 3.1999, "not controlled"),         # b.2 lower edge
    (3000, 3.1999, "3A090.b"),                                        # b.1 still holds there
])
def test_2023_thresholds(tpp, pd, expected):
    assert policy.classify_numbers(tpp, pd, rule_id="2023-10").category == expected


def test_2023_exemption_note_applies_only_below_4800():
    c = policy.classify_numbers(4799.9, 3.5, market="consumer")
    assert c.category == "not controlled (note)" and c.controlled is False and "3A090.b" in c.reason
    assert policy.classify_numbers(4800, 3.5, market="consumer").category == "3A090.a"
    assert policy.classify_numbers(4799.9, 3.5, market="datacenter").category == "3A090.b"


def test_missing_figures_are_undetermined_not_guessed():
    c = policy.classify_numbers(3000, None, rule_id="2023-10")
    assert c.category == "undetermined" and c.controlled is None and "die area" in c.reason
    assert policy.classify_numbers(6000, None, rule_id="2023-10").category == "3A090.a"   # a.1 needs no PD
    assert policy.classify_numbers(4000, None, None, rule_id="2022-10").category == "not controlled"
    assert policy.classify_numbers(6000, None, None, rule_id="2022-10").category == "undetermined"


# --- the compliant-variant story, computed from the catalog ---------------------------------------------------------
@pytest.mark.parametrize("name,y2022,y2023", [
    ("A100", "3A090", "3A090.a"), ("H100", "3A090", "3A090.a"),
    ("A800", "not controlled", "3A090.a"), ("H800", "not controlled", "3A090.a"),
    ("H20", "not controlled", "not controlled"),
    ("RTX-4090", "not controlled", "3A090.a"), ("RTX-3090", "not controlled", "not controlled (note)"),
])
def test_variant_story(name, y2022, y2023):
    assert policy.classify(name, "2022-10").category == y2022
    assert policy.classify(name, "2023-10").category == y2023


def test_reasons_name_the_threshold():
    # NVLink 3 cut to 400 GB/s + its PCIe Gen4 x16 host link (64 GB/s both ways) = 464 GB/s of aggregate I/O
    assert "I/O 464 GB/s < 600" in policy.classify("A800", "2022-10").reason
    assert "TPP 2,368 < 2,400" in policy.classify("H20", "2023-10").reason
    assert "performance density 2.91 < 3.2" in policy.classify("H20", "2023-10").reason


def test_placements_cover_the_catalog():
    placed = policy.placements()
    assert [p.accelerator.name for p in placed] == hardware.names()
    cats = {c.category for p in placed for c in p.classifications}
    assert cats <= {"3A090", "3A090.a", "3A090.b", "not controlled", "not controlled (note)", "undetermined"}
    df = views_policy.placements()
    assert list(df.index) == hardware.names()
    # H20: NVLink 900 GB/s + PCIe Gen5 x16 128 GB/s, the aggregate the 2022 rule counts
    assert df.loc["H20", "2023-10"] == "not controlled" and df.loc["H20", "io_GBps"] == 1028


def test_missing_catalog_figures_are_undetermined_by_name():
    # TPU-v4 has neither die area nor an I/O figure in the catalog: no guess, and the reason says which is missing
    c = policy.classify("TPU-v4", "2023-10")
    assert c.category == "undetermined" and "die area" in c.reason
    assert policy.classify("Cerebras-WSE-3").reason.startswith("cannot decide: the catalog has no peak")
    # the RTX 4090 has no NVLink (a known zero, not missing): its only I/O to other chips is PCIe Gen4 x16, 64 GB/s
    assert policy.classify("RTX-4090", "2022-10").io_bandwidth == pytest.approx(64e9)


def test_timeline_and_superpods():
    t = views_policy.timeline()
    assert list(t["date"]) == sorted(t["date"])
    assert {"2022-10-07", "2023-10-17", "2024-12-02", "2025-01-15", "2025-05-13"} <= set(t["date"])
    assert t["bibkey"].str.len().gt(0).all() and t["source"].str.len().gt(0).all()
    pods = {p.system: p for p in policy.superpods()}
    atlas = [p for name, p in pods.items() if name.startswith("Atlas")]
    assert sorted(p.peak_flops / 1e15 for p in atlas) == pytest.approx([288.7, 307.2])  # both figures the page prints
    assert max(p.gpu_peak_flops for p in atlas) / 1e12 == pytest.approx(800)       # 307.2 PF / 384
    # NVIDIA's GB200 NVL72 page: FP16/BF16 Tensor Core 360 PFLOPS with sparsity, 180 dense (2.5 per GPU); the row's
    # part is the catalog's GB200, whose record is that page over 72, so printed and catalog agree; the DGX B200's
    # per-GPU figure (DGX B200 ÷ 8 = 2.25 PFLOPS) gives chapter 10's older estimate of 162
    nvl72 = pods["GB200 NVL72"]
    assert nvl72.peak_flops == pytest.approx(180e15) and nvl72.accelerator is hardware.get("GB200")
    assert 72 * hardware.get("B200").peak_flops("bf16") == pytest.approx(162e15)
    s = views_policy.superpods()
    assert s.loc["GB200 NVL72", "catalog_pflops"] == pytest.approx(180)
    # the derived memory (72 × the GB200 record) is what NVIDIA prints, in its TB of 1,000 binary GB
    assert nvl72.memory_bytes == pytest.approx(nvl72.printed_memory_bytes, rel=0.005)
    assert sorted(s.loc[s.index.str.startswith("Atlas"), "pflops_16bit"]) == pytest.approx([288.7, 307.2])


@pytest.mark.parametrize("call", [
    lambda: policy.tpp_from(-1, 16), lambda: policy.tpp_from(100, 0), lambda: policy.performance_density_from(1, 0),
    lambda: policy.classify_numbers(float("nan")), lambda: policy.classify_numbers(100, market="home"),
    lambda: policy.classify_numbers(100, io_bandwidth=-1), lambda: policy.tpp_from([1e12, float("nan")], 16),
    lambda: policy.rule(2023), lambda: policy.thresholds("2023-10", "area"),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_rule_and_chip():
    with pytest.raises(KeyError, match="nearest known names"):
        policy.rule("2019")
    with pytest.raises(KeyError, match="nearest known names"):
        policy.classify("H300")


_ORDER = {"not controlled": 0, "3A090.b": 1, "3A090.a": 2}


@settings(max_examples=100, deadline=None)
@given(tpp=st.floats(0, 40_000), pd=st.floats(0, 30), bump=st.floats(0, 5_000))
def test_more_tpp_is_never_less_controlled(tpp, pd, bump):
    """At fixed density, raising TPP never moves a datacenter chip to a laxer category under either rule."""
    a = policy.classify_numbers(tpp, pd, rule_id="2023-10").category
    b = policy.classify_numbers(tpp + bump, pd, rule_id="2023-10").category
    assert _ORDER[b] >= _ORDER[a]
    a22 = policy.classify_numbers(tpp, pd, 900e9, rule_id="2022-10").controlled
    b22 = policy.classify_numbers(tpp + bump, pd, 900e9, rule_id="2022-10").controlled
    assert b22 >= a22


# --- the 2022 I/O test on the aggregate (87 FR 62186: all inputs and outputs to chips other than volatile memory) --
def test_2022_io_is_the_aggregate_not_the_nvlink_figure():
    # H100 PCIe (NVIDIA datasheet): PCIe Gen5 128 GB/s + NVLink bridge 600 GB/s = 728 GB/s, so the 2022 rule caught
    # it although its PCIe figure alone (128) is far below 600; NVIDIA's 2022 filing named the H100 as covered
    c = policy.classify("H100-PCIe", "2022-10")
    assert c.category == "3A090" and c.io_bandwidth == pytest.approx(728e9)
    # A100 SXM (datasheet): NVLink 600 + PCIe Gen4 64 = 664; H800: cut NVLink 400 + PCIe Gen5 128 = 528 (passes)
    assert policy.chip_io("A100").aggregate == pytest.approx(664e9)
    assert policy.chip_io("H800").aggregate == pytest.approx(528e9)
    assert policy.classify("H800", "2022-10").category == "not controlled"


def test_a_lower_bound_can_catch_but_not_clear():
    # only part of the I/O known: reaching 600 decides; falling short leaves the answer open
    assert policy.classify_numbers(6000, io_bandwidth=700e9, rule_id="2022-10", io_complete=False).category == "3A090"
    c = policy.classify_numbers(6000, io_bandwidth=400e9, rule_id="2022-10", io_complete=False)
    assert c.category == "undetermined" and "not in our sources" in c.reason
    assert policy.classify_numbers(4000, io_bandwidth=400e9, rule_id="2022-10", io_complete=False).category == \
        "not controlled"                                        # TPP alone clears it
    assert policy.classify("Ascend-910B", "2022-10").category == "undetermined"    # 456 GB/s counted, ports unknown
    assert policy.chip_io("B200").complete is False and policy.classify("B200", "2022-10").category == "3A090"


def test_export_io_rows_name_known_parts_and_links():
    for p in policy.placements():
        io = p.io
        if io.aggregate is not None and io.link is not None:
            assert io.aggregate >= io.link                  # the aggregate includes the link figure
        if io.complete:
            assert io.aggregate is not None


@settings(max_examples=100, deadline=1000)
@given(tpp=st.floats(0, 1e6), io=st.one_of(st.just(0.0), st.floats(1e8, 1e14)),
       more=st.one_of(st.just(0.0), st.floats(1e8, 1e13)),
       complete=st.booleans())
def test_more_io_is_never_less_controlled_in_2022(tpp, io, more, complete):
    a = policy.classify_numbers(tpp, io_bandwidth=io, rule_id="2022-10", io_complete=complete)
    b = policy.classify_numbers(tpp, io_bandwidth=io + more, rule_id="2022-10", io_complete=complete)
    rank = {False: 0, None: 1, True: 2}
    assert rank[b.controlled] >= rank[a.controlled]
    if not complete:
        assert a.category != "not controlled" or tpp < 4800      # a lower bound never clears a chip on I/O


# --- properties (issue 13): every public function, within a second, never NaN ---------------------------------------
import math
import time


def _fast(call):
    t = time.process_time()
    out = call()
    assert time.process_time() - t < 1.0
    return out


@settings(max_examples=60, deadline=1000)
@given(peak=st.floats(0, 1e18), bits=st.sampled_from([4, 8, 16, 19, 32, 64]), area=st.floats(1, 50_000))
def test_tpp_and_density_scale(peak, bits, area):
    t = policy.tpp_from(peak, bits)
    assert t >= 0 and math.isfinite(t) and policy.tpp_from(2 * peak, bits) == pytest.approx(2 * t)
    assert policy.performance_density_from(t, area) * area == pytest.approx(t)


@pytest.mark.parametrize("name", hardware.names())
def test_every_catalog_part_is_classified_quickly(name):
    for rule_id in ("2022-10", "2023-10"):
        c = _fast(lambda: policy.classify(name, rule_id))
        assert c.category and (c.tpp is None or math.isfinite(c.tpp))
    io = _fast(lambda: policy.chip_io(name))
    assert io.aggregate is None or (io.aggregate >= 0 and math.isfinite(io.aggregate))
    try:
        t, d = policy.tpp_precision(name)
    except ValueError:
        return                                   # no peak in the catalog: said by name
    assert t == policy.tpp(name) and d in policy.BITS
    try:
        assert math.isfinite(policy.performance_density(name))
    except ValueError as e:
        assert "die_area_mm2" in str(e)


def test_tables_are_quick():
    for call in (policy.rules, policy.placements, policy.superpods):
        assert _fast(call)
    for r in policy.rules():
        assert policy.rule(r.id) is r and policy.rule(r.date) is r
        for m in ("tpp", "pd", "io_GBps"):
            th = policy.thresholds(r.id, m)
            assert th == sorted(th)


from chipchain import _check  # noqa: E402  (the bounds live with the other input checks)


# --- an I/O bandwidth typed in GB/s is refused (issue 27) ----------------------------------------------------------
@settings(max_examples=200, deadline=1000)
@given(gbps=st.floats(1e-3, 99_999), rule_id=st.sampled_from(["2022-10", "2023-10"]))
def test_io_typed_in_gbps_is_refused_by_name(gbps, rule_id):
    """Any I/O figure of 0.001 to 99,999 'bytes/s' is a figure meant in GB/s (or smaller units): no real link is that
    slow. The message names the input and the slip."""
    with pytest.raises(ValueError, match=r"io_bandwidth is in bytes per second .* if you meant .* GB/s"):
        policy.classify_numbers(5000, io_bandwidth=gbps, rule_id=rule_id)


@settings(max_examples=200, deadline=1000)
@given(io=st.floats(_check.IO_PLAUSIBLE[0], _check.IO_PLAUSIBLE[1]))
def test_plausible_io_is_accepted(io):
    assert policy.classify_numbers(5000, io_bandwidth=io, rule_id="2022-10").io_bandwidth == io


def test_io_bounds_cover_every_catalog_part():
    """The plausible range holds every aggregate I/O and link figure the catalog has (so the bound refuses slips,
    not parts), and zero (a chip with no chip-to-chip I/O) is accepted."""
    lo, hi = _check.IO_PLAUSIBLE
    for p in policy.placements():
        for v in (p.io.aggregate, p.io.link, p.io.host):
            if v:
                assert lo <= v <= hi, (p.accelerator.name, v)
    assert policy.classify_numbers(5000, io_bandwidth=0, rule_id="2022-10").category == "not controlled"
    with pytest.raises(ValueError, match="io_bandwidth .* bits per second"):
        policy.classify_numbers(5000, io_bandwidth=2e15, rule_id="2022-10")
