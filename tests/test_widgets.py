"""The explorable machinery: live recompute, static precompute with jslinked stacks, one-line errors."""
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
