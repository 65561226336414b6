"""Compile generic kernels ahead of time for an sm_90 target and print their PTX, in a process
of its own: the test suite runs Triton's CPU interpreter, which replaces the language's
builtins in its process, so the real compiler cannot run there. Standard input: a JSON list of
{"kernel": "module:name", "pointer": "*bf16", "constexprs": {...}, "warps": 4, "stages": 3,
"divisible": ["arg", ...], "types": {"arg": "*fp32" or "fp32", ...}} (every other argument
an int32, those ending in `_ptr` pointers of the spec's "pointer" type;
`divisible` names the ints Triton's launcher would mark as multiples of 16, as it does for
such values); standard output: a JSON list of PTX texts, or {"skip": reason} where this Triton
cannot compile ahead of time (no such API, no ptxas). `ptxas_report` reads registers and spills
from the ptxas Triton's wheel ships (benchmarks/ptx_audit.py, tests/kernels/test_ptx_loads.py).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

# Fused multiply-adds as Triton has always compiled them (the GPUs' Triton 3.6 does so; 3.9
# asks for the choice to be made and warns on every compilation otherwise)
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


def compile_one(spec: dict[str, Any]) -> str:
    return str(compiled(spec).asm["ptx"])


def compiled(spec: dict[str, Any]) -> Any:
    """Triton's compiled kernel for `spec` (through Triton's cache, as a launch would)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    module, name = spec["kernel"].split(":")
    fn = getattr(importlib.import_module(module), name)
    types = spec.get("types", {})
    signature = {arg: "constexpr" if arg in spec["constexprs"]
                 else types[arg] if arg in types
                 else spec["pointer"] if arg.endswith("_ptr") else "i32"
                 for arg in fn.arg_names}
    divisible = set(spec.get("divisible", []))
    marked = [i for i, (arg, kind) in enumerate(signature.items())
              if kind.startswith("*") or arg in divisible]
    source = ASTSource(fn=fn, signature=signature, constexprs=spec["constexprs"],
                       attrs={(i,): [["tt.divisibility", 16]] for i in marked})
    return triton.compile(source, target=GPUTarget("cuda", 90, 32),
                          options={"num_warps": spec["warps"], "num_stages": spec["stages"]})


def ptxas_report(ptx: str) -> dict[str, int] | None:
    """{"registers", "spill_stores"} of `ptx` for sm_90a, from the first ptxas in Triton's wheel
    that reads it (the plain one may be older than the PTX Triton writes); None where none does."""
    import triton

    bin_dir = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "kernel.ptx"
        source.write_text(ptx, encoding="utf-8")
        for name in ("ptxas-blackwell", "ptxas"):
            tool = bin_dir / name
            if not tool.exists():
                continue
            done = subprocess.run([str(tool), "-arch=sm_90a", "-v", str(source), "-o",
                                   str(Path(tmp) / "kernel.cubin")], capture_output=True,
                                  text=True, timeout=300)
            info = done.stdout + done.stderr
            registers = re.search(r"Used (\d+) registers", info)
            spills = re.search(r"(\d+) bytes spill stores", info)
            if done.returncode == 0 and registers and spills:
                return {"registers": int(registers.group(1)),
                        "spill_stores": int(spills.group(1))}
    return None


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
