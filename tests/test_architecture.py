"""The library's shape, checked by parsing its source: layers import one way, no cycles, sibling imports at module
top, heavy libraries lazy, equation modules small, and no catalog figure written into code.

Layers (BOOK-STANDARD §3): core → registries → equations → compositions → views. A module may import from its own
layer or below; nothing imports a composition or a view from below it. Fact tables belong to the registry and
equation layers: no view reads a data file (views ask a registry or an equation module), and each data file has one
parser, one module. The measurement layer (``labs``: the reader's machine timed) is imported by nothing.
"""
from __future__ import annotations

import ast
import csv
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib" / "chipchain"
CORE = {"_check", "units", "_data", "_lazy", "_i18n"}
REGISTRIES = {"hardware", "links", "models", "systems", "devices", "assumptions", "published_runs", "frameworks"}
COMPOSITIONS = {"deepseek", "walkthrough", "source_checks"}
VIEW_MODULES = {"widgets", "plotting", "notebook", "tables"}
HEAVY = {"pandas", "matplotlib", "ipywidgets"}
EQUATION_MAX_LINES = 420      # "about 400" (issue 12); a module past this holds more than one idea


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(LIB.rglob("*.py")):
        rel = p.relative_to(LIB).with_suffix("")
        parts = [x for x in rel.parts if x != "__init__"]
        if parts:
            out[".".join(parts)] = p
    return out


MODULES = _modules()


def layer(mod: str) -> int:
    top = mod.split(".")[0]
    if top in CORE:
        return 0
    if top in REGISTRIES:
        return 1
    if top in COMPOSITIONS:
        return 3
    if top == "views" or top in VIEW_MODULES:
        return 4
    return 2


def _imports(mod: str, path: Path):
    """(imported chipchain module, is_top_level, line) for every chipchain import in ``mod``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = mod.split(".")[:-1] if path.name != "__init__.py" else mod.split(".")
    top_level = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                prefix = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("chipchain"):
                prefix = node.module[len("chipchain"):].lstrip(".")
            else:
                continue
            for alias in node.names:
                cand = f"{prefix}.{alias.name}" if prefix else alias.name
                target = cand if cand in MODULES else prefix
                if target in MODULES:
                    yield target, id(node) in top_level, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("chipchain."):
                    yield alias.name[len("chipchain."):], id(node) in top_level, node.lineno


def _heavy_top_level(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        for n in names:
            if n.split(".")[0] in HEAVY:
                yield n, node.lineno


GRAPH = {m: sorted({t for t, _, _ in _imports(m, p) if t != m}) for m, p in MODULES.items()}


def test_every_module_is_in_a_known_layer():
    assert "walkthrough" in MODULES and "hardware" in MODULES


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_imports_go_one_way(mod):
    bad = [f"{mod} (layer {layer(mod)}) imports {t} (layer {layer(t)}) at line {line}"
           for t, _, line in _imports(mod, MODULES[mod]) if layer(t) > layer(mod)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("mod", sorted(REGISTRIES))
def test_every_registry_uses_the_one_registry_type(mod):
    # a registry owns its table through chipchain._data.Registry: one index, names, aliases, nearest-name KeyError
    # (published_runs rebuilt its index on every get before)
    assert "_data.Registry(" in MODULES[mod].read_text(encoding="utf-8"), f"{mod} does not use _data.Registry"


def test_nothing_imports_labs():
    # labs/ time the reader's machine (a measurement layer): no library module may depend on them
    bad = [f"{m} imports {t}" for m, targets in GRAPH.items() if not m.startswith("labs")
           for t in targets if t.split(".")[0] == "labs"]
    assert not bad, "\n".join(bad)


_READERS = {"rows", "json_data"}       # chipchain._data's two readers of data/


def _data_files_read(path: Path) -> set[str]:
    """The data files a module reads: the string argument of every ``_data.rows(...)`` / ``_data.json_data(...)``
    call (or the bare ``rows(...)`` inside ``_data`` itself)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name in _READERS:
                out.add(node.args[0].value)
    return out


