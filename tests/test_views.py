"""The explorables and static figures a reader sees: each explorer's default view is the chapter's own case, its
options reach the chapter's configurations, nothing unreadable reaches the page, bars are proportional, and the
static figures' labels do not collide (issue 14)."""
import html as _html
import importlib
import pkgutil
import re

import pytest

import chipchain
from chipchain import checkpoint, comms, datapath, deepseek, landscape, reliability, roofline, units, widgets
from chipchain.walkthrough import Walkthrough
from chipchain.views import walkthrough as VW

for info in pkgutil.walk_packages(chipchain.__path__, prefix="chipchain."):
    if not info.name.rsplit(".", 1)[-1].startswith("_"):
        importlib.import_module(info.name)

FACTORIES = sorted(widgets.REGISTRY.items())
W = Walkthrough()


def text(html: str) -> str:
    """What a reader reads: tags stripped, entities decoded."""
    return _html.unescape(re.sub(r"<[^>]+>", " ", html))


def control(ex, name):
    return next(c for c in ex.controls if c.name == name)


def corner_views(ex):
    """The default view and the views with every control at its first and at its last position."""
    return [[c.index for c in ex.controls], [0] * len(ex.controls), [len(c.values) - 1 for c in ex.controls]]


# --- nothing unreadable reaches the page ---------------------------------------------------------------------

REPR = re.compile(r"\bnan\b|\bNaN\b|\bNone\b|Ellipsis|\b\d\.\d+[eE][+-]?\d+\b|(?<![\w.:])\d+\.\d{5,}"
                  r"|[A-Z][A-Za-z]+\([a-z_]+=|[(\[]'[^']*',")       # the last: a tuple or list of strings
#: an exception's text where a reader expects prose: a traceback, an exception's class name, ``name='value'``
EXCEPTION = re.compile(r"Traceback|\b\w*(Error|Exception)\b|Error:|object at 0x|NoneType|has no attribute"
                       r"|unexpected keyword|\b[a-z_]+=['\"]"
                       r"|in the catalog \(it has:|must not be|sparse=True:")   # the catalog's and _check's messages
#: quoted source text that matches REPR but is the source's own words: torchtitan's benchmark tables print
#: "None (bfloat16)" in their Float8 column (no FP8), and published_runs.csv's source column quotes the row
QUOTED = re.compile(r"\| None \(bfloat16\) \|")
#: every view of every registered explorer is checked: 3,226 views in 29 explorers at issue 27, rendered in about
#: 4 s (building the explorers about 4 s more) on the 2-core machine. The budget is 60 s; at the measured rate of
#: about 1 ms a view this many views stay well inside it — an explorer that grows past it should be thinned
MAX_VIEWS_CHECKED = 20_000


def test_every_view_of_every_explorer_fits_the_check_budget():
    total = sum(factory().n_views for _, factory in FACTORIES)
    assert total <= MAX_VIEWS_CHECKED, f"{total} precomputed views: more than the no-repr check's budget"


@pytest.mark.parametrize("name,factory", FACTORIES, ids=[n for n, _ in FACTORIES])
def test_views_show_no_reprs_nan_or_scientific_notation(name, factory):
    """Issue 27 item 2: every precomputed view a reader can reach reads as prose and numbers — checked at every
    view of every registered explorer (``ex.all_indices()``): no repr, NaN, unformatted float or exception text
    (a refused combination is one sentence in the reader's words, not the library's error message)."""
    ex = factory()
    for idx in ex.all_indices():
        out = ex.render_at(list(idx))
        body = QUOTED.sub(" ", text(re.sub(r"<title>.*?</title>", "", out, flags=re.S)))
        assert not REPR.search(body), f"{name} {idx}: {REPR.search(body).group(0)!r} in {body[:300]!r}"
        assert not EXCEPTION.search(body), f"{name} {idx}: {EXCEPTION.search(body).group(0)!r} in {body[:300]!r}"


def test_the_checks_catch_what_they_are_for():
    """The two patterns fire on the texts the audits found (so a pass means something)."""
    for bad in ("dtype='fp8': A100 has no FP8 peak", "Traceback (most recent call last)", "ValueError: n_gpus",
                "KeyError", "<Accelerator object at 0x7f>",
                "A100-SXM-80GB has no FP8 peak in the catalog (it has: FP64, BF16)", "nbytes must not be negative",
                "sparse=True: TPU-v5p has no structured-sparsity figure in the catalog"):
        assert EXCEPTION.search(bad), bad
    for bad in ("('412.5 W',)", "nan", "0.30000000000000004", "1.5e+12", "Plan(tp=8"):
        assert REPR.search(bad), bad
    for fine in ("arXiv:2104.04473", "RMS error 5 %", "Not possible: 7 micro-batches cannot fill 8 pipeline stages"):
        assert not REPR.search(fine) and not EXCEPTION.search(fine), fine


