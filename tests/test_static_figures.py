"""Issue 28: static figures drawn by the chart system — axis titles with units, direct labels that do not collide
(each label's box at the phone's text size, the size every chart is laid out for), and plotted values equal to the
library's."""
import math
import re

import pytest

from chipchain import inference, models, plotting, roofline, views

_TEXT = re.compile(r'<text x="([\d.]+)" y="([\d.]+)" text-anchor="(\w+)" fill="([^"]+)" stroke="#fff"[^>]*>([^<]*)<')


def direct_labels(html):
    """(text, box) of every direct label (the haloed texts) in a chart's SVG."""
    return [(t, plotting._Boxes.box(float(x), float(y), t, a)) for x, y, a, _, t in _TEXT.findall(html)]


def disjoint(a, b):
    return min(a[2], b[2]) <= max(a[0], b[0]) or min(a[3], b[3]) <= max(a[1], b[1])


def assert_no_collisions(html):
    labels = direct_labels(html)
    for i, (ta, a) in enumerate(labels):
        assert 0 <= a[0] and a[2] <= plotting.VIEW_WIDTH, ta          # inside the chart
        for tb, b in labels[i + 1:]:
            assert disjoint(a, b), (ta, tb)


def axis_titles(html):
    svg = html.split("<svg", 1)[1]
    return re.findall(r'<text x="[\d.]+" y="[\d.]+"(?: text-anchor="middle")? fill="#333">([^<]*\([^<]*\))</text>', svg)


