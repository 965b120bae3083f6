"""The library draws in the reader's language (issue 25, item 3): one gettext catalog, English the default, every
presentation boundary translated in the zh edition, numbers and units as in English, the catalog complete."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from chipchain import _i18n, tables, units, widgets
from chipchain.plotting import svg_chart, svg_hbars
from chipchain.views import _layout

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import i18n  # noqa: E402

CAT = _i18n.catalog("zh_CN")
#: catalog entries without placeholders: static words a boundary translates as they are
STATIC = sorted(m for m in CAT._catalog if not i18n._PLACEHOLDER.search(m))
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_the_librarys_catalog_is_complete_and_keeps_every_placeholder():
    """Every entry translated, none fuzzy, each translation with exactly its English's ``{placeholders}``."""
    assert i18n.lib_check("zh-CN") == []
    assert len(CAT) >= 50


def _latin_words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z]+", i18n._PLACEHOLDER.sub(" ", text))]


def test_each_translation_holds_chinese_and_keeps_the_numbers_of_its_english():
    """A translation is Chinese, or a Latin term the glossary keeps (All-Reduce, "{k} / {n}") with no English word its
    source lacks; and no number of the English is lost: a number written in a label is there in both editions
    (a translation may add one: "October 2022" → 2022 年 10 月, "two" → 2)."""
    from collections import Counter

    for msgid, msgstr in CAT._catalog.items():
        if not _i18n.has_cjk(msgstr) and _i18n.needs_translation(msgstr):
            source = _latin_words(msgid)
            assert all(any(s.startswith(w) or w.startswith(s) for s in source) for w in _latin_words(msgstr)), \
                f"{msgid!r} → {msgstr!r}"
        numbers = Counter(re.findall(r"\d+(?:[.,]\d+)*", i18n._PLACEHOLDER.sub(" ", msgid)))
        assert not numbers - Counter(re.findall(r"\d+(?:[.,]\d+)*", i18n._PLACEHOLDER.sub(" ", msgstr))), \
            f"numbers lost: {msgid!r} → {msgstr!r}"


def test_english_is_the_default_and_an_unknown_language_is_refused(monkeypatch):
    monkeypatch.delenv("CHIPCHAIN_LANG", raising=False)
    assert _i18n.lang() == "en"
    word = STATIC[0]
    assert _i18n.gettext(word) == word
    for spelling in ("zh-CN", "zh_CN", "zh", "zh_CN.UTF-8"):
        monkeypatch.setenv("CHIPCHAIN_LANG", spelling)
        assert _i18n.lang() == "zh_CN"
        assert _i18n.gettext(word) == CAT.gettext(word) != word
    monkeypatch.setenv("CHIPCHAIN_LANG", "fr_FR")
    with pytest.raises(ValueError, match="CHIPCHAIN_LANG"):
        _i18n.gettext(word)


@pytest.mark.parametrize("word", STATIC[:: max(1, len(STATIC) // 40)])
def test_every_boundary_draws_a_catalog_word_in_chinese(word):
    """The same English word, passed to a chart's axis title and legend, a table header, a control's description,
    a headline card and a verdict, reaches the zh reader as its translation — and the English reader unchanged."""
    zh = CAT.gettext(word)

    def drawn():
        chart = svg_chart(lines=[{"x": [1, 2], "y": [1, 2], "label": word}], xlabel=word, ylabel=word, alt="a line")
        bars = svg_hbars([(word, 3.0)], xlabel=word, alt="bars")
        import pandas as pd
        table = tables.show(pd.DataFrame({"a": [1]}), columns={"a": word}, caption=word).html
        ex = widgets.explore(lambda n: "", [widgets.Slider("n", word, [1, 2])], title=word)
        head = ex._header().value
        cards = _layout.headline([(word, "1 GPU", word)]) + _layout.verdict(word)
        return {"chart": chart, "bars": bars, "table": table, "title": head, "cards": cards,
                "control": _i18n.gettext(ex.controls[0].description)}

    import html
    with _i18n.language("en"):
        english = drawn()
    with _i18n.language("zh_CN"):
        chinese = drawn()
    for where in english:
        assert word in html.unescape(english[where]), where
        assert zh in html.unescape(chinese[where]), f"{where}: {zh!r} not drawn"


def test_numbers_and_units_keep_the_books_conventions_in_chinese():
    """Durations name their unit in words (天, 小时), every other unit stays a symbol, digits are the same."""
    with _i18n.language("zh_CN"):
        assert units.fmt_duration(152 * units.DAY) == "152 天"
        assert units.fmt_duration(3.1 * units.HOUR) == "3.1 小时"
        assert units.fmt_duration(0.082) == "82 ms"
        assert units.fmt_percent(0.5) == "50 %"
        assert units.fmt_dollars(5.576e6) == "$5.58 M"
    assert units.fmt_duration(152 * units.DAY) == "152 days"


def test_chinese_labels_are_measured_as_wide_as_they_are():
    """A Chinese character is a full em, so a chart leaves room for a Chinese axis label (a Latin digit is 0.64)."""
    from chipchain.plotting import _svg
    assert _svg._width("步长") == pytest.approx(2 * _svg._F)
    assert _svg._width("10") == pytest.approx(2 * 0.64 * _svg._F)


def test_what_needs_a_translation():
    """Numbers, units, abbreviations and catalog names read the same in both editions; words do not."""
    for same in ("989 TFLOP/s", "80 GiB", "H100-SXM", "Llama-3-70B", "TP 8 × PP 4", "50 %", "1,024", "NVLink 4",
                 "已翻译"):
        assert not _i18n.needs_translation(same), same
    for words in ("does not fit", "Step time (s)", "ring", "Memory per GPU (GB)"):
        assert _i18n.needs_translation(words), words


def test_a_missing_word_is_reported_once(tmp_path, monkeypatch):
    """What the zh edition would draw in English is written to CHIPCHAIN_I18N_MISSING (the build then fails)."""
    target = tmp_path / "missing.txt"
    monkeypatch.setenv("CHIPCHAIN_I18N_MISSING", str(target))
    monkeypatch.setattr(_i18n, "_reported", set())
    with _i18n.language("zh_CN"):
        for _ in range(3):
            assert _i18n.gettext("a phrase no catalog has") == "a phrase no catalog has"
        _i18n.gettext("H100-SXM")                         # a name: nothing to translate, not reported
    assert target.read_text(encoding="utf-8").splitlines() == ['"a phrase no catalog has"']
    assert i18n.lib_check("zh-CN", target) != []


def test_chart_text_falls_back_to_the_sites_chinese_font():
    """A chart's SVG names the site's CJK subset after DejaVu Sans, so a Chinese label is drawn in the book's font
    (no missing-glyph boxes), while Latin text keeps DejaVu Sans; the face is the one book/site.css declares."""
    svg = svg_chart(lines=[{"x": [1, 2], "y": [1, 2]}], xlabel="x", alt="a line")
    family = re.search(r'font-family="([^"]*)"', svg).group(1)
    faces = [f.strip(" '\"&#x27;") for f in family.replace("&#x27;", "'").split(",")]
    assert faces[:2] == ["DejaVu Sans", "Steel CJK"], faces
    assert 'font-family: "Steel CJK"' in (ROOT / "book" / "site.css").read_text(encoding="utf-8")
