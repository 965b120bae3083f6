"""Two page errors every reader's console showed (reader's pass, finding 30), removed at their source.

* sphinx-thebe, which Jupyter Book 1.x always loads, adds its inline configuration script (``const THEBE_JS_URL =
  …``, naming a CDN) on every ``env-before-read-docs``; a build that reads the environment twice emits it twice and
  the browser refuses the second ``const`` ("Identifier 'THEBE_JS_URL' has already been declared"). The book has no
  live-kernel buttons (``launch_buttons.thebe: false``; readers run chapters in the site's own JupyterLite), so the
  thebe scripts are dropped from every page: no page error, and no CDN address in the page.
* pydata-sphinx-theme's page template reads the colour mode from the template variable ``default_mode``, which Jupyter
  Book leaves undefined: the theme's script then reports "Got invalid theme mode" and falls back to ``auto``. The
  book sets ``auto`` itself.
"""
from __future__ import annotations


def _page(app, pagename, templatename, context, doctree) -> None:
    if not context.get("default_mode"):
        context["default_mode"] = "auto"
    scripts = context.get("script_files")
    if not scripts:
        return
    def thebe(script) -> bool:
        name = str(getattr(script, "filename", script) or "")
        body = (getattr(script, "attributes", None) or {}).get("body", "")
        return "THEBE_JS_URL" in body or name.endswith("sphinx-thebe.js") or "thebe@" in name

    scripts[:] = [s for s in scripts if not thebe(s)]


def setup(app):
    app.connect("html-page-context", _page)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
