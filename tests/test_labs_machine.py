"""chipchain.labs.machine: the reader's CPU measured (chapter 1's roofline of this machine)."""
from __future__ import annotations

import pytest

from chipchain import roofline
from chipchain.labs import machine


def test_measurements_are_positive_and_plausible():
    # Wall-clock measurements of this machine: best of 5, and lower bounds a 2-core machine meets even with ten
    # other processes competing (an exploring run at load average 11 measured 9 × 10⁷ FLOP/s for a 128 matmul);
    # below them the measurement itself is broken. Above: far beyond any CPU.
    assert 1e7 < machine.measure_matmul(128, repeats=5) < 1e14
    assert 1e7 < machine.measure_triad(100_000, repeats=5) < 1e13


def test_measurements_left_the_equation_module():
    # an equation module holds no machine-dependent timing (issue 29): the measurements live in the layer
    # nothing imports
    assert not hasattr(roofline, "measure_matmul") and not hasattr(roofline, "measure_triad")


@pytest.mark.parametrize("call, arg", [(lambda: machine.measure_matmul(8), "n"),
                                       (lambda: machine.measure_triad(10), "n"),
                                       (lambda: machine.measure_matmul(64, repeats=0), "repeats")])
def test_bad_sizes_are_refused_by_name(call, arg):
    with pytest.raises(ValueError, match=arg):
        call()
