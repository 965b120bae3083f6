"""Issue 27, third pass: the fixes for the open and partly-fixed findings, each held by a test that reads the stored
notebooks and the catalog (nothing is executed here).

* one fact, one record: the vendors' printed figures chapters 1, 2 and 10 quote (B200's 18,000 sparse FP4, Trainium2's
  2,563 sparse, NVL72's 13.4 TB = 186 GB per GPU) are catalog rows, and the glue equals them;
* a product the prose writes out holds at the precision it is printed (chapter 11's ex-total);
* a direction the prose states for a machine-measured pair is the pair's own (lab 1's α, 4 ranks → 2);
* what a reader sees is formatted: no Python ``True``, no ``1e-3`` in prose, numeric table columns right-aligned;
* a figure the book has not read in the primary text says so (Huawei's page, CoreWeave's filing).
"""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from chipchain import hardware, landscape, policy, units

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "lib" / "chipchain" / "data"
CH = {p.stem.split("_")[0]: p for p in (ROOT / "chapters").glob("*.ipynb")}
L1 = ROOT / "labs" / "L1_collectives.ipynb"
NUMBERS = ROOT / "book" / "numbers.ipynb"


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _src(cell):
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def glue(path) -> dict:
    """{name: text/plain} of every value a notebook glued."""
    out = {}
    for cell in _cells(path):
        for o in cell.get("outputs", []):
            name = ((o.get("metadata") or {}).get("scrapbook") or {}).get("name")
            for mime, val in o.get("data", {}).items():
                if name and mime.endswith("text/plain"):
                    out[name] = "".join(val) if isinstance(val, list) else val
    return out


def markdown(path) -> str:
    return "\n".join(_src(c) for c in _cells(path) if c["cell_type"] == "markdown")


def code(path) -> str:
    return "\n".join(_src(c) for c in _cells(path) if c["cell_type"] == "code")


def prose(path) -> str:
    """The markdown a reader reads: code spans, maths and glue roles taken out."""
    md = re.sub(r"\{glue(?::\w+)?\}`[^`]*`|`[^`]*`|\$[^$]*\$", " ", markdown(path))
    return md


# --- one fact, one record --------------------------------------------------------------------------------------

@pytest.mark.parametrize("chip,typed", [("B200", ("18,000", "18_000")), ("Trainium2", ("2,563", "2_563"))])
def test_ch02_printed_peaks_are_the_catalogs_rows(chip, typed):
    """Chapter 2's "the vendors print more" figures come from ``hardware.printed_peak``; neither cell nor prose types
    them (audit A2-1: a typed literal had already drifted from the catalog's table once)."""
    row = hardware.printed_peak(chip)
    g = glue(CH["02"])
    key = chip.lower()
    assert float(g[f"ch02_printed_tflops_{key}"]) == pytest.approx(row.peak_flops / units.TFLOPS, rel=1e-12)
    assert float(g[f"ch02_printed_{key}"]) == pytest.approx(row.peak_flops / landscape.matched_peak(chip, "bf16"),
                                                            rel=1e-9)
    assert f"{{glue:text}}`ch02_printed_tflops_{key}:,.0f`" in markdown(CH["02"])
    for literal in typed:
        assert literal not in code(CH["02"]) and literal not in prose(CH["02"]), literal
    assert row.sparse and row.checked in hardware.CHECK_LEVELS and row.source and row.bibkey


@pytest.mark.parametrize("row", hardware.printed_peaks(), ids=lambda r: r.name)
def test_a_printed_peak_lies_beyond_every_catalog_figure_of_its_part(row):
    """A row of printed_peaks.csv is there because the catalog's columns cannot hold it: it exceeds every dense and
    sparse figure the part's catalog row gives, and its format or its sparsity is one the row lacks."""
    acc = hardware.get(row.name)
    figures = [acc.peak_flops(d) for d in acc.precisions()]
    if acc.sparse_factor:
        figures += [acc.peak_flops(d, sparse=True) for d in acc.precisions() if d in hardware.SPARSE_DTYPES]
    assert row.peak_flops > max(figures)
    assert row.dtype not in acc.precisions() or (row.sparse and not acc.sparse_factor)


def test_the_trainium2_note_states_its_sparse_figure_as_the_record_does():
    """The accelerator row's note also names the sparse figure; the two statements of one fact agree."""
    with (DATA / "accelerators.csv").open(encoding="utf-8") as fh:
        note = next(r["notes"] for r in csv.DictReader(fh) if r["name"] == "Trainium2")
    stated = re.search(r"sparse (\d[\d,]*) TFLOPS", note)
    assert stated and float(stated.group(1).replace(",", "")) * units.TFLOPS == hardware.printed_peak("Trainium2").peak_flops


def _nvl72():
    return next(s for s in policy.superpods() if s.system == "GB200 NVL72")


def test_ch01_nvl72_memory_is_the_superpods_row():
    """Chapter 1's "NVIDIA prints more … 13.4 TB, 186 GB per GPU" is superpods.csv's row, and "more" holds: the
    printed per-GPU figure exceeds the catalog's DGX B200 GPU (both in the vendor's binary GB)."""
    pod, b200 = _nvl72(), hardware.get("B200")
    g = glue(CH["01"])
    assert float(g["ch01_nvl72_printed_tb"]) == pytest.approx(pod.printed_memory_bytes / (1000 * units.GiB), rel=1e-12)
    assert float(g["ch01_nvl72_printed_gpu_gb"]) == pytest.approx(pod.printed_memory_per_accelerator / units.GiB,
                                                                  rel=1e-12)
    assert f"{float(g['ch01_nvl72_printed_gpu_gb']):.0f}" == "186"          # NVIDIA's table, as the prose reads it
    assert float(g["ch01_b200_gb"]) * units.GiB == b200.memory_bytes
    low = 1 - b200.memory_bytes / pod.printed_memory_per_accelerator
    assert float(g["ch01_nvl72_low"]) == pytest.approx(low, rel=1e-9) and low > 0
    assert "186" not in code(CH["01"]) and "13.4 TB" not in prose(CH["01"]) and "186 GB" not in prose(CH["01"])


