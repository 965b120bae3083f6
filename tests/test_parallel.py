"""chipchain.parallel: validation, placement, bubbles (Narayanan et al. 2021), traffic, and the vectorised search."""
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipchain import comms, memory
from chipchain import parallel as P

SEED_PLAN = P.Plan(tp=8, pp=16, dp=8, zero=1, microbatches=64, sequence_parallel=True, recompute="selective")


# --- validation and placement ------------------------------------------------------------------------------------

def test_seed_plan_is_valid_and_placed_as_the_source_says():
    assert P.validate(SEED_PLAN, "175B", 1024) == ()
    where = P.placement(SEED_PLAN)
    # seed 000 ④: TP 8 inside a node on NVLink; 16 pipeline stages across nodes; 8 data replicas outermost
    assert (where["tp"].scope, where["pp"].scope, where["dp"].scope) == ("intra-node", "inter-node", "inter-node")
    assert (where["tp"].stride, where["pp"].stride, where["dp"].stride) == (1, 8, 128)


@pytest.mark.parametrize("plan, n, match", [
    (P.Plan(tp=8, pp=16, dp=4), 1024, "512, but the cluster has 1024"),
    (P.Plan(tp=5, pp=1, dp=1), 5, "divide the 96 attention heads"),
    (P.Plan(tp=8, pp=5, dp=1), 40, "must divide the 96"),
    (P.Plan(tp=8, pp=1, dp=1, virtual_stages=2), 8, "needs pipeline parallelism"),
    (P.Plan(tp=8, pp=4, dp=1, virtual_stages=2, microbatches=6), 32, "multiple of pp"),
    (P.Plan(tp=8, pp=1, dp=4, ep=4), 32, "mixture-of-experts"),
])
def test_invalid_plans_raise_clear_errors(plan, n, match):
    with pytest.raises(ValueError, match=match):
        P.validate(plan, "175B", n)


def test_warnings():
    w = P.validate(P.Plan(tp=16, pp=8, dp=8, microbatches=4, zero=2), "175B", 1024)
    assert any("spans 2 nodes" in x for x in w)
    assert any("never fills" in x for x in w)
    assert any("ZeRO-2 with pipeline" in x for x in w)
    assert any("shards nothing" in x for x in P.validate(P.Plan(tp=8, zero=1), "175B", 8))
    assert P.placement(P.Plan(tp=16, pp=8, dp=8))["tp"].scope == "inter-node"


MOE = memory.Model("moe-test", 50e9, 32, 4096, 32, 4096, 32000, "a made-up MoE shape for tests", experts=64,
                   top_k=2)


def test_expert_parallelism():
    plan = P.Plan(tp=8, pp=1, dp=16, ep=8, microbatches=4)
    assert P.validate(plan, MOE, 128) == ()
    assert P.placement(plan)["ep"].scope == "inter-node"
    row = {r.kind: r for r in P.communication(plan, MOE, "H100")}["EP all-to-all"]
    msg = 2 * 4096 * 4096 * 2                                 # b·s·h 16-bit elements × top_k = 2
    assert row.count == 4 * 32 * 4 and row.message == msg
    assert row.seconds == pytest.approx(row.count * comms.alltoall_time(msg, 8, 50e9, 5e-6))
    with pytest.raises(ValueError, match="divide the 64 experts"):
        P.validate(P.Plan(tp=8, dp=24, ep=24), MOE, 192)
    with pytest.raises(ValueError, match="must divide dp"):
        P.validate(P.Plan(tp=8, dp=4, ep=8), MOE, 32)
    with pytest.raises(ValueError, match="top_k"):
        memory.Model("bad", 1e9, 2, 64, 4, 64, experts=8, top_k=9)


def test_plan_bad_input():
    with pytest.raises(ValueError, match="zero"):
        P.Plan(zero=4)
    with pytest.raises(ValueError, match="tp"):
        P.Plan(tp=0)
    with pytest.raises(ValueError, match="recompute"):
        P.Plan(recompute="half")
    with pytest.raises(ValueError, match="plan"):
        P.validate("8x16x8", "175B")


# --- bubble -------------------------------------------------------------------------------------------------------

def test_bubble_matches_narayanan():
    # Narayanan et al. 2021 §2.2: bubble/ideal = (p − 1)/m; interleaved: (p − 1)/(v·m)
    assert P.bubble_fraction(16, 64) == pytest.approx(15 / 64)
    assert P.bubble_fraction(8, 32, 4) == pytest.approx(7 / 128)
    assert P.idle_share(16, 64) == pytest.approx(15 / 79)
    assert P.bubble_fraction(1, 1) == 0 and P.idle_share(1, 7) == 0


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 128), st.integers(1, 1024), st.integers(1, 8))
def test_bubble_properties(p, m, v):
    b, idle = P.bubble_fraction(p, m, v), P.idle_share(p, m, v)
    assert 0 <= idle < 1 and idle <= b + 1e-15
    assert idle == pytest.approx(b / (1 + b))                  # the two views of the same bubble
    assert P.bubble_fraction(p, m + 1, v) <= b                 # more micro-batches never enlarge the bubble


# --- communication ----------------------------------------------------------------------------------------------

