"""Copy the JavaScript and fonts the built site serves itself from node_modules into _site_assets/.

The site must load nothing from a CDN. ``npm ci`` installs the pinned packages (package-lock.json); this script
copies only what the pages need (about 6 MB instead of the packages' 40 MB) into ``_site_assets/``, which Sphinx
copies into ``_build/html/_static/`` (``html_static_path`` in _config.yml). The folder is not called ``_static``
because Jupyter Book 1 adds every file of a root ``_static`` folder to every page.

Run from the project root:  python tools/vendor_assets.py
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / "node_modules"
OUT = ROOT / "_site_assets"

SHIM = r"""/* Loaded before require.js and the widget manager (see tools/vendor_assets.py).
 * 1. Point RequireJS, and the manager's asset path, at the locally served html-manager so its CSS fonts resolve
 *    on this site, not on a CDN or beside the page.
 * 2. The widget library calls the MathJax 2 API (MathJax.Hub.Queue) whenever window.MathJax exists; under
 *    MathJax 3 that throws once per widget. Give MathJax 3 a Hub.Queue that typesets instead. */
(function () {
  var here = document.currentScript.src.replace(/[^\/]*$/, "");
  window.require = { paths: { "@jupyter-widgets/html-manager/dist": here + "widgets",
                              "@jupyter-widgets": here + "widgets" } };
  // Fonts the manager loads lazily (icons in buttons) resolve against this path, not against the page's folder.
  window.__jupyter_widgets_assets_path__ = here + "widgets/";
  function shim() {
    var mj = window.MathJax;
    if (mj && mj.typesetPromise && !mj.Hub) {
      mj.Hub = { Queue: function () { return mj.typesetPromise(); } };
      return true;
    }
    return false;
  }
  var tries = 0;
  var timer = setInterval(function () { if (shim() || ++tries > 200) clearInterval(timer); }, 25);
})();
"""


def copy(src: Path, dst: Path) -> None:
    if not src.exists():
        sys.exit(f"vendor_assets: {src.relative_to(ROOT)} is missing; run `npm ci` first")
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dst)


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    manager = NODE / "@jupyter-widgets" / "html-manager" / "dist"
    copy(NODE / "requirejs" / "require.js", OUT / "require.js")
    copy(manager / "embed-amd.js", OUT / "widgets" / "embed-amd.js")
    for font in manager.glob("*.woff2"):
        copy(font, OUT / "widgets" / font.name)
    mathjax = NODE / "mathjax" / "es5"
    copy(mathjax / "tex-mml-chtml.js", OUT / "mathjax" / "tex-mml-chtml.js")
    copy(mathjax / "output" / "chtml" / "fonts" / "woff-v2", OUT / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2")
    copy(mathjax / "input" / "tex" / "extensions", OUT / "mathjax" / "input" / "tex" / "extensions")
    (OUT / "widgets_shim.js").write_text(SHIM, encoding="utf-8")
    copy(ROOT / "book" / "site.css", OUT / "site.css")
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"vendor_assets: {size / 1e6:.1f} MB in {OUT.relative_to(ROOT)}/")


if __name__ == "__main__":
    main()
