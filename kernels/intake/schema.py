"""What an aten operator is, read from torch's own schema: its category and how to call it.

The category comes from the operator's tags (`pointwise`, `reduction`) and arguments
(`keepdim`, `mat1`/`mat2`, `normalized_shape`, `dim`), never from its name's spelling; the few
matrix products whose schema names no matrix argument (`matmul(self, other)`) are listed by
exact name. The same schema makes the harness's inputs and gives the torch reference.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from flagbot.kernels.spec import NO_BF16, Case, InputMaker, Inputs, OpSpec, numel, randn

CATEGORIES = ("elementwise", "reduction", "matmul", "normalization", "dimwise", "indexing",
              "other")
MATRIX_ARGS = frozenset({"mat1", "mat2", "batch1", "batch2", "vec", "vec1", "vec2"})
# Matrix products whose schema is just (Tensor self, Tensor other): exact aten names.
MATMUL_OPS = frozenset({"matmul", "linear", "dot", "vdot", "inner", "outer", "ger",
                        "tensordot"})
INDEX_ARGS = frozenset({"index", "indices", "src", "mask"})
CI_SHAPES: dict[str, tuple[tuple[int, ...], ...]] = {
    "elementwise": ((1000,), (4, 257)),
    "reduction": ((4, 257), (8, 33)),
    "dimwise": ((4, 257), (8, 33)),
    "normalization": ((4, 257), (8, 33)),
    "matmul": ((33, 40, 24), (16, 130, 70)),
}
BATCHED_CI = ((2, 17, 20, 12),)


class SchemaError(Exception):
    """Not an aten operator, or one the harness cannot build inputs for (message says which)."""


@dataclass(frozen=True)
class AtenOp:
    """One overload of an aten operator with its schema."""

    name: str
    overload: str
    func: Any  # torch._ops.OpOverload

    @property
    def qualified(self) -> str:
        """`gelu` for the default overload, else `add.Tensor` (the registry's spelling)."""
        return self.name if self.overload == "default" else f"{self.name}.{self.overload}"

    @property
    def schema(self) -> Any:
        return self.func._schema

    @property
    def tags(self) -> set[str]:
        return {str(t).rsplit(".", 1)[-1] for t in self.func.tags}


def _usable(func: Any) -> bool:
    schema = func._schema
    args = list(schema.arguments)
    return bool(args) and str(args[0].type) == "Tensor" and not schema.is_mutable and \
        len(schema.returns) >= 1 and str(schema.returns[0].type) == "Tensor"


def resolve(op_name: str) -> AtenOp:
    """`aten::gelu`, `gelu`, `add.Tensor` -> the overload; without one: `default`, `Tensor`."""
    name = op_name.removeprefix("aten::")
    base, _, overload = name.partition(".")
    packet = getattr(torch.ops.aten, base, None) if base.isidentifier() else None
    if packet is None or not hasattr(packet, "overloads"):
        raise SchemaError(f"{op_name}: not an aten operator in torch {torch.__version__}; the "
                          "category and the reference both come from its aten schema")
    names = list(packet.overloads())
    if overload:
        if overload not in names:
            raise SchemaError(f"{op_name}: no overload {overload!r} (has {', '.join(names)})")
        return AtenOp(base, overload, getattr(packet, overload))
    usable = [o for o in names if _usable(getattr(packet, o)) and "out" not in o.split("_")]
    for choice in ("default", "Tensor", *usable):
        if choice in usable:
            return AtenOp(base, choice, getattr(packet, choice))
    fallback = "default" if "default" in names else names[0]
    return AtenOp(base, fallback, getattr(packet, fallback))


def category(op: AtenOp) -> str:
    """elementwise, reduction, matmul, normalization, dimwise, indexing or other."""
    args = {a.name: str(a.type) for a in op.schema.arguments}
    tags = op.tags
    if "pointwise" in tags:
        return "elementwise"
    if "reduction" in tags or "keepdim" in args:
        return "reduction"
    if MATRIX_ARGS & set(args) or op.name in MATMUL_OPS:
        return "matmul"
    if "normalized_shape" in args or ("eps" in args and "weight" in args):
        return "normalization"
    if any(t.startswith("List[Tensor") for t in args.values()):
        return "other"  # cat, stack: several tensors in one argument
    if any(n in INDEX_ARGS and "Tensor" in t for n, t in args.items()):
        return "indexing"
    if args.get("dim") == "int":
        return "dimwise"
    tensors = [t for t in args.values() if t == "Tensor"]
    if tensors and all(t in ("Tensor", "number", "Optional[number]") for t in args.values()):
        return "elementwise"  # untagged pointwise ops (a schema of tensors and scalars only)
    return "other"


def _matmul_shapes(op: AtenOp, shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    if len(shape) not in (3, 4):
        raise SchemaError(f"{op.qualified}: a matmul shape is [M, N, K] or [B, M, N, K], "
                          f"got {list(shape)}")
    batch, (m, n, k) = shape[:-3], shape[-3:]
    left, right, out = (*batch, m, k), (*batch, k, n), (*batch, m, n)
    names = [a.name for a in op.schema.arguments if str(a.type) == "Tensor"]
    table = {"mat1": left, "batch1": left, "mat2": right, "batch2": right}
    # addmm(self, mat1, mat2): self is what the product is added to; mm(self, mat2): the left
    first = out if {"mat1", "batch1"} & set(names) else left
    return [table.get(n, first if i == 0 else right) for i, n in enumerate(names)]


def _dim_value(type_name: str) -> Any:
    return -1 if type_name in ("int", "Optional[int]") else [-1]


def _argument(op: AtenOp, cat: str, arg: Any, shape: tuple[int, ...],
              params: Mapping[str, Any]) -> tuple[bool, Any]:
    """(pass it?, value) for one non-Tensor argument."""
    kind = str(arg.type)
    if arg.name in params:
        return True, params[arg.name]
    if arg.name == "dim" and cat in ("reduction", "dimwise") and not arg.has_default_value():
        return True, _dim_value(kind)
    if arg.name == "normalized_shape":
        return True, [shape[-1]]
    if arg.has_default_value():
        return False, None
    if kind == "bool":
        return True, False
    if kind.startswith("Optional["):
        return True, None
    raise SchemaError(f"{op.qualified}: argument {arg.name} ({kind}) has no default; give "
                      f"its value in the payload's params, e.g. {{\"{arg.name}\": ...}}")


def input_maker(op: AtenOp, cat: str, params: Mapping[str, Any]) -> InputMaker:
    """Inputs for the op from a case: tensors of the case's shape, the rest from the schema."""

    def make(case: Case, dtype: torch.dtype, device: torch.device,
             gen: torch.Generator) -> Inputs:
        shapes = (_matmul_shapes(op, case.shape) if cat == "matmul" else None)
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        skipped = False
        tensor_no = 0
        for arg in op.schema.arguments:
            kind = str(arg.type)
            if kind == "Tensor":
                shape = shapes[tensor_no] if shapes else case.shape
                tensor_no += 1
                args.append(randn(shape, dtype, device, gen))
                continue
            if kind == "Optional[Tensor]" and cat == "normalization" and \
                    arg.name in ("weight", "bias") and not skipped:
                args.append(randn((case.shape[-1],), dtype, device, gen))
                continue
            if "Tensor" in kind:
                raise SchemaError(f"{op.qualified}: argument {arg.name} ({kind}): the harness "
                                  "makes only plain Tensor inputs")
            use, value = _argument(op, cat, arg, case.shape, params)
            if not use:
                skipped = True
            elif arg.kwarg_only or skipped:
                kwargs[arg.name] = value
            else:
                args.append(value)
        return tuple(args), kwargs

    return make


def reduce_size(cat: str) -> Callable[[Case], int]:
    """Elements feeding each output (it scales atol): last dim, K for matmul, else 1."""
    if cat == "matmul":
        return lambda case: case.shape[-1]
    if cat in ("reduction", "dimwise", "normalization"):
        return lambda case: case.shape[-1]
    return lambda case: 1


def build_spec(op: AtenOp, name: str, params: Mapping[str, Any],
               full_shapes: Sequence[tuple[int, ...]] = (),
               dtypes: Sequence[torch.dtype] = (torch.float32, torch.float16, torch.bfloat16),
               generic: Callable[..., torch.Tensor] | None = None) -> OpSpec:
    """An OpSpec for the op: reference = the aten overload, cases from its category."""
    cat = category(op)
    if cat not in CI_SHAPES:
        raise SchemaError(f"{op.qualified}: a {cat} operator; the harness cannot make its "
                          "inputs from the schema alone (elementwise, reduction, dimwise, "
                          "normalization and matmul it can)")
    ci = CI_SHAPES[cat]
    if cat == "matmul" and op.name in ("bmm", "baddbmm"):
        ci = BATCHED_CI
    tensors = sum(str(a.type) == "Tensor" for a in op.schema.arguments) + 1
    return OpSpec(
        name=name,
        aten=(op.qualified,),
        generic=generic,
        reference=op.func,
        make_inputs=input_maker(op, cat, params),
        ci_cases=tuple(Case(s) for s in ci),
        full_cases=tuple(Case(tuple(s)) for s in full_shapes) or tuple(Case(s) for s in ci),
        bytes_moved=lambda case, dtype: tensors * numel(case.shape) * dtype.itemsize,
        flops=lambda case: numel(case.shape),
        reduce_size=reduce_size(cat),
        dtypes=tuple(dtypes),
        interpreter_dtypes=NO_BF16,
    )
