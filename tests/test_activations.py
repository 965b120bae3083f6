"""chipchain.activations pinned to Korthikanti et al. (2022): the per-layer figures it states for GPT-3 and MT-NLG,
its "5×" claim, the Table 3 configurations, and properties (more recomputation or sequence parallelism never
keeps more)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import activations as A
from chipchain import models

TABLE_3 = ("22B", "175B", "530B", "1T")      # Korthikanti et al. 2022, Table 3 (all at s = 2048, TP 8)


def test_gpt3_layer_without_parallelism():
    # Sec. 4.1: sbh(34 + 5as/h) with 5as/h = 80 for GPT-3 175B → 114·sbh ≈ 2.87 GB per layer per sequence
    g = models.get("175B")
    sbh = g.seq * g.hidden
    assert A.activation_bytes_per_layer(g.seq, 1, g.hidden, g.heads) == 114 * sbh
    # full recomputation keeps the layer input only: 2sbh (Table 2, last row)
    assert A.activation_bytes_per_layer(g.seq, 1, g.hidden, g.heads, recompute="full") == 2 * sbh
    # t = 1: tensor and sequence parallelism reduce to the unparallelised figure
    assert A.activation_bytes_per_layer(g.seq, 1, g.hidden, g.heads, tp=1, sequence_parallel=True) == 114 * sbh


def test_korthikanti_selective_savings_for_gpt3_and_mtnlg():
    # Sec. 4.3: 5as/h = 80 for GPT-3 and 64 for MT-NLG; selective recomputation saves 70 % and 65 % of the
    # activation memory (with tensor and sequence parallelism, t = 8)
    for name, saved in (("175B", 0.70), ("530B", 0.65)):
        m = models.get(name)
        full = A.activation_bytes_per_layer(m.seq, 1, m.hidden, m.heads, tp=8, sequence_parallel=True)
        sel = A.activation_bytes_per_layer(m.seq, 1, m.hidden, m.heads, tp=8, sequence_parallel=True,
                                           recompute="selective")
        assert 1 - sel / full == pytest.approx(saved, abs=0.005)


@pytest.mark.parametrize("name", TABLE_3)
def test_about_five_times_less_than_tensor_parallelism_alone(name):
    # abstract and Fig. 7: sequence parallelism + selective recomputation cut activation memory about 5× against
    # tensor parallelism alone
    m = models.get(name)
    tp_only = A.activation_bytes_per_layer(m.seq, 1, m.hidden, m.heads, tp=8)
    both = A.activation_bytes_per_layer(m.seq, 1, m.hidden, m.heads, tp=8, sequence_parallel=True,
                                        recompute="selective")
    assert 4.5 <= tp_only / both <= 6.5


def test_table_3_configurations_first_stage():
    # Table 3 (TP 8; PP 1, 8, 35, 64; micro-batch 1): the first stage holds L layers' worth, 34·sbh/t each with
    # SP + selective; the 1T model: 128 × 34 × 2048 × 25600 / 8 bytes ≈ 28.5 GB
    for name, pp in zip(TABLE_3, (1, 8, 35, 64)):
        m = models.get(name)
        got = A.activation_bytes_per_stage(m.seq, 1, m.hidden, m.heads, m.layers, pp=pp, tp=8,
                                           sequence_parallel=True, recompute="selective", microbatches=4 * pp)
        assert got == pytest.approx(m.layers * 34 * m.seq * m.hidden / 8)
    assert A.activation_bytes_per_stage(2048, 1, 25600, 160, 128, pp=64, tp=8, sequence_parallel=True,
                                        recompute="selective", microbatches=256) / 1e9 == pytest.approx(28.5, abs=0.1)


def test_interleaving_factor_and_few_microbatches():
    # Sec. 4.2.3: the interleaved schedule keeps (1 + (p − 1)/(p·v)) times more on the first stage
    base = A.activation_bytes_per_stage(2048, 1, 12288, 96, 96, pp=8, tp=8, microbatches=64)
    inter = A.activation_bytes_per_stage(2048, 1, 12288, 96, 96, pp=8, tp=8, microbatches=64, virtual_stages=2)
    assert inter / base == pytest.approx(1 + 7 / 16)
    few = A.activation_bytes_per_stage(2048, 1, 12288, 96, 96, pp=8, tp=8, microbatches=2)
    assert few / base == pytest.approx(2 / 8)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([512, 1024, 2048, 4096, 8192]), st.integers(1, 16), st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
       st.booleans())
def test_more_recompute_never_increases_memory(seq, batch, tp, sp):
    h, a = 8192, 64
    none, sel, full = (A.activation_bytes_per_layer(seq, batch, h, a, tp, sp, rc) for rc in A.RECOMPUTE)
    assert full <= sel <= none
    # sequence parallelism never increases memory either
    assert A.activation_bytes_per_layer(seq, batch, h, a, tp, True) <= A.activation_bytes_per_layer(seq, batch, h,
                                                                                                      a, tp, False)


def test_checkpoint_every_fourth_layer_saves_more_than_half():
    # seed 000 §7: keep every 4th layer → "> 50 %" of activation memory saved for ~33 % more compute
    g = models.get("175B")
    layer = A.activation_bytes_per_layer(g.seq, 1, g.hidden, g.heads)
    boundary = A.activation_bytes_per_layer(g.seq, 1, g.hidden, g.heads, recompute="full")
    kept = A.checkpointed_activation_bytes(g.layers, 4, layer, boundary)
    assert 1 - kept / (g.layers * layer) > 0.5
    assert kept == (24 * 2 + 4 * 114) * g.seq * g.hidden


def test_activation_bad_input():
    with pytest.raises(ValueError, match="recompute"):
        A.activation_bytes_per_layer(2048, 1, 12288, 96, recompute="some")
    with pytest.raises(ValueError, match="seq"):
        A.activation_bytes_per_layer(0, 1, 12288, 96)
    with pytest.raises(ValueError, match="sequence_parallel"):
        A.activation_bytes_per_layer(2048, 1, 12288, 96, sequence_parallel=1)
    with pytest.raises(ValueError, match="layers"):
        A.activation_bytes_per_stage(2048, 1, 12288, 96, 96, pp=5)
    with pytest.raises(ValueError, match="every"):
        A.checkpointed_activation_bytes(4, 8, 1.0, 1.0)
