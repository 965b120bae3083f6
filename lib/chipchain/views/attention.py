"""Views for chapter 5 (FlashAttention): the score-memory and traffic tables, the online-softmax trace, the traffic
and peak-memory figures and the traffic explorer. Every number comes from :mod:`chipchain.attention` (the two
algorithms) and :mod:`chipchain.attention_io` (the IO model and sizes)."""
from __future__ import annotations

from .._lazy import np

from .. import _check, attention, attention_io, models, plotting, units, widgets
from .._i18n import gettext as _
from . import _layout
from ._figure import Figure, key

__all__ = ["score_memory_table", "online_softmax_trace", "traffic_table", "hbm_traffic_figure", "peak_memory_figure",
           "traffic_explorer", "tiling_view", "tiling_explorer"]

#: models of the score-memory table: Llama 3 8B (32 heads), GPT-3 175B (96), Llama 3.1 405B (128)
SCORE_MODELS = ("Llama-3-8B", "GPT-3-175B", "Llama-3.1-405B")


def _a100_sram_elements(bytes_per_element=2):
    return attention_io.sram_per_sm("A100") // bytes_per_element


def score_memory_table(seqs=(2048, 8192, 32768, 131072), model=SCORE_MODELS, bytes_per_element=2):
    """One layer's N×N score matrix S (all heads, one sequence) at each sequence length, as a pandas DataFrame of
    bytes: rows are sequence lengths, one column per model (``model``: names, aliases or records), headed
    "<name> (<heads> heads)". Each column is :func:`chipchain.attention_io.score_matrix_bytes` over ``seqs``;
    ``bytes_per_element`` 2 for bf16. Head counts: Dubey et al. 2024, Table 3; Brown et al. 2020, Table 2.1.

    >>> float(score_memory_table([2048], ["175B"]).iloc[0, 0]) / 1e6
    805.306368
    """
    import pandas as pd

    chosen = [model] if isinstance(model, (str, models.Model)) else list(model)
    if not chosen:
        raise ValueError("model must name at least one model")
    ns = np.asarray(seqs)
    cols = {}
    for m in map(models.get, chosen):
        cols[f"{m.name} ({m.heads} heads)"] = attention_io.score_matrix_bytes(      # a key the chapter reads
            ns, m.heads, 1, bytes_per_element)
    out = pd.DataFrame(cols, index=pd.Index(ns, name="sequence length N"))
    return out


def online_softmax_trace(scores, values, block=2):
    """:func:`chipchain.attention.online_softmax_steps` as a pandas DataFrame, one row per block: the block's
    scores, its maximum, the running maximum m, the correction exp(m_old − m), the running sum l, the un-normalised
    output o and o/l.

    >>> round(float(online_softmax_trace([1, 2, 4, 3], [10, 20, 30, 40])["o/l"].iloc[-1]), 4)
    30.8562
    """
    import pandas as pd

    return pd.DataFrame([{"block": ", ".join(f"{s:g}" for s in st.block), "block max": st.block_max, "m": st.m,
                          "exp(m_old - m)": st.correction, "l": st.l, "o": st.o, "o/l": st.output}
                         for st in attention.online_softmax_steps(scores, values, block)])