READS = {m: _data_files_read(p) for m, p in MODULES.items() if m != "_data"}


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if layer(m) == 4))
def test_no_view_reads_a_data_file(mod):
    # a view asks a registry or an equation module for a table (issue 29: views/power.py and power.py both parsed
    # energy_facts.csv); it never opens data/ itself
    tree = ast.parse(MODULES[mod].read_text(encoding="utf-8"))
    opened = sorted(READS[mod])
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names if a.name in ("csv", "json")]
    pandas_reads = [n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr in ("read_csv", "read_json")]
    assert not (opened or imported or pandas_reads), f"{mod} reads {opened + imported + pandas_reads}"


def test_each_data_file_has_one_parser():
    readers = {}
    for m, files in READS.items():
        for f in files:
            readers.setdefault(f, set()).add(m)
    shared = {f: sorted(ms) for f, ms in readers.items() if len(ms) > 1}
    assert not shared, f"data files parsed by more than one module: {shared}"
    assert {"energy_facts.csv", "failure_logs.csv", "published_runs.csv"} <= set(readers)   # the scan sees them


def test_every_data_file_read_in_code_exists():
    data = {p.name for p in (LIB / "data").iterdir()}
    missing = sorted(f for files in READS.values() for f in files if f not in data)
    assert not missing, missing


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_sibling_imports_are_at_module_top(mod):
    if mod == "" or mod.endswith("__init__"):
        return
    hidden = [f"{mod}:{line} imports {t} inside a function" for t, top, line in _imports(mod, MODULES[mod])
              if not top]
    assert not hidden, "\n".join(hidden)


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_heavy_libraries_stay_lazy(mod):
    bad = [f"{mod}:{line} imports {n} at module top" for n, line in _heavy_top_level(MODULES[mod])]
    assert not bad, "\n".join(bad)


def test_no_import_cycle():
    seen, stack, cycles = {}, [], []

    def visit(m):
        seen[m] = "open"
        stack.append(m)
        for t in GRAPH.get(m, ()):
            if seen.get(t) == "open":
                cycles.append(" → ".join(stack[stack.index(t):] + [t]))
            elif t not in seen:
                visit(t)
        stack.pop()
        seen[m] = "done"

    for m in GRAPH:
        if m not in seen:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if layer(m) == 2))
def test_equation_modules_are_small(mod):
    n = len(MODULES[mod].read_text(encoding="utf-8").splitlines())
    assert n <= EQUATION_MAX_LINES, f"{mod} has {n} lines (limit {EQUATION_MAX_LINES}): split it by idea"


def _catalog_figures() -> set[float]:
    """Every SI figure of the accelerator and link catalogs above 1e6 (peaks, bandwidths, memory sizes)."""
    figures = set()
    scales = {"TFLOPS": 1e12, "TOPS": 1e12, "GBps": 1e9, "GBps_bidir": 1e9, "GB": 1e9}
    for name in ("accelerators.csv", "links.csv"):
        with open(LIB / "data" / name, encoding="utf-8") as f:
            for row in csv.DictReader(f):
                for col, text in row.items():
                    for suffix, scale in scales.items():
                        if col.endswith(suffix) and text.strip():
                            v = float(text) * scale
                            if v > 1e6:
                                figures.add(round(v, -3))
    return figures


def _code_constants(path: Path):
    """Numeric literals in code, not in docstrings (doctests may show catalog figures as worked examples)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float) and id(node) not in docstrings:
            yield float(node.value), node.lineno
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            l, r = node.left, node.right
            if isinstance(l, ast.Constant) and isinstance(r, ast.Constant) and \
                    type(l.value) in (int, float) and type(r.value) in (int, float):
                yield float(l.value) * float(r.value), node.lineno


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if layer(m) >= 2))
def test_no_catalog_figure_written_into_code(mod):
    figures = _catalog_figures()
    bad = [f"{mod}:{line}: {v:g} is a catalog figure; read it from hardware/links instead"
           for v, line in _code_constants(MODULES[mod]) if v > 1e6 and round(v, -3) in figures]
    assert not bad, "\n".join(bad)
