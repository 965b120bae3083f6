"""The labs' deterministic facts, measured on PyTorch (CPU, gloo, local ranks): every collective's result is exact,
the bytes each rank holds are what PyTorch's sharding rules give, the saved activations differ from Korthikanti
et al.'s ledger only where the engine stores something else, and a resumed run is bit-identical exactly when the
whole state is restored. Machine-dependent results (times, α, β) are not asserted here; the notebooks show them.

Each launch starts a few fresh interpreters that import torch, so the launches are module fixtures, one each.
"""
from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from chipchain import activations, comms, memory
from chipchain.labs import collectives, resume, runner, saved, sharding

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow


# --- no torch needed: import cost and the fit ----------------------------------------------------------------

def test_the_labs_do_not_import_torch_until_they_run():
    code = ("import sys, chipchain, chipchain.labs.collectives, chipchain.labs.sharding, chipchain.labs.saved, "
            "chipchain.labs.resume; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@settings(max_examples=30, deadline=None)
@given(alpha=st.floats(1e-6, 1e-2), beta=st.floats(1e7, 1e12), n=st.integers(2, 1024),
       which=st.sampled_from(collectives.COLLECTIVES))
def test_the_fit_recovers_alpha_and_beta_from_an_exact_alpha_beta_machine(alpha, beta, n, which):
    sizes = [1e3, 1e5, 1e7, 1e9]
    cost = {"all_reduce": comms.ring_allreduce_time, "reduce_scatter": comms.reduce_scatter_time,
            "all_gather": comms.allgather_time}[which]
    f = collectives.fit_alpha_beta(sizes, [cost(m, n, beta, alpha) for m in sizes], n, which)
    assert f.alpha == pytest.approx(alpha, rel=1e-6) and f.beta == pytest.approx(beta, rel=1e-6)
    assert f.rms_error < 1e-9


def test_bus_bandwidth_is_nccl_tests_correction():
    # NCCL tests PERFORMANCE.md: busbw = algbw · 2(n−1)/n for all-reduce, (n−1)/n for all-gather. The lab measures
    # bytes and seconds and converts them with the library's one definition (chipchain.collectives), not its own.
    from chipchain import collectives as nccl

    assert not hasattr(collectives, "bus_bandwidth") and not hasattr(collectives, "algorithm_bandwidth")
    assert nccl.bus_bandwidth(nccl.algorithm_bandwidth(8e9, 1.0), 8) == pytest.approx(14e9)
    assert nccl.bus_bandwidth(nccl.algorithm_bandwidth(8e9, 1.0), 8, "all_gather") == pytest.approx(7e9)


@pytest.mark.parametrize("call,match", [
    (lambda: collectives.fit_alpha_beta([1e3], [1e-3], 4), "at least two"),
    (lambda: collectives.fit_alpha_beta([1e3, 1e6], [1e-3, -1], 4), "seconds"),
    (lambda: collectives.fit_alpha_beta([1e3, 1e6], [1e-3, 1e-3], 1), "n_ranks"),
    (lambda: collectives.fit_alpha_beta([1e3, 1e6], [2e-3, 1e-3], 4), "no bandwidth"),
    (lambda: collectives.fit_alpha_beta([1e3, 1e6], [1e-3, 2e-3], 4, "broadcast"), "collective"),
    (lambda: sharding.predicted_bytes(1000, 4, "zero9"), "strategy"),
    (lambda: sharding.exact_bytes((64, 10), 4, "ddp", rank=4), "rank"),
    (lambda: saved.saved_bytes("explicit", hidden=6, heads=4), "heads"),
    (lambda: resume.resume_single(steps=3, save_at=3), "save_at"),
    (lambda: runner.launch(lambda r, n: r, 2), "module-level"),
    (lambda: collectives.measure_groups(()), "rank_counts"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_the_korthikanti_terms_add_up_to_the_ledger():
    # Korthikanti et al. 2022 §4.1: 11sbh + 5as²b (attention) + 19sbh (MLP) + 4sbh (LayerNorms)
    for s, b, h, a in [(2048, 1, 12288, 96), (128, 2, 256, 4)]:
        assert sum(saved.korthikanti_terms(s, b, h, a).values()) == activations.activation_bytes_per_layer(s, b, h, a)


# --- collectives: every result exact -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def coll():
    return collectives.measure(2, sizes=[8, 4096, 1 << 20], repeats=1)


def test_every_collective_result_is_exact_on_every_rank(coll):
    assert coll.correct == {"all_reduce": True, "reduce_scatter": True, "all_gather": True}
    assert coll.nbytes == (8, 4096, 1 << 20)
    assert all(t > 0 for c in collectives.COLLECTIVES for t in coll.seconds[c])


# --- sharding: bytes per rank exactly as derived -----------------------------------------------------------

@pytest.fixture(scope="module")
def shard():
    return sharding.measure(4)


def test_every_rank_holds_the_bytes_pytorch_rules_give(shard):
    for strategy in sharding.STRATEGIES:
        for rank in range(4):
            assert shard.measured[rank][strategy] == shard.exact(strategy, rank), (strategy, rank)


def test_ddp_holds_20_psi_by_default_and_16_psi_with_bucket_views(shard):
    psi = shard.params
    assert sum(shard.measured[0]["ddp"].values()) == 20 * psi                 # the bucket copy: +4Ψ
    assert sum(shard.measured[0]["ddp-bucket-view"].values()) == 16 * psi     # fp32-adam recipe, 16 B/param
    assert shard.measured[0]["ddp-bucket-view"] == shard.predicted("ddp-bucket-view")
    assert memory.recipe("fp32-adam").total == 16


def test_zero1_shards_the_moments_whole_and_unevenly(shard):
    moments = [shard.measured[r]["zero1"]["moments"] for r in range(4)]
    assert sum(moments) == 8 * shard.params                                    # every moment held exactly once
    assert max(moments) > shard.predicted("zero1")["moments"] > min(moments)   # 8Ψ/N is only the average


def test_fsdp2_holds_a_quarter_plus_padding(shard):
    w = [shard.measured[r]["fsdp2"]["weights"] for r in range(4)]
    assert len(set(w)) == 1 and w[0] >= 4 * shard.params / 4                   # padded: equal on every rank
    pad = w[0] - 4 * shard.params / 4
    assert pad == 4 * (4 * 3 - 10) * (256 + 1) / 4                           # 10 rows → 3+3+3+1, padded to 12


# --- saved activations: the ledger, and where the engine differs -------------------------------------------

def test_explicit_layer_matches_the_ledger_except_dropout_masks_in_bf16():
    r = saved.saved_bytes("explicit", seq=64, batch=2, hidden=128, heads=4)
    masks = {"softmax dropout mask", "attention dropout mask", "MLP dropout mask"}
    for term, predicted, measured in r.terms():
        if term in masks:
            assert measured == 2 * predicted, term          # CPU dropout keeps the scaled mask in bf16: 2 B, not 1
        elif term != saved.STATISTICS:
            assert measured == predicted, term


def test_causal_masked_fill_saves_one_s_by_s_mask_and_fused_attention_saves_no_s_squared_tensor():
    s = 64
    causal = saved.saved_bytes("causal", seq=s, batch=2, hidden=128, heads=4)
    assert causal.measured["causal mask (masked_fill)"] == s * s               # one bool per (query, key)
    fused = saved.saved_bytes("fused", seq=s, batch=2, hidden=128, heads=4)
    assert "softmax output" not in fused.measured
    assert fused.measured["fused attention (Q, K, V, output)"] == 8 * s * 2 * 128   # Q, K, V, output: 2sbh each


# --- exact resume ------------------------------------------------------------------------------------------

def test_single_process_resume_is_bit_identical_only_with_the_whole_state():
    assert resume.resume_single().identical
    for left_out in resume.STATE:
        if left_out != "model":
            r = resume.resume_single(restore=tuple(p for p in resume.STATE if p != left_out))
            assert not r.identical, left_out


@pytest.fixture(scope="module")
def dist_resume():
    return resume.measure(4)


def test_fsdp2_with_dcp_and_ddp_without_bucket_rebuild_resume_bit_identically(dist_resume):
    assert dist_resume["fsdp2"].identical and dist_resume["fsdp2"].max_difference == 0
    assert dist_resume["ddp-no-rebuild"].identical


def test_default_ddp_resumes_with_rounding_differences_only(dist_resume):
    r = dist_resume["ddp"]
    assert not r.identical and 0 < r.max_difference < 1e-5            # summation order, not a lost state
