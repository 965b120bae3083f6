"""Budgets from the book standard that can be measured in a unit test."""
import subprocess
import sys

IMPORT_BUDGET_S = 0.3


def test_import_chipchain_is_fast():
    """`import chipchain` (and the core modules a chapter's first cell needs) stays under 0.3 s, best of 3."""
    code = ("import time; t = time.perf_counter(); import chipchain; "
            "from chipchain import units, hardware, compute, roofline, walkthrough; "
            "print(time.perf_counter() - t)")
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout) for _ in range(3)]
    assert min(times) < IMPORT_BUDGET_S, f"import took {min(times):.3f} s (budget {IMPORT_BUDGET_S} s)"


def test_import_does_not_pull_heavy_libraries():
    code = ("import sys, chipchain; from chipchain import units, hardware, compute, roofline, walkthrough, widgets; "
            "print(','.join(m for m in ('pandas', 'matplotlib', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"importing chipchain loaded {out}"
