"""One check per class of finding in the 2026-12-01 audits (issue 27), so that the class cannot come back.

Fast: they read the committed notebooks' stored outputs and the data files; they do not execute a chapter.

* glued values reach the reader as formatted numbers or text — never a Python repr (quoted string, tuple, list,
  dict) or an exception's text;
* every arithmetic statement in the catalogs' notes and claims (``a × b = c``, ``n links x B GB/s per direction``)
  recomputes;
* a "fits / does not fit / more than a card" statement uses the binary capacity (80 GiB = 85.9 GB), never 80e9;
* each explorer whose default the prose states glues it from the explorer itself, and the glued value is the
  explorer's default;
* a quantity stated in two places is glued from one computation (the pairs the audits found).
"""
from __future__ import annotations

import ast
import csv
import json
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "lib" / "chipchain" / "data"
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb")) + [ROOT / "book" / "numbers.ipynb"] + \
    sorted((ROOT / "labs").glob("*.ipynb"))


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _src(cell):
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def glue_records(path) -> dict:
    """{name: text/plain} of every glued value stored in a notebook."""
    out = {}
    for cell in _cells(path):
        for o in cell.get("outputs", []):
            md = (o.get("metadata") or {}).get("scrapbook")
            if not md:
                continue
            for mime, val in o.get("data", {}).items():
                if mime.endswith("text/plain"):
                    out[md["name"]] = "".join(val) if isinstance(val, list) else val
    return out


def glued_number(path, name) -> float:
    return float(glue_records(path)[name])


def markdown(path) -> str:
    return "\n".join(_src(c) for c in _cells(path) if c["cell_type"] == "markdown")


def code(path) -> str:
    return "\n".join(_src(c) for c in _cells(path) if c["cell_type"] == "code")


CH = {p.stem.split("_")[0]: p for p in (ROOT / "chapters").glob("*.ipynb")}


# --- glued values are formatted, never reprs -----------------------------------------------------------------------
_REPR = re.compile(r"""^\s*(['"]|\(.*,|\[|\{|<[\w.]+ object)""", re.S)
_EXC = re.compile(r"Traceback|Error\b|Exception\b|\w+=['\"]")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_glued_values_are_not_python_reprs(path):
    """A ``{glue:}`` of a plain ``str`` prints its quotes on the site (chapter 9's "'412.5 W'"); glue
    ``units.Text`` or a number instead. Tuples, lists, dicts and exception texts are bookkeeping, not results."""
    bad = {n: v[:80] for n, v in glue_records(path).items() if _REPR.match(v) or _EXC.search(v)}
    assert not bad, f"{path.name}: glued values that reach the reader as Python reprs or errors: {bad}"


# --- arithmetic in the data recomputes -------------------------------------------------------------------------------
_NUM = r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])"
_OP = re.compile(r"\s[x×*/+−-]\s|×|(?<=\d)/(?=\d)")
_OPS = {"×": "*", "x": "*", "*": "*", "/": "/", "+": "+", "−": "-", "-": "-"}


