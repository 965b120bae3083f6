"""Export controls as arithmetic: total processing performance, performance density, and the rules that use them.

* **Total processing performance** (TPP, US BIS, ECCN 3A090): ``TPP = 2 · MacTOPS · bit length`` of the operation,
  dense, at the precision that gives the highest value, summed over processing units. One multiply-accumulate is two
  operations, so ``2 · MacTOPS`` is the dense tera-operations per second the datasheets print:
  ``TPP = TOPS · bits``. 4,800 ≈ 300 dense TFLOPS at 16 bits ≈ 600 TOPS at 8 bits.
* **Performance density** ``PD = TPP / applicable die area`` in mm²; the 2023 rule's technical notes define the
  applicable die area (for a multi-die package, the logic dies counted together), which the catalog lacks for B200.
* **Rules as data** in ``data/export_rules.json``: each category is a list of alternative branches, each branch a
  list of conditions ``min ≤ metric < max`` (``min`` inclusive, ``max`` exclusive). :func:`classify` evaluates them
  and says in words which threshold caught a chip or why it passed. The rules are paraphrased from secondary notes
  that quote the Federal Register text (checked V2); the book says so.
* **I/O as the 2022 rule counts it**: the *aggregate* bidirectional rate over all inputs and outputs to chips other
  than volatile memory — link, host link (PCIe) and bridges, not NVLink alone (:func:`chip_io`). Where our sources
  give only part of it, the sum is a lower bound that can catch a chip but not clear it.

Bit length of TF32: the format carries 19 bits (1 sign, 8 exponent, 10 mantissa) in a 32-bit register; this module
counts 19 (:data:`BITS`), a reading of "bit length of the operation", not settled text. At 32 bits a part that runs
TF32 at its BF16 rate would double its TPP on paper (Trainium2's catalog row does, so even at 19 bits its highest
TPP comes from TF32); for NVIDIA parts, which run TF32 at half the BF16 rate, the choice changes nothing.

>>> round(tpp("H100")), round(tpp("A100"))
(15832, 4992)
>>> classify("A800", "2022-10").category, classify("A800", "2023-10").category
('not controlled', '3A090.a')
>>> classify("H100-PCIe", "2022-10").reason      # PCIe 128 GB/s + the NVLink bridge's 600 GB/s
'caught by 3A090: TPP 12,104 ≥ 4,800 and bidirectional I/O 728 GB/s ≥ 600'
"""
from __future__ import annotations

from . import placements as _placements_module, rules as _rules_module
from .placements import PartPlacement, Superpod, placements, shippable_parts, superpods
from .rules import (BITS, ChipIO, Classification, Rule, chip_io, classify, classify_numbers, performance_density,
                    performance_density_from, rule, rules, thresholds, timeline, tpp, tpp_from, tpp_precision)

__all__ = _rules_module.__all__ + _placements_module.__all__
