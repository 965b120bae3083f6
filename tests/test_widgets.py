"""The explorable machinery: live recompute, static precompute with jslinked stacks, one-line errors."""
import re

import pytest

from chipchain import widgets


def square_view(n, unit):
    if n == 3 and unit == "m":
        raise ValueError("three metres is not allowed")
    return f"<p>{n * n} {unit}²</p>"


def make():
    return widgets.explore(square_view, [widgets.Slider("n", "n", [1, 2, 3], value=2),
                                         widgets.Choice("unit", "Unit", {"metres": "m", "feet": "ft"})],
                           title="Squares")


def test_live_mode_recomputes(monkeypatch):
    monkeypatch.delenv("CHIPCHAIN_STATIC", raising=False)
    ex = make()
    box = ex.widget()
    slider, choice, out = box.children[1], box.children[2], box.children[3]
    assert out.value == "<p>4 m²</p>"
    slider.index = 0
    assert out.value == "<p>1 m²</p>"
    choice.index = 1
    assert out.value == "<p>1 ft²</p>"


def test_static_mode_precomputes_every_view_in_nested_stacks(monkeypatch):
    import ipywidgets as W

    monkeypatch.setenv("CHIPCHAIN_STATIC", "1")
    ex = make()
    box = ex.widget()
    root = box.children[-1]
    assert isinstance(root, W.Stack) and len(root.children) == 3
    assert all(isinstance(s, W.Stack) and len(s.children) == 2 for s in root.children)
    leaves = [leaf.value for s in root.children for leaf in s.children]
    assert leaves[2] == "<p>4 m²</p>" and leaves[3] == "<p>4 ft²</p>"
    assert root.selected_index == 1 and all(s.selected_index == 0 for s in root.children)
    targets = {id(link.target[0]) for link in ex.links}
    assert len(ex.links) == 1 + 3
    assert id(root) in targets and all(id(s) in targets for s in root.children)


def test_static_payload_is_the_distinct_views_and_one_shared_layout(monkeypatch):
    """Issue 28's page weight: a precomputed view carries its HTML and nothing else. Views and stacks share one
    layout and one style model; a view whose HTML another position already has is that same model, and every
    position still shows what the render function gives for it."""
    import ipywidgets as W

    monkeypatch.setenv("CHIPCHAIN_STATIC", "1")
    ex = widgets.explore(lambda n, unit: f"<p>{n % 2} {unit}</p>",
                         [widgets.Slider("n", "n", [1, 2, 3, 4]), widgets.Choice("unit", "Unit", ["m", "ft"])])
    root = ex.widget().children[-1]
    stacks = [root, *root.children]
    leaves = [leaf for s in root.children for leaf in s.children]
    assert [leaf.value for leaf in leaves] == [ex.render_at(i) for i in ex.all_indices()]
    assert len({id(leaf) for leaf in leaves}) == 4                    # 8 positions, 4 distinct views
    assert len({id(w.layout) for w in stacks + leaves}) == 1 and len({id(leaf.style) for leaf in leaves}) == 1
    assert isinstance(leaves[0].layout, W.Layout)


def test_bad_combination_is_one_line_message():
    ex = make()
    html = ex.render_at([2, 0])
    assert "cc-message" in html and "three metres is not allowed" in html and "\n" not in html


def test_repr_is_deterministic_text_of_current_view():
    text = repr(make())
    assert text.splitlines()[0].startswith("Explorable 'Squares'")
    assert "4 m²" in text


def test_static_view_limit(monkeypatch):
    monkeypatch.setenv("CHIPCHAIN_STATIC", "1")
    ex = widgets.explore(lambda a, b: "x", [widgets.Slider("a", "a", list(range(30))),
                                             widgets.Slider("b", "b", list(range(30)))])
    with pytest.raises(ValueError, match="at most"):
        ex.widget()


