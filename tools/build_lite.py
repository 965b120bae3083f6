"""Build the JupyterLite site (``make lite``): every chapter notebook plus a wheel of chipchain, runnable in a browser.

What it does, in order:

1. builds a pure-Python wheel of ``chipchain`` (``pip wheel --no-deps --no-build-isolation``, so no network is
   needed) from a clean copy of ``pyproject.toml`` and ``lib/``;
2. copies every ``chapters/*.ipynb`` into a staging folder and puts one extra cell at the top of each copy that
   installs the book's library in the browser (``%pip install chipchain``, served by this very site through piplite,
   plus pandas, matplotlib and ipywidgets, which Pyodide provides) — the chapters in the repository are not touched;
3. runs ``jupyter lite build`` (jupyterlite-core with the Pyodide kernel) with the notebooks as contents and the
   wheel as a piplite wheel, writing a static site to ``_lite/`` (or ``--output-dir``).

The site itself builds offline. In the reader's browser the Pyodide runtime is fetched from its CDN the first time a
notebook starts, so running the notebooks needs a network connection; reading them does not.

Run from the project root:  .venv/bin/python tools/build_lite.py [--output-dir _lite]
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"

#: the first cell of every notebook in the lite site; the tag lets a reader (and the tests) recognise it
INSTALL_TAG = "jupyterlite-install"
INSTALL_SOURCE = (
    "# JupyterLite only: install the book's library (a wheel served by this site) and what the chapters use.\n"
    "%pip install -q chipchain pandas matplotlib ipywidgets"
)


def build_wheel(dest: Path) -> Path:
    """Build the chipchain wheel into ``dest`` from a clean copy of the package and return its path."""
    with tempfile.TemporaryDirectory(prefix="chipchain-src-") as tmp:
        src = Path(tmp)
        shutil.copy2(ROOT / "pyproject.toml", src / "pyproject.toml")
        shutil.copytree(ROOT / "lib", src / "lib",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        readme = ROOT / "README.md"
        if readme.exists():
            shutil.copy2(readme, src / "README.md")
        else:  # pyproject.toml names README.md as the long description; the wheel needs a file there
            (src / "README.md").write_text("chipchain: the calculations behind *Steel and Silicon*.\n")
        dest.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                        "--wheel-dir", str(dest), str(src)], check=True)
    wheels = sorted(dest.glob("chipchain-*-py3-none-any.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one pure-Python chipchain wheel in {dest}, found {[w.name for w in wheels]}")
    return wheels[0]


def with_install_cell(notebook: dict) -> dict:
    """A copy of ``notebook`` whose first cell installs chipchain in the Pyodide kernel."""
    cell = {"cell_type": "code", "execution_count": None, "id": "jupyterlite-install",
            "metadata": {"tags": [INSTALL_TAG]}, "outputs": [], "source": INSTALL_SOURCE}
    nb = dict(notebook)
    nb["cells"] = [cell] + [c for c in notebook["cells"] if INSTALL_TAG not in c.get("metadata", {}).get("tags", [])]
    return nb


def stage_notebooks(dest: Path, chapters: Path = CHAPTERS) -> list[Path]:
    """Copy every notebook of ``chapters`` into ``dest``, each with the install cell first."""
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for path in sorted(chapters.glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        target = dest / path.name
        target.write_text(json.dumps(with_install_cell(nb), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        out.append(target)
    if not out:
        raise RuntimeError(f"no chapter notebooks in {chapters}")
    return out


def build(output_dir: Path, chapters: Path = CHAPTERS) -> Path:
    """Build the lite site from the notebooks in ``chapters`` into ``output_dir`` and return it."""
    output_dir = output_dir.resolve()
    with tempfile.TemporaryDirectory(prefix="chipchain-lite-") as tmp:
        stage = Path(tmp)
        wheel = build_wheel(stage / "wheels")
        stage_notebooks(stage / "content" / "chapters", chapters)
        (stage / "jupyter_lite_config.json").write_text(json.dumps({
            "LiteBuildConfig": {"contents": ["content"], "output_dir": str(output_dir),
                                "no_sourcemaps": True},
            "PipliteAddon": {"piplite_urls": [str(wheel)]},
        }, indent=1))
        if output_dir.exists():
            shutil.rmtree(output_dir)
        jupyter = Path(sys.executable).with_name("jupyter")
        subprocess.run([str(jupyter), "lite", "build", "--lite-dir", str(stage)], check=True, cwd=stage)
    return output_dir


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "_lite", help="where to write the site")
    args = parser.parse_args(argv)
    out = build(args.output_dir)
    print(f"build_lite: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
