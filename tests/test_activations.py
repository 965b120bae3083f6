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
    with pytest.raises(ValueError, match=r"pp × virtual_stages \(97 × 1\) exceeds layers \(96\)"):
        A.activation_bytes_per_stage(2048, 1, 12288, 96, 96, pp=97)
    with pytest.raises(ValueError, match="every"):
        A.checkpointed_activation_bytes(4, 8, 1.0, 1.0)


# --- divisibility: a plan that cannot exist raises, naming the argument (issue 13: tp = 7 with 96 heads) ------------

@settings(max_examples=80, deadline=None)
@given(tp=st.integers(1, 130), pp=st.integers(1, 100))
def test_property_tp_and_pp_must_divide_the_model(tp, pp):
    g = models.get("175B")                                    # 96 heads, 12,288 hidden, 96 layers
    if g.heads % tp or g.hidden % tp:
        with pytest.raises(ValueError, match=rf"^tp \({tp}\) must divide"):
            A.activation_bytes_per_layer(g.seq, 1, g.hidden, g.heads, tp=tp)
    else:
        assert A.activation_bytes_per_layer(g.seq, 1, g.hidden, g.heads, tp=tp) > 0
    if pp > g.layers:
        with pytest.raises(ValueError, match=rf"^pp × virtual_stages \({pp} × 1\) exceeds layers"):
            A.activation_bytes_per_stage(g.seq, 1, g.hidden, g.heads, g.layers, pp=pp)
    else:                      # uneven stages are allowed: the first holds ⌈L/p⌉ layers (Megatron-LM's split)
        whole = A.activation_bytes_per_stage(g.seq, 1, g.hidden, g.heads, g.layers, pp=pp, microbatches=1)
        one = A.activation_bytes_per_layer(g.seq, 1, g.hidden, g.heads)
        assert whole == pytest.approx(one * (-(-g.layers // pp) if g.layers % pp else g.layers / pp), rel=1e-12)


def test_activation_table_refuses_tp_7_for_96_heads():
    from chipchain import views

    with pytest.raises(ValueError, match=r"tp \(7\) must divide heads \(96\)"):
        views.memory.activation_table("175B", tp=7)


@settings(max_examples=80, deadline=None)
@given(seq=st.integers(1, 2**20), batch=st.integers(1, 4096), layers=st.sampled_from([1, 24, 96, 126]),
       pp=st.sampled_from([1, 2, 3, 6]), m=st.integers(1, 10**6), v=st.integers(1, 8))
def test_property_stage_activations_bounded_and_finite(seq, batch, layers, pp, m, v):
    """The first stage never holds more than min(p, m) micro-batches of its L/p layers × the interleaving factor;
    finite for million-token sequences and million-micro-batch schedules."""
    if pp * v > layers:
        with pytest.raises(ValueError, match="exceeds layers"):
            A.activation_bytes_per_stage(seq, batch, 12288, 96, layers, pp=pp, microbatches=m, virtual_stages=v)
        return
    per_layer = A.activation_bytes_per_layer(seq, batch, 12288, 96)
    got = A.activation_bytes_per_stage(seq, batch, 12288, 96, layers, pp=pp, microbatches=m, virtual_stages=v)
    first = -(-layers // (pp * v)) * v                  # the first stage's layers, ⌈L/(p·v)⌉ chunks of v
    assert 0 < got <= per_layer * first * min(pp, m) * 2 and got == got


@settings(max_examples=80, deadline=None)
@given(layers=st.integers(1, 1000), every=st.integers(1, 1000), layer=st.floats(0, 1e12), boundary=st.floats(0, 1e12))
def test_property_checkpointing_keeps_boundaries_plus_one_segment(layers, every, layer, boundary):
    if every > layers:
        with pytest.raises(ValueError, match="every"):
            A.checkpointed_activation_bytes(layers, every, layer, boundary)
        return
    kept = A.checkpointed_activation_bytes(layers, every, layer, boundary)
    assert kept == pytest.approx(-(-layers // every) * boundary + every * layer)
    if boundary <= layer and every == 1:                      # keeping every layer's input + one layer ≤ L+1 layers
        assert kept <= (layers + 1) * layer + 1e-6
