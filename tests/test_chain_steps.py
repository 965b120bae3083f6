"""Chapter 13's steps ⑧ and ⑨, rent and total cost, and chapter 12's transistor data."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from chipchain import hardware, moore, policy
from chipchain.policy import shippable_parts
from chipchain.walkthrough import Walkthrough
from chipchain.views import walkthrough as VW

W = Walkthrough()


def test_a100_is_controlled_under_every_rule():
    # BIS Oct 2022 and Oct 2023 rules: the A100 (TPP 4,992, 600 GB/s NVLink) is caught by both
    e = W.step8_export()
    assert all(c.controlled for c in e.classifications.values())


def test_best_shippable_parts_are_the_china_variants():
    # H800 passed the 2022 rule (I/O under 600 GB/s) and was caught in 2023; H20 passes both (chapter 10)
    e = W.step8_export()
    assert e.shippable == {"2022-10": "H800", "2023-10": "H20"}
    for rid, name in e.shippable.items():
        assert policy.classify(name, rid).controlled is False


def test_shippable_days_scale_inversely_with_peak():
    e = W.step8_export()
    a100 = W.accelerator.peak_flops("bf16")
    for rid, days in e.shippable_days.items():
        assert days == pytest.approx(W.run_seconds / 86400 * a100 / e.shippable_peak[rid])


def test_shippable_parts_are_sorted_and_uncontrolled():
    for r in policy.rules():
        peaks = [p for _, p in shippable_parts(r.id)]
        assert peaks == sorted(peaks, reverse=True)


def test_serving_step_matches_chapter_12():
    s = W.step9_serving()
    assert (s.n_gpus, s.n_nodes, s.max_batch) == (8, 1, 27)
    assert s.joules_per_token == pytest.approx(s.n_gpus * hardware.get("A100").tdp / s.tokens_per_second)
    assert s.dollars_per_million_tokens == pytest.approx(s.n_gpus * 2.0 / 3600 / s.tokens_per_second * 1e6)
    assert s.dollars_per_million_tokens < s.dollars_per_million_tokens_1


def test_rent_and_total_rows():
    t = VW.texts(W)
    assert t["rent"] == "$7.44 M"
    rows = {r.key: r.value for r in VW.ledger_rows(W)}
    assert rows["total_cost"] == pytest.approx(rows["rent"] + rows["bill"])


def test_ledger_has_nine_steps_in_order():
    steps = [r.step for r in VW.ledger_rows(W)]
    assert sorted(set(steps)) == list(range(1, 10)) and steps == sorted(steps)


@pytest.mark.parametrize("model,n_gpus", [("7B", 512), ("70B", 2048), ("175B", 1024)])
def test_every_explorer_setting_has_nine_steps(model, n_gpus):
    w = Walkthrough(model=model, n_gpus=n_gpus, accelerator="H100")
    assert {r.step for r in VW.ledger_rows(w)} == set(range(1, 10))


def test_moore_data_doubling_time_is_about_two_years():
    # Moore 1975: doubling about every two years; Rupp's 50-year data fits 2.0 ± 0.2 years
    cpu = moore.transistor_points("microprocessor")
    t = moore.fit_doubling_time([p.year for p in cpu], [p.transistors for p in cpu])
    assert 1.8 < t < 2.2
    assert cpu[0].transistors == 2308                 # Intel 4004 (1971): ~2,300 transistors


def test_accelerator_points_are_unique_dies():
    acc = moore.transistor_points("accelerator")
    assert len({p.transistors for p in acc}) == len(acc)
    assert "Cerebras-WSE-3" not in {p.name for p in acc}


@settings(max_examples=50, deadline=None)
@given(st.floats(0.5, 10))
def test_fit_recovers_an_exact_doubling_time(T):
    years = [2000 + i for i in range(10)]
    assert moore.fit_doubling_time(years, [2 ** ((y - 2000) / T) for y in years]) == pytest.approx(T)


@pytest.mark.parametrize("args", [([2000, 2000], [1, 2]), ([2000, 2001], [2, 1]), ([2000], [1]), ([2000, 2001], [0, 1])])
def test_fit_refuses_bad_input(args):
    with pytest.raises(ValueError):
        moore.fit_doubling_time(*args)
