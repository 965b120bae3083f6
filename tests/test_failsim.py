"""Tests for chipchain.failsim (Monte Carlo of a checkpointed run, exact resume) and the chapter 7 views."""
import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from chipchain import failsim as fs
from chipchain.views import reliability as vr


# --- Monte Carlo -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tau,c,rs,m,seed", [(3600, 60, 600, 86400, 0), (1800, 120, 300, 6 * 3600, 1),
                                            (7200, 30, 0, 12 * 3600, 2)])
def test_monte_carlo_mean_agrees_with_model(tau, c, rs, m, seed):
    res = fs.simulate_goodput(tau, c, rs, m, segments=200, runs=300, seed=seed)
    assert abs(res.z) < 4, res.z                      # within sampling error of the exact renewal model
    rel_se = res.stderr_wall / res.mean_wall
    assert res.goodput == pytest.approx(res.goodput_model, rel=4 * rel_se + 1e-12)


def test_monte_carlo_detects_a_wrong_model():
    """The comparison has power: a 2 % wrong goodput would sit many standard errors away."""
    res = fs.simulate_goodput(3600, 60, 600, 86400, segments=200, runs=300, seed=0)
    wrong = res.work / (res.goodput_model * 0.98)
    assert abs(res.mean_wall - wrong) / res.stderr_wall > 4


def test_monte_carlo_is_seeded():
    a = fs.simulate_goodput(3600, 60, 600, 86400, segments=20, runs=20, seed=5)
    b = fs.simulate_goodput(3600, 60, 600, 86400, segments=20, runs=20, seed=5)
    assert a.wall_times == b.wall_times


def test_hopeless_simulations_are_refused_not_run():
    with pytest.raises(ValueError, match="failure draws"):
        fs.simulate_goodput(100 * 3600, 60, 600, 3600, segments=10, runs=10)
    with pytest.raises(ValueError, match="failure draws"):
        fs.simulate_timeline(100 * 3600, 60, 600, 3600, 1000 * 3600)


def test_timeline_reaches_the_work_and_drops_at_failures():
    tl = fs.simulate_timeline(3600, 60, 600, 4 * 3600, 30 * 3600, seed=3)
    assert tl.progress[-1] == 30 * 3600 and np.all(np.diff(tl.wall) >= 0)
    assert len(tl.failures) > 0 and np.any(np.diff(tl.progress) < 0)


def test_bad_input():
    with pytest.raises(ValueError, match="mtbf"):
        fs.simulate_goodput(3600, 60, 600, 0)
    with pytest.raises(ValueError, match="runs"):
        fs.simulate_goodput(3600, 60, 600, 86400, runs=1)
    with pytest.raises(ValueError, match="work"):
        fs.simulate_timeline(3600, 60, 600, 86400, -1)


# --- exact resume --------------------------------------------------------------------------------------------------

REF = fs.train_with_restart(60)


@given(stop=st.integers(0, 60))
@settings(max_examples=25, deadline=None)
def test_full_checkpoint_resumes_bit_identically(stop):
    res = fs.train_with_restart(60, stop_at=stop)
    assert np.array_equal(res.params, REF.params)
    assert res.losses == REF.losses


@pytest.mark.parametrize("missing", fs.PARTS)
@given(stop=st.integers(1, 59))
@settings(max_examples=10, deadline=None)
def test_leaving_out_any_part_diverges(missing, stop):
    keep = tuple(p for p in fs.PARTS if p != missing)
    res = fs.train_with_restart(60, stop_at=stop, keep=keep)
    assert not np.array_equal(res.params, REF.params), missing


def test_checkpoint_roundtrip_is_bitwise():
    t = fs.TinyTrainer(seed=3)
    for _ in range(7):
        t.step()
    u = fs.load_checkpoint(fs.TinyTrainer(seed=3), fs.save_checkpoint(t))
    assert all(np.array_equal(t.params[k], u.params[k]) for k in t.params)
    assert (u.t, u.epoch, u.cursor) == (t.t, t.epoch, t.cursor)
    assert t.rng.bit_generator.state == u.rng.bit_generator.state
    assert t.step() == u.step()