def traffic_table(ns, d=64, sram=None, bytes_per_element=2):
    """HBM traffic per head of both algorithms at each sequence length, counted and modelled, in bytes.

    ``ns``: sequence lengths; ``d`` head dimension; ``sram`` in elements (default: the A100's 192 KiB per SM of
    2-byte elements); ``bytes_per_element`` converts elements to bytes. Columns: N, standard and flash counted
    (:mod:`chipchain.attention_io`'s ``standard_hbm_accesses``, ``flash_hbm_accesses``), Theorem 2's orders
    (``theorem2_standard``, ``theorem2_flash``, constant 1), and the counted ratio.

    >>> traffic_table([1024]).round(1).iloc[0].tolist()[:3]
    [1024.0, 9437184.0, 1048576.0]
    """
    import pandas as pd

    b = _check.positive("bytes_per_element", bytes_per_element)
    sram = _a100_sram_elements() if sram is None else sram
    rows = []
    for n in ns:
        std, fl = attention_io.standard_hbm_accesses(n, d, sram), attention_io.flash_hbm_accesses(n, d, sram)
        rows.append({"N": n, "standard (counted)": std * b, "flash (counted)": fl * b,
                     "standard (Theorem 2 order)": attention_io.theorem2_standard(n, d) * b,
                     "flash (Theorem 2 order)": attention_io.theorem2_flash(n, d, sram) * b, "ratio": std / fl})
    return pd.DataFrame(rows)


def _kib(nbytes) -> str:
    return f"{nbytes / units.KiB:g} KiB"


def hbm_traffic_figure(ns, d=64, sram=None, bytes_per_element=2):
    """HBM traffic per head against N (log–log, :func:`traffic_table`): counted (solid, with points) and Theorem 2's
    order (dashed) for both algorithms, with a reference line at N = M/d, the lower end of the theorem's range: a
    chart-system figure (:class:`~chipchain.views._figure.Figure`).

    >>> f = hbm_traffic_figure([1024, 4096], d=64)
    >>> f.data["flash"], round(f.data["m_over_d"])
    ([1048576.0, 10485760.0], 1536)
    """
    sram = _a100_sram_elements() if sram is None else sram
    t = traffic_table(ns, d, sram, bytes_per_element)
    xs = [int(v) for v in t["N"]]
    got = {k: [units.stable(float(v)) for v in t[f"{k} (counted)"]] for k in ("standard", "flash")}
    order = {k: [units.stable(float(v)) for v in t[f"{k} (Theorem 2 order)"]] for k in ("standard", "flash")}
    counted = {"standard": "standard attention, counted", "flash": "FlashAttention, counted"}
    ordered = {"standard": "standard attention, Theorem 2 order (N·d + N²)",
               "flash": "FlashAttention, Theorem 2 order (N²d²/M)"}
    lines, points = [], []
    for i, k in enumerate(("standard", "flash")):
        lines.append({"x": xs, "y": got[k], "label": counted[k], "color": plotting.color(i)})
        lines.append({"x": xs, "y": order[k], "dash": True, "color": plotting.color(i), "label": ordered[k]})
        points += [{"x": x, "y": y, "color": plotting.color(i)} for x, y in zip(xs, got[k])]
    edge = sram / d
    vlines = [{"x": edge, "label": f"N = M/d = {edge:,.0f}"}] if min(xs) < edge < max(xs) else []
    ticks = [(x, f"{x:,}" if x < 1024 else f"{x // 1024}K") for x in xs[::2]]
    size = _kib(sram * bytes_per_element)
    alt = _("Log–log chart of HBM bytes per head against sequence length N from {n0} to {n1} (d = {d}, SRAM {size}): "
            "standard attention counted {std0} to {std1}, FlashAttention {flash0} to {flash1}; dashed, Theorem 2's "
            "orders with constant 1.").format(
        n0=f"{xs[0]:,}", n1=f"{xs[-1]:,}", d=d, size=size, std0=units.fmt_bytes(got['standard'][0]),
        std1=units.fmt_bytes(got['standard'][-1]), flash0=units.fmt_bytes(got['flash'][0]),
        flash1=units.fmt_bytes(got['flash'][-1]))
    html = plotting.svg_chart(lines=lines, points=points, vlines=vlines, xlog=True, ylog=True, xticks=ticks,
                              xlabel="sequence length N (tokens)", ylabel="HBM traffic per head (bytes)",
                              height=340, title=_("d = {d}, SRAM M = {size} of {b}-byte elements").format(
                                  d=d, size=size, b=bytes_per_element), alt=alt)
    text = _("HBM traffic per head, d = {d}, SRAM {size}: at N = {n} standard {std}, FlashAttention {flash} "
             "({ratio}x less)").format(d=d, size=size, n=f"{xs[-1]:,}", std=units.fmt_bytes(got['standard'][-1]),
                                       flash=units.fmt_bytes(got['flash'][-1]),
                                       ratio=f"{got['standard'][-1] / got['flash'][-1]:.1f}")
    return Figure(html, text, {"ns": xs, "standard": got["standard"], "flash": got["flash"],
                               "standard_order": order["standard"], "flash_order": order["flash"], "m_over_d": edge})