@pytest.mark.parametrize("name,factory", FACTORIES, ids=[n for n, _ in FACTORIES])
def test_tables_and_charts_come_from_the_book_renderers(name, factory):
    """Every table is tables.show's (wrapped, so it scrolls on a phone); every SVG is a plotting figure."""
    ex = factory()
    for idx in corner_views(ex):
        out = ex.render_at(idx)
        assert out.count("<table") == out.count('class="cc-table-wrap"'), name
        assert out.count("<svg") == out.count('class="cc-chart"'), name
        assert 'style="width:11em' not in out and "<ul>" not in out, name        # hand-drawn bars and lists


# --- defaults equal the chapters' prose; options reach their configurations ---------------------------------

def test_plan_explorer_default_is_the_running_examples_plan():
    """Chapter 4 and chapter 13: GPT-3 175B on 1,024 A100, TP 8 × PP 16 × DP 8, 192 micro-batches = 1,536
    sequences per step (Narayanan et al. 2021's batch for this model)."""
    ex = chipchain.views.parallel.plan_explorer()
    assert 192 in control(ex, "microbatches").values
    out = text(ex.render_current())
    assert str(W.plan).split(",")[0] in out and "192 micro-batches" in out and "1,536 sequences" in out
    assert W.plan.batch == 1536


def test_allreduce_explorer_reaches_the_chapters_sizes_and_shows_its_case():
    ex = chipchain.views.comms.allreduce_explorer()
    assert {16e3, 14e6, 14e9} <= set(control(ex, "nbytes").values)
    assert {8, 64, 1024} <= set(control(ex, "n_gpus").values)
    out = text(ex.render_current())
    best = comms.fastest_allreduce(14e9, "H100", 1024)[0]
    assert best == "double-tree"                                  # chapter 3: the double tree wins at 1,024 GPUs
    assert "Fastest: double binary tree (NCCL)" in out and "1,024 GPUs" in out
    t = comms.cluster_allreduce_time(14e9, "H100", 1024, algorithm="double-tree")
    assert str(units.fmt_duration(t)) in out


def test_goodput_explorer_default_is_llama3_at_16384_gpus():
    """Chapter 7: Llama 3's per-GPU interruption rate, 16,384 GPUs, a 1-minute write, a 10-minute restart."""
    ex = chipchain.views.reliability.goodput_explorer()
    lam = reliability.llama3_per_gpu_rate()
    m = reliability.cluster_mtbf(lam, 16384)
    g = checkpoint.goodput(checkpoint.daly_interval(60.0, m), 60.0, 600.0, m)
    out = text(ex.render_current())
    assert str(units.fmt_percent(g, 3)) in out
    assert 0.84 < g < 0.87                                         # the chapter's 85 %: Meta reports > 90 %


def test_same_cards_default_reproduces_v3s_reported_gpu_hours():
    """DeepSeek-V3 report, Table 1: 2,664 K H800 GPU-hours of pre-training."""
    out = text(chipchain.views.deepseek.same_cards_explorer().render_current())
    assert "this setting: 2.66 M GPU-hours" in out and "V3 reported: 2.66 M GPU-hours" in out
    assert "54.2" in out                                           # 2.664 M GPU-hours / 2,048 GPUs / 24 h


def test_traffic_explorer_default_is_the_chapters_n_4096():
    v = chipchain.views.attention
    ex = v.traffic_explorer()
    t = v.traffic_table([4096], d=64, sram=v._a100_sram_elements())
    assert f"{float(t['ratio'].iloc[0]):.1f}×" in text(ex.render_current())


def test_schedule_explorer_default_matches_the_chapters_table():
    v = chipchain.views.platform
    df = v.policy_table(0.4, load=0.85, seeds=(0, 1, 2))
    out = text(v.schedule_explorer().render_current())
    assert str(units.fmt_percent(float(df.loc["first-fit", "utilisation"]), 3)) in out


def test_packing_explorer_default_matches_the_chapter_and_counts_cut_documents():
    x = datapath.sample_lengths(2000, median=512, sigma=1.0, max_len=4096, seed=0)
    out = text(chipchain.views.platform.packing_explorer().render_current())
    assert f"{datapath.packing_efficiency(x, 4096):.1%}".replace("%", " %") in out
    cut = int((x >= 4096).sum())
    assert f"{cut:,} documents" in out
    hist = chipchain.views.platform._packing_point(512, 1.0, 4096)[5]
    assert sum(hist) == 2000 - cut                                  # clipped documents are not drawn as data


