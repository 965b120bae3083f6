"""chipchain.published_runs: the runs' own figures, one parameter count per run, and impossible utilisations refused."""
import pytest

from chipchain import published_runs as P


@pytest.mark.parametrize("name", [r.name for r in P.runs() if r.model is not None and r.params is not None])
def test_every_shape_gives_the_published_parameter_count(name):
    # one parameter count per run: the shape's params_from_shape equals the row's published count; the shape leaves
    # out biases and layer norms (BLOOM 176.234 B against 176.247 B, Nemotron-4 341.02 B against 341 B)
    r = P.get(name)
    assert r.model.params == pytest.approx(r.params, rel=1e-4)


def test_bloom_shape_has_tied_embeddings():
    # BigScience 2022 §3.2: BLOOM ties its input embedding to its output layer; untied, the shape would count
    # 250,880 × 14,336 = 3.6 B parameters twice (179.8 B instead of 176.2 B)
    m = P.get("bloom-176b").model
    assert m.tied_embeddings is True
    assert m.params / 1e9 == pytest.approx(176.2, rel=1e-3)


def test_shape_cell_grammar_refuses_a_bad_flag():
    with pytest.raises(ValueError):
        P._model("name=x;layers=2;hidden=64;heads=1;seq=8;tied_embeddings=yes")
