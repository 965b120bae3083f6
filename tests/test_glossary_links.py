"""Glossary links mean their term: every ``{term}`` role in the chapters and labs, checked with the linker's rules.

The automatic linker once sent "rounds to zero" and "two zeros in every four" to ZeRO and "a training run dies" to
the silicon die. ``tools/link_glossary.py`` now matches acronyms case-sensitively, whole words only, and consults a
stop list of idioms and other senses; ``--fix`` removes links that break those rules. This test

* fails on any link the rules reject (and names the file, phrase, term and reason);
* lists every linked phrase that is not the term's own name (plurals, a vendor's spelling) and fails on any not in
  ``ALLOWED_VARIANTS`` — so a reviewer sees each one, and a new variant needs a deliberate line here.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import link_glossary as lg  # noqa: E402

TERMS = lg.glossary_terms()

#: term -> linked phrases that are not its name but mean it. Phrases of terms without acronyms are compared in lower
#: case ("Tensor Cores" and "tensor cores" are one entry); acronyms as written.
ALLOWED_VARIANTS: dict[str, set[str]] = {
    "ASIC": {"ASICs"},
    "Accelerator": {"accelerators"},
    "All-reduce": {"all-reduces"},
    "Backward pass": {"backward passes"},
    "Batch size": {"batch sizes"},
    "CUDA core": {"CUDA cores"},
    "Checkpoint": {"checkpoints"},
    "Chiplet": {"chiplets"},
    "Cluster": {"clusters"},
    "Die": {"dies"},                        # "two dies" on one package, not a run that dies
    "FLOP": {"FLOPs"},
    "Fused kernel": {"fused kernels"},
    "GEMM": {"GEMMs"},
    "GPU": {"GPUs"},
    "GPU-hour": {"GPU-hours"},
    "Gradient": {"gradients"},
    "Interruption": {"interruptions"},
    "KV cache": {"KV caches"},
    "Matrix multiplication": {"matrix multiplications"},
    "Micro-batch": {"micro-batches"},
    "NVSwitch": {"NVSwitches"},
    "Node": {"nodes"},
    "Optimizer state": {"optimizer states"},
    "Parameter": {"parameters"},
    "Pipeline bubble": {"pipeline bubbles"},
    "Process node": {"process nodes"},
    "Rack": {"racks"},
    "Recipe": {"recipes"},
    "Scaling law": {"scaling laws"},
    "SM": {"SMs"},
    "SuperPOD": {"SuperPoD"},               # Huawei's spelling (Atlas 900 A3 SuperPoD); NVIDIA's is DGX SuperPOD
    "TPU": {"TPUs"},
    "Tensor Core": {"tensor cores"},
    "Token": {"tokens"},
    "Transistor": {"transistors"},
    "Warp": {"warps"},
}


def notebooks() -> list[Path]:
    return sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")) + sorted((ROOT / "labs").glob("*.ipynb"))


def markdown(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                     for c in nb["cells"] if c["cell_type"] == "markdown")


def variant_key(phrase: str, term: str) -> str | None:
    """The phrase as ALLOWED_VARIANTS spells it, or None when the phrase is the term's own name.

    >>> variant_key("cluster", "Cluster"), variant_key("model FLOPs utilisation", "Model FLOPs utilisation")
    (None, None)
    >>> variant_key("Tensor Cores", "Tensor Core")
    'tensor cores'
    >>> variant_key("GPUs", "GPU"), variant_key("zero", "ZeRO")
    ('GPUs', 'zero')
    """
    if lg.is_name(phrase, term):
        return None
    return phrase if lg.case_sensitive(term) else phrase.lower()


def links():
    for path in notebooks():
        for phrase, term, why in lg.link_audit(markdown(path), TERMS):
            yield path.relative_to(ROOT), phrase, term, why


def test_there_are_links_to_check():
    assert sum(1 for _ in links()) > 100


def test_every_link_means_its_term():
    wrong = [f"{path}: {phrase!r} → {term} ({why})" for path, phrase, term, why in links() if why]
    assert not wrong, ("glossary links that do not mean their term — run "
                       "`python tools/link_glossary.py --fix chapters/NN_x.ipynb`:\n  " + "\n  ".join(wrong))


def test_every_variant_is_listed():
    unlisted = sorted({f"{path}: {phrase!r} → {term}" for path, phrase, term, why in links()
                       if (key := variant_key(phrase, term)) and key not in ALLOWED_VARIANTS.get(term, set())})
    assert not unlisted, ("linked phrases that are not their term's name and not in ALLOWED_VARIANTS "
                          "(add them there if they mean the term, unlink them if not):\n  " + "\n  ".join(unlisted))


@pytest.mark.parametrize("before, phrase, after, term", [
    ("anything below about 6e-8 rounds to ", "zero", ". Gradients", "ZeRO"),
    ("2:4 structured sparsity — two ", "zeros", " in every four weights", "ZeRO"),
    ("if it is near ", "zero", " while idle GPUs exist", "ZeRO"),
    ("is the most common way a training run ", "dies", " before it starts.", "Die"),
    ("published large ", "dense", " run of the A100/H100 era", "Dense"),
    ("and 5 → 3 nm three more; ", "node", " names are labels, not dimensions", "Node"),
    ("carried a number from one setting into another or slipped an ", "exponent", ".", "Exponent"),
    ("KV caches shrink enough — latent attention, 4-bit caches, ", "sparse", " or windowed attention", "Sparse"),
])
def test_the_linker_refuses_other_senses(before, phrase, after, term):
    """The misreadings readers reported, and their kin: none of these means the glossary term."""
    assert lg.judge(term, phrase, before, after, TERMS)


@pytest.mark.parametrize("before, phrase, after, term", [
    ("weigh ", "ZeRO", " stages 1–3 and FSDP", "ZeRO"),
    ("80 GB of HBM3 stacked beside the ", "die", ", read at 3.35 TB/s", "Die"),
    ("while transistors grew 2.6× (two ", "dies", ", and the B200's figures are estimates)", "Die"),
    ("Against the H800's ", "dense", " BF16 peak of 989 TFLOP/s", "Dense"),
    ("fine-tuning a 7B model on one ", "node", " of 8 H100", "Node"),
    ("BF16 keeps FP32's 8 ", "exponent", " bits — its range", "Exponent"),
])
def test_the_linker_keeps_the_term(before, phrase, after, term):
    assert lg.judge(term, phrase, before, after, TERMS) is None


def test_fix_unlinks_and_relinks_where_the_term_is_meant():
    text = ("Below 6e-8 a value rounds to {term}`zero <ZeRO>`; a training run {term}`dies <Die>` early.\n\n"
            "Later, ZeRO stage 3 shards the parameters, and the die holds 80 billion transistors.")
    fixed = lg.link_texts([text], TERMS, fix=True)[0]
    assert "rounds to zero;" in fixed and "run dies early" in fixed
    assert "{term}`ZeRO` stage 3" in fixed and "the {term}`die <Die>` holds" in fixed
    assert lg.link_texts([fixed], TERMS, fix=True) == [fixed], "the linker is not idempotent"


def test_the_linker_examples_hold():
    """tools/ is outside the doctest run of `make test-unit`; its worked examples are run here."""
    import doctest

    result = doctest.testmod(lg, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 5 and result.failed == 0