def test_compare_explorer_default_ratio_is_the_chapters():
    out = text(chipchain.views.landscape.compare_explorer().render_current())
    assert f"{landscape.compare_peaks('H100', 'TPU-v5p'):.2f}×" in out
    assert "1, 2:" not in out                                       # categories are named, not numbered


def test_scoring_explorer_reaches_the_chapters_profiles():
    ex = chipchain.views.landscape.scoring_explorer()
    levels = {c.name: set(c.values) for c in ex.controls}
    profiles = {"training": {"compute": 2, "interconnect": 2, "software": 2, "memory": 1},
                "inference": {"memory": 2, "efficiency": 1, "software": 1},
                "hardware only": {"compute": 1, "memory": 1, "interconnect": 1}}
    for weights in profiles.values():
        for name, values in levels.items():
            w = weights.get(name, 0)
            assert (bool(w) if name == "efficiency" else w) in values


def test_roofline_explorer_default_is_memory_bound_as_the_chapter_says():
    """Chapter 1: a BF16 matmul of n = 256 sits at n/3 ≈ 85 FLOP/byte, below the H100's ridge (≈ 295)."""
    out = text(chipchain.views.chip.roofline_explorer().render_current())
    assert "85.3 FLOP/byte" in out and "memory-bound" in out
    assert roofline.matmul_intensity(256, 256, 256, 2) < roofline.ridge_point("H100", "bf16")


def test_ledger_explorer_is_compact_and_marks_what_moved():
    v = chipchain.views.walkthrough
    ex = v.ledger_explorer()
    default = ex.render_current()
    assert "<table" not in default and "running example:" not in default
    assert default.count("cc-headline") == 1
    other = text(ex.render_at([0, 0, 0, 0]))                         # 7B, 512 GPUs, A100, 30 %
    assert f"running example: {VW.texts(W)['days']}" in other


def test_bubble_explorer_varies_what_the_figure_holds_fixed():
    """Chapter 11's figure plots efficiency against micro-batches at c = 0.5; the explorer plots it against c."""
    v = chipchain.views.deepseek
    out = v.bubble_explorer().render_current()
    assert "communication / compute" in out
    e = deepseek.pipeline_efficiency("1F1B", 16, 32, comm=0.5)
    assert f"{100 * e:.1f} %" in text(out)


# --- bars on one baseline, proportional ------------------------------------------------------------------------

def bar_rects(svg):
    return [(float(x), float(w)) for x, w in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg)]


def test_precision_ladder_bars_share_a_baseline_and_are_proportional():
    """H100 SXM datasheet: dense FP8 1,979 TFLOP/s is twice dense BF16 989.4, which is twice TF32 494.7."""
    out = chipchain.views.chip.precision_view("H100-SXM", False)
    rects = bar_rects(out)
    assert len(rects) == 8 and len({x for x, _ in rects}) == 1
    widths = dict(zip(["fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8", "int8"], (w for _, w in rects)))
    assert widths["fp8"] / widths["bf16"] == pytest.approx(2.0, rel=0.01)
    assert widths["bf16"] / widths["tf32"] == pytest.approx(2.0, rel=0.01)


def test_view_blocks_carry_classes_whose_style_travels_with_every_explorable():
    """Headline cards, verdicts and paragraphs are styled by widgets.VIEW_CSS (in every explorable's header), not
    by inline styles repeated in each precomputed view; the verdict colours are the ≥ 4.5:1 GOOD and BAD."""
    from chipchain import widgets
    from chipchain.views import _layout

    cards = _layout.headline([("fits", "18 GB", "of 80 GiB", _layout.GOOD), ("step", "20.7 s", None, "#0072B2")])
    assert "style=" not in cards.replace('style="color:#0072B2"', "") and 'class="cc-good"' in cards
    assert _layout.verdict("no", ok=False) == '<p class="cc-verdict cc-bad">no</p>'
    assert re.search(r"\.cc-verdict\.cc-good\{color:" + _layout.GOOD, widgets.VIEW_CSS)
    assert re.search(r"\.cc-verdict\.cc-bad\{color:" + _layout.BAD, widgets.VIEW_CSS)
    assert "<style>" in widgets.explore(lambda n: cards, [widgets.Slider("n", "n", [1, 2])])._header().value
    assert widgets.VIEW_CSS in widgets.STYLE