def peak_memory_figure(measured, d=64, block_q=128, block_k=128, bytes_per_element=8):
    """Peak extra memory against N (log–log): measured points (a mapping or DataFrame with columns N, naive, flash
    in bytes, e.g. from :func:`chipchain.attention.peak_extra_memory`) and the models
    :func:`~chipchain.attention.naive_extra_memory` and :func:`~chipchain.attention.flash_extra_memory` (lines): a
    chart-system figure (:class:`~chipchain.views._figure.Figure`).

    >>> f = peak_memory_figure({"N": [256, 512], "naive": [1.2e6, 4.5e6], "flash": [6e5, 7e5]})
    >>> f.data["naive_model"]
    [1179648.0, 4456448.0]
    """
    ns = [int(_check.positive("N", n)) for n in measured["N"]]
    if not ns:
        raise ValueError("measured must hold at least one N")
    naive = [float(v) for v in measured["naive"]]
    flash = [float(v) for v in measured["flash"]]
    m_naive = [float(attention.naive_extra_memory(n, d, bytes_per_element=bytes_per_element)) for n in ns]
    m_flash = [float(attention.flash_extra_memory(n, d, block_q, block_k, bytes_per_element=bytes_per_element))
               for n in ns]
    c0, c1 = plotting.color(0), plotting.color(1)
    lines = [{"x": ns, "y": m_naive, "color": c0, "label": "standard, model 2N² + N·d"},
             {"x": ns, "y": m_flash, "color": c1, "label": "flash, model N·d + one tile"}]
    points = ([{"x": n, "y": v, "color": c0} for n, v in zip(ns, naive)]
              + [{"x": n, "y": v, "color": c1} for n, v in zip(ns, flash)])
    legend = key([("standard, measured", c0, "dot"), ("flash, measured", c1, "dot")])
    alt = _("Log–log chart of peak extra memory of one attention head against N from {n0} to {n1} (d = {d}, "
            "{b}-byte elements): standard attention measured {naive0} to {naive1} on a line of slope two; "
            "FlashAttention {flash0} to {flash1}, far lower and flatter.").format(
        n0=f"{ns[0]:,}", n1=f"{ns[-1]:,}", d=d, b=bytes_per_element, naive0=units.fmt_bytes(naive[0]),
        naive1=units.fmt_bytes(naive[-1]), flash0=units.fmt_bytes(flash[0]), flash1=units.fmt_bytes(flash[-1]))
    html = plotting.svg_chart(lines=lines, points=points, xlog=True, ylog=True,
                              xticks=[(n, f"{n:,}") for n in ns], xlabel="sequence length N (tokens)",
                              ylabel="peak extra memory (bytes)", height=320, alt=alt)
    text = _("Peak extra memory at N = {n} (d = {d}): standard model {naive}, flash model {flash}").format(
        n=f"{ns[-1]:,}", d=d, naive=units.fmt_bytes(m_naive[-1]), flash=units.fmt_bytes(m_flash[-1]))
    return Figure(legend + html, text, {"ns": ns, "naive": naive, "flash": flash, "naive_model": m_naive,
                                        "flash_model": m_flash})


_EX_NS = (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)


