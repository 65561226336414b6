"""Generic kernels at awkward shapes: odd sizes, rows longer than one block, every dim, strided
and broadcast operands, random shapes; and the inputs each op must refuse.

Shapes stay tiny (the interpreter costs about a millisecond per program); long-row paths are
reached with a small `max_row_block` and forced K/R splits instead of large tensors.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
import torch

from flagbot.kernels.ops._reduce import reduce_dim
from flagbot.kernels.ops.add import add
from flagbot.kernels.ops.gelu import gelu
from flagbot.kernels.ops.layer_norm import layer_norm
from flagbot.kernels.ops.log_softmax import log_softmax
from flagbot.kernels.ops.mean import mean_dim
from flagbot.kernels.ops.mm import MMConfig, mm
from flagbot.kernels.ops.mul import mul
from flagbot.kernels.ops.rms_norm import rms_norm
from flagbot.kernels.ops.silu import silu
from flagbot.kernels.ops.softmax import softmax
from flagbot.kernels.ops.sum import sum_dim

from .closeness import DTYPES, assert_close, seeded_randn

F = torch.nn.functional




def _views(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The input as it is, transposed (dense, permuted) and sliced (not dense)."""
    out = {"contiguous": x}
    if x.dim() >= 2:
        out["transposed"] = x.transpose(0, -1).contiguous().transpose(0, -1)
        wide = torch.cat([x, x], dim=-1)
        out["sliced"] = wide[..., 1:x.shape[-1] + 1]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("xs", "ys"), [((1001,), (1001,)), ((5, 7), (7,)), ((3, 1, 5), (4, 1)),
                                        ((2, 3, 4, 5, 3), (3,)), ((), (3,)), ((6, 1), (1, 9))])
def test_binary_ops_broadcast_like_torch(xs: tuple[int, ...], ys: tuple[int, ...],
                                         dtype: torch.dtype, device: torch.device) -> None:
    x, y = seeded_randn(*xs, dtype=dtype, device=device), seeded_randn(*ys, dtype=dtype, seed=1,
                                                            device=device)
    assert_close("add", add(x, y, alpha=0.5), torch.add(x.double(), y.double(), alpha=0.5))
    assert_close("mul", mul(y, x), y.double() * x.double())


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_elementwise_ops_read_strided_inputs(layout: str, device: torch.device) -> None:
    x = _views(seeded_randn(37, 53, device=device))[layout]
    y = _views(seeded_randn(37, 53, seed=1, device=device))[layout]
    assert_close("add", add(x, y), x.double() + y.double())
    assert_close("mul", mul(x, y.contiguous()), x.double() * y.double())
    assert_close("gelu", gelu(x), F.gelu(x.double()))
    assert_close("silu", silu(x.half()), F.silu(x.double()))


def test_transposed_unary_output_keeps_the_input_layout(device: torch.device) -> None:
    x = seeded_randn(8, 6, device=device).t()
    assert silu(x).stride() == x.stride()


@pytest.mark.parametrize("n", [1, 15, 2049, 4097])
def test_elementwise_odd_sizes_cover_the_tail(n: int, device: torch.device) -> None:
    x = seeded_randn(n, device=device)
    assert_close("gelu", gelu(x, approximate="tanh"), F.gelu(x.double(), approximate="tanh"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "dim"), [((4, 33), -1), ((3, 300), 1), ((5, 70, 9), 1),
                                            ((70, 9), 0), ((7,), 0), ((2, 1), 1), ((), 0)])