def test_ch12_decode_roofline_is_a_chart_with_the_librarys_numbers():
    f = views.inference.decode_roofline_figure("H100", "Llama-3-8B", 2048, batches=(1, 8, 64, 512))
    html = f._repr_html_()
    assert html.count('<figure class="cc-chart"') == 1 and 'aria-label="Log–log roofline of the H100-SXM' in html
    assert "<img" not in html and "matplotlib" not in html
    titles = axis_titles(html)
    assert "arithmetic intensity (FLOP/byte)" in titles and "attainable BF16 TFLOP/s (dense)" in titles
    assert f.data["ridge"] == roofline.ridge_point("H100", "bf16")
    assert f"ridge {roofline.ridge_point('H100', 'bf16'):,.0f} FLOP/byte" in html
    m = models.get("Llama-3-8B")
    want = [inference.decode_intensity(m, 2048, b, "bf16", "bf16") for b in (1, 8, 64, 512)]
    want.append(inference.prefill_intensity(m, 2048, 1, "bf16", "bf16"))
    got = [i for _, i, _ in f.data["points"]]
    assert got == want
    for (_, i, y) in f.data["points"]:
        assert y == float(roofline.attainable_flops("H100", i, "bf16")) / 1e12
    # the plotted point sits where the chart's own log scale puts (intensity, attainable)
    circles = [(float(x), float(y)) for x, y in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', html)]
    assert len(circles) == 5
    xs = [c[0] for c in circles]
    assert xs == sorted(xs)                                      # in order of intensity, left to right
    ratio = (xs[1] - xs[0]) / (xs[4] - xs[0])
    assert ratio == pytest.approx(math.log(got[1] / got[0]) / math.log(got[4] / got[0]), abs=2e-3)
    labels = [t for t, _ in direct_labels(html)]
    assert {"batch 1", "batch 8", "batch 64", "batch 512: does not fit", "prefill, 2,048 tokens",
            "ridge 295 FLOP/byte"} <= set(labels)
    assert_no_collisions(html)
    assert "does not fit" in str(f) and "989.4 TFLOP/s" in str(f)


def test_ch14_calibration_figure_two_charts_with_the_librarys_numbers():
    from chipchain import calibration

    f = views.calibration.calibration_figure()
    html = f._repr_html_()
    charts = html.split('<figure class="cc-chart"')[1:]
    assert len(charts) == 2 and "<img" not in html
    assert all('aria-label="Log–log chart of predicted against' in c for c in charts)
    steps, hours = charts
    assert {"measured seconds per step (s, published)", "predicted seconds per step (s)"} <= set(axis_titles(steps))
    assert {"reported GPU-hours (GPU·h)", "predicted GPU-hours (GPU·h)"} <= set(axis_titles(hours))
    from chipchain import predictor
    errs = predictor.step_errors()
    assert f.data["steps"] == [(e.name, e.measured, e.predicted) for e in errs]
    runs = calibration.gpu_hours_errors(0.5)
    assert f.data["hours"] == [(e.name, e.reported, e.predicted, e.fixed) for e in runs]
    # one dot per configuration, two per run (median MFU and fixed MFU), each family named in the key
    assert steps.count("<circle") == len(errs) and hours.count("<circle") == 2 * len(runs)
    for fam in dict.fromkeys(e.family for e in errs):
        assert f'</span>{fam}</li>' in steps
    assert "at a fixed 50 % MFU</li>" in hours and "± 15 %</li>" in hours and "± 30 %</li>" in hours
    # a dot sits where the chart's log scale puts it: the x positions keep the measured values' log ratios
    xs = [float(x) for x in re.findall(r'<circle cx="([\d.]+)"', steps)]
    first, last = min(range(len(errs)), key=lambda i: errs[i].measured), max(range(len(errs)),
                                                                             key=lambda i: errs[i].measured)
    mid = next(i for i in range(len(errs)) if i not in (first, last))
    ratio = (xs[mid] - xs[first]) / (xs[last] - xs[first])
    want = math.log(errs[mid].measured / errs[first].measured) / math.log(errs[last].measured / errs[first].measured)
    assert ratio == pytest.approx(want, abs=2e-3)
    for c in charts:
        assert_no_collisions(c)


def test_ch12_latency_throughput_is_a_chart_with_the_librarys_numbers():
    from chipchain import serving_latency as sl

    curves = {"8B on 1 × H100": sl.latency_throughput("H100", "Llama-3-8B", 1024),
              "70B FP8 on 2 × H100": sl.latency_throughput("H100", "Llama-3-70B", 1024, weight_dtype="fp8", n_gpus=2,
                                                           link="NVLink4")}
    f = views.serving_ops.latency_throughput_figure(curves)
    html = f._repr_html_()
    assert html.count('<figure class="cc-chart"') == 1 and "<img" not in html
    assert {"server throughput (tokens/s, all users)", "time per output token (ms)"} <= set(axis_titles(html))
    want = [(k, p.batch, p.tpot * 1e3, p.tokens_per_second) for k, pts in curves.items() for p in pts]
    assert f.data["points"] == want
    assert html.count("<circle") == len(want)
    legend = html.split("<svg", 1)[0]
    assert all(f"</span>{k}</li>" in legend for k in curves)
    labels = [t for t, _ in direct_labels(html)]
    assert sorted(labels) == sorted(f"batch {b}" for b in (1, 8, 64) for _ in curves)
    assert_no_collisions(html)


def test_ch13_time_budget_bars_are_the_walkthroughs_days():
    from chipchain.views.walkthrough import time_budget_days

    f = views.walkthrough.time_budget_figure()
    html = f._repr_html_()
    assert html.count('<figure class="cc-chart"') == 1 and html.count("<rect") == 3 and "<img" not in html
    assert "time on the cluster (days)" in html
    bars = time_budget_days()
    assert f.data["bars"] == bars
    for name, days in bars:
        assert f">{name}<" in html and f">{days:,.0f} days<" in html
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"', html)]
    assert len(widths) == 3
    for (_, d), w in zip(bars, widths):                       # one zero baseline, lengths proportional to days
        assert w / widths[-1] == pytest.approx(d / bars[-1][1], abs=2e-3)


def test_ch12_transistor_counts_are_the_librarys_and_the_fits_its_doubling_times():
    from chipchain import moore

    f = views.serving_ops.transistor_counts_figure()
    html = f._repr_html_()
    assert html.count('<figure class="cc-chart"') == 1 and "<img" not in html
    assert {"transistors per chip (count)"} <= set(axis_titles(html)) and ">year</text>" in html
    cpu, acc = moore.transistor_points("microprocessor"), moore.transistor_points("accelerator")
    assert f.data["cpu"] == [(p.name, p.year, p.transistors) for p in cpu]
    assert f.data["accelerators"] == [(p.name, p.year, p.transistors) for p in acc]
    assert html.count("<circle") == len(cpu) + len(acc)
    for (lo, hi), (_, _, T) in zip(((1971, 2005), (2005, 2022)), f.data["eras"]):     # the function's default eras
        q = [p for p in cpu if lo <= p.year < hi]
        assert T == moore.fit_doubling_time([p.year for p in q], [p.transistors for p in q])
        assert f"doubling every {T:.1f} years</li>" in html
    assert "1,980" not in html and ">1980<" in html                # years without a thousands separator
    assert [t for t, _ in direct_labels(html)] == ["V100", "B200"]
    assert_no_collisions(html)


# --- chapters 4 and 11 (issue 28, reader #14): the four matplotlib figures redrawn by the chart system ---------------

def test_ch11_pipeline_efficiency_lines_are_the_deepseek_model():
    from chipchain import deepseek as ds

    f = views.deepseek.pipeline_efficiency_figure(16, 0.5)
    html = f._repr_html_()
    assert html.count('<figure class="cc-chart"') == 1 and "<img" not in html
    assert {"useful compute (%)"} <= set(axis_titles(html))
    for s in ds.SCHEDULES:
        assert f.data["lines"][s] == [100 * ds.pipeline_efficiency(s, 16, m, comm=0.5) for m in f.data["microbatches"]]
        assert f"</span>{s}</li>" in html.split("<svg", 1)[0]               # the key sits above the plot
    assert html.count("<polyline") == 3
    assert_no_collisions(html)


def test_ch11_bias_balancing_key_is_off_the_data():
    from chipchain import expert_routing as er

    run = er.simulate_bias_balancing(n_experts=16, top_k=2, tokens=256, steps=40, gamma=0.001)
    f = views.moe.bias_balancing_figure(run)
    html = f._repr_html_()
    legend, svg = html.split("<svg", 1)
    assert "no bias (router as trained)</li>" in legend and "γ = 0.001" in legend   # reader #14: not drawn on a line
    assert "<img" not in html and "load above the mean (%)</text>" in html and ">training step</text>" in html
    assert f.data["with bias"] == [100 * v for v in run.max_violation]
    assert f.data["no bias"] == [100 * v for v in run.unbiased]
    assert direct_labels(svg) == []


def test_ch11_accumulation_points_are_the_emulations():
    from chipchain import accumulation

    c = accumulation.compare_promotion((1024, 2048, 4096), acc_bits=14, promote_every=128)
    f = views.moe.accumulation_figure(c)
    html = f._repr_html_()
    assert html.count("<circle") == 9 and "<img" not in html
    assert {"relative error (%)", "inner dimension K (elements summed)"} <= set(axis_titles(html))
    assert f.data["14-bit accumulator only"] == [100 * v for v in c.limited]
    assert f.data["promoted to FP32 every 128"] == [100 * v for v in c.promoted]
    assert_no_collisions(html)


def test_ch04_zero_tradeoff_memory_is_the_librarys():
    from chipchain import hardware, memory

    f = views.parallel.zero_tradeoff_figure(175e9)
    html = f._repr_html_()
    assert html.count("<polyline") == 4 and "<img" not in html
    assert {"model states per GPU (GB)", "data-parallel degree N_d (GPUs)"} <= set(axis_titles(html))
    for z, (name, ys) in enumerate(f.data["lines"].items()):
        assert ys == [memory.zero_bytes_per_gpu(175e9, d, z) / 1e9 for d in f.data["dps"]]
    assert f.data["capacity"] == hardware.get("A100").memory_bytes / 1e9
    assert [t for t, _ in direct_labels(html)] == ["one A100 holds 80 GiB = 85.9 GB"]
    assert_no_collisions(html)


def test_pipeline_schedule_chart_shades_the_measured_bubble():
    from chipchain import pipesim

    html = views.pipelines.schedule_view("1F1B", 4, 8, 8)
    tl = pipesim.simulate("1F1B", 4, 8)
    assert 'fill="#d9d9d9"' in html and "idle (bubble)</li>" in html and "<img" not in html
    assert "27.3 %" in html and tl.idle_share == pytest.approx(3 / 11, rel=1e-12)
    assert ">stage</text>" in html and "time (units of one forward pass F" in html
    half = views.pipelines.schedule_view("1F1B", 4, 8, 4)
    assert ">t = 16.5</text>" in half
def test_pipeline_chart_draws_each_simulated_block_once_at_its_length():
    """Every block of the simulated step is one stroke segment of its kind's colour whose length (plus the 1-unit
    white gap) is the block's duration on the time axis, rounded to whole units (the chart's only rounding)."""
    from chipchain import pipesim

    tl = pipesim.simulate("ZB-H1", 4, 8)
    html = views.pipelines.schedule_view("ZB-H1", 4, 8, 8)
    axis = re.search(r'<g text-anchor="middle"[^>]*>(.*?)</g>', html).group(1)      # tick labels and axis title
    ticks = [(float(x), float(t)) for x, t in re.findall(r'<text x="([\d.]+)" y="[\d.]+">(\d+)</text>', axis)]
    (xa, ta), (xb, tb) = ticks[0], ticks[-1]                  # the time axis' first and last tick: units per F
    scale = (xb - xa) / (tb - ta)
    for kind, (_, colour) in views.pipelines.KINDS.items():
        ops = [o for o in tl.ops if o.kind == kind]
        found = re.search(rf'<path d="([^"]*)" fill="none" stroke="{colour}"', html)
        assert (found is not None) == bool(ops), kind
        if not ops:
            continue
        lengths = [int(h) + 1 for h in re.findall(r"h(\d+)", found.group(1))]
        assert len(lengths) == len(ops), kind
        busy = sum(o.end - o.start for o in ops) * scale
        assert sum(lengths) == pytest.approx(busy, abs=len(ops) + 0.01 * busy), kind


# --- chapters 1, 3 and 5 (issue 28) --------------------------------------------------------------------------------
def _ch1_roofline():
    ops = {"element-wise add (FP32)": roofline.elementwise_intensity(),
           "matmul n=1024 (BF16)": roofline.matmul_intensity(1024, 1024, 1024, 2),
           "matmul n=256 (BF16)": roofline.matmul_intensity(256, 256, 256, 2)}
    return views.chip.roofline_figure(["A100", "H100"], "bf16", operators=ops)


def _ch5_traffic():
    from chipchain import attention_io

    return views.attention.hbm_traffic_figure([2 ** e for e in range(8, 17)], d=64,
                                              sram=attention_io.sram_per_sm("A100") // 2)


def _h100_bf16():
    from chipchain import hardware

    return hardware.get("H100").peak_flops("bf16")


FIGURES = {
    "ch01 roofline": _ch1_roofline,
    "ch01 own roofline": lambda: views.chip.roofline_figure(["H100"], "fp32",
                                                            measured=("this computer", 30e9, 15e9)),
    "ch03 links": lambda: views.comms.links_figure(),
    "ch03 all-reduce vs size": lambda: views.comms.allreduce_size_figure("DGX-H100", n_gpus=1024),
    "ch03 scaling": lambda: views.comms.scaling_efficiency_figure("Llama-2-7B", 4e6),
    "ch05 traffic": _ch5_traffic,
    "ch05 peak memory": lambda: views.attention.peak_memory_figure(
        {"N": [256, 512, 1024, 2048], "naive": [1.2e6, 4.5e6, 1.8e7, 7e7], "flash": [6e5, 7e5, 9e5, 1.2e6]}),
}


@pytest.mark.parametrize("name", list(FIGURES))
def test_figures_of_chapters_1_3_5_are_vector_charts_in_the_chart_style(name):
    """Vector SVG (no raster), the chart CSS that sizes text by the chart's width (≥ 12 px at 1280, ≥ 11 px at 390,
    measured by the browser check), no text that overrides that size, axis titles with units, alt text, and direct
    labels that stay inside the chart and do not collide at the phone's text size."""
    f = FIGURES[name]()
    html = f._repr_html_()
    assert html.count('<figure class="cc-chart"') == 1 and "<img" not in html and "matplotlib" not in html
    assert plotting.CHART_CSS in html and 'role="img" aria-label="' in html
    svg = html.split("<svg", 1)[1]
    assert "font-size" not in svg.split(">", 1)[1]        # every text at the size the container query picks
    assert f'font-size="{plotting.FONT_UNITS[0]}"' in svg.split(">", 1)[0]
    titles = axis_titles(html)
    assert titles or "(GB/s)" in html, titles               # hbars carry their unit in the x title
    assert_no_collisions(html)
    assert str(f) and "<" not in str(f)                     # the plain text nbval compares


def test_ch01_roofline_ridges_are_peak_over_bandwidth_from_the_catalog():
    from chipchain import hardware

    f = _ch1_roofline()
    html = f._repr_html_()
    for name, ridge in f.data["ridges"]:
        acc = hardware.get(name)
        assert ridge == pytest.approx(acc.peak_flops("bf16") / acc.memory_bandwidth, rel=1e-12)
        assert f"{name} ridge {ridge:,.0f}" in html
    assert [round(r) for _, r in f.data["ridges"]] == [153, 295]          # A100 312 / 2.039, H100 989.4 / 3.35
    # the operators sit on the A100's roof at the library's attainable throughput
    for label, i, y in f.data["points"]:
        assert y == pytest.approx(float(roofline.attainable_flops("A100", i, "bf16")) / 1e12)
    assert {"element-wise add (FP32)", "matmul n=1024 (BF16)", "matmul n=256 (BF16)"} <= {
        t for t, _ in direct_labels(html)}
    # the flat roof is the dense BF16 peak, 989.4 TFLOP/s for the H100 (the datasheet)
    assert max(f.data["lines"][1][2]) == pytest.approx(989.4)


def test_ch01_own_roofline_is_the_measured_peak_and_bandwidth():
    f = views.chip.roofline_figure(["H100"], "fp32", measured=("this computer", 30e9, 15e9))
    label, xs, ys = f.data["lines"][-1]
    assert label == "this computer" and max(ys) == pytest.approx(30e9 / 1e12)
    assert ys[0] == pytest.approx(xs[0] * 15e9 / 1e12)                     # the slope is the bandwidth
    with pytest.raises(ValueError, match="measured"):
        views.chip.roofline_figure(["H100"], "fp32", measured=("x", -1, 15e9))


def test_ch03_links_bars_are_the_catalogs_per_direction_bandwidths():
    from chipchain import links

    f = views.comms.links_figure()
    html = f._repr_html_()
    assert html.count("<rect") == len(views.comms.CHART_LINKS)
    for name, per_dir, both in f.data["bars"]:
        lk = links.get(name)
        assert (per_dir, both) == (lk.bandwidth_per_direction, lk.bidirectional_bandwidth)
    got = dict((n, (a, b)) for n, a, b in f.data["bars"])
    assert got["NVLink4"] == (450e9, 900e9) and got["IB-NDR"][0] == 50e9            # 18 × 25 GB/s; 400 Gb/s
    # log bars share the axis minimum: lengths keep the log ratios of the values
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"', html)]
    lo = 10 ** math.floor(math.log10(min(a for _, a, _ in f.data["bars"]) / 1e9))
    ratio = widths[0] / widths[1]
    want = math.log10(f.data["bars"][0][1] / 1e9 / lo) / math.log10(f.data["bars"][1][1] / 1e9 / lo)
    assert ratio == pytest.approx(want, rel=5e-3)


def test_ch03_allreduce_curves_are_the_alpha_beta_model():
    from chipchain import comms

    f = views.comms.allreduce_size_figure("DGX-H100", n_gpus=1024)
    import numpy as np

    for algo, ys in f.data["curves"].items():
        np.testing.assert_allclose(ys, comms.cluster_allreduce_time(np.array(f.data["sizes"]), "DGX-H100", 1024,
                                                                    algo), rtol=1e-12)
    # at 14 GB the figure's fastest agrees with comms.fastest_allreduce (the chapter's table)
    assert comms.fastest_allreduce(14e9, "H100", 1024)[0] == "double-tree" == f.data["fastest"][-1][1]
    html = f._repr_html_()
    assert html.count("<polyline") == len(comms.ALGORITHMS) and "stroke-dasharray" in html   # the tree dashed


def test_ch03_scaling_is_the_dp_scaling_curve():
    f = views.comms.scaling_efficiency_figure("Llama-2-7B", 4e6)
    df = views.comms.dp_scaling_curve("Llama-2-7B", f.data["counts"], 4e6, "DGX-H100")
    assert f.data["efficiency"]["NVLink4 + IB-NDR"] == pytest.approx(list(df["efficiency"]), rel=1e-11)
    assert f.data["counts"][-1] * 2048 <= 4e6 < f.data["counts"][-1] * 2 * 2048   # one sequence per GPU at most
    assert all(0 < e <= 1 for v in f.data["efficiency"].values() for e in v)


def test_ch05_traffic_counts_equal_the_io_model():
    from chipchain import attention_io

    f = _ch5_traffic()
    m = attention_io.sram_per_sm("A100") // 2
    assert f.data["m_over_d"] == m / 64 == 1536
    for n, fl, st in zip(f.data["ns"], f.data["flash"], f.data["standard"]):
        assert fl == attention_io.flash_hbm_accesses(n, 64, m) * 2
        assert st == attention_io.standard_hbm_accesses(n, 64, m) * 2
    i = f.data["ns"].index(1024)
    assert f.data["flash"][i] == 8 * 1024 * 64 * 2          # the chapter's 8Nd elements at N = 1,024, BF16
    assert "N = M/d = 1,536" in [t for t, _ in direct_labels(f._repr_html_())]


def test_ch05_peak_memory_models_are_the_librarys():
    from chipchain import attention

    f = FIGURES["ch05 peak memory"]()
    for n, v in zip(f.data["ns"], f.data["naive_model"]):
        assert v == (2 * n * n + n * 64) * 8 == attention.naive_extra_memory(n, 64, bytes_per_element=8)
    assert f._repr_html_().count("<circle") == 8 and "standard, measured</li>" in f._repr_html_()
def _is_vector_chart(html, n=1):
    assert html.count('<figure class="cc-chart"') == n and "<svg" in html
    assert "<img" not in html and "matplotlib" not in html and "data:image" not in html


def test_ch02_generation_growth_is_the_generation_tables_multiples():
    f = views.landscape.generation_growth_figure()
    html = f._repr_html_()
    _is_vector_chart(html)
    assert "multiple of the A100-SXM-80GB (×)" in axis_titles(html)
    df = views.landscape.generation_table()
    want = {"dense BF16 peak": "compute x first", "memory capacity": "memory x first",
            "memory bandwidth": "bandwidth x first"}
    assert [q for q, _ in f.data["series"]] == list(want)
    for q, ys in f.data["series"]:
        assert ys == [float(v) for v in df[want[q]]]
        assert ys[0] == 1.0                                      # each quantity relative to the first part
        assert f"</span>{q}</li>" in html
    # the published ratios (catalog): B200 dense BF16 2,250 / A100 312 = 7.21; 8 TB/s / 2.039 TB/s = 3.92
    assert dict(f.data["series"])["dense BF16 peak"][-1] == pytest.approx(2250 / 312, rel=1e-12)
    assert html.count("<circle") == 3 * len(df)
    assert {"7.21×", "2.25×", "3.92×"} == {t for t, _ in direct_labels(html)}
    assert ">A100 (2020)<" in html and ">B200 (2024)<" in html
    assert_no_collisions(html)


def test_ch06_ledger_card_line_is_the_catalogs_binary_capacity():
    from chipchain import hardware, memory

    led = {"pure FP32 + Adam": memory.rule_of_thumb_ledger(7e9, "fp32-adam"),
           "mixed precision + Adam": memory.rule_of_thumb_ledger(7e9, "mixed-adam")}
    f = views.memory.ledgers_figure(led, "H100")
    html = f._repr_html_()
    _is_vector_chart(html)
    cap = hardware.get("H100").memory_bytes
    assert f.data["capacity"] == cap == 80 * 2**30                  # an "80 GB" card holds 80 GiB (reader #6)
    assert "one H100, 80 GiB = 85.9 GB" in html and "80.0 GB" not in html
    assert [t for _, t in f.data["totals"]] == [sum(d.values()) for d in led.values()]
    assert ">pure FP32 + Adam: 140 GB<" in html and ">mixed precision + Adam: 126 GB<" in html
    # the marker sits where the bars' own scale puts 85.9 GB: bar widths are proportional to bytes
    rects = [(float(x), float(w)) for x, w in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', html)]
    n0 = len(led["pure FP32 + Adam"])
    assert len(rects) == sum(len(d) for d in led.values())        # one segment per component of each ledger
    x0 = rects[0][0]
    end_fp32 = rects[n0 - 1][0] + rects[n0 - 1][1] - x0
    line_x = float(re.search(r'<line x1="([\d.]+)" y1="[\d.]+" x2="\1" y2="[\d.]+" stroke="#000" stroke-width="2.5"',
                             html).group(1)) - x0
    assert line_x / end_fp32 == pytest.approx(cap / f.data["totals"][0][1], abs=2e-3)


def test_ch06_timeline_peak_is_the_timelines_and_the_card_the_catalogs():
    from chipchain import hardware, timeline

    tl = timeline.step_timeline("Llama-3-8B", seq=8192, dp=8, zero=1, recompute="selective")
    f = views.memory.memory_timeline_figure(tl, "H100")
    html = f._repr_html_()
    _is_vector_chart(html)
    assert {"memory per GPU (GB)"} <= set(axis_titles(html))
    assert f.data["peak"] == tl.peak and f.data["peak_label"] == "loss (end of forward)"
    assert f.data["capacity"] == hardware.get("H100").memory_bytes
    assert html.count("<polygon") == len(timeline.COMPONENTS)     # one filled band per component
    # the drawn path drops only points through which every band runs straight: read at each event, the top of
    # the stack is that event's total (GB), the loss included
    xs, tops = f.data["path"]
    assert len(xs) < len(tl.labels) / 4                           # a few dozen points, not hundreds, per view
    for e, total in enumerate(tl.totals):
        k = next(j for j in range(1, len(xs)) if xs[j] >= e)
        t = (e - xs[k - 1]) / (xs[k] - xs[k - 1])
        assert tops[-1][k - 1] + t * (tops[-1][k] - tops[-1][k - 1]) == pytest.approx(total / 1e9, rel=1e-9)
    for comp in timeline.COMPONENTS:
        assert f"</span>{comp}</li>" in html
    labels = {t for t, _ in direct_labels(html)}
    assert {f"peak {tl.peak / 1e9:,.1f} GB: loss (end of forward)", "H100: 85.9 GB", "forward", "backward",
            "optimizer"} <= labels
    assert_no_collisions(html)


def test_ch12_moore_projection_ends_where_the_doubling_times_put_it():
    from chipchain import moore

    f = views.inference.moore_projection_figure((2, 3, 4), 2015, (2005, 2035))
    html = f._repr_html_()
    _is_vector_chart(html)
    assert "transistors per chip, relative to 2015 (×)" in axis_titles(html)
    # twenty years: 2^10 = 1,024 at two years, 2^5 = 32 at four, 2^(20/3) ≈ 101.6 at three
    ends = dict(f.data["at_end"])
    assert ends[2.0] == 1024.0 and ends[4.0] == 32.0 and ends[3.0] == pytest.approx(2 ** (20 / 3), rel=1e-12)
    nodes = [(n.name, n.volume_year) for n in moore.all_process_nodes()]
    assert f.data["nodes"] == nodes
    labels = {t for t, _ in direct_labels(html)}
    assert {f"TSMC {n}" for n, _ in nodes} <= labels
    assert ">2020<" in html and "2,020" not in html
def test_lab1_alpha_beta_figure_plots_the_measurement_and_the_ring_model():
    """L1's figure (was matplotlib): the measured dots as given, and the model line equal to chapter 3's ring
    all-reduce time with the fitted α and β, solid over the sizes it was fitted on and dashed below."""
    from chipchain import comms

    sizes = [4 << 10 << 2 * k for k in range(7)]                      # 4 KiB … 16 MiB, steps of four
    four = [1e-3 * (6 + m / 4e8) for m in sizes]
    two = [1e-3 * (1 + m / 6e8) for m in sizes]
    alpha, beta = 1.28e-3, 3.77e8
    f = views.labs.alpha_beta_figure({"measured, 4 ranks": (sizes, four), "measured, 2 ranks": (sizes, two)},
                                     alpha, beta, 4, fit_from=1 << 20)
    html = f._repr_html_()
    assert html.count('<figure class="cc-chart"') == 1 and "<img" not in html and "matplotlib" not in html
    assert {"message size M (bytes)", "all-reduce time (ms)"} <= set(axis_titles(html))
    assert html.count("<circle") == 2 * len(sizes)
    assert [(label, m) for label, m, _ in f.data["points"]] == [(k, m) for k in ("measured, 4 ranks",
                                                                               "measured, 2 ranks") for m in sizes]
    for m, t in f.data["model"]:
        assert t == comms.ring_allreduce_time(m, 4, beta, alpha)
    assert ">4 KiB<" in html and ">16 MiB<" in html                   # the lab's binary sizes on the axis
    legend = html.split("<svg", 1)[0]
    assert "α–β model, 4 ranks, fitted to sizes ≥ 1 MiB</li>" in legend and "measured, 2 ranks</li>" in legend
    assert html.count('stroke-dasharray') >= 1                       # the model below the fitted sizes, dashed
    assert_no_collisions(html)


# --- chapters 7-10 (issue 28): the last seven matplotlib figures, redrawn by the chart system -----------------------

def _ch07_setting():
    from chipchain import checkpoint, reliability

    m = reliability.cluster_mtbf(reliability.llama3_per_gpu_rate(), 16384)
    return 60.0, 600.0, m, checkpoint.daly_interval(60.0, m)


def _ch08_lengths():
    from chipchain import datapath

    return datapath.sample_lengths(2000, 512, 1.0, 4096, seed=0)


def _ch08_runs():
    from chipchain import scheduling

    return [scheduling.simulate_schedule(p, 0.4, 0.85, seed=0) for p in ("first-fit", "topology-aware")]


LATE_FIGURES = {
    "ch07 root causes": (lambda: views.reliability.root_causes_figure(), 1),
    "ch07 goodput": (lambda: views.reliability.goodput_figure(*_ch07_setting()[:3]), 1),
    "ch07 timeline": (lambda: views.reliability.timeline_figure(_ch07_setting()[3], *_ch07_setting()[:3],
                                                                work=24 * 3600, seed=2), 1),
    "ch08 schedule": (lambda: views.platform.schedule_figure(_ch08_runs()), 1),
    "ch08 padding": (lambda: views.platform.padding_figure(_ch08_lengths(), 16, 4096), 2),
    "ch09 buy vs rent": (lambda: views.power.buy_vs_rent_figure(30_000, "H100", None, rents=(2.0, 3.0, 4.0)), 1),
    "ch10 rule planes": (lambda: views.policy.rule_plane_figure(), 2),
}


def _charts(html):
    return ['<figure class="cc-chart"' + c for c in html.split('<figure class="cc-chart"')[1:]]


@pytest.mark.parametrize("name", list(LATE_FIGURES))
def test_figures_of_chapters_7_to_10_are_vector_charts_in_the_chart_style(name):
    """No matplotlib and no raster; the chart CSS that sizes text by the chart's width; no text that overrides that
    size; alt text that states the data (numbers in it); axis titles with units; labels that do not collide."""
    make, n = LATE_FIGURES[name]
    f = make()
    html = f._repr_html_()
    _is_vector_chart(html, n)
    assert plotting.CHART_CSS in html
    for chart in _charts(html):
        svg = chart.split("<svg", 1)[1].split("</svg>", 1)[0]
        assert f'font-size="{plotting.FONT_UNITS[0]}"' in svg.split(">", 1)[0]
        assert "font-size" not in svg.split(">", 1)[1]
        alt = re.search(r'aria-label="([^"]*)"', chart).group(1)
        assert len(alt) > 80 and re.search(r"\d", alt), alt
        assert axis_titles(chart), name
        assert_no_collisions(chart)
    assert str(f) and "<" not in str(f)


def test_ch07_root_causes_are_table_5_and_the_counts_percentages():
    from chipchain import reliability

    f = views.reliability.root_causes_figure()
    html = f._repr_html_()
    causes = reliability.root_causes()
    assert f.data["total"] == sum(r.count for r in causes) == 419           # Dubey et al. 2024: 419 interruptions
    assert [b[:2] for b in f.data["bars"]] == [(r.component, r.count) for r in causes[:8]]
    for name, count, printed, recomputed in f.data["bars"]:
        assert recomputed == 100 * count / 419
        assert f"{name}: printed {printed:.1f} %, counts give {recomputed:.1f} %" in html
    assert f.data["differs"] == ["Faulty GPU"]              # 148 / 419 = 35.3 %, printed 30.1 %: the one mismatch
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"', html)]
    for (_, c, _, _), w in zip(f.data["bars"], widths):                   # one zero baseline, lengths ∝ counts
        assert w / widths[0] == pytest.approx(c / 148, abs=2e-3)
    assert html.count(f'fill="{plotting.color(1)}"><title>Faulty GPU') == 1


def test_ch07_goodput_curve_is_the_checkpoint_model_and_its_intervals_young_and_daly():
    from chipchain import checkpoint

    c, r, m, _ = _ch07_setting()
    f = views.reliability.goodput_figure(c, r, m)
    html = f._repr_html_()
    taus = f.data["taus"]
    assert taus[0] == c / 4 and taus[-1] == pytest.approx(m, rel=1e-12)
    assert f.data["exact"] == pytest.approx([float(checkpoint.goodput(t, c, r, m)) for t in taus], rel=1e-11)
    assert f.data["first_order"] == pytest.approx([1 - c / t - t / (2 * m) - r / m for t in taus], rel=1e-9)
    assert f.data["young"] == pytest.approx(math.sqrt(2 * c * m), rel=1e-12)          # Young 1974: √(2CM)
    assert f.data["daly"] == checkpoint.daly_interval(c, m) < f.data["young"]
    best = max(range(len(taus)), key=lambda i: f.data["exact"][i])          # the curve peaks between Daly and Young
    assert taus[best - 1] <= f.data["young"] and taus[best + 1] >= f.data["daly"]
    labels = [t for t, _ in direct_labels(html)]
    assert labels == [f"Young {f.data['young'] / 60:.1f} min", f"Daly {f.data['daly'] / 60:.1f} min"]
    assert "exact model</li>" in html and "first order: 1 − C/τ − τ/2M − R/M</li>" in html


def test_ch07_timeline_draws_every_failure_of_the_simulated_run():
    from chipchain import failsim

    c, r, m, tau = _ch07_setting()
    f = views.reliability.timeline_figure(tau, c, r, m, work=24 * 3600, seed=2)
    html = f._repr_html_()
    tl = failsim.simulate_timeline(tau, c, r, m, 24 * 3600, seed=2)
    assert f.data["failures"] == pytest.approx(list(tl.failures / 3600), rel=1e-11)
    assert f.data["wall"] == pytest.approx(list(tl.wall / 3600), rel=1e-11)
    assert f.data["progress"][-1] == 24.0 and f.data["wall"][-1] > 24.0     # failures cost wall-clock time
    assert all(p <= w + 1e-9 for p, w in zip(f.data["progress"], f.data["wall"]))   # never ahead of the clock
    fail_lines = re.findall(rf'<line x1="([\d.]+)" y1="[\d.]+" x2="\1" y2="[\d.]+" stroke="{plotting.color(1)}"', html)
    assert len(fail_lines) == len(tl.failures) > 0                          # one vertical line per failure
    assert f"a failure ({len(tl.failures)} in this run)</li>" in html


def test_ch08_schedule_lines_are_the_daily_means_of_the_simulation():
    runs = _ch08_runs()
    f = views.platform.schedule_figure(runs)
    html = f._repr_html_()
    assert f.data["days"] == len(runs[0].hourly_utilisation) // 24
    for r in runs:
        s = f.data["series"][r.policy]
        for d in range(f.data["days"]):
            assert s["utilisation"][d] == pytest.approx(sum(r.hourly_utilisation[24 * d:24 * d + 24]) / 24, rel=1e-11)
            assert s["room"][d] == pytest.approx(sum(r.hourly_large_capacity[24 * d:24 * d + 24]) / 24, rel=1e-11)
        assert f"{r.policy}: utilisation</li>" in html and f"{r.policy}: room for a new large job</li>" in html
    assert html.count("<polyline") == 4


def test_ch08_padding_bars_and_histogram_are_the_datapath_functions():
    import numpy as np
    from chipchain import datapath

    x = _ch08_lengths()
    f = views.platform.padding_figure(x, 16, 4096)
    bars, hist = _charts(f._repr_html_())
    want = [datapath.padding_efficiency(x, 16), datapath.bucket_efficiency(x, 16), datapath.packing_efficiency(x, 4096)]
    assert [v for _, v in f.data["efficiency"]] == pytest.approx(want, rel=1e-11)
    assert want[0] < want[1] < want[2] <= 1                                # packing wastes least
    counts, edges = np.histogram(x, bins=np.geomspace(1, x.max(), 41))
    assert f.data["counts"] == counts.tolist() and sum(f.data["counts"]) == x.size
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"', bars)]
    assert [w / widths[-1] for w in widths] == pytest.approx([v / want[-1] for v in want], abs=2e-3)
    assert "documents per bin" in hist and "document length (tokens, log scale)" in hist


def test_ch09_buy_vs_rent_breaks_even_where_owning_costs_the_rent():
    from chipchain import economics, power

    f = views.power.buy_vs_rent_figure(30_000, "H100", None, rents=(2.0, 3.0, 4.0))
    html = f._repr_html_()
    host = power.host_share("H100")
    owned = economics.ownership_cost(30_000, f.data["utilisation"], "H100", host)
    assert f.data["cost"] == pytest.approx(list(economics.cost_per_used_hour(owned)), rel=1e-11)
    for r, u in f.data["break_even"]:                    # at the break-even utilisation owning costs exactly the rent
        at = economics.cost_per_used_hour(economics.ownership_cost(30_000, [u], "H100", host))
        assert float(at[0]) == pytest.approx(r, rel=1e-9)
    assert [round(100 * u) for _, u in f.data["break_even"]] == [86, 55, 40]      # the chapter's 86 / 55 / 40 %
    assert sorted(t for t, _ in direct_labels(html)) == ["40 %", "55 %", "86 %"]
    assert html.count("<circle") == 3 and all(f"rent ${r:.2f}/h</li>" in html for r in (2, 3, 4))


def _plane_scale(d):
    (x0, x1), (y0, y1) = d["xlim"], d["ylim"]
    ml, mt, right, bottom = d["rect"]
    return (lambda v: ml + (math.log10(v) - math.log10(x0)) / (math.log10(x1) - math.log10(x0)) * (right - ml),
            lambda v: bottom - (v - y0) / (y1 - y0) * (bottom - mt))


def test_ch10_rule_planes_regions_are_the_rules_thresholds():
    from chipchain import policy

    f = views.policy.rule_plane_figure()
    charts = _charts(f._repr_html_())
    for rid, chart in zip(("2022-10", "2023-10"), charts):
        rule, d = policy.rule(rid), f.data[rid]
        (x0, x1), (y0, y1) = d["xlim"], d["ylim"]
        want = []
        for name, branches in rule.categories:                # every branch of every category, box by box
            for branch in branches:
                lim = {k: (lo, hi) for k, lo, hi in branch}
                tpp, pd_ = lim.get("tpp", (None, None)), lim.get("pd")
                want.append((name, tpp[0] or x0, tpp[1] or x1, (pd_[0] or 0.0) if pd_ else y0,
                             (pd_[1] or y1) if pd_ else y1, lim.get("io_GBps", (None,))[0]))
        assert sorted(d["regions"]) == sorted(want)
        edges = {v for _, a, b, _, _, _ in d["regions"] for v in (a, b)} - {x1}
        assert edges == set(policy.thresholds(rule, "tpp"))
        assert {v for _, _, _, a, b, _ in d["regions"] for v in (a, b)} - {y0, y1} == set(policy.thresholds(rule, "pd"))
        # each region is drawn where the chart's scale puts its thresholds
        tx, ty = _plane_scale(d)
        polys = [[tuple(map(float, p.split(","))) for p in pts.split()]
                 for pts in re.findall(r'<polygon points="([^"]+)"', chart)]
        assert len(polys) == len(want)
        for (_, a, b, lo, hi, _), poly in zip(d["regions"], polys):
            xs, ys = {round(x, 1) for x, _ in poly}, {round(y, 1) for _, y in poly}
            assert xs == {round(tx(a), 1), round(tx(b), 1)} and ys == {round(ty(lo), 1), round(ty(hi), 1)}
    assert "3A090 if I/O ≥ 600 GB/s" in charts[0] and "3A090.b region: (2,400 ≤ TPP &lt; 4,800 and" in charts[1]


def test_ch10_rule_planes_put_each_part_at_its_tpp_and_density_in_its_category():
    f = views.policy.rule_plane_figure()
    charts = _charts(f._repr_html_())
    df = views.policy.placements()
    for rid, chart in zip(("2022-10", "2023-10"), charts):
        d = f.data[rid]
        tx, ty = _plane_scale(d)
        drawn = [n for p in d["points"] for n in p["names"]]
        assert sorted(drawn + d["unplaced"]) == sorted(df.index)             # every catalog part, once
        assert d["unplaced"] == [n for n in df.index if df.loc[n, "tpp"] != df.loc[n, "tpp"]]
        marks = re.findall(r'<(circle cx="([\d.]+)" cy="([\d.]+)"|rect x="([\d.]+)" y="([\d.]+)" width="10")', chart)
        assert len(marks) == len(d["points"])
        labels = [t for t, _ in direct_labels(chart)]
        for p, m in zip(d["points"], marks):
            for n in p["names"]:
                row = df.loc[n]
                assert (p["tpp"], p["category"], p["market"]) == (row["tpp"], row[rid], row["market"])
                assert p["pd"] == (None if row["pd"] != row["pd"] else row["pd"])
            cx, cy = (float(m[1]), float(m[2])) if m[1] else (float(m[3]) + 5, float(m[4]) + 5)
            k = round((cx - tx(p["tpp"])) / 12.0)                   # a second category at one place sits beside it
            assert cx == pytest.approx(tx(p["tpp"]) + 12.0 * k, abs=0.06) and k in (0, 1)
            if p["pd"] is not None:
                assert cy == pytest.approx(ty(p["pd"]), abs=0.06)
            else:
                assert cy > ty(0.0)                                   # the strip below zero: die area unknown
            assert m[0].startswith("rect") == (p["market"] == "consumer")
            assert ", ".join(p["names"]) in labels
    cat = {rid: {n: p["category"] for p in f.data[rid]["points"] for n in p["names"]} for rid in f.data}
    # the A800 and H800 were cut to the 2022 rule's I/O limit; the 2023 rule catches them on TPP alone
    assert cat["2022-10"]["A800"] == cat["2022-10"]["H800"] == "not controlled"
    assert cat["2023-10"]["A800"] == cat["2023-10"]["H800"] == "3A090.a"
    assert cat["2023-10"]["H20"] == "not controlled" and cat["2023-10"]["RTX-3090"] == "not controlled (note)"
