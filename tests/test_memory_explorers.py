"""Issue 28's mechanism explorers of chapter 6: the step timeline's peak and the sharding pictures' bytes per rank
are the memory ledger's (chipchain.memory.ledger), for every view the static site precomputes."""
import itertools
import math
import re

import pytest

from chipchain import loss_memory, memory, models, timeline, units, views
from chipchain.views import sharding


def _combinations(ex):
    names = [c.name for c in ex.controls]
    values = [list(c.options.values()) if hasattr(c, "options") else list(c.values) for c in ex.controls]
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def test_timeline_explorer_peak_is_the_ledger_less_unallocated_gradients_plus_the_loss_in_every_view():
    ex = views.memory.timeline_explorer()
    combos = _combinations(ex)
    assert len(combos) == 3 * 3 * 3 * 4                          # model × recomputation × loss chunks × ZeRO stage
    dp = views.memory.TIMELINE_DP
    for c in combos:
        tl = timeline.step_timeline(c["model"], dp=dp, zero=c["zero"], recompute=c["recompute"],
                                    loss_chunks=c["loss_chunks"])
        L = memory.ledger(c["model"], dp=dp, zero=c["zero"], recompute=c["recompute"])
        m = models.get(c["model"])
        loss = loss_memory.loss_peak_bytes(m.seq, m.vocab, c["loss_chunks"])
        # at the end of the forward pass the GPU holds the ledger (states + every activation) with no gradient yet
        # (zero_grad set them to None) and the loss buffers on top; at the end of the backward pass, the ledger's
        # states alone. The step's peak is the larger of the two (the backward is linear in between).
        want = max(L.total - L.components["gradients"] + loss, L.states)
        assert tl.peak == pytest.approx(want, rel=1e-12)          # sums in a different order: a few ulps
        html = ex.render(**c)
        assert f"Peak {units.fmt_bytes(tl.peak, 3)} at event {tl.peak_index + 1} of {len(tl.labels)}: {tl.peak_label}." in html
        if tl.bytes["logits and loss"][tl.peak_index] > 0:
            assert f"the ledger&#x27;s {units.fmt_bytes(L.total, 3)}" in html
        else:
            assert f"model states, {units.fmt_bytes(L.states, 3)}" in html


def test_timeline_explorer_default_is_the_chapters_figure():
    ex = views.memory.timeline_explorer()
    tl = timeline.step_timeline("Llama-3-8B", seq=8192, dp=8, zero=1, recompute="selective")
    assert f"Peak {units.fmt_bytes(tl.peak, 3)} at event 34 of 68: loss (end of forward)." in ex.render_current()


def test_more_chunks_never_raise_the_peak_and_the_peak_moves_to_the_backward_end_when_gradients_dominate():
    for zero in range(4):
        peaks = [timeline.step_timeline("Llama-2-13B", dp=8, zero=zero, recompute="full", loss_chunks=k).peak
                 for k in (1, 4, 16)]
        assert peaks[0] >= peaks[1] >= peaks[2]
    # full recomputation keeps only 2sbh per layer; with unsharded 16-bit gradients (ZeRO-0/1) they outweigh it
    tl = timeline.step_timeline("Llama-2-13B", dp=8, zero=0, recompute="full", loss_chunks=16)
    assert tl.peak_label == "backward layer 1"


@pytest.mark.parametrize("scheme", list(sharding.SCHEMES))
@pytest.mark.parametrize("n", [2, 4, 8])
def test_sharding_picture_bytes_are_the_ledgers(scheme, n):
    p = sharding.holdings(scheme, n)
    _, tp, zero = sharding.SCHEMES[scheme]
    L = (memory.ledger(sharding.MODEL, tp=n, sequence_parallel=True, recompute=sharding.RECOMPUTE) if tp else
         memory.ledger(sharding.MODEL, dp=n, zero=zero, recompute=sharding.RECOMPUTE))
    assert p.per_rank["weights"] == L.components["weights"]
    assert p.per_rank["gradients"] == L.components["gradients"]
    assert p.per_rank["optimizer states"] == L.components["master weights"] + L.components["optimizer moments"]
    assert p.per_rank["activations"] == L.components["activations"]
    assert math.isclose(sum(p.per_rank.values()), L.total, rel_tol=1e-15)
    html = views.sharding.sharding_explorer().render(scheme=scheme, n_ranks=n)
    shown = [str(units.fmt_bytes(v, 3)) for v in p.per_rank.values()]
    for text in shown:                                             # one cell per rank and part
        assert html.count(f">{text}<") == n * shown.count(text)
    assert f"each holds {units.fmt_bytes(L.total, 3)}" in html
    assert html.count("<svg") == 1 and "Lab L2" in html


@pytest.mark.parametrize("n", [2, 4, 8])
def test_sharding_shares_are_the_zero_papers_and_korthikantis(n):
    one = memory.ledger(sharding.MODEL, recompute=sharding.RECOMPUTE).components
    hold = {s: sharding.holdings(s, n).per_rank for s in sharding.SCHEMES}
    full = {"weights": one["weights"], "gradients": one["gradients"],
            "optimizer states": one["master weights"] + one["optimizer moments"], "activations": one["activations"]}
    assert hold["dp"] == full                                      # replicated: every rank holds the lot
    rel = 1e-12                                                    # Ψ/n computed once, not n shards summed
    assert hold["zero1"]["optimizer states"] == pytest.approx(full["optimizer states"] / n, rel=rel)
    assert hold["zero1"]["gradients"] == full["gradients"]
    assert hold["zero2"]["gradients"] == pytest.approx(full["gradients"] / n, rel=rel)
    assert hold["zero2"]["weights"] == full["weights"]
    assert hold["zero3"] == hold["fsdp"]                           # FSDP full sharding is ZeRO-3's bytes
    for k in ("weights", "gradients", "optimizer states"):
        assert hold["zero3"][k] == pytest.approx(full[k] / n, rel=rel)
        assert hold["tp"][k] == pytest.approx(full[k] / n, rel=rel)
    # with sequence parallelism and selective recomputation a layer keeps 34·sbh/t: every activation split t ways
    assert hold["tp"]["activations"] == pytest.approx(full["activations"] / n, rel=rel)
    totals = [sum(hold[s].values()) for s in ("zero3", "zero2", "zero1", "dp")]
    assert totals == sorted(totals)                                # ZeRO-3 ≤ ZeRO-2 ≤ ZeRO-1 ≤ none


def test_sharding_picture_fills_one_segment_per_rank_in_order():
    html = sharding.sharding_figure("zero3", 4)
    # each of the three sharded columns: four grey bars with one coloured segment, rank r's at position r
    seg = re.findall(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="[\d.]+" fill="(#[0-9A-F]{6})"/>', html)
    blue = [(float(x), float(y)) for x, y, _, c in seg if c == "#0072B2"]
    assert len(blue) == 4
    assert [x for x, _ in blue] == sorted(x for x, _ in blue) and [y for _, y in blue] == sorted(y for _, y in blue)
    with pytest.raises(KeyError, match="scheme"):
        sharding.holdings("zero4", 4)
