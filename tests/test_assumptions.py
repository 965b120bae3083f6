"""chipchain.assumptions: the book's assumptions live in data with a source, and the defaults read them."""
import pytest

from chipchain import assumptions, deepseek, inference, serving
from chipchain.walkthrough import Walkthrough


def test_every_assumption_has_a_source_and_says_how_it_was_checked():
    for name in assumptions.names():
        a = assumptions.get(name)
        assert a.source and a.unit and a.checked in ("V", "V2", "U")


def test_rent_is_deepseek_v3s_stated_price():
    # DeepSeek-AI 2024, Table 1: "assuming the rental price of the H800 GPU is $2 per GPU hour"
    assert assumptions.value("gpu_rent_per_hour") == deepseek.V3.price_per_gpu_hour == 2.0


def test_walkthrough_defaults_are_the_data_rows():
    w = Walkthrough()
    f = w.step6_failures()
    assert f.restart_seconds == assumptions.value("restart_seconds")
    assert f.write_seconds == pytest.approx(f.checkpoint_bytes / assumptions.value("checkpoint_write_bandwidth"),
                                            rel=1e-12)
    assert w.step6_failures(write_bandwidth=50e9, restart_seconds=600.0) == f     # the row values: 50 GB/s, 10 min
    assert w.step9_serving() == w.step9_serving(price_per_gpu_hour=2.0, usable_fraction=0.9)
    assert w.gpu_rent() == w.gpu_rent(2.0)


def test_usable_memory_has_one_default_per_kind_of_device():
    # datacenter serving: 0.9 in max_batch and gpus_to_hold alike; edge devices: 0.75 (shared with the OS)
    f = assumptions.value("usable_memory_fraction")
    assert inference.max_batch(80 * 2**30, "Llama-3-70B", 4096, "fp8") == inference.max_batch(
        80 * 2**30, "Llama-3-70B", 4096, "fp8", usable_fraction=f)
    assert serving.gpus_to_hold("A100", "GPT-3-175B", 2048) == serving.gpus_to_hold("A100", "GPT-3-175B", 2048,
                                                                                     usable_fraction=f)
    e = assumptions.value("edge_usable_memory_fraction")
    assert inference.largest_model_that_fits(8e9) == pytest.approx(8e9 * e / 0.5, rel=1e-12)     # int4: 0.5 B


def test_unknown_assumption_lists_the_nearest():
    with pytest.raises(KeyError, match="restart_seconds"):
        assumptions.value("restart_time")