@pytest.mark.parametrize("max_row_block", [64, 16384])
def test_softmax_and_log_softmax_any_dim_and_long_rows(shape: tuple[int, ...], dim: int,
                                                       max_row_block: int, dtype: torch.dtype,
                                                       device: torch.device) -> None:
    for layout, x in _views(seeded_randn(*shape, dtype=dtype, device=device) * 3).items():
        n = x.shape[dim] if x.dim() else 1
        assert_close("softmax", softmax(x, dim, max_row_block=max_row_block),
               torch.softmax(x.double(), dim), n)
        assert_close("log_softmax", log_softmax(x, dim, max_row_block=max_row_block),
               torch.log_softmax(x.double(), dim), n)
        assert layout


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("max_row_block", [16, 16384])
@pytest.mark.parametrize("layout", ["contiguous", "sliced", "transposed"])
def test_norms_long_rows_strides_and_optional_affine(max_row_block: int, layout: str,
                                                     dtype: torch.dtype,
                                                     device: torch.device) -> None:
    # An offset mean of 5: the looped kernel's shifted moments must not cancel.
    x = _views(seeded_randn(6, 40, dtype=dtype, device=device) + 5)[layout]
    w, b = seeded_randn(40, dtype=dtype, seed=1, device=device), seeded_randn(40, dtype=dtype, seed=2,
                                                                  device=device)
    xd, wd, bd = x.double(), w.double(), b.double()
    assert_close("layer_norm", layer_norm(x, (40,), w, b, max_row_block=max_row_block),
           F.layer_norm(xd, (40,), wd, bd), 40)
    assert_close("layer_norm", layer_norm(x, (40,), max_row_block=max_row_block),
           F.layer_norm(xd, (40,)), 40)
    assert_close("rms_norm", rms_norm(x, (40,), w, 1e-6, max_row_block=max_row_block),
           F.rms_norm(xd, (40,), wd, 1e-6), 40)


def test_norms_over_several_trailing_dims(device: torch.device) -> None:
    x, w = seeded_randn(3, 4, 5, device=device), seeded_randn(4, 5, seed=1, device=device)
    assert_close("layer_norm", layer_norm(x, (4, 5), w, None), F.layer_norm(x.double(), (4, 5),
                                                                       w.double()), 20)
    assert_close("rms_norm", rms_norm(x, [4, 5], w, 1e-6), F.rms_norm(x.double(), (4, 5), w.double(),
                                                                 1e-6), 20)


@pytest.mark.parametrize(("shape", "dim"), [((4, 33), -1), ((5, 6, 7), 1), ((300, 5), 0),
                                            ((3, 4, 5, 6), 2), ((7,), 0), ((), 0)])
