"""The JupyterLite site (``make lite``, tools/build_lite.py): it builds offline, holds every chapter and a wheel of
chipchain, and that wheel installs and imports in a clean virtual environment.

Running the notebooks in Pyodide needs the Pyodide runtime from its CDN, which this machine cannot reach; what can be
checked offline is checked here. The whole file takes about 15 s (one lite build, one venv).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_lite  # noqa: E402

CHAPTERS = sorted(p.name for p in (ROOT / "chapters").glob("*.ipynb"))


def _lite_available() -> bool:
    return importlib.util.find_spec("jupyterlite_core") is not None and \
        importlib.util.find_spec("jupyterlite_pyodide_kernel") is not None


def _lite_pinned() -> bool:
    lock = (ROOT / "requirements.lock").read_text()
    return bool(re.search(r"^jupyterlite-core==", lock, re.M))


if not _lite_available():
    if _lite_pinned():  # the lock promises it: a missing package is an environment bug, not a reason to skip
        raise RuntimeError("requirements.lock pins jupyterlite-core but it is not installed: run `make` set-up again")
    pytest.skip("jupyterlite-core / jupyterlite-pyodide-kernel are not pinned in requirements.lock yet",
                allow_module_level=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build_lite.build(tmp_path_factory.mktemp("lite") / "_lite")


@pytest.fixture(scope="module")
def wheel(site) -> Path:
    wheels = sorted((site / "pypi").glob("chipchain-*-py3-none-any.whl"))
    assert len(wheels) == 1, f"expected one chipchain wheel in pypi/, found {wheels}"
    return wheels[0]


def test_there_are_chapters():
    assert CHAPTERS, "no chapters/*.ipynb to put in the lite site"


def test_site_has_the_lab_and_the_pyodide_kernel(site):
    assert (site / "index.html").exists() and (site / "lab" / "index.html").exists()
    config = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    extensions = {e["name"] for e in config["federated_extensions"]}
    assert "@jupyterlite/pyodide-kernel-extension" in extensions
    assert "@jupyter-widgets/jupyterlab-manager" in extensions, "the chapters' sliders need the widget manager"


def test_every_chapter_is_in_the_site(site):
    listed = json.loads((site / "api" / "contents" / "chapters" / "all.json").read_text())
    names = sorted(item["name"] for item in listed["content"] if item["type"] == "notebook")
    assert names == CHAPTERS


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_copy_installs_chipchain_then_matches_the_source(site, name):
    copy = json.loads((site / "files" / "chapters" / name).read_text(encoding="utf-8"))
    source = json.loads((ROOT / "chapters" / name).read_text(encoding="utf-8"))
    first = copy["cells"][0]
    assert first["cell_type"] == "code" and build_lite.INSTALL_TAG in first["metadata"]["tags"]
    src = "".join(first["source"])
    assert re.search(r"^%pip install .*\bchipchain\b", src, re.M), src
    assert copy["cells"][1:] == source["cells"], f"{name}: the lite copy must be the chapter itself, unchanged"


def test_install_line_parses_with_the_sites_own_piplite(site):
    """The install cell's %pip line is accepted by the piplite command-line parser shipped inside the site."""
    import ast
    import shlex
    from argparse import ArgumentParser

    pip_wheel = next((site / "extensions").rglob("piplite-*-py3-none-any.whl"))
    with zipfile.ZipFile(pip_wheel) as zf:
        tree = ast.parse(zf.read("piplite/cli.py").decode())
    func = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "_get_parser")
    namespace = {"ArgumentParser": ArgumentParser}
    exec(compile(ast.Module(body=[func], type_ignores=[]), "piplite/cli.py", "exec"), namespace)
    line = next(ln for ln in build_lite.INSTALL_SOURCE.splitlines() if ln.startswith("%pip "))
    args = namespace["_get_parser"]().parse_args(shlex.split(line[len("%pip "):]))
    assert args.action == "install" and "chipchain" in args.packages, args


def test_wheel_is_indexed_for_piplite_with_its_hash(site, wheel):
    index = json.loads((site / "pypi" / "all.json").read_text())
    releases = index["chipchain"]["releases"]
    files = [f for files in releases.values() for f in files]
    assert [f["filename"] for f in files] == [wheel.name]
    assert files[0]["digests"]["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()


def test_wheel_holds_every_module_and_data_file(wheel):
    package = ROOT / "lib" / "chipchain"
    with open(ROOT / "pyproject.toml", "rb") as f:   # the package data pyproject.toml promises
        patterns = tomllib.load(f)["tool"]["setuptools"]["package-data"]["chipchain"]
    files = {p for p in package.rglob("*.py") if "__pycache__" not in p.parts}
    files |= {p for pattern in patterns for p in package.glob(pattern)}
    expected = {f"chipchain/{p.relative_to(package).as_posix()}" for p in files}
    assert any("/data/" in name for name in expected), "no data files found to check"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert expected <= names, f"missing from the wheel: {sorted(expected - names)}"
    assert re.search(r"^Requires-Dist: numpy", metadata, re.M), "piplite must learn that chipchain needs numpy"


def test_wheel_installs_and_imports_in_a_clean_venv(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)], check=True)
    # Clean venv, no numpy: every module imports with the standard library alone (NumPy loads on first use, through
    # chipchain._lazy), and the packaged data files (the accelerator and model catalogs) travelled with the wheel.
    code = ("import sys, chipchain\n"
            "from chipchain import units, hardware, compute, models, roofline, walkthrough\n"
            "assert 'site-packages' in chipchain.__file__, chipchain.__file__\n"
            "assert 'numpy' not in sys.modules\n"
            "h = hardware.get('H100')\n"
            "flops = compute.training_flops(models.get('175B').params, 2e12)\n"
            "print(chipchain.__version__, h.name, h.peak_flops('bf16'), roofline.ridge_point('H100'),\n"
            "      f'{flops:.2g}', units.fmt_bandwidth(h.memory_bandwidth))\n")
    out = subprocess.run([str(py), "-I", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    version, name, bf16, ridge, flops, bw = out.stdout.split(maxsplit=5)
    assert (name, float(bf16), flops, bw.strip()) == ("H100-SXM", 989.4e12, "2.1e+24", "3.35 TB/s")
    assert float(ridge) == pytest.approx(989.4e12 / 3.35e12)
