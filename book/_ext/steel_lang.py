"""The language switch (issue 25): every page of each edition links to the same page in the other, in the header.

The English edition is the site's root (``_build/html``) and the Chinese one sits under it (``_build/html/zh-CN``,
built by ``make book`` from the translated copy that ``tools/i18n.py build`` writes), so the other edition's copy of
a page is one relative URL away: ``zh-CN/<page>.html`` from the root, ``../<page>.html`` from ``zh-CN``, each prefixed
with the ``../`` that climbs out of the page's own folder. Which edition is being built is Sphinx's ``language``
(``en``; ``zh_CN`` in the translated copy's ``_config.yml``).

The switch is plain HTML in the article header (pydata-sphinx-theme's ``article_header_end``, before the theme's
buttons): a link per edition with ``lang`` and ``hreflang``, the current one marked ``aria-current`` — it works with
JavaScript off, at 1280 and 390 px. The page's ``<head>`` also names its other-language version (``<link
rel="alternate" hreflang>``). It is not part of the article, so the PDF and EPUB (tools/build_pdf.py prints the
articles) never show it; its stylesheet hides it in print as well.
"""
from __future__ import annotations

from html import escape
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Sphinx language → (BCP 47 tag, the edition's name in its own language, its folder under the site's root)
EDITIONS = {"en": ("en", "English", ""), "zh_CN": ("zh-CN", "简体中文", "zh-CN/")}
TEMPLATE = "steel-lang-switch.html"


def edition_of(language: str | None) -> str:
    return "zh_CN" if (language or "en").replace("-", "_").lower().startswith("zh") else "en"


def other_edition_url(pagename: str, language: str, suffix: str = ".html") -> str:
    """The relative URL of ``pagename`` in the other edition, from the page itself.

    >>> other_edition_url("chapters/01_h100", "en")
    '../zh-CN/chapters/01_h100.html'
    >>> other_edition_url("chapters/01_h100", "zh_CN")
    '../../chapters/01_h100.html'
    >>> other_edition_url("index", "en"), other_edition_url("index", "zh_CN")
    ('zh-CN/index.html', '../index.html')
    """
    up = "../" * pagename.count("/")
    here = EDITIONS[edition_of(language)][2]
    if here:                                        # from zh-CN/<page>: out of the page's folder, out of zh-CN
        return up + "../" * here.count("/") + pagename + suffix
    return up + EDITIONS["zh_CN"][2] + pagename + suffix


def switch_html(pagename: str, language: str, suffix: str = ".html") -> str:
    """The switch's markup: both editions, the current one as text, the other as a link to the same page."""
    current = edition_of(language)
    items = []
    for key, (tag, name, _) in EDITIONS.items():
        if key == current:
            items.append(f'<span class="steel-lang-current" lang="{tag}" aria-current="true">{escape(name)}</span>')
        else:
            url = escape(other_edition_url(pagename, language, suffix))
            title = "Read this page in English" if key == "en" else "阅读本页的简体中文版"
            items.append(f'<a class="steel-lang-link" href="{url}" hreflang="{tag}" lang="{tag}" rel="alternate" '
                         f'title="{title}">{escape(name)}</a>')
    label = "语言" if current == "zh_CN" else "Language"
    sep = '<span class="steel-lang-sep" aria-hidden="true">|</span>'
    return f'<nav class="steel-lang-switch" aria-label="{label}">{sep.join(items)}</nav>'


def _page(app, pagename, templatename, context, doctree) -> None:
    language = app.config.language or "en"
    suffix = context.get("file_suffix") or ".html"
    context["steel_lang_switch"] = switch_html(pagename, language, suffix)
    other = "en" if edition_of(language) == "zh_CN" else "zh_CN"
    context["metatags"] = context.get("metatags", "") + (
        f'\n<link rel="alternate" hreflang="{EDITIONS[other][0]}" '
        f'href="{escape(other_edition_url(pagename, language, suffix))}" />')
    items = context.get("theme_article_header_end")
    if isinstance(items, str):
        items = [i.strip() for i in items.split(",") if i.strip()]
    items = list(items or [])
    if TEMPLATE not in items:
        context["theme_article_header_end"] = [TEMPLATE, *items]


def _config(app, config) -> None:
    config.templates_path = [*config.templates_path, str(HERE / "templates")]
    config.html_static_path = [*config.html_static_path, str(HERE / "static")]


def setup(app):
    app.connect("config-inited", _config)
    app.connect("html-page-context", _page, priority=900)     # after the theme has prepared its header lists
    app.add_css_file("steel-lang.css")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
