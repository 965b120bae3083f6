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
    assert_no_collisions(html)
