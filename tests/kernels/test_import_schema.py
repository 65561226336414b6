"""Category and inputs of an imported operator come from torch's aten schema."""

from __future__ import annotations

import pytest
import torch

from flagbot.kernels.intake.schema import SchemaError, build_spec, category, resolve


@pytest.mark.parametrize("name, expected", [
    ("aten::abs", "elementwise"), ("gelu", "elementwise"), ("add.Tensor", "elementwise"),
    ("where.self", "elementwise"), ("sum.dim_IntList", "reduction"), ("sum", "reduction"),
    ("mean.dim", "reduction"), ("amax", "reduction"), ("logsumexp", "reduction"),
    ("mm", "matmul"), ("bmm", "matmul"), ("addmm", "matmul"), ("matmul", "matmul"),
    ("layer_norm", "normalization"), ("rms_norm", "normalization"),
    ("softmax.int", "dimwise"), ("cumsum", "dimwise"), ("index_select", "indexing"),
    ("cat", "other"),
])
def test_category_comes_from_the_schema(name: str, expected: str) -> None:
    assert category(resolve(name)) == expected


def test_names_that_look_alike_get_different_categories() -> None:
    # "sum" inside cumsum and logsumexp says nothing: their schemas do
    assert [category(resolve(n)) for n in ("cumsum", "logsumexp", "sum")] == \
        ["dimwise", "reduction", "reduction"]


def test_an_operator_torch_lacks_is_refused() -> None:
    with pytest.raises(SchemaError, match="frobnicate: not an aten operator"):
        resolve("aten::frobnicate")
    with pytest.raises(SchemaError, match="no overload 'Nope'"):
        resolve("add.Nope")


def test_bare_names_pick_the_tensor_overload() -> None:
    assert [resolve(n).qualified for n in ("add", "gelu", "mul")] == \
        ["add.Tensor", "gelu", "mul.Tensor"]


def _inputs(name: str, shape: tuple[int, ...], **params: object) -> tuple[tuple, dict]:
    spec = build_spec(resolve(name), name, params)
    from flagbot.kernels.spec import Case

    return spec.make_inputs(Case(shape), torch.float32, torch.device("cpu"),
                            torch.Generator().manual_seed(0))


def test_inputs_follow_the_schema() -> None:
    args, kwargs = _inputs("sum.dim_IntList", (4, 6))
    assert args[0].shape == (4, 6) and args[1:] == ([-1],) and kwargs == {}
    args, _ = _inputs("layer_norm", (4, 6))
    assert args[1] == [6] and args[2].shape == (6,) and args[3].shape == (6,)
    args, _ = _inputs("addmm", (3, 5, 7))
    assert [tuple(a.shape) for a in args] == [(3, 5), (3, 7), (7, 5)]
    args, _ = _inputs("bmm", (2, 3, 5, 7))
    assert [tuple(a.shape) for a in args] == [(2, 3, 7), (2, 7, 5)]
    args, kwargs = _inputs("gelu", (8,), approximate="tanh")
    assert kwargs == {"approximate": "tanh"}


def test_an_argument_without_default_must_come_from_params() -> None:
    with pytest.raises(SchemaError, match="argument exponent .* give its value in the "
                                          "payload's params"):
        _inputs("pow.Tensor_Scalar", (8,))
    args, _ = _inputs("pow.Tensor_Scalar", (8,), exponent=2)
    assert args[1] == 2


def test_the_reference_is_the_aten_operator() -> None:
    spec = build_spec(resolve("neg"), "neg", {})
    x = torch.randn(5)
    assert torch.equal(spec.reference(x), -x) and spec.generic is None
