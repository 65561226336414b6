"""mm's picked configuration is remembered per operand geometry, and only that."""

from __future__ import annotations

import pytest
import torch

from flagbot.kernels.ops import _mm_memo
from flagbot.kernels.ops import mm as mm_module
from flagbot.kernels.ops.mm import mm, picked_config

REAL_PICK = mm_module._pick


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    calls: list[tuple[int, ...]] = []
    real = REAL_PICK

    def pick(a: torch.Tensor, b: torch.Tensor) -> object:
        calls.append((*a.shape, *a.stride(), *b.shape, *b.stride()))
        return real(a, b)

    monkeypatch.setattr(mm_module, "_pick", pick)
    return calls


def test_one_pick_per_geometry_and_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    a, b = torch.empty(263, 2843, dtype=torch.float16), torch.empty(2843, 642, dtype=torch.float16)
    first = picked_config(a, b)
    # other tensors of the same geometry: remembered, and what picking them afresh gives
    assert picked_config(torch.empty_like(a), torch.empty_like(b)) is first
    assert len(calls) == 1
    assert first == REAL_PICK(a, b)
    # another stride, dtype or shape is another geometry
    bt = b.t().contiguous().t()
    assert picked_config(a, bt) == REAL_PICK(a, bt)
    picked_config(a.float(), b.float())
    picked_config(a[:, :2000], b[:2000])
    assert len(calls) == 4


def test_bounded_picks_beyond_the_bound_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    monkeypatch.setattr(_mm_memo, "MAX_ENTRIES", 2)
    shapes = [(64 + i, 300, 500) for i in range(3)]
    for _ in range(2):
        for m, n, k in shapes:
            cfg = picked_config(torch.empty(m, k), torch.empty(k, n))
            assert cfg == REAL_PICK(torch.empty(m, k), torch.empty(k, n))
    assert len(_mm_memo._memo) == 2
    assert len(calls) == 4  # the first two remembered, the third picked both times


def test_clear_lets_changed_rules_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = torch.empty(300, 500, dtype=torch.float16), torch.empty(500, 300, dtype=torch.float16)
    before = picked_config(a, b)
    other = mm_module.MMConfig(16, 32, 16, 2, 2)
    monkeypatch.setattr(mm_module, "mm_config", lambda *args, **kwargs: other)
    assert picked_config(a, b) is before  # remembered: rules change only in tests
    _mm_memo.clear()
    assert picked_config(a, b).block_n == 32 != before.block_n


def test_mm_results_unchanged_by_remembering(device: torch.device) -> None:
    a = torch.randn(37, 70, device=device)
    b = torch.randn(70, 45, device=device)
    expected = (a.double() @ b.double()).float()
    for _ in range(2):  # picked, then remembered
        torch.testing.assert_close(mm(a, b), expected, rtol=1e-4, atol=1e-4)