def test_training_actually_learns():
    res = fs.train_with_restart(400)
    assert np.mean(res.losses[-40:]) < 0.6 * np.mean(res.losses[:10])


def test_resume_bad_input():
    with pytest.raises(ValueError, match="keep"):
        fs.train_with_restart(10, stop_at=5, keep=("weights",))
    with pytest.raises(ValueError, match="stop_at"):
        fs.train_with_restart(10, stop_at=11)
    with pytest.raises(ValueError, match="trainer"):
        fs.save_checkpoint(object())


# --- chapter 7 views -----------------------------------------------------------------------------------------------

def test_resume_explorer_verdicts():
    ex = vr.resume_explorer()
    assert ex.n_views == 16
    assert "Bit-identical" in ex.render_at((1, 1, 1, 1))
    for i in range(4):
        idx = [1, 1, 1, 1]
        idx[i] = 0
        assert "Diverged" in ex.render_at(tuple(idx))


def test_goodput_explorer_impossible_combination_is_a_message():
    html = vr.goodput_view(4096, 1.0, 600.0)
    assert "Daly" in html
    with pytest.raises(ValueError, match="longer than"):
        vr.goodput_view(65536, 1.0, 600.0)          # M = 8 minutes < a 10-minute write
    assert "Not possible" in vr.goodput_explorer().render_at((4, 0, 5))


def test_tables():
    df = vr.llama3_interruptions()
    assert int(df["count"].sum()) == 419 and df["component"].iloc[0] == "Faulty GPU"    # Table 5
    t = vr.cluster_size_table(1 / (5.79 * 365 * 86400), (1024, 16384))
    assert t["hours between interruptions"].iloc[1] == pytest.approx(3.09, abs=0.01)


# --- properties: the simulations answer within a second or refuse, for MTBFs up to years -----------------------------

import math  # noqa: E402
import time  # noqa: E402

YEAR_S = 365 * 86400.0


@example(tau=1e6, c=0.0, rs=0.0, m=70320.0, segments=1, runs=2)   # 3·10⁶ draws but 1.5·10⁶ rounds: took 35 s
@settings(max_examples=40, deadline=None)
@given(tau=st.floats(60, 30 * 86400), c=st.floats(0, 3600), rs=st.floats(0, 86400), m=st.floats(600, 5 * YEAR_S),
       segments=st.integers(1, 10**6), runs=st.integers(2, 10**4))
def test_property_simulate_goodput_answers_or_refuses_fast(tau, c, rs, m, segments, runs):
    t0 = time.process_time()
    try:
        res = fs.simulate_goodput(tau, c, rs, m, segments=segments, runs=runs, seed=0)
    except ValueError as err:
        assert "failure draws" in str(err)
    else:
        assert 0.0 < res.goodput <= 1.0 and not math.isnan(res.goodput) and 0.0 < res.goodput_model < 1.0
    assert time.process_time() - t0 < 1.0


@settings(max_examples=40, deadline=None)
@given(tau=st.floats(60, 30 * 86400), c=st.floats(0, 3600), rs=st.floats(0, 86400), m=st.floats(600, 5 * YEAR_S),
       work=st.floats(60, 5 * YEAR_S))
def test_property_simulate_timeline_answers_or_refuses_fast(tau, c, rs, m, work):
    t0 = time.process_time()
    try:
        tl = fs.simulate_timeline(tau, c, rs, m, work, seed=0)
    except ValueError as err:
        assert "failure draws" in str(err)
    else:
        assert float(tl.progress[-1]) == pytest.approx(work) and (np.diff(tl.wall) >= 0).all()
    assert time.process_time() - t0 < 1.0
