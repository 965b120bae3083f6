"""chipchain.source_checks: every claim in data/source_checks.csv evaluates through a chipchain function, keeps its
verdict, and the known disagreements disagree.

Published and source values: seed 000's walkthrough (Llama 3's "every three hours", a "$1.55 M" electricity bill,
"about 20×" between NVLink and InfiniBand), seed 004's 2e13-token exponent slip, DeepSeek-V3 Table 1 ($5.576 M).
"""
import csv
import json
from pathlib import Path

import pytest

from chipchain import _data, compute, source_checks as sc, walkthrough

CSV = Path(sc.__file__).parent / "data" / "source_checks.csv"
ROWS = list(csv.DictReader(CSV.open(encoding="utf-8")))
CHECKS = {c.id: c for c in sc.source_checks()}


def test_at_least_the_25_checks_of_the_walkthrough_are_data():
    assert len(ROWS) >= 25 and len(CHECKS) == len(ROWS)
    assert len({r["id"] for r in ROWS}) == len(ROWS)                  # ids are unique


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_every_row_names_a_chipchain_function_and_evaluates(row):
    f = sc.resolve(row["function"])
    assert callable(f) and f.__module__.startswith("chipchain.")
    for col in ("arguments", "then", "per"):
        if row[col]:
            json.loads(row[col])
    v = sc.evaluate(row)
    assert v == v and abs(v) < float("inf")                           # a number, never NaN
    assert row["checked"] in _data.CHECK_LEVELS and row["source"].strip() and row["claim"].strip()
    assert 0 < float(row["tolerance"]) < 1 and 1 <= int(row["chapter"]) <= 13


def test_nested_calls_name_chipchain_functions_too():
    def calls(x):
        if isinstance(x, dict):
            if "call" in x:
                yield x["call"]
            for v in x.values():
                yield from calls(v)
        elif isinstance(x, list):
            for v in x:
                yield from calls(v)
    for row in ROWS:
        for path in calls([json.loads(row[c]) for c in ("arguments", "per") if row[c]]):
            assert callable(sc.resolve(path)), (row["id"], path)


# the verdicts the walkthrough's 26 hand-written checks had before they became data (commit 7efa794)
VERDICTS = {
    "wt-states": True, "wt-cards": False,   # binary 80 GiB cards (issue 13 units)
    "wt-flops": True, "wt-flops-7b": True, "wt-week-7b": True,
    "wt-effective": True, "wt-days-50": True, "wt-days-30": True, "wt-states-per-gpu": True,
    "wt-interruptions": False, "wt-mtbf": False, "wt-bill": False, "v3-cost": True, "v3-post-training": False,
    "s004-flops-7b": False, "s004-rtx-years": False, "s004-cards-30d": False, "s004-cards-90d": False,
    "s002-gpu-hours": True, "s002-energy": True, "s002-elementwise": False, "s002-hbm-growth": True,
    "s002-dram-energy": True, "s002-tensor-cores": True, "s002-adam-18": True, "s000-nvlink-ib": False,
}


@pytest.mark.parametrize("cid,agrees", VERDICTS.items())
def test_verdicts_are_kept(cid, agrees):
    assert CHECKS[cid].agrees is agrees, (cid, CHECKS[cid].claimed_value, CHECKS[cid].recomputed)


def test_known_disagreements_disagree_by_what_the_book_says():
    assert CHECKS["wt-mtbf"].recomputed == pytest.approx(49.5, abs=0.1)          # hours on 1,024 GPUs, not 3
    # dollars, not $1.55 M: 1,024 × (400 W + 412.5 W DGX A100 host share) × PUE 1.4 × $0.12/kWh over the 156-day
    # wall clock at 50 % MFU (152 days of training and chapter 7's failures, the basis the rent is billed on too)
    assert CHECKS["wt-bill"].recomputed == pytest.approx(524e3, rel=0.01)
    assert CHECKS["wt-cards"].recomputed == pytest.approx(2.8e12 / (80 * 2 ** 30))  # 32.6: binary 80 GiB cards
    assert CHECKS["s000-nvlink-ib"].recomputed == pytest.approx(9.0)             # 450 / 50 per direction, not 20
    e = CHECKS["s004-flops-7b"]
    assert e.claimed_value / e.recomputed == pytest.approx(10)                   # one power of ten
    assert CHECKS["v3-cost"].recomputed == pytest.approx(5.576e6)                # DeepSeek-V3 Table 1


def test_recomputations_go_through_the_library():
    # the walkthrough rows follow the walkthrough's catalog peak: the source's 158 days at 3e14 become 152 at 312e12
    assert CHECKS["wt-days-50"].recomputed == pytest.approx(walkthrough.Walkthrough(mfu=0.5).run_seconds / 86400)
    assert CHECKS["wt-days-50"].recomputed == pytest.approx(158.24 * 300 / 312, rel=1e-3)
    assert CHECKS["wt-flops"].recomputed == compute.training_flops(175e9, 2e12)
    assert sc.check("wt-flops") == CHECKS["wt-flops"]


def test_bad_paths_and_ids_fail_by_name():
    with pytest.raises(KeyError, match="training_flop"):
        sc.resolve("compute.training_flop")
    with pytest.raises(KeyError, match="nearest"):
        sc.resolve("computer.training_flops")
    with pytest.raises(ValueError, match="dotted"):
        sc.resolve("training_flops")
    with pytest.raises(KeyError, match="nearest"):
        sc.check("wt-mtbff")