def _sram_choices() -> dict:
    """Like with like: each chip's most shared memory per SM, and its combined L1 + shared memory per SM."""
    sm = attention_io.sram_per_sm
    shared, both = _("{size} KiB ({chip} SM, max shared)"), _("{size} KiB ({chip} SM, L1 + shared)")
    return {shared.format(size=sm('A100', 'shared') // 1024, chip="A100"): sm("A100", "shared"),
            _("{size} KiB ({chip} SM, L1 + shared; Dao et al.)").format(size=sm('A100') // 1024, chip="A100"):
                sm("A100"),
            shared.format(size=sm('H100', 'shared') // 1024, chip="H100"): sm("H100", "shared"),
            both.format(size=sm('H100') // 1024, chip="H100"): sm("H100")}


def _sram_label(nbytes):
    return f"{nbytes // 1024} KiB" if nbytes % 1024 == 0 else str(units.fmt_bytes(nbytes))


def _traffic_view(n, d, sram_bytes, bytes_per_element=2):
    m = int(sram_bytes // bytes_per_element)
    attention_io.block_sizes(d, m)                                         # raises for an SRAM too small for d
    std = [attention_io.standard_hbm_accesses(x, d, m) * bytes_per_element for x in _EX_NS]
    fl = [attention_io.flash_hbm_accesses(x, d, m) * bytes_per_element for x in _EX_NS]
    th_s = [attention_io.theorem2_standard(x, d) * bytes_per_element for x in _EX_NS]
    th_f = [attention_io.theorem2_flash(x, d, m) * bytes_per_element for x in _EX_NS]
    i = _EX_NS.index(n)
    br, bc = attention_io.block_sizes(d, m)
    chart = plotting.svg_chart(
        lines=[{"x": _EX_NS, "y": std, "label": "standard, counted"},
               {"x": _EX_NS, "y": fl, "label": "FlashAttention, counted"},
               {"x": _EX_NS, "y": th_s, "label": "N·d + N² (Theorem 2)", "dash": True, "color": plotting.color(0)},
               {"x": _EX_NS, "y": th_f, "label": "N²d²/M (Theorem 2)", "dash": True, "color": plotting.color(1)}],
        points=[{"x": n, "y": std[i], "color": plotting.color(0)}, {"x": n, "y": fl[i], "color": plotting.color(1)}],
        vlines=[{"x": n, "label": f"N = {n:,}"}], xticks=[(x, f"{x:,}" if x < 1024 else f"{x // 1024}K") for x in _EX_NS[::2]],
        xlog=True, ylog=True, xlabel="sequence length N (tokens)", ylabel="HBM traffic per head (bytes, BF16)",
        alt=_("HBM traffic per head against sequence length for d = {d} and SRAM {size}: at N = {n}, standard "
              "attention moves {std}, FlashAttention {flash}").format(
            d=d, size=_sram_label(sram_bytes), n=n, std=units.fmt_bytes(std[i]), flash=units.fmt_bytes(fl[i])))
    regime = ("inside Theorem 2's range d ≤ M ≤ N·d" if d <= m <= n * d else
              "outside Theorem 2's range: the SRAM holds all of K and V (M > N·d), so both read them about once")
    scores = attention_io.score_matrix_bytes(n, 1, 1, bytes_per_element)
    cards = _layout.headline([
        ("standard attention moves", str(units.fmt_bytes(std[i])), _("per head at N = {n}").format(n=f"{n:,}")),
        ("FlashAttention moves", str(units.fmt_bytes(fl[i])), _("tiles {br} × {bc}").format(br=br, bc=bc)),
        ("less traffic", f"{std[i] / fl[i]:.1f}×",
         _("score matrix {size} never stored").format(size=units.fmt_bytes(scores)))])
    return (cards + chart + _layout.para(
        _("d = {d}, SRAM M = {m} two-byte (BF16) elements: {regime}. Counted by walking the algorithms' loops (no "
          "attention is run); one head.").format(d=d, m=f"{m:,}", regime=_(regime)), small=True))


@widgets.explorer
def traffic_explorer():
    """Explorable: counted HBM traffic of standard attention and FlashAttention against N, head dimension and
    SRAM size (BF16 elements, one head), with Theorem 2's orders (Dao et al. 2022)."""
    return widgets.explore(_traffic_view, [
        widgets.Slider("n", "Sequence length N", list(_EX_NS), value=4096, fmt=lambda x: f"{x:,}"),
        widgets.Slider("d", "Head dimension d", [32, 64, 128, 256], value=64),
        widgets.Choice("sram_bytes", "SRAM per SM", _sram_choices(), value=attention_io.sram_per_sm("A100")),
    ], title="HBM traffic of attention: standard vs FlashAttention")




# --- FlashAttention's tiling step by step (issue 28) -----------------------------------------------------------------
#: the stepper's case: one head, N = 1,024, d = 64, the A100's 192 KiB of L1 + shared memory in BF16 elements
TILE_N, TILE_D = 1024, 64


def tiling_view(step, n=TILE_N, d=TILE_D, sram=None, bytes_per_element=2) -> str:
    """HTML for one step of FlashAttention's forward pass (:func:`chipchain.attention_io.flash_tile_steps`,
    FlashAttention-2's order: Q blocks outside, K/V blocks inside): the N × N score matrix cut into B_r × B_c tiles
    (done, current, still to do; none is ever written to HBM), what sits in SRAM, and the bytes moved from HBM so
    far against the whole pass and against standard attention (:func:`chipchain.attention_io.standard_hbm_accesses`).
    ``step`` 0 is before the first load."""
    dg = plotting.diagrams
    m = _a100_sram_elements(bytes_per_element) if sram is None else sram
    steps = attention_io.flash_tile_steps(n, d, m)
    k = _check.integer("step", step, minimum=0)
    if k >= len(steps):
        raise ValueError(f"step must be at most {len(steps) - 1} for N = {n:,}, got {step!r}")
    st = steps[k]
    br, bc = attention_io.block_sizes(d, m)
    tr, tc = -(-n // br), -(-n // bc)
    T, W = dg.TEXT, plotting.VIEW_WIDTH
    left, top = dg.text_width("Q00") + 8, 1.4 * T
    gw = W - left - 4
    gh = 11 * T
    sx, sy = gw / n, gh / n
    cur, body = (st.i, st.j), []
    body.append(dg.text(left, 0.95 * T, _("K, V blocks j = 0 … {last} ({rows} rows each)").format(last=tc - 1, rows=bc)))
    for i in range(tr):
        q0, q1 = i * br, min(n, (i + 1) * br)
        y, h = top + q0 * sy, (q1 - q0) * sy
        lit_q = st.i == i
        body.append(dg.text(0, y + min(h, 1.2 * T) / 2 + 0.35 * T, f"Q{i}", fill=plotting.color(1) if lit_q else "#333",
                            weight=600 if lit_q else None))
        for j in range(tc):
            kk0 = j * bc
            done = st.i is not None and (i < st.i or (i == st.i and j < st.j))
            now = (i, j) == cur
            fill = plotting.color(1) if now else ("#9ccbe8" if done else "#e4e4e4")
            body.append(dg.rect(left + kk0 * sx + 0.5, y + 0.5, bc * sx - 1, h - 1, fill=fill, stroke="#fff", width=1,
                                rx=0))
    height = top + gh + 4
    where = (_("before the first load") if st.i is None else
             _("Q block {i} (rows {q0}–{q1}) with K, V block {j} (rows {k0}–{k1})").format(
                 i=st.i, q0=f"{st.q_rows[0]:,}", q1=f"{st.q_rows[1] - 1:,}", j=st.j, k0=f"{st.k_rows[0]:,}",
                 k1=f"{st.k_rows[1] - 1:,}"))
    alt = _("FlashAttention tiling, N = {n}, d = {d}: the {n} × {n} score matrix in {tr} × {tc} tiles of {br} × {bc}; "
            "step {k} of {last}: {where}; {k} tiles computed, none written to HBM.").format(
        n=f"{n:,}", d=d, tr=tr, tc=tc, br=br, bc=bc, k=k, last=len(steps) - 1, where=where)
    grid = dg.svg_diagram("".join(body), height, alt=alt, legend=[
        ("in SRAM now", plotting.color(1), "box"), ("computed and discarded", "#9ccbe8", "box"),
        ("still to do", "#e4e4e4", "box")])
    std = attention_io.standard_hbm_accesses(n, d, m) * bytes_per_element
    whole = steps[-1].total * bytes_per_element
    so_far = st.total * bytes_per_element

    def b(v):
        return str(units.fmt_bytes(v, 3))

    bars = plotting.svg_hbars(
        [("FlashAttention so far", so_far / units.MB, plotting.color(1)),
         ("FlashAttention, whole pass", whole / units.MB, "#9ccbe8"),
         ("standard attention, whole pass", std / units.MB, plotting.color(0))],
        xlabel="bytes moved between HBM and SRAM (MB)", unit_format=lambda v: b(v * units.MB),
        alt=_("HBM traffic so far {so_far}; FlashAttention's whole pass {whole}; standard attention {std}").format(
            so_far=b(so_far), whole=b(whole), std=b(std)))
    if st.i is None:
        sram_line = "SRAM is empty."
    else:
        rows_q, rows_k = st.q_rows[1] - st.q_rows[0], st.k_rows[1] - st.k_rows[0]
        used = 2 * rows_q * d + 2 * rows_k * d + rows_q * rows_k + 2 * rows_q
        sram_line = _("In SRAM: Q{i} and its output accumulator O{i} ({rows_q} × {d} each), K{j} and V{j} ({rows_k} × "
                      "{d} each), the score tile S ({rows_q} × {rows_k}) and the running max and sum: {used} of {m} "
                      "elements.").format(i=st.i, j=st.j, rows_q=rows_q, rows_k=rows_k, d=d, used=f"{used:,}",
                                          m=f"{m:,}")
    cards = _layout.headline([
        ("step", _("{k} of {last}").format(k=k, last=len(steps) - 1),
         _("Q block {i}, K/V block {j}").format(i=st.i, j=st.j) if st.i is not None else "start"),
        ("loaded this step", b(st.loaded * bytes_per_element),
         ("K, V" + (f" + Q{st.i}" if st.j == 0 else "")
          + (" + " + _("write O{i}").format(i=st.i) if st.writes_output else ""))
         if st.i is not None else "—"),
        ("moved so far", b(so_far), _("whole pass {whole}; standard {std}").format(whole=b(whole), std=b(std)))])
    tail = (_layout.verdict(_("Done: {whole} moved, {ratio}× less than standard attention's {std}, which writes and "
                              "reads the {n} × {n} score matrix.").format(whole=b(whole), ratio=f"{std / whole:.1f}",
                                                                          std=b(std), n=f"{n:,}"), True)
            if k == len(steps) - 1 else _layout.para(sram_line, small=True))
    return cards + grid + tail + bars


@widgets.explorer
def tiling_explorer():
    """Chapter 5: FlashAttention's forward pass tile by tile (FlashAttention-2's order, one head, N = 1,024, d = 64,
    the A100's 192 KiB in BF16 elements); default: before the first load."""
    m = _a100_sram_elements()
    last = len(attention_io.flash_tile_steps(TILE_N, TILE_D, m)) - 1
    return widgets.explore(tiling_view, [
        widgets.Slider("step", "Step", list(range(last + 1)), value=0, fmt=lambda v: "start" if v == 0 else f"{v}"),
    ], title="FlashAttention tile by tile: what sits in SRAM, what crosses to HBM")
