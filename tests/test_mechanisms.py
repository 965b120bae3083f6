"""Issue 28's mechanism explorers of chapters 3 and 5: the states come from simulating the algorithm, and their
totals equal the formulas the chapters state."""
import re

import numpy as np
import pytest

from chipchain import attention_io, comms, parallel, ringsim, systems, views


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 16])
@pytest.mark.parametrize("nbytes", [1.0, 14e9, 3.5e6])
def test_ring_steps_end_with_every_rank_holding_the_full_sum_and_sending_2_n_minus_1_over_n_M(n, nbytes):
    st = ringsim.allreduce_steps(n, nbytes)
    assert len(st) == 1 + 2 * (n - 1)                                   # 2(n−1) steps after the start
    assert all(h == tuple(range(n)) for row in st[-1].holds for h in row)
    for t in st[-1].total:
        assert t == pytest.approx(2 * (n - 1) / n * nbytes, rel=1e-12)
        assert t == pytest.approx(comms.allreduce_bytes_per_rank(nbytes, n), rel=1e-12)
    # after the reduce-scatter each rank owns one chunk's full sum: chunk (r + 1) mod n
    rs = st[n - 1]
    for r in range(n):
        full = [c for c in range(n) if rs.holds[r][c] == tuple(range(n))]
        assert full == [(r + 1) % n]
    # the running total grows by M/n per rank at every step
    for a, b in zip(st, st[1:]):
        assert all(y - x == pytest.approx(nbytes / n) for x, y in zip(a.total, b.total))


def test_the_ring_schedule_is_the_one_the_numeric_simulation_runs():
    rng = np.random.default_rng(0)
    bufs = rng.integers(0, 100, size=(5, 20)).astype(np.int64)
    r = ringsim.simulate_ring_allreduce(bufs)
    assert r.result.tolist() == bufs.sum(axis=0).tolist() and r.steps == len(ringsim.ring_schedule(5))


@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_tree_steps_take_2_log2_n_full_messages_and_2_n_minus_1_M_in_all(n):
    st = ringsim.allreduce_steps(n, 1e9, "tree")
    levels = int(np.log2(n))
    assert len(st) == 1 + 2 * levels
    assert all(h == tuple(range(n)) for row in st[-1].holds for h in row)
    assert sum(st[-1].total) == pytest.approx(2 * (n - 1) * 1e9)      # each tree edge carries M up and M down
    assert max(st[-1].total) == levels * 1e9                          # the root broadcasts once per level
    # the model the chapter prices: 2⌈log₂ n⌉ steps of α + M/B
    assert comms.tree_allreduce_time(1e9, n, 1e9) == pytest.approx(len(st) - 1)


def test_allreduce_steps_refuses_bad_input():
    with pytest.raises(ValueError, match="n_ranks"):
        ringsim.allreduce_steps(1, 1e9)
    with pytest.raises(ValueError, match="nbytes"):
        ringsim.allreduce_steps(4, -1)
    with pytest.raises(ValueError, match="algorithm"):
        ringsim.allreduce_steps(4, 1e9, "star")


def _text(html):
    return re.sub(r"<[^>]+>", " ", html)


def test_allreduce_stepper_default_and_final_views():
    ex = views.comms.allreduce_steps_explorer()
    assert [c.value for c in ex.controls] == [False, 8, 0]             # ring, 8 ranks, before the first send
    start = _text(ex.render_current())
    assert "0 of 14" in start and "cc-message" not in start
    end = _text(ex.render_at([0, 1, 14]))
    assert "24.5 GB" in end and "Done: every rank holds all 8 chunks" in end      # 2·7/8 · 14 GB
    assert ex.render_at([0, 1, 14]).count(">8/8<") == 64
    tree = _text(ex.render_at([1, 0, 9]))                              # past the 4-rank tree's last step
    assert "tree on 4 ranks has only 4 steps" in tree and "84 GB" in tree     # 2·3 · 14 GB in all
    assert "ring on 4 ranks has only 6 steps" in _text(ex.render_at([0, 0, 9]))
    assert ex.n_views <= 400


def test_topology_view_lights_the_link_the_placement_picks():
    for system, plan in views.topology.PLANS.items():
        node = systems.node(system)
        for dim, group in parallel.placement(plan, system).items():
            html = views.topology.topology_view(system, dim)
            head = _text(html.split("<figure", 1)[0])
            assert group.link.name in head
            assert ("leaves the" in head) == (group.scope == "inter-node")
            assert f"{group.link.bandwidth_per_direction / 1e9:,.4g} GB/s" in head
            assert f"{node.gpus_per_node}" in html and node.inter.name in html and node.intra.name in html
    assert "stays inside the node: NVLink4" in _text(views.topology.topology_view("DGX-H100", "tp"))
    assert "leaves the node: IB-NDR" in _text(views.topology.topology_view("DGX-H100", "pp"))
    # an NVL72 rack (64 of its 72 GPUs in use) holds a TP 8 × DP 8 block: data and expert parallelism stay on
    # NVLink there, while on DGX H100 they leave the node; the pipeline, outermost, crosses racks
    assert "stays inside the rack: NVLink5" in _text(views.topology.topology_view("GB200-NVL72", "dp"))
    assert "stays inside the rack: NVLink5" in _text(views.topology.topology_view("GB200-NVL72", "ep"))
    assert "leaves the rack: IB-NDR" in _text(views.topology.topology_view("GB200-NVL72", "pp"))
    assert "leaves the node: IB-NDR" in _text(views.topology.topology_view("DGX-H100", "dp"))
    with pytest.raises(ValueError, match="dimension"):
        views.topology.topology_view("DGX-H100", "zero")


@pytest.mark.parametrize("n,d", [(1024, 64), (2048, 128), (1000, 64)])
def test_flash_tile_steps_total_equals_the_io_count(n, d):
    m = attention_io.sram_per_sm("A100") // 2
    st = attention_io.flash_tile_steps(n, d, m)
    br, bc = attention_io.block_sizes(d, m)
    assert len(st) == 1 + (-(-n // br)) * (-(-n // bc))
    assert st[-1].total == attention_io.flash_hbm_accesses(n, d, m)
    assert st[-1].total == 2 * n * d + (-(-n // br)) * 2 * n * d       # Q and O once, K and V once per Q block
    assert [s.total for s in st] == sorted(s.total for s in st)


def test_tiling_stepper_default_and_final_views():
    ex = views.attention.tiling_explorer()
    assert ex.controls[0].value == 0
    m = attention_io.sram_per_sm("A100") // 2
    last = len(ex.controls[0].values) - 1
    end = _text(ex.render_at([last]))
    flash = attention_io.flash_hbm_accesses(1024, 64, m) * 2
    std = attention_io.standard_hbm_accesses(1024, 64, m) * 2
    assert flash == 8 * 1024 * 64 * 2                                   # the chapter's 8Nd at N = 1,024
    assert f"{std / flash:.1f}× less" in end and "1.05 MB moved" in end and "9.44 MB" in end
    start = _text(ex.render_current())
    assert "0 of 48" in start and "SRAM is empty" in start
    with pytest.raises(ValueError, match="step"):
        views.attention.tiling_view(49)
