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
    errs = calibration.step_errors()
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
