"""Glued percentages written as the book writes them.

myst-nb's ``{glue:text}`key:.1f`` formats a glued number with Python's format mini-language, and Python writes a
percentage with the sign against the number (``f"{0.5:.0%}"`` is ``50%``). The book's convention (book/conventions.md,
``chipchain.units.fmt_percent``) puts a space between them, ``50 %``, as the rest of the prose does. This extension
rewrites the text of every pasted glue value that ends in a percent sign, after the roles have run; the reader's
copies for JupyterLab and JupyterLite do the same (``tools/lab_book.py``).

The space is the book's, but a line must not break at it: "28" at the end of one line and "%" at the start of the
next reads as two things. Once a page is resolved, every "number %" in its prose (glued or written) is wrapped in an
inline ``cc-nobr`` (``white-space: nowrap`` in site.css and the EPUB's stylesheet); the text itself is unchanged.
"""
from __future__ import annotations

from docutils import nodes

from chipchain.units import PERCENT as _PERCENT, space_percent  # the book's rules for "50 %" (tables and reader copies too)


def _space_glued_percentages(app, doctree) -> None:
    for node in doctree.findall(nodes.inline):
        if "pasted-text" not in node.get("classes", []):
            continue
        for child in list(node.children):
            if isinstance(child, nodes.Text) and space_percent(child.astext()) != child.astext():
                node.replace(child, nodes.Text(space_percent(child.astext())))


#: where text is code, mathematics or markup of its own, it is left as it is
_VERBATIM = (nodes.literal, nodes.literal_block, nodes.math, nodes.math_block, nodes.raw, nodes.comment,
             nodes.FixedTextElement)


def _at(parent, child) -> int:
    """The index of ``child`` among ``parent``'s children by identity (docutils' ``index`` compares Text by value)."""
    return next(i for i, c in enumerate(parent.children) if c is child)


def _verbatim(node) -> bool:
    return any(isinstance(a, _VERBATIM) for a in _ancestors(node))


def _keep_glued_numbers_with_their_sign(doctree) -> None:
    """``{glue:text}`key:.0f` %``: the number is pasted in an inline of its own and " %" follows in the prose; the
    two go into one ``cc-nobr``."""
    for text in list(doctree.findall(nodes.Text)):
        parent, value = text.parent, str(text)
        if parent is None or not value.startswith(" %") or _verbatim(parent):
            continue
        i = _at(parent, text)
        before = parent.children[i - 1] if i else None
        if not (isinstance(before, nodes.inline) and "pasted-text" in before.get("classes", [])
                and before.astext()[-1:].isdigit()):
            continue
        del parent[i - 1:i + 1]
        whole = nodes.inline("", "", classes=["cc-nobr"])
        parent.insert(i - 1, [whole] + ([nodes.Text(value[2:])] if value[2:] else []))
        whole += [before, nodes.Text(" %")]


def _keep_percentages_whole(app, doctree, docname) -> None:
    _keep_glued_numbers_with_their_sign(doctree)
    for text in list(doctree.findall(nodes.Text)):
        parent = text.parent
        if parent is None or _verbatim(parent) or any("cc-nobr" in a.get("classes", []) for a in _ancestors(parent)):
            continue
        value = str(text)
        pieces, at = [], 0
        for m in _PERCENT.finditer(value):
            if m.start() > at:
                pieces.append(nodes.Text(value[at:m.start()]))
            pieces.append(nodes.inline(m.group(), m.group(), classes=["cc-nobr"]))
            at = m.end()
        if pieces:
            if at < len(value):
                pieces.append(nodes.Text(value[at:]))
            i = _at(parent, text)
            del parent[i]
            parent.insert(i, pieces)


def _ancestors(node):
    while node is not None:
        yield node
        node = node.parent


def setup(app):
    app.connect("doctree-read", _space_glued_percentages)
    app.connect("doctree-resolved", _keep_percentages_whole)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
