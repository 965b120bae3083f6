"""One provenance schema over every data file in chipchain/data (issue 12, BOOK-STANDARD §3 "data is separate").

Every row of every table says where it comes from (``source``) and how well that was checked (``checked``: V read
in the primary source, V2 seen in secondary material quoting it, U unverified — an estimate). A ``bibkey``, where a
table has one, must exist in book/references.bib. A registry's names and aliases are unique, and a part's spec is
written once: a column of the accelerator catalog is not repeated for the same part in another table.
"""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from chipchain import _data, hardware, links, models, systems

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "lib" / "chipchain" / "data"
CSVS = sorted(DATA.glob("*.csv"))
BIBKEYS = set(re.findall(r"@\w+\{([^,\s]+),", (ROOT / "book" / "references.bib").read_text(encoding="utf-8")))


def _rows(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_there_are_data_files():
    assert len(CSVS) >= 10 and BIBKEYS


@pytest.mark.parametrize("path", CSVS, ids=[p.name for p in CSVS])
def test_every_row_has_provenance(path):
    rows = _rows(path)
    assert rows, f"{path.name} is empty"
    cols = rows[0].keys()
    assert "source" in cols and "checked" in cols, f"{path.name} lacks a source or checked column"
    for i, row in enumerate(rows, start=2):
        assert row["source"].strip(), f"{path.name}:{i} has no source"
        assert row["checked"] in _data.CHECK_LEVELS, f"{path.name}:{i} checked={row['checked']!r}"
        assert None not in row, f"{path.name}:{i} has more cells than the header"


@pytest.mark.parametrize("path", [p for p in CSVS if "bibkey" in _rows(p)[0]], ids=lambda p: p.name)
def test_bibkeys_exist(path):
    for i, row in enumerate(_rows(path), start=2):
        if row["bibkey"].strip():
            assert row["bibkey"] in BIBKEYS, f"{path.name}:{i} cites {row['bibkey']!r}, not in references.bib"


def _json_records(obj):
    if isinstance(obj, dict):
        if "checked" in obj or "bibkey" in obj:
            yield obj
        for v in obj.values():
            yield from _json_records(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _json_records(v)


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json")), ids=lambda p: p.name)
def test_json_records_have_provenance(path):
    records = list(_json_records(json.loads(path.read_text(encoding="utf-8"))))
    assert records, f"{path.name} has no record with provenance"
    for r in records:
        assert r.get("checked") in _data.CHECK_LEVELS, f"{path.name}: {r.get('id', r)} checked={r.get('checked')!r}"
        assert r.get("bibkey") in BIBKEYS, f"{path.name}: {r.get('id')} cites {r.get('bibkey')!r}"


@pytest.mark.parametrize("registry", [hardware, links, models, systems], ids=lambda m: m.__name__)
def test_registry_names_are_unique_and_resolve(registry):
    names = registry.names()
    assert len(names) == len(set(names))
    records = {n: registry.get(n) for n in names}
    for rec in records.values():
        for alias in rec.aliases:
            assert registry.get(alias) is rec, f"{alias!r} does not resolve to {rec.name}"


def test_a_part_spec_is_written_once():
    """A table keyed by accelerator name may not repeat a spec column of the accelerator catalog."""
    catalog = _rows(DATA / "accelerators.csv")
    spec_cols = set(catalog[0]) - {"name", "aliases", "source", "checked", "notes"}
    parts = {r["name"] for r in catalog}
    for path in CSVS:
        if path.name == "accelerators.csv":
            continue
        rows = _rows(path)
        if not rows or "name" not in rows[0] or not {r["name"] for r in rows} & parts:
            continue
        repeated = spec_cols & set(rows[0])
        assert not repeated, f"{path.name} repeats accelerator spec columns {sorted(repeated)}"


def test_registries_refer_to_each_other_by_name():
    # every node names a known accelerator and known links; every superpod names a known accelerator
    for node in systems.all_nodes():
        assert node.intra.name in links.names() and node.inter.name in links.names()
    for row in _rows(DATA / "superpods.csv"):
        hardware.get(row["accelerator"])


def test_a_link_figure_is_written_once():
    # issue 29: links.csv stored both a per-direction and a bidirectional column (ratio exactly 2 in every row), and
    # accelerators.csv repeated each NVIDIA part's link figure. Now the link table holds one figure per link, and a
    # part whose interconnect is a catalog link takes its bandwidth from there; the column holds only the figures of
    # links the catalog lacks (TPU ICI, Infinity Fabric, HCCS...).
    with (DATA / "links.csv").open(encoding="utf-8") as fh:
        assert "bidirectional_GBps" not in next(csv.reader(fh))
    with (DATA / "accelerators.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    linked = 0
    for r in rows:
        try:
            link = links.get(r["interconnect"])
        except KeyError:
            continue
        linked += 1
        assert not r["interconnect_GBps_bidir"].strip(), r["name"]
        assert hardware.get(r["name"]).interconnect_bandwidth == link.bidirectional_bandwidth, r["name"]
    assert linked >= 10                                   # A100, A800, H100 SXM and PCIe, H800, H20, H200, B200, V100
    # the datasheets' figures, through the link table
    assert hardware.get("H100").interconnect_bandwidth == 900e9 and hardware.get("H800").interconnect_bandwidth == 400e9