@pytest.mark.parametrize("factory,match", [
    (lambda: widgets.Slider("n", "n", [1]), "at least two"),
    (lambda: widgets.Slider("n", "n", [1, 2], value=5), "not one of its values"),
    (lambda: widgets.Slider("2n", "n", [1, 2]), "identifier"),
    (lambda: widgets.Choice("c", "c", {"a": 1}), "at least two"),
    (lambda: widgets.Toggle("t", "t", value=1), "True or False"),
    (lambda: widgets.explore(print, []), "at least one control"),
    (lambda: widgets.explore(42, [widgets.Toggle("t", "t")]), "callable"),
])
def test_bad_definitions(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


def test_render_must_return_html():
    ex = widgets.explore(lambda t: 42, [widgets.Toggle("t", "t")])
    with pytest.raises(TypeError, match="HTML string"):
        ex.render_current()


def test_predict_offers_a_neutral_start():
    p = widgets.predict("Q?", ["a", "b"], "section 3")
    assert "Make your bet" in p.render_current()
    assert "section 3 settles it" in p.render_at([1])


# --- the form layout (issue 14): one label column, readouts beside their sliders, nothing truncated ------------
def form():
    return widgets.explore(lambda n, w, acc, sparse: f"<p>{n} {w} {acc} {sparse}</p>", [
        widgets.Slider("n", "Micro-batches per replica", [16, 64, 192], value=192),
        widgets.Slider("w", "W (weight-gradient part of B = 2F)", [0.5, 1.0, 1.5], value=1.0,
                       fmt=lambda v: f"{v:g} × F"),
        widgets.Choice("acc", "Accelerator", {"H100 SXM5 80 GB": "H100", "MI300X": "MI300X"}),
        widgets.Toggle("sparse", "Sparsity", labels=["dense", "sparse (2:4)"])], title="Form")


@pytest.mark.parametrize("static", [False, True])
def test_controls_form_one_label_column(monkeypatch, static):
    if static:
        monkeypatch.setenv("CHIPCHAIN_STATIC", "1")
    else:
        monkeypatch.delenv("CHIPCHAIN_STATIC", raising=False)
    box = form().widget()
    assert "cc-form" in box._dom_classes
    controls = box.children[1:5]
    widths = {c.style.description_width for c in controls}
    assert len(widths) == 1 and widths.pop().endswith("em")           # tracks start at one x
    assert all("cc-ctl" in c._dom_classes for c in controls)
    readouts = {cls for c in controls[:2] for cls in c._dom_classes if cls.startswith("cc-ro-")}
    assert len(readouts) == 1                                          # one readout width per form
    width = float(readouts.pop()[len("cc-ro-"):])
    assert width >= 0.6 * len("1.5 × F")                               # the longest readout fits
    assert controls[3].style.button_width == "auto"                   # toggle buttons sized to their text
    assert "<style>" in box.children[0].value and widgets.FORM_CSS in box.children[0].value


def test_form_css_wraps_labels_and_keeps_readouts_on_the_slider_line():
    from pathlib import Path

    css = widgets.FORM_CSS
    label_rule = re.search(r"\.cc-form \.cc-ctl>\.widget-label\{([^}]*)\}", css).group(1)
    assert "white-space:normal" in label_rule and "text-overflow:clip" in label_rule
    assert "ellipsis" not in css
    phone = css[css.index("@media (max-width:560px)"):]
    assert "flex:0 0 100%" in phone                                    # the label takes its own line on a phone …
    assert "widget-readout{margin-left" in phone and "flex-wrap:wrap" in phone   # … track and readout share the next
    site = (Path(__file__).resolve().parents[1] / "book" / "site.css").read_text(encoding="utf-8")
    assert css in site and widgets.VIEW_CSS in site and widgets.VIEW_CSS in widgets.STYLE


def test_label_column_grows_with_the_longest_description_up_to_a_limit():
    short = widgets._form_widths([widgets.Slider("a", "n", [1, 2])])
    long = widgets._form_widths([widgets.Slider("a", "W (weight-gradient part of B = 2F)", [1, 2])])
    assert short[0] < long[0] <= max(widgets._LABEL_EM)


def test_text_repr_of_a_chart_is_its_alt_text():
    from chipchain import plotting

    chart = plotting.svg_chart(lines=[{"x": [1, 2], "y": [1, 2], "label": "ring"}], alt="time against size",
                               title="All-reduce")
    ex = widgets.explore(lambda n: chart + f"<p>n = {n}</p>", [widgets.Slider("n", "n", [1, 2])])
    assert repr(ex).splitlines()[1:] == ["[chart: time against size]", "n = 1"]
