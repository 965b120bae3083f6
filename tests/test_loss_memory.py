"""chipchain.loss_memory, chipchain.offload and chipchain.timeline: the logits, offloading and the step's memory
timeline — against Liger Kernel's published logits size (Hsu et al. 2024), ZeRO-Offload's 4Ψ (Ren et al. 2021),
the ledger of chipchain.memory, and properties."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import activations, memory, models
from chipchain import loss_memory as LM
from chipchain import offload as OF
from chipchain import timeline as TL


def test_liger_kernels_logits_example():
    # Hsu et al. 2024 (Liger Kernel): batch 8 × sequence 4,096 with a 256k vocabulary → "a 16.8 GB logit tensor"
    assert LM.logits_bytes(8 * 4096, 256000) / 1e9 == pytest.approx(16.8, abs=0.05)


@given(st.integers(1, 10**6), st.integers(1, 300_000), st.integers(1, 1024))
def test_chunking_divides_the_loss_peak(tokens, vocab, chunks):
    if chunks > tokens:
        return
    one = LM.loss_peak_bytes(tokens, vocab)
    assert LM.loss_peak_bytes(tokens, vocab, chunks) == pytest.approx(one / chunks)
    assert one == pytest.approx(LM.logits_bytes(tokens, vocab, LM.LOSS_BYTES_PER_LOGIT))


def test_loss_peak_array_of_chunks():
    got = LM.loss_peak_bytes(8192, 128256, np.array([1, 2, 4]))
    assert got.tolist() == pytest.approx([8192 * 128256 * 10 / c for c in (1, 2, 4)])


def test_zero_offload_moves_4_psi_bytes():
    # Ren et al. 2021 (ZeRO-Offload), Sec. 3: fp16 gradients to the CPU and fp16 parameters back, 4M in total
    assert OF.offload_pcie_bytes(10e9) == 4 * 10e9
    assert OF.offload_pcie_bytes(10e9, 8) == pytest.approx(4 * 10e9 / 8)
    assert OF.offload_nvme_bytes(10e9) == 2 * memory.recipe("mixed-adam").optimizer * 10e9


@given(st.floats(1e12, 5e15), st.floats(0.05, 1.0), st.floats(1e9, 2e11), st.integers(1, 10**6))
def test_offload_break_even_is_where_transfer_equals_compute(peak, mfu, bw, n):
    t = OF.offload_break_even_tokens(peak, mfu, bw, n)
    params = 7e9
    compute = 6 * params * t / (peak * mfu)
    assert OF.offload_transfer_seconds(params, bw, n) == pytest.approx(compute, rel=1e-9)


@pytest.mark.parametrize("model", ["7B", "Llama-3-8B", "175B"])
def test_timeline_peak_is_states_plus_all_activations_plus_loss(model):
    m = models.get(model)
    tl = TL.step_timeline(model, dp=8, zero=1, recompute="selective", seq=4096)
    states = memory.sharded_state_breakdown(m.params, 8, 1, "mixed-adam")
    layer = memory.layer_activation_bytes(m, seq=4096, recompute="selective")      # the ledger's per-layer count
    forward = sum(states.values()) - states["gradients"] + m.layers * layer + LM.loss_peak_bytes(4096, m.vocab)
    # the peak is the end of the forward pass, unless the unsharded gradients outweigh activations and loss
    assert tl.peak == pytest.approx(max(forward, sum(states.values())))
    assert tl.peak_label == ("loss (end of forward)" if forward >= sum(states.values()) else "backward layer 1")
    # at the optimizer step the GPU holds exactly the ledger's model states
    assert tl.totals[tl.labels.index("optimizer step")] == pytest.approx(sum(states.values()))


def test_timeline_shape_and_monotone_phases():
    tl = TL.step_timeline("7B", tp=2, sequence_parallel=True, loss_chunks=8)
    acts = tl.bytes["activations"]
    i = tl.labels.index("loss (end of forward)")
    assert all(a <= b for a, b in zip(acts[:i], acts[1:i + 1]))             # forward: activations only grow
    assert all(a >= b for a, b in zip(acts[i:-2], acts[i + 1:-1]))          # backward: they are freed
    grads = tl.bytes["gradients"]
    assert all(a <= b for a, b in zip(grads[i:-1], grads[i + 1:-1]))        # gradients appear in the backward pass
    assert acts[-1] == 0 and grads[-1] == 0 and set(tl.phases) == {"forward", "backward", "optimizer"}
    assert "peak" in str(tl)


@pytest.mark.parametrize("call", [
    lambda: LM.logits_bytes(0, 1000), lambda: LM.logits_bytes(10, 0), lambda: LM.loss_peak_bytes(10, 100, 11),
    lambda: LM.loss_peak_bytes(10, 100, 0), lambda: OF.offload_pcie_bytes(-1),
    lambda: OF.offload_break_even_tokens(1e15, 1.5, 1e9), lambda: OF.offload_transfer_seconds(1e9, 0),
    lambda: TL.step_timeline("7B", zero=5, dp=8), lambda: TL.step_timeline("7B", loss_chunks=0)])
def test_bad_input_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_model_is_a_key_error():
    with pytest.raises(KeyError):
        TL.step_timeline("8B-llama")