@pytest.mark.parametrize("splits", [None, 3])
def test_sum_and_mean_any_dim_layout_and_split(shape: tuple[int, ...], dim: int,
                                               splits: int | None,
                                               device: torch.device) -> None:
    for x in _views(seeded_randn(*shape, device=device)).values():
        n = x.shape[dim] if x.dim() else 1
        for keepdim in (False, True):
            assert_close("sum", reduce_dim(x, [dim], keepdim, False, None, splits=splits),
                   torch.sum(x.double(), dim, keepdim=keepdim), n)
            assert_close("mean", reduce_dim(x, dim, keepdim, True, None, splits=splits),
                   torch.mean(x.double(), dim, keepdim=keepdim), n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mnk", [(1, 40, 70), (33, 40, 24), (70, 20, 300)])
@pytest.mark.parametrize("config", [None, MMConfig(16, 32, 16, 4, 2, 8, 3)], ids=["auto", "split"])
def test_mm_gemv_to_squares_strides_and_split_k(mnk: tuple[int, int, int], dtype: torch.dtype,
                                                config: MMConfig | None,
                                                device: torch.device) -> None:
    m, n, k = mnk
    a, b = seeded_randn(m, k, dtype=dtype, device=device), seeded_randn(k, n, dtype=dtype, seed=1,
                                                           device=device)
    expected = a.double() @ b.double()
    assert_close("mm", mm(a, b, config=config), expected, k)
    assert_close("mm", mm(a.t().contiguous().t(), b.t().contiguous().t(), config=config), expected, k)


# Random shapes and dims, compared with torch: bounded and seeded, so any failure reproduces.
PROPERTY_DRAWS = 4


def _draw_shape(rng: random.Random) -> tuple[int, ...]:
    return tuple(rng.choice([1, 2, 3, 5, 7, 16, 17, 31, 64, 100])
                 for _ in range(rng.randint(1, 3)))


def _property_cases() -> list[Any]:
    rng = random.Random(1234)
    names = ["add", "mul", "gelu", "silu", "softmax", "log_softmax", "layer_norm", "rms_norm",
             "sum", "mean", "mm"]
    cases = []
    for name in names:
        for i in range(PROPERTY_DRAWS):
            shape = _draw_shape(rng)
            cases.append(pytest.param(name, shape, rng.randrange(len(shape)), rng.random() < 0.5,
                                      rng.randrange(1 << 16), id=f"{name}-{i}"))
    return cases


def _property_run(name: str, x: torch.Tensor, dim: int, seed: int
                  ) -> tuple[torch.Tensor, torch.Tensor, int]:
    xd = x.double()
    n = x.shape[dim]
    unary: dict[str, tuple[Callable[..., torch.Tensor], Callable[..., torch.Tensor]]] = {
        "gelu": (gelu, F.gelu), "silu": (silu, F.silu)}
    if name in unary:
        return unary[name][0](x), unary[name][1](xd), 1
    if name in ("add", "mul"):
        y = seeded_randn(*x.shape[dim:], seed=seed + 1, device=x.device)  # broadcasts over leading dims
        ours = add(x, y) if name == "add" else mul(x, y)
        return ours, (xd + y.double()) if name == "add" else xd * y.double(), 1
    if name in ("softmax", "log_softmax"):
        fn = softmax if name == "softmax" else log_softmax
        ref = torch.softmax if name == "softmax" else torch.log_softmax
        return fn(x, dim, max_row_block=16), ref(xd, dim), n
    if name in ("sum", "mean"):
        fn2 = sum_dim if name == "sum" else mean_dim
        ref2 = torch.sum if name == "sum" else torch.mean
        return fn2(x, [dim]), ref2(xd, dim), n
    if name in ("layer_norm", "rms_norm"):
        last = x.shape[-1]
        w = seeded_randn(last, seed=seed + 1, device=x.device)
        if name == "layer_norm":
            return (layer_norm(x, (last,), w, None, max_row_block=16),
                    F.layer_norm(xd, (last,), w.double()), last)
        return (rms_norm(x, (last,), w, 1e-6, max_row_block=16),
                F.rms_norm(xd, (last,), w.double(), 1e-6), last)
    b = seeded_randn(x.shape[-1], 5, seed=seed + 1, device=x.device)  # mm: x flattened to 2-D
    a = x.reshape(-1, x.shape[-1])
    return mm(a, b), a.double() @ b.double(), x.shape[-1]


@pytest.mark.parametrize(("name", "shape", "dim", "transpose", "seed"), _property_cases())
def test_random_shapes_and_dims_match_torch(name: str, shape: tuple[int, ...], dim: int,
                                            transpose: bool, seed: int,
                                            device: torch.device) -> None:
    x = seeded_randn(*shape, seed=seed, device=device)
    if transpose and x.dim() >= 2 and name not in ("add", "mul"):
        x = x.transpose(0, -1)
    ours, expected, reduced = _property_run(name, x, dim, seed)
    assert_close(name, ours, expected, reduced)


REFUSALS: list[tuple[str, Callable[[], object], type[Exception]]] = [
    ("add int", lambda: add(torch.ones(3, dtype=torch.int32), torch.ones(3, dtype=torch.int32)),
     NotImplementedError),
    ("add mixed dtypes", lambda: add(torch.ones(3), torch.ones(3).half()), NotImplementedError),
    ("add scalar", lambda: add(torch.ones(3), 2.0), NotImplementedError),  # type: ignore[arg-type]
    ("mul shapes", lambda: mul(torch.ones(3), torch.ones(4)), RuntimeError),
    ("mul float64", lambda: mul(torch.ones(3).double(), torch.ones(3).double()),
     NotImplementedError),
    ("gelu approximation", lambda: gelu(torch.ones(3), approximate="fast"), ValueError),
    ("silu int", lambda: silu(torch.ones(3, dtype=torch.int64)), NotImplementedError),
    ("softmax dim", lambda: softmax(torch.ones(3, 4), 2), IndexError),
    ("log_softmax float64", lambda: log_softmax(torch.ones(3).double(), 0), NotImplementedError),
    ("layer_norm shape", lambda: layer_norm(torch.ones(3, 4), (3,)), ValueError),
    ("layer_norm weight", lambda: layer_norm(torch.ones(3, 4), (4,), torch.ones(5)), ValueError),
    ("rms_norm weight dtype", lambda: rms_norm(torch.ones(3, 4), (4,), torch.ones(4).half()),
     NotImplementedError),
    ("sum two dims", lambda: sum_dim(torch.ones(3, 4), [0, 1]), NotImplementedError),
    ("mean dim", lambda: mean_dim(torch.ones(3, 4), [5]), IndexError),
    ("mm shapes", lambda: mm(torch.ones(4, 5), torch.ones(6, 4)), ValueError),
    ("mm mixed dtypes", lambda: mm(torch.ones(4, 5), torch.ones(5, 4).half()),
     NotImplementedError),
    ("mm 3-D", lambda: mm(torch.ones(2, 4, 5), torch.ones(5, 4)), ValueError),
]


@pytest.mark.parametrize(("what", "call", "error"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_every_op_refuses_what_it_cannot_compute(what: str, call: Callable[[], object],
                                                 error: type[Exception]) -> None:
    with pytest.raises(error):
        call()


def test_refusals_cover_every_generic_op() -> None:
    from flagbot.kernels.registry import OPS

    covered = {what.split()[0] for what, _, _ in REFUSALS}
    assert {name for name, spec in OPS.items() if spec.generic is not None} <= covered


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize(("name", "args"), [
    ("add", lambda d: (seeded_randn(4097, 3001, dtype=d, device="cuda"),
                       seeded_randn(3001, dtype=d, seed=1, device="cuda"))),
    ("softmax", lambda d: (seeded_randn(64, 50257, dtype=d, device="cuda"), -1)),
    ("softmax", lambda d: (seeded_randn(3000, 7, 33, dtype=d, device="cuda"), 0)),
    ("layer_norm", lambda d: (seeded_randn(8, 100_003, dtype=d, device="cuda"), (100_003,))),
    ("sum", lambda d: (seeded_randn(8192, 1000, dtype=d, device="cuda"), [0])),
    ("mm", lambda d: (seeded_randn(1, 8192, dtype=d, device="cuda"),
                      seeded_randn(8192, 4099, dtype=d, seed=1, device="cuda"))),
])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_large_shapes_on_gpu(name: str, args: Callable[[torch.dtype], tuple[Any, ...]],
                             dtype: torch.dtype) -> None:
    from flagbot.kernels.registry import OPS

    spec = OPS[name]
    assert spec.generic is not None
    inputs = args(dtype)
    ref_inputs = [a.double() if isinstance(a, torch.Tensor) else a for a in inputs]
    reduced = {"add": 1, "softmax": inputs[0].shape[inputs[-1]] if name == "softmax" else 1,
               "layer_norm": 100_003, "sum": 8192, "mm": 8192}[name]
    assert_close(name, spec.generic(*inputs), spec.reference(*ref_inputs), reduced)


def test_mm_pads_unaligned_rows_of_large_products(device: torch.device) -> None:
    from flagbot.kernels.ops.mm import _aligned

    a = seeded_randn(70, 13, device=device)
    padded, width = _aligned(a)
    assert padded.stride(0) % 16 == 0 and width == padded.stride(0) and torch.equal(padded, a)
    assert _aligned(padded)[0] is padded
    b = seeded_randn(13, 9, seed=1, device=device)
    assert_close("mm", mm(a, b), a.double() @ b.double(), 13)
    # a 16-bit operand stored by columns is copied by columns (its columns padded), fp32 row
    # by row as before
    cols = seeded_randn(13, 70, dtype=torch.float16, device=device).t()
    padded, height = _aligned(cols)
    assert padded.stride() == (1, 80) and height == 80 and torch.equal(padded, cols)
    assert _aligned(padded)[0] is padded
    assert _aligned(cols.float())[0].stride() == (16, 1)
