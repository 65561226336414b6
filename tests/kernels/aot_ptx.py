"""Compile generic kernels ahead of time for an sm_90 target and print their PTX, in a process
of its own: the test suite runs Triton's CPU interpreter, which replaces the language's
builtins in its process, so the real compiler cannot run there. Standard input: a JSON list of
{"kernel": "module:name", "pointer": "*bf16", "constexprs": {...}, "warps": 4, "stages": 3,
"divisible": ["arg", ...]} (every other argument an int32, those ending in `_ptr` pointers;
`divisible` names the ints Triton's launcher would mark as multiples of 16, as it does for
such values); standard output: a JSON list of PTX texts, or {"skip": reason} where this Triton
cannot compile ahead of time (no such API, no ptxas)."""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any


def compile_one(spec: dict[str, Any]) -> str:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    module, name = spec["kernel"].split(":")
    fn = getattr(importlib.import_module(module), name)
    signature = {arg: "constexpr" if arg in spec["constexprs"]
                 else spec["pointer"] if arg.endswith("_ptr") else "i32"
                 for arg in fn.arg_names}
    divisible = set(spec.get("divisible", []))
    marked = [i for i, arg in enumerate(signature) if arg.endswith("_ptr") or arg in divisible]
    source = ASTSource(fn=fn, signature=signature, constexprs=spec["constexprs"],
                       attrs={(i,): [["tt.divisibility", 16]] for i in marked})
    kernel = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": spec["warps"], "num_stages": spec["stages"]})
    return str(kernel.asm["ptx"])


def main() -> int:
    specs = json.load(sys.stdin)
    try:
        from triton.backends.compiler import GPUTarget  # noqa: F401
        from triton.compiler import ASTSource  # noqa: F401
    except ImportError as exc:
        json.dump({"skip": f"this Triton cannot compile ahead of time: {exc}"}, sys.stdout)
        return 0
    try:
        out = [compile_one(spec) for spec in specs]
    except (RuntimeError, FileNotFoundError) as exc:
        if "ptxas" not in str(exc).lower():
            raise
        json.dump({"skip": f"no ptxas for Triton's NVIDIA backend here: {exc}"}, sys.stdout)
        return 0
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
