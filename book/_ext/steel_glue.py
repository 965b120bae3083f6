"""Glued percentages written as the book writes them.

myst-nb's ``{glue:text}`key:.1f`` formats a glued number with Python's format mini-language, and Python writes a
percentage with the sign against the number (``f"{0.5:.0%}"`` is ``50%``). The book's convention (book/conventions.md,
``chipchain.units.fmt_percent``) puts a space between them, ``50 %``, as the rest of the prose does. This extension
rewrites the text of every pasted glue value that ends in a percent sign, after the roles have run; the reader's
copies for JupyterLab and JupyterLite do the same (``tools/lab_book.py``).
"""
from __future__ import annotations

from docutils import nodes

from chipchain.units import space_percent        # the book's one rule for "50 %" (tables and reader copies too)


def _space_glued_percentages(app, doctree) -> None:
    for node in doctree.findall(nodes.inline):
        if "pasted-text" not in node.get("classes", []):
            continue
        for child in list(node.children):
            if isinstance(child, nodes.Text) and space_percent(child.astext()) != child.astext():
                node.replace(child, nodes.Text(space_percent(child.astext())))


def setup(app):
    app.connect("doctree-read", _space_glued_percentages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
