"""Bit intrinsics shared by the numba kernels (`_kernels`, `_arm_kernels`, `_solver_kernels`
and the generated ones of `_unrolled`): LLVM `ctpop` and `cttz` on a uint64, one machine
instruction each where the CPU has it.  Checked against Python's `int.bit_count` in
tests/test_bits.py."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def ctpop(typingctx, x):
    """Set bits of a uint64 (LLVM `ctpop`), as int64."""
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = builder.module.declare_intrinsic("llvm.ctpop", [i64], ir.FunctionType(i64, [i64]))
        return builder.call(fn, [args[0]])

    return sig, codegen


@intrinsic
def cttz(typingctx, x):
    """Count trailing zeros of a non-zero uint64 (LLVM `cttz`), as int64."""
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = builder.module.declare_intrinsic(
            "llvm.cttz", [i64], ir.FunctionType(i64, [i64, ir.IntType(1)]))
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 1)])

    return sig, codegen