def test_ch10_superpods_note_is_the_superpods_row():
    pod = _nvl72()
    want = (f"NVIDIA prints {pod.printed_memory_bytes / (1000 * units.GiB):.1f} TB, "
            f"{pod.printed_memory_per_accelerator / units.GiB:.0f} GB per GPU")
    stored = json.dumps([c.get("outputs", []) for c in _cells(CH["10"])], ensure_ascii=False)
    assert want in stored
    assert "13.4" not in code(CH["10"]) and "186" not in code(CH["10"])


# --- a product written out holds at its printed precision ---------------------------------------------------------

def test_ch11_ex_total_product_holds_as_printed():
    """Audit 11-6: "from 35 % to 628 %" read as 18.1 × 35 % = 634 %. The solution prints the factor to 0.01 and the
    MFU to 0.1 %, and their product rounds to the printed total."""
    g, md = glue(CH["11"]), markdown(CH["11"])
    solution = md[md.index("{solution} ch11-ex-total"):]
    solution = solution[:solution.index("```")]
    factor = re.search(r"\{glue:text\}`ch11_moe_saving:\.(\d)f`", solution)
    assert factor and "{glue:}`ch11_mfu_bf16_1`" in solution and "{glue:text}`ch11_mfu_total:.0%`" in solution
    shown_factor = round(float(g["ch11_moe_saving"]), int(factor.group(1)))
    shown_mfu = float(re.fullmatch(r"(\d+\.\d) %", g["ch11_mfu_bf16_1"]).group(1))
    shown_total = round(float(g["ch11_mfu_total"]) * 100)
    assert round(shown_factor * shown_mfu) == shown_total


# --- lab 1: the direction is the machine's, the output is a reader's ---------------------------------------------

@pytest.mark.parametrize("fit,four,two", [("big", "lab1_alpha_ms", "lab1_alpha2_ms"),
                                          ("all", "lab1_alpha_all_ms", "lab1_alpha2_all_ms")])
def test_lab1_alpha_direction_is_the_fitted_pairs(fit, four, two):
    """Audit L1-1: the solution said α *rises* from 4 to 2 ranks after a re-run made it drop. The word is glued from
    the two fitted values as the solution prints them (0.01 ms)."""
    g = glue(L1)
    a, b = round(float(g[four]), 2), round(float(g[two]), 2)
    assert g[f"lab1_alpha_moves_{fit}"] == ("rises" if b > a else "drops" if b < a else "stays level")
    md = markdown(L1)
    assert f"{{glue:}}`lab1_alpha_moves_{fit}`" in md and f"{{glue:text}}`{four}:.2f`" in md
    assert not re.search(r"\*(rises|drops)\*", md)


def test_lab1_prints_yes_or_no_not_a_python_bool():
    """Reader #17: "every result exact on every rank: True"."""
    texts = ["".join(o.get("text", "")) for c in _cells(L1) for o in c.get("outputs", []) if o.get("name") == "stdout"]
    exact = [t for t in texts if "every result exact" in t]
    assert exact and all(re.search(r": (yes|no)\s*$", t) for t in exact), exact
    assert not any(re.search(r"\b(True|False)\b", t) for t in texts)


@pytest.mark.parametrize("path", sorted((ROOT / "labs").glob("*.ipynb")), ids=lambda p: p.stem)
def test_lab_prose_writes_powers_of_ten_not_e_notation(path):
    """Reader #17: "1e-3 s × 1e9 B/s" in a worked solution; the book writes 10⁻³ s × 10⁹ B/s."""
    found = re.findall(r"\b\d+(?:\.\d+)?e[-+]?\d+\b", prose(path))
    assert not found, f"{path.name}: {found}"


# --- the numbers page: numeric columns are numbers -----------------------------------------------------------------

def test_numbers_peak_table_columns_are_numeric():
    """Audit AN-3: the peaks were pre-formatted strings, so the renderer classed them text (left-aligned)."""
    cell = next(c for c in _cells(NUMBERS) if c["cell_type"] == "code" and "peak_cols" in _src(c))
    html = "".join(next(o for o in cell["outputs"] if "text/html" in o.get("data", {}))["data"]["text/html"])
    heads = dict((h, cls) for cls, h in re.findall(r'<th scope="col" class="([\w-]+)">([^<]+)</th>', html))
    peaks = [h for h in heads if h.startswith(("FP", "TF", "BF", "INT")) or h == "Sparse ×"]
    assert len(peaks) == len(hardware.DTYPES) + 1
    assert all(heads[h] == "cc-num" for h in peaks), heads
    assert "fmt(" not in code(NUMBERS)


# --- unread primary texts are said to be unread ---------------------------------------------------------------------

def test_ch10_does_not_claim_a_huawei_page_it_has_not_read():
    """The SuperPoD rows are V2 (seen in secondary material): the prose may not say "Huawei's own page prints"."""
    levels = {s.checked for s in policy.superpods() if s.system.startswith("Atlas")}
    md = markdown(CH["10"])
    if levels != {"V"}:
        assert "own page prints" not in md and "as secondary reports quote" in md


def test_ch10_says_coreweaves_percentages_were_not_read_in_the_filing():
    md = markdown(CH["10"])
    para = md[md.index("CoreWeave, a US"):md.index("Judgment: few names")]
    assert "62 %" in para and "not read them in the filing" in para
