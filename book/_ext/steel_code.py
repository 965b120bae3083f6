"""The site shows results, code on request (reader's pass, finding 19; issue 28 item 3).

The rule, applied here and nowhere else: on the HTML site **every code cell's source is collapsed** under a visible
"Show code" control, except a cell tagged ``lesson`` — the code that *is* what the section teaches (a lab's
measurement, a simulation the prose walks through) — which stays open. Cells tagged ``remove-input`` or
``remove-cell`` stay removed; a cell already tagged ``hide-input`` is collapsed the same way. Outputs (tables,
figures, explorables) are never wrapped: only the source is, so opening or closing it moves what follows down or up
and changes nothing inside an explorable.

The notebooks themselves are not edited: the notebook, the JupyterLab copy (``tools/lab_book.py``) and JupyterLite
show every cell in full. The PDF and EPUB (``tools/build_pdf.py``) drop collapsed sources (``details.hide.above-input``),
so they print results and the lesson cells only.

The transform runs just before myst-nb's own ``HideInputCells`` (priority 199), which turns ``hide_mode`` into the
``<details>`` element; myst-nb's stylesheet styles it.
"""
from __future__ import annotations

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

LESSON_TAG = "lesson"
SHOW, HIDE = "Show code", "Hide code"


def collapsed(tags) -> bool:
    """Whether a code cell with these tags shows its source collapsed on the site.

    >>> collapsed([]), collapsed(["nbval-ignore-output"]), collapsed(["lesson"]), collapsed(["hide-input"])
    (True, True, False, True)
    """
    return LESSON_TAG not in set(tags or ())


class CollapseCode(SphinxPostTransform):
    """Set ``hide_mode = "input"`` on every code cell that is not a lesson (see the module's rule)."""

    default_priority = 198          # before myst_nb.sphinx_.HideInputCells (199)
    formats = ("html",)

    def _words(self) -> tuple[str, str]:
        """The control's words as the edition's configuration gives them (the zh-CN copy: 显示代码 / 隐藏代码)."""
        try:
            config = self.config
        except AttributeError:          # a bare docutils document (the unit tests): the English words
            return SHOW, HIDE
        return (getattr(config, "nb_code_prompt_show", None) or SHOW, getattr(config, "nb_code_prompt_hide", None)
                or HIDE)

    def run(self, **kwargs) -> None:
        for node in self.document.findall(nodes.container):
            if node.get("nb_element") != "cell_code" or not node.children:
                continue
            if node.children[0].get("nb_element") != "cell_code_source":
                continue            # remove-input: nothing to collapse
            tags = (node.get("cell_metadata") or {}).get("tags", [])
            mode = node.get("hide_mode")
            show, hide = self._words()
            if not collapsed(tags) or mode in ("all", "input", "input+output"):
                if mode in ("input", "input+output"):
                    node["prompt_show"], node["prompt_hide"] = show, hide
                continue
            node["hide_mode"] = "input+output" if mode == "output" else "input"
            node["prompt_show"], node["prompt_hide"] = show, hide
            node["classes"].append("cc-code-collapsed")


def setup(app):
    app.add_post_transform(CollapseCode)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
