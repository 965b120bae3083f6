"""chipchain.models and data/models.csv: parameter counts from shape against the published counts (Brown et al. 2020
Table 2.1; Touvron et al. 2023; Dubey et al. 2024 Table 3; Korthikanti et al. 2022 Table 3), KV bytes per token
against Zhao et al. 2025 Table 1, aliases, lookups, custom() validation and provenance."""
import csv
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import _data, models

CSV = Path(models.__file__).parent / "data" / "models.csv"


def _shape_params(m, positions=0):
    return models.params_from_shape(m.layers, m.hidden, m.vocab, m.heads, m.kv_heads, m.head_dim, m.ffn,
                                    m.mlp_matrices, m.tied_embeddings, positions=positions)


def test_llama2_70b_from_shape():
    # Touvron et al. 2023: 80 layers, h 8,192, 64 heads with 8 KV heads of 128, SwiGLU 28,672, V 32,000 → 68.98e9
    m = models.get("70B")
    assert round(_shape_params(m) / 1e9, 2) == 68.98 == m.params / 1e9


def test_gpt3_from_shape():
    # Brown et al. 2020 Table 2.1: 96 layers, d_model 12,288, 96 heads of 128, n_ctx 2,048, vocabulary 50,257
    # (tied embeddings, learned positions) → 174.6e9, published as "175.0B"
    m = models.get("175B")
    assert (m.layers, m.hidden, m.heads, m.head_dim, m.seq, m.vocab) == (96, 12288, 96, 128, 2048, 50257)
    assert _shape_params(m, positions=2048) / 1e9 == pytest.approx(174.6, abs=0.05)
    assert m.params == 175e9


@pytest.mark.parametrize("name,published", [("Llama-2-7B", 6.74e9), ("Llama-2-13B", 13.02e9),
                                            ("Llama-2-70B", 68.98e9), ("Llama-3-8B", 8.03e9),
                                            ("Llama-3-70B", 70.55e9), ("Llama-3.1-405B", 405.85e9)])
def test_published_counts_match_shape(name, published):
    # the counts the papers (and released configs) give, recomputed from each row's shape to 0.1 %
    m = models.get(name)
    assert m.params == published
    assert _shape_params(m) == pytest.approx(published, rel=1e-3)


def test_every_dense_row_is_consistent_with_its_shape():
    # within 1 %: the nominal counts (67B, 22B, 530B, 1T) round what the shape gives
    for m in models.all_models():
        if m.ffn is None or m.is_moe:
            continue
        positions = m.seq if m.family == "GPT-3" else 0
        assert _shape_params(m, positions) == pytest.approx(m.params, rel=0.01), m.name


def test_kv_bytes_per_token_zhao_table_1():
    # Zhao et al. 2025 Table 1: Llama 3.1 405B 516,096 bytes per token in BF16 (GQA, 8 KV heads of 128, 126 layers);
    # DeepSeek-V3 70,272 (MLA: 512 latent + 64 RoPE elements, 61 layers)
    l405, v3 = models.get("405B"), models.get("V3")
    assert 2 * l405.layers * l405.kv_heads * l405.head_dim * 2 == 516_096
    assert (v3.kv_lora_rank + v3.rope_head_dim) * v3.layers * 2 == 70_272
    inference = pytest.importorskip("chipchain.inference")
    if hasattr(inference, "model_kv_bytes_per_token"):
        assert inference.model_kv_bytes_per_token("405B") == 516_096
        assert inference.model_kv_bytes_per_token("V3") == 70_272


def test_book_aliases():
    # the book's short names resolve to the published rows
    expected = {"7B": "Llama-2-7B", "13B": "Llama-2-13B", "70B": "Llama-2-70B", "175B": "GPT-3-175B",
                "8B": "Llama-3-8B", "405B": "Llama-3.1-405B", "22B": "Korthikanti-22B", "530B": "MT-NLG-530B",
                "1T": "Korthikanti-1T", "V3": "DeepSeek-V3", "671B": "DeepSeek-V3"}
    for alias, name in expected.items():
        assert models.get(alias).name == name
    assert models.get("7B").params == 6.74e9 and models.get("13B").params == 13.02e9
    assert models.get("175B").vocab == 50257


def test_every_alias_resolves_to_its_record():
    for m in models.all_models():
        for name in (m.name, *m.aliases, m.name.lower(), m.name.replace("-", " ")):
            assert models.get(name) is m
        assert models.get(m) is m
    assert models.names() == [m.name for m in models.all_models()]


def test_unknown_name_lists_nearest():
    with pytest.raises(KeyError, match="nearest known names: .*Llama-2-70B"):
        models.get("Llama-2-71B")
    with pytest.raises(ValueError, match="model must be"):
        models.get(70e9)


def test_every_row_has_provenance():
    with open(CSV, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["name"] for r in rows] == models.names()
    for row in rows:
        assert row["source"].strip(), row["name"]
        assert row["checked"] in _data.CHECK_LEVELS, row["name"]


def test_moe_rows():
    v3 = models.get("DeepSeek-V3")
    assert v3.is_moe and v3.active_params == 37e9 and (v3.experts, v3.experts_active) == (256, 8)
    assert not models.get("175B").is_moe
    with pytest.raises(ValueError, match="DeepSeek-V3 has no 'ffn'"):
        v3.require("ffn")


def test_custom_validation():
    m = models.custom(layers=2, hidden=64, heads=4, seq=16, vocab=100)
    assert m.head_dim == 16 and m.kv_heads == 4 and m.params == models.params_from_shape(2, 64, 100, 4)
    assert models.custom(layers=2, hidden=64, heads=4, seq=16, params=1e6).params == 1e6
    cases = [(dict(layers=0, hidden=64, heads=4, seq=16), "layers"),
             (dict(layers=2, hidden=64, heads=5, seq=16), "divisible"),
             (dict(layers=2, hidden=64, heads=4, seq=16, kv_heads=3), "kv_heads"),
             (dict(layers=2, hidden=64, heads=4, seq=16, colour=1), "unknown shape fields: colour"),
             (dict(layers=2, hidden=64, heads=4, seq=16, experts=8), "together"),
             (dict(layers=2, hidden=64, heads=4, seq=16, experts=8, experts_active=9), "experts_active"),
             (dict(layers=2, hidden=64, heads=4, seq=16, attention="flash"), "attention"),
             (dict(layers=2, hidden=64, heads=4, seq=16, params=-1), "params"),
             (dict(layers=2, hidden=64, heads=4, seq=16, params=1e6, active_params=2e6), "exceed")]
    for kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            models.custom(**kwargs)


def test_params_from_shape_bad_input():
    with pytest.raises(ValueError, match="heads is required"):
        models.params_from_shape(2, 64, 100, head_dim=16)
    with pytest.raises(ValueError, match="vocab"):
        models.params_from_shape(2, 64, -1)
    with pytest.raises(ValueError, match="tied_embeddings"):
        models.params_from_shape(2, 64, 100, tied_embeddings=1)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 200), st.sampled_from([64, 128, 1024, 4096, 12288]), st.integers(0, 200_000))
def test_params_from_shape_classic_form(layers, hidden, vocab):
    # defaults (f = 4h, n_kv = n_h, tied embeddings) give 12·l·h² + V·h exactly (Narayanan et al. 2021, Eq. 2)
    got = models.params_from_shape(layers, hidden, vocab, tied_embeddings=True)
    assert got == 12 * layers * hidden**2 + vocab * hidden
    assert models.params_from_shape(layers + 1, hidden, vocab, tied_embeddings=True) > got