def _ops(between: str) -> list:
    return _OP.findall(between) or (["/"] if between == "/" else [])


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _chain(lhs: str):
    """The arithmetic expression that ends a left-hand side, as Python text, with the numbers it uses; None when
    fewer than two numbers are joined by operators. Label words between numbers are dropped ("FP32 weights 4 +
    FP32 gradients 4"); a "%" makes a number a fraction; "Gb/s" turns bits into bytes; parentheses are kept."""
    nums = list(re.finditer(_NUM, lhs))
    if len(nums) < 2:
        return None
    parts, count = [], 1
    for a, b in zip(reversed(nums[:-1]), reversed(nums[1:])):      # walk back from the last number
        between = lhs[a.end():b.start()]
        ops = _ops(between)
        if len(ops) != 1:
            break
        parts.append((b, lhs[b.start():b.end()], ops[0].strip()))
        count += 1
    if count < 2:
        return None
    first = nums[-count]
    expr, used = "", []
    seq = nums[-count:]
    for i, m in enumerate(seq):
        val = _number(m.group(0))
        tail = lhs[m.end():seq[i + 1].start()] if i + 1 < len(seq) else lhs[m.end():]
        if re.match(r"\s*%", tail):
            val *= 0.01
        if re.match(r"\s*Gb/s", tail):
            val /= 8
        used.append(val)
        lead = lhs[:m.start()] if i == 0 else ""
        opens = "(" * (lead.rstrip().endswith("(") and lead.count("(") > lead.count(")"))
        expr += opens + repr(val)
        if i + 1 < len(seq):
            op = _ops(tail)[0].strip()
            expr += (")" * tail.count(")")) + f" {_OPS[op]} " + ("(" * tail.count("("))
    if expr.count("(") != expr.count(")"):
        expr = expr.replace("(", "").replace(")", "")
    return expr


def _evaluate(expr: str) -> float:
    tree = ast.parse(expr, mode="eval")
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub)
    assert all(isinstance(n, allowed) for n in ast.walk(tree)), f"not plain arithmetic: {expr!r}"
    return float(eval(compile(tree, "<data>", "eval")))     # only numbers and + − × / survive the check above


def _statements():
    for f in sorted(DATA.glob("*.csv")):
        with f.open(encoding="utf-8") as fh:
            for i, row in enumerate(csv.DictReader(fh), start=2):
                for col, text in row.items():
                    if not isinstance(text, str) or "=" not in text:
                        continue
                    pieces = re.split(r"(=)", text)
                    lhs = ""
                    for k in range(0, len(pieces) - 2, 2):
                        lhs = re.split(r"[;:]", pieces[k])[-1]
                        m = re.match(rf"\s*[≈~]?\s*({_NUM})\s*(%?)", pieces[k + 2])
                        expr = _chain(lhs)
                        if expr and m:
                            want = _number(m.group(1)) * (0.01 if m.group(2) else 1)
                            yield f"{f.name}:{i}:{col}", f"{lhs.strip()} = {m.group(0).strip()}", expr, want, m.group(1)


STATEMENTS = list(_statements())


def test_the_data_states_some_arithmetic():
    assert len(STATEMENTS) >= 10


@pytest.mark.parametrize("where,text,expr,want,printed", STATEMENTS, ids=[s[0] for s in STATEMENTS])
def test_every_arithmetic_statement_in_the_data_recomputes(where, text, expr, want, printed):
    """``a × b = c`` in a note, source or claim: c must be what a × b is, to the precision c is printed with
    (half a unit of its last printed digit)."""
    got = _evaluate(expr)
    mantissa = printed.split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exp = int(printed.split("e")[1]) if "e" in printed else 0
    tol = 0.5 * 10 ** (exp - decimals) * (0.01 if want != _number(printed) else 1)
    assert abs(got - want) <= tol * 1.0000001, f"{where}: '{text}' — the left side is {got:g}"


