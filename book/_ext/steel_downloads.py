"""The whole book as PDF and EPUB, offered on every page: the top bar and the page's download menu.

``tools/build_pdf.py`` (run by ``make book`` after the site build) writes ``steel-and-silicon.pdf`` and
``steel-and-silicon.epub`` at the root of each edition's site (``_build/html`` and ``_build/html/<lang>``); the links
here are relative to that root, so the same build serves any edition. sphinx-book-theme builds its header buttons in
``html-page-context`` at priority 501; this runs after it.
"""
from __future__ import annotations

BOOK = "steel-and-silicon"
#: the buttons' words per edition (Sphinx's ``language``)
TEXT = {
    "en": {"pdf": "Book (.pdf)", "epub": "Book (.epub)", "pdf_tip": "Download the whole book as PDF",
           "epub_tip": "Download the whole book as EPUB", "group": "Download the book",
           "bar": "The whole book as PDF (EPUB in the download menu)"},
    "zh_CN": {"pdf": "全书 (.pdf)", "epub": "全书 (.epub)", "pdf_tip": "下载全书 PDF", "epub_tip": "下载全书 EPUB",
              "group": "下载本书", "bar": "全书 PDF（EPUB 见下载菜单）"},
}


def _add_book_downloads(app, pagename, templatename, context, doctree) -> None:
    buttons = context.get("header_buttons")
    pathto = context.get("pathto")
    if buttons is None or pathto is None:
        return
    pdf, epub = pathto(f"{BOOK}.pdf", 1), pathto(f"{BOOK}.epub", 1)
    t = TEXT["zh_CN" if (app.config.language or "en").startswith("zh") else "en"]
    book_links = [
        {"type": "link", "url": pdf, "text": t["pdf"], "icon": "fas fa-book",
         "tooltip": t["pdf_tip"], "label": "download-book-pdf-button"},
        {"type": "link", "url": epub, "text": t["epub"], "icon": "fas fa-book-open",
         "tooltip": t["epub_tip"], "label": "download-book-epub-button"},
    ]
    for group in buttons:
        if group.get("label") == "download-buttons":
            group["buttons"].extend(book_links)
            break
    else:
        buttons.insert(0, {"type": "group", "tooltip": t["group"], "icon": "fas fa-download",
                           "buttons": book_links, "label": "download-buttons"})
    # the top bar: one button straight to the PDF
    buttons.insert(0, {"type": "link", "url": pdf, "icon": "fas fa-file-pdf", "text": "",
                       "tooltip": t["bar"],
                       "label": "book-pdf-button"})


def setup(app):
    app.connect("html-page-context", _add_book_downloads, priority=502)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