def test_communication_of_the_seed_plan():
    rows = {r.kind: r for r in P.communication(SEED_PLAN, "175B", "A100")}
    act = 2 * 2048 * 12288                                     # b·s·h 16-bit elements, b = 1
    tp = rows["TP all-reduce"]
    assert tp.link == "NVLink3" and tp.count == 4 * 6 * 64     # 4 per layer × 96/16 layers × 64 micro-batches
    assert tp.seconds == pytest.approx(tp.count * comms.ring_allreduce_time(act, 8, 300e9, 3e-6))
    pp = rows["PP send/recv"]
    assert pp.link == "IB-HDR" and pp.count == 128 and pp.message == pytest.approx(act / 8)
    dp = rows["DP ZeRO-1 reduce-scatter + gather"]
    grads = 2 * 175e9 / 128
    assert dp.link == "IB-HDR" and dp.bytes == pytest.approx(2 * 7 / 8 * grads)   # 2Ψ per the ring
    z3 = {r.kind: r for r in P.communication(P.Plan(tp=8, pp=1, dp=128, zero=3), "175B", "A100")}
    z3row = z3["DP ZeRO-3 gather + reduce-scatter"]
    assert z3row.bytes == pytest.approx(3 * 127 / 128 * 2 * 175e9 / 8)            # 3Ψ


def test_full_recompute_adds_tp_traffic():
    sel = P.communication(P.Plan(tp=8, pp=16, dp=8, microbatches=64, recompute="selective"), "175B")[0]
    full = P.communication(P.Plan(tp=8, pp=16, dp=8, microbatches=64, recompute="full"), "175B")[0]
    assert full.count == sel.count * 6 // 4


def test_analyze_seed_plan():
    a = P.analyze(SEED_PLAN, "175B", "A100", n_gpus=1024)
    assert a.fit.fits and a.warnings == ()
    assert a.bubble == pytest.approx(15 / 64)
    assert a.ledger.total == pytest.approx(memory.ledger("175B", tp=8, pp=16, dp=8, zero=1, sequence_parallel=True,
                                                         recompute="selective", microbatches=64).total)
    assert a.step_seconds > a.compute_seconds * (1 + a.bubble)


# --- search ---------------------------------------------------------------------------------------------------

def _scalar(c, name, n, acc, **kw):
    return P.analyze(c.plan, name, acc, n_gpus=n, **kw)


@pytest.mark.parametrize("name, n, acc", [("175B", 1024, "A100"), ("70B", 256, "H100"), ("13B", 64, "A100"),
                                          ("530B", 4096, "H100")])
def test_search_results_are_valid_fit_and_agree_with_scalar_model(name, n, acc):
    found = P.search(name, n, acc, top=25)
    assert found
    times = [c.step_seconds for c in found]
    assert times == sorted(times)
    for c in found:
        a = _scalar(c, name, n, acc)                         # raises if the plan is invalid
        assert a.fit.fits
        assert c.memory == pytest.approx(a.ledger.total, rel=1e-9)
        assert c.step_seconds == pytest.approx(a.step_seconds, rel=1e-9)
        assert c.plan.global_batch == 1536


def test_search_finds_the_seed_plan_for_175b_on_1024_a100():
    best = P.search("175B", 1024, "A100", distinct_shapes=True)[0]
    assert (best.plan.tp, best.plan.pp, best.plan.dp) == (8, 16, 8)


def test_search_nothing_fits():
    assert P.search("1T", 8, "RTX-4090", global_batch=8) == []


def test_search_16384_gpus_under_a_second():
    P.search("175B", 1024, "H100")                           # warm imports
    t0 = time.perf_counter()
    found = P.search("1T", 16384, "H100", global_batch=4096, top=50)
    assert time.perf_counter() - t0 < 1.0
    assert found
    for c in found[:10]:
        assert _scalar(c, "1T", 16384, "H100").fit.fits


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["13B", "70B", "175B"]), st.sampled_from([16, 64, 128, 512]),
       st.sampled_from(["A100", "H100"]), st.sampled_from([256, 512, 1536]), st.floats(0, 1))
def test_search_property_every_plan_valid_and_fitting(name, n, acc, batch, overlap):
    for c in P.search(name, n, acc, global_batch=batch, dp_overlap=overlap, top=8):
        a = _scalar(c, name, n, acc, dp_overlap=overlap)
        assert a.fit.fits and c.plan.n_gpus == n
        assert c.step_seconds == pytest.approx(a.step_seconds, rel=1e-9)


def test_search_bad_input():
    with pytest.raises(ValueError, match="n_gpus"):
        P.search("175B", 0)
    with pytest.raises(KeyError):
        P.search("175B", 8, "H300")


def test_plot_zero_tradeoff_has_four_stages():
    import matplotlib

    matplotlib.use("Agg")
    ax = P.plot_zero_tradeoff(175e9, dps=(1, 8, 64))
    assert len(ax.get_lines()) == 4 + 1                        # four stages and the 80 GB line
    assert [P.zero_traffic_factor(s) for s in range(4)] == [2, 2, 2, 3]
    with pytest.raises(ValueError, match="stage"):
        P.zero_traffic_factor(4)