def test_link_line_rates_equal_the_per_direction_bandwidth():
    """links.csv: "n links x B GB/s per direction" is the row's per-direction figure (the bidirectional one is
    derived from it, :attr:`chipchain.links.Link.bidirectional_bandwidth`)."""
    with (DATA / "links.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    checked = 0
    for r in rows:
        m = re.fullmatch(rf"({_NUM}) links? x ({_NUM}) GB/s per direction", r["line_rate"].strip())
        if m:
            n, b = (float(g.replace(",", "")) for g in m.groups())
            assert n * b == pytest.approx(float(r["bandwidth_per_direction_GBps"])), r["name"]
            checked += 1
    assert checked >= 5


def test_accelerator_notes_state_their_links_as_the_link_registry_does():
    """An accelerator note that spells out its NVLink ("NVLink 4 = 18 links x 25 GB/s = 450 GB/s per direction")
    agrees with the link registry's row, which is the one record of it."""
    from chipchain import links
    with (DATA / "accelerators.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for m in re.finditer(rf"(NVLink \d) = ({_NUM}) links x ({_NUM}) GB/s = ({_NUM}) GB/s per direction", r["notes"]):
            link = links.get(m.group(1))
            n, b, total = (float(g) for g in m.groups()[1:])
            assert n * b == total == pytest.approx(link.bandwidth_per_direction / 1e9), (r["name"], m.group(0))


# --- capacities: binary ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", sorted((ROOT / "chapters").glob("*.ipynb")), ids=lambda p: p.stem)
def test_card_capacities_are_binary(path):
    """By the Conventions a card sold as "80 GB" holds 80 GiB = 85.9 GB. A figure drawn at 80e9, or a sentence that
    compares a size with "an 80 GB card", is the decimal reading the audits found (chapter 6)."""
    src = code(path)
    assert not re.search(r"capacity\s*=\s*\d+(?:\.\d+)?e9", src), f"{path.name}: a card line at a decimal capacity"
    assert not re.search(r"capacity_label\s*=\s*[\"'][^\"']*\d GB card", src), f"{path.name}: 'GB card' label"
    md = markdown(path)
    bad = re.findall(r"(?:more than|less than|fits?(?: on| in)?|holds?|one|an?) \d+ GB card", md)
    assert not bad, f"{path.name}: capacity comparisons on decimal cards: {bad}"


def test_fits_statements_in_stored_outputs_match_the_binary_capacity():
    """Chapter 6's exercise and chapter 12's edge claim, as stored: the share of an 80 GiB card, and the edge
    claim's own numbers against the table's ✗."""
    from chipchain import hardware, inference
    assert glued_number(CH["06"], "ch06_ex_logits_card") == pytest.approx(
        4 * 8192 * 256_000 * 10 / hardware.get("H100").memory_bytes, rel=1e-9)
    assert hardware.get("H100").memory_bytes == 80 * 2**30
    need = inference.memory_needed("Llama-2-13B", 4096, 1, "int4", "bf16")
    assert need > 0.75 * 8 * 2**30                                  # so the table's ✗ is right
    recs = glue_records(CH["12"])
    assert float(recs["ch12_edge_13b_need"].split()[0]) == pytest.approx(need / 1e9, abs=0.05)   # printed to 0.1 GB


# --- explorer defaults: glued from the explorer ----------------------------------------------------------------------
def _default(ex, name):
    c = next(c for c in ex.controls if c.name == name)
    return c.values[c.index]


def test_chapter7_goodput_explorer_default_is_the_prose_default():
    from chipchain import views
    ex = views.reliability.goodput_explorer()
    md = markdown(CH["07"])
    assert "{glue:text}`ch07_xd_n_gpus" in md and "{glue:text}`ch07_xd_checkpoint_seconds" in md
    assert glued_number(CH["07"], "ch07_xd_n_gpus") == _default(ex, "n_gpus")
    assert glued_number(CH["07"], "ch07_xd_checkpoint_seconds") == _default(ex, "checkpoint_seconds")
    assert "opens on the running example's 1,024" not in md


def test_chapter14_step_explorer_default_is_the_prose_default():
    from chipchain import predictor, published_runs, views
    ex = views.calibration.step_explorer()
    name, loo = _default(ex, "name"), _default(ex, "leave_one_out")
    e = next(e for e in predictor.step_errors("family" if loo else "none") if e.name == name)
    recs = glue_records(CH["14"])
    assert recs["ch14_xd_name"] == published_runs.get(name).run
    assert float(recs["ch14_xd_step"]) == pytest.approx(e.prediction.seconds, rel=1e-9)
    assert "{glue:text}`ch14_xd_step" in markdown(CH["14"])


# --- one quantity, one computation ------------------------------------------------------------------------------------
def test_llama2_7b_flops_are_one_figure_in_chapter13():
    """Step ② and the source-check table give Llama 2 7B's FLOPs from the same model row (6.74 B parameters)."""
    from chipchain import source_checks
    from chipchain.walkthrough import Walkthrough
    flops = Walkthrough(model="7B").step2_compute().flops
    assert source_checks.check("wt-flops-7b").recomputed == pytest.approx(flops, rel=1e-12)
    assert glue_records(CH["13"])["ch13_flops_7b"].startswith(f"{flops / 1e22:.1f}")
    days = source_checks.check("wt-week-7b").recomputed
    assert glued_number(CH["13"], "ch13_days_7b") == pytest.approx(days, rel=1e-9)


def test_interruptions_are_counted_over_the_wall_clock_in_both_chapters():
    from chipchain.walkthrough import Walkthrough
    f = Walkthrough().step6_failures()
    n = f.wall_seconds / f.mtbf
    assert glued_number(CH["07"], "ch07_rx_n") == pytest.approx(n, rel=1e-9)
    assert glued_number(CH["13"], "ch13_interruptions") == pytest.approx(n, rel=1e-9)
    from chipchain import source_checks                      # and the source-check table's row for the same count
    assert source_checks.check("wt-interruptions").recomputed == pytest.approx(n, rel=1e-12)


def test_the_155m_dollar_check_has_one_basis_in_chapters_9_and_13():
    for a, b in (("ch09_rx_price_gpu", "ch13_sc_price_gpu"), ("ch09_rx_price_fac", "ch13_sc_price_all")):
        assert glued_number(CH["09"], a) == pytest.approx(glued_number(CH["13"], b), rel=1e-9), (a, b)


def test_chapter13_states_both_time_bases_of_the_bill():
    md = markdown(CH["13"])
    assert "{glue:}`ch13_bill_wall`" in md
    from chipchain.walkthrough import Walkthrough
    w = Walkthrough()
    extra = w.step6_failures().wall_seconds / w.run_seconds - 1
    assert glued_number(CH["13"], "ch13_bill_wall_extra") == pytest.approx(extra, rel=1e-9)


def test_buy_vs_rent_counts_the_loaded_price():
    """Chapter 9 compares a cloud GPU-hour (server and network included) with the owned GPU at a loaded price."""
    from chipchain import economics, power
    loaded = power.fact("dgx_h100_price_semianalysis") / 8 / (1 - power.fact("cluster_network_share_epoch"))
    own = economics.ownership_cost(loaded, 1.0, "H100", power.host_share("H100"))
    u = economics.break_even_utilisation(own.fixed, own.variable_per_used_hour, 2.0)
    assert glued_number(CH["09"], "ch09_be_loaded_2") == pytest.approx(u, rel=1e-9)
    assert u > 1                                             # owning never beats a $2 rent at a loaded price
    assert "{glue:text}`ch09_be_loaded_2" in markdown(CH["09"])


def test_chapter9_buy_vs_rent_explorer_default_is_the_prose_default():
    """09-1: the explorer opens on the fully loaded price the prose describes (not the GPU alone), at the glued rent,
    and its default view says what the prose says of that case: owning never beats the rent."""
    from chipchain import economics, units, views
    ex = views.power.buy_vs_rent_explorer()
    md, recs = markdown(CH["09"]), glue_records(CH["09"])
    assert "{glue:}`ch09_xd_purchase`" in md and "{glue:}`ch09_xd_rent`" in md
    assert glued_number(CH["09"], "ch09_xd_purchase_value") == _default(ex, "purchase")
    assert recs["ch09_xd_purchase"] == str(units.fmt_dollars(_default(ex, "purchase"))) == recs["ch09_loaded_price"]
    assert _default(ex, "purchase") == round(economics.loaded_purchase_price(), -2)
    assert recs["ch09_xd_rent"] == str(units.fmt_dollars(_default(ex, "rent")))
    assert glued_number(CH["09"], "ch09_be_loaded_2") > 1 and _default(ex, "rent") == 2.0
    assert "cheaper even at 100 % use" in ex.render_current() and "never breaks even" in md
    assert 30_000 in next(c for c in ex.controls if c.name == "purchase").values      # the GPU alone, a position


def test_chapter9_buy_vs_rent_figure_draws_the_loaded_price_and_says_where_owning_never_wins():
    """09-1: the figure under the loaded-price paragraph draws both purchase prices, each break-even the prose
    glues, and says on the chart that at $2 the loaded price never breaks even."""
    from chipchain import economics, views
    from test_static_figures import assert_no_collisions, direct_labels
    assert "loaded_price=loaded" in code(CH["09"])
    f = views.power.buy_vs_rent_figure(30_000, "H100", None, rents=(2.0, 3.0, 4.0),
                                       loaded_price=economics.loaded_purchase_price())
    for r, u in f.data["break_even"]:
        assert glued_number(CH["09"], f"ch09_be_{r:.0f}") == pytest.approx(u, rel=1e-9)
    for r, u in f.data["break_even_loaded"]:
        assert glued_number(CH["09"], f"ch09_be_loaded_{r:.0f}") == pytest.approx(u, rel=1e-9)
    html = f._repr_html_()
    labels = [t for t, _ in direct_labels(html)]
    assert "loaded: never beats $2/h" in labels and "73 %" in labels and "54 %" in labels
    assert_no_collisions(html)
    stored = next(c for c in _cells(CH["09"]) if "loaded_price=loaded" in _src(c))
    assert "never beats $2/h" in json.dumps(stored["outputs"])


def test_dualpipe_prose_reads_fb_as_f_plus_b():
    md = markdown(CH["11"])
    assert "max(F, B) = B" not in md and "F + B" in md


@pytest.mark.parametrize("path", sorted(DATA.glob("*.csv")), ids=lambda p: p.name)
def test_every_data_row_has_its_header_fields(path):
    """A comma typed into an unquoted note splits the row (an H200 note did, issue 27)."""
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    bad = [(i + 1, r[0], len(r)) for i, r in enumerate(rows) if r and len(r) != len(rows[0])]
    assert not bad, f"{path.name}: rows whose field count is not the header's {len(rows[0])}: {bad}"


def test_explorer_messages_carry_no_argument_reprs():
    """Every precomputed view of the explorers that refuse a combination reads as prose: no ``name='value':`` prefix
    (chapter 1's and 2's A100 + FP8 view showed "dtype='fp8': …")."""
    from chipchain import views
    for ex in (views.chip.roofline_explorer(), views.landscape.compare_explorer()):
        for idx in ex.all_indices():
            view = ex.render_at(idx)
            if "Not possible" in view:
                assert not re.search(r"\w+=&#x27;|\w+='|\w+=&quot;", view), view[:300]


# --- sources re-read (issue 27 item 3) -------------------------------------------------------------------------------
def test_chapter5_quotes_flashattention3_on_its_special_functions_and_no_longer_calls_them_unread():
    """The 3.9 TFLOP/s was re-read in the paper's body (section 3.1): the book quotes it and drops 'not re-read'."""
    md = markdown(CH["05"])
    assert "only 3.9 TFLOPS of special functions such as exponential" in md
    assert "3.9 TFLOP/s of special\nfunctions is from the FlashAttention-3 paper's body, not re-read" not in md


def test_chapter10_per_compute_rack_ratio_is_the_superpod_records():
    """The 12 compute + 4 bus-device racks are a record (superpods.csv's compute_racks, V2 as quoted), and the
    per-compute-rack comparison is glued from it, not typed as 'about 7×'."""
    from chipchain import policy
    pods = {p.system: p for p in policy.superpods()}
    atlas = [p for n, p in pods.items() if n.startswith("Atlas")]
    assert all(p.compute_racks == 12 and p.racks == 16 and p.checked != "V" for p in atlas)
    want = pods["GB200 NVL72"].peak_flops_per_compute_rack / max(p.peak_flops_per_compute_rack for p in atlas)
    assert glued_number(CH["10"], "ch10_rack_ratio_compute") == pytest.approx(want, rel=1e-12)
    md = markdown(CH["10"])
    assert "{glue:text}`ch10_rack_ratio_compute" in md and "about 7×" not in md
    assert "we have not read the page itself" in md


def test_chapter13_ledger_prints_the_wall_clock_interruptions():
    """A7-2: the ledger table's 'expected interruptions over the run' (stored output) is the wall-clock count the
    prose glues (76), not the compute-time 74."""
    from chipchain.walkthrough import Walkthrough
    f = Walkthrough().step6_failures()
    rows = [l for c in _cells(CH["13"]) for o in c.get("outputs", [])
            for l in "".join(o.get("text", "") or (o.get("data") or {}).get("text/plain", "")).splitlines()
            if "expected interruptions over the run" in l]
    assert rows, "the ledger's interruptions row is not in chapter 13's stored outputs"
    for row in rows:
        assert re.search(rf"\|\s*{round(f.wall_seconds / f.mtbf)}\s*\|", row), row


# --- the run tables' displayed text: × for "times", thousands separators (reader finding R#16) --------------------
_DISPLAYED = {"published_runs.csv": ("run", "reported", "mfu_note", "caveat"),
              "run_conflicts.csv": ("what", "source_a", "source_b", "explanation")}
_TIMES_X = re.compile(r"\d x \d|(?<=\S) x (?=\S)")
_BARE = re.compile(r"(?<![\w.,:-])(\d{4,})(?!\.?\d)(?![A-Za-z])")     # not in an id, a decimal or a name (A100)
_COUNTED = re.compile(r"\s+(GPUs?|tokens|nodes|chips|days|d\b|h\b|hours|GPU-hours|sequences|H100|A100|V100|TPU)")


def _bare_counts(text: str) -> list:
    """4+-digit numbers written without thousands separators; a 4-digit 1990–2030 is a year unless it counts
    something ("2048 GPUs", "= 1956", "on 2048")."""
    out = []
    for m in _BARE.finditer(text):
        v = m.group(1)
        year = (len(v) == 4 and 1990 <= int(v) <= 2030 and not _COUNTED.match(text[m.end():])
                and not re.search(r"(=|on|at|of|×)\s*$", text[:m.start()]))
        if not year:
            out.append(v)
    return out


def _displayed_cells():
    for name, cols in _DISPLAYED.items():
        with (DATA / name).open(encoding="utf-8") as fh:
            for i, row in enumerate(csv.DictReader(fh), start=2):
                for col in cols:
                    yield f"{name}:{i}:{col}", row[col] or ""


def test_the_checker_tells_counts_from_years_and_names():
    assert _bare_counts("about 21 days on 2048 GPUs; 1082990 GPU-hours") == ["2048", "1082990"]
    assert _bare_counts("Smith et al. 2022; A100 and H100; 2,048 GPUs; arXiv:2302.13971; mtnlg-2240") == []
    assert _TIMES_X.search("992 GPUs x 34 days") and not _TIMES_X.search("Mixtral-8x7B; 992 × 34")


def test_run_tables_write_numbers_as_the_book_does():
    """Run names, what the sources report, notes and caveats reach the reader (chapter 14's tables): "×" for
    "times", 4+-digit counts with thousands separators, no stutter ("step = step =")."""
    bad = [(where, text) for where, text in _displayed_cells()
           if _TIMES_X.search(text) or _bare_counts(text) or "step = step =" in text]
    assert not bad, "\n".join(f"{w}: {t[:120]}" for w, t in bad[:10])
