"""Statistics of the timing module on recorded samples; device timing itself needs a GPU."""

from __future__ import annotations

import pytest
import torch

from flagbot.kernels import timing


def test_quantile_interpolates_linearly() -> None:
    assert timing.quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.2) == pytest.approx(1.8)
    assert timing.quantile([3.0], 0.8) == 3.0


def test_summary_reports_median_and_relative_spread() -> None:
    s = timing.summary([10.0, 10.0, 11.0, 9.0, 10.0])
    assert s["median"] == 10.0 and s["spread"] == pytest.approx((10.2 - 9.8) / 10)


def test_ratio_summary_pairs_samples_of_the_same_round() -> None:
    # Drift hits both: round 2 is twice as slow for both, the ratio stays 2.
    r = timing.ratio_summary([20.0, 40.0, 20.0], [10.0, 20.0, 10.0])
    assert r == {"median": 2.0, "low": 2.0, "high": 2.0}


def test_device_metadata_is_none_without_a_gpu() -> None:
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert timing.device_metadata() is None


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_bench_times_each_label_interleaved() -> None:
    x = torch.randn(1 << 20, device="cuda")
    m = timing.bench({"a": lambda: x * 2, "b": lambda: x + 1})
    assert set(m.samples) == {"a", "b"} and len(m.samples["a"]) == len(m.samples["b"]) >= 10
    assert set(m.launch) == {"a", "b"} and m.stalled  # torch.cuda offers _sleep
    # Launch-inclusive times include the host's launch path: never below the device time.
    assert timing.summary(m.launch["a"])["median"] >= 0.5 * timing.summary(m.samples["a"])["median"]
